"""The pyDatalog reference backend: its contract beyond what the differential test compares."""

from __future__ import annotations

import threading

import pytest

from verifier.core.errors import EngineError, FactError, ProgramError
from verifier.engine.checks import check_program
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program, parse_query
from verifier.engine.pydatalog_backend import PyDatalogBackend

SOURCE = """\
.input link(a: symbol, b: symbol, gbps: number)
.decl reach(a: symbol, b: symbol)
.decl isolated(a: symbol)
.decl ok()
reach(A, B) :- link(A, B, _).
reach(A, C) :- link(A, B, _), reach(B, C).
isolated(A) :- link(_, A, _), !link(A, _, _).
ok() :- reach("a", "a").
"""
LINKS = [("a", "b", 400), ("b", "c", 400), ("c", "a", 100), ("c", "d", 25)]


def backend(links: list[tuple[str, str, int]] = LINKS) -> PyDatalogBackend:
    program = parse_program(SOURCE, "t.dl")
    check_program(program)
    engine = PyDatalogBackend()
    engine.load(program)
    engine.add_facts("link", links)
    engine.evaluate()
    return engine


def test_make_backend_builds_it() -> None:
    assert make_backend("pydatalog").name == "pydatalog"


def test_right_linear_recursion_over_a_cycle_terminates() -> None:
    # pyDatalog 0.22.4 alone loops forever on exactly this rule over a 3-cycle.
    engine = backend()
    assert engine.query("reach", {0: "a"}) == [("a", "a"), ("a", "b"), ("a", "c"), ("a", "d")]
    assert engine.count("reach") == 12


def test_query_binds_positions_and_sorts() -> None:
    engine = backend()
    assert engine.query("reach", {1: "d"}) == [("a", "d"), ("b", "d"), ("c", "d")]
    assert engine.query("reach", {0: "d"}) == []
    assert engine.query("reach", {0: "a", 1: "c"}) == [("a", "c")]
    assert engine.query("link", {2: 25}) == [("c", "d", 25)]
    assert engine.query("isolated") == [("d",)]
    assert engine.query("ok") == [()]


def test_answer_runs_a_query_body() -> None:
    engine = backend()
    query = parse_query('reach(X, Y), link(X, Y, G), G < 400, !isolated(Y), X != "zz"')
    assert engine.answer(query) == [("c", "a", 100)]
    assert engine.answer(parse_query('reach("d", _)')) == []
    assert engine.answer(parse_query('reach("a", _)')) == [()]


def test_facts_of_the_wrong_shape_are_refused_with_the_fact_named() -> None:
    engine = backend()
    with pytest.raises(FactError) as info:
        engine.add_facts("link", [("a", "b"), ("a", "b", "fast"), ("a", "b", True), ("x", "y", 1)])
    text = str(info.value)
    assert 'link("a", "b"): \'link\' has 3 columns' in text
    assert 'link("a", "b", "fast"): column \'gbps\' is a number' in text
    assert "True" in text
    assert len(info.value.diagnostics) == 3
    assert engine.query("link", {0: "x"}) == []  # a bad batch adds nothing


def test_facts_only_for_declared_input_relations() -> None:
    engine = backend()
    with pytest.raises(FactError, match=r"'reach'.*derived"):
        engine.add_facts("reach", [("a", "b")])
    with pytest.raises(FactError, match="'nope', which is not declared"):
        engine.add_facts("nope", [("a",)])


def test_new_facts_after_evaluate_are_seen() -> None:
    engine = backend()
    engine.add_facts("link", [("d", "e", 1)])
    assert engine.query("isolated") == [("e",)]


def test_unknown_relation_in_query() -> None:
    with pytest.raises(ProgramError, match="not declared"):
        backend().query("nope")
    with pytest.raises(ProgramError, match="position 5"):
        backend().query("reach", {5: "a"})


def test_explain_needs_duckdb() -> None:
    engine = backend()
    with pytest.raises(EngineError, match="duckdb"):
        engine.explain("reach", ("a", "b"))
    with pytest.raises(KeyError):
        engine.explain("reach", ("d", "a"))


def test_instances_interleaved_in_one_thread_stay_correct() -> None:
    first = backend()
    second = backend([("x", "y", 1)])
    assert first.query("isolated") == [("d",)]
    third = PyDatalogBackend()
    third.load(parse_program(SOURCE, "t.dl"))  # load() clears the thread's knowledge base
    assert first.query("isolated") == [("d",)]
    assert second.query("isolated") == [("y",)]
    assert first.count("reach") == 12


def test_an_instance_used_from_another_thread_rebuilds_there() -> None:
    engine = backend()
    seen: list[object] = []
    worker = threading.Thread(target=lambda: seen.append(engine.query("isolated")))
    worker.start()
    worker.join()
    assert seen == [[("d",)]]


def test_division_by_zero_derives_nothing() -> None:
    program = parse_program(
        """\
.input pair(a: number, b: number)
.decl q(a: number, q: number)
.decl unused(a: number)
q(A, Q) :- pair(A, B), Q = A / B.
unused(A) :- pair(A, B), T = A % B.
""",
        "t.dl",
    )
    engine = PyDatalogBackend()
    engine.load(program)
    engine.add_facts("pair", [(7, 0), (7, 2)])
    engine.evaluate()
    assert engine.query("q") == [(7, 3)]
    assert engine.query("unused") == [(7,)]


def test_query_before_load_fails_closed() -> None:
    with pytest.raises(EngineError, match="load"):
        PyDatalogBackend().evaluate()
