"""`topolog test` as text (a line per case, what was missing or unexpected) and as JSON."""

from __future__ import annotations

import json

from verifier.reports.safe_text import one_line
from verifier.session.rule_tests import Outcome, RuleTestReport


def render_outcome(outcome: Outcome) -> list[str]:
    """A case's line, then (when it failed) what was missing and what was not expected."""
    case = outcome.case
    # Paths and findings come from the user's folder: escaped, so one case stays one line.
    lines = [f"{outcome.status:<5} {case.check_id:<10} {one_line(str(case.inventory))}"]
    if outcome.missing:
        lines.append(f"      expected (in {one_line(str(case.expected))}) but not found:")
        lines.extend(f"      - {one_line(line)}" for line in outcome.missing)
    if outcome.unexpected:
        what = "found but not expected" if case.expected is not None else "found, on an inventory that must pass"
        lines.append(f"      {what}:")
        lines.extend(f"      + {one_line(line)}" for line in outcome.unexpected)
    return lines


def render_text(report: RuleTestReport) -> str:
    """A line per case (why a case could not run is for stderr, as every error is)."""
    lines: list[str] = []
    for outcome in report.outcomes:
        lines.extend(render_outcome(outcome))
    n = len(report.outcomes)
    summary = f"{n} {'case' if n == 1 else 'cases'}: {report.count('PASS')} passed, {report.count('FAIL')} failed"
    if report.count("ERROR"):
        summary += f", {report.count('ERROR')} could not run"
    lines.append(f"{summary} (engine {report.engine})")
    return "\n".join(lines) + "\n"


def render_json(report: RuleTestReport) -> str:
    doc = {
        "engine": report.engine,
        "cases": [
            {
                "check": o.case.check_id,
                "inventory": str(o.case.inventory),
                "expected": str(o.case.expected) if o.case.expected is not None else None,
                "status": o.status,
                "missing": list(o.missing),
                "unexpected": list(o.unexpected),
                "errors": list(o.errors),
            }
            for o in report.outcomes
        ],
        "warnings": report.warnings,
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


FORMATS = {"text": render_text, "json": render_json}
