"""DuckDBBackend.retract: an input's facts forgotten, and only what depends on them derived again.

The service keeps one evaluation of a fleet and adds, then retracts, each admitted job's facts
(verifier/service/placing.py); these tests hold that the evaluation after a retract and new facts
is the evaluation of a fresh engine given the same facts.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.engine.ast import Row
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program

# `link` is the fleet (kept); `ask` is the job (added, retracted). `hop` depends on `link` only,
# `reach` (recursive) and `answer` on `ask`; `unasked` reads `ask` under negation.
TEXT = """
.input link(src: symbol, dst: symbol)
.input ask(node: symbol)
.decl hop(src: symbol, dst: symbol)
hop(X, Y) :- link(X, Y).
.decl reach(src: symbol, dst: symbol)
reach(X, Y) :- ask(X), hop(X, Y).
reach(X, Y) :- reach(X, Z), hop(Z, Y).
.decl answer(src: symbol, n: number)
answer(X, count(Y)) :- reach(X, Y).
.decl unasked(node: symbol)
unasked(X) :- hop(X, _), !ask(X).
"""
LINKS = [("a", "b"), ("b", "c"), ("c", "d"), ("x", "y")]
RELATIONS = ("hop", "reach", "answer", "unasked")


def _fresh(asks: list[Row]) -> dict[str, list[Row]]:
    e = DuckDBBackend()
    try:
        e.load(parse_program(TEXT, "t.dl"))
        e.add_facts("link", LINKS)
        if asks:
            e.add_facts("ask", asks)
        e.evaluate()
        return {r: e.query(r) for r in RELATIONS}
    finally:
        e.close()


def test_after_a_retract_the_engine_answers_as_a_fresh_one() -> None:
    e = DuckDBBackend()
    e.load(parse_program(TEXT, "t.dl"))
    e.add_facts("link", LINKS)
    e.evaluate()
    # By hand, asking from a: reach a->b, a->c, a->d (3); from x: x->y (1). unasked: every
    # link source but the asked ones (a, b, c, x less those asked).
    first = [("a",)]
    e.add_facts("ask", first)
    e.evaluate()
    assert e.query("answer") == [("a", 3)]
    assert e.query("unasked") == [("b",), ("c",), ("x",)]
    e.retract("ask")
    e.add_facts("ask", [("x",)])
    e.evaluate()
    assert e.query("answer") == [("x", 1)]
    assert {r: e.query(r) for r in RELATIONS} == _fresh([("x",)])
    e.retract("ask")  # nothing asked: reach and answer empty, every source unasked
    e.evaluate()
    assert {r: e.query(r) for r in RELATIONS} == _fresh([])
    assert e.query("unasked") == [("a",), ("b",), ("c",), ("x",)]
    e.close()


def test_retract_of_a_relation_never_loaded_changes_nothing() -> None:
    e = DuckDBBackend()
    e.load(parse_program(TEXT, "t.dl"))
    e.add_facts("link", LINKS)
    e.evaluate()
    e.retract("ask")
    e.evaluate()
    assert {r: e.query(r) for r in RELATIONS} == _fresh([])
    e.close()


def test_only_inputs_can_be_retracted() -> None:
    e = DuckDBBackend()
    e.load(parse_program(TEXT, "t.dl"))
    with pytest.raises(TopologError):
        e.retract("reach")
    e.close()
