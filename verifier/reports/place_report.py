"""`topolog place` as text and as JSON."""

from __future__ import annotations

import json

from verifier.placement.place import PlaceReport, rate_text
from verifier.reports.text_report import NOT_AUTHORIZED


def render_text(report: PlaceReport) -> str:
    lines: list[str] = []
    for jp in report.jobs:
        job = jp.job
        size = f"{job.gpus} MIG {job.mig} instances" if job.mig is not None else f"{job.gpus} GPUs"
        lines.append(
            f"job {job.name} ({job.principal}, {size}, scope {job.scope}): "
            f"{jp.hosting} placement{'s' if jp.hosting != 1 else ''}"
            f" of {jp.candidates} candidate domains"
            + (f" (the best {len(jp.placements)} shown)" if len(jp.placements) < jp.hosting else "")
        )
        if not jp.placements:
            lines.append("  error PLACE001: fits nowhere")
        for i, p in enumerate(jp.placements, 1):
            bw = rate_text(p.bottleneck_mbps) if p.bottleneck_mbps is not None else "n/a"
            cost = f"${p.cost_millicents_per_hour / 100_000:.2f}/h" if p.cost_millicents_per_hour is not None else "n/a"
            lines.append(f"  {i}. {p.domain}: bottleneck {bw}, {p.nodes} node{'s' if p.nodes != 1 else ''}, {cost}")
            lines.append(f"     gpus: {', '.join(p.gpus)}")
        for w in jp.why_not:
            lines.append(f"  why not {w.message}")
    placed = sum(1 for jp in report.jobs if jp.placements)
    lines.append(f"{placed} of {len(report.jobs)} jobs placeable (ranked by {report.rank})")
    if not report.authorization_checked:
        lines.append(NOT_AUTHORIZED)
    return "\n".join(lines) + "\n"


def render_json(report: PlaceReport) -> str:
    doc = {
        "rank": report.rank,
        "authorizationChecked": report.authorization_checked,
        "jobs": [
            {
                "job": jp.job.name,
                "principal": jp.job.principal,
                "gpus": jp.job.gpus,
                "mig": jp.job.mig,
                "scope": jp.job.scope,
                "candidates": jp.candidates,
                "hosting": jp.hosting,
                "placeable": bool(jp.placements),
                "placements": [p.to_dict() for p in jp.placements],
                "why_not": [w.to_dict() for w in jp.why_not],
            }
            for jp in report.jobs
        ],
        "unplaceable": report.unplaceable,
    }
    return json.dumps(doc, indent=2, sort_keys=False) + "\n"


FORMATS = {"text": render_text, "json": render_json}
