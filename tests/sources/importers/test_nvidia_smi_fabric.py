"""`nvidia-smi topo -m` NV# cells: NVSwitch fabric or mesh; CPU domains from CPU Affinity without a NUMA column.

Real outputs (fixtures/README.md) and variants derived from them by hand in each test. Every
expected value is read off the matrix: NV<n> cells, their pattern, and the catalogue's GPUs
with n NVLinks (H100/H200 SXM, B200 and GB200 have 18 and ship on NVSwitch boards only; the
most NVLinks any catalogue GPU has is 18).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.facts.graph import graph_facts
from verifier.sources.importers import import_files
from verifier.sources.importers.yaml_out import to_yaml
from verifier.sources.inventory.model import Inventory

# file -> per-link MB/s: H100 rows state no GPU NUMA ID, so the 18-link candidates are H100/H200 SXM
# (25,000 MB/s per link) and B200/GB200 (50,000): they disagree, the default 25,000 is assumed. The
# GB200 rows state GPU NUMA IDs 2/10/18/26 (GPU memory as a NUMA node: NVLink-C2C), which of the
# candidates only GB200 has: 50,000 per link, 900,000 MB/s per GPU.
HGX = {
    "h100-8gpu-thunderkittens-issue167.txt": 25000,
    "h100-8gpu-no-nic.txt": 25000,
    "gb200-4gpu-numa-lists.txt": 50000,
}


def _links(inv: Inventory, kind: str) -> list[tuple[str, str, int, int]]:
    return sorted((lk.a, lk.b, lk.attrs["count"], lk.mbps) for lk in inv.links.values() if lk.kind == kind)


def _h100(fx: Path) -> list[list[str]]:
    """h100-8gpu-no-nic.txt's rows as cells: label, 8 device cells (X, NV18), CPU Affinity, NUMA Affinity."""
    return [ln.split() for ln in (fx / "h100-8gpu-no-nic.txt").read_text().splitlines()[1:] if ln.strip()]


def _write(path: Path, rows: list[list[str]], trailing: tuple[str, ...] = ("CPU Affinity", "NUMA Affinity")) -> Path:
    """A tab-separated matrix (as nvidia-smi prints it) whose device columns are the rows' labels."""
    header = "\t" + "\t".join([r[0] for r in rows] + list(trailing))
    path.write_text(header + "\n" + "\n".join("\t".join(r) for r in rows) + "\n")
    return path


@pytest.mark.parametrize(("name", "per_link"), HGX.items())
def test_nv_cells_of_every_pair_are_one_switch_fabric(fx: Path, name: str, per_link: int) -> None:
    # H100 (both files): 8 GPUs, every pair NV18. As a mesh each GPU would have 7 * 18 = 126 NVLinks
    # (3,150,000 MB/s); no GPU has more than 18. So 18 links from each GPU into one fabric.
    # GB200: 4 GPUs, every pair NV18: 3 * 18 = 54 as a mesh; the same reading, 4 GPUs.
    result = import_files("nvidia-smi", [fx / name], node="n")
    inv = result.inventory
    gpus = sorted(o.id for o in inv.of_kind("gpu"))
    assert _links(inv, "nvlink") == []
    assert _links(inv, "nvswitch") == [(g, "n/nvsw0", 18, 18 * per_link) for g in gpus]
    sw = inv.objects["n/nvsw0"]
    assert (sw.kind, sw.parent, sw.labels["inferred"]) == ("nvswitch", "n", "true")
    assert all(lk.labels.get("assumed") == "bandwidth" for lk in inv.links.values() if lk.kind == "nvswitch")
    note = next(n.message for n in result.notes if "NVSwitch fabric" in n.message)
    assert f"would have {(len(gpus) - 1) * 18} NVLinks" in note and "B200-GB200-186GB" in note
    # The path between any two GPUs still reads NV (as printed), its bottleneck one GPU's 18 links.
    rows = graph_facts(inv, {"gpu_pair_bottleneck"})["gpu_pair_bottleneck"]
    assert {(str(c), int(m)) for _a, _b, c, m in rows} == {("NV", 18 * per_link)}


