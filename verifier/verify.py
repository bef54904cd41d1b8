"""`topolog verify`: every check's rows become findings, located in the inventory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from verifier.checks import Check
from verifier.findings import Finding, Severity, count_by_severity, fails, sort_findings
from verifier.model import LoadedModel, load_model
from verifier.progress import Progress

MAX_PROOFS = 500
"""Proofs cost a few engine queries each; past this many findings the rest carry none."""


@dataclass
class VerifyReport:
    inventories: tuple[str, ...]
    checks: list[Check]
    findings: list[Finding]
    fail_on: Severity
    proofs_omitted: int = 0
    counts: dict[Severity, int] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return fails(self.findings, self.fail_on)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def collect_findings(model: LoadedModel, with_proofs: bool) -> tuple[list[Finding], int]:
    findings: list[Finding] = []
    for check in model.checks:
        for row in model.engine.query(check.reports):
            subjects = check.subjects_of(row)
            location = next(
                (loc for loc in (model.inventory.location(s) for s in subjects) if loc is not None), None
            )
            findings.append(Finding(check.id, check.severity, subjects, check.message_for(row), location))
    findings = sort_findings(findings)
    omitted = 0
    if with_proofs:
        proved: list[Finding] = []
        for i, f in enumerate(findings):
            if i >= MAX_PROOFS:
                omitted += 1
                proved.append(f)
                continue
            check = next(c for c in model.checks if c.id == f.rule)
            row = _row_of(model, check, f)
            proof = model.engine.explain(check.reports, row)
            proved.append(Finding(f.rule, f.severity, f.subjects, f.message, f.location, proof))
        findings = proved
    return findings, omitted


def _row_of(model: LoadedModel, check: Check, finding: Finding) -> tuple[str | int, ...]:
    bound = dict(zip(check.subjects, finding.subjects, strict=True))
    for row in model.engine.query(check.reports, bound):
        if check.message_for(row) == finding.message:
            return row
    raise AssertionError(f"finding {finding} vanished from {check.reports}")  # pragma: no cover


def verify(
    inventory_paths: Sequence[Path],
    rules_paths: Sequence[Path] | None = None,
    engine: str = "duckdb",
    fail_on: Severity = "error",
    with_proofs: bool = False,
    progress: Progress | None = None,
) -> VerifyReport:
    model = load_model(inventory_paths, rules_paths, engine, progress)
    if progress is not None:
        progress.step("collecting findings")
    try:
        findings, omitted = collect_findings(model, with_proofs)
    finally:
        model.engine.close()
    return VerifyReport(
        inventories=tuple(str(p) for p in inventory_paths),
        checks=model.checks,
        findings=findings,
        fail_on=fail_on,
        proofs_omitted=omitted,
        counts=count_by_severity(findings),
    )
