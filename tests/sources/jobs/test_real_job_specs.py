"""Job specs as users publish them, read as topolog jobs: Kubeflow, KubeRay, Kueue, Kubernetes apps, Slurm.

Each fixture is a public sample (fixtures/README.md names its source). The expected GPU and node
counts are derived by hand from the spec, in the comment beside each assertion, with the pod
counts Kueue gives each kind (docs/jobs.md, "Kubernetes").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs, read_jobs_text
from verifier.sources.jobs.spec import Job

FIXTURES = Path(__file__).parent / "fixtures"
RULES = parse_rules(["namespace=Team", "queue=Team", "account=Team", "partition=Team"])


def _jobs(name: str) -> list[Job]:
    return list(read_jobs([FIXTURES / name], RULES))


def _one(name: str) -> Job:
    (job,) = _jobs(name)
    return job


def _shape(job: Job) -> tuple[int, str, int | None, tuple[str, ...]]:
    return job.gpus, job.scope, job.max_nodes, job.accepts


def test_pytorchjob_master_and_worker_add_up() -> None:
    # Master: replicas 1 x nvidia.com/gpu 1, Worker: replicas 1 x 1 -> 2 GPUs in 2 pods (at most 2 nodes).
    job = _one("pytorchjob-mnist-nccl.yaml")
    assert (job.name, job.principal) == ("pytorch-dist-mnist-nccl", "research")
    assert _shape(job) == (2, "any", 2, ("nvidia",))
    assert job.description == "PyTorchJob pytorch-dist-mnist-nccl: 2 pods"


def test_paddlejob_workers_times_gpus() -> None:
    # Worker: replicas 2 x nvidia.com/gpu 2 -> 4 GPUs in 2 pods; namespace kubeflow is the principal.
    job = _one("paddlejob-simple-gpu.yaml")
    assert (job.name, job.principal) == ("paddle-simple-gpu", "kubeflow")
    assert _shape(job) == (4, "any", 2, ("nvidia",))


def test_mpijob_of_cpus_only_is_refused() -> None:
    # Launcher and Worker ask for cpu and memory only: no GPU to place, an error at the document.
    with pytest.raises(TopologError) as err:
        _jobs("mpijob-tensorflow-mnist-cpu.yaml")
    assert "mpijob-tensorflow-mnist-cpu.yaml:2:1: MPIJob tensorflow-mnist requests no GPU" in str(err.value)


def test_rayjob_counts_its_worker_group_not_its_cpu_head() -> None:
    # Head: 1 pod, no GPU (noted). gpu-group: replicas 4 x nvidia.com/gpu "1" (limit = request) -> 4 GPUs
    # in 4 pods. generateName "pytorch-image-classifier-" names it without the dash.
    job = _one("rayjob-image-classifier.yaml")
    assert (job.name, job.principal) == ("pytorch-image-classifier", "research")
    assert _shape(job) == (4, "any", 4, ("nvidia",))
    notes = "\n".join(n.message for n in job.notes)
    assert "pod set head of RayJob pytorch-image-classifier requests no GPU" in notes


def test_cronjob_is_one_run_of_its_job_template() -> None:
    # jobTemplate: parallelism 3, completions 3 -> 3 pods at once x nvidia.com/gpu 2 -> 6 GPUs, at most
    # 3 nodes. The queue label sits on the jobTemplate (the Jobs it creates carry it), so the queue
    # rule finds user-queue; namespace=Team comes first and finds default.
    job = _one("kueue-cronjob-gpu.yaml")
    assert (job.name, job.principal) == ("sample-cronjob", "default")
    assert _shape(job) == (6, "any", 3, ("nvidia",))
    by_queue = next(iter(read_jobs([FIXTURES / "kueue-cronjob-gpu.yaml"], parse_rules(["queue=Team"]))))
    assert by_queue.principal == "user-queue"


def test_statefulset_is_one_pod_group() -> None:
    # replicas 3 x nvidia.com/gpu 4 -> 12 GPUs in 3 pods (Kueue admits a StatefulSet as one pod group).
    # No namespace: the queue label user-queue is the principal.
    job = _one("kueue-statefulset-gpu.yaml")
    assert (job.name, job.principal) == ("sleep-statefulset", "user-queue")
    assert _shape(job) == (12, "any", 3, ("nvidia",))


def test_deployment_is_one_job_per_pod() -> None:
    # replicas 2, each pod amd.com/gpu "1": Kueue admits each Deployment pod alone -> 2 jobs of 1 GPU
    # on one node, named mistral-7b-0 and -1. The Service beside it is a note, not a job.
    jobs = read_jobs([FIXTURES / "vllm-deployment-amd.yaml"], RULES)
    assert [j.name for j in jobs] == ["mistral-7b-0", "mistral-7b-1"]
    assert [_shape(j) for j in jobs] == [(1, "node", None, ("amd",))] * 2
    assert [n.message for n in jobs.notes] == ["Service mistral-7b is not a workload topolog places: not placed"]


def test_dra_claims_are_refused_not_guessed() -> None:
    # The GPU count is in ResourceClaimTemplate gpu-claim, which the file does not hold.
    with pytest.raises(TopologError) as err:
        _jobs("kueue-dra-gpu-job.yaml")
    # (At its resourceClaimTemplateName, line 20.)
    assert "kueue-dra-gpu-job.yaml:20:9: Job gpu-job-admit (pod set job) claims devices through DRA" in str(err.value)


def test_trainjob_without_resources_per_node_is_refused() -> None:
    # numNodes 3, but the GPUs per node come from ClusterTrainingRuntime torch-distributed: not in the file.
    with pytest.raises(TopologError) as err:
        _jobs("trainjob-runtime-nodes.yaml")
    text = str(err.value)
    assert (
        "trainjob-runtime-nodes.yaml:15:3: TrainJob multi-node-example does not write trainer.resourcesPerNode" in text
    )
    assert "runtimeRef torch-distributed" in text


TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: llm, namespace: research}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 2
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8, cpu: 32}
"""


