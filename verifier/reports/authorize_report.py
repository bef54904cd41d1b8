"""`topolog authorize` as text and as JSON."""

from __future__ import annotations

import json

from verifier.authorization.requests import AuthorizeReport


def render_text(report: AuthorizeReport) -> str:
    request, d = report.request, report.decision
    lines = [f"{d.word}  {request.principal} {request.action} {request.resource}"]
    if request.context:
        lines[0] += f"  context {json.dumps(request.context, sort_keys=True)}"
    if d.errors:
        for policy, message in d.errors:
            lines.append(f"  finding: policy {policy or '?'} failed; the request is denied (fail closed): {message}")
    if d.reasons:
        decided = ", ".join(f"{r} ({report.effects[r]})" for r in d.reasons)
        lines.append(f"  decided by: {decided}")
    elif not d.errors:
        lines.append("  decided by: no policy permits it (default deny)")
    return "\n".join(lines) + "\n"


def render_json(report: AuthorizeReport) -> str:
    request, d = report.request, report.decision
    doc = {
        "decision": d.word,
        "principal": request.principal,
        "action": request.action,
        "resource": request.resource,
        "context": request.context,
        "policies": [{"id": r, "effect": report.effects[r]} for r in d.reasons],
        "errors": [{"policy": p, "message": m} for p, m in d.errors],
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


FORMATS = {"text": render_text, "json": render_json}
