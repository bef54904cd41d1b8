"""The DuckDB engine after an evaluation or a proof is stopped part way (d204ccf, 0bba555), attacked.

d204ccf: a relation's table is counted as made (Schema.used) once its CREATE returned, and a
CREATE TABLE AS that failed or was stopped as it returned is dropped (DROP inside the except).
Broken by a second Ctrl-C landing on that DROP, or by a DROP that fails itself (a limit error on
top of a limit error): the table stayed in DuckDB's catalog while the schema counted it unmade, so
the next evaluation failed with "already exists" (and, was the next statement naming it a read,
its stale rows would have been kept by CREATE TABLE IF NOT EXISTS). Fixed: a table not counted as
made is made OR REPLACE (it holds nothing that counts), and a failing DROP no longer hides the
first error. 0bba555 (_mend): a proof stopped part way, then the question that mends it stopped
too, then asked again and extended by a fact: held.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pytest
from duckdb_stops import CLOSURE, MUTUAL, Stop, Stops

from verifier.core.errors import TopologError
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program, parse_query


def _stopped_mutual(stops: list[Stop]) -> tuple[DuckDBBackend, Any]:
    duck = DuckDBBackend()
    duck.load(parse_program(MUTUAL, "t.dl"))
    duck.add_facts("e", [("a", "b"), ("b", "c"), ("c", "d")])
    con = duck._con
    stand_in = Stops(con, stops)
    duck._con = stand_in  # type: ignore[assignment]  # a stand-in on purpose
    return duck, stand_in


CREATE_AS = "AS SELECT CAST(_s."


@pytest.mark.parametrize(
    "second",
    [KeyboardInterrupt(), duckdb.OutOfMemoryException("out of memory (the DROP)")],
    ids=["ctrl-c-twice", "drop-fails"],
)
@pytest.mark.parametrize(
    "first", [KeyboardInterrupt(), duckdb.OutOfMemoryException("out of memory")], ids=["ctrl-c", "out-of-memory"]
)
def test_a_stopped_create_table_as_whose_drop_is_stopped_too(first: BaseException, second: BaseException) -> None:
    # The first CREATE TABLE AS (a derived relation made with its first rows) returns, then the
    # first error comes; the DROP inside the except meets the second. By hand (chain a->b->c->d):
    # odd holds the 3 edges and (a, d) (even(a, c), then c->d); even holds (a, c) and (b, d).
    # Before the fix the next evaluation failed: 'Table with name "r2_even" already exists!'.
    duck, stand_in = _stopped_mutual([(CREATE_AS, True, first), ("DROP TABLE IF EXISTS", False, second)])
    con = stand_in.con
    try:
        # A Ctrl-C, either one, stops the evaluation; two limit errors are reported as the first
        # (the DROP's error does not replace it).
        ctrl_c = isinstance(first, KeyboardInterrupt) or isinstance(second, KeyboardInterrupt)
        with pytest.raises(KeyboardInterrupt if ctrl_c else TopologError) as raised:
            duck.evaluate()
        if not ctrl_c:
            assert "ran out of memory" in str(raised.value)
        assert stand_in.stops == []  # both stops were met
        duck._con = con
        for _ in range(2):
            duck.evaluate()
            assert duck.query("odd") == [("a", "b"), ("a", "d"), ("b", "c"), ("c", "d")]
            assert duck.query("even") == [("a", "c"), ("b", "d")]
    finally:
        duck._con = con
        duck.close()


def test_an_out_of_memory_create_table_as_then_evaluate_again() -> None:
    # A limit error raised as the CREATE TABLE AS returns (its table made): the evaluation fails
    # closed with the engine-memory error, and the next one gives the answers above (held at d204ccf).
    duck, stand_in = _stopped_mutual([(CREATE_AS, True, duckdb.OutOfMemoryException("out of memory"))])
    con = stand_in.con
    try:
        with pytest.raises(TopologError, match="ran out of memory"):
            duck.evaluate()
        duck._con = con
        duck.evaluate()
        assert duck.query("odd") == [("a", "b"), ("a", "d"), ("b", "c"), ("c", "d")]
        assert duck.query("even") == [("a", "c"), ("b", "d")]
    finally:
        duck._con = con
        duck.close()


@pytest.mark.parametrize(
    "second",
    [("INSERT INTO", False), ("INSERT INTO", True), ("DELETE FROM", True)],
    ids=["before-round", "after-round", "after-delete"],
)
def test_a_proof_stopped_then_its_mend_stopped_then_asked_again(second: tuple[str, bool]) -> None:
    # reach over a->b->c->d->e plus a->c: the pairs (x, y) with x before y, C(5, 2) = 10. Explaining
    # reach(a, e) deletes a's tuples and derives them again in rounds: Ctrl-C as that DELETE returns;
    # the next question mends the closure (_mend) and is stopped there too; the one after must see
    # all 10, and a new link e->f then gives C(6, 2) = 15 (held at 0bba555).
    duck = DuckDBBackend()
    con = None
    try:
        duck.load(parse_program(CLOSURE, "t.dl"))
        duck.add_facts("link", [("a", "b"), ("a", "c"), ("b", "c"), ("c", "d"), ("d", "e")])
        duck.evaluate()
        con = duck._con
        duck._con = Stops(con, [("DELETE FROM", True, KeyboardInterrupt())])  # type: ignore[assignment]
        with pytest.raises(KeyboardInterrupt):
            duck.explain("reach", ("a", "e"))
        stand_in = Stops(con, [(*second, KeyboardInterrupt())])
        duck._con = stand_in  # type: ignore[assignment]
        with pytest.raises(KeyboardInterrupt):
            duck.query("reach")
        assert stand_in.stops == []
        duck._con = con
        assert len(duck.query("reach")) == 10
        assert duck.holds(parse_query('reach("a", "e")'))
        duck.add_facts("link", [("e", "f")])
        duck.evaluate()
        assert len(duck.query("reach")) == 15
    finally:
        if con is not None:
            duck._con = con
        duck.close()
