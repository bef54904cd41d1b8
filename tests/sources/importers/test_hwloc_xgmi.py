"""hwloc's RSMI matrices (XGMIHops, XGMIBandwidth) give AMD GPUs their xGMI links, as rocm-smi and amd-smi do."""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files
from verifier.sources.importers.reconcile import Disagreement, load_side, reconcile

LSTOPO = "mi-4gpu-lstopo-handwritten.xml"


def _rows(items: list[Disagreement]) -> list[tuple[str, str, str, str]]:
    return [(d.subject, d.what, d.a, d.b) for d in items]


def _hops(fx: Path, tmp_path: Path, i: int, j: int, hops: str, bw: str) -> Path:
    """The lstopo file with XGMIHops[i][j] = XGMIHops[j][i] = `hops` and XGMIBandwidth likewise `bw`."""
    text = (fx / LSTOPO).read_text()
    out = []
    for block in text.split("  <distances2 ")[1:]:
        body = block[: block.index("</distances2>")]
        values = " ".join(v.split(">", 1)[1].split("<", 1)[0] for v in body.split("<u64values")[1:]).split()
        values[i * 4 + j] = values[j * 4 + i] = hops if 'name="XGMIHops"' in block else bw
        head = body[: body.index("    <u64values")]
        chunk = " ".join(values) + " "
        out.append((body, head + f'    <u64values length="{len(chunk)}">{chunk}</u64values>\n  '))
    for old, new in out:
        text = text.replace(old, new)
    path = tmp_path / "lstopo.xml"
    path.write_text(text)
    return path


def test_xgmi_links_from_hwloc_matrices(fx: Path) -> None:
    # XGMIHops is 1 for every pair of the four rsmi OS devices (gp 107, 117, 127, 137 = GPUs 05, 26, 46,
    # 65:00.0): six direct links, at XGMIBandwidth's 50000 MB/s (its diagonal, 1638400, is each GPU's
    # own memory bandwidth, not a link), stated, not assumed.
    inv = import_files("hwloc", [fx / LSTOPO], node="m").inventory
    links = sorted((lk.a, lk.b, lk.mbps, "assumed" in lk.labels) for lk in inv.links.values() if lk.kind == "xgmi")
    gpus = ["m/gpu0", "m/gpu1", "m/gpu2", "m/gpu3"]
    assert links == [(a, b, 50000, False) for k, a in enumerate(gpus) for b in gpus[k + 1 :]]


def test_two_hops_is_no_direct_link(fx: Path, tmp_path: Path) -> None:
    # GPU0-GPU1 at 2 hops (hwloc divides the driver's weight 30 by the smallest, 15): routed through
    # another GPU, so no link between them; five remain.
    inv = import_files("hwloc", [_hops(fx, tmp_path, 0, 1, "2", "0")], node="m").inventory
    pairs = sorted((lk.a, lk.b) for lk in inv.links.values() if lk.kind == "xgmi")
    assert len(pairs) == 5 and ("m/gpu0", "m/gpu1") not in pairs


def test_rocm_smi_amd_smi_and_lstopo_of_one_node_agree(fx: Path, tmp_path: Path) -> None:
    # The real rocm-smi capture, and the amd-smi table and lstopo XML written by hand for the same node:
    # every pair XGMI in each. Against the lstopo whose GPU0-GPU1 path takes two hops, the one difference
    # is that pair: XGMI against NODE (no link; the two GPUs' host bridges share the package).
    smi, amd = fx / "mi-4gpu-showtopo.txt", fx / "mi-4gpu-amd-smi-handwritten.txt"
    for side in (smi, amd):
        assert reconcile(load_side(side, None), load_side(fx / LSTOPO, None)) == []
    got = reconcile(load_side(amd, None), load_side(_hops(fx, tmp_path, 0, 1, "2", "0"), None))
    n = "mi-4gpu-amd-smi-handwritten"
    assert _rows(got) == [(f"{n}/gpu0 - {n}/gpu1", "path class", "XGMI", "NODE")]


def test_bandwidth_without_hops_is_noted(fx: Path, tmp_path: Path) -> None:
    # XGMIBandwidth alone says which pairs have an xGMI path, not which are direct: no link, a note.
    text = (fx / LSTOPO).read_text()
    start = text.index('  <distances2 type="OSDev" nbobjs="4" kind="33" name="XGMIHops"')
    end = text.index("</distances2>\n", start) + len("</distances2>\n")
    path = tmp_path / "bw-only.xml"
    path.write_text(text[:start] + text[end:])
    imp = import_files("hwloc", [path], node="m")
    assert not [lk for lk in imp.inventory.links.values() if lk.kind == "xgmi"]
    assert any("XGMIBandwidth without XGMIHops" in n.message for n in imp.notes)
