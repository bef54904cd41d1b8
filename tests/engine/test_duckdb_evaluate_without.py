"""DuckDBBackend.evaluate_without: the strata that read no pending input first, the rest after their facts.

What it must give is what one evaluate() of all the facts gives: the same tuples, and stages in the
same order, so that every proof is the same. Expected values are worked out by hand in the comments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import pytest

from verifier.core.errors import EngineError
from verifier.engine import duckdb_backend
from verifier.engine.ast import Row
from verifier.engine.backend import Backend, Proof
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program

E = TypeVar("E", bound=Backend)

# `h` has two rules: one through `z` (inventory-only), one through `b` (reads the pending `late`).
# Strata in lexicographic topological order: b, z, h (h reads both). One evaluation numbers them
# b = stage 1, z = stage 2, h = stage 3, so the proof of h("n1") takes the instance whose premise
# is older: b("n1") at stage 1, through the second rule.
TWO_WAYS = """
.input a(x: symbol)
.input late(x: symbol)
.decl b(x: symbol)
.decl z(x: symbol)
.decl h(x: symbol)
b(X) :- late(X).
z(X) :- a(X).
h(X) :- z(X).
h(X) :- b(X).
"""

# A chain closure read by the pending side and by the inventory side, with a negation after both.
CLOSURES = """
.input link(src: symbol, dst: symbol)
.input late(src: symbol, dst: symbol)
.decl reach(src: symbol, dst: symbol)
.decl late_reach(src: symbol, dst: symbol)
.decl only_inventory(src: symbol, dst: symbol)
reach(X, Y) :- link(X, Y).
reach(X, Y) :- reach(X, Z), link(Z, Y).
late_reach(X, Y) :- late(X, Y).
late_reach(X, Y) :- late_reach(X, Z), reach(Z, Y).
only_inventory(X, Y) :- reach(X, Y), !late_reach(X, Y).
"""


def _shape(proof: Proof) -> object:
    """A proof as its report shows it: facts, rules, absent facts (no stage numbers)."""
    return proof.to_dict()


def _in_one_go(engine: E, text: str, facts: Mapping[str, Sequence[Row]]) -> E:
    engine.load(parse_program(text, "t.dl"))
    for relation, rows in facts.items():
        engine.add_facts(relation, rows)
    engine.evaluate()
    return engine


def _in_two_parts(text: str, first: Mapping[str, Sequence[Row]], later: Mapping[str, Sequence[Row]]) -> DuckDBBackend:
    engine = DuckDBBackend()
    engine.load(parse_program(text, "t.dl"))
    for relation, rows in first.items():
        engine.add_facts(relation, rows)
    engine.evaluate_without(set(later))
    for relation, rows in later.items():
        engine.add_facts(relation, rows)
    engine.evaluate()
    return engine


def test_the_stages_keep_the_order_of_one_evaluation() -> None:
    split = _in_two_parts(TWO_WAYS, {"a": [("n1",)]}, {"late": [("n1",)]})
    # Evaluated first, z would take stage 1 and b stage 2 if numbered as they ran, and the proof
    # would go through z. b keeps the range before z's instead: its stage is below z's.
    b_stage = split.explain("b", ("n1",)).stage
    z_stage = split.explain("z", ("n1",)).stage
    assert 0 < b_stage < z_stage
    proof = split.explain("h", ("n1",))
    assert [p.relation for p in proof.premises] == ["b"]
    for name in ("duckdb", "memory"):
        whole = _in_one_go(make_backend(name), TWO_WAYS, {"a": [("n1",)], "late": [("n1",)]})
        assert _shape(whole.explain("h", ("n1",))) == _shape(proof)
        whole.close()
    split.close()


def test_closures_on_both_sides_derive_what_one_evaluation_does() -> None:
    # link: a>b>c>d (a chain); late: x>a. reach is the chain's closure: 3+2+1 = 6 pairs.
    # late_reach: x>a, then x reaches whatever a reaches: x>b, x>c, x>d (4 pairs).
    # only_inventory: reach minus late_reach = reach (no late_reach pair starts in the chain): 6 pairs.
    link = [("a", "b"), ("b", "c"), ("c", "d")]
    late = [("x", "a")]
    split = _in_two_parts(CLOSURES, {"link": link}, {"late": late})
    chain = [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    assert split.query("reach") == chain
    assert split.query("late_reach") == [("x", "a"), ("x", "b"), ("x", "c"), ("x", "d")]
    assert split.query("only_inventory") == chain
    whole = _in_one_go(DuckDBBackend(), CLOSURES, {"link": link, "late": late})
    for relation, row in [("late_reach", ("x", "d")), ("only_inventory", ("a", "d")), ("reach", ("a", "c"))]:
        assert _shape(split.explain(relation, row)) == _shape(whole.explain(relation, row))
    whole.close()
    split.close()


def test_a_pending_input_without_facts_still_gets_its_strata_evaluated() -> None:
    # No `late` fact: late_reach stays empty, and only_inventory (a negation of it, left for later)
    # is all of reach: a>b only.
    split = _in_two_parts(CLOSURES, {"link": [("a", "b")]}, {"late": []})
    assert split.query("late_reach") == []
    assert split.query("only_inventory") == [("a", "b")]
    split.close()


def test_only_the_pending_relations_may_get_facts_in_between() -> None:
    engine = DuckDBBackend()
    engine.load(parse_program(TWO_WAYS, "t.dl"))
    engine.add_facts("a", [("n1",)])
    engine.evaluate_without({"late"})
    engine.add_facts("a", [("n2",)])  # z, evaluated already, would miss it
    with pytest.raises(ValueError, match="only the relations evaluate_without"):
        engine.evaluate()
    engine.close()


def test_it_is_the_first_evaluation_only() -> None:
    engine = _in_one_go(DuckDBBackend(), TWO_WAYS, {"a": [("n1",)]})
    with pytest.raises(ValueError, match="first evaluation"):
        engine.evaluate_without({"late"})
    engine.close()


def test_a_stratum_left_for_later_that_outgrows_its_stages_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # 2 strata wait for `late` (late_reach, only_inventory): 4 stages each. late_reach over the
    # chain x>a>b>c>d>e derives x>a ... x>e, 5 tuples, and needs a stage for each and one more
    # (a round each, and the round that finds nothing): 6, past its 4, into only_inventory's range.
    monkeypatch.setattr(duckdb_backend, "LATER_STAGES", 8)
    link = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")]
    engine = DuckDBBackend()
    engine.load(parse_program(CLOSURES, "t.dl"))
    engine.add_facts("link", link)
    engine.evaluate_without({"late"})
    engine.add_facts("late", [("x", "a")])
    with pytest.raises(EngineError, match=r"the rules of 'late_reach' took more stages than were kept for them \(4\)"):
        engine.evaluate()
    engine.close()


def test_evaluating_again_after_both_parts_derives_only_what_changed() -> None:
    split = _in_two_parts(CLOSURES, {"link": [("a", "b")]}, {"late": [("x", "a")]})
    # x>a then x>b (a reaches b).
    assert split.query("late_reach") == [("x", "a"), ("x", "b")]
    split.add_facts("late", [("y", "b")])
    split.evaluate()
    # y>b, and b reaches nothing: late_reach gains y>b only.
    assert split.query("late_reach") == [("x", "a"), ("x", "b"), ("y", "b")]
    proof = split.explain("late_reach", ("x", "b"))
    assert [p.relation for p in proof.premises] == ["late_reach", "reach"]
    split.close()
