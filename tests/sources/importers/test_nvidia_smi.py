"""`nvidia-smi topo -m`: hand-written DGX A100 matrices (tabs and spaces) and the older mlx5_N form."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files
from verifier.sources.inventory.model import Inventory


def _shape(inv: Inventory) -> tuple[object, ...]:
    objs = sorted((o.id, o.kind, o.parent, o.labels.get("name")) for o in inv.objects.values())
    links = sorted((lk.id, lk.kind, lk.mbps, dict(lk.attrs)) for lk in inv.links.values())
    return objs, links


def test_dgx_a100_matrix(fx: Path) -> None:
    inv = import_files("nvidia-smi", [fx / "dgx-a100-topo-tabs.txt"], node="dgx").inventory
    kinds = sorted(o.kind for o in inv.objects.values())
    assert kinds.count("gpu") == 8 and kinds.count("nic") == 10
    # NUMA Affinity column: GPUs 0-1 on 3, 2-3 on 1, 4-5 on 7, 6-7 on 5 -> four CPU domains.
    assert sorted(o.id for o in inv.of_kind("cpu")) == ["dgx/cpu1", "dgx/cpu3", "dgx/cpu5", "dgx/cpu7"]
    # PXB groups {GPU2k, GPU2k+1, NIC2k, NIC2k+1} and {NIC8, NIC9}; PIX pairs NIC2k/NIC2k+1 inside
    # the first four (NIC8/NIC9's PIX pair is its whole PXB group: one switch): 5 + 4 switches.
    assert kinds.count("pcie_switch") == 9
    nv = [lk for lk in inv.links.values() if lk.kind == "nvlink"]
    assert len(nv) == 28 and {(lk.attrs["count"], lk.mbps) for lk in nv} == {(12, 300000)}
    assert all(lk.labels.get("assumed") == "bandwidth" for lk in inv.links.values())
    nic8 = inv.objects["dgx/nic8"]
    assert nic8.labels["name"] == "mlx5_8"
    assert inv.objects[nic8.parent or ""].parent == "dgx/cpu7"  # NODE to GPU4/5, which are on NUMA 7
    gpu0 = inv.objects["dgx/gpu0"]
    assert gpu0.labels["cpu_affinity"] == "48-63,176-191" and gpu0.loc.line == 2
    pix = inv.objects[inv.objects["dgx/nic0"].parent or ""]
    assert pix.labels["class"] == "PIX" and inv.objects[pix.parent or ""].labels["members"] == "GPU0,GPU1,NIC0,NIC1"


def test_space_aligned_copy_reads_the_same(fx: Path) -> None:
    tabs = import_files("nvidia-smi", [fx / "dgx-a100-topo-tabs.txt"], node="dgx").inventory
    spaces = import_files("nvidia-smi", [fx / "dgx-a100-topo-spaces.txt"], node="dgx").inventory
    assert _shape(tabs) == _shape(spaces)


def test_older_form_with_mlx5_columns(fx: Path) -> None:
    inv = import_files("nvidia-smi", [fx / "old-mlx5-topo.txt"], node="old").inventory
    assert [(o.id, o.labels["name"]) for o in inv.of_kind("nic")] == [("old/nic0", "mlx5_0"), ("old/nic1", "mlx5_1")]
    # SOC is the old name of SYS: GPU0/1 + mlx5_0 (PIX) and GPU2/3 + mlx5_1 (PHB) are two domains.
    cpus = sorted(o.id for o in inv.of_kind("cpu"))
    assert cpus == ["old/cpu-unknown0", "old/cpu-unknown1"]
    assert inv.objects["old/gpu2"].parent == inv.objects["old/nic1"].parent == "old/cpu-unknown1"
    assert inv.objects["old/gpu0"].parent == inv.objects["old/nic0"].parent  # one PIX switch
    assert [lk.attrs["count"] for lk in inv.links.values() if lk.kind == "nvlink"] == [2, 2]


@pytest.mark.parametrize(
    ("edit", "line", "needle"),
    [
        (("GPU1\tNV12\t X \tNV12", "GPU1\tNV12\t X \tNVX"), 3, "'NVX'"),
        (("GPU1\tNV12\t X \tNV12", "GPU1\tNV12\t X \tPIX"), 3, "symmetric"),
        (("GPU0\t X \tNV12", "GPU0\t Y \tNV12"), 2, "expected X"),
    ],
)
def test_bad_cells_have_file_line(fx: Path, tmp_path: Path, edit: tuple[str, str], line: int, needle: str) -> None:
    text = (fx / "dgx-a100-topo-tabs.txt").read_text()
    assert edit[0] in text
    p = tmp_path / "topo.txt"
    p.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [p])
    assert any(d.location.line == line and needle in d.message for d in err.value.diagnostics), err.value


def test_not_a_matrix(tmp_path: Path) -> None:
    p = tmp_path / "x.txt"
    p.write_text("hello\n")
    with pytest.raises(TopologError, match="no `nvidia-smi topo -m` header"):
        import_files("nvidia-smi", [p])
