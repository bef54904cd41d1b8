"""Job specs, round 62 (JS2): GPU selections the readers left unjudged or read looser than the scheduler.

- A required node affinity whose terms (ORed by Kubernetes) select GPUs by different labels, a
  `nvidia.com/gpu.family` term OR a `nvidia.com/gpu.product` term, was "not judged": any NVIDIA GPU
  was accepted. Now each term is read alone and the pod accepts what any term accepts.
- `nvidia.com/gpu.product` is matched case for case by Kubernetes, and GPU Feature Discovery writes the
  NVML name with spaces made `-` and its case kept (NVIDIA/gpu-feature-discovery mig-strategy.go,
  migStrategyNone: `strings.Replace(model, " ", "-", -1)`): `NVIDIA-H100-PCIe`, never `NVIDIA-H100-PCIE`.
  The reader compared case-blind and placed such a pod, which stays pending on every real node.
- AMD's node labeller (ROCm/k8s-device-plugin cmd/k8s-node-labeller/main.go, createLabels) writes
  `beta.amd.com/gpu.device-id.<id>` = how many GPUs of that id a node holds, and `amd.com/gpu.product-name`
  = the sysfs product name with spaces made `_` and parentheses dropped. The legacy key selects nodes
  with GPUs of that id; a product name selects the catalogue model named so, where exactly one is.
  `nvidia.com/gpu.memory` (MiB, NVML's figure), `nvidia.com/gpu.count` and `amd.com/gpu.family` map to no
  catalogue figure: noted with the reason, never refused.
- Slurm: sbatch sets the task count from -N and --ntasks-per-node only when the node count is one number
  (SchedMD/slurm src/sbatch/opt.c, _opt_verify: `max_nodes == 0 || min_nodes == max_nodes`). So
  `-N 2-4 --ntasks-per-node=4 --gpus-per-task=1` has no task count, and sbatch 23.11+ refuses
  --gpus-per-task without one; it was read as 8 GPUs on 2 nodes.

Expected figures are derived by hand from inventories/mixed-fleet.yaml: h100-n0 and h100-n1 hold 8
H100-SXM5-80GB each, a100-n0 and a100-n1 8 A100-SXM4-80GB each, mi300x-n0/n1 8 AMD MI300X each, and
rtx-n0..rtx-n3 2 RTX-4090 each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

RULES = parse_rules(["namespace=Team"])
SLURM = parse_rules(["account=Team"])
FLEET = str(Path(__file__).resolve().parents[3] / "inventories" / "mixed-fleet.yaml")


def _pod(selection: str, limits: str = "nvidia.com/gpu: 2") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: js, namespace: research}}\nspec:\n{selection}"
        f"  containers:\n  - name: c\n    image: x\n    resources:\n      limits: {{{limits}}}\n"
    )


def _terms(*terms: tuple[str, ...]) -> str:
    # A required node affinity; each term is its expressions (flow mappings), the terms ORed.
    body = "".join("        - matchExpressions:\n" + "".join(f"          - {e}\n" for e in term) for term in terms)
    return (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n" + body
    )


def _nodes(tmp_path: Path, text: str) -> tuple[int, list[str], str]:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    code, out, err = run_cli(
        "place", FLEET, str(path), "--principal-from", "namespace=Team", "--no-authorization", "--format", "json"
    )
    if code == 2:
        return code, [], err
    (job,) = json.loads(out)["jobs"]
    return code, sorted(p["domain"] for p in job["placements"]), err


HOPPER = "{key: nvidia.com/gpu.family, operator: In, values: [hopper]}"
RTX = "{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-GeForce-RTX-4090]}"


def test_terms_on_family_and_product_accept_either(tmp_path: Path) -> None:
    # hopper OR the RTX 4090 product, 2 GPUs: the H100 nodes (hopper) and the RTX nodes with 2 GPUs up
    # (rtx-n2's gpu1 is down: 1 left); not the A100 nodes (ampere, not the RTX). Before: not judged,
    # the A100 nodes placed too.
    code, nodes, err = _nodes(tmp_path, _pod(_terms((HOPPER,), (RTX,))))
    assert (code, nodes) == (0, ["h100-n0", "h100-n1", "rtx-n0", "rtx-n1", "rtx-n3"]), err


def test_expressions_within_a_term_all_hold() -> None:
    # (hopper AND not H100 80GB HBM3) OR RTX 4090: the hopper models but the H100 SXM (H100 and H200 words
    # meeting the catalogue's other NVIDIA models: H100-PCIE-80GB, H100-NVL-94GB, H200-SXM-141GB), or RTX-4090.
    not_sxm = "{key: nvidia.com/gpu.product, operator: NotIn, values: [NVIDIA-H100-80GB-HBM3]}"
    (job,) = read_jobs_text(_pod(_terms((HOPPER, not_sxm), (RTX,))), "t.yaml", RULES)
    assert sorted(job.accepts) == ["H100-NVL-94GB", "H100-PCIE-80GB", "H200-SXM-141GB", "RTX-4090"]


def test_a_term_of_another_vendor_adds_nothing() -> None:
    # An NVIDIA pod: the AMD device-id term matches no node with NVIDIA GPUs; the ampere term stands.
    amd = "{key: amd.com/gpu.device-id, operator: In, values: ['74a1']}"
    ampere = "{key: nvidia.com/gpu.family, operator: In, values: [ampere]}"
    (job,) = read_jobs_text(_pod(_terms((ampere,), (amd,))), "t.yaml", RULES)
    assert job.accepts == ("A100",)
    assert any("this term fits no node" in n.message for n in job.notes)


def test_a_term_on_an_unjudged_label_leaves_the_terms_unjudged() -> None:
    # Control: hopper OR a hostname: that node may hold any GPU, so nothing narrows the pod's GPUs.
    host = "{key: kubernetes.io/hostname, operator: In, values: [a100-n0]}"
    (job,) = read_jobs_text(_pod(_terms((HOPPER,), (host,))), "t.yaml", RULES)
    assert job.accepts == ("nvidia",)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("NVIDIA-H100-80GB-hbm3", "NVIDIA-H100-80GB-HBM3"),
        ("NVIDIA-H100-PCIE", "NVIDIA-H100-PCIe"),  # NVML: "NVIDIA H100 PCIe"
        ("nvidia-A100-SXM4-80GB-MIG-1g.10gb", "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb"),
    ],
)
def test_a_product_in_another_case_selects_no_node(value: str, written: str) -> None:
    (job,) = read_jobs_text(_pod(f"  nodeSelector: {{nvidia.com/gpu.product: {value}}}\n"), "t.yaml", RULES)
    assert job.accepts == (value,)  # no model is named so: it fits nowhere
    assert any(f"is written {written} by GPU Feature Discovery" in n.message for n in job.notes)


def test_a_product_in_another_case_is_placed_nowhere(tmp_path: Path) -> None:
    # Before: placed on h100-n0 and h100-n1 (the value compared case-blind).
    code, nodes, _err = _nodes(tmp_path, _pod("  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-hbm3}\n"))
    assert (code, nodes) == (1, [])


@pytest.mark.parametrize(
    ("value", "model"),
    [
        ("NVIDIA-H100-80GB-HBM3", "H100-SXM5-80GB"),
        ("NVIDIA-H100-PCIe", "H100-PCIE-80GB"),
        ("A100-SXM4-80GB", "A100-SXM4-80GB"),  # drivers before R470: no NVIDIA prefix
        ("Tesla-V100-SXM3-32GB", "V100-SXM3-32GB"),
        ("NVIDIA-GeForce-RTX-4090", "RTX-4090"),
    ],
)
def test_products_as_gfd_writes_them_are_read(value: str, model: str) -> None:
    # Controls: each is the catalogue's NVML name (device_ids.yaml) with spaces made '-'.
    (job,) = read_jobs_text(_pod(f"  nodeSelector: {{nvidia.com/gpu.product: {value}}}\n"), "t.yaml", RULES)
    assert job.accepts == (model,)


@pytest.mark.parametrize(
    "selection",
    [
        # The legacy key counts the node's GPUs of device 74a1 (MI300X): nodes holding them.
        "  nodeSelector: {beta.amd.com/gpu.device-id.74a1: '8'}\n",
        _terms(("{key: beta.amd.com/gpu.device-id.74a1, operator: Exists}",)),
        # "AMD Instinct MI300X" with its spaces made '_'.
        "  nodeSelector: {amd.com/gpu.product-name: AMD_Instinct_MI300X}\n",
    ],
)
def test_amd_labeller_labels_select_the_model(tmp_path: Path, selection: str) -> None:
    (job,) = read_jobs_text(_pod(selection, "amd.com/gpu: 4"), "t.yaml", RULES)
    assert job.accepts == ("MI300X",)
    # Before: not judged, placed on the MI300X nodes as any AMD GPU; the same nodes, now for the model.
    code, nodes, err = _nodes(tmp_path, _pod(selection, "amd.com/gpu: 4"))
    assert (code, nodes) == (0, ["mi300x-n0", "mi300x-n1"]), err


def test_an_amd_product_name_of_another_vendors_pod_is_refused() -> None:
    text = _pod("  nodeSelector: {amd.com/gpu.product-name: AMD_Instinct_MI300X}\n")
    with pytest.raises(TopologError, match="selects amd GPU nodes, but the pod asks for nvidia devices"):
        read_jobs_text(text, "t.yaml", RULES)


@pytest.mark.parametrize(
    ("selection", "label"),
    [
        ("  nodeSelector: {amd.com/gpu.product-name: AMD_Instinct_MI300X_VF}\n", "amd.com/gpu.product-name"),
        ("  nodeSelector: {amd.com/gpu.family: AI}\n", "amd.com/gpu.family"),
    ],
)
def test_amd_labels_that_map_to_no_one_model_are_noted(selection: str, label: str) -> None:
    # No catalogue name is written AMD_Instinct_MI300X_VF (a virtual function's name is not guessed; an
    # _OAM suffix is the MI300X's own, test_amd_labels_review63), and family AI spans many parts: any AMD GPU.
    (job,) = read_jobs_text(_pod(selection, "amd.com/gpu: 4"), "t.yaml", RULES)
    assert job.accepts == ("amd",)
    assert any(n.message.startswith(f"node selection {label}") and "not judged:" in n.message for n in job.notes)


@pytest.mark.parametrize("label", ["nvidia.com/gpu.memory", "nvidia.com/gpu.count"])
def test_gpu_memory_and_count_are_noted_with_the_reason(label: str) -> None:
    (job,) = read_jobs_text(_pod(f"  nodeSelector: {{{label}: '8'}}\n"), "t.yaml", RULES)
    assert job.accepts == ("nvidia",)
    assert any(n.message.startswith(f"node selection {label}") and "not judged:" in n.message for n in job.notes)


def _script(*lines: str) -> str:
    return "#!/bin/bash\n#SBATCH --account=research\n" + "".join(f"#SBATCH {line}\n" for line in lines) + "srun x\n"


def test_a_node_range_with_tasks_per_node_counts_no_tasks() -> None:
    # -N 2-4 --ntasks-per-node=4: sbatch sets no task count (2 to 4 nodes: 8 to 16 tasks), so
    # --gpus-per-task=1 has none. Before: read as 2 x 4 x 1 = 8 GPUs on exactly 2 nodes.
    text = _script("-N 2-4", "--ntasks-per-node=4", "--gpus-per-task=1")
    with pytest.raises(TopologError, match=r"--nodes=2-4 with --ntasks-per-node counts no tasks"):
        read_jobs_text(text, "t.sh", SLURM)


@pytest.mark.parametrize(
    ("lines", "gpus"),
    [
        (("-N 2", "--ntasks-per-node=4", "--gpus-per-task=1"), 8),  # one node count: 2 x 4 tasks
        (("-N 2-4", "--ntasks-per-node=4", "--gpus-per-task=1", "-n 8"), 8),  # -n counts them
        (("-N 2-4", "--ntasks-per-node=4", "--gpus-per-task=1", "--gpus=8"), 8),  # --gpus over 1 each
        (("-N 2-4", "--ntasks-per-node=4", "--gpus-per-node=4"), 8),  # per node: 2 nodes x 4
    ],
)
def test_task_counts_sbatch_does_set_are_read(lines: tuple[str, ...], gpus: int) -> None:
    (job,) = read_jobs_text(_script(*lines), "t.sh", SLURM)
    assert job.gpus == gpus
