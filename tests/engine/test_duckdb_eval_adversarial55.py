"""Trying to break the DuckDB evaluation's ninth-round changes (issue 46): the checkpoint before an
evaluation skipped below COMPRESS_SHARE, the failed concurrent pass run again compressed, and the
ids whose texts a statement needs read with the engine's lock let go (`_store_texts`).

What broke: one stratum after another (one worker, or a program of fewer strata than
concurrent_strata) nothing runs again after running out of memory, so an evaluation that fit in
engine_memory with the checkpoint failed without it (exit 2 where b43b57b answered). Fixed in
`_evaluate`: left plain only where the concurrent pass runs. What held: texts stored by the other
thread while one reads its ids are not stored twice; a failure inside that read, on a stratum's
thread or in the calling one, gives the sequential error or answers and leaves the lock free.
"""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb
import pytest

from verifier.core.errors import TopologError
from verifier.core.limits import Limits, use_limits
from verifier.engine import duckdb_backend
from verifier.engine import sql_compiler as sc
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program

POD = Path(__file__).resolve().parents[2] / "inventories" / "dgx-h100-pod.yaml"

CHAIN = """
.input link(src: symbol, dst: symbol)
.decl reach(src: symbol, dst: symbol)
reach(X, Y) :- link(X, Y).
reach(X, Y) :- reach(X, Z), link(Z, Y).
"""
LINKS = [(f"n{i}", f"n{i + 1}") for i in range(9)]  # a chain n0 -> ... -> n9: 9 rows


def _compression(engine: DuckDBBackend, relation: str) -> set[str]:
    """How DuckDB stores the relation's columns: 'Uncompressed' until a checkpoint compresses them."""
    table = engine._schema.table(relation).strip('"')
    rows = engine._con.execute(f"SELECT compression FROM pragma_storage_info('{table}')").fetchall()
    return {r[0] for r in rows}


