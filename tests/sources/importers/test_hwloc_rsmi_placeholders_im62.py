"""hwloc's ROCm SMI backend writes XGMIBandwidth without measuring: 100000 for every GPU pair whose link
type is xGMI, 1000000 on the diagonal (hwloc/topology-rsmi.c), and its hop count reads 1 for a path through
other GPUs as well (hwloc's own note on Frontier's MI250X nodes). Such a file cannot say which hops-1 pairs
are direct. Before: each was a direct link at a stated 100000 MB/s, and reconcile set it against a tool that
shows the pair routed.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files
from verifier.sources.importers.reconcile import load_side, reconcile

LSTOPO = "mi-4gpu-lstopo-handwritten.xml"


def _two_hops(fx: Path, tmp_path: Path) -> Path:
    """The lstopo sample with GPU0-GPU1 at XGMIHops 2 and XGMIBandwidth 0 (routed, no link of their own)."""
    text = (fx / LSTOPO).read_text()
    hops = text.index('name="XGMIHops"')
    # Row 0 of each matrix starts "0 1 1 1 1 0" / "1638400 50000 ..."; cells [0][1] and [1][0] change.
    head, tail = text[:hops], text[hops:]
    head = head.replace("1638400 50000 50000 50000 50000 1638400", "1638400 0 50000 50000 0 1638400", 1)
    tail = tail.replace(">0 1 1 1 1 0 ", ">0 2 1 1 2 0 ", 1)
    path = tmp_path / "two-hops.xml"
    path.write_text(head + tail)
    return path


def _placeholders(fx: Path, tmp_path: Path) -> Path:
    """The 4-GPU lstopo sample (XGMIHops 1 for every pair) with hwloc's RSMI placeholder figures."""
    text = (fx / LSTOPO).read_text().replace("1638400", "1000000").replace(" 50000", " 100000")
    path = tmp_path / "placeholders.xml"
    path.write_text(text)
    return path


def test_placeholder_figures_give_inferred_links_at_an_assumed_bandwidth(fx: Path, tmp_path: Path) -> None:
    imp = import_files("hwloc", [_placeholders(fx, tmp_path)], node="m")
    xgmi = [lk for lk in imp.inventory.links.values() if lk.kind == "xgmi"]
    # 4 GPUs, every pair 1 hop: 4 * 3 / 2 = 6 links, each inferred, at the assumed 50000 MB/s (not 100000).
    assert len(xgmi) == 6
    assert {(lk.mbps, lk.labels.get("assumed"), lk.labels.get("inferred")) for lk in xgmi} == {
        (50000, "bandwidth", "true")
    }
    assert sum("ROCm SMI placeholders" in n.message and "the 6 pairs" in n.message for n in imp.notes) == 1


def test_measured_figures_stay_stated(fx: Path) -> None:
    # The sample's own figures (50000 between GPUs, 1638400 on the diagonal) are not the placeholders.
    imp = import_files("hwloc", [fx / LSTOPO], node="m")
    xgmi = [lk for lk in imp.inventory.links.values() if lk.kind == "xgmi"]
    assert len(xgmi) == 6 and not any("inferred" in lk.labels or "assumed" in lk.labels for lk in xgmi)


def test_reconcile_leaves_an_unsure_pair_uncompared(fx: Path, tmp_path: Path) -> None:
    # Against the sample with GPU0-GPU1 at 2 hops (no link there: NODE), the placeholder file's inferred
    # GPU0-GPU1 link is not a stated XGMI, so no difference; the other five pairs are XGMI-or-unknown alike.
    got = reconcile(load_side(_placeholders(fx, tmp_path), None), load_side(_two_hops(fx, tmp_path), None))
    assert got == []
