"""An XGMIHops of 1 with an XGMIBandwidth of 0 is an xGMI path through other GPUs, not a direct link.

AMD SMI counts every path over xGMI alone as 1 hop, routed or not (ROCm/rocm-systems issue 5763: on an
MI250X node, hops 1 between every pair of GCDs while the bandwidth query, which answers for direct links
only, gives 0 for some pairs; hwloc issue 775: hwloc copied those hops into XGMIHops). Before: each such
pair got a direct xGMI link at an assumed 50 GB/s.
"""

from __future__ import annotations

import re
from pathlib import Path

from verifier.sources.importers import import_files

LSTOPO = "mi-4gpu-lstopo-handwritten.xml"


def _bandwidth(fx: Path, tmp_path: Path, zero: set[tuple[int, int]]) -> Path:
    """The lstopo sample (4 GPUs, XGMIHops 1 for every pair) with XGMIBandwidth[i][j] = 0 for (i, j) in `zero`."""
    text = (fx / LSTOPO).read_text()
    start = text.index('name="XGMIBandwidth"')
    end = text.index("</distances2>", start)
    block = text[start:end]
    values = " ".join(re.findall(r"<u64values[^>]*>([^<]*)</u64values>", block)).split()
    for i, j in zero:
        values[i * 4 + j] = "0"
    chunk = " ".join(values) + " "
    head = block[: block.index("<u64values")]
    path = tmp_path / "lstopo.xml"
    path.write_text(text[:start] + head + f'<u64values length="{len(chunk)}">{chunk}</u64values>\n  ' + text[end:])
    return path


def _xgmi(path: Path) -> tuple[list[tuple[str, str, int]], list[str]]:
    result = import_files("hwloc", [path], node="m")
    links = sorted((lk.a, lk.b, lk.mbps) for lk in result.inventory.links.values() if lk.kind == "xgmi")
    return links, [str(n) for n in result.notes]


def test_hop_one_with_zero_bandwidth_is_no_direct_link(fx: Path, tmp_path: Path) -> None:
    # GPU0-GPU1: XGMIHops 1, XGMIBandwidth 0; the five other pairs 1 hop at 50000 MB/s. Five links remain,
    # each at its stated 50000 MB/s, and a note names the pair.
    links, notes = _xgmi(_bandwidth(fx, tmp_path, {(0, 1), (1, 0)}))
    gpus = ["m/gpu0", "m/gpu1", "m/gpu2", "m/gpu3"]
    pairs = [(a, b) for k, a in enumerate(gpus) for b in gpus[k + 1 :] if (a, b) != ("m/gpu0", "m/gpu1")]
    assert links == [(a, b, 50000) for a, b in pairs]
    assert sum("is 1 but XGMIBandwidth gives them 0" in n for n in notes) == 1


def test_zero_bandwidth_everywhere_says_nothing_of_links(fx: Path, tmp_path: Path) -> None:
    # An XGMIBandwidth whose every pair is 0 (the query answered for none of them) tells no direct link
    # from a routed one: the six hop-1 pairs keep their links, at the assumed 50000 MB/s.
    path = _bandwidth(fx, tmp_path, {(i, j) for i in range(4) for j in range(4) if i != j})
    links, notes = _xgmi(path)
    assert len(links) == 6 and all(mbps == 50000 for _, _, mbps in links)
    assert not any("XGMIBandwidth gives them 0" in n for n in notes)


def test_the_lstopo_sample_keeps_its_six_links(fx: Path) -> None:
    links, _ = _xgmi(fx / LSTOPO)
    assert len(links) == 6
