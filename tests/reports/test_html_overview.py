"""The html page's overview (nodes folded into boxes, with the fabric): where a finding is marked
there, the folded fabric edges, and Graphviz's box sizes (checked in a browser by tests/browser/).
"""

from __future__ import annotations

import json
import re
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from reports.output_helpers import ROOT

from verifier.reports.drawing.dot import dot_path

needs_dot = pytest.mark.skipif(dot_path() is None, reason="Graphviz's dot is not installed (apt-get install graphviz)")
EXAMPLES = sorted(p.name for p in (ROOT / "inventories").glob("*.yaml"))


def page_of(tmp_path: Path, name: str) -> dict[str, Any]:
    out = tmp_path / "r.html"
    code, _, err = run_cli("verify", str(ROOT / "inventories" / name), "--output", f"html={out}")
    assert code in (0, 1), err
    text = out.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="topolog-data">(.*?)</script>', text, re.S)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


@needs_dot
def test_the_pods_finding_is_marked_on_its_node_and_the_nics_fold_into_edges(tmp_path: Path) -> None:
    data = page_of(tmp_path, "dgx-h100-pod.yaml")
    (finding,) = data["findings"]
    # TOPO005 names dgx03/gpu2 and its link to dgx03/nvsw1: both inside dgx03, which the overview
    # shows as one box, so that box carries the mark.
    assert finding["targets"][0] == "dgx03/gpu2"
    assert finding["overview_targets"] == ["dgx03"]
    folded = [e["data"] for e in data["edges"] if e["data"].get("overview")]
    # Drawn nodes: dgx00 (for dgx00..dgx02), dgx03 (the outlier), dgx04 (for dgx04..dgx07); each
    # node's 8 NICs go one to each rail leaf, so 3 x 8 folded edges, standing for all 8 x 8 = 64
    # NIC-leaf links of the file: 3 x 8 from dgx00's, 1 x 8 from dgx03's, 4 x 8 from dgx04's.
    ends = sorted((e["source"], e["target"]) for e in folded)
    assert ends == sorted((n, f"leaf{r}") for n in ("dgx00", "dgx03", "dgx04") for r in range(8))
    counts = {
        n: sum(data["info"][e["id"]]["count"] for e in folded if e["source"] == n) for n in ("dgx00", "dgx03", "dgx04")
    }
    assert counts == {"dgx00": 24, "dgx03": 8, "dgx04": 32}
    assert all(e["kind"] == "infiniband" for e in folded)


@needs_dot
def test_one_node_opens_on_the_full_drawing(tmp_path: Path) -> None:
    # The edge SoC is one node: nothing to fold, no overview, the finding-free page draws it whole.
    data = page_of(tmp_path, "edge-soc.yaml")
    assert data["overview"] == {} and not any(e["data"].get("overview") for e in data["edges"])


@needs_dot
@pytest.mark.parametrize("name", EXAMPLES)
def test_graphviz_boxes_do_not_overlap(tmp_path: Path, name: str) -> None:
    # Each box is placed at Graphviz's centre with Graphviz's size; Graphviz never overlaps nodes,
    # so neither do the page's boxes (the browser test measures the drawn ones too).
    data = page_of(tmp_path, name)
    views = [[(x, y, w, h) for x, y, w, h in data["overview"].values()]]
    views.append(
        [
            (n["position"]["x"], n["position"]["y"], n["data"]["w"], n["data"]["h"])
            for n in data["nodes"]
            if "w" in n["data"]
        ]
    )
    for boxes in views:
        assert all(w > 0 and h > 0 for _, _, w, h in boxes)
        for (ax, ay, aw, ah), (bx, by, bw, bh) in combinations(boxes, 2):
            assert abs(ax - bx) >= (aw + bw) / 2 or abs(ay - by) >= (ah + bh) / 2
