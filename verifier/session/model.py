"""A loaded model: rules checked, inventory loaded, facts evaluated on one engine.

`verify`, `query` and `explain` all start from here, so each loads the same way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from verifier.checks.check import Check, checks_from_program
from verifier.core.resources import display_path, shipped_rules_dir
from verifier.engine.ast import Atom, Const, Program, Row, Rule, Value
from verifier.engine.backend import Backend, make_backend
from verifier.engine.rule_pack import load_rule_pack
from verifier.facts.graph import GRAPH_RELATIONS, NodePairs, graph_facts
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory.clusters import one_cluster
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.model import Inventory
from verifier.sources.thresholds import load_thresholds, threshold_facts


class PhaseListener(Protocol):
    """Told when each loading phase starts: progress on stderr, or a benchmark's stopwatch."""

    def step(self, phase: str) -> None: ...


ExtraFacts = Callable[[dict[str, list[Row]]], dict[str, list[Row]]]
"""Given the inventory's facts, more input rows to load (e.g. jobs: verifier.placement.place.placement_facts)."""


@dataclass
class LoadedModel:
    program: Program
    checks: list[Check]
    inventory: Inventory
    engine: Backend


def default_rules() -> list[Path]:
    """The shipped rule pack, named relative to the working directory when inside it (stable output)."""
    return [display_path(shipped_rules_dir())]


def live_reads(program: Program, facts: Mapping[str, list[Row]], pending: set[str]) -> set[str]:
    """Relations read by the rules that can fire (live_rules)."""
    return {a.relation for r in live_rules(program, facts, pending) for a in (*r.positive_atoms(), *r.negated_atoms())}


def live_rules(program: Program, facts: Mapping[str, list[Row]], pending: set[str]) -> list[Rule]:
    """The rules that can fire, given the input rows at hand.

    A rule whose positive atom can match no row derives nothing, so what it alone reads need
    not be loaded: without jobs the placement rules' reads of every label, price and software
    version, and without a job asking for rail alignment (`job_need(_, "rail_aligned", 1)`)
    the NIC paths, cost seconds at fleet scale for nothing. An input atom can match when some
    row holds each of its constants at that position (each position judged alone, so this may
    keep a rule that cannot fire, never drop one that can); relations in `pending` may still
    get rows (summaries computed on demand, authorization decisions, a query's relations) and
    count as matching anything.
    """
    seen: dict[tuple[str, int], set[Value]] = {}

    def can_match(atom: Atom) -> bool:
        rows = facts.get(atom.relation)
        if atom.relation in pending:
            return True
        if not rows:
            return False
        for i, arg in enumerate(atom.args):
            if isinstance(arg, Const):
                values = seen.get((atom.relation, i))
                if values is None:
                    values = seen[(atom.relation, i)] = {row[i] for row in rows}
                if arg.value not in values:
                    return False
        return True

    def fires(rule: Rule) -> bool:
        for atom in rule.positive_atoms():
            decl = program.relations.get(atom.relation)
            ok = can_match(atom) if decl is not None and decl.is_input else atom.relation in available
            if not ok:
                return False
        return True

    available: set[str] = set()
    grew = True
    while grew:
        grew = False
        for rule in program.rules:
            head = rule.head.relation
            if head not in available and fires(rule):
                available.add(head)
                grew = True
    return [r for r in program.rules if fires(r)]


def relations_read(program: Program) -> set[str]:
    """Relations some rule body reads, positively or under negation."""
    return {a.relation for r in program.rules for a in (*r.positive_atoms(), *r.negated_atoms())}


def constant_filters(
    program: Program,
    unfiltered: set[str],
    rules: Iterable[Rule] | None = None,
) -> dict[str, list[tuple[int, frozenset[Value]]]]:
    """Per input relation, the argument positions at which every reading atom has a constant.

    A row whose value there is none of those constants can match no atom of the program,
    so leaving it out of the engine changes nothing that is derived: `label(X, "role",
    "leaf")` and `label(X, "rail", R)` need only the role and rail labels of a fleet, not
    every label. Relations in `unfiltered` (read by a query or explained) are loaded whole.
    Given `rules` (the live ones), only their atoms count: a rule that cannot fire asks for nothing.
    """
    constants: dict[str, dict[int, set[Value]]] = {}
    for rule in program.rules if rules is None else rules:
        for atom in (*rule.positive_atoms(), *rule.negated_atoms()):
            decl = program.relations.get(atom.relation)
            if decl is None or not decl.is_input or atom.relation in unfiltered:
                continue
            seen = constants.get(atom.relation)
            if seen is None:
                constants[atom.relation] = {i: {a.value} for i, a in enumerate(atom.args) if isinstance(a, Const)}
                continue
            for i in list(seen):
                arg = atom.args[i]
                if isinstance(arg, Const):
                    seen[i].add(arg.value)
                else:
                    del seen[i]  # a variable here reads every value
    return {
        rel: sorted((i, frozenset(values)) for i, values in positions.items())
        for rel, positions in constants.items()
        if positions
    }


