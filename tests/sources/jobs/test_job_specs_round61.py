"""Job specs, round 61: MIG media-extension slices as the device plugin names them, Intel Gaudi
accelerators (`habana.ai/gaudi`), and Slurm's `--tres-per-task` and shared GRES (shard, mps). Each
expected figure is worked out by hand from the spec beside it; each public sample names its source.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import NoGpuRequested, read_jobs_text

RULES = parse_rules(["namespace=Team", "account=Team", "partition=Team"])
ROOT = Path(__file__).resolve().parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"  # 8 DGX H100 nodes x 8 H100-SXM5-80GB
GAUDI = ROOT / "tests" / "sources" / "inventory" / "realistic" / "gaudi3-hls.yaml"  # 2 nodes x 8 Gaudi 3


def _pod(resource: str, count: str = "1", pods: int = 1) -> str:
    # A batch Job of `pods` pods, each asking `count` of `resource`, in namespace research.
    return f"""apiVersion: batch/v1
kind: Job
metadata: {{name: slices, namespace: research}}
spec:
  parallelism: {pods}
  completions: {pods}
  template:
    spec:
      containers:
      - name: c
        image: x
        resources:
          limits:
            {resource}: {count}
"""


# --- MIG media-extension slices ---------------------------------------------------------------------


def test_a_media_extension_slice_is_its_own_mig_profile() -> None:
    # NVIDIA/k8s-device-plugin internal/rm/rm.go (AddDefaultResourcesToConfig, at 4caff14): under
    # the mixed strategy a profile's resource is "mig-" + its name with '+' written '.', so the
    # 1g.10gb+me slice is nvidia.com/mig-1g.10gb.me. Base read it as "no GPU" (the webhook let it by).
    (job,) = read_jobs_text(_pod("nvidia.com/mig-1g.10gb.me"), "me.yaml", RULES)
    assert (job.gpus, job.mig) == (1, "1g.10gb+me")


@pytest.mark.parametrize(
    ("resource", "profile"),
    [
        ("nvidia.com/mig-1g.5gb.me", "1g.5gb+me"),  # A100-40GB
        ("nvidia.com/mig-1g.24gb.me.all", "1g.24gb+me.all"),  # the '+me.all' profile of the plugin's tests
        ("nvidia.com/mig-1g.24gb.gfx", "1g.24gb+gfx"),
        ("nvidia.com/mig-1g.24gb-me", "1g.24gb-me"),  # '-me' has no '+': written as it is
    ],
)
def test_every_extension_the_device_plugin_names_is_read_back(resource: str, profile: str) -> None:
    # The profile names of the plugin's api/config/v1/resources_test.go (at e515bd1): 1g.24gb-me,
    # 1g.24gb+me.all, 1g.24gb+gfx. Read back to NVIDIA's name, '+' for the first '.' after "gb".
    (job,) = read_jobs_text(_pod(resource), "me.yaml", RULES)
    assert job.mig == profile


def test_a_plus_in_a_resource_name_is_refused_with_the_name_the_plugin_gives() -> None:
    # 'nvidia.com/mig-1g.10gb+me' (as NVIDIA's MIG guide writes the profile) is no resource name: the
    # API server refuses such a pod, so it never runs. Line 14 is its `limits` entry.
    with pytest.raises(TopologError) as err:
        read_jobs_text(_pod("nvidia.com/mig-1g.10gb+me"), "me.yaml", RULES)
    assert "me.yaml:14:13: limits nvidia.com/mig-1g.10gb+me of container c is no Kubernetes resource name" in str(
        err.value
    )
    assert "offers this MIG profile as nvidia.com/mig-1g.10gb.me" in str(err.value)


def test_a_time_sliced_media_extension_slice_is_still_a_share() -> None:
    # renameByDefault time-slicing appends ".shared" to any resource, this one too: a share, refused.
    with pytest.raises(TopologError) as err:
        read_jobs_text(_pod("nvidia.com/mig-1g.10gb.me.shared"), "me.yaml", RULES)
    assert "is a time-sliced share of an NVIDIA GPU" in str(err.value)


@pytest.mark.parametrize(
    ("resource", "gpus", "nodes"), [("nvidia.com/mig-1g.10gb.me", 9, 2), ("nvidia.com/mig-1g.10gb", 2, 1)]
)
def test_media_extension_slice_capacity(tmp_path: Path, resource: str, gpus: int, nodes: int) -> None:
    # NVIDIA's MIG user guide: an H100 80GB has 7 1g.10gb instances but one 1g.10gb+me (the media
    # engines go to one slice). 9 pods of one slice each: 9 +me slices need 9 GPUs (8 on one node,
    # 1 on a second: 2 nodes), while 9 plain 1g.10gb need ceil(9 / 7) = 2 GPUs of one node.
    spec = tmp_path / "slices.yaml"
    spec.write_text(_pod(resource, pods=9))
    code, out, _ = run_cli("place", str(POD), str(spec), "--format", "json", "--principal-from", "namespace=Team")
    assert code == 0
    (job,) = json.loads(out)["jobs"]
    best = job["placements"][0]
    assert (len(best["gpus"]), best["nodes"]) == (gpus, nodes)


# --- Intel Gaudi ---------------------------------------------------------------------------------------


GAUDI_POD = """apiVersion: v1
kind: Pod
metadata: {name: quantization-pod, namespace: research}
spec:
  runtimeClassName: habana
  containers:
  - name: quantization-env
    image: x
    resources:
      limits:
        habana.ai/gaudi: "8"
