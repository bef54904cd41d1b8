"""`diff`: two inventories evaluated with one program, their findings and watched relations compared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from verifier.checks.diff import DiffReport, DiffSide, compare, relabel_error, watched_relations
from verifier.checks.findings import Severity
from verifier.checks.verify import collect_results
from verifier.core.errors import TopologError
from verifier.engine.ast import Program
from verifier.placement.whatif import WhatIfReport
from verifier.placement.whatif import compare as compare_jobs
from verifier.session.inputs import Inputs, authorization_for, read_inventory
from verifier.session.place_run import PlaceSettings, jobs_to_place, placements
from verifier.session.session import PhaseListener, evaluate, load_rules
from verifier.session.side_files import discover
from verifier.sources.jobs.principal_rules import PrincipalRule


def _side(
    paths: Sequence[Path],
    program: Program,
    engine: str,
    relations: Sequence[str],
    progress: PhaseListener | None,
    inputs: Inputs | None = None,
) -> DiffSide:
    inputs = inputs or read_inventory(list(paths), discover(list(paths)))
    # also_read: a watched input relation that no rule reads would otherwise not be loaded at all.
    with evaluate(
        program,
        inputs,
        engine=engine,
        authorization=authorization_for(inputs),
        also_read=relations,
        progress=progress,
    ) as ev:
        results, _ = collect_results(ev.engine, ev.checks, ev.inventory, with_proofs=False)
        rows = {rel: sorted(ev.engine.query(rel)) for rel in relations}
    return DiffSide(tuple(paths), results, rows)


def diff(
    old_paths: Sequence[Path],
    new_paths: Sequence[Path],
    rules_paths: Sequence[Path] | None = None,
    engine: str = "auto",
    extra_relations: Sequence[str] = (),
    fail_on: Severity = "error",
    labels: Mapping[str, str] | None = None,
    progress: PhaseListener | None = None,
) -> DiffReport:
    """Compare two inventories. `labels` renames old-side files (temporary copies) in everything reported."""
    labels = labels or {}
    program = load_rules(rules_paths)
    relations = watched_relations(program, extra_relations)
    try:
        old = _side(old_paths, program, engine, relations, progress)
    except TopologError as err:
        raise relabel_error(err, labels) from None
    new = _side(new_paths, program, engine, relations, progress)
    return compare(program, old, new, relations, fail_on, labels)


@dataclass
class JobsDiffReport:
    """`diff --jobs`: the inventory diff, and what the change does to each job's placement."""

    diff: DiffReport
    jobs: WhatIfReport

    @property
    def exit_code(self) -> int:
        """1 when the change adds a finding at or above --fail-on, or costs some job its placement."""
        return 1 if self.diff.failed or self.jobs.lost else 0


def diff_jobs(
    old_paths: Sequence[Path],
    new_paths: Sequence[Path],
    jobs_paths: Sequence[Path],
    rules_paths: Sequence[Path] | None = None,
    engine: str = "auto",
    extra_relations: Sequence[str] = (),
    fail_on: Severity = "error",
    labels: Mapping[str, str] | None = None,
    progress: PhaseListener | None = None,
    rank: str = "bandwidth",
    principal_from: tuple[PrincipalRule, ...] = (),
) -> JobsDiffReport:
    """`diff`, and every job placed on both revisions and compared as a what-if compares
    (verifier.placement.whatif). Placement fails closed: each side needs its principals file.
    """
    labels = labels or {}
    todo = jobs_to_place(jobs_paths, principal_from=principal_from)
    program = load_rules(rules_paths)
    relations = watched_relations(program, extra_relations)
    how = PlaceSettings(rank=rank, engine=engine, limit=1)
    try:
        old_inputs = read_inventory(list(old_paths), discover(list(old_paths)))
        old = _side(old_paths, program, engine, relations, progress, old_inputs)
        before, allowed_before = placements(old_inputs, todo, how, progress)
    except TopologError as err:
        raise relabel_error(err, labels) from None
    new_inputs = read_inventory(list(new_paths), discover(list(new_paths)))
    new = _side(new_paths, program, engine, relations, progress, new_inputs)
    after, allowed_after = placements(new_inputs, todo, how, progress)
    report = compare(program, old, new, relations, fail_on, labels)
    revisions = [f"{', '.join(report.old)} -> {', '.join(report.new)}"]
    return JobsDiffReport(report, compare_jobs(revisions, before, after, allowed_before, allowed_after))
