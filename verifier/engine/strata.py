"""Dependency graph, stratification and body ordering: what every backend evaluates in order.

A stratum is one strongly connected component of the relation dependency graph, in
topological order, so everything a stratum reads through negation or aggregation is
complete before it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Set
from typing import TYPE_CHECKING

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.lazy import lazy_module
from verifier.core.limits import exceeded
from verifier.engine.ast import (
    Atom,
    Comparison,
    Const,
    Declaration,
    FrozenNode,
    Literal_,
    Negation,
    Program,
    Rule,
    Var,
    term_vars,
)

if TYPE_CHECKING:
    import networkx as nx
else:
    nx = lazy_module("networkx")

_set = object.__setattr__


class Stratum(FrozenNode):
    """Written out, not a frozen dataclass (verifier.engine.ast.FrozenNode says why)."""

    _fields = __match_args__ = ("relations", "rules", "recursive")
    relations: tuple[str, ...]
    """Relations whose rules run in this stratum, sorted."""
    rules: tuple[Rule, ...]
    recursive: bool
    """True when some rule reads a relation of this same stratum (needs a fixpoint)."""

    def __init__(self, relations: tuple[str, ...], rules: tuple[Rule, ...], recursive: bool) -> None:
        _set(self, "relations", relations)
        _set(self, "rules", rules)
        _set(self, "recursive", recursive)

    def _key(self) -> tuple[object, ...]:
        return (self.relations, self.rules, self.recursive)


class Edge(FrozenNode):
    """`head` depends on `body`; `kind` is 'positive', 'negative' or 'aggregate'."""

    _fields = __match_args__ = ("head", "body", "kind", "rule")
    head: str
    body: str
    kind: str
    rule: Rule

    def __init__(self, head: str, body: str, kind: str, rule: Rule) -> None:
        _set(self, "head", head)
        _set(self, "body", body)
        _set(self, "kind", kind)
        _set(self, "rule", rule)

    def _key(self) -> tuple[object, ...]:
        return (self.head, self.body, self.kind, self.rule)


def dependency_edges(program: Program) -> list[Edge]:
    edges: list[Edge] = []
    for rule in program.rules:
        aggregated = rule.head.aggregate is not None
        for lit in rule.body:
            if isinstance(lit, Atom):
                edges.append(Edge(rule.head.relation, lit.relation, "aggregate" if aggregated else "positive", rule))
            elif isinstance(lit, Negation):
                edges.append(Edge(rule.head.relation, lit.atom.relation, "negative", rule))
    return edges


def dependency_graph(program: Program) -> nx.DiGraph:
    """Edges point from a body relation to the head relation that reads it."""
    graph = nx.DiGraph()
    for rule in program.rules:
        graph.add_node(rule.head.relation)
    for e in dependency_edges(program):
        graph.add_edge(e.body, e.head)
    return graph


def stratify(program: Program) -> list[Stratum]:
    """Strata in evaluation order. Assumes `checks.check_program` accepted the program."""
    graph = dependency_graph(program)
    condensed = nx.condensation(graph)
    rules_by_head: dict[str, list[Rule]] = {}
    for rule in program.rules:
        rules_by_head.setdefault(rule.head.relation, []).append(rule)
    # Lexicographic topological order keeps the evaluation order (and so the stage
    # numbers that proofs report) the same from run to run.
    members = condensed.graph["mapping"]
    names = {c: min(r for r, comp in members.items() if comp == c) for c in condensed.nodes}
    strata: list[Stratum] = []
    for comp in nx.lexicographical_topological_sort(condensed, key=lambda c: names[c]):
        relations = tuple(sorted(condensed.nodes[comp]["members"]))
        rules = tuple(r for rel in relations for r in rules_by_head.get(rel, ()))
        if not rules:
            continue
        rel_set = set(relations)
        recursive = any(a.relation in rel_set for r in rules for a in (*r.positive_atoms(), *r.negated_atoms()))
        strata.append(Stratum(relations, rules, recursive))
    return strata


def combines_stored_values(stratum: Stratum) -> bool:
    """Whether every rule of the stratum builds its head only from constants and values of the tuples
    its body reads.

    Such a recursion ends by itself: it can only pair up values that already exist, so it is bounded
    by `derived_tuples`, not by `fixpoint_rounds` (a chain of 30,000 links needs 30,000 rounds). A
    rule that computes a head value (`Y = X + 1`) can go on forever and keeps the round limit.
    """
    for rule in stratum.rules:
        if rule.head.aggregate is not None:
            return False
        stored = {t.name for a in rule.positive_atoms() for t in a.args if isinstance(t, Var)}
        if not all(isinstance(t, Const) or (isinstance(t, Var) and t.name in stored) for t in rule.head.args):
            return False
    return True


def recursion_of(stratum: Stratum, declarations: Mapping[str, Declaration]) -> tuple[SourceLocation, str]:
    """Where a recursive stratum is declared, and how an error names it ("the recursion of 'a', 'b'")."""
    decl = declarations.get(stratum.relations[0])
    where = decl.loc if decl is not None else SourceLocation("<rules>")
    return where, "the recursion of " + ", ".join(repr(r) for r in stratum.relations)


def endless_recursion(stratum: Stratum, declarations: Mapping[str, Declaration], limit: int) -> TopologError:
    """The error for a recursion still deriving new tuples after `limit` rounds (limit fixpoint_rounds)."""
    where, what = recursion_of(stratum, declarations)
    return TopologError.at(
        where, exceeded("fixpoint_rounds", f"{what} still derives new tuples after {limit:,} rounds")
    )


def strata_of(program: Program) -> list[Stratum]:
    """`stratify(program)`, computed once per program and kept on it.

    A program from the on-disk cache was pickled with its strata, so a run that loads it
    neither stratifies again (a third of a second for the shipped pack) nor needs the graph
    library for it.
    """
    kept = program.__dict__.get(_KEPT)
    if kept is None:
        kept = tuple(stratify(program))
        # Program is frozen; its strata are derived from its fields, like its cached `relations`.
        object.__setattr__(program, _KEPT, kept)
    return list(kept)


_KEPT = "_strata"


def sliced_strata(program: Program, sliced: Program) -> None:
    """Give `sliced` (some of `program`'s rules, the same objects, in program order) its strata,
    taken from `program`'s instead of stratifying again: each with only its kept rules.

    Dropping rules only drops dependencies, so the order stays a valid evaluation order. Where the
    slice is closed under what its relations read, every stratum is kept whole or not at all; where
    it is not (rules that cannot fire left out, pruning), a stratum that lost its recursive rules is
    evaluated as the non-recursive one it now is.
    """
    chosen = {id(r) for r in sliced.rules}
    kept: list[Stratum] = []
    for st in strata_of(program):
        rules = tuple(r for r in st.rules if id(r) in chosen)
        if len(rules) == len(st.rules):
            kept.append(st)
        elif rules:
            relations = tuple(sorted({r.head.relation for r in rules}))
            members = set(relations)
            recursive = any(a.relation in members for r in rules for a in (*r.positive_atoms(), *r.negated_atoms()))
            kept.append(Stratum(relations, rules, recursive))
    object.__setattr__(sliced, _KEPT, tuple(kept))


def runnable_rules(stratum: Stratum, filled: Set[str]) -> list[Rule]:
    """The stratum's rules that can derive anything, given the relations that may hold tuples.

    A rule whose positive atom reads an empty relation from an earlier stratum derives
    nothing; skipping it (and so whole chains of rules over absent inputs, such as the
    placement rules when no jobs are given) saves an engine the work of running it.
    """
    members = set(stratum.relations)
    return [
        rule
        for rule in stratum.rules
        if all(a.relation in filled or a.relation in members for a in rule.positive_atoms())
    ]


def what_to_derive(program: Program, changed: Set[str] | None, loaded: Set[str]) -> tuple[set[str] | None, set[str]]:
    """For an evaluation: the relations whose derived tuples must be derived again (None: all, the
    first evaluation since load), and the relations that hold tuples before it starts (the loaded
    inputs, and the derived relations that new facts cannot change).
    """
    affected = None if changed is None else downstream(program, changed)
    kept = {d.name for d in program.declarations if not d.is_input} - affected if affected is not None else set()
    return affected, set(loaded) | kept


def run_strata(
    strata: Iterable[Stratum],
    affected: Set[str] | None,
    once: Callable[[Stratum], None],
    fixpoint: Callable[[Stratum], None],
) -> None:
    """Every stratum in order (only those deriving an `affected` relation, when given), each by
    `fixpoint` when it is recursive, else by `once`: the schedule both proving engines share.
    """
    for stratum in strata:
        if affected is not None and affected.isdisjoint(stratum.relations):
            continue
        (fixpoint if stratum.recursive else once)(stratum)


def downstream(program: Program, changed: Iterable[str]) -> set[str]:
    """The relations whose rules read one of `changed`, directly or through other rules."""
    readers: dict[str, set[str]] = {}
    for rule in program.rules:
        for atom in (*rule.positive_atoms(), *rule.negated_atoms()):
            readers.setdefault(atom.relation, set()).add(rule.head.relation)
    out: set[str] = set()
    todo = list(changed)
    while todo:
        for reader in readers.get(todo.pop(), ()):
            if reader not in out:
                out.add(reader)
                todo.append(reader)
    return out


def is_assignment(lit: Literal_, bound: set[str]) -> str | None:
    """The variable a `=` comparison binds, given what is already bound; else None."""
    if not isinstance(lit, Comparison) or lit.op != "=":
        return None
    for target, source in ((lit.left, lit.right), (lit.right, lit.left)):
        if isinstance(target, Var) and target.name not in bound and set(term_vars(source)) <= bound:
            return target.name
    return None


def order_body(body: tuple[Literal_, ...]) -> list[Literal_]:
    """Body literals in an order where each one's inputs are bound when it is reached.

    Positive atoms first (they bind), then repeatedly any assignment whose right side is
    bound, then comparisons and negations. Literals that never become evaluable are
    appended last; `checks` reports them as unsafe before a backend sees them.
    """
    atoms = [lit for lit in body if isinstance(lit, Atom)]
    ordered: list[Literal_] = list(atoms)
    bound: set[str] = {v for a in atoms for arg in a.args for v in term_vars(arg)}
    pending = [lit for lit in body if not isinstance(lit, Atom)]
    progress = True
    while pending and progress:
        progress = False
        for lit in list(pending):
            target = is_assignment(lit, bound)
            if target is not None:
                ordered.append(lit)
                bound.add(target)
                pending.remove(lit)
                progress = True
            elif isinstance(lit, Comparison | Negation) and _inputs_bound(lit, bound):
                ordered.append(lit)
                pending.remove(lit)
                progress = True
    return ordered + pending


def _inputs_bound(lit: Comparison | Negation, bound: set[str]) -> bool:
    if isinstance(lit, Negation):
        return all(set(term_vars(a)) <= bound for a in lit.atom.args)
    return set(term_vars(lit.left)) <= bound and set(term_vars(lit.right)) <= bound
