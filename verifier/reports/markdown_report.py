"""Markdown for people: a GitHub job summary ($GITHUB_STEP_SUMMARY), a merge-request note, a wiki.

The verdict and the counts, then one table row per finding that counts (severity, rule,
subjects, message, file:line), then the waived findings with their waivers in a table of
their own. Table cells are escaped, so text from the inputs renders as the text it is:
no cell break from `|`, no row break from a newline, no bracketed link or image, no emphasis,
no HTML tag (bare URLs still become links, as GitHub makes them anywhere).

GitHub refuses a step summary over 1 MiB, so `append_step_summary` stops each table at
STEP_SUMMARY_ROWS rows and keeps the whole under STEP_SUMMARY_BYTES, saying how many rows
were left out; `render` (for `--format markdown`) lists everything.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from verifier.checks.findings import Finding
from verifier.checks.verify import Result, VerifyReport
from verifier.core.errors import SourceLocation, TopologError
from verifier.reports.safe_text import markdown_cell as cell
from verifier.reports.safe_text import one_line
from verifier.reports.text_report import summary

STEP_SUMMARY_ROWS = 500
STEP_SUMMARY_BYTES = 900_000
"""Below GitHub's 1 MiB per step, with room for the heading and the other table."""


def _settings(report: VerifyReport) -> list[str]:
    """What shaped the run (verifier.checks.settings); checks a configuration left out as a warning."""
    s = report.settings
    kept = s.checks_line()
    lines = [
        cell(s.config_line() or ""),
        f"**Warning:** {cell(kept)}" if kept is not None else "",
        cell(s.date_line() or ""),
    ]
    return [line for line in lines if line]


def _where(f: Finding) -> str:
    # A path is one line as the text format writes it (\x0a, not a <br>), then escaped as a cell.
    return one_line(str(f.location)) if f.location is not None else "-"


def _row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _finding_row(r: Result) -> str:
    f = r.finding
    return _row([f.severity, cell(f.rule), cell(", ".join(f.subjects)), cell(f.message), cell(_where(f))])


def _waived_row(r: Result) -> str:
    f, w = r.finding, r.waiver
    assert w is not None
    waiver = f"until {w.expires.isoformat()} ({one_line(str(w.location))}): {w.reason}"
    return _row([f.severity, cell(f.rule), cell(", ".join(f.subjects)), cell(f.message), cell(_where(f)), cell(waiver)])


def _table(head: list[str], rows: list[str], max_rows: int | None, budget: int | None) -> list[str]:
    """The table, stopped at `max_rows` rows or when the next row would pass `budget` bytes."""
    lines = [_row(head), _row(["---"] * len(head))]
    used = sum(len(line.encode("utf-8")) + 1 for line in lines)
    shown = 0
    for row in rows:
        size = len(row.encode("utf-8")) + 1
        if (max_rows is not None and shown >= max_rows) or (budget is not None and used + size > budget):
            break
        lines.append(row)
        used += size
        shown += 1
    if shown < len(rows):
        lines += ["", f"{len(rows) - shown} more not shown here; the SARIF, JUnit or JSON report lists every one."]
    return lines


def _document(report: VerifyReport, max_rows: int | None, budget: int | None) -> str:
    verdict = "failed" if report.failed else "passed"
    counts = report.counts
    lines = [
        f"## topolog verify: {verdict}",
        "",
        # topolog's own words and numbers, nothing from the inputs: no escaping needed.
        *(part for line in summary(report, with_settings=False) for part in (line, "")),
        # These name the configuration file, a path from outside: escaped like a cell.
        *(part for line in _settings(report) for part in (line, "")),
        _row(["error", "warning", "note", "waived"]),
        _row(["---:"] * 4),
        _row(
            [
                str(counts.get("error", 0)),
                str(counts.get("warning", 0)),
                str(counts.get("note", 0)),
                str(len(report.suppressed)),
            ]
        ),
        "",
    ]
    active, waived = report.active, report.suppressed
    half = None if budget is None else budget // 2 if waived else budget
    if active:
        lines += ["### Findings", ""]
        lines += _table(
            ["severity", "rule", "subjects", "message", "location"], [_finding_row(r) for r in active], max_rows, half
        )
        lines.append("")
    else:
        lines += ["No findings.", ""]
    if waived:
        lines += ["### Waived findings", ""]
        lines += _table(
            ["severity", "rule", "subjects", "message", "location", "waiver"],
            [_waived_row(r) for r in waived],
            max_rows,
            half,
        )
        lines.append("")
    return "\n".join(lines)


def render(report: VerifyReport) -> str:
    return _document(report, None, None)


def append_step_summary(report: VerifyReport, environ: Mapping[str, str]) -> bool:
    """Append the report to the file named by GITHUB_STEP_SUMMARY; False (nothing written) when unset.

    A summary that cannot be written is bad input (TopologError, exit 2), as a report
    that cannot be written is.
    """
    path = environ.get("GITHUB_STEP_SUMMARY", "")
    if not path:
        return False
    text = _document(report, STEP_SUMMARY_ROWS, STEP_SUMMARY_BYTES)
    try:
        with open(path, "a+b") as out:
            # An earlier step may have written here already: a blank line keeps ours a block of its own.
            if out.tell() > 0:
                out.seek(-1, os.SEEK_END)
                text = ("\n" if out.read(1) == b"\n" else "\n\n") + text
            out.write(text.encode("utf-8"))
    except OSError as err:
        raise TopologError.at(SourceLocation(path), f"cannot write step summary: {err.strerror or err}") from None
    return True