@pytest.mark.parametrize(
    ("name", "model"),
    [("h100-8gpu-thunderkittens-issue167.txt", "H100-SXM5-80GB"), ("gb200-4gpu-numa-lists.txt", "B200-GB200-186GB")],
)
def test_findings_do_not_count_126_links(fx: Path, tmp_path: Path, name: str, model: str) -> None:
    # The real matrices with every GPU given its model: H100-SXM5-80GB has 18 NVLinks, 450,000 MB/s per
    # direction; B200-GB200-186GB 18 NVLinks, 900,000 MB/s. Read as a mesh, SCALE003 said "126 links and
    # 3,150,000 MB/s" (H100); read as a fabric each GPU has exactly its 18 links at its model's
    # figure (18 * 25,000 and 18 * 50,000 MB/s): no scale-up finding at all.
    from verifier.session.verify_run import verify

    inv = import_files("nvidia-smi", [fx / name], node="n").inventory
    for gpu in inv.of_kind("gpu"):
        gpu.model = model
    path = tmp_path / "n.yaml"
    path.write_text(to_yaml(inv, "n", "test"))
    findings = verify([path]).findings
    assert not [f for f in findings if f.rule.startswith("SCALE")]
    assert not any("126" in f.message for f in findings)


def test_two_gpus_of_an_nvswitch_board(fx: Path, tmp_path: Path) -> None:
    # Variant: GPU0 and GPU1 of the H100 matrix only (a VM given two GPUs). One NV18 pair: 18 links as a
    # direct bond would fit an 18-link GPU, but every catalogue GPU with 18 NVLinks ships on NVSwitch
    # boards only, so it is still 18 links from each GPU into a fabric.
    path = _write(tmp_path / "vm.txt", [r[:3] + r[9:] for r in _h100(fx)[:2]])
    result = import_files("nvidia-smi", [path], node="n")
    assert _links(result.inventory, "nvswitch") == [
        ("n/gpu0", "n/nvsw0", 18, 450000),
        ("n/gpu1", "n/nvsw0", 18, 450000),
    ]
    assert any("NVSwitch boards" in n.message for n in result.notes)


def test_bridged_pair_stays_a_direct_link(fx: Path, tmp_path: Path) -> None:
    # Variant: GPU0 and GPU1 of the DGX A100 matrix only: one NV12 pair. GPUs with 12 NVLinks are
    # A100 SXM4 (HGX boards, but the 4-GPU HGX A100 is a direct mesh) and A100/H100 PCIe (bridged
    # pairs): not all NVSwitch parts, and 12 links fit. A direct bond of 12 links, 12 * 25,000 MB/s.
    # Rows and columns GPU0, GPU1, NIC0, NIC1 of dgx-a100-topo-tabs.txt, copied by hand:
    rows = [
        ["GPU0", "X", "NV12", "PXB", "PXB", "48-63,176-191", "3"],
        ["GPU1", "NV12", "X", "PXB", "PXB", "48-63,176-191", "3"],
        ["NIC0", "PXB", "PXB", "X", "PIX"],
        ["NIC1", "PXB", "PXB", "PIX", "X"],
    ]
    path = _write(tmp_path / "pair.txt", rows)
    result = import_files("nvidia-smi", [path], node="n")
    inv = result.inventory
    assert _links(inv, "nvswitch") == [] and not list(inv.of_kind("nvswitch"))
    assert _links(inv, "nvlink") == [("n/gpu0", "n/gpu1", 12, 300000)]
    assert any("direct NVLinks between GPUs (a mesh)" in n.message for n in result.notes)


