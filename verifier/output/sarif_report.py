"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; `tool.driver.rules` carries each check's id, summary and remediation; each
result points at the inventory file:line of its finding, carries topolog's fingerprint
in `partialFingerprints` (so alerts follow a finding across line moves), and a waived
finding is kept with a `suppressions` entry rather than dropped.
"""

from __future__ import annotations

import json
from pathlib import PurePath
from urllib.parse import quote

from verifier import __version__
from verifier.baseline import FINGERPRINT_KEY
from verifier.errors import SourceLocation
from verifier.findings import Severity
from verifier.verify import Result, VerifyReport

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS: dict[Severity, str] = {"error": "error", "warning": "warning", "note": "note"}


def _artifact(file: str) -> dict[str, object]:
    path = PurePath(file)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    # Relative to the directory topolog ran in, which in CI is the checkout root (%SRCROOT%).
    return {"uri": quote(path.as_posix()), "uriBaseId": "%SRCROOT%"}


def _location(loc: SourceLocation) -> dict[str, object]:
    physical: dict[str, object] = {"artifactLocation": _artifact(loc.file)}
    if loc.line > 0:
        region: dict[str, int] = {"startLine": loc.line}
        if loc.col > 0:
            region["startColumn"] = loc.col
        physical["region"] = region
    return {"physicalLocation": physical}


def _result(r: Result, rule_index: dict[str, int], fallback: SourceLocation) -> dict[str, object]:
    f = r.finding
    out: dict[str, object] = {
        "ruleId": f.rule,
        "level": LEVELS[f.severity],
        "message": {"text": f"{f.message} [{', '.join(f.subjects)}]"},
        # Code scanning needs a location on every result; a finding without one points at the inventory.
        "locations": [_location(f.location or fallback)],
        "partialFingerprints": {FINGERPRINT_KEY: r.fingerprint},
        "properties": {"subjects": list(f.subjects)},
    }
    if f.rule in rule_index:
        out["ruleIndex"] = rule_index[f.rule]
    if r.waiver is not None:
        w = r.waiver
        out["suppressions"] = [{
            "kind": "external",
            "status": "accepted",
            "justification": f"{w.reason} (waived until {w.expires.isoformat()})",
            "location": _location(w.location),
        }]
    return out


def render(report: VerifyReport) -> str:
    rules = [
        {
            "id": c.id,
            "shortDescription": {"text": c.summary},
            "fullDescription": {"text": c.summary},
            "help": {
                "text": f"Remediation: {c.remediation}",
                "markdown": f"**Remediation:** {c.remediation}\n\nDefined in `{c.file}`.",
            },
            "defaultConfiguration": {"level": LEVELS[c.severity]},
            "properties": {"tags": ["topolog", "infrastructure"], "file": c.file},
        }
        for c in report.checks
    ]
    rule_index = {c.id: i for i, c in enumerate(report.checks)}
    fallback = SourceLocation(report.inventories[0] if report.inventories else "", 1)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "topolog",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": [_result(r, rule_index, fallback) for r in report.results],
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
