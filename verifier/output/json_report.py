"""JSON report, schema version 1 (documented in docs/report-json.md).

Keys are sorted and findings are in report order, so the same inputs give
byte-identical output.
"""

from __future__ import annotations

import json

from verifier import __version__
from verifier.verify import VerifyReport

SCHEMA_VERSION = 1


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
            "proofsOmitted": report.proofs_omitted,
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
        "findings": [f.to_dict() for f in report.findings],
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
