"""DuckDB makes a derived relation's table with its first rows (CREATE TABLE AS): the same columns and types."""

from __future__ import annotations

import pytest

from verifier.core.errors import EngineError
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program

PROGRAM = """\
.input n(x: number)
.input named(who: symbol, x: number)
.decl twice(who: symbol, y: number)
.decl some()
.decl none(who: symbol)
.decl square(y: number)
twice(W, Y) :- named(W, X), Y = X * 2.
some() :- n(_).
none(W) :- named(W, X), X > 100.
square(Y) :- n(X), Y = X * X.
"""


def _columns(engine: DuckDBBackend, relation: str) -> list[tuple[str, str]]:
    table = engine._schema.tables[relation].strip('"')
    rows = engine._con.execute(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [(str(name), str(kind)) for name, kind in rows]


@pytest.fixture
def engine() -> DuckDBBackend:
    made = DuckDBBackend()
    made.load(parse_program(PROGRAM, "t.dl"))
    return made


def test_a_derived_table_has_the_declared_columns_and_types(engine: DuckDBBackend) -> None:
    engine.add_facts("n", [(3,)])
    engine.add_facts("named", [("a", 1), ("b", 4)])
    engine.evaluate()
    # twice(who: symbol, y: number): a symbol is an INTEGER id, a number a BIGINT, the stage an INTEGER.
    assert _columns(engine, "twice") == [("c0", "INTEGER"), ("c1", "BIGINT"), ("_stage", "INTEGER")]
    # A relation of no arguments holds one unit column.
    assert _columns(engine, "some") == [("_unit", "BOOLEAN"), ("_stage", "INTEGER")]
    # named(a, 1) and named(b, 4): twice(a, 2), twice(b, 8); n(3): square(9); none derives nothing
    # (no X > 100) and still has its table, with its columns.
    assert engine.query("twice") == [("a", 2), ("b", 8)]
    assert engine.query("square") == [(9,)]
    assert engine.query("some") == [()]
    assert engine.query("none") == []
    assert _columns(engine, "none") == [("c0", "INTEGER"), ("_stage", "INTEGER")]
    # Evaluated again with one more fact: the tables made by the first evaluation take the new tuples.
    engine.add_facts("named", [("c", 200)])
    engine.evaluate()
    assert engine.query("twice") == [("a", 2), ("b", 8), ("c", 400)]
    assert engine.query("none") == [("c",)]
    engine.close()


def test_a_table_whose_making_failed_is_made_by_the_next_evaluation(engine: DuckDBBackend) -> None:
    # 2**40 squared leaves 64 bits: the statement that would make square's table fails.
    engine.add_facts("n", [(2**40,)])
    with pytest.raises(EngineError, match="overflowed"):
        engine.evaluate()
    assert "square" not in engine._schema.used
    engine.retract("n")
    engine.add_facts("n", [(5,)])
    engine.evaluate()
    assert engine.query("square") == [(25,)]
    assert _columns(engine, "square") == [("c0", "BIGINT"), ("_stage", "INTEGER")]
    engine.close()


def test_reading_a_relation_no_statement_named_makes_no_table(engine: DuckDBBackend) -> None:
    # n(1) gives some() and square(1); named has no facts, so twice and none are never derived:
    # reading them answers nothing, as reading an empty table would, without making their tables.
    engine.add_facts("n", [(1,)])
    engine.evaluate()
    assert engine.query("twice") == [] and engine.query("none", {0: "a"}) == []
    assert engine.count("twice") == 0
    assert {"twice", "none"}.isdisjoint(engine._schema.used)
    assert engine.query("square") == [(1,)] and engine.count("square") == 1
    # A position the relation does not have is still refused.
    with pytest.raises(ValueError, match="no argument position 5"):
        engine.query("twice", {5: 1})
    engine.close()
