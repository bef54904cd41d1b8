"""A loaded model: rules checked, inventory loaded, facts evaluated on one engine.

`verify`, `query` and `explain` all start from here, so each loads the same way.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from verifier.checks import Check, checks_from_program
from verifier.datalog.ast import Program
from verifier.datalog.backend import Backend, make_backend
from verifier.datalog.loader import load_program
from verifier.facts import inventory_facts
from verifier.inventory.loader import load_inventory
from verifier.inventory.model import Inventory


class PhaseListener(Protocol):
    """Told when each loading phase starts: progress on stderr, or a benchmark's stopwatch."""

    def step(self, phase: str) -> None: ...

DEFAULT_RULES = Path(__file__).resolve().parent.parent / "rules"


@dataclass
class LoadedModel:
    program: Program
    checks: list[Check]
    inventory: Inventory
    engine: Backend


def default_rules() -> list[Path]:
    """The shipped rules, named relative to the working directory when inside it.

    Reports show rule files by these names, so a relative name keeps output the same
    on every machine that runs from the repository root.
    """
    try:
        return [DEFAULT_RULES.relative_to(Path.cwd())]
    except ValueError:
        return [DEFAULT_RULES]


def relations_read(program: Program) -> set[str]:
    """Relations some rule body reads, positively or under negation."""
    return {a.relation for r in program.rules for a in (*r.positive_atoms(), *r.negated_atoms())}


def load_any_inventory(paths: Sequence[Path], from_kind: str | None = None) -> Inventory:
    """A YAML inventory, or (with `from_kind`) a tool's output read by that importer.

    An importer's notes (things the tool reported that topolog does not model) go to
    stderr, so nothing it read is dropped without a word.
    """
    if from_kind is None:
        return load_inventory(list(paths))
    from verifier.importers import import_files

    imported = import_files(from_kind, list(paths))
    for note in imported.notes:
        sys.stderr.write(f"note: {note}\n")
    return imported.inventory


def load_rules(rules_paths: Sequence[Path] | None = None) -> Program:
    return load_program(list(rules_paths) if rules_paths else default_rules())


def load_model(
    inventory_paths: Sequence[Path],
    rules_paths: Sequence[Path] | None = None,
    engine: str = "duckdb",
    progress: PhaseListener | None = None,
    program: Program | None = None,
    also_read: Iterable[str] = (),
    authz: bool = True,
    from_kind: str | None = None,
) -> LoadedModel:
    """Parse and check the rules (unless given), load the inventory, evaluate. TopologError on bad input.

    With `authz` and a principals file next to the inventory, authorization decisions are
    added as facts (`permitted`, ...; see verifier/authz/facts.py) and the rules evaluated
    again: the decisions read the derived NVLink domains, and rules/authz/ reads the decisions.

    Only the input relations that some rule reads, plus those named in `also_read` (a
    query's relations), are loaded into the engine: at fleet scale the unread ones
    (labels, link attributes, ...) cost about half of a verification's time and memory.
    """
    step = progress.step if progress is not None else (lambda _phase: None)
    step("checking rules")
    if program is None:
        program = load_rules(rules_paths)
    checks = checks_from_program(program)
    step("loading inventory")
    inventory = load_any_inventory(inventory_paths, from_kind)
    step("generating facts")
    facts = inventory_facts(inventory)
    backend = make_backend(engine)
    backend.load(program)
    step(f"loading facts into {engine}")
    wanted = relations_read(program) | set(also_read)
    for relation, rows in sorted(facts.items()):
        if relation in wanted:
            backend.add_facts(relation, rows)
    step("evaluating rules")
    backend.evaluate()
    model = LoadedModel(program, checks, inventory, backend)
    if authz:
        from verifier.authz.facts import AUTHZ_RELATIONS, authz_facts_hook

        hook = authz_facts_hook(inventory_paths) if wanted & AUTHZ_RELATIONS else None
        if hook is not None:
            step("authorizing")
            for relation, rows in sorted(hook(model).items()):
                if relation in wanted:
                    backend.add_facts(relation, rows)
            step("evaluating rules with authorization facts")
            backend.evaluate()
    return model
