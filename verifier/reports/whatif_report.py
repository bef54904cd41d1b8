"""What a change does to each job (`place --drain ...`, `diff --jobs`), as text and as JSON."""

from __future__ import annotations

import json

from verifier.placement.place import Placement, rate_text
from verifier.placement.whatif import OUTCOMES, JobChange, WhatIfReport
from verifier.reports.text_report import NOT_AUTHORIZED

SHOWN_GPUS = 8
"""GPUs named per changed decision in text (JSON names them all)."""

_SAYS = {
    "loses": "loses its placement",
    "slower": "keeps a placement at a lower bottleneck",
    "moved": "moves, same bottleneck",
    "unchanged": "unchanged",
    "faster": "keeps a placement at a higher bottleneck",
    "gains": "gains a placement",
    "unplaceable": "fits nowhere, before and after",
}


def ordered(report: WhatIfReport) -> list[JobChange]:
    """Worst outcome first, then by job name."""
    return sorted(report.jobs, key=lambda c: (OUTCOMES.index(c.outcome), c.job))


def _where(p: Placement) -> str:
    bw = rate_text(p.bottleneck_mbps) if p.bottleneck_mbps is not None else "no GPU pair"
    cost = f"${p.cost_millicents_per_hour / 100_000:.2f}/h" if p.cost_millicents_per_hour is not None else "n/a"
    return f"{p.domain} (bottleneck {bw}, {p.nodes} node{'s' if p.nodes != 1 else ''}, {cost})"


def _gpus(gpus: list[str]) -> str:
    shown = ", ".join(gpus[:SHOWN_GPUS])
    return shown + (f" and {len(gpus) - SHOWN_GPUS} more" if len(gpus) > SHOWN_GPUS else "")


def job_lines(report: WhatIfReport) -> list[str]:
    """One block per job: its outcome, its best placement on each side, changed decisions."""
    lines: list[str] = []
    for c in ordered(report):
        says = _SAYS[c.outcome]
        if c.never:  # no change can place it: say why, as `place` does (PLACE002)
            says = f"can never run on any node (PLACE002: {'; '.join(c.never)})"
        head = f"job {c.job} ({c.principal}): {says}"
        if c.hosting_before != c.hosting_after:
            head += f"; hosting domains {c.hosting_before} -> {c.hosting_after}"
        lines.append(head)
        if c.before is not None and c.after is not None and c.outcome == "unchanged":
            lines.append(f"  on {_where(c.after)}")
        else:
            if c.before is not None:
                lines.append(f"  before: {_where(c.before)}")
            if c.after is not None:
                lines.append(f"  after:  {_where(c.after)}")
        allowed = c.permitted
        if allowed is not None and allowed.changed:
            lines.append(
                f"  authorization: {c.principal} may schedule on {len(allowed.after)} GPUs (was {len(allowed.before)})"
            )
            if allowed.revoked:
                lines.append(f"    denied now: {_gpus(allowed.revoked)}")
            if allowed.granted:
                lines.append(f"    allowed now: {_gpus(allowed.granted)}")
    return lines


def summary_line(report: WhatIfReport) -> str:
    counts = [f"{len(report.named(o))} {o}" for o in OUTCOMES]
    decided = sum(1 for c in report.jobs if c.permitted is not None and c.permitted.changed)
    n = len(report.jobs)
    return f"{n} job{'s' if n != 1 else ''}: {', '.join(counts)}; {decided} with changed authorization decisions"


def render_text(report: WhatIfReport) -> str:
    lines = [f"what if: {', '.join(report.changes)} (placements ranked by {report.rank})"]
    lines.extend(job_lines(report))
    lines.append(summary_line(report))
    if not report.authorization_checked:
        lines.append(NOT_AUTHORIZED)
    return "\n".join(lines) + "\n"


def job_docs(report: WhatIfReport) -> list[dict[str, object]]:
    """The jobs as JSON objects, worst outcome first."""
    docs: list[dict[str, object]] = []
    for c in ordered(report):
        allowed = c.permitted
        docs.append(
            {
                "job": c.job,
                "principal": c.principal,
                "outcome": c.outcome,
                "before": c.before.to_dict() if c.before is not None else None,
                "after": c.after.to_dict() if c.after is not None else None,
                "hosting_before": c.hosting_before,
                "hosting_after": c.hosting_after,
                "never": list(c.never),
                "authorization": None
                if allowed is None
                else {
                    "gpus_before": len(allowed.before),
                    "gpus_after": len(allowed.after),
                    "denied_now": allowed.revoked,
                    "allowed_now": allowed.granted,
                },
            }
        )
    return docs


def summary_doc(report: WhatIfReport) -> dict[str, int]:
    return {o: len(report.named(o)) for o in OUTCOMES}


def render_json(report: WhatIfReport) -> str:
    doc = {
        "changes": report.changes,
        "rank": report.rank,
        "authorizationChecked": report.authorization_checked,
        "jobs": job_docs(report),
        "summary": summary_doc(report),
        "lost": sorted(report.lost),
    }
    return json.dumps(doc, indent=2) + "\n"


FORMATS = {"text": render_text, "json": render_json}
