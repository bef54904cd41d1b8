"""Job specs, round 62: Volcano's GPU counts (`volcano.sh/vgpu-number`), a Gaudi filed under Habana's
name, a GPU count finer than Kubernetes' milli precision, and Slurm's `--gpus-per-task` with and without
a task count. Each expected figure is worked out by hand from the spec beside it; each public sample
names its source.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

RULES = parse_rules(["namespace=Team", "account=Team"])


def _limits(*lines: str) -> str:
    # One Pod of one container whose limits are `lines`, scheduled by Volcano.
    body = "".join(f"        {line}\n" for line in lines)
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: test1, namespace: research}\nspec:\n"
        "  schedulerName: volcano\n  containers:\n  - name: pod1-ctr\n    image: ubuntu:20.04\n"
        "    resources:\n      limits:\n" + body
    )


# --- Volcano vGPU -----------------------------------------------------------------------------------


def test_an_exclusive_volcano_vgpu_is_one_nvidia_gpu() -> None:
    # Project-HAMi/website, userguide/volcano-vgpu/NVIDIA-GPU/examples/use_exclusive_gpu.md (v2.6.0):
    # `volcano.sh/vgpu-number: 1` with no other volcano.sh limit is one whole GPU. Before, the pod
    # was "requests no GPU" (NoGpuRequested): a GPU pod let through a GPU gate unjudged.
    (job,) = read_jobs_text(_limits("volcano.sh/vgpu-number: 1"), "v.yaml", RULES)
    assert (job.gpus, job.accepts, job.scope) == (1, ("nvidia",), "node")
    assert any("volcano.sh/vgpu-number" in n.message and "whole GPUs" in n.message for n in job.notes)


def test_shared_vgpus_are_placed_as_that_many_whole_gpus_of_one_node() -> None:
    # The same site's default_use.md shape with 2 units: each unit is a share of a different GPU
    # (volcano-sh/volcano vgpu/utils.go checkNodeGPUSharingPredicateAndScore: one device per unit),
    # so 2 units need 2 GPUs of one node; placed whole, as a share is never more than its GPU.
    text = _limits("volcano.sh/vgpu-number: 2", "volcano.sh/vgpu-cores: 50", "volcano.sh/vgpu-memory: 10240")
    (job,) = read_jobs_text(text, "v.yaml", RULES)
    assert (job.gpus, job.accepts, job.scope) == (2, ("nvidia",), "node")


def test_a_vgpu_memory_limit_alone_is_one_gpu() -> None:
    # vgpu/utils.go resourcereqs: without vgpu-number, a vgpu-memory limit asks for one device.
    (job,) = read_jobs_text(_limits("volcano.sh/vgpu-memory: 1024"), "v.yaml", RULES)
    assert job.gpus == 1


def test_volcano_vgpus_in_a_batch_job_count_per_task_replica() -> None:
    # A Volcano Job of 2 replicas, each 4 vGPUs: 2 pods x 4 = 8 GPUs, on at most 2 nodes.
    text = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj, namespace: research}
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
  - replicas: 2
    name: worker
    template:
      spec:
        containers:
        - name: w
          image: x
          resources:
            limits:
              volcano.sh/vgpu-number: 4
"""
    (job,) = read_jobs_text(text, "vj.yaml", RULES)
    assert (job.gpus, job.max_nodes) == (8, 2)


def test_vgpus_beside_whole_gpus_in_one_pod_are_refused() -> None:
    # Two kinds of request in one pod: topolog places one kind of GPU per job.
    with pytest.raises(TopologError, match=r"requests nvidia\.com/gpu, volcano\.sh/vgpu-number in one pod"):
        read_jobs_text(_limits("volcano.sh/vgpu-number: 1", "nvidia.com/gpu: 1"), "v.yaml", RULES)


# --- quantities finer than a thousandth ---------------------------------------------------------------


def test_a_count_finer_than_milli_is_refused_with_the_count_kubernetes_would_use() -> None:
    # 1.9999999: the API server validates an extended resource at milli precision, rounded up
    # (MilliValue 2000, a whole 2), so the pod would run with 2 GPUs; read exactly it is no count.
    with pytest.raises(TopologError) as err:
        read_jobs_text(_limits("nvidia.com/gpu: 1.9999999"), "f.yaml", RULES)
    assert "f.yaml:11:9: limits nvidia.com/gpu of container pod1-ctr is '1.9999999'" in str(err.value)
    assert "Kubernetes rounds this one up to 2; write that count" in str(err.value)


