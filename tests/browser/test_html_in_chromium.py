"""The html report of every shipped example, opened from disk in headless Chromium.

Playwright (the `test` extra) drives Debian's `chromium` (.ci/run installs it where
missing); no browser is downloaded. Each page must load without a console error or
warning, draw what its JSON holds, highlight a finding's subjects when the finding is
clicked, and lead from the finding to the hardware and back. Skipped, saying why, only
where there is no Chromium or no Playwright.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli

try:
    from playwright.sync_api import Browser, Page, ViewportSize, sync_playwright
except ImportError:  # pragma: no cover - the test extra installs it
    HAVE_PLAYWRIGHT = False
else:
    HAVE_PLAYWRIGHT = True

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",  # offline machines: without these Chromium waits on the network
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT: ViewportSize = {"width": 1200, "height": 800}
EXAMPLES = sorted(p.name for p in (ROOT / "inventories").glob("*.yaml"))
FLEET = "fleet-1024"
"""A generated 1,024-GPU DGX H100 fleet (benchmarks/verify_bench.py: 4 scalable units, with its
outliers: a down cable, a degraded NVLink, a GPU cut out of its NVLink domain, a quarantined node)."""
TWO = "two-clusters"
"""The pod and the mixed fleet in one page: each cluster's ids prefixed (c0:, c1:), side by side."""
READABLE_PX = 9.0
"""The smallest label we call legible on screen: 9 CSS px of font size (the page's box labels
are 10 px at zoom 1, folded nodes 14 px, so 9 px is zoom 0.9 for a device's label)."""
SEVERITY_RGB = {"error": "rgb(207,34,46)", "warning": "rgb(191,135,0)", "note": "rgb(9,105,218)"}
"""topology.js's severity colours #cf222e, #bf8700, #0969da written as Chromium reports them."""

pytestmark = [
    pytest.mark.skipif(not HAVE_PLAYWRIGHT, reason="playwright is not installed (pip install -e '.[test]')"),
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM), reason="no Chromium to run (apt-get install chromium; .ci/run installs it)"
    ),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert HAVE_PLAYWRIGHT
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("html")
    out: dict[str, Path] = {}
    here = os.getcwd()
    os.chdir(ROOT)  # reports name files as a user running from the repository sees them
    try:
        for name in EXAMPLES:
            target = folder / name.replace(".yaml", ".html")
            code, _, err = run_cli("verify", f"inventories/{name}", "--output", f"html={target}")
            assert code in (0, 1), err
            out[name] = target
        sys.path.insert(0, str(ROOT))
        try:
            from benchmarks.verify_bench import Layout, inventory_yaml
        finally:
            sys.path.remove(str(ROOT))
        fleet = folder / f"{FLEET}.yaml"
        fleet.write_text(inventory_yaml(Layout(1024)), encoding="utf-8")
        code, _, err = run_cli("verify", str(fleet), "--output", f"html={folder / FLEET}.html")
        assert code in (0, 1), err
        out[FLEET] = folder / f"{FLEET}.html"
        two = ("inventories/dgx-h100-pod.yaml", "inventories/mixed-fleet.yaml")
        code, _, err = run_cli("verify", *two, "--output", f"html={folder / TWO}.html")
        assert code in (0, 1), err
        out[TWO] = folder / f"{TWO}.html"
    finally:
        os.chdir(here)
    return out


def open_page(browser: Browser, path: Path) -> tuple[Page, list[str]]:
    page = browser.new_page(viewport=VIEWPORT)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("request", lambda r: problems.append(f"request: {r.url}") if not r.url.startswith("file:") else None)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready]", timeout=20_000)
    return page, problems


def embedded(page: Page) -> Any:
    return json.loads(page.text_content("#topolog-data") or "{}")


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


# Share of the drawing's canvas that is not background: a blank or failed drawing is ~0.
INK = """() => {
  let inked = 0, total = 0;
  for (const c of document.querySelectorAll('#cy canvas')) {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    for (let i = 3; i < d.length; i += 16) { total++; if (d[i] > 0) inked++; }
  }
  return inked / Math.max(total, 1);
}"""


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_loads_and_draws_without_console_errors(browser: Browser, reports: dict[str, Path], name: str) -> None:
    page, problems = open_page(browser, reports[name])
    data = embedded(page)
    drawn = page.evaluate("() => [topolog.cy.nodes().length, topolog.cy.edges().length]")
    assert drawn == [len(data["nodes"]), len(data["edges"])]
    assert page.locator("#findings li[data-finding]").count() == len(data["findings"])
    # With more than a few nodes to draw the page opens on the overview: nodes folded to boxes.
    assert page.get_attribute("body", "data-mode") == ("overview" if data["overview"] else "detail")
    shot = page.screenshot()
    assert png_size(shot) == (VIEWPORT["width"], VIEWPORT["height"])
    assert len(shot) > 20_000  # lists, header and a drawing; a blank page compresses to a few kB
    assert page.evaluate(INK) > 0.01
    assert problems == []
    page.close()


