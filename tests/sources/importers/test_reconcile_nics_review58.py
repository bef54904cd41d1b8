"""Review 58 of R-FP: nvidia-smi without NIC columns leaves TOPO001 quiet, and reconcile still compares NICs.

R-FP's import labels a node whose `nvidia-smi topo -m` has no NIC column nics_described "false" (the
matrix lists RDMA devices only, so no column does not prove no NIC), and reconcile skipped NICs for
any side so labelled, as it does for rocm-smi and amd-smi, which never list NICs. But nvidia-smi
does list RDMA devices: a later capture of the same DGX A100 with all ten mlx5 devices gone (the
RDMA driver not loaded, or the adapters lost) is a host on which NCCL has no RDMA NIC. reconcile
must name each NIC missing on that side, as it did before the label.

By hand, from dgx-a100-topo-tabs.txt: the header has NIC0..NIC9 (legend mlx5_0..mlx5_9) after the 8
GPU columns; dropping their 10 columns, 10 rows and 10 legend lines leaves the 8 GPU rows with the
same cells. The GPUs pair and agree; the 10 NICs are present in A and missing in B, each once.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers.reconcile import load_side, reconcile


def _without_nics(text: str) -> str:
    lines = text.splitlines(keepends=True)
    header = lines[0].rstrip("\n").split("\t")
    nic_cols = [k for k, cell in enumerate(header) if cell.startswith("NIC")]
    assert len(nic_cols) == 10
    kept = []
    for k, ln in enumerate(lines):
        if ln.startswith("NIC") or ln.strip().startswith("NIC") or ln.strip() == "NIC Legend:":
            continue
        if k <= 18:  # the header and the 18 matrix rows (8 GPUs, 10 NICs)
            cells = ln.rstrip("\n").split("\t")
            ln = "\t".join(c for i, c in enumerate(cells) if i not in nic_cols) + "\n"
        kept.append(ln)
    return "".join(kept)


def test_nvidia_smi_without_nic_columns_misses_the_nics_the_other_capture_lists(fx: Path, tmp_path: Path) -> None:
    later = tmp_path / "dgx-a100-topo-tabs.txt"
    later.write_text(_without_nics((fx / "dgx-a100-topo-tabs.txt").read_text()))
    side_b = load_side(later, None)
    n = "dgx-a100-topo-tabs"
    assert side_b.inventory.objects[n].labels.get("nics_described") == "false"
    got = [(d.subject, d.what, d.a, d.b) for d in reconcile(load_side(fx / "dgx-a100-topo-tabs.txt", None), side_b)]
    assert got == [(f"{n}/nic{k}", "nic present on one side only", "present", "missing") for k in range(10)]