"""
# The shape of Intel Gaudi pods: runtimeClassName habana and limits habana.ai/gaudi (redhat-cop/agnosticd
# ansible/roles_ocp_workloads/ocp4_workload_habana_post_rhods_setup/README.md: habana.ai/gaudi: '1' in
# limits and requests). Image, env and securityContext left out.


def test_a_gaudi_pod_asks_for_gaudi_accelerators() -> None:
    # Base refused it ("a device topolog does not place") though the catalogue has Gaudi 2 and 3.
    (job,) = read_jobs_text(GAUDI_POD, "gaudi.yaml", RULES)
    assert (job.gpus, job.accepts, job.scope) == (8, ("Gaudi",), "node")


def test_a_gaudi_pod_is_placed_on_gaudi_nodes_only(tmp_path: Path) -> None:
    # gaudi3-hls: 2 servers of 8 Gaudi 3 -> 8 fit either node (2 placements); the DGX H100 pod has no
    # Gaudi: nowhere (exit 1), never on the H100s.
    spec = tmp_path / "gaudi.yaml"
    spec.write_text(GAUDI_POD)
    code, out, _ = run_cli("place", str(GAUDI), str(spec), "--format", "json", "--no-authorization", *_from())
    assert code == 0
    assert len(json.loads(out)["jobs"][0]["placements"]) == 2
    code, out, _ = run_cli("place", str(POD), str(spec), "--format", "json", *_from())
    assert code == 1
    assert json.loads(out)["jobs"][0]["placements"] == []


def test_a_gaudi_pod_selecting_an_nvidia_product_is_refused() -> None:
    text = GAUDI_POD.replace(
        "  containers:", "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n  containers:"
    )
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "gaudi.yaml", RULES)
    assert "no node can satisfy both" in str(err.value)


def _from() -> tuple[str, str]:
    return ("--principal-from", "namespace=Team")


# --- Slurm --tres-per-task, shard and mps -------------------------------------------------------------


@pytest.mark.parametrize(
    ("tres", "gpus", "accepts"),
    [
        # SchedMD's tests: `-N1 -n4 --tres-per-task=gres/gpu:1` is allocated gpu:4 (4 tasks x 1).
        ("gres/gpu:1", 4, ()),
        ("gres/gpu=1", 4, ()),  # sbatch(1)'s own form, trestype/name=count
        ("cpu=8,gres/gpu:h100=2", 8, ("H100",)),  # 4 x 2, typed; cpu=8 noted
        ("gres/gpu:h100:2", 8, ("H100",)),
    ],
)
def test_tres_per_task_gpus_are_gpus_per_task(tres: str, gpus: int, accepts: tuple[str, ...]) -> None:
    # Base refused every --tres-per-task ("depend on the sockets or tasks of each node").
    text = f"#!/bin/bash\n#SBATCH -A research -J t -N 1 -n 4 --tres-per-task={tres}\nsrun python t.py\n"
    (job,) = read_jobs_text(text, "t.sh", RULES)
    assert (job.gpus, job.accepts, job.scope) == (gpus, accepts, "node")


def test_tres_per_task_on_every_node_holds_the_nodes() -> None:
    # -N 2, 4 tasks a node, 2 GPUs a task: 2 x 4 x 2 = 16 GPUs, 8 on each of exactly 2 nodes.
    text = "#!/bin/bash\n#SBATCH -A research -J t -N 2 --ntasks-per-node=4 --tres-per-task=gres/gpu=2\nsrun x\n"
    (job,) = read_jobs_text(text, "t.sh", RULES)
    assert (job.gpus, job.max_nodes, job.min_nodes) == (16, 2, 2)
    assert not [n for n in job.notes if "possibly fewer" in n.message]  # it runs on exactly 2


def test_tres_per_task_and_gpus_per_task_must_agree() -> None:
    text = "#!/bin/bash\n#SBATCH -A research -J t -n 4 --gpus-per-task=1 --tres-per-task=gres/gpu=2\nsrun x\n"
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "t.sh", RULES)
    assert "t.sh:2: --tres-per-task=gres/gpu=2 disagrees with --gpus-per-task=1" in str(err.value)


def test_tres_per_task_of_cpus_only_is_a_cpu_script() -> None:
    text = "#!/bin/bash\n#SBATCH -A research -J t -n 4 --tres-per-task=cpu=4\nsrun x\n"
    with pytest.raises(NoGpuRequested):
        read_jobs_text(text, "t.sh", RULES)


@pytest.mark.parametrize(
    ("option", "what"),
    [
        ("--gres=shard:2", "--gres=shard:2: shard:2 is a shard of a GPU"),
        ("--gres=shard", "--gres=shard: shard is a shard of a GPU"),  # no count: 1 shard
        ("--gres=mps:50", "--gres=mps:50: mps:50 is a CUDA MPS share of a GPU"),
        ("-n 2 --tres-per-task=gres/shard:5", "--tres-per-task=gres/shard:5: gres/shard:5 is a shard of a GPU"),
    ],
)
def test_a_share_of_a_gpu_is_refused_not_read_as_no_gpu(option: str, what: str) -> None:
    # Slurm's shard GRES (SchedMD's tests: `--tres-per-task=gres/shard:1` on gpu:4,shard:40 nodes):
    # base read such a script as CPU-only (the shard was a note), a GPU job let through unjudged.
    text = f"#!/bin/bash\n#SBATCH -A research -J t {option}\nsrun x\n"
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "t.sh", RULES)
    assert f"t.sh:2: {what}" in str(err.value)


def test_a_zero_shard_count_asks_for_nothing() -> None:
    text = "#!/bin/bash\n#SBATCH -A research -J t --gres=shard:0,gpu:2\nsrun x\n"
    (job,) = read_jobs_text(text, "t.sh", RULES)
    assert job.gpus == 2


# --- an inventory's copy of a catalogue model from before 1g.10gb+me ------------------------------------

H100_COPY = """apiVersion: topolog.dev/v1
kind: Inventory
catalog:
  models:
    - name: H100-SXM5-80GB
      vendor: nvidia
      kind: gpu
      source: "copied from topolog's catalogue before round 61"
      memory: {type: HBM3, size: 80 GB, bandwidth: 3.35 TB/s}
      fp64: 34 TFLOPS
      tensor: 989 TFLOPS
      scaleup: {kind: nvlink, generation: 4, links: 18, bandwidth: 450 GB/s}
      pcie: {generation: 5, lanes: 16}
      power: 700 W
      features: [mig, partitioning, fp64, ecc, nvlink, nvswitch, hbm]
      specs: {nvswitch_chip_links: 5}
      mig: {1g.10gb: 7, 1g.20gb: 4, 2g.20gb: 3, 3g.40gb: 2, 4g.40gb: 1, 7g.80gb: 1}
