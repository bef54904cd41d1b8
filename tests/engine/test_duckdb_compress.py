"""DuckDBBackend compresses the facts it loaded before evaluating them, past COMPRESS_ROWS rows
where DuckDB's tables take at least 1/COMPRESS_SHARE of engine_memory.

At fleet scale the loaded facts' plain columns are most of the engine's memory before evaluation
(benchmarks/README.md); a checkpoint bit-packs them. These tests lower the thresholds so that a
small program crosses them, and hold that the answers are those worked out by hand, before and after
a retract (the service's path), and that below either threshold nothing is compressed.
"""

from __future__ import annotations

import pytest

from verifier.core.limits import Limits, use_limits
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
    # 9 link rows + 1 ask row = 10 rows loaded: at the threshold, so the first evaluation compresses
    # (any table memory at all is a large enough share of engine_memory).
    monkeypatch.setattr(duckdb_backend, "COMPRESS_ROWS", 10)
    monkeypatch.setattr(duckdb_backend, "COMPRESS_SHARE", 2**62)
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
    monkeypatch.setattr(duckdb_backend, "COMPRESS_SHARE", 2**62)
    engine.add_facts("link", LINKS)
    engine.add_facts("ask", [("n6",)])
    engine.evaluate()
    assert _compression(engine, "link") == {"Uncompressed"}
    assert engine.query("answer") == [("n6", 3)]


def _table_bytes(engine: DuckDBBackend) -> int:
    """What DuckDB's tables take, as the engine reads it (duckdb_memory's IN_MEMORY_TABLE)."""
    tables = "SELECT memory_usage_bytes FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'"
    return int(engine._con.execute(tables).fetchall()[0][0])


def test_past_the_rows_but_a_small_share_of_engine_memory_nothing_is_compressed(
    engine: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past COMPRESS_ROWS (10 rows loaded), but the tables take less than engine_memory / COMPRESS_SHARE:
    # with the share set to just below what they take, the limit is more than share times their bytes.
    monkeypatch.setattr(duckdb_backend, "COMPRESS_ROWS", 10)
    # On two threads (the concurrent pass, which runs again compressed if it fails): one stratum
    # after another nothing runs again, and past COMPRESS_ROWS the facts are always compressed.
    engine.workers, engine.concurrent_rows, engine.concurrent_strata = 2, 0, 2
    engine.add_facts("link", LINKS)
    engine.add_facts("ask", [("n6",)])
    held = _table_bytes(engine)
    assert held > 0
    monkeypatch.setattr(duckdb_backend, "COMPRESS_SHARE", 2)
    with use_limits(Limits(engine_memory=2 * held + 1)):  # 2 * held < the limit: a small share
        engine.evaluate()
    assert _compression(engine, "link") == {"Uncompressed"}
    # The same answers as compressed (first test): by hand, from n6 the chain reaches n7, n8, n9.
    assert engine.query("answer") == [("n6", 3)]
    assert len(engine.query("reach")) == 45
    assert engine.query("unasked") == [(f"n{i}",) for i in range(9) if i != 6]


def test_tables_at_the_share_of_engine_memory_are_compressed(
    engine: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same facts, the limit exactly COMPRESS_SHARE times what the tables take: compressed.
    monkeypatch.setattr(duckdb_backend, "COMPRESS_ROWS", 10)
    engine.add_facts("link", LINKS)
    engine.add_facts("ask", [("n6",)])
    held = _table_bytes(engine)
    monkeypatch.setattr(duckdb_backend, "COMPRESS_SHARE", 2)
    with use_limits(Limits(engine_memory=2 * held)):
        engine.evaluate()
    assert "Uncompressed" not in _compression(engine, "link")
    assert engine.query("answer") == [("n6", 3)]


def test_an_evaluation_run_again_compresses_what_its_first_attempt_left_plain(
    engine: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past COMPRESS_ROWS but below the share (10 rows never take all of engine_memory), the first
    # attempt, on two threads, leaves the facts plain. It fails (as two big statements at once that
    # ran out of memory would), and the evaluation run again, one stratum after another, compresses
    # them first: it may need that memory.
    monkeypatch.setattr(duckdb_backend, "COMPRESS_ROWS", 10)
    monkeypatch.setattr(duckdb_backend, "COMPRESS_SHARE", 1)
    engine.workers, engine.concurrent_rows, engine.concurrent_strata = 2, 0, 2
    engine.add_facts("link", LINKS)
    engine.add_facts("ask", [("n6",)])
    seen: list[set[str]] = []

    def failing(todo: object, workers: int) -> None:
        seen.append(_compression(engine, "link"))
        raise duckdb_backend._Again

    monkeypatch.setattr(engine, "_run_concurrently", failing)
    engine.evaluate()
    assert seen == [{"Uncompressed"}]
    assert "Uncompressed" not in _compression(engine, "link")
    # The same answers (first test): by hand, from n6 the chain reaches n7, n8, n9.
    assert engine.query("answer") == [("n6", 3)]
    assert len(engine.query("reach")) == 45
