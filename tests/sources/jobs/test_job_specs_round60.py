"""Job specs, round 60: an explicit "no GPU" in a Slurm script (`--gres=gpu:0`), srun lines that only
look like steps (an `echo "srun ..."`), options of the program srun runs, a node range, and KubeRay's
crossed replica bounds. Each expected figure is worked out by hand from the spec beside it; each
public sample names its source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import NoGpuRequested, read_jobs, read_jobs_text

RULES = parse_rules(["namespace=Team", "account=Team", "partition=Team"])
FIXTURES = Path(__file__).parent / "fixtures"
GPU_SCRIPT = "#!/bin/bash\n#SBATCH -A research -J train -N 2 --gpus-per-node=4\nsrun python train.py\n"


# --- an explicit "no GPU" -------------------------------------------------------------------------


def test_a_real_script_with_gpus_per_node_zero_is_cpu_only() -> None:
    # dobbersc/dino scripts/job.sh (commit 7c15744d109a2bfe17554342169765ed372c4074), as published:
    # a CPU job on partition cpu-test that writes --gpus-per-node=0. Alone: nothing to place, named at
    # line 1 with the option that said so. Base refused it as a bad count ("expected [type:]count").
    with pytest.raises(NoGpuRequested) as err:
        read_jobs([FIXTURES / "cpu-gpus-per-node-zero.sh"], RULES)
    assert "cpu-gpus-per-node-zero.sh:1: batch script job my_cpu_job asks for no GPU (--gpus-per-node=0)" in str(
        err.value
    )


def test_gres_gpu_zero_beside_a_gpu_script_is_a_note(tmp_path: Path) -> None:
    # `#SBATCH --gres=gpu:0`, as CPU jobs write it where a partition wants every job to name its GPUs
    # (e.g. "jobs without --gres=gpu:N are rejected" in a public fio benchmark script). The folder's
    # GPU script is still placed: 2 nodes x 4 GPUs = 8.
    (tmp_path / "prep.sh").write_text("#!/bin/bash\n#SBATCH -A research -J prep --gres=gpu:0\npython prep.py\n")
    (tmp_path / "train.sh").write_text(GPU_SCRIPT)
    (job,) = read_jobs([tmp_path], RULES)
    assert (job.name, job.gpus) == ("train", 8)


@pytest.mark.parametrize("option", ["--gres=gpu:0", "--gres=gpu:a100:0", "--gpus=0", "--gpus-per-task=0 -n 4"])
def test_every_gpu_option_may_say_zero(option: str) -> None:
    with pytest.raises(NoGpuRequested) as err:
        read_jobs_text(f"#!/bin/bash\n#SBATCH -A research -J prep {option}\npython prep.py\n", "p.sh", RULES)
    assert "asks for no GPU (--" in str(err.value)


@pytest.mark.parametrize(
    ("options", "said"),
    [
        # 0 GPUs a node and 4 GPUs for the job: no count of nodes or GPUs is meant.
        ("--gres=gpu:0 --gpus=4", "--gres=gpu:0 asks for no GPU, but --gpus=4 asks for 4"),
        ("--gpus=0 --gpus-per-node=4", "--gpus=0 asks for no GPU, but --gpus-per-node=4 asks for 4"),
        ("--gpus-per-task=0 -n 2 --gpus=2", "--gpus-per-task=0 asks for no GPU, but --gpus=2 asks for 2"),
    ],
)
def test_zero_beside_a_count_is_refused(options: str, said: str) -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text(f"#!/bin/bash\n#SBATCH -A research -J j {options}\nsrun x\n", "j.sh", RULES)
    assert f"j.sh:2: {said}" in str(err.value) and not isinstance(err.value, NoGpuRequested)


def test_gres_gpu_zero_and_gpus_per_node_four_disagree() -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text("#!/bin/bash\n#SBATCH -A research -J j --gres=gpu:0 --gpus-per-node=4\n", "j.sh", RULES)
    assert "--gpus-per-node=4 disagrees with --gres=gpu:0" in str(err.value)


# --- srun lines -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        'echo "srun --gpus=1 python check.py"',  # printed, not run
        'echo "launching: srun --gpus=1 python check.py"',
        "printf '%s\\n' 'srun -G 1 hostname'",
        "srun python train.py --gpus=4",  # --gpus is the program's, after srun's own options
        "srun --jobid $JOB --overlap --gres=gpu:0 --pty bash -i",  # a step that takes no GPU
        "salloc -G 0 bash",
        "# srun --gpus=1 python a.py",
        "python prep.py  # then: srun --gpus=1 python train.py",  # a comment, as the shell cuts it
    ],
)
def test_a_line_that_runs_no_gpu_step_leaves_a_cpu_script_cpu_only(body: str) -> None:
    # No #SBATCH line asks for a GPU and no srun step does either: CPU-only (base refused the echo
    # with a space before srun, the program's --gpus, and both zero counts at that line, as if a step
    # had asked for GPUs).
    with pytest.raises(NoGpuRequested):
        read_jobs_text(f"#!/bin/bash\n#SBATCH -A research -J prep\n{body}\n", "p.sh", RULES)


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("exec srun --gpus-per-task 1 --job-name=run python main.py", 3),
        ("cd work && srun --gres=gpu:1 a.out", 3),
        ("n=$(srun --gpus=1 nvidia-smi -L | wc -l)", 3),
        ("srun -l --gpus 1 hostname", 3),
        ("srun --gpus=$NGPUS python a.py", 3),  # a count the script fills in asks for GPUs too
        # '#' inside a word ($#, a#b) starts no comment: the srun after it is still read.
        ("if [ $# -gt 0 ]; then srun --gpus=1 python a.py; fi", 3),
        ("echo run#1; srun --gpus=1 python a.py", 3),
        # One command over two lines: the shell joins them, and the command starts on line 3.
        ("srun -N 2 \\\n     --gpus-per-node=4 python train.py", 3),
    ],
)
def test_an_srun_step_asking_for_gpus_is_still_refused(body: str, line: int) -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text(f"#!/bin/bash\n#SBATCH -A research -J s\n{body}\n", "s.sh", RULES)
    assert f"s.sh:{line}: batch script job s: this srun/salloc line asks for GPUs" in str(err.value)


# --- a node range ---------------------------------------------------------------------------------


def test_a_node_range_is_placed_at_its_minimum_and_says_why() -> None:
    # -N 2-4 --gpus-per-node=4: sbatch(1) allocates "as many nodes as possible within the range ...
    # without delaying the initiation of the job", so it starts on 2 nodes when only 2 are free: the
    # job fits where 2 nodes of 4 GPUs fit, 8 GPUs on exactly 2 nodes.
    (job,) = read_jobs_text("#!/bin/bash\n#SBATCH -A research -J r -N 2-4 --gpus-per-node=4\n", "r.sh", RULES)
    assert (job.gpus, job.max_nodes, job.min_nodes) == (8, 2, 2)
    assert any("placed on 2 nodes, the fewest it starts on" in n.message and "up to 4" in n.message for n in job.notes)


# --- KubeRay's crossed replica bounds -------------------------------------------------------------

CROSSED = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: research}
spec:
  headGroupSpec:
    template: {spec: {containers: [{name: head, resources: {limits: {cpu: 2}}}]}}
  workerGroupSpecs:
    - groupName: gpu
      replicas: 2
      minReplicas: 3
      maxReplicas: 2
      template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]}}
"""


