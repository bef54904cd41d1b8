"""The html report and `topolog draw` when Graphviz's dot fails on a drawing.

parallel-links.yaml (review R-PV, round 61) is a valid inventory on which Graphviz 2.43's dot
aborts (merge_chain, class2.c:148): x0/gpu0 and x1/gpu0, in two node clusters, are joined by two
nvlink wires of different bandwidths (1 link of 25 GB/s one way round, 1 written at 10 GB/s the
other way), next to other same-rank edges. The layout is retried with one edge per endpoint
pair; a dot that fails on that too costs the page its precomputed layout, never the report, and
the exit code follows the findings.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from reports.output_helpers import ROOT

from verifier.core.errors import SourceLocation
from verifier.reports.drawing import dot
from verifier.reports.drawing.dot import DotFailed, dot_path, dot_text
from verifier.reports.drawing.model import build
from verifier.sources.inventory.loader import load_inventory

INV = str(ROOT / "tests/reports/parallel-links.yaml")
needs_dot = pytest.mark.skipif(dot_path() is None, reason="Graphviz's dot is not installed (apt-get install graphviz)")
EDGE = re.compile(r'^\s*"([^"]+)" -- "([^"]+)"', re.M)


def page_json(text: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="topolog-data">(.*?)</script>', text, re.S)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def findings_exit() -> int:
    """The exit code the findings alone give (no html asked for)."""
    code, _, err = run_cli("verify", INV, "--format", "json")
    assert code in (0, 1), err
    return code


def test_merged_text_has_one_edge_per_pair_and_the_same_pairs() -> None:
    drawing = build(load_inventory([Path(INV)]), [])
    plain = EDGE.findall(dot_text(drawing, detailed=False))
    merged = EDGE.findall(dot_text(drawing, detailed=False, merge_parallel=True))
    # By hand from the file: x0/gpu0 -- x1/gpu0 is written at 25 GB/s (nvlink gen 4, 1 link) and
    # at 10 GB/s the other way round, so the plain text has it twice; merged, once.
    assert plain.count(("x0/gpu0", "x1/gpu0")) == 2
    assert merged.count(("x0/gpu0", "x1/gpu0")) == 1
    pairs = [tuple(sorted(p)) for p in merged]
    assert len(pairs) == len(set(pairs))
    assert set(pairs) == {tuple(sorted(p)) for p in plain}


def test_dot_failing_on_the_plain_text_is_retried_merged(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def fake(text: str, fmt: str) -> str:
        asked.append(text)
        if len(asked) == 1:
            raise DotFailed.at(SourceLocation("dot"), "Graphviz's dot failed: merge_chain")
        return "laid out"

    monkeypatch.setattr(dot, "run_dot", fake)
    assert dot.run_dot_merging(lambda merged: f"merged={merged}", "json0") == "laid out"
    assert asked == ["merged=False", "merged=True"]


@needs_dot
def test_verify_html_is_written_laid_out_and_exits_on_findings(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, _, err = run_cli("verify", INV, "--output", f"html={out}")
    assert code == findings_exit(), err
    data = page_json(out.read_text(encoding="utf-8"))
    assert data["laid_out"] is True
    assert "layout_failed" not in data
    # Every device of the file is drawn: 2 GPUs and 2 NVSwitches in x0, 2 GPUs and 1 NVSwitch in
    # x1 (nvsw1 removed), and the loose lg0, lg1, ls.
    devices = {"x0/gpu0", "x0/gpu1", "x0/nvsw0", "x0/nvsw1", "x1/gpu0", "x1/gpu1", "x1/nvsw0", "lg0", "lg1", "ls"}
    assert devices <= {n["data"]["id"] for n in data["nodes"]}


@needs_dot
def test_draw_svg_and_html(tmp_path: Path) -> None:
    for name in ("t.svg", "t.html"):
        code, _, err = run_cli("draw", INV, "-o", str(tmp_path / name))
        assert code == 0, err
    assert 'id="x1/gpu0"' in (tmp_path / "t.svg").read_text(encoding="utf-8")


def test_dot_failing_twice_still_writes_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str, fmt: str) -> str:
        raise DotFailed.at(SourceLocation("dot"), "Graphviz's dot failed: it crashed")

    monkeypatch.setattr(dot, "run_dot", broken)
    monkeypatch.setattr(dot, "dot_path", lambda: "dot")  # as if installed, where it is not
    out = tmp_path / "r.html"
    code, _, err = run_cli("verify", INV, "--output", f"html={out}")
    assert code == findings_exit(), err
    text = out.read_text(encoding="utf-8")
    data = page_json(text)
    assert data["laid_out"] is False
    assert "it crashed" in data["layout_failed"]
    assert "the browser lays this page out instead" in text
    code, _, err = run_cli("draw", INV, "-o", str(tmp_path / "t.svg"))
    assert code == 2
    assert "it crashed" in err and "no SVG without it" in err
    assert not (tmp_path / "t.svg").exists()
