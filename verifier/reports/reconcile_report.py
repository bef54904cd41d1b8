"""`topolog reconcile` as text (a line per disagreement, both places) and as JSON."""

from __future__ import annotations

import json

from verifier.sources.importers.reconcile import ReconcileReport


def render_text(report: ReconcileReport) -> str:
    if not report.items:
        return "The two descriptions agree.\n"
    return "".join(d.text() + "\n" for d in report.items) + f"{len(report.items)} disagreement(s).\n"


def render_json(report: ReconcileReport) -> str:
    return json.dumps({"disagreements": [d.to_dict() for d in report.items]}, indent=2, sort_keys=True) + "\n"


FORMATS = {"text": render_text, "json": render_json}