@pytest.mark.parametrize("name", ["dgx-h100-pod.yaml", "mixed-fleet.yaml"])
def test_clicking_a_finding_highlights_its_subjects_and_leads_back(
    browser: Browser, reports: dict[str, Path], name: str
) -> None:
    page, problems = open_page(browser, reports[name])
    finding = embedded(page)["findings"][0]
    page.click(f"#finding-{finding['id']}")
    # Shown in the full drawing when its subjects fit there readably, else on the overview.
    mode = page.get_attribute("body", "data-mode")
    highlighted = json.loads(page.get_attribute("body", "data-highlighted") or "[]")
    assert highlighted == sorted(finding["targets" if mode == "detail" else "overview_targets"]) != []
    assert page.evaluate("() => topolog.cy.$('.hl').map(e => e.id()).sort()") == highlighted
    details = page.text_content("#details") or ""
    assert finding["message"] in details and finding["location"] in details
    assert "Proof" in details and page.locator("#details .proof li").count() > 1
    # To the hardware: the subject's link in the details panel shows that element ...
    page.click(f"#details [data-element='{finding['targets'][0]}']")
    assert page.get_attribute("body", "data-selected") == finding["targets"][0]
    # ... which lists the finding again: back to it.
    page.click(f"#details li[data-finding='{finding['id']}']")
    assert page.get_attribute("body", "data-selected") == finding["id"]
    assert problems == []
    page.close()


def test_filters_hide_findings_by_severity_and_rule(browser: Browser, reports: dict[str, Path]) -> None:
    page, problems = open_page(browser, reports["mixed-fleet.yaml"])
    findings = embedded(page)["findings"]
    page.uncheck("#sev-note")
    shown = json.loads(page.get_attribute("body", "data-filtered") or "[]")
    assert shown == [f["id"] for f in findings if f["severity"] != "note"]
    page.select_option("#rule", "BW005")
    shown = json.loads(page.get_attribute("body", "data-filtered") or "[]")
    assert shown == [f["id"] for f in findings if f["rule"] == "BW005"] and len(shown) == 2
    assert problems == []
    page.close()


# Every drawn box on screen, its rendered box (CSS px, labels left out) and its ancestors' ids.
BOXES = """() => topolog.cy.nodes(':visible').map(n => {
  const b = n.renderedBoundingBox({includeLabels: false, includeOverlays: false});
  return {id: n.id(), up: n.ancestors().map(a => a.id()), x1: b.x1, x2: b.x2, y1: b.y1, y2: b.y2};
})"""


