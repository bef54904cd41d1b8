"""JSON report, schema version 1 (documented, with its JSON Schema, in docs/report-json.md).

Keys are sorted and findings are in report order, so the same inputs give
byte-identical output. New keys may be added within a version; removing, renaming or
retyping one bumps `schemaVersion`.
"""

from __future__ import annotations

from verifier.checks.settings import RunSettings
from verifier.checks.verify import Result, VerifyReport
from verifier.core.version import __version__
from verifier.reports import indented_json

SCHEMA_VERSION = 1


def _result(r: Result) -> dict[str, object]:
    out = r.finding.to_dict()
    out["fingerprint"] = r.fingerprint
    if r.waiver is not None:
        w = r.waiver
        out["waiver"] = {
            "reason": w.reason,
            "expires": w.expires.isoformat(),
            "location": {"file": w.location.file, "line": w.location.line},
        }
    return out


def settings_doc(settings: RunSettings) -> dict[str, object]:
    """The run's configuration (verifier.checks.settings) as the JSON report's `configuration` key."""
    kept = settings.checks_kept
    return {
        "file": settings.config_file,
        "foundAbove": settings.config_above,
        "settings": [
            {
                "option": s.option,
                "value": s.value,
                "location": {"file": s.where.file, "line": s.where.line},
            }
            for s in settings.from_config
        ],
        "checksKept": None if kept is None else {"kept": list(kept.kept), "loaded": kept.loaded},
        "waiverDate": settings.waiver_date.isoformat() if settings.waiver_date is not None else None,
        "waiverDateFrom": settings.waiver_date_from or None,
    }


def render(report: VerifyReport) -> str:
    doc = {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "topolog", "version": __version__},
        "inventories": list(report.inventories),
        "failOn": report.fail_on,
        "failed": report.failed,
        "summary": {
            "findings": len(report.findings),
            "bySeverity": dict(report.counts),
            "checks": len(report.checks),
            "notApplicable": list(report.not_applicable),
            "proofsOmitted": report.proofs_omitted,
            "suppressed": len(report.suppressed),
            "baselined": report.baselined,
            "baselineFixed": report.baseline_fixed,
            "authorizationChecked": report.authorization_checked,
            "proofsUnavailable": report.proofs_unavailable,
        },
        "checks": [
            {
                "id": c.id,
                "severity": c.severity,
                "summary": c.summary,
                "remediation": c.remediation,
                "file": c.file,
            }
            for c in report.checks
        ],
        "configuration": settings_doc(report.settings),
        "findings": [_result(r) for r in report.active],
        "suppressed": [_result(r) for r in report.suppressed],
    }
    # json.dumps's text, written by the C encoder (any indent makes json.dumps encode in Python).
    return indented_json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
