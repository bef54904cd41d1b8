"""`verify --jobs` with a what-if scenario: what the scenario does to each job, as findings.

The verification itself judges the inventory as it is; the scenario's answer (the one
`place --drain ...` prints, verifier.placement.whatif) joins it as findings of three checks
that need no rule, so every report format and `--fail-on` treat them like any other:

- WHATIF001 (error): a job loses its placement;
- WHATIF002 (warning): a job keeps one only at a lower bottleneck;
- WHATIF003 (warning): a Cedar decision on a job's principal changes.

A job that merely moves at the same bottleneck, or is unchanged, is no finding.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from verifier.checks.baseline import fingerprint
from verifier.checks.check import Check
from verifier.checks.findings import Finding
from verifier.checks.verify import Result
from verifier.core.errors import SourceLocation

if TYPE_CHECKING:  # every `verify` reads CHECK_IDS; only one with a what-if needs placement (10-15 ms to import)
    from verifier.placement.place import Placement
    from verifier.placement.whatif import JobChange, WhatIfReport

LOST_ID = "WHATIF001"
SLOWER_ID = "WHATIF002"
DECISION_ID = "WHATIF003"
CHECK_IDS = (LOST_ID, SLOWER_ID, DECISION_ID)
SHOWN_GPUS = 8
"""GPUs named in a WHATIF003 message."""


def whatif_checks(file: str) -> list[Check]:
    """The three checks a scenario adds, so SARIF rules and JUnit test cases describe them."""
    return [
        Check.without_rule(
            LOST_ID,
            "error",
            "Under the what-if scenario a job fits nowhere that it fits today.",
            "Keep that hardware in service until the job runs elsewhere, or free capacity it may use "
            "(`topolog place --why-not` on the changed inventory names what each domain misses).",
            file,
        ),
        Check.without_rule(
            SLOWER_ID,
            "warning",
            "Under the what-if scenario a job keeps a placement only at a lower bottleneck bandwidth.",
            "Accept the slower placement for the scenario's duration, or keep the hardware it needs in service.",
            file,
        ),
        Check.without_rule(
            DECISION_ID,
            "warning",
            "The what-if scenario changes which GPUs a job's principal may schedule on (a policy reads state).",
            "Check that the policies reading the hardware's state decide as intended for drained and failed hardware.",
            file,
        ),
    ]


def whatif_results(report: WhatIfReport, located: Mapping[str, SourceLocation]) -> list[Result]:
    """A finding per job the scenario costs its placement, slows, or changes a decision for."""
    scenario = ", ".join(report.changes)
    values = (("scenario", scenario),)
    out: list[Result] = []
    for c in sorted(report.jobs, key=lambda c: c.job):
        where = located.get(c.job)
        if c.outcome == "loses" and c.before is not None:
            msg = (
                f"job {c.job} loses its placement if {scenario}: it has {_where(c.before)} today, "
                f"and {c.hosting_before} hosting domain{'s' if c.hosting_before != 1 else ''} become none"
            )
            out.append(_result(Finding(LOST_ID, "error", (c.job,), msg, where), values))
        elif c.outcome == "slower" and c.before is not None and c.after is not None:
            msg = (
                f"job {c.job} keeps a placement at a lower bottleneck if {scenario}: "
                f"{_where(c.before)} -> {_where(c.after)}"
            )
            out.append(_result(Finding(SLOWER_ID, "warning", (c.job,), msg, where), values))
        out.extend(_decision(c, scenario, where, values))
    return out


def _decision(
    c: JobChange, scenario: str, where: SourceLocation | None, values: tuple[tuple[str, str], ...]
) -> list[Result]:
    allowed = c.permitted
    if allowed is None or not allowed.changed:
        return []
    parts = []
    if allowed.revoked:
        parts.append(f"denied now: {_names(allowed.revoked)}")
    if allowed.granted:
        parts.append(f"allowed now: {_names(allowed.granted)}")
    msg = (
        f"{c.principal} (job {c.job}) may schedule on {len(allowed.after)} GPUs if {scenario} "
        f"(today {len(allowed.before)}): {'; '.join(parts)}"
    )
    return [_result(Finding(DECISION_ID, "warning", (c.job, c.principal), msg, where), values)]


def _result(finding: Finding, values: tuple[tuple[str, str], ...]) -> Result:
    return Result(finding, fingerprint(finding.rule, finding.subjects, values))


def _where(p: Placement) -> str:
    from verifier.placement.place import rate_text

    bw = rate_text(p.bottleneck_mbps) if p.bottleneck_mbps is not None else "no GPU pair"
    return f"{p.domain} at {bw}"


def _names(gpus: list[str]) -> str:
    more = f" and {len(gpus) - SHOWN_GPUS} more" if len(gpus) > SHOWN_GPUS else ""
    return ", ".join(gpus[:SHOWN_GPUS]) + more
