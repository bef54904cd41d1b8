"""DuckDBBackend compresses the facts it loaded before evaluating them, past COMPRESS_ROWS rows.

At fleet scale the loaded facts' plain columns are most of the engine's memory before evaluation
(benchmarks/README.md); a checkpoint bit-packs them. These tests lower the threshold so that a
small program crosses it, and hold that the answers are those worked out by hand, before and after
a retract (the service's path), and that below the threshold nothing is compressed.
"""

from __future__ import annotations

import pytest

from verifier.engine import duckdb_backend
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program

TEXT = """
.input link(src: symbol, dst: symbol)
.input ask(node: symbol)
.decl reach(src: symbol, dst: symbol)
reach(X, Y) :- link(X, Y).
reach(X, Y) :- reach(X, Z), link(Z, Y).
.decl answer(src: symbol, n: number)
answer(X, count(Y)) :- ask(X), reach(X, Y).
.decl unasked(node: symbol)
unasked(X) :- link(X, _), !ask(X).
"""
# A chain n0 -> n1 -> ... -> n9 (9 links).
LINKS = [(f"n{i}", f"n{i + 1}") for i in range(9)]


def _compression(engine: DuckDBBackend, relation: str) -> set[str]:
    """How DuckDB stores the relation's columns: 'Uncompressed' until a checkpoint compresses them."""
    table = engine._schema.table(relation)  # the engine's own table name, as the backend quotes it
    rows = engine._con.execute(f"SELECT compression FROM pragma_storage_info('{table.strip(chr(34))}')").fetchall()
    return {r[0] for r in rows}


@pytest.fixture
def engine() -> DuckDBBackend:
    e = DuckDBBackend()
    e.load(parse_program(TEXT, "t.dl"))
    return e


def test_loaded_facts_past_the_threshold_are_compressed_and_answer_the_same(
    engine: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 9 link rows + 1 ask row = 10 rows loaded: at the threshold, so the first evaluation compresses.
    monkeypatch.setattr(duckdb_backend, "COMPRESS_ROWS", 10)
    engine.add_facts("link", LINKS)
    engine.add_facts("ask", [("n6",)])
    assert _compression(engine, "link") == {"Uncompressed"}
    engine.evaluate()
    assert "Uncompressed" not in _compression(engine, "link")
    # By hand: from n6 the chain reaches n7, n8, n9 (3); the 45 reach pairs are every (ni, nj), i < j;
    # unasked: every link source n0..n8 but n6.
    assert engine.query("answer") == [("n6", 3)]
    assert len(engine.query("reach")) == 45
    assert engine.query("reach", {0: "n8"}) == [("n8", "n9")]
    assert engine.query("unasked") == [(f"n{i}",) for i in range(9) if i != 6]
    # The service's path: a compressed input retracted and given other facts, derived again.
    engine.retract("ask")
    engine.add_facts("ask", [("n0",), ("n9",)])
    engine.evaluate()
    # By hand: n0 reaches n1..n9 (9); n9 is asked but reaches nothing, so it has no answer row.
    assert engine.query("answer") == [("n0", 9)]
    assert engine.query("unasked") == [(f"n{i}",) for i in range(1, 9)]


def test_below_the_threshold_nothing_is_compressed(engine: DuckDBBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(duckdb_backend, "COMPRESS_ROWS", 11)  # one more than the 10 rows loaded
    engine.add_facts("link", LINKS)
    engine.add_facts("ask", [("n6",)])
    engine.evaluate()
    assert _compression(engine, "link") == {"Uncompressed"}
    assert engine.query("answer") == [("n6", 3)]
