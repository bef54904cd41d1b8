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
    assert page.get_attribute("body", "data-mode") == "detail"  # subjects are shown in the full drawing
    highlighted = json.loads(page.get_attribute("body", "data-highlighted") or "[]")
    assert highlighted == sorted(finding["targets"]) != []
    assert page.evaluate("() => topolog.cy.$('.hl').map(e => e.id()).sort()") == highlighted
    details = page.text_content("#details") or ""
    assert finding["message"] in details and finding["location"] in details
    assert "Proof" in details and page.locator("#details .proof li").count() > 1
    # To the hardware: the subject's link in the details panel shows that element ...
    page.click(f"#details [data-element='{highlighted[0]}']")
    assert page.get_attribute("body", "data-selected") == highlighted[0]
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
