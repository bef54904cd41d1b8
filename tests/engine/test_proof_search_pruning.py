"""ProofSearch asks no rule that cannot win, and asks a later rule only for instances that would.

A later rule wins only with a latest premise strictly earlier than the instance found so far
(ties go to the first rule), so it is asked for premises older than that latest premise, and
not at all when the instance found rests on input facts (stage 0). An aggregate rule's instance
is its whole group and is always asked with the row's own stage. The proofs are those of a
search that asks every rule with the row's stage (`_exhaustive` below), on both engines.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from verifier.engine.ast import Atom, Row, Rule
from verifier.engine.backend import Backend, Proof
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program
from verifier.engine.proof_search import Instance, ProofSearch

THREE_WAYS = """
.input edge(a: symbol, b: symbol)
.input direct(a: symbol, b: symbol)
.decl hop(a: symbol, b: symbol)
.decl reach(a: symbol, b: symbol)
hop(A, B) :- edge(A, B).
reach(A, B) :- hop(A, M), hop(M, B).
reach(A, B) :- hop(A, B).
reach(A, B) :- direct(A, B).
"""


def _rules(text: str) -> dict[str, list[Rule]]:
    by_head: dict[str, list[Rule]] = {}
    for rule in parse_program(text, "t.dl").rules:
        by_head.setdefault(rule.head.relation, []).append(rule)
    return by_head


class _Asked:
    """A stand-in engine: per rule of `rules` (by index), the premise stages of the one instance it
    has, and what was asked; a rule of another relation (a premise's) has an instance without premises.
    """

    def __init__(self, rules: list[Rule], stages: dict[int, list[int] | None]) -> None:
        self.rules = rules
        self.stages = stages
        self.asked: list[tuple[int, int]] = []

    def instance(self, rule: Rule, row: Row, stage: int) -> Instance | None:
        if rule not in self.rules:
            return [], []
        index = self.rules.index(rule)
        self.asked.append((index, stage))
        found = self.stages[index]
        if found is None or any(s >= stage for s in found):
            return None  # no instance of this rule with every premise older than `stage`
        atom = rule.body[0]
        assert isinstance(atom, Atom)
        return [(atom, (f"p{i}", "x"), s) for i, s in enumerate(found)], []


def test_an_instance_on_input_facts_only_stops_the_search() -> None:
    # reach("a", "c") at stage 9. Rule 0 (two hops) has no instance; rule 1 (one hop) has one whose
    # premise is stage 4; rule 2 (direct, an input) has one at stage 0. Rule 1 wins so far with
    # latest 4, so rule 2 is asked for premises older than 4 (min(9, 4)): it has one (0 < 4) and wins.
    by_head = _rules(THREE_WAYS)
    rules = by_head["reach"]
    engine = _Asked(rules, {0: None, 1: [4], 2: [0]})
    proof = ProofSearch(by_head, engine.instance).prove("reach", ("a", "c"), 9)
    assert engine.asked == [(0, 9), (1, 9), (2, 4)]
    assert proof.rule is rules[2]

    # Now rule 0 finds an instance at stages (0, 0): latest 0, nothing can be older, so rules 1
    # and 2 are never asked and rule 0 is the proof (ties go to the first rule anyway).
    engine = _Asked(rules, {0: [0, 0], 1: [4], 2: [0]})
    proof = ProofSearch(by_head, engine.instance).prove("reach", ("a", "c"), 9)
    assert engine.asked == [(0, 9)]
    assert proof.rule is rules[0]


def test_a_later_rule_no_earlier_than_the_best_is_asked_with_the_tighter_bound_and_loses() -> None:
    # Rule 0 has an instance with latest 6 (stages 2 and 6); rule 1's only instance is at stage 7 and
    # rule 2's at 6: neither is older than 6, so both are asked with bound 6 and find nothing; rule 0
    # stays the proof. Asked with the row's stage 9 they would have found instances that lose.
    by_head = _rules(THREE_WAYS)
    rules = by_head["reach"]
    engine = _Asked(rules, {0: [2, 6], 1: [7], 2: [6]})
    proof = ProofSearch(by_head, engine.instance).prove("reach", ("a", "c"), 9)
    assert engine.asked == [(0, 9), (1, 6), (2, 6)]
    assert proof.rule is rules[0]


def test_an_aggregate_rule_is_asked_with_the_rows_own_stage() -> None:
    # total/2 has a plain rule first (latest 5) and an aggregate rule second: the aggregate's
    # instance is its whole group, so it is asked with the row's stage 8, not min(8, 5).
    text = """
.input member(g: symbol, n: number)
.input raw(g: symbol, n: number)
.decl fixed(g: symbol, n: number)
.decl total(g: symbol, n: number)
fixed(G, N) :- raw(G, N).
total(G, N) :- fixed(G, N).
total(G, sum(N)) :- member(G, N).
"""
    by_head = _rules(text)
    rules = by_head["total"]
    engine = _Asked(rules, {0: [5], 1: [3, 7]})
    ProofSearch(by_head, engine.instance).prove("total", ("g", 3), 8)
    assert engine.asked == [(0, 8), (1, 8)]


def _exhaustive(engine: Backend, relation: str, row: Row, stage: int) -> Proof:
    """The proof as the search found it before pruning: every rule asked with the row's stage."""
    instance = engine._instance  # type: ignore[attr-defined]
    search = engine._proofs  # type: ignore[attr-defined]
    best: tuple[int, int, Rule, Instance] | None = None
    for index, rule in enumerate(search._rules_by_head.get(relation, ())):
        found = instance(rule, row, stage)
        if found is None:
            continue
        latest = max((s for _, _, s in found[0]), default=0)
        if best is None or (latest, index) < best[:2]:
            best = (latest, index, rule, found)
    if best is None:
        return Proof(relation, row, stage=0)
    _, _, rule, (premises, absent) = best
    subs = tuple(_exhaustive(engine, a.relation, r, s) for a, r, s in premises)
    return Proof(relation, row, rule, subs, tuple(absent), stage)


@pytest.fixture(params=["memory", "duckdb"])
def engine(request: pytest.FixtureRequest) -> Iterator[Backend]:
    backend = make_backend(request.param)
    yield backend
    backend.close()


def test_pruned_proofs_are_the_exhaustive_searchs_on_both_engines(engine: Backend) -> None:
    # Edges a->b, b->c, c->d and direct a->d, b->d. One hop: reach(a,b), (b,c), (c,d); two hops:
    # (a,c) and (b,d); direct: (a,d) and (b,d). Every reach tuple's proof is compared with the search
    # that asks every rule with the row's own stage.
    engine.load(parse_program(THREE_WAYS, "t.dl"))
    engine.add_facts("edge", [("a", "b"), ("b", "c"), ("c", "d")])
    engine.add_facts("direct", [("a", "d"), ("b", "d")])
    engine.evaluate()
    rows = engine.query("reach")
    assert rows == [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    for row in rows:
        proof = engine.explain("reach", row)
        assert proof == _exhaustive(engine, "reach", row, proof.stage)
    # reach(b, d): two hops rest on hop facts (derived, stage > 0); direct(b, d) is an input, older.
    assert engine.explain("reach", ("b", "d")).rule is not None
    assert engine.explain("reach", ("b", "d")).premises[0].relation == "direct"
    # reach(a, b): one hop; the direct rule (asked for premises older than the hop) has no instance.
    assert engine.explain("reach", ("a", "b")).premises[0].relation == "hop"