def test_a_fraction_of_a_device_still_names_the_api_servers_refusal() -> None:
    # 1.5 is 1500m: not a whole number at milli precision, which the API server refuses ("must be an integer").
    with pytest.raises(TopologError) as err:
        read_jobs_text(_limits('nvidia.com/gpu: "1.5"'), "f.yaml", RULES)
    assert "which the API server refuses for an extended resource" in str(err.value)
    assert "rounds" not in str(err.value)


# --- a Gaudi filed under Habana's name ----------------------------------------------------------------

HABANA = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: habana-gaudi}
catalog:
  models:
    - name: HL-325L
      vendor: habana
      kind: hpu
      source: "Intel Gaudi 3 AI accelerator white paper (2024), HL-325L OAM"
      memory: {type: HBM2e, size: 128 GB, bandwidth: 3.7 TB/s}
      features: [roce, ecc, hbm]
objects:
  - {name: g3, kind: node, children: [{name: "a{i}", kind: gpu, model: HL-325L, count: 8}]}
"""
GAUDI_POD = """apiVersion: v1
kind: Pod
metadata: {name: g8, namespace: research}
spec:
  containers:
    - name: c
      image: x
      resources:
        limits:
          habana.ai/gaudi: "8"
"""


def test_a_gaudi_whose_vendor_is_written_habana_is_placed(tmp_path: Path) -> None:
    # One node g3 of 8 HL-325L, vendor habana (Habana Labs, the maker's name lspci prints), kind hpu;
    # 8 habana.ai/gaudi in one pod fit it exactly: 1 placement on g3. Before: 0 placements, "0 GPUs
    # of an accepted model (Gaudi)", since only vendor intel made a kind-hpu model a Gaudi.
    inventory, spec = tmp_path / "habana.yaml", tmp_path / "gaudi.yaml"
    inventory.write_text(HABANA)
    spec.write_text(GAUDI_POD)
    code, out, err = run_cli(
        "place", str(inventory), str(spec), "--format", "json", "--no-authorization",
        "--principal-from", "namespace=Team", "--engine", "memory",
    )  # fmt: skip
    assert code == 0, err
    (job,) = json.loads(out)["jobs"]
    assert sorted({gpu.split("/")[0] for p in job["placements"] for gpu in p["gpus"]}) == ["g3"]


# --- Slurm: GPUs per task and the task count ------------------------------------------------------------


def _script(*lines: str) -> str:
    return (
        "#!/bin/bash\n#SBATCH --job-name=t --account=research\n" + "".join(f"#SBATCH {x}\n" for x in lines) + "srun x\n"
    )


@pytest.mark.parametrize("option", ["--gpus-per-task=2", "--tres-per-task=gres/gpu:2"])
def test_gpus_per_task_without_a_task_count_is_refused_as_sbatch_refuses_it(option: str) -> None:
    # Slurm 23.11.10: "--gpus-per-task or --tres-per-task used without either --gpus or -n/--ntasks
    # is not allowed" (quoted in meta-pytorch/torchx pull request 1100). Before: read as 1 task, 2 GPUs.
    with pytest.raises(TopologError) as err:
        read_jobs_text(_script(option), "t.sh", RULES)
    assert f"t.sh:3: {option} without a task count: sbatch (Slurm 23.11 and later) refuses the job" in str(err.value)


def test_tasks_per_node_without_nodes_is_no_task_count_either() -> None:
    # torchx's failing script wrote --ntasks-per-node=1 beside --gpus-per-task and still had to add --ntasks=1.
    with pytest.raises(TopologError, match="without a task count"):
        read_jobs_text(_script("--ntasks-per-node=1", "--gpus-per-task=3"), "t.sh", RULES)


def test_gpus_over_gpus_per_task_is_the_task_count() -> None:
    # sbatch(1) names "--gpus=X --gpus-per-task=Y" as a task count: 8 / 2 = 4 tasks of 2 GPUs = 8 GPUs,
    # on at most 4 nodes (no -N: one task's GPUs share a node). Before: 2 GPUs on one node (the --gpus
    # total was dropped).
    (job,) = read_jobs_text(_script("--gpus=8", "--gpus-per-task=2"), "t.sh", RULES)
    assert (job.gpus, job.scope, job.max_nodes) == (8, "any", 4)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        # -n 4 x 2 GPUs = 8, but --gpus says 6.
        (
            ("-n 4 --gpus=6", "--gpus-per-task=2"),
            "t.sh:3: --gpus=6 is not the 4 tasks (-n) times --gpus-per-task=2 (8)",
        ),
        # 7 GPUs are no whole number of 2-GPU tasks.
        (("--gpus=7", "--gpus-per-task=2"), "t.sh:3: --gpus=7 is no whole number of tasks of --gpus-per-task=2"),
        (("--gpus=a100:8", "--gpus-per-task=h100:2"), "t.sh:3: --gpus=a100:8 names another GPU type"),
    ],
)
def test_gpus_and_gpus_per_task_that_disagree_are_refused(lines: tuple[str, ...], expected: str) -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text(_script(*lines), "t.sh", RULES)
    assert expected in str(err.value)


@pytest.mark.parametrize(
    ("lines", "shape"),
    [
        # -n 4 x 2 = 8 GPUs; each task's 2 on its node, so at most 4 nodes (before: any number of nodes).
        (("-n 4", "--gpus-per-task=2"), (8, "any", 4, None)),
        # -n 1 x 8: one task, one node (before: scope any, the 8 GPUs could spread over nodes).
        (("-n 1", "--gpus-per-task=8"), (8, "node", None, None)),
        # Controls, read as before.
        # -N 2 x --ntasks-per-node=4 x 1 = 8 GPUs, 4 on each of exactly 2 nodes (the CSCS shape).
        (("-N 2 --ntasks-per-node=4", "--gpus-per-task=1"), (8, "any", 2, 2)),
        # The same with --gpus=8 agreeing: 8 / 1 = 8 tasks = 2 x 4.
        (("-N 2 --ntasks-per-node=4 --gpus=8", "--gpus-per-task=1"), (8, "any", 2, 2)),
        # --gres=gpu:4 per node rules the count; --gpus-per-task beside it asks for nothing more.
        (("--ntasks-per-node=1 --gres=gpu:4", "--gpus-per-task=4"), (4, "node", None, None)),
    ],
)
def test_gpus_per_task_with_a_task_count_is_read(lines: tuple[str, ...], shape: tuple[object, ...]) -> None:
    (job,) = read_jobs_text(_script(*lines), "t.sh", RULES)
    assert (job.gpus, job.scope, job.max_nodes, job.min_nodes) == shape


@pytest.mark.parametrize(
    ("line", "gpus", "accepts"),
    [
        # Typed requests users write: 2 nodes x 8 H100 = 16; --gpus=h100:8 is 8 in all.
        ("-N 2 --gres=gpu:h100:8 --gpu-bind=closest", 16, ("H100",)),
        ("--gpus=h100:8 --gpu-bind=single:1", 8, ("H100",)),
    ],
)
def test_typed_gpu_requests_are_read_and_gpu_bind_is_noted(line: str, gpus: int, accepts: tuple[str, ...]) -> None:
    (job,) = read_jobs_text(_script(line), "t.sh", RULES)
    assert (job.gpus, job.accepts) == (gpus, accepts)
    assert any("--gpu-bind" in n.message and "not judged" in n.message for n in job.notes)


@pytest.mark.parametrize("separator", ["hetjob", "packjob"])
def test_a_heterogeneous_job_is_refused_naming_the_separator_written(separator: str) -> None:
    # packjob is hetjob's older spelling; the message quotes the one in the script.
    text = _script("-N 1 --gres=gpu:4", separator, "-N 2 --gres=gpu:8")
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "t.sh", RULES)
    assert f"t.sh:4: heterogeneous jobs (#SBATCH {separator}: components that start together) are not read" in str(
        err.value
    )


# --- GPU Feature Discovery's architecture label -----------------------------------------------------------


def _family_job(selector: str) -> str:
    # One pod of 8 NVIDIA GPUs on nodes whose nvidia.com/gpu.family label is `selector`.
    return f"""apiVersion: batch/v1