DGX1 = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tCPU Affinity\tNUMA Affinity
GPU0\t X \tNV1\tNV1\tNV2\tNV2\tSYS\tSYS\tSYS\t0-19,40-59\t0
GPU1\tNV1\t X \tNV2\tNV1\tSYS\tNV2\tSYS\tSYS\t0-19,40-59\t0
GPU2\tNV1\tNV2\t X \tNV2\tSYS\tSYS\tNV1\tSYS\t0-19,40-59\t0
GPU3\tNV2\tNV1\tNV2\t X \tSYS\tSYS\tSYS\tNV1\t0-19,40-59\t0
GPU4\tNV2\tSYS\tSYS\tSYS\t X \tNV1\tNV1\tNV2\t20-39,60-79\t1
GPU5\tSYS\tNV2\tSYS\tSYS\tNV1\t X \tNV2\tNV1\t20-39,60-79\t1
GPU6\tSYS\tSYS\tNV1\tSYS\tNV1\tNV2\t X \tNV2\t20-39,60-79\t1
GPU7\tSYS\tSYS\tSYS\tNV1\tNV2\tNV1\tNV2\t X \t20-39,60-79\t1
"""


def test_dgx1_hybrid_cube_mesh_stays_a_mesh(tmp_path: Path) -> None:
    # Hand-written DGX-1 (V100) matrix: the hybrid cube-mesh of the DGX-1 whitepaper, GPU0's links as
    # NCCL lists them in NVIDIA/nccl issue 671 (GPU1 x1, GPU2 x1, GPU3 x2, GPU4 x2). Not every pair is NV#
    # (GPU0-GPU5 is SYS) and each GPU's cells add up to 6, the V100's NVLink count: a mesh of 16 pairs.
    path = tmp_path / "dgx1.txt"
    path.write_text(DGX1)
    result = import_files("nvidia-smi", [path], node="d")
    inv = result.inventory
    assert not list(inv.of_kind("nvswitch"))
    nv = _links(inv, "nvlink")
    assert len(nv) == 16
    for g in range(8):
        assert sum(n for a, b, n, _m in nv if f"d/gpu{g}" in (a, b)) == 6
    assert ("d/gpu0", "d/gpu4", 2, 50000) in nv and ("d/gpu0", "d/gpu1", 1, 25000) in nv


def test_one_gpu_short_of_a_link_is_still_the_fabric(fx: Path, tmp_path: Path) -> None:
    # Variant: the H100 matrix with GPU3's row and column at NV17 (one of its links down). Every pair
    # is still NV#, and each pair's count is the smaller of its GPUs' (18 with 18, 17 with GPU3):
    # 18 links per GPU into the fabric, 17 for GPU3.
    rows = _h100(fx)
    for r in rows:
        for k in range(1, 9):
            if r[k] == "NV18" and (r[0] == "GPU3" or k == 4):  # column k is GPU(k-1)
                r[k] = "NV17"
    path = _write(tmp_path / "short.txt", rows)
    inv = import_files("nvidia-smi", [path], node="n").inventory
    got = {a: n for a, _b, n, _m in _links(inv, "nvswitch")}
    assert got == {f"n/gpu{g}": (17 if g == 3 else 18) for g in range(8)}


def test_impossible_mesh_that_is_no_fabric_is_said(fx: Path, tmp_path: Path) -> None:
    # Variant: the H100 matrix with the GPU0-GPU1 pair written SYS. Not every pair is NV#, so not a
    # switch's pattern; yet GPU2 would need 7 * 18 = 126 links as a mesh. Kept as printed, with a note.
    rows = _h100(fx)
    rows[0][2] = rows[1][1] = "SYS"
    path = _write(tmp_path / "odd.txt", rows)
    result = import_files("nvidia-smi", [path], node="n")
    assert not list(result.inventory.of_kind("nvswitch"))
    assert len(_links(result.inventory, "nvlink")) == 27  # 8 x 7 / 2 = 28 GPU pairs, less GPU0-GPU1
    assert any("not an NVSwitch fabric's pattern" in n.message for n in result.notes)


def test_sockets_from_cpu_affinity_without_a_numa_column(fx: Path, tmp_path: Path) -> None:
    # Variant: the H100 matrix with its NUMA Affinity column removed (older drivers print none).
    # No cell relates any two GPUs' PCIe (all NV18); CPU Affinity 0-51,104-155 for GPU0-3 and
    # 52-103,156-207 for GPU4-7: two CPU domains (not eight), one assumed interconnect link (not 28).
    path = _write(tmp_path / "no-numa.txt", [r[:-1] for r in _h100(fx)], ("CPU Affinity",))
    result = import_files("nvidia-smi", [path], node="h")
    inv = result.inventory
    sockets = {o.id: o.labels.get("cpu_affinity") for o in inv.of_kind("socket")}
    assert sockets == {"h/cpu-unknown0": "0-51,104-155", "h/cpu-unknown1": "52-103,156-207"}
    assert [lk.id for lk in inv.links.values() if lk.kind == "upi"] == ["h/cpu-unknown0<->h/cpu-unknown1"]
    for g in range(8):
        hb = inv.objects[inv.objects[f"h/gpu{g}"].parent or ""]
        assert hb.parent == ("h/cpu-unknown0" if g < 4 else "h/cpu-unknown1")
    assert sum("share CPU Affinity" in n.message for n in result.notes) == 2


def test_cpu_affinity_never_joins_what_the_matrix_separates(fx: Path) -> None:
    # gb200-4gpu-numa-lists.txt has NUMA values: they decide (cpu0 for GPU0/1, cpu1 for GPU2/3), and
    # its NICs, SYS to everything, keep their own domains: CPU Affinity changes nothing here.
    inv = import_files("nvidia-smi", [fx / "gb200-4gpu-numa-lists.txt"], node="g").inventory
    assert len(list(inv.of_kind("socket"))) == 8


def test_four_way_bridge_at_nv6_stays_a_mesh(tmp_path: Path) -> None:
    # Hand-written: 4 PCIe cards on a 4-way NVLink bridge print NV6 for every pair. Every pair NV#, but
    # 3 * 6 = 18 links per GPU fit an 18-link GPU, and the one catalogue GPU with 6 NVLinks (V100 SXM3)
    # is not marked as an NVSwitch-only part: 6 direct links of 6 NVLinks each, 6 * 25,000 MB/s.
    rows = [[f"GPU{g}"] + ["X" if h == g else "NV6" for h in range(4)] + ["0-31", "0"] for g in range(4)]
    result = import_files("nvidia-smi", [_write(tmp_path / "bridge.txt", rows)], node="b")
    assert not list(result.inventory.of_kind("nvswitch"))
    assert {(n, m) for _a, _b, n, m in _links(result.inventory, "nvlink")} == {(6, 150000)}
    assert len(_links(result.inventory, "nvlink")) == 6


def test_same_cpu_affinity_across_sys_keeps_the_matrix(fx: Path, tmp_path: Path) -> None:
    # Variant of old-mlx5-topo.txt (no NUMA column) with every GPU's CPU Affinity written 0-27: the
    # matrix still puts GPU0/GPU1 (+ mlx5_0) and GPU2/GPU3 (+ mlx5_1) across the interconnect (SOC):
    # two CPU domains as before, and a note that their affinity says otherwise.
    text = (fx / "old-mlx5-topo.txt").read_text()
    path = tmp_path / "same-affinity.txt"
    path.write_text(text.replace("14-27", " 0-27").replace("0-13", "0-27"))
    result = import_files("nvidia-smi", [path], node="o")
    members = sorted(o.labels["members"] for o in result.inventory.of_kind("socket"))
    assert members == ["GPU0,GPU1,mlx5_0", "GPU2,GPU3,mlx5_1"]
    assert any("have the CPU Affinity of GPU0, GPU1" in n.message for n in result.notes)
