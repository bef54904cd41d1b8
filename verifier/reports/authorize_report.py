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
    return json.dumps(decision_doc(report), indent=2, sort_keys=True) + "\n"


def decision_doc(report: AuthorizeReport) -> dict[str, object]:
    """The JSON document of `render_json`, as Python values, its keys in the order it writes them
    (sorted; the service answers with it, without writing and reading back the text).
    """
    request, d = report.request, report.decision
    context = request.context
    return {
        "action": request.action,
        "context": json.loads(json.dumps(context, sort_keys=True)) if context else context,
        "decision": d.word,
        "errors": [{"message": m, "policy": p} for p, m in d.errors],
        "policies": [{"effect": report.effects[r], "id": r} for r in d.reasons],
        "principal": request.principal,
        "resource": request.resource,
    }


FORMATS = {"text": render_text, "json": render_json}