def test_crossed_kuberay_bounds_are_refused_as_kuberay_refuses_them() -> None:
    # minReplicas 3 > maxReplicas 2. KubeRay's ValidateRayClusterSpec (ray-project/kuberay
    # ray-operator/controllers/ray/utils/validation.go at 59939cb) returns "worker group gpu has
    # minReplicas 3 greater than maxReplicas 2": the cluster is refused and starts no pod (review
    # R-JS: releases before that check started maxReplicas, util.go at dc85903, which 2 x 4 GPUs
    # read). Refused at minReplicas: line 10 of CROSSED, column 7 (six spaces before the key).
    with pytest.raises(TopologError) as err:
        read_jobs_text(CROSSED, "rc.yaml", RULES)
    assert not isinstance(err.value, NoGpuRequested)
    assert "rc.yaml:10:7: worker group gpu of RayCluster rc writes minReplicas 3 above maxReplicas 2: KubeRay" in (
        str(err.value)
    )


# --- GPU resources topolog cannot count in GPUs ---------------------------------------------------

# NVIDIA's time-slicing verification Deployment (GPU Operator documentation, "Time-Slicing GPUs in
# Kubernetes", https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-sharing.html),
# with the resource as that page names it under renameByDefault: true (nvidia.com/gpu capacity 0,
# nvidia.com/gpu.shared = physical GPUs x replicas). Namespace added; image and command left out.
SHARED = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: time-slicing-verification
  namespace: research