@pytest.mark.parametrize(("workers", "strata"), [(1, 16), (2, 16)])
def test_one_stratum_after_another_past_the_rows_the_facts_are_compressed(
    workers: int, strata: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 9 rows past COMPRESS_ROWS = 9, and a share no table reaches (1 x their bytes < 1 GiB): the
    # concurrent pass would leave them plain, as it runs again compressed if it runs out of memory.
    # Here the program has one stratum (reach), fewer than `strata`, or one worker: it runs in the
    # calling thread, where nothing runs again, so the facts are compressed as before the change.
    monkeypatch.setattr(duckdb_backend, "COMPRESS_ROWS", 9)
    monkeypatch.setattr(duckdb_backend, "COMPRESS_SHARE", 1)
    engine = DuckDBBackend()
    engine.workers, engine.concurrent_rows, engine.concurrent_strata = workers, 0, strata
    engine.load(parse_program(CHAIN, "t.dl"))
    engine.add_facts("link", LINKS)
    assert not engine._worth_compressing()  # the share alone would leave them plain
    engine.evaluate()
    assert "Uncompressed" not in _compression(engine, "link")
    # By hand: every (ni, nj) with i < j of the chain: 10 * 9 / 2 = 45 pairs; from n7: n8, n9.
    assert len(engine.query("reach")) == 45
    assert engine.query("reach", {0: "n7"}) == [("n7", "n8"), ("n7", "n9")]


PAIRS = """
.input e(a: number, b: number)
.decl f(a: number, b: number)
f(A, B) :- e(A, X), e(X, B).
"""
NODES, FAN = 250_000, 4
MEMORY = 200 << 20
"""engine_memory for PAIRS' 1 M facts, measured: the evaluation fits in 200 MiB with the facts
compressed (b43b57b, 3 runs of 3) and runs out of it with them plain (failing from 185 to 215 MiB);
1 M plain rows of 3 columns take 24-32 MB, under a sixth of it, so the share alone skips the checkpoint.
"""


@pytest.mark.slow
def test_an_evaluation_that_fit_with_the_checkpoint_fits_one_stratum_after_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # e: node i links to (7919 i + 104729 k) mod N for k = 0..3 (N = 250,000): 4 distinct targets
    # (104729 is prime, so k * 104729 mod N are distinct), 1,000,000 rows. f(A, B) = two steps:
    # B = 7919^2 A + 104729 (7919 k1 + k2) mod N, and the 16 values 7919 k1 + k2 are distinct and
    # under N, times a unit mod N: 16 distinct B per A, 4,000,000 tuples.
    monkeypatch.setattr(duckdb_backend, "COMPRESS_ROWS", 1000)
    with use_limits(Limits(engine_memory=MEMORY)):
        engine = DuckDBBackend()
        engine.workers = 1  # one core: no concurrent pass, so no run again after running out of memory
        engine.load(parse_program(PAIRS, "t.dl"))
        engine.add_facts("e", [(i, (i * 7919 + k * 104729) % NODES) for i in range(NODES) for k in range(FAN)])
        assert not engine._worth_compressing()  # under a sixth of engine_memory
        engine.evaluate()  # before the fix: "DuckDB ran out of memory while deriving relation 'f'"
    assert engine.count("f") == NODES * FAN * FAN


BOTH = """
.input node(x: symbol)
.decl after(x: symbol, y: symbol)
.decl pairs(x: symbol, y: symbol)
after(X, Y) :- node(X), node(Y), X > Y.
pairs(X, Y) :- node(X), node(Y), X < Y.
"""
WAIT = 30.0
"""Seconds a reading thread waits for the other one (only a failing run waits that long)."""


def _both(workers: int = 2) -> DuckDBBackend:
    engine = DuckDBBackend()
    engine.workers, engine.concurrent_rows, engine.concurrent_strata = workers, 0, 2
    engine.load(parse_program(BOTH, "t.dl"))
    assert [s.relations for s in engine._strata] == [("after",), ("pairs",)]
    engine.add_facts("node", [("n2",), ("n1",), ("n3",)])
    return engine


def _answers_by_hand(engine: DuckDBBackend) -> None:
    # n1 < n2 < n3 as texts: pairs are the 3 ordered pairs, after the same pairs reversed.
    assert engine.query("pairs") == [("n1", "n2"), ("n1", "n3"), ("n2", "n3")]
    assert engine.query("after") == [("n2", "n1"), ("n3", "n1"), ("n3", "n2")]


def _texts(engine: DuckDBBackend) -> tuple[int, int]:
    return engine._con.execute(f"SELECT count(*), count(DISTINCT id) FROM {sc.SYMBOLS}").fetchall()[0]


def test_texts_the_other_thread_stored_during_the_read_are_not_stored_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Both strata compare the texts of n1, n2, n3. The first thread to read its ids waits there
    # (its lock let go) until the other stratum has stored those texts and run its statement;
    # then it must find them stored (flags read again) and copy none twice.
    engine = _both()
    other_ran = threading.Event()
    guard = threading.Lock()
    first: list[str] = []
    waited: list[bool] = []
    read_ids, insert = engine._text_ids, engine._insert

    def text_ids(*args: object, **kwargs: object) -> object:
        with guard:
            mine = not first
            if mine:
                first.append(engine._computing)
        if mine:
            waited.append(other_ran.wait(WAIT))
        return read_ids(*args, **kwargs)  # type: ignore[arg-type]

    def inserting(relation: str, *args: object, **kwargs: object) -> int:
        count = insert(relation, *args, **kwargs)  # type: ignore[arg-type]
        if first and relation != first[0]:
            other_ran.set()
        return count

    monkeypatch.setattr(engine, "_text_ids", text_ids)
    monkeypatch.setattr(engine, "_insert", inserting)
    engine.evaluate()
    assert waited == [True]
    assert _texts(engine) == (3, 3)  # n1, n2, n3 once each
    _answers_by_hand(engine)
    assert not engine._lock.locked()


def test_a_failure_inside_the_unlocked_read_runs_again_one_stratum_after_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The first read of ids (on a stratum's thread, its lock let go) fails once: the concurrent pass
    # fails, the evaluation runs again in order and answers as by hand; the lock is free after.
    engine = _both()
    read_ids = engine._text_ids
    calls: list[str] = []

    def text_ids(*args: object, **kwargs: object) -> object:
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            raise duckdb.InterruptException("stopped in the read")
        return read_ids(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "_text_ids", text_ids)
    engine.evaluate()
    # The failed read ran on a stratum's thread; the later ones (if any: the other thread may have
    # stored every text already) need not.
    assert calls[0].startswith("topolog-stratum-")
    assert _texts(engine) == (3, 3)
    _answers_by_hand(engine)
    assert not engine._lock.locked()


@pytest.mark.parametrize("workers", [1, 2])
def test_out_of_memory_inside_the_read_names_the_first_stratum_in_order(
    workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every read of ids runs out of memory: in order, `after` (first by name) is the first stratum
    # whose statement reads texts, so the error names it, on either path; the engine answers after.
    engine = _both(workers)

    def text_ids(*args: object, **kwargs: object) -> object:
        raise duckdb.OutOfMemoryException("Out of Memory Error: could not allocate")

    monkeypatch.setattr(engine, "_text_ids", text_ids)
    with pytest.raises(TopologError, match=r"ran out of memory while deriving relation 'after'"):
        engine.evaluate()
    assert not engine._lock.locked()
    monkeypatch.undo()
    engine.evaluate()
    assert _texts(engine) == (3, 3)
    _answers_by_hand(engine)


def test_ctrl_c_inside_the_read_in_the_calling_thread_then_evaluating_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The calling thread (one worker: a REPL's) holds no lock to let go: a Ctrl-C in the read leaves
    # no text half stored, and the next evaluation answers as by hand with each text once.
    engine = _both(workers=1)
    read_ids = engine._text_ids

    def text_ids(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(engine, "_text_ids", text_ids)
    with pytest.raises(KeyboardInterrupt):
        engine.evaluate()
    monkeypatch.setattr(engine, "_text_ids", read_ids)
    engine.evaluate()
    assert _texts(engine) == (3, 3)
    _answers_by_hand(engine)


WORDS = ["", "a", "b", "bb", "c", "e\u0301", "\u00e9", "\U0001f600", "z\u00fcrich", "m"]
"""In code point order (both engines compare so): "" < "a" < "b" < "bb" < "c" < "e" + acute < "m"
< "z\u00fcrich" < "\u00e9" < the emoji."""


def _many_strata(strata: int) -> str:
    # `strata` relations that read nothing of each other, each comparing the words' texts to each
    # other and to a constant of its own (interned as its statement is made, on a stratum's thread):
    # every statement reads texts, several of them the same ones, at once.
    lines = [".input w(x: symbol)"]
    for i in range(strata):
        lines.append(f".decl r{i:02}(x: symbol, y: symbol)")
        lines.append(f'r{i:02}(X, Y) :- w(X), w(Y), X < Y, X >= "{WORDS[i % len(WORDS)]}", Y != "new{i}".')
    return "\n".join(lines)


def test_many_strata_reading_texts_at_once_answer_as_the_memory_engine() -> None:
    program = parse_program(_many_strata(12), "t.dl")
    memory = make_backend("memory")
    memory.load(program)
    memory.add_facts("w", [(w,) for w in WORDS])
    memory.evaluate()
    # By hand for one: r01 keeps X >= "a" (every word but ""), Y above X: 8 + 7 + ... + 1 = 36 pairs
    # of the 9 words from "a" up; r00 (X >= "") all 10 words: 45.
    assert len(memory.query("r00")) == 45
    assert len(memory.query("r01")) == 36
    for _ in range(5):
        engine = DuckDBBackend()
        engine.workers, engine.concurrent_rows, engine.concurrent_strata = 2, 0, 2
        engine.load(program)
        engine.add_facts("w", [(w,) for w in WORDS])
        engine.evaluate()
        for i in range(12):
            assert engine.query(f"r{i:02}") == memory.query(f"r{i:02}")
        count, distinct = _texts(engine)
        assert count == distinct  # no text stored twice by the two threads
        assert not engine._lock.locked()


def test_ctrl_c_during_a_commands_evaluation_exits_130_not_the_findings_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Ctrl-C while the rules evaluate (seen live: SIGINT to `topolog verify` of 32,768 GPUs during
    # "evaluating rules" printed click's "Aborted!" and exited 1, the findings code, at b43b57b too:
    # click's standalone main takes a KeyboardInterrupt raised inside a command). The console entry
    # point means it to be exit 130 and "topolog: interrupted" (verifier.cli.main._interrupted), as a
    # CI must not read a stopped run as one that found problems: LazyGroup.invoke passes it on.
    from verifier.cli import main as cli_main

    def stopped(self: DuckDBBackend) -> None:
        raise KeyboardInterrupt

    monkeypatch.setenv("TOPOLOG_CACHE_DIR", "")
    monkeypatch.setattr(DuckDBBackend, "evaluate", stopped)
    with pytest.raises(SystemExit) as ended:
        cli_main.run(["verify", str(POD), "--engine", "duckdb", "--format", "json"])
    assert ended.value.code == 130
    assert capsys.readouterr().err.endswith("topolog: interrupted\n")