kind: Job
metadata: {{name: fam, namespace: research}}
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/gpu.family: {selector}
      containers:
      - name: c
        image: x
        resources:
          limits:
            nvidia.com/gpu: 8
"""


@pytest.mark.parametrize(
    ("family", "accepts"),
    [
        # getArchFamily (NVIDIA/k8s-device-plugin internal/lm/resource.go): compute capability 9.x is
        # hopper (H100, H200), 8.0 ampere (A100); 8.9 ada-lovelace (L4, L40S, RTX 4090).
        ("hopper", ("H100", "H200")),
        ("ampere", ("A100",)),
        ("ada-lovelace", ("L4", "RTX-4090")),
    ],
)
def test_an_architecture_selector_accepts_the_models_of_that_architecture(
    family: str, accepts: tuple[str, ...]
) -> None:
    # Before: "node selector nvidia.com/gpu.family=hopper not judged", and any NVIDIA GPU accepted.
    (job,) = read_jobs_text(_family_job(family), "f.yaml", RULES)
    assert job.accepts == accepts


def test_an_architecture_with_no_catalogue_gpu_fits_nowhere_with_a_note() -> None:
    # turing (7.5): no GPU of the catalogue, so the job accepts only the word itself and a note says so.
    (job,) = read_jobs_text(_family_job("turing"), "f.yaml", RULES)
    assert job.accepts == ("turing",)
    assert any("nvidia.com/gpu.family=turing names no GPU model" in n.message for n in job.notes)


def test_an_architecture_selector_places_only_on_that_architecture(tmp_path: Path) -> None:
    # inventories/mixed-fleet.yaml: nodes h100-n0, h100-n1 (8 H100 each), a100-n0, a100-n1 (8 A100
    # each), and AMD/RTX nodes. hopper: 8 GPUs on one node -> the two H100 nodes, nothing else.
    spec = tmp_path / "f.yaml"
    spec.write_text(_family_job("hopper"))
    fleet = Path(__file__).resolve().parents[3] / "inventories" / "mixed-fleet.yaml"
    code, out, err = run_cli(
        "place", str(fleet), str(spec), "--format", "json", "--no-authorization",
        "--principal-from", "namespace=Team", "--engine", "memory",
    )  # fmt: skip
    assert code == 0, err
    (job,) = json.loads(out)["jobs"]
    assert sorted({gpu.split("/")[0] for p in job["placements"] for gpu in p["gpus"]}) == ["h100-n0", "h100-n1"]


# --- Slurm: a MIG type AutoDetect=nvml wrote ------------------------------------------------------------


def test_a_slurm_mig_type_is_read_as_the_plain_profile_which_also_covers_media_slices() -> None:
    # gpu_nvml.c _handle_mig (SchedMD/slurm) names a slice "<gpu>_<slices>g.<GiB>gb" from its slice
    # count and memory only, so a 1g.10gb+me slice is also "a100_1g.10gb". A GPU holds at most 7 slices
    # of one slice each, +me or not (A100-80GB: 1g.10gb x 7), so reading the plain profile counts what
    # Slurm may hand out: 14 instances -> mig 1g.10gb, 14 (2 GPUs' worth).
    (job,) = read_jobs_text(_script("--gres=gpu:a100_1g.10gb:14"), "t.sh", RULES)
    assert (job.mig, job.gpus, job.accepts) == ("1g.10gb", 14, ("A100",))


# --- Volcano network topology -------------------------------------------------------------------------

VOLCANO_TOPOLOGY = """apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: network-topology-job, namespace: research}
spec:
  schedulerName: volcano
  minAvailable: 4
  networkTopology:
    mode: MODE
    highestTierAllowed: 2
  tasks:
    - name: t0
      replicas: 4
      template:
        spec:
          containers:
            - name: c0
              image: x
              resources:
                limits:
                  nvidia.com/gpu: 8