def filter_rows(rows: list[Row], filters: Sequence[tuple[int, frozenset[Value]]]) -> list[Row]:
    if not filters:
        return rows
    if len(filters) == 1:  # the common case, without a generator per row (object: a million rows)
        ((i, allowed),) = filters
        return [row for row in rows if row[i] in allowed]
    return [row for row in rows if all(row[i] in allowed for i, allowed in filters)]


def load_any_inventory(paths: Sequence[Path], from_kind: str | None = None) -> Inventory:
    """A YAML inventory, or (with `from_kind`) a tool's output read by that importer.

    An importer's notes (things the tool reported that topolog does not model) go to
    stderr, so nothing it read is dropped without a word.
    """
    if from_kind is None:
        return load_inventory(list(paths))
    from verifier.sources.importers import import_files

    imported = import_files(from_kind, list(paths))
    for note in imported.notes:
        sys.stderr.write(f"note: {note}\n")
    return imported.inventory


def load_rules(rules_paths: Sequence[Path] | None = None) -> Program:
    """The checked program of exactly `rules_paths`, by default the shipped pack.

    The CLI's --rules adds to the shipped pack: it passes verifier.engine.rule_pack.shipped_first(...)
    here. See verifier.engine.rule_pack.load_rule_pack for copies of shipped files and the hint
    given when a rule set without the shipped schema uses its relations.
    """
    return load_rule_pack(list(rules_paths) if rules_paths else default_rules())


def load_model(
    inventory_paths: Sequence[Path],
    rules_paths: Sequence[Path] | None = None,
    engine: str = "duckdb",
    progress: PhaseListener | None = None,
    program: Program | None = None,
    also_read: Iterable[str] = (),
    authz: bool = True,
    from_kind: str | None = None,
    thresholds: Path | None = None,
    extra_facts: ExtraFacts | None = None,
    node_pairs: NodePairs | None = None,
    keep_objects: Callable[[Inventory], set[str]] | None = None,
) -> LoadedModel:
    """Parse and check the rules (unless given), load the inventory, evaluate. TopologError on bad input.

    With `authz` and a principals file next to the inventory, authorization decisions are
    added as facts (`permitted`, ...; see verifier/authorization/facts.py) and the rules evaluated
    again: the decisions read the derived NVLink domains, and rules/authz/ reads the decisions.

    Only the input relations that some rule reads, plus those named in `also_read` (a
    query's relations), are loaded into the engine: at fleet scale the unread ones
    (labels, link attributes, ...) cost about half of a verification's time and memory.

    Thresholds (rules/thresholds.yaml, overridden by `thresholds` or topolog.thresholds.yaml
    next to the first inventory) become `threshold` facts; path summaries computed with
    networkx (verifier/facts/graph.py) are added for the relations that are read.
    `extra_facts`, given those facts, returns more rows to load (jobs, for placement).
    `node_pairs`, when given, is filled with the GPU pair bottlenecks per node class.
    `keep_objects`, given the inventory, names the only objects whose facts the program needs
    (see verifier.facts.inventory.inventory_facts); graph summaries still see the whole inventory.
    """
    step = progress.step if progress is not None else (lambda _phase: None)
    if from_kind is None:
        one_cluster(inventory_paths, "this command works on one inventory at a time")
    step("checking rules")
    if program is None:
        program = load_rules(rules_paths)
    checks = checks_from_program(program)
    limits = load_thresholds(inventory_paths, thresholds)
    step("loading inventory")
    inventory = load_any_inventory(inventory_paths, from_kind)
    step("generating facts")
    facts = inventory_facts(inventory, keep_objects(inventory) if keep_objects is not None else None)
    facts["threshold"] = threshold_facts(limits)
    if extra_facts is not None:
        # Placement: job facts (and model families) for `place` / `verify --jobs`; see verifier/placement.py.
        facts.update(extra_facts(facts))
    # Relations that may still get rows: networkx summaries are computed only on demand, and
    # authorization decisions arrive after the first evaluation.
    pending = set(GRAPH_RELATIONS)
    if authz:
        from verifier.authorization.facts import AUTHZ_RELATIONS

        pending |= AUTHZ_RELATIONS
    live = live_rules(program, facts, pending | set(also_read))
    wanted = {a.relation for r in live for a in (*r.positive_atoms(), *r.negated_atoms())} | set(also_read)
    facts.update(graph_facts(inventory, wanted, node_pairs))
    backend = make_backend(engine)
    backend.load(program)
    step(f"loading facts into {engine}")
    filters = constant_filters(program, set(also_read), live)  # a rule that cannot fire asks for no rows
    for relation, rows in sorted(facts.items()):
        if relation in wanted:
            backend.add_facts(relation, filter_rows(rows, filters.get(relation, ())))
    step("evaluating rules")
    backend.evaluate()
    model = LoadedModel(program, checks, inventory, backend)
    if authz:
        from verifier.authorization.facts import authz_facts_hook

        hook = authz_facts_hook(inventory_paths) if wanted & AUTHZ_RELATIONS else None
        if hook is not None:
            step("authorizing")
            for relation, rows in sorted(hook(model).items()):
                if relation in wanted:
                    backend.add_facts(relation, rows)
            step("evaluating rules with authorization facts")
            backend.evaluate()
    return model
