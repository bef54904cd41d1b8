"""The Markdown report and the GitHub step summary."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from reports.output_helpers import CLEAN_RUN, FLEET_RUN, WAIVED_RUN, report_of, waived_report

from verifier.checks.findings import Finding
from verifier.checks.verify import Result, VerifyReport
from verifier.checks.waivers import Waiver
from verifier.core.errors import SourceLocation, TopologError
from verifier.reports import markdown_report
from verifier.reports.markdown_report import STEP_SUMMARY_ROWS, append_step_summary
from verifier.reports.safe_text import markdown_cell as cell


def _cells(row: str) -> list[str]:
    """A GFM table row's cells: split at each '|' that no backslash escapes."""
    assert row.startswith("| ") and row.endswith(" |")
    return [c.strip() for c in re.split(r"(?<!\\)\|", row[1:-1])]


def _table(text: str, heading: str) -> list[list[str]]:
    """The rows (header and separator excluded) of the table under `### heading`."""
    block = text.split(f"### {heading}\n\n", 1)[1]
    rows = []
    for line in block.splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(_cells(line))
    return rows


def test_markdown_of_the_waived_run() -> None:
    text = report_of(*WAIVED_RUN, fmt="markdown")
    assert text.startswith("## topolog verify: failed\n\n5 findings (4 error, 1 warning, 0 note, 1 waived)")
    counts = text.split("| error | warning | note | waived |\n| ---: | ---: | ---: | ---: |\n", 1)[1]
    assert counts.startswith("| 4 | 1 | 0 | 1 |\n")
    # Lines and columns read off tests/golden/stray-devices.yaml and tests/golden/waivers.yaml.
    assert [(r[0], r[1], r[4]) for r in _table(text, "Findings")] == [
        ("error", "TOPO001", "tests/golden/stray-devices.yaml:10:13"),
        ("error", "TOPO001", "tests/golden/stray-devices.yaml:15:17"),
        ("error", "TOPO003", "tests/golden/stray-devices.yaml:10:13"),
        ("error", "WAIVER001", "tests/golden/waivers.yaml:6:5"),
        ("warning", "WAIVER002", "tests/golden/waivers.yaml:10:5"),
    ]
    (waived,) = _table(text, "Waived findings")
    assert waived[:3] == ["error", "TOPO003", "stray-nic, nic"]
    assert waived[5].startswith("until 2030-01-01 (tests/golden/waivers.yaml:2:5): Spare NIC on the pod shelf")


def test_markdown_of_a_passing_run() -> None:
    clean = report_of(*CLEAN_RUN, fmt="markdown")
    assert clean.startswith("## topolog verify: passed\n") and "No findings." in clean
    assert "### Waived" not in clean
    fleet = report_of(*FLEET_RUN, fmt="markdown")
    assert fleet.startswith("## topolog verify: passed\n")
    # 1 BW003 (four workstations, one template line) + 2 BW005 warnings + 3 AUTHZ001 notes,
    # none left out: this is the full report.
    assert len(_table(fleet, "Findings")) == 6


@pytest.mark.parametrize(
    ("text", "cell_text"),
    [
        ("a|b", "a\\|b"),
        ("[click](https://example.com)", "\\[click\\](https://example.com)"),
        ("<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"),
        ("&amp; stays text", "&amp;amp; stays text"),
        ("*b* _i_ `c` ~s~ $x$ \\", "\\*b\\* \\_i\\_ \\`c\\` \\~s\\~ \\$x\\$ \\\\"),
        ("one\ntwo\r\nthree\rfour", "one<br>two<br>three<br>four"),
        ("bell\x07 esc\x1b", "bell\\\\x07 esc\\\\x1b"),
        ("rtx-n0/gpu0<->rtx-n0/cpu0", "rtx-n0/gpu0&lt;-&gt;rtx-n0/cpu0"),
    ],
)
def test_cells_render_inputs_as_literal_text(text: str, cell_text: str) -> None:
    assert cell(text) == cell_text


def _report(n: int, message: str = "m", waived: int = 0) -> VerifyReport:
    results = [
        Result(Finding("R1", "error", (f"gpu{i}",), message, SourceLocation("inv.yaml", i + 1, 3)), f"{i}")
        for i in range(n)
    ]
    w = Waiver("R1", "*", "ok", date(2030, 1, 1), SourceLocation("waivers.yaml", 2, 5))
    results += [
        Result(Finding("R1", "error", (f"w{i}",), message, SourceLocation("inv.yaml", 1, 1)), f"w{i}", w)
        for i in range(waived)
    ]
    return VerifyReport(inventories=("inv.yaml",), checks=[], results=results, fail_on="error")


def test_a_message_with_table_syntax_stays_in_its_cell() -> None:
    text = markdown_report.render(_report(1, message="x | y\n| z | w |"))
    (row,) = _table(text, "Findings")
    assert row == ["error", "R1", "gpu0", "x \\| y<br>\\| z \\| w \\|", "inv.yaml:1:3"]


def test_step_summary_is_written_only_when_actions_names_a_file(tmp_path: Path) -> None:
    report = waived_report()
    assert append_step_summary(report, {}) is False
    assert append_step_summary(report, {"GITHUB_STEP_SUMMARY": ""}) is False
    page = tmp_path / "summary.md"
    assert append_step_summary(report, {"GITHUB_STEP_SUMMARY": str(page)}) is True
    assert page.read_text(encoding="utf-8") == report_of(*WAIVED_RUN, fmt="markdown")


def test_step_summary_appends_after_what_earlier_steps_wrote(tmp_path: Path) -> None:
    page = tmp_path / "summary.md"
    report = _report(1)
    for earlier in ("# Build\nall green", "# Build\nall green\n"):
        page.write_text(earlier, encoding="utf-8")
        assert append_step_summary(report, {"GITHUB_STEP_SUMMARY": str(page)})
        assert page.read_text(encoding="utf-8") == "# Build\nall green\n\n" + markdown_report.render(report)


def test_step_summary_that_cannot_be_written_is_a_topolog_error(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "summary.md"
    with pytest.raises(TopologError, match="cannot write step summary") as caught:
        append_step_summary(_report(1), {"GITHUB_STEP_SUMMARY": str(target)})
    assert caught.value.diagnostics[0].location.file == str(target)


def test_step_summary_stops_long_tables(tmp_path: Path) -> None:
    page = tmp_path / "summary.md"
    report = _report(STEP_SUMMARY_ROWS + 100, waived=3)
    append_step_summary(report, {"GITHUB_STEP_SUMMARY": str(page)})
    text = page.read_text(encoding="utf-8")
    assert len(_table(text, "Findings")) == STEP_SUMMARY_ROWS
    assert "100 more not shown here" in text
    assert len(_table(text, "Waived findings")) == 3
    # The report itself, for a file of its own, lists everything.
    assert len(_table(markdown_report.render(report), "Findings")) == STEP_SUMMARY_ROWS + 100


def test_step_summary_stays_under_githubs_size_limit(tmp_path: Path) -> None:
    page = tmp_path / "summary.md"
    report = _report(300, message="x" * 10_000)  # 3 MB of messages
    append_step_summary(report, {"GITHUB_STEP_SUMMARY": str(page)})
    size = page.stat().st_size
    assert 800_000 < size < 1024 * 1024
    rows = len(_table(page.read_text(encoding="utf-8"), "Findings"))
    assert f"{300 - rows} more not shown here" in page.read_text(encoding="utf-8")