objects:
  - {name: n0, kind: node, children: [{name: gpu0, kind: gpu, model: H100-SXM5-80GB}]}
"""
# H100-SXM5-80GB word for word as catalog.yaml wrote it at 42fed5f (comments left out).


def test_a_copy_without_the_media_extension_profile_still_loads(tmp_path: Path) -> None:
    # It lacks only the profile the catalogue gained: no variant; its own entry (no +me) is used.
    path = tmp_path / "inv.yaml"
    path.write_text(H100_COPY, encoding="utf-8")
    model = load_inventory([path]).models["H100-SXM5-80GB"]
    assert model.loc.file.endswith("inv.yaml")
    assert "1g.10gb+me" not in dict(model.mig)


def test_a_copy_with_another_instance_count_is_a_variant(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(H100_COPY.replace("1g.10gb: 7", "1g.10gb: 6"), encoding="utf-8")
    with pytest.raises(TopologError) as err:
        load_inventory([path])
    assert "model 'H100-SXM5-80GB' is already defined in the built-in catalogue" in str(err.value)


# --- DRA claims -------------------------------------------------------------------------------------------

DRA_COUNT = """# One pod, one container asking 2 GPUs
---
apiVersion: v1
kind: Namespace
metadata:
  name: gpu-test1
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata:
  namespace: research
  name: double-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.nvidia.com
        count: 2
---
apiVersion: v1
kind: Pod
metadata:
  namespace: research
  name: gpu-pod
