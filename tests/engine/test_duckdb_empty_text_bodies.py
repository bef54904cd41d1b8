"""A DuckDB statement whose rule bodies compare symbols by text, and have no row even without those
comparisons, is not run: the query for the ids whose texts it would read found none (TOPO002's
`L1 < L2` over a fleet's links, whose ends no two links share, joined a million links twice).

Each answer is worked out by hand from the facts, and checked against the memory engine.
"""

from __future__ import annotations

from typing import Any

import duckdb

from verifier.engine.ast import Row
from verifier.engine.checks import check_program
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.memory_backend import MemoryBackend
from verifier.engine.parser import parse_program

PROGRAM = """
.input e(l: symbol, a: symbol, m: number)
.decl clash(l1: symbol, l2: symbol)
clash(L1, L2) :- e(L1, A, M1), e(L2, A, M2), M1 != M2, L1 < L2.
.decl on_x(l: symbol)
on_x(L) :- e(L, "x", _).
on_x(L1) :- e(L1, A, M1), e(L2, A, M2), M1 != M2, L1 < L2.
"""

# Two links end on "x" and one on "y", all at 5: no two links of one end differ in m, so neither
# body that compares L1 < L2 has a row, compared or not.
QUIET: list[Row] = [("l1", "x", 5), ("l2", "y", 5), ("l3", "x", 5)]


class _Recording:
    """Stands in for the DuckDB connection and keeps every statement run through it."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.statements: list[str] = []

    def execute(self, sql: str, *args: Any) -> Any:
        self.statements.append(sql)
        return self.con.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)


def _memory(facts: list[Row]) -> MemoryBackend:
    program = parse_program(PROGRAM, "t.dl")
    check_program(program)
    memory = MemoryBackend()
    memory.load(program)
    memory.add_facts("e", facts)
    memory.evaluate()
    return memory


def test_bodies_without_rows_run_no_statement_and_later_facts_still_derive() -> None:
    program = parse_program(PROGRAM, "t.dl")
    check_program(program)
    duck = DuckDBBackend()
    try:
        duck.load(program)
        duck.add_facts("e", QUIET)
        con = duck._con
        recording = _Recording(con)
        duck._con = recording  # type: ignore[assignment]  # a stand-in on purpose
        try:
            duck.evaluate()
        finally:
            duck._con = con
        # clash: no row, and its table made empty without running its join: the one statement
        # naming its table is a plain CREATE TABLE (only the query for its ids read the join).
        assert duck.query("clash") == [] == _memory(QUIET).query("clash")
        made = [s for s in recording.statements if '_clash"' in s]
        assert len(made) == 1 and made[0].startswith("CREATE OR REPLACE TABLE") and " AS SELECT " not in made[0]
        # on_x: its first rule has rows without texts, so the statement runs: l1 and l3 end on "x".
        assert sorted(duck.query("on_x")) == [("l1",), ("l3",)] == sorted(_memory(QUIET).query("on_x"))
        ran = [s for s in recording.statements if '_on_x"' in s and s.startswith("CREATE OR REPLACE TABLE")]
        assert len(ran) == 1 and " AS SELECT " in ran[0]

        # l4 ends on "x" at 7: it differs from l1 and l3 (both at 5), and "l1" < "l4", "l3" < "l4".
        louder = [("l4", "x", 7)]
        duck.add_facts("e", louder)
        duck.evaluate()
        memory = _memory([*QUIET, *louder])
        assert sorted(duck.query("clash")) == [("l1", "l4"), ("l3", "l4")] == sorted(memory.query("clash"))
        # on_x: l1, l3 and l4 end on "x"; the compared rule adds l1 and l3 again.
        assert sorted(duck.query("on_x")) == [("l1",), ("l3",), ("l4",)] == sorted(memory.query("on_x"))
        proof = duck.explain("clash", ("l1", "l4"))
        assert (proof.relation, proof.row) == ("clash", ("l1", "l4"))
    finally:
        duck.close()