def overlaps(boxes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of boxes that overlap, neither inside the other (a node's devices sit inside it)."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            if a["id"] in b["up"] or b["id"] in a["up"]:
                continue
            if a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]:
                found.append((a["id"], b["id"]))
    return found


@pytest.mark.parametrize("name", [*EXAMPLES, FLEET, TWO])
def test_no_two_boxes_overlap_on_the_overview_or_the_full_drawing(
    browser: Browser, reports: dict[str, Path], name: str
) -> None:
    page, problems = open_page(browser, reports[name])
    opened = page.evaluate(BOXES)
    assert len(opened) >= 3 and overlaps(opened) == []
    page.click("#open-all")  # the full drawing, every node and rack open
    full = page.evaluate(BOXES)
    assert len(full) > len(opened) or not embedded(page)["overview"]
    assert overlaps(full) == []
    assert problems == []
    page.close()


def marks_of(finding: dict[str, Any], mode: str | None) -> list[str]:
    return list(finding["overview_targets"] if mode == "overview" else finding["targets"])


# An element's mark: shown, its severity class, its colour, its rendered box.
MARK = """(id) => {
  const e = topolog.cy.getElementById(id);
  const b = e.renderedBoundingBox({includeLabels: false});
  const colour = e.isNode() ? e.style('border-color') : e.style('line-color');
  return {visible: e.visible(), classes: e.classes(), colour: colour.replace(/ /g, ''), w: b.w, h: b.h};
}"""


@pytest.mark.parametrize("name", [*EXAMPLES, FLEET, TWO])
def test_every_finding_has_a_visible_mark_where_the_page_opens(
    browser: Browser, reports: dict[str, Path], name: str
) -> None:
    page, problems = open_page(browser, reports[name])
    mode = page.get_attribute("body", "data-mode")
    findings = [f for f in embedded(page)["findings"] if f["targets"] and not f["waived"]]
    for f in findings:
        marks = marks_of(f, mode)
        assert marks, f
        for target in marks:
            mark = page.evaluate(MARK, target)
            # Marked in the colour of its worst finding: no finding here shares an element
            # with a more severe one (checked: each mark's class is this finding's severity
            # or a worse one, whose colour is then shown).
            worse = SEVERITIES[: SEVERITIES.index(f["severity"]) + 1]
            assert mark["visible"] and mark["w"] > 0 and mark["h"] > 0, (f["id"], target, mark)
            shown = [s for s in worse if f"sev-{s}" in mark["classes"]]
            assert shown and mark["colour"] == SEVERITY_RGB[shown[0]], (f["id"], target, mark)
    if name == FLEET:
        # The fleet's outliers, by hand from benchmarks/verify_bench.py: a cable (LINK006, its
        # NIC-leaf link down), a GPU cut out of NVLink (TOPO005, twice) and a quarantined node
        # (NODE006). On the overview the cable is the folded fabric edge from its node, and a
        # GPU's finding marks the node that holds it.
        rules = sorted(f["rule"] for f in findings)
        assert rules == ["LINK006", "NODE006", "TOPO005", "TOPO005"]
        (cable,) = [f for f in findings if f["rule"] == "LINK006"]
        is_edge = "(id) => topolog.cy.getElementById(id).isEdge()"
        edges = [t for t in cable["overview_targets"] if page.evaluate(is_edge, t)]
        assert len(edges) == 1 and page.evaluate(MARK, edges[0])["visible"]
    assert problems == []
    page.close()


SEVERITIES = ["error", "warning", "note"]

# After a click: what is highlighted, every highlighted element and the ends of its links,
# each inside the drawing's area, and the smallest label among them in screen px.
FRAMED = """() => {
  const cy = topolog.cy;
  const ids = JSON.parse(document.body.dataset.highlighted);
  let coll = cy.collection();
  ids.forEach(id => { coll = coll.union(cy.getElementById(id)); });
  coll = coll.union(coll.connectedNodes());
  const outside = [];
  coll.forEach(e => {
    const b = e.renderedBoundingBox({includeLabels: false});
    if (!e.visible() || b.x1 < -1 || b.y1 < -1 || b.x2 > cy.width() + 1 || b.y2 > cy.height() + 1) outside.push(e.id());
  });
  const fonts = coll.nodes().map(n => parseFloat(n.style('font-size')) * cy.zoom());
  return {ids, outside, smallest: Math.min(...fonts), count: coll.length};
}"""


@pytest.mark.parametrize("name", [*EXAMPLES, FLEET, TWO])
def test_clicking_any_finding_frames_its_subjects_readably(
    browser: Browser, reports: dict[str, Path], name: str
) -> None:
    page, problems = open_page(browser, reports[name])
    findings = [f for f in embedded(page)["findings"] if f["targets"]]
    for f in findings:
        page.click(f"#finding-{f['id']}")
        framed = page.evaluate(FRAMED)
        mode = page.get_attribute("body", "data-mode")
        assert framed["ids"] == sorted(marks_of(f, mode)), f["id"]
        # All of it in view (a cable: both its ends), and its labels legible.
        assert framed["outside"] == [], (f["id"], framed)
        assert framed["smallest"] >= READABLE_PX, (f["id"], framed)
    if name == FLEET:
        # The down cable does not fit readably in the full drawing (its NIC sits in a node,
        # its leaf below all the nodes): it is framed on the overview, node box to leaf.
        (cable,) = [f for f in findings if f["rule"] == "LINK006"]
        page.click(f"#finding-{cable['id']}")
        assert page.get_attribute("body", "data-mode") == "overview"
        assert page.evaluate(FRAMED)["count"] == 3  # the edge and its two ends
    assert problems == []
    page.close()


# Labels of the boxes fully in view when the page opens, in screen px.
OPENED = """() => {
  const cy = topolog.cy;
  const inView = cy.nodes(':visible').filter(n => {
    const b = n.renderedBoundingBox({includeLabels: true});
    return n.data('label') && b.x1 >= 0 && b.y1 >= 0 && b.x2 <= cy.width() && b.y2 <= cy.height();
  });
  return {inView: inView.length, fonts: cy.nodes(':visible').map(n => parseFloat(n.style('font-size')) * cy.zoom())};
}"""


@pytest.mark.parametrize("name", EXAMPLES)
def test_each_shipped_example_opens_readable(browser: Browser, reports: dict[str, Path], name: str) -> None:
    page, problems = open_page(browser, reports[name])
    opened = page.evaluate(OPENED)
    assert min(opened["fonts"]) >= READABLE_PX, opened
    assert opened["inView"] >= 3  # not zoomed onto nothing: boxes whole in view, labels and all
    assert problems == []
    page.close()