spec:
  replicas: 5
  selector:
    matchLabels: {app: time-slicing-verification}
  template:
    metadata:
      labels: {app: time-slicing-verification}
    spec:
      tolerations:
        - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
        - name: cuda-sample-vector-add
          resources:
            limits:
              nvidia.com/gpu.shared: 1
"""


def test_a_time_sliced_gpu_share_is_refused_not_read_as_no_gpu() -> None:
    # Base read the Deployment as "requests no GPU" (the admission webhook then allowed it: a GPU
    # workload unjudged). One share is 1/replicas of a GPU, and the replicas are the cluster's
    # device plugin configuration, not the spec's: refused at its line (20).
    with pytest.raises(TopologError) as err:
        read_jobs_text(SHARED, "ts.yaml", RULES)
    assert not isinstance(err.value, NoGpuRequested)
    assert "ts.yaml:20:15: limits nvidia.com/gpu.shared of container cuda-sample-vector-add is a time-sliced share" in (
        str(err.value)
    )


@pytest.mark.parametrize(
    ("resource", "what"),
    [
        ("nvidia.com/mig-1g.10gb.shared", "a time-sliced share of an NVIDIA GPU"),
        ("gpu.intel.com/i915", "an Intel GPU, a device topolog does not place"),
        # habana.ai/gaudi is read as whole Gaudi accelerators since round 61 (test_job_specs_round61.py).
        ("gpu.intel.com/xe", "an Intel GPU, a device topolog does not place"),
    ],
)
def test_other_gpu_resources_are_refused(resource: str, what: str) -> None:
    text = SHARED.replace("nvidia.com/gpu.shared", resource)
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "ts.yaml", RULES)
    assert f"limits {resource} of container cuda-sample-vector-add is {what}" in str(err.value)


def test_hami_memory_beside_whole_gpus_is_still_a_note() -> None:
    # HAMi's device memory cap (nvidia.com/gpumem) beside nvidia.com/gpu: 2 GPUs a pod, the cap
    # noted, as before (not a renamed GPU resource).
    text = SHARED.replace("nvidia.com/gpu.shared: 1", "nvidia.com/gpu: 2\n              nvidia.com/gpumem: 3000")
    jobs = read_jobs_text(text, "h.yaml", RULES)
    assert [j.gpus for j in jobs] == [2] * 5  # one job a replica, 2 GPUs each
    assert any("nvidia.com/gpumem: 3000 not judged" in n.message for n in next(iter(jobs)).notes)


# --- Kueue pod set groups (kueue.x-k8s.io/podset-group-name) -------------------------------------

LWS_FIXTURE = FIXTURES / "lws-vllm-kueue-tas.yaml"


def _lws(level: str, size: int = 2, grouped: bool = True) -> str:
    text = LWS_FIXTURE.read_text().replace("cloud.google.com/gce-topology-block", level)
    text = text.replace("size: 2", f"size: {size}")
    if not grouped:
        text = "\n".join(line for line in text.splitlines() if "podset-group-name" not in line) + "\n"
    return text


def test_the_real_lws_kueue_sample_requires_a_block_topolog_has_no_scope_for() -> None:
    # kubernetes-sigs/lws docs/examples/leaderworkerset/topology-aware-scheduling/vllm-kueue.yaml at
    # d25f18f, namespace added: both pod sets require cloud.google.com/gce-topology-block (lines 27
    # and 74), a level with no topolog scope: refused at each, as for any required level without one.
    with pytest.raises(TopologError) as err:
        read_jobs([LWS_FIXTURE], RULES)
    message = str(err.value)
    assert "lws-vllm-kueue-tas.yaml:27:11: LeaderWorkerSet vllm (pod set leader) requires topology level" in message
    assert "lws-vllm-kueue-tas.yaml:74:11: LeaderWorkerSet vllm (pod set workers) requires topology level" in message


def test_a_group_required_on_one_host_is_judged_whole() -> None:
    # The same sample at kubernetes.io/hostname: the leader and its worker are one group, so Kueue
    # puts both on one host: 2 pods x 8 GPUs = 16 GPUs on one node.
    (job,) = read_jobs_text(_lws("kubernetes.io/hostname"), "lws.yaml", RULES)
    assert (job.name, job.gpus, job.scope, job.max_nodes) == ("vllm-0", 16, "node", None)


def test_lone_pods_required_on_a_host_without_a_group_are_apart() -> None:
    # No group: Kueue places the leader pod set and the worker pod set each in a domain of its own,
    # and each is one pod, on one host anyway. Base judged the two together, 16 GPUs on one node (a
    # false PLACE001 on 8-GPU nodes); now 16 GPUs on up to 2 nodes, no scope.
    (job,) = read_jobs_text(_lws("kubernetes.io/hostname", grouped=False), "lws.yaml", RULES)
    assert (job.gpus, job.scope, job.max_nodes) == (16, "any", 2)


def test_a_pod_set_required_apart_from_the_others_is_judged_whole_with_a_note() -> None:
    # size 3: the worker pod set is 2 pods that Kueue keeps on one host, apart from the leader.
    # topolog places a job in one domain: judged whole (review R-JS: refusing the spec refused a
    # valid job everywhere), 1 leader + 2 workers x 8 GPUs = 24 GPUs on one node, stricter than
    # Kueue, never looser; a note at the worker template says so: `workerTemplate:` is line 70 of
    # the fixture, 69 once the leader's group line (24) is taken out.
    (job,) = read_jobs_text(_lws("kubernetes.io/hostname", size=3, grouped=False), "lws.yaml", RULES)
    assert (job.gpus, job.scope, job.max_nodes) == (24, "node", None)
    (note,) = [n for n in job.notes if "not all in one pod set group" in n.message]
    assert str(note.location) == "lws.yaml:69:5"
    assert "workers (node) requires a topology domain of its own" in note.message
    assert "judged with all its pods in one node, stricter than Kueue" in note.message


# --- Kueue's multi-layer slices -------------------------------------------------------------------

MULTI_LAYER = FIXTURES / "kueue-tas-multi-layer-gpu.yaml"


def test_multi_layer_slices_are_refused_not_placed_anywhere() -> None:
    # 64 pods, each 32 in one block and each 16 in one rack: slices smaller than the pod set, which
    # topolog's one-domain placement cannot judge (as for a single slice annotation). Base did not
    # read the annotation and placed the 64 GPUs on any 64 nodes. Refused at the annotation (15:9),
    # once per layer.
    with pytest.raises(TopologError) as err:
        read_jobs([MULTI_LAYER], RULES)
    message = str(err.value)
    assert "kueue-tas-multi-layer-gpu.yaml:15:9:" in message
    assert "requires each slice of 32 of its 64 pods in one cloud.provider.com/topology-block" in message
    assert "requires each slice of 16 of its 64 pods in one cloud.provider.com/topology-rack" in message


def test_a_layer_of_all_the_pods_is_that_level_required(tmp_path: Path) -> None:
    # One layer of 64 pods at cloud.provider.com/topology-rack: all 64 in one rack, topolog's rack
    # scope; 64 pods of 1 GPU = 64 GPUs on up to 64 nodes.
    text = MULTI_LAYER.read_text()
    start = text.index("          [")
    end = text.index("          ]") + len("          ]")
    text = text[:start] + '          [{"topology": "cloud.provider.com/topology-rack", "size": 64}]' + text[end:]
    (job,) = read_jobs_text(text, "ml.yaml", RULES)
    assert (job.gpus, job.scope, job.max_nodes) == (64, "rack", 64)


@pytest.mark.parametrize("value", ["not json", "[1, 2]", '[{"topology": "kubernetes.io/hostname"}]', "[" * 100_000])
def test_a_multi_layer_value_that_cannot_be_read_is_refused(value: str) -> None:
    text = MULTI_LAYER.read_text()
    start = text.index("|\n")
    end = text.index("          ]") + len("          ]")
    text = text[:start] + "'" + value + "'" + text[end:]
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "ml.yaml", RULES)
    assert "ml.yaml:15:9: kueue.x-k8s.io/podset-slice-required-topology-constraints of Job" in str(err.value)


# --- Volcano's CronJob ----------------------------------------------------------------------------


def test_a_volcano_cronjob_is_one_run_of_its_volcano_job() -> None:
    # Volcano's CronJob sample (batch.volcano.sh/v1alpha1) with 2 GPUs on its one task: one run is
    # 1 pod x 2 GPUs, on one node (one pod). Base refused it ("a CronJob has apiVersion
    # 'batch.volcano.sh/v1alpha1'; expected batch/v1"). The principal is the jobTemplate's queue.
    (job,) = read_jobs([FIXTURES / "volcano-cronjob-gpu.yaml"], parse_rules(["queue=Team"]))
    assert (job.name, job.gpus, job.scope, job.principal) == ("volcano-cronjob-example", 2, "node", "team-ml")
    assert any("each scheduled run is one Job; one run is placed" in n.message for n in job.notes)


# --- a TrainJob's podTemplateOverrides ------------------------------------------------------------

# On the shape of Kubeflow Trainer's podTemplateOverrides guide, Example 7 ("Multiple Overrides for
# Different Jobs", kubeflow/trainer docs/operator-guides/podtemplate-overrides.md at 725b9f7), with
# the trainer's numNodes and resourcesPerNode written (else the runtime supplies them and the job is
# refused) and GPU Feature Discovery's product label as the GPU choice.
TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: pytorch-multi-override
  namespace: ml-team
spec:
  runtimeRef:
    name: pytorch-distributed-gpu
  trainer:
    image: docker.io/myorg/custom-training:latest
    numNodes: 2
    resourcesPerNode:
      limits:
        nvidia.com/gpu: 4
  podTemplateOverrides:
    - targetJobs:
        - name: dataset-initializer
      spec:
        serviceAccountName: dataset-reader-sa
        nodeSelector:
          nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
    - targetJobs:
        - name: node
      spec:
        serviceAccountName: model-trainer-sa
        nodeSelector:
          nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
"""


