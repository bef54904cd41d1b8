"""Node lists as the schedulers see them (`kubectl get nodes -o json`, `scontrol show nodes`, slurm.conf
NodeName lines), matched to the inventory by name and cross-checked: SCHED004 (GPU model), SCHED005
(GPUs offered), SCHED006 (which nodes exist). Expected findings are derived by hand in each test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli import main as cli
from verifier.core.errors import TopologError
from verifier.session.verify_run import VerifyRun, verify
from verifier.sources.importers import import_files
from verifier.sources.importers.slurm_nodes import GresError, gpu_gres

SLURM = ["scontrol-rtx3090-drained.txt", "scontrol-slinky-h100-no-gres.txt", "slurm-gres-handwritten.conf"]


def _sched(files: list[Path], kind: str) -> list[str]:
    report = verify(files, VerifyRun(from_kind=kind, authorize=False))
    return sorted(f"{f.rule} {f.message}" for f in report.findings if f.rule.startswith(("SCHED", "SLURM")))


def test_scontrol_records_read_as_printed(fx: Path) -> None:
    # scontrol-rtx3090-drained.txt (awslabs/awsome-distributed-ai#195): one record, Gres=gpu:nvidia-rtx-3090:1,
    # State=IDLE+DRAIN, its Reason after a whitespace-only line; the OS value holds spaces and a '#'.
    # scontrol-slinky-h100-no-gres.txt (SlinkyProject/slurm-operator#101): Gres=(null), i.e. no GPU at all.
    inv = import_files("slurm", [fx / SLURM[0], fx / SLURM[1]]).inventory
    drained, slinky = inv.objects["yigou-dev-102-68"], inv.objects["slinky-0"]
    assert drained.labels["slurm_gres"] == "gpu:nvidia-rtx-3090:1" and drained.quantities["slurm_gres_gpus"] == 1
    assert drained.labels["slurm_state"] == "IDLE+DRAIN" and drained.labels["slurm_partitions"] == "compute100"
    assert drained.labels["slurm_reason"].startswith("gres/gpu count reported lower than configured (0 < 1)")
    assert slinky.labels["slurm_gres"] == "(null)" and slinky.quantities["slurm_gres_gpus"] == 0
    assert slinky.loc.line == 1


def test_slurm_node_lists_against_the_inventory(fx: Path) -> None:
    # By hand, slurm-nodes-inventory.yaml against the two scontrol records and slurm-gres-handwritten.conf:
    # - slinky-0: slurm.conf gives it the DEFAULT Gres (8 x nvidia_h100_80gb_hbm3), but scontrol, the view
    #   Slurm schedules with, says Gres=(null): 0 GPUs offered, 8 H100 described -> SCHED005. Its model claim
    #   comes from scontrol's Gres (none), so no SCHED004.
    # - h100-a: only in slurm.conf, DEFAULT Gres gpu:nvidia_h100_80gb_hbm3:8 -> NVML "NVIDIA H100 80GB HBM3" ->
    #   H100-SXM5-80GB; the inventory holds 8 A100-SXM4-80GB -> SCHED004. 8 = 8 GPUs: no SCHED005.
    # - yigou-dev-102-68: Gres 1, 1 GPU described: agrees; type nvidia-rtx-3090 is no NVML name: a note.
    # - ghost: in slurm.conf, not in the inventory -> SCHED006; gpu-spare: a host of the inventory that no list
    #   names -> SCHED006. No topology.conf: no SLURM00x check applies.
    files = [*(fx / f for f in SLURM), fx / "slurm-nodes-inventory.yaml"]
    listing = ", ".join(str(fx / f) for f in sorted(SLURM))
    assert _sched(files, "slurm") == [
        "SCHED004 Node h100-a: Gres=gpu:nvidia_h100_80gb_hbm3:8 names H100-SXM5-80GB GPUs, but the inventory "
        "describes A100-SXM4-80GB in it.",
        "SCHED005 Node slinky-0 offers 0 GPUs as Slurm Gres, but the inventory describes 8 in it.",
        f"SCHED006 Node ghost is in the node list but not in the inventory ({fx / SLURM[2]}:9).",  # its NodeName line
        f"SCHED006 Node gpu-spare is in the inventory but missing from the node list ({listing}).",
    ]
    notes = [n.message for n in import_files("slurm", files).notes]
    assert (
        "yigou-dev-102-68: Gres type 'nvidia-rtx-3090' is a site's name, not a product name: the model is not compared"
        in notes
    )


def test_kubernetes_node_list_against_the_inventory(fx: Path) -> None:
    # By hand, k8s-nodes-inventory.yaml against k8s-nodes-status-handwritten.json:
    # - h100-0: product NVIDIA-H100-80GB-HBM3 = H100-SXM5-80GB (agrees); capacity 8, allocatable 7 (one GPU the
    #   device plugin holds back) against 8 described -> SCHED005 for allocatable only.
    # - h100-1: product NVIDIA-A100-SXM4-80GB on 8 H100 -> SCHED004; its counts agree.
    # - ts-0: time-sliced, product ...-SHARED (still the H100), replicas 4, capacity 32 -> 8 GPUs: agrees.
    # - mi300x-0: amd.com/gpu.device-id 74a1 -> MI300X, amd.com/gpu capacity 8: agrees.
    # - gb-x: product NVIDIA-GB200 names no catalogue model (a note, not compared); 4 = 4 GPUs.
    # - cpu-9 listed only, h100-9 described only -> SCHED006 each. gpu.count labels all agree: no SCHED003.
    nodes = fx / "k8s-nodes-status-handwritten.json"
    assert _sched([nodes, fx / "k8s-nodes-inventory.yaml"], "k8s-labels") == [
        "SCHED004 Node h100-1: nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB names A100-SXM4-80GB GPUs, but the "
        "inventory describes H100-SXM5-80GB in it.",
        "SCHED005 Node h100-0 offers 7 GPUs as Kubernetes status.allocatable, but the inventory describes 8 in it.",
        f"SCHED006 Node cpu-9 is in the node list but not in the inventory ({nodes}:14).",
        f"SCHED006 Node h100-9 is in the inventory but missing from the node list ({nodes}).",
    ]
    inv = import_files("k8s-labels", [nodes]).inventory
    assert inv.objects["h100-0"].labels["k8s_taints"] == "nvidia.com/gpu=present:NoSchedule"
    assert inv.objects["ts-0"].quantities["k8s_gpu_capacity"] == 8


def test_mig_slices_are_not_counted_as_gpus(fx: Path) -> None:
    # Real GFD labels (NVIDIA's MIG example): one A100 PCIe 40GB in 1g.5gb slices labels gpu.count 7 and
    # mig.strategy single. By hand: the inventory holds 1 GPU; 7 counts MIG devices, so nothing is compared
    # (no SCHED003 "7 but 1"), and A100-PCIE-40GB is no catalogue model: no SCHED004 either. Both are notes.
    files = [fx / "k8s-gfd-mig-single-labels.json", fx / "k8s-gfd-mig-inventory.yaml"]
    assert _sched(files, "k8s-labels") == []
    notes = sorted(n.message for n in import_files("k8s-labels", files).notes)
    assert "ipp1-0552 uses MIG: its nvidia.com/gpu.count counts MIG devices and is not compared" in notes
    assert any("A100-PCIE-40GB-MIG-1g.5gb names no GPU model" in n for n in notes)


def test_mig_strategy_label_alone_is_not_mig(tmp_path: Path) -> None:
    # GPU Operator labels mig.strategy=single on nodes whose GPUs have MIG off (mig.capable false, product
    # without -MIG-): their capacity still counts GPUs and is compared. By hand: capacity 2, 1 GPU -> SCHED005.
    nodes = tmp_path / "nodes.json"
    nodes.write_text(
        '{"kind": "List", "items": [{"kind": "Node", "metadata": {"labels": {"nvidia.com/mig.capable": "false",'
        ' "nvidia.com/mig.strategy": "single", "nvidia.com/gpu.product": "Tesla-T4"}, "name": "t4"},'
        ' "status": {"capacity": {"nvidia.com/gpu": "2"}}}]}'
    )
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        "apiVersion: topolog.dev/v1\nkind: Inventory\nobjects:\n"
        "  - {name: t4, kind: node, children: [{name: g0, kind: gpu}]}\n"
    )
    assert _sched([nodes, inv], "k8s-labels") == [
        "SCHED005 Node t4 offers 2 GPUs as Kubernetes status.capacity, but the inventory describes 1 in it."
    ]


def test_cli_verify_from_slurm_node_lists(fx: Path) -> None:
    args = ["verify", "--from", "slurm", *(str(fx / f) for f in SLURM), str(fx / "slurm-nodes-inventory.yaml")]
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == 1  # SCHED004 is an error
    assert "SCHED004" in result.stdout and "SCHED006" in result.stdout


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("(null)", []),
        ("gpu:a100:8(S:0-1)", [("a100", 8)]),
        ("gpu:h100:4(S:0-3),gpu:a100:4(S:0-3)", [("h100", 4), ("a100", 4)]),
        ("gpu:a100:8(S:1,3,5,7)", [("a100", 8)]),
        ("gpu:2,shard:8", [(None, 2)]),
        ("gpu:tesla", [("tesla", 1)]),
    ],
)
def test_gres(spec: str, expected: list[tuple[str | None, int]]) -> None:
    assert gpu_gres(spec) == expected


def test_bad_gres_is_an_error_with_its_line(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("ClusterName=c\nNodeName=n1 CPUs=8 Gres=gpu:a100:eight:x\n")
    inv = tmp_path / "inv.yaml"
    inv.write_text("apiVersion: topolog.dev/v1\nkind: Inventory\nobjects:\n  - {name: n1, kind: node}\n")
    with pytest.raises(TopologError) as err:
        import_files("slurm", [conf, inv])
    [diag] = err.value.diagnostics
    assert diag.location.line == 2 and "expected gpu[:type][:count]" in diag.message


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("NodeName=a CPUTot=8\n   Gres=gpu:2\nNodeName=a CPUTot=8\n", 3, "listed twice"),
        ("NodeName=a CPUTot=8\nState=IDLE\n", 2, "outside a node record"),
        ("NodeName=a/b CPUTot=8\n", 1, "separates the levels of an id"),
        ("NodeName= CPUTot=8\n", 1, "is not one node name"),
        ("NodeName=a CPUTot=8 Gres=gpu:99999999999999999999999999999999999999999\n", 1, "with a whole count"),
        ("NodeName=a CPUTot=8 Gres=gpu:9999999999999999999999999\n", 1, "does not fit in 64 bits"),
    ],
)
def test_scontrol_errors(tmp_path: Path, text: str, line: int, needle: str) -> None:
    p = tmp_path / "nodes.txt"
    p.write_text(text)
    with pytest.raises(TopologError) as err:
        import_files("slurm", [p])
    assert any(d.location.line == line and needle in d.message for d in err.value.diagnostics), err.value


def test_bad_capacity_is_an_error(tmp_path: Path) -> None:
    p = tmp_path / "nodes.json"
    p.write_text('{"kind": "Node", "metadata": {"name": "n1"},\n "status": {"capacity": {"nvidia.com/gpu": "8x"}}}')
    with pytest.raises(TopologError) as err:
        import_files("k8s-labels", [p])
    assert "expected a whole number of GPUs" in str(err.value)


def test_gres_fails_closed() -> None:
    with pytest.raises(GresError):
        gpu_gres("gpu:a:b:c")
