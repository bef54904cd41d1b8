"""`topolog verify`: every check's rows become findings, located in the inventory.

Then waivers mark findings as suppressed (they stay in the report), and a baseline
drops the findings a team already knew about when it adopted topolog.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from verifier.checks.baseline import Baseline, fingerprint
from verifier.checks.check import Check, CheckSelection
from verifier.checks.findings import Finding, Severity, count_by_severity, fails
from verifier.checks.waivers import (
    EXPIRED_ID,
    UNUSED_ID,
    Waiver,
    WaiverFile,
    check_rule_ids,
    expired_finding,
    unused_finding,
    waiver_checks,
)
from verifier.core.errors import SourceLocation
from verifier.core.progress import Progress
from verifier.engine.ast import Row
from verifier.session.model import LoadedModel, load_model, load_rules
from verifier.sources.inventory.clusters import ClusterFiles, cluster_files, several_clusters

_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]+)\}")

MAX_PROOFS = 500
"""Proofs cost a few engine queries each; past this many findings the rest carry none."""


@dataclass(frozen=True)
class Result:
    """A finding as reported: its fingerprint, and the waiver that suppresses it, if any."""

    finding: Finding
    fingerprint: str
    waiver: Waiver | None = None


@dataclass
class VerifyReport:
    inventories: tuple[str, ...]
    checks: list[Check]
    results: list[Result]
    """Active and waived findings in report order; baselined ones are not here."""
    fail_on: Severity
    proofs_omitted: int = 0
    baselined: int = 0
    """Findings left out because their fingerprint is in the baseline."""
    baseline_fixed: int = 0
    """Baseline entries that no longer occur (fixed since the baseline was written)."""

    @property
    def active(self) -> list[Result]:
        return [r for r in self.results if r.waiver is None]

    @property
    def suppressed(self) -> list[Result]:
        return [r for r in self.results if r.waiver is not None]

    @property
    def findings(self) -> list[Finding]:
        """The findings that count: neither waived nor in the baseline."""
        return [r.finding for r in self.active]

    @property
    def counts(self) -> dict[Severity, int]:
        return count_by_severity(self.findings)

    @property
    def failed(self) -> bool:
        return fails(self.findings, self.fail_on)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def finding_fingerprint(check: Check, row: Row) -> str:
    """Rule, subjects, and the values the message quotes that are not subjects (see verifier.checks.baseline)."""
    quoted = set(_PLACEHOLDER.findall(check.message))
    values = [
        (name, str(v))
        for i, (name, v) in enumerate(zip(check.columns, row, strict=True))
        if name in quoted and i not in check.subjects
    ]
    return fingerprint(check.id, check.subjects_of(row), values)


def collect_results(
    model: LoadedModel,
    with_proofs: bool,
    elsewhere: Mapping[str, SourceLocation] | None = None,
) -> tuple[list[Result], int]:
    """Every check's findings with fingerprints, sorted; proofs for the first MAX_PROOFS.

    A finding is located at its first subject written in the inventory, else at one that
    `elsewhere` places (a team in the principals file, a job in its job file), else at the
    inventory file itself.
    """
    inv = model.inventory
    extra = elsewhere or {}

    def written(subject: str) -> SourceLocation | None:
        if subject in inv.objects or subject in inv.links or subject in inv.models or subject in inv.templates:
            return inv.location(subject)
        return extra.get(subject)

    found: list[tuple[Result, Check, Row]] = []
    for check in model.checks:
        for row in model.engine.query(check.reports):
            subjects = check.subjects_of(row)
            location = next((loc for loc in map(written, subjects) if loc is not None), None)
            if location is None and subjects:
                location = inv.location(subjects[0])
            finding = Finding(check.id, check.severity, subjects, check.message_for(row), location)
            found.append((Result(finding, finding_fingerprint(check, row)), check, row))
    found.sort(key=lambda item: item[0].finding.sort_key())
    if not with_proofs:
        return [result for result, _check, _row in found], 0
    # The row each finding came from is kept, so its proof is asked for directly.
    results = [
        replace(result, finding=replace(result.finding, proof=model.engine.explain(check.reports, row)))
        if i < MAX_PROOFS
        else result
        for i, (result, check, row) in enumerate(found)
    ]
    return results, max(0, len(found) - MAX_PROOFS)


def collect_findings(model: LoadedModel, with_proofs: bool) -> tuple[list[Finding], int]:
    results, omitted = collect_results(model, with_proofs)
    return [r.finding for r in results], omitted


def apply_waivers(results: list[Result], waivers: WaiverFile, today: date, check_ids: set[str]) -> list[Result]:
    """Mark waived results; add a finding per expired waiver and per waiver that matches nothing.

    A waiver naming a rule id that no check has is bad input (TopologError), not a finding.
    """
    check_rule_ids(waivers, check_ids)
    live = [w for w in waivers.waivers if not w.expired(today)]
    used: set[Waiver] = set()
    out: list[Result] = []
    for r in results:
        matching = [w for w in live if w.matches(r.finding)]
        used.update(matching)
        # The first matching waiver in file order is the one reported; later ones are still "used".
        out.append(replace(r, waiver=matching[0]) if matching else r)
    for w in waivers.waivers:
        if w.expired(today):
            out.append(Result(*expired_finding(w)))
        elif w not in used:
            out.append(Result(*unused_finding(w, check_ids)))
    out.sort(key=lambda r: r.finding.sort_key())
    return out


def apply_baseline(results: list[Result], baseline: Baseline) -> tuple[list[Result], int, int]:
    """Drop active rule findings whose fingerprint is in the baseline: (kept, dropped, entries fixed)."""
    kept: list[Result] = []
    seen: set[str] = set()
    for r in results:
        seen.add(r.fingerprint)
        # Waived findings stay visible as waived, and waiver findings must never be baselined away.
        if r.waiver is None and r.fingerprint in baseline.fingerprints and not _is_waiver_finding(r):
            continue
        kept.append(r)
    return kept, len(results) - len(kept), len(baseline.fingerprints - seen)


def baseline_entries(report: VerifyReport) -> list[tuple[Finding, str]]:
    """What `--write-baseline` records: rule findings that are not waived (baselined ones included)."""
    return [(r.finding, r.fingerprint) for r in report.active if not _is_waiver_finding(r)]


def _is_waiver_finding(r: Result) -> bool:
    return r.finding.rule in (EXPIRED_ID, UNUSED_ID)


def select_report(report: VerifyReport, selection: CheckSelection) -> VerifyReport:
    """The report of the selected checks only (`--check` / `--skip`), waiver findings included.

    Waivers and the baseline were matched against the whole run, so a waiver of a check
    left out is not called unused; the selection decides only what is reported and counts.
    """
    if selection.everything:
        return report
    return replace(
        report,
        checks=[c for c in report.checks if selection.reports(c.id)],
        results=[r for r in report.results if selection.reports(r.finding.rule)],
    )


def verify(
    inventory_paths: Sequence[Path],
    rules_paths: Sequence[Path] | None = None,
    engine: str = "duckdb",
    fail_on: Severity = "error",
    with_proofs: bool = False,
    progress: Progress | None = None,
    waivers: WaiverFile | None = None,
    today: date | None = None,
    baseline: Baseline | None = None,
    from_kind: str | None = None,
    thresholds: Path | None = None,
    jobs: Sequence[Path] | None = None,
) -> VerifyReport:
    clusters = cluster_files(inventory_paths) if from_kind is None else [ClusterFiles("", tuple(inventory_paths))]
    extra = None
    elsewhere: dict[str, SourceLocation] = {}
    if jobs:  # --jobs: job facts make rules/placement/ judge every job (PLACE001: a job that fits nowhere)
        if len(clusters) > 1:
            raise several_clusters(clusters, "--jobs judges whether each job fits one cluster")
        from verifier.placement.place import placement_facts
        from verifier.sources.jobs.loader import load_jobs

        loaded = load_jobs(jobs)
        extra = placement_facts(loaded)
        elsewhere.update((job.name, job.loc) for job in loaded)
    results: list[Result] = []
    omitted = 0
    model_checks: list[Check] | None = None
    program = load_rules(rules_paths)  # checked once, whatever the number of clusters
    for cluster in clusters:  # each cluster is its own inventory; their findings make one report
        model = load_model(
            list(cluster.paths),
            rules_paths,
            engine,
            progress,
            program=program,
            from_kind=from_kind,
            thresholds=thresholds,
            extra_facts=extra,
        )
        if progress is not None:
            progress.step("collecting findings")
        try:
            from verifier.checks.explain import principals_near

            located = dict(elsewhere)
            principals = principals_near(list(cluster.paths))
            if principals is not None:  # AUTHZ findings name teams: locate them where they are written
                located.update((pid, p.loc) for pid, p in principals.principals.items() if pid not in located)
            found, left_out = collect_results(model, with_proofs, located)
        finally:
            model.engine.close()
        results.extend(found)
        omitted += left_out
        if model_checks is None:
            model_checks = list(model.checks)
    results.sort(key=lambda r: r.finding.sort_key())
    checks = model_checks or []
    if waivers is not None:
        results = apply_waivers(results, waivers, today or date.today(), {c.id for c in checks})
        checks += waiver_checks(waivers)
    baselined = fixed = 0
    if baseline is not None:
        results, baselined, fixed = apply_baseline(results, baseline)
    return VerifyReport(
        inventories=tuple(str(p) for p in inventory_paths),
        checks=checks,
        results=results,
        fail_on=fail_on,
        proofs_omitted=omitted,
        baselined=baselined,
        baseline_fixed=fixed,
    )