spec:
  containers:
  - name: ctr0
    image: ubuntu:22.04
    resources:
      claims:
      - name: twogpus
  resourceClaims:
  - name: twogpus
    resourceClaimTemplateName: double-gpu
"""
# NVIDIA/k8s-dra-driver-gpu demo/specs/quickstart/gpu-test-count.yaml (at 4066752): the namespace of the
# template and the pod (gpu-test1 in both) set to research (a principal of the shipped principals): a claim
# is made from the template of the pod's own namespace (review 61). Command and tolerations left out.


def test_a_dra_claim_whose_template_is_in_the_file_is_read() -> None:
    # double-gpu: one request of class gpu.nvidia.com, count 2 -> 2 whole NVIDIA GPUs on one node.
    # Base refused every resourceClaims ("not judged").
    (job,) = read_jobs_text(DRA_COUNT, "dra.yaml", RULES)
    assert (job.gpus, job.accepts, job.scope) == (2, ("nvidia",), "node")


def test_two_claims_of_one_template_are_two_claims() -> None:
    # NVIDIA's gpu-test7.yaml shape: two containers, each its own claim of single-gpu (no count: 1)
    # -> 1 + 1 = 2 GPUs.
    text = DRA_COUNT.replace("        count: 2\n", "").replace(
        "  - name: twogpus\n    resourceClaimTemplateName: double-gpu\n",
        "  - name: gpu0\n    resourceClaimTemplateName: double-gpu\n"
        "  - name: gpu1\n    resourceClaimTemplateName: double-gpu\n",
    )
    (job,) = read_jobs_text(text, "dra.yaml", RULES)
    assert job.gpus == 2


def test_a_v1_request_under_exactly_is_read() -> None:
    # resource.k8s.io/v1 writes the request under `exactly` (Kueue's sample-dra-counter-job.yaml shape).
    text = DRA_COUNT.replace("v1beta1", "v1").replace(
        "        deviceClassName: gpu.nvidia.com\n        count: 2\n",
        "        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: 3\n",
    )
    (job,) = read_jobs_text(text, "dra.yaml", RULES)
    assert job.gpus == 3


def test_device_plugin_gpus_and_claimed_gpus_add_up() -> None:
    text = DRA_COUNT.replace(
        "    resources:\n      claims:", "    resources:\n      limits: {nvidia.com/gpu: 1}\n      claims:"
    )
    (job,) = read_jobs_text(text, "dra.yaml", RULES)
    assert job.gpus == 3  # 1 from the device plugin, 2 from the claim


@pytest.mark.parametrize(
    ("edit", "where", "said"),
    [
        # A template the file does not hold: the count is elsewhere (line 35, the pod's template name; the
        # template is lines 8-19, the pod 21-35).
        (
            ("resourceClaimTemplateName: double-gpu", "resourceClaimTemplateName: other"),
            "dra.yaml:35:5",
            "its ResourceClaimTemplate other is not among the documents",
        ),
        (("count: 2", "allocationMode: All"), "dra.yaml:19:9", "allocationMode All: every matching GPU of the node"),
        (("deviceClassName: gpu.nvidia.com", "deviceClassName: mig.nvidia.com"), "dra.yaml:18:9", "device class"),
        (("count: 2", "count: 2\n        selectors: [{cel: {expression: x}}]"), "dra.yaml:20:9", "selectors: CEL"),
        (("count: 2", "count: 0"), "dra.yaml:19:9", "device request count 0"),
        (("resourceClaimTemplateName: double-gpu", "resourceClaimName: shared"), "dra.yaml:35:5", "a claim pods share"),
    ],
)
def test_what_a_claim_does_not_say_exactly_is_refused(edit: tuple[str, str], where: str, said: str) -> None:
    text = DRA_COUNT.replace(*edit)
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "dra.yaml", RULES)
    assert f"{where}: " in str(err.value) and said in str(err.value)


FIRST_AVAILABLE = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  namespace: research
  name: a100-or-mig
spec:
  spec:
    devices:
      requests:
      - name: gpu
        firstAvailable:
        - name: a100
          deviceClassName: a100.example.com
        - name: mig
          deviceClassName: a100-mig.example.com
---
apiVersion: batch/v1
kind: Job
metadata:
  name: sample-dra-firstavailable-job
  namespace: research
spec:
  template:
    spec:
      containers:
      - name: dummy-job
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        resources:
          claims:
          - name: gpu
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: a100-or-mig
      restartPolicy: Never
"""
# kubernetes-sigs/kueue site/static/examples/dra/sample-dra-firstavailable-job.yaml (at 50794c2): name for
# generateName, namespace research (the template's and the Job's), queue label, args and CPU requests left out.


