"""rows_distinct: whether a relation's rules can derive a tuple twice (then DuckDB keeps its DISTINCT).

Each expectation is argued by hand in the test: a rule is injective when its head values fix
every row its body reads (directly, or through a key of a relation: `keys`); two rules are
disjoint when one tuple derived by both would contradict a constant, a comparison or a negation.
The engine tests at the end check the answers that a wrongly dropped DISTINCT would break.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from verifier.engine import sql_compiler as sc
from verifier.engine.ast import Rule
from verifier.engine.distinct_rules import Keys, bindings_distinct, counted_apart, rows_distinct
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program

DECLS = """
.input link(id: symbol, a: symbol, b: symbol, kind: symbol)
.input attr(id: symbol, name: symbol, value: number)
.input kind_ok(kind: symbol)
.decl p(x: symbol)
.decl q(x: symbol, y: symbol)
.decl peer(id: symbol, end: symbol, other: symbol, kind: symbol)
.decl width(id: symbol, n: number)
.decl tally(x: symbol, n: number)
.decl total(x: symbol, n: number)
"""
LINK_KEY: Keys = {"link": [(0,)]}


def rules(text: str) -> list[Rule]:
    return list(parse_program(DECLS + text, "t.dl").rules)


def test_a_rule_whose_head_holds_the_key_of_the_row_it_reads() -> None:
    # q(L, A) reads link(L, A, _, _): with link keyed by its id L, the head's L fixes the row.
    assert rows_distinct(rules("q(L, A) :- link(L, A, _, _)."), LINK_KEY)
    # Without the key, two links (l, a, b1) and (l, a, b2) would both give q(l, a).
    assert not rows_distinct(rules("q(L, A) :- link(L, A, _, _)."), {})


def test_a_head_without_the_key_may_repeat() -> None:
    # Two links from a to b give q(a, b) twice, key or not.
    assert not rows_distinct(rules("q(A, B) :- link(_, A, B, _)."), LINK_KEY)


def test_rows_fixed_through_a_row_already_fixed() -> None:
    # L fixes the link row, which fixes K, which is all of kind_ok(K): nothing is left free.
    assert rows_distinct(rules("p(L) :- link(L, _, _, K), kind_ok(K)."), LINK_KEY)
    # attr(L, "count", C) has a free C that the head does not hold: one link with two counts gives p(L) twice.
    assert not rows_distinct(rules('p(L) :- link(L, _, _, _), attr(L, "count", C).'), LINK_KEY)


def test_an_assignment_of_fixed_values_is_fixed() -> None:
    # N is worked out from M, which the key fixes: width(L, N) repeats nothing.
    assert rows_distinct(rules('width(L, N) :- attr(L, "lanes", M), N = M * 2.'), {"attr": [(0, 1)]})


def test_seen_from_each_end() -> None:
    both = """
    peer(L, A, B, K) :- link(L, A, B, K).
    peer(L, B, A, K) :- link(L, A, B, K).
    """
    # A link from a device to itself, (l, a, a, k), gives peer(l, a, a, k) by both rules.
    assert not rows_distinct(rules(both), LINK_KEY)
    # With A != B in the second rule a shared tuple would need the same link (the key, L) read by
    # both, so A = B by the heads: contradicted.
    assert rows_distinct(rules(both.rstrip().rstrip(".") + ", A != B."), LINK_KEY)


def test_a_negation_makes_two_rules_disjoint() -> None:
    counted = """
    width(L, N) :- link(L, _, _, _), attr(L, "count", N).
    width(L, 1) :- link(L, _, _, _), !attr(L, "count", _).
    """
    # A tuple of both rules is one link L (same head value): the first reads a count of L, the
    # second needs none to exist.
    assert rows_distinct(rules(counted), {**LINK_KEY, "attr": [(0, 1)]})
    # Both positive: a link with count 1 gives width(l, 1) twice.
    both_positive = counted.replace('!attr(L, "count", _)', 'attr(L, "count", _)')
    assert not rows_distinct(rules(both_positive), {**LINK_KEY, "attr": [(0, 1)]})


def test_different_constants_in_the_head() -> None:
    # q(X, "up") and q(X, "down") are never one tuple.
    text = 'q(X, "up") :- p(X).\nq(X, "down") :- kind_ok(X).'
    assert rows_distinct(rules(text), {})
    # The same constant: X in both p and kind_ok gives q(x, "up") twice.
    assert not rows_distinct(rules(text.replace('"down"', '"up"')), {})


def test_the_same_rule_twice_repeats_itself() -> None:
    assert not rows_distinct(rules("p(X) :- kind_ok(X).\np(Y) :- kind_ok(Y)."), {})


def test_aggregates_are_one_row_per_group() -> None:
    assert rows_distinct(rules("tally(A, count(L)) :- link(L, A, _, _)."), {})
    # A group A exists only where some link(_, A, _, _) does, which the second rule's negation denies.
    zero = "tally(A, count(L)) :- link(L, A, _, _).\ntally(A, 0) :- kind_ok(A), !link(_, A, _, _)."
    assert rows_distinct(rules(zero), {})
    assert not rows_distinct(rules(zero.replace("!link", "link")), {})
    # Two aggregate rules may give one group the same count.
    assert not rows_distinct(
        rules("tally(A, count(L)) :- link(L, A, _, _).\ntally(B, count(L)) :- link(L, _, B, _)."), {}
    )


def test_bindings_distinct_when_every_row_is_fixed() -> None:
    # total(A, sum(N)) :- attr(A, _L, N) binds A, _L and N: every column of the one row it reads, so
    # two rows (sets hold each once) never bind alike and the sum needs no DISTINCT over them.
    (whole,) = rules("total(A, sum(N)) :- attr(A, _L, N).")
    assert bindings_distinct(whole, {})
    # attr(A, _, N) leaves the name column free: (a, x, 2) and (a, y, 2) bind A, N alike, and sum
    # adds over distinct bindings (2, not 4): the DISTINCT stays, unless a key (the id) fixes the row.
    (loose,) = rules("total(A, sum(N)) :- attr(A, _, N).")
    assert not bindings_distinct(loose, {})
    assert bindings_distinct(loose, {"attr": [(0,)]})
    # A second atom whose row the first's values fix: link(L, A, B, K) then kind_ok(K) is whole.
    (joined,) = rules("total(L, sum(N)) :- link(L, A, B, K), kind_ok(K), attr(L, _W, N).")
    assert bindings_distinct(joined, {})


def test_counted_apart_when_group_and_value_fix_the_rows() -> None:
    # tally(A, count(L)) :- link(L, A, _, _): with link keyed by L, (A, L) fixes the row, so within
    # a group A each L comes once and COUNT(L) = COUNT(DISTINCT L).
    (keyed,) = rules("tally(A, count(L)) :- link(L, A, _, _).")
    assert counted_apart(keyed, LINK_KEY)
    # Without the key, (l1, a, b) and (l1, a, c) give L = l1 twice in group a: count 1, not 2.
    assert not counted_apart(keyed, {})
    # Only `count` of a plain variable: sum and min are left alone, and so is no aggregate at all.
    assert not counted_apart(rules("total(A, sum(N)) :- attr(A, _L, N).")[0], {})
    assert not counted_apart(rules("q(L, A) :- link(L, A, _, _).")[0], LINK_KEY)


def test_what_is_proven_leaves_the_distinct_out_of_the_sql() -> None:
    program = parse_program(
        DECLS + "total(A, sum(N)) :- attr(A, _L, N).\ntally(A, count(L)) :- link(L, A, _, _).", "t.dl"
    )
    schema = sc.Schema(program.declarations)
    total, tally = program.rules

    def sql(rule: Rule, apart: sc.Apart) -> str:
        return sc.rule_select(rule, schema, sc.Params(lambda _: 0), apart=apart)

    # Unproven, sum adds over distinct bindings and count counts distinct values ...
    assert "SELECT DISTINCT" in sql(total, (False, False))
    assert "COUNT(DISTINCT" in sql(tally, (False, False))
    # ... proven, neither hashes its rows first.
    assert "DISTINCT" not in sql(total, (True, False))
    assert "DISTINCT" not in sql(tally, (True, True))


def test_sum_and_count_over_repeated_bindings(engine: Any) -> None:
    # attr rows (a, x, 2), (a, y, 2), (a, z, 3), (b, x, 5); links l1 a->b, l1 a->c (one id, two rows, so
    # no key), l2 a->b.
    # total(A, sum(N)) :- attr(A, _, N): distinct bindings of A, N: a: {2, 3} -> 5; b: 5.
    # tally(A, count(L)) :- link(L, A, _, _): distinct L per A: a: {l1, l2} -> 2.
    # width(A, sum(N)) over every column (attr(A, _W, N)): a: 2 + 2 + 3 = 7; b: 5.
    text = """
    total(A, sum(N)) :- attr(A, _, N).
    tally(A, count(L)) :- link(L, A, _, _).
    width(A, sum(N)) :- attr(A, _W, N).
    """
    engine.load(parse_program(DECLS + text, "t.dl"))
    engine.add_facts("attr", [("a", "x", 2), ("a", "y", 2), ("a", "z", 3), ("b", "x", 5)])
    engine.add_facts("link", [("l1", "a", "b", "ib"), ("l1", "a", "c", "ib"), ("l2", "a", "b", "ib")])
    engine.evaluate()
    assert engine.query("total") == [("a", 5), ("b", 5)]
    assert engine.query("tally") == [("a", 2)]
    assert engine.query("width") == [("a", 7), ("b", 5)]


@pytest.fixture(params=["duckdb", "memory"])
def engine(request: pytest.FixtureRequest) -> Iterator[Any]:
    e = make_backend(request.param)
    yield e
    e.close()


def test_a_key_lost_by_a_second_batch_brings_the_distinct_back(engine: Any) -> None:
    # Loaded alone, the first batch is keyed by the link id; the second batch repeats l1 with
    # another far end, so q(L, A) :- link(L, A, _, _) reads two rows for q(l1, a): it holds it once.
    engine.load(parse_program(DECLS + "q(L, A) :- link(L, A, _, _).", "t.dl"))
    engine.add_facts("link", [("l1", "a", "b", "nvlink")])
    engine.add_facts("link", [("l1", "a", "c", "nvlink")])
    engine.evaluate()
    assert engine.query("q") == [("l1", "a")]


def test_counts_over_rules_that_share_tuples(engine: Any) -> None:
    # Links: l1 a-b, l2 a-b (parallel), l3 c-c (to itself). peer from each end without A != B:
    # l1 (a,b) (b,a), l2 (a,b) (b,a), l3 (c,c) once though both rules give it: 5 tuples.
    # q(A, B) from links' ends: (a, b) once for l1 and l2, (c, c): 2 tuples. tally counts peers per end:
    # a: l1, l2 -> 2; b: l1, l2 -> 2; c: l3 -> 1.
    text = """
    peer(L, A, B, K) :- link(L, A, B, K).
    peer(L, B, A, K) :- link(L, A, B, K).
    q(A, B) :- link(_, A, B, _).
    tally(E, count(L)) :- peer(L, E, _, _).
    """
    engine.load(parse_program(DECLS + text, "t.dl"))
    engine.add_facts("link", [("l1", "a", "b", "ib"), ("l2", "a", "b", "ib"), ("l3", "c", "c", "ib")])
    engine.evaluate()
    assert engine.count("peer") == 5
    assert engine.query("q") == [("a", "b"), ("c", "c")]
    assert engine.query("tally") == [("a", 2), ("b", 2), ("c", 1)]