def test_a_trainjob_override_choosing_the_gpu_is_read() -> None:
    # 2 nodes x 4 GPUs = 8. The trainer's pods (targetJobs node) select A100-SXM4-80GB nodes; the
    # dataset initializer's H100 selector is another job's. Base noted podTemplateOverrides and took
    # any NVIDIA GPU. The trainer's service account is the override's (the principal here).
    (job,) = read_jobs_text(TRAINJOB, "tj.yaml", parse_rules(["service-account=ServiceAccount"]))
    assert (job.gpus, job.max_nodes, job.accepts, job.principal) == (8, 2, ("A100-SXM4-80GB",), "model-trainer-sa")
    assert any("for dataset-initializer: not the trainer's nodes, not judged" in n.message for n in job.notes)


def test_the_last_override_of_the_trainers_selector_holds() -> None:
    # Aimed at the trainer's nodes too, the H100 override comes first and the A100 one replaces its
    # nodeSelector (the guide: "later entries in the array override earlier values"): A100 only.
    text = TRAINJOB.replace("- name: dataset-initializer", "- name: node")
    (job,) = read_jobs_text(text, "tj.yaml", RULES)
    assert job.accepts == ("A100-SXM4-80GB",)


def test_an_override_annotation_requiring_a_host_is_read() -> None:
    # Kueue's required topology on the trainer's pod template, written through the override's
    # metadata: both pods on one host, 8 GPUs on one node.
    text = TRAINJOB + (
        "      metadata:\n"
        "        annotations:\n"
        "          kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname\n"
    )
    (job,) = read_jobs_text(text, "tj.yaml", RULES)
    assert (job.gpus, job.scope) == (8, "node")