def test_kueues_first_available_sample_is_refused_at_its_alternatives() -> None:
    # Line 11 is `firstAvailable:`: an A100 or a MIG slice, whichever is free: not one count of one kind.
    with pytest.raises(TopologError) as err:
        read_jobs_text(FIRST_AVAILABLE, "fa.yaml", RULES)
    assert "fa.yaml:11:9: device request with firstAvailable" in str(err.value)


# --- LWS DisaggregatedSet ---------------------------------------------------------------------------------

DISAGGREGATED = """apiVersion: disaggregatedset.x-k8s.io/v1
kind: DisaggregatedSet
metadata:
  name: disaggregatedset-sample
  namespace: research
spec:
  roles:
  - name: prefill
    replicas: 2
    leaderWorkerTemplate:
      size: 4
      workerTemplate:
        spec:
          containers:
          - name: vllm-prefill
            image: vllm/vllm-openai:latest
            resources:
              limits:
                nvidia.com/gpu: "8"
  - name: decode
    replicas: 4
    leaderWorkerTemplate:
      size: 2
      workerTemplate:
        spec:
          containers:
          - name: vllm-decode
            image: vllm/vllm-openai:latest
            resources:
              limits:
                nvidia.com/gpu: "4"
"""
# The example of the DisaggregatedSet "Roles" page (kubernetes-sigs LWS project documentation, "Example
# Multi-Role Configuration"), namespace added. Base refused it as a kind it does not read.


def test_a_disaggregated_set_is_its_roles_leader_worker_sets() -> None:
    # prefill: 2 groups of 4 pods x 8 GPUs = 32 GPUs on at most 4 nodes; decode: 4 groups of 2 pods x
    # 4 GPUs = 8 GPUs on at most 2 nodes. Jobs numbered on: -0, -1 prefill, -2 .. -5 decode.
    jobs = read_jobs_text(DISAGGREGATED, "ds.yaml", RULES)
    assert [(j.name, j.gpus, j.max_nodes) for j in jobs] == [
        ("disaggregatedset-sample-0", 32, 4),
        ("disaggregatedset-sample-1", 32, 4),
        *((f"disaggregatedset-sample-{i}", 8, 2) for i in range(2, 6)),
    ]


def test_roles_under_spec_and_slices_repeat_the_groups() -> None:
    # The v1 sample's shape (role fields under `spec`), and slices: 2: every role's groups twice ->
    # (1 prefill + 2 decode) x 2 = 6 jobs; prefill 1 group of 2 pods x 8 = 16, decode 2 groups of 1 x 4.
    text = """apiVersion: disaggregatedset.x-k8s.io/v1
kind: DisaggregatedSet
metadata: {name: pd, namespace: research}
spec:
  slices: 2
  roles:
  - name: prefill
    spec:
      replicas: 1
      leaderWorkerTemplate:
        size: 2
        workerTemplate:
          spec:
            containers: [{name: p, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
  - name: decode
    spec:
      replicas: 2
      leaderWorkerTemplate:
        workerTemplate:
          spec:
            containers: [{name: d, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]
"""
    jobs = read_jobs_text(text, "ds.yaml", RULES)
    assert [(j.name, j.gpus) for j in jobs] == [(f"pd-{i}", g) for i, g in enumerate([16, 4, 4] * 2)]


# --- Kueue Workload minCount ---------------------------------------------------------------------------

WORKLOAD = """apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: job-sample, namespace: research}
spec:
  queueName: user-queue
  podSets:
  - name: main
    count: 4
    minCount: 2
    template:
      spec:
        containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
"""


def test_a_workload_min_count_is_partial_admission_placed_whole() -> None:
    # 4 pods x 8 = 32 GPUs placed; Kueue may admit 2 of them (line 9): said, not "not judged".
    (job,) = read_jobs_text(WORKLOAD, "wl.yaml", RULES)
    assert job.gpus == 32
    assert [n.message for n in job.notes if "minCount" in n.message or "partial" in n.message] == [
        "pod set main of Workload job-sample may be admitted with as few as 2 of its 4 pods (partial admission): "
        "placed with all of them"
    ]


@pytest.mark.parametrize("value", ["5", "0"])
def test_a_min_count_outside_one_to_count_is_refused(value: str) -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text(WORKLOAD.replace("minCount: 2", f"minCount: {value}"), "wl.yaml", RULES)
    assert f"wl.yaml:9:5: minCount of pod set main of Workload job-sample is {value}; expected a count from 1" in str(
        err.value
    )
