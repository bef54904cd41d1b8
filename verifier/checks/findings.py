"""Findings: what a check reports about the inventory, and the exit-code policy."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from verifier.core.errors import SourceLocation
from verifier.core.frozen import Frozen
from verifier.engine.backend import Proof

Severity = Literal["error", "warning", "note"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "note")
_RANK = {s: i for i, s in enumerate(SEVERITIES)}


def severity_rank(severity: Severity) -> int:
    """0 is the most severe."""
    return _RANK[severity]


@dataclass(frozen=True, repr=False, eq=False)
class Finding(Frozen):
    rule: str
    severity: Severity
    subjects: tuple[str, ...]
    message: str
    location: SourceLocation | None
    proof: Proof | None = None

    def sort_key(self) -> tuple[object, ...]:
        loc = self.location or SourceLocation("")
        return (severity_rank(self.severity), self.rule, loc.file, loc.line, self.subjects, self.message)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "rule": self.rule,
            "severity": self.severity,
            "subjects": list(self.subjects),
            "message": self.message,
            "location": None if self.location is None else {"file": self.location.file, "line": self.location.line},
        }
        if self.proof is not None:
            out["proof"] = self.proof.to_dict()
        return out


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=Finding.sort_key)


def fails(findings: Iterable[Finding], fail_on: Severity) -> bool:
    """True when some finding is at least as severe as `fail_on` (exit code 1)."""
    limit = severity_rank(fail_on)
    return any(severity_rank(f.severity) <= limit for f in findings)


def count_by_severity(findings: Iterable[Finding]) -> dict[Severity, int]:
    counts: dict[Severity, int] = {s: 0 for s in SEVERITIES}
    for f in findings:
        counts[f.severity] += 1
    return counts
