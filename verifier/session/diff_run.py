"""`diff`: two inventories evaluated with one program, their findings and watched relations compared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from verifier.checks.diff import DiffReport, DiffSide, compare, relabel_error, watched_relations
from verifier.checks.findings import Severity
from verifier.checks.verify import collect_results
from verifier.core.errors import TopologError
from verifier.engine.ast import Program
from verifier.session.inputs import authorization_for, read_inventory
from verifier.session.session import PhaseListener, evaluate, load_rules
from verifier.session.side_files import discover


def _side(
    paths: Sequence[Path], program: Program, engine: str, relations: Sequence[str], progress: PhaseListener | None
) -> DiffSide:
    inputs = read_inventory(list(paths), discover(list(paths)))
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