def test_trainjob_with_nodes_and_resources_per_node() -> None:
    # numNodes 2 x nvidia.com/gpu 8 -> 16 GPUs on at most 2 nodes.
    (job,) = read_jobs_text(TRAINJOB, "t.yaml", RULES)
    assert _shape(job) == (16, "any", 2, ("nvidia",))


RAYCLUSTER = """\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: research}
spec:
  enableInTreeAutoscaling: true
  headGroupSpec:
    template:
      spec:
        containers: [{name: head, resources: {limits: {cpu: 4}}}]
  workerGroupSpecs:
    - groupName: multi-host
      replicas: 2
      minReplicas: 1
      maxReplicas: 4
      numOfHosts: 2
      template:
        spec:
          containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]
"""


def test_raycluster_replicas_times_hosts_at_the_admitted_count() -> None:
    # multi-host: replicas 2 x numOfHosts 2 = 4 pods x 4 GPUs = 16 GPUs (at most 4 nodes); the
    # autoscaling range 1..4 is a note, placed at replicas 2 as Kueue admits it.
    (job,) = read_jobs_text(RAYCLUSTER, "rc.yaml", RULES)
    assert _shape(job) == (16, "any", 4, ("nvidia",))
    assert any("may scale (1 to 4 replicas): placed at 2 replicas" in n.message for n in job.notes)


VOLCANO = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj, namespace: research}
spec:
  minAvailable: 3
  tasks:
    - name: ps
      replicas: 1
      template: {spec: {containers: [{name: ps, resources: {limits: {cpu: 2}}}]}}
    - name: worker
      replicas: 3
      template: {spec: {containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]}}
"""


def test_volcano_job_tasks() -> None:
    # worker: replicas 3 x 8 GPUs = 24 GPUs in 3 pods; ps asks no GPU. minAvailable 3 of the 4 pods: noted.
    (job,) = read_jobs_text(VOLCANO, "v.yaml", RULES)
    assert _shape(job) == (24, "any", 3, ("nvidia",))
    assert any("may start with 3 of its 4 pods (minAvailable)" in n.message for n in job.notes)
    # Its Volcano queue (spec.queue) is what the queue rule reads.
    queued = VOLCANO.replace("  minAvailable: 3\n", "  minAvailable: 3\n  queue: hpc\n")
    (by_queue,) = read_jobs_text(queued, "v.yaml", parse_rules(["queue=Team"]))
    assert by_queue.principal == "hpc"


def test_a_kind_not_read_that_asks_for_gpus_is_refused() -> None:
    # A SparkApplication names nvidia.com/gpu as a value: it asks for GPUs topolog would never judge.
    text = """\
apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: spark, namespace: research}
spec:
  executor:
    instances: 2
    gpu: {name: nvidia.com/gpu, quantity: 1}
"""
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "s.yaml", RULES)
    # Line 7, column 11: four spaces, "gpu: {" (columns 5-10), then the key `name`.
    assert "s.yaml:7:11: SparkApplication spark asks for GPUs, but a SparkApplication is no workload kind" in str(
        err.value
    )


def test_rayjob_on_an_existing_cluster_is_refused() -> None:
    text = "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: rj}\nspec:\n  clusterSelector: {ray.io/cluster: c}\n"
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "rj.yaml", RULES)
    assert "rj.yaml:5:3: RayJob rj has no 'rayClusterSpec': it runs on an existing RayCluster" in str(err.value)


@pytest.mark.parametrize(
    ("fixture", "name", "shape"),
    [
        # --nodes=4, --ntasks=4, --gpus-per-task=1 -> 4 x 1 = 4 GPUs on at most 4 nodes.
        ("pytorch-examples-multinode.sbatch", "multinode-example", (4, "any", 4, ())),
        # --nodes=1, --tasks-per-node=1 (the spelling of --ntasks-per-node), --gpus-per-task=8 -> 8 on one node.
        ("lumi-tasks-per-node.sh", "multigpu_torchrun_example", (8, "node", None, ())),
        # --gpus-per-node=8 with --ntasks=1 and no --nodes: one node of 8.
        ("lumi-ai-ddp.sh", "lumi-ai-ddp", (8, "node", None, ())),
        # --gpus-per-node=A100:2, no --nodes: 2 A100 on one node; -J mam names it.
        ("alvis-typed-gpus-nodelist.sh", "mam", (2, "node", None, ("A100",))),
        # --nodes=1, --gres=gpu:h100:1 -> 1 H100.
        ("h100-gres-one-node.sh", "h100-gres-one-node", (1, "node", None, ("H100",))),
        # --nodes=1, --gpus=1 -> 1 GPU on one node.
        ("snellius-gpus-one.sh", "snellius-gpus-one", (1, "node", None, ())),
        # --gres=gpu:4, no --nodes -> 4 GPUs on one node; -J test.
        ("gres-untyped-partition.bash", "test", (4, "node", None, ())),
    ],
)
def test_published_batch_scripts(fixture: str, name: str, shape: tuple[int, str, int | None, tuple[str, ...]]) -> None:
    job = _one(fixture)
    assert (job.name, _shape(job)) == (name, shape)


def test_nodelist_is_said_not_judged() -> None:
    job = _one("alvis-typed-gpus-nodelist.sh")
    notes = [str(n).rsplit("/", 1)[-1] for n in job.notes]
    assert (
        "alvis-typed-gpus-nodelist.sh:4: --nodelist not judged: the job is placed on any node, not only on the "
        "nodes it names" in notes
    )
    assert "alvis-typed-gpus-nodelist.sh:3: options --time not judged" in notes


def _script(lines: str) -> Job:
    (job,) = read_jobs_text("#!/bin/bash\n#SBATCH -A research -J j\n" + lines, "j.sh", RULES)
    return job


def test_gpus_and_gpus_per_node_fix_the_node_count() -> None:
    # --gpus=8 with --gpus-per-node=4: 8 / 4 = 2 nodes of 4 (was read as 4 GPUs on one node).
    assert _shape(_script("#SBATCH --gpus=8 --gpus-per-node=4\n")) == (8, "any", 2, ())
    # -G h100:16 with -N 4 --gpus-per-node=4: 4 x 4 = 16, they agree.
    assert _shape(_script("#SBATCH -G h100:16 -N 4 --gpus-per-node=4\n")) == (16, "any", 4, ("H100",))


@pytest.mark.parametrize(
    ("lines", "where", "said"),
    [
        # 6 GPUs are no whole number of 4-GPU nodes.
        ("#SBATCH --gpus=6 --gpus-per-node=4\n", "j.sh:3:", "--gpus=6 is not a whole number of node(s) of 4"),
        # 2 nodes of 4 are 8, not 12.
        ("#SBATCH -N 2 --gpus=12 --gpus-per-node=4\n", "j.sh:3:", "--gpus=12 is not 2 node(s) of 4"),
        # A node's GRES as scontrol lists it, with its sockets: no request.
        ("#SBATCH --gres=gpu:8(S:0-1)\n", "j.sh:3:", "carries a socket or index binding in brackets"),
        # GPUs per socket need the sockets per node.
        ("#SBATCH -N 2 --gpus-per-socket=2\n", "j.sh:3:", "--gpus-per-socket is not read"),
    ],
)
def test_gpu_options_that_cannot_be_read_exactly_are_refused(lines: str, where: str, said: str) -> None:
    with pytest.raises(TopologError) as err:
        _script(lines)
    assert where in str(err.value) and said in str(err.value)


def test_a_node_range_with_gpus_per_node_is_bounded_by_its_minimum() -> None:
    # -N 2-4 --gres=gpu:8: placed on 2 nodes of 8 = 16 GPUs; each node holds exactly 8, so the 16
    # GPUs sit on exactly 2 nodes (was max_nodes 4: 16 GPUs spread over 4 half-used nodes passed).
    assert _shape(_script("#SBATCH -N 2-4 --gres=gpu:8\n")) == (16, "any", 2, ())
    # With --gpus for the whole job the GPUs may spread over up to 4 nodes.
    assert _shape(_script("#SBATCH -N 2-4 --gpus=16\n")) == (16, "any", 4, ())


def test_tasks_per_node_spelling_counts_the_tasks() -> None:
    # -N 2 --tasks-per-node=4 --gpus-per-task=1: 2 x 4 tasks x 1 = 8 GPUs (was 2: the spelling was not read).
    assert _shape(_script("#SBATCH -N 2 --tasks-per-node=4 --gpus-per-task=1\n")) == (8, "any", 2, ())


def test_typed_gres_and_untyped_gpus_per_node_agree() -> None:
    # --gres=gpu:a100:4 and --gpus-per-node=4 ask the same 4 per node; the type a100 holds.
    assert _shape(_script("#SBATCH -N 2 --gres=gpu:a100:4 --gpus-per-node=4\n")) == (8, "any", 2, ("A100",))


def test_sbatch_lines_in_a_heredoc_after_the_first_command_are_ignored() -> None:
    # The heredoc's #SBATCH line comes after `cat` (a command): sbatch reads only the first block.
    job = _script("#SBATCH --gres=gpu:2\ncat > inner.sh <<EOF\n#SBATCH --gres=gpu:8\nEOF\n")
    assert job.gpus == 2
    assert any("#SBATCH after the first command" in n.message for n in job.notes)


def test_a_gpu_request_without_a_limit_is_refused() -> None:
    # Kubernetes refuses a pod whose extended resource has a request and no limit: line 11 is the request.
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: research\nspec:\n"
        "  containers:\n  - name: c\n    resources:\n      requests:\n        nvidia.com/gpu: 2\n"
    )
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "p.yaml", RULES)
    assert "p.yaml:11:9: container c requests 2 nvidia.com/gpu without a limit" in str(err.value)


def test_an_unrendered_template_quantity_is_refused() -> None:
    # A Helm/envsubst placeholder left in the quantity is no number of GPUs.
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: research\nspec:\n"
        '  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: "${TP_SIZE}"\n'
    )
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "p.yaml", RULES)
    assert "p.yaml:11:9: limits nvidia.com/gpu of container c is '${TP_SIZE}'; expected a whole number" in str(
        err.value
    )


# Kueue's site/static/examples/jobs/sample-jobset-tas-sliced.yaml, with a GPU limit and a namespace.
SLICED = """\
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: jobset-tas-sliced, namespace: research}
spec:
  replicatedJobs:
    - name: workers
      replicas: 1
      template:
        spec:
          parallelism: 8
          completions: 8
          template:
            metadata:
              annotations:
                kueue.x-k8s.io/podset-slice-required-topology: "cloud.provider.com/topology-rack"
                kueue.x-k8s.io/podset-slice-size: "SIZE"
            spec:
              containers: [{name: sleep, resources: {limits: {nvidia.com/gpu: 1}}}]
