"""reconcile pairs devices by identity and compares what each tool said: each real difference once."""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files
from verifier.sources.importers.reconcile import Disagreement, load_side, pair_devices, reconcile


def _rows(items: list[Disagreement]) -> list[tuple[str, str, str, str]]:
    return [(d.subject, d.what, d.a, d.b) for d in items]


def test_two_captures_of_one_machine_agree(fx: Path) -> None:
    # The tab-separated and the space-aligned copy of one DGX A100 matrix: every cell the same.
    a = load_side(fx / "dgx-a100-topo-tabs.txt", None)
    b = load_side(fx / "dgx-a100-topo-spaces.txt", None)
    assert a.said and len(a.said) == len(b.said)
    assert reconcile(a, b) == []


def test_degraded_capture_each_difference_once(fx: Path, tmp_path: Path) -> None:
    # Healthy vs degraded (by hand): GPU0-GPU1 lost 4 of 12 NVLinks (NV12 -> NV8, both cells of the pair), and
    # NIC9 (mlx5_9) is gone (its row, its column, its legend line). Two real differences, each reported once:
    # the pair's class as nvidia-smi printed it, and the NIC on one side only (paired by name, so its absence
    # does not shift NIC0..NIC8, and it takes part in no path-class comparison).
    lines = (fx / "dgx-a100-topo-tabs.txt").read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace("\t X \tNV12", "\t X \tNV8", 1)
    lines[2] = lines[2].replace("GPU1\tNV12", "GPU1\tNV8", 1)
    header = lines[0].split("\t")
    col = header.index("NIC9")
    kept = []
    for k, ln in enumerate(lines):
        if ln.startswith("NIC9\t") or ln.strip() == "NIC9: mlx5_9":
            continue
        if k <= 18:  # the header and the 18 matrix rows: drop NIC9's cell
            cells = ln.rstrip("\n").split("\t")
            del cells[col]
            ln = "\t".join(cells) + "\n"
        kept.append(ln)
    later = tmp_path / "later.txt"
    later.write_text("".join(kept))
    got = reconcile(load_side(fx / "dgx-a100-topo-tabs.txt", None), load_side(later, None))
    n = "dgx-a100-topo-tabs"
    assert _rows(got) == [
        (f"{n}/gpu0 - {n}/gpu1", "path class", "NV12", "NV8"),
        (f"{n}/nic9", "nic present on one side only", "present", "missing"),
    ]
    assert got[0].a_loc.line == got[0].b_loc.line == 2


def test_pairs_by_bus_id_not_by_index(fx: Path, tmp_path: Path) -> None:
    # B is the same p4d with GPU 0000:10:1c.0 (A's gpu0, the lowest bus id) gone. B's importer then names the
    # other seven gpu0..gpu6. By position, every GPU would differ; by bus id exactly one GPU is missing and
    # A's gpu1..gpu7 are B's gpu0..gpu6, agreeing in every path class and link: one disagreement.
    text = (fx / "aws-p4d-24xl-topo.xml").read_text()
    gpu0 = next(ln for ln in text.splitlines() if "0000:10:1c.0" in ln)
    pb = tmp_path / "p4d-b.xml"
    pb.write_text(text.replace(gpu0 + "\n", ""))
    a = import_files("nccl-xml", [fx / "aws-p4d-24xl-topo.xml"], node="p4d").inventory
    b = import_files("nccl-xml", [pb], node="p4d").inventory
    assert a.objects["p4d/gpu1"].labels["pci_busid"] == b.objects["p4d/gpu0"].labels["pci_busid"]
    assert _rows(reconcile(a, b)) == [("p4d/gpu0", "gpu present on one side only", "present", "missing")]


def test_nvidia_smi_index_is_pci_bus_order_rank(fx: Path) -> None:
    # nvidia-smi says GPU<k>, no bus id; the other side has bus ids: GPU<k> pairs with its k-th lowest bus id.
    smi = import_files("nvidia-smi", [fx / "dgx-a100-topo-tabs.txt"], node="n").inventory
    xml = import_files("nccl-xml", [fx / "aws-p4d-24xl-topo.xml"], node="n").inventory
    xs = sorted((o for o in smi.of_kind("gpu")), key=lambda o: o.id)
    ys = sorted((o for o in xml.of_kind("gpu")), key=lambda o: o.labels["pci_busid"], reverse=True)
    pairs = {a.id: b.labels["pci_busid"] for a, b in pair_devices(xs, ys) if a is not None and b is not None}
    by_bus = sorted(o.labels["pci_busid"] for o in xml.of_kind("gpu"))
    assert pairs == {f"n/gpu{k}": by_bus[k] for k in range(8)}


def test_amd_sides_are_detected(fx: Path) -> None:
    side = load_side(fx / "amd-smi-4gpu-xgmi-handwritten.txt", None)
    assert sum(1 for _ in side.inventory.of_kind("gpu")) == 4
    assert reconcile(side, load_side(fx / "amd-smi-4gpu-xgmi-handwritten.txt", "amd-smi")) == []


def test_lost_xgmi_link_reported_once(fx: Path, tmp_path: Path) -> None:
    # amd-smi ring (gpu0-gpu1, gpu0-gpu2, gpu1-gpu3, gpu2-gpu3 at weight 15). Degraded capture: 0c<->22
    # (gpu0-gpu1) reads weight 30, i.e. routed over two hops: the direct link is gone. Paired by bus id, the
    # one difference is that pair's class: XGMI (direct) vs SYS (no shared PCIe parent, no NUMA stated).
    text = (fx / "amd-smi-4gpu-xgmi-handwritten.txt").read_text()
    rows = text.splitlines(keepends=True)
    for k, ln in enumerate(rows):
        if ln.startswith("0000:0c:00.0 0            15"):
            rows[k] = ln.replace("0            15", "0            30", 1)
        if ln.startswith("0000:22:00.0 15           0"):
            rows[k] = ln.replace("15           0", "30           0", 1)
    later = tmp_path / "later.txt"
    later.write_text("".join(rows))
    got = reconcile(load_side(fx / "amd-smi-4gpu-xgmi-handwritten.txt", None), load_side(later, None))
    n = "amd-smi-4gpu-xgmi-handwritten"
    assert _rows(got) == [(f"{n}/gpu0 - {n}/gpu1", "path class", "XGMI", "SYS")]