# --- a Workload's pod set groups and required keys ------------------------------------------------

WORKLOAD = (FIXTURES / "kueue-workload.yaml").read_text()
SECOND_SET = """\
  - count: 2
    name: extra
    topologyRequest:
      required: nvidia.com/gpu.clique
    template:
      spec:
        containers:
        - name: c
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def test_workload_pod_sets_in_one_group_are_judged_in_one_domain() -> None:
    # kueue-workload.yaml's 3 pods of 1 GPU plus a second pod set of 2, both required in one NVLink
    # clique and both in group g: Kueue places the group in one clique, 5 GPUs in one NVLink domain.
    grouped = WORKLOAD.replace(
        "      required: nvidia.com/gpu.clique\n", "      required: nvidia.com/gpu.clique\n      podSetGroupName: g\n"
    )
    text = grouped + SECOND_SET.replace(
        "      required: nvidia.com/gpu.clique\n", "      required: nvidia.com/gpu.clique\n      podSetGroupName: g\n"
    )
    (job,) = read_jobs_text(text, "wl.yaml", parse_rules(["queue=Team"]))
    assert (job.gpus, job.scope) == (5, "nvlink_domain")


def test_workload_pod_sets_apart_are_judged_in_one_domain_with_a_note() -> None:
    # The same two pod sets without a group: Kueue places each in a clique of its own; judged here
    # with all 5 GPUs in one NVLink domain (stricter, never looser), and a note says so.
    (job,) = read_jobs_text(WORKLOAD + SECOND_SET, "wl.yaml", parse_rules(["queue=Team"]))
    assert (job.gpus, job.scope) == (5, "nvlink_domain")
    assert any("its GPU pod sets main, extra are not all in one pod set group" in n.message for n in job.notes)


def test_a_required_topology_key_topolog_does_not_know_is_refused() -> None:
    # A Workload's topologyRequest with a required constraint this reading has no rule for (a
    # future or mistyped key such as requiredTopology): refused at the key (line 14), not noted.
    text = WORKLOAD.replace("      required: nvidia.com/gpu.clique", "      requiredTopology: nvidia.com/gpu.clique")
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "wl.yaml", parse_rules(["queue=Team"]))
    assert "wl.yaml:14:7: topologyRequest.requiredTopology of Workload sample-job (pod set main) is a required" in (
        str(err.value)
    )


# --- KubeRay's RayService -------------------------------------------------------------------------


def test_a_rayservice_is_its_ray_cluster() -> None:
    # KubeRay's vLLM RayService sample (ray-operator/config/samples/vllm/ray-service.vllm.yaml at
    # 09a8955, namespace added): a CPU head and gpu-group at replicas 1 (min 0, max 4) of 2 GPUs:
    # 1 pod x 2 GPUs, on one node. Base refused the kind ("no workload kind topolog reads").
    (job,) = read_jobs([FIXTURES / "rayservice-vllm.yaml"], RULES)
    assert (job.name, job.gpus, job.scope) == ("llama-3-8b", 2, "node")
    assert any("starts a second RayCluster beside this one" in n.message for n in job.notes)


def test_a_kueue_pod_group_required_on_one_host_stays_together() -> None:
    # kueue-pod-group-gpu.yaml's 2 pods of 4 GPUs, same template, each annotated to run on one host:
    # Kueue makes one pod set of the group's pods with the same template, so both on one host:
    # 8 GPUs on one node (as before; not read as 2 lone pods each on a host of its own).
    text = (FIXTURES / "kueue-pod-group-gpu.yaml").read_text()
    text = text.replace(
        '    kueue.x-k8s.io/pod-group-total-count: "2"\n',
        '    kueue.x-k8s.io/pod-group-total-count: "2"\n'
        "    kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname\n",
    )
    (job,) = read_jobs_text(text, "pg.yaml", RULES)
    assert (job.gpus, job.scope) == (8, "node")