"""


def test_slices_smaller_than_the_pod_set_are_refused() -> None:
    # 8 pods in racks of 4 per slice: no single-domain question answers it. Line 15 (after apiVersion,
    # kind, metadata, spec, replicatedJobs, name, replicas, template, spec, parallelism, completions,
    # template, metadata, annotations): the slice level.
    with pytest.raises(TopologError) as err:
        read_jobs_text(SLICED.replace("SIZE", "4"), "s.yaml", RULES)
    assert "s.yaml:15:17: JobSet jobset-tas-sliced (pod set workers) requires each slice of 4 of its 8 pods" in str(
        err.value
    )


def test_a_slice_of_the_whole_pod_set_is_its_required_topology() -> None:
    # One slice of all 8 pods in a rack: 8 x 1 GPU = 8 GPUs, scope rack, at most 8 nodes.
    (job,) = read_jobs_text(SLICED.replace("SIZE", "8"), "s.yaml", RULES)
    assert _shape(job) == (8, "rack", 8, ("nvidia",))


def test_a_gpu_total_beyond_64_bits_is_refused_at_the_workload() -> None:
    # 10 replicated jobs x 1,000,000 replicas x parallelism 1,000,000 x 1,000,000 GPUs = 10^19 GPUs, above
    # 2^63 - 1 (about 9.22 x 10^18): each count is in bounds, the total is not (it failed in the facts).
    rj = (
        "  - name: r{i}\n    replicas: 1000000\n    template:\n      spec:\n        parallelism: 1000000\n"
        "        template:\n          spec:\n            containers: [{{name: c, resources: {{limits: "
        "{{nvidia.com/gpu: 1000000}}}}}}]\n"
    )
    text = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js, namespace: research}\n"
    text += "spec:\n  replicatedJobs:\n" + "".join(rj.format(i=i) for i in range(10))
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "js.yaml", RULES)
    assert "js.yaml:1:1: JobSet js asks for 10000000000000000000 GPUs in all; expected at most" in str(err.value)


def _pod(containers: str, init: str) -> Job:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: research}\nspec:\n"
        f"  containers: [{containers}]\n  initContainers: [{init}]\n"
    )
    (job,) = read_jobs_text(text, "p.yaml", RULES)
    return job


def _c(name: str, gpus: int, always: bool = False) -> str:
    policy = ", restartPolicy: Always" if always else ""
    return f"{{name: {name}{policy}, resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}}}"


def test_sidecar_init_containers_add_to_the_pod() -> None:
    # App 4 GPUs + a sidecar (init, restartPolicy Always) of 1, which runs beside it: 5 (was max(4, 1) = 4).
    assert _pod(_c("app", 4), _c("side", 1, always=True)).gpus == 5
    # Sidecar 2 started before a plain init container of 6: 6 + 2 = 8 at once, above app 4 + sidecar 2 = 6.
    assert _pod(_c("app", 4), _c("side", 2, always=True) + ", " + _c("warm", 6)).gpus == 8
    # A plain init container of 3 runs alone before the app's 4: the pod needs max(3, 4) = 4.
    assert _pod(_c("app", 4), _c("warm", 3)).gpus == 4


def test_a_kueue_pod_group_is_one_job_of_all_its_pods() -> None:
    # Two Pods labelled pod-group-name sample-group, total-count "2", 4 GPUs each: one job named
    # sample-group of 2 pods and 8 GPUs on at most 2 nodes (both were named sample-pod, a clash).
    job = _one("kueue-pod-group-gpu.yaml")
    assert (job.name, job.principal) == ("sample-group", "research")
    assert _shape(job) == (8, "any", 2, ("nvidia",))


def test_a_pod_group_missing_pods_is_refused() -> None:
    # Only the first Pod (lines 1-21 of the fixture): 1 of 2 pods; Kueue would wait for the other.
    text = "\n".join((FIXTURES / "kueue-pod-group-gpu.yaml").read_text().splitlines()[:21]) + "\n"
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "g.yaml", RULES)
    assert (
        "pod group sample-group: the files read hold 1 of its pods, but its kueue.x-k8s.io/pod-group-total-count"
        " says 2" in str(err.value)
    )


def test_a_mig_gres_type_named_after_its_gpu() -> None:
    # Slurm's AutoDetect=nvml names MIG slices <gpu>_<profile> (gres.conf docs: a100_1g.5gb): 3 instances
    # of 1g.5gb on an A100 (was read as 3 whole GPUs of a type no model has).
    job = _script("#SBATCH --gres=gpu:a100_1g.5gb:3\n")
    assert (job.gpus, job.mig, job.accepts) == (3, "1g.5gb", ("A100",))
    # The full NVML name of an H100 SXM5 80GB before the profile.
    job = _script("#SBATCH --gres=gpu:nvidia_h100_80gb_hbm3_1g.10gb:2\n")
    assert (job.gpus, job.mig, job.accepts) == (2, "1g.10gb", ("H100-SXM5-80GB",))


def test_gke_mig_partition_counts_instances() -> None:
    # GKE's MIG: nvidia.com/gpu 1 on nodes of partition size 1g.5gb is one 1g.5gb instance, not a whole
    # GPU; the Deployment's 7 replicas are 7 jobs of 1 instance each (cuda-simple-0 .. -6).
    jobs = list(read_jobs([FIXTURES / "gke-mig-deployment.yaml"], RULES))
    assert [j.name for j in jobs] == [f"cuda-simple-{i}" for i in range(7)]
    assert {(j.gpus, j.mig, j.accepts, j.scope) for j in jobs} == {(1, "1g.5gb", (), "node")}


def test_a_workload_of_more_than_10000_placements_is_refused() -> None:
    # replicas 10,001 of a Deployment: 10,001 jobs placed one by one, one more than the 10,000 allowed
    # (a million replicas took minutes just to read). Line 5: the replicas.
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: research}\nspec:\n"
        "  replicas: 10001\n  template:\n    spec:\n"
        "      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
    )
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "d.yaml", RULES)
    assert "d.yaml:5:3: Deployment d is 10001 jobs placed one by one" in str(err.value)
    # 10,000 is allowed: every job the same 1 GPU, named d-0 .. d-9999.
    jobs = list(read_jobs_text(text.replace("10001", "10000"), "d.yaml", RULES))
    assert (len(jobs), jobs[-1].name, {j.gpus for j in jobs}) == (10_000, "d-9999", {1})


# Kueue's site/static/examples/jobs/sample-job-partial-admission.yaml, with a GPU limit instead of cpu.
PARTIAL = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sample-job-partial-admission
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue
  annotations:
    kueue.x-k8s.io/job-min-parallelism: "5"
spec:
  parallelism: 20
  completions: 20
  suspend: true
  template:
    spec:
      containers:
      - name: dummy-job
        resources: {limits: {nvidia.com/gpu: 1}}
      restartPolicy: Never
"""