"""


def test_a_hard_volcano_network_topology_is_refused_not_placed_unconstrained() -> None:
    # volcano-sh/volcano docs/user-guide/how_to_use_network_topology_aware_scheduling.md: mode hard,
    # highestTierAllowed 2 keeps every pod inside one HyperNode of tier 2 or lower, or they stay pending.
    # HyperNodes are the cluster's objects, not the inventory's. Before: "fields networkTopology not
    # judged" and 32 GPUs placed on any 4 nodes. Line 7 is `networkTopology`.
    with pytest.raises(TopologError) as err:
        read_jobs_text(VOLCANO_TOPOLOGY.replace("MODE", "hard"), "v.yaml", RULES)
    assert "v.yaml:7:3: Job network-topology-job requires its pods in one Volcano HyperNode of tier 2 or lower" in str(
        err.value
    )


def test_a_soft_volcano_network_topology_is_a_noted_preference() -> None:
    # 4 pods x 8 GPUs = 32 on at most 4 nodes; the soft request is noted.
    (job,) = read_jobs_text(VOLCANO_TOPOLOGY.replace("MODE", "soft"), "v.yaml", RULES)
    assert (job.gpus, job.max_nodes) == (32, 4)
    assert any("prefers one HyperNode: not judged" in n.message for n in job.notes)


def test_a_hard_partition_topology_is_refused_too() -> None:
    # The guide's SubGroup example: partitions of 4 pods, each hard within a tier-1 HyperNode.
    text = VOLCANO_TOPOLOGY.replace("MODE", "soft").replace(
        "      replicas: 4\n",
        "      replicas: 4\n      partitionPolicy:\n        totalPartitions: 2\n        partitionSize: 2\n"
        "        networkTopology:\n          mode: hard\n          highestTierAllowed: 1\n",
    )
    with pytest.raises(TopologError, match="partitionPolicy of task t0 of Job network-topology-job requires"):
        read_jobs_text(text, "v.yaml", RULES)