def test_partial_admission_is_said_and_the_whole_job_placed() -> None:
    # parallelism 20 x 1 GPU = 20 GPUs on at most 20 nodes; job-min-parallelism 5 (line 9) is a note.
    (job,) = read_jobs_text(PARTIAL, "pa.yaml", RULES)
    assert _shape(job) == (20, "any", 20, ("nvidia",))
    notes = [str(n) for n in job.notes]
    assert (
        "pa.yaml:9:5: Job sample-job-partial-admission may be admitted with as few as 5 pods (partial "
        "admission): placed with all of them" in notes
    )


def _selected(selector: str, limit: str) -> Job:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: research}\nspec:\n"
        f"  nodeSelector: {{{selector}}}\n  containers: [{{name: c, resources: {{limits: {{{limit}}}}}}}]\n"
    )
    (job,) = read_jobs_text(text, "p.yaml", RULES)
    return job


def test_single_strategy_mig_product_label_counts_instances() -> None:
    # GPU Feature Discovery's single MIG strategy: a node of A100-SXM4-40GB-MIG-1g.5gb offers 1g.5gb
    # instances as nvidia.com/gpu, so 2 of them are 2 instances (was 2 whole A100s).
    job = _selected("nvidia.com/gpu.product: A100-SXM4-40GB-MIG-1g.5gb", "nvidia.com/gpu: 2")
    assert (job.gpus, job.mig, job.accepts) == (2, "1g.5gb", ("A100-SXM4-40GB",))
    # Mixed strategy: the profile is the resource; the same label agrees with it.
    job = _selected("nvidia.com/gpu.product: A100-SXM4-40GB-MIG-1g.5gb", "nvidia.com/mig-1g.5gb: 3")
    assert (job.gpus, job.mig) == (3, "1g.5gb")
    # Without the suffix: whole GPUs.
    assert _selected("nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu: 2").mig is None


def test_a_time_sliced_product_is_placed_whole_and_says_so() -> None:
    # -SHARED: GPU Feature Discovery's time-slicing rename; 1 replica is read as 1 whole GPU, with a note.
    job = _selected("nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB-SHARED", "nvidia.com/gpu: 1")
    assert (job.gpus, job.mig, job.accepts) == (1, None, ("A100-SXM4-40GB",))
    assert any("a time-sliced GPU (-SHARED)" in n.message for n in job.notes)
