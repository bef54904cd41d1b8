"""Adversarial checks of the DuckDB engine's concurrent strata (`DuckDBBackend._run_concurrently`).

Each test forces concurrency on small inputs (`concurrent_rows = 0`, `concurrent_strata = 2`) and
slows every stratum by a seeded random delay, so the threads finish in many orders; what must not
change is what the sequential engine (`workers = 1`) gives: tuples, stages, proofs, errors. The
expected tuples are worked out by hand in the comments beside them; where a value is compared with
the sequential engine's, that engine is the reference the concurrent one must equal. Nothing here
depends on timing: a delay changes which thread runs what, never what is expected.
"""

from __future__ import annotations

import contextlib
import random
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import duckdb
import pytest
from cli_helpers import run_cli

import verifier.engine.duckdb_backend as duckdb_backend
from verifier.core.errors import EngineError, TopologError
from verifier.core.limits import Limits, use_limits
from verifier.engine.ast import Row
from verifier.engine.backend import Proof
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program
from verifier.engine.schedule import run_in_pool
from verifier.engine.strata import Stratum

# r: a closure over e, which holds a cycle (a > b > c > a), so it runs as a recursive query and a
# proof derives it again in rounds (`_coarse`); p: a non-linear recursion; cnt, mx, lo: aggregates;
# acyc: negation of r; sq: arithmetic; both: reads a negation and an aggregate. f0..f19: twenty
# strata that read inputs only, so that most strata are ready at once.
PROGRAM = """
.input e(x: symbol, y: symbol)
.input w(x: symbol, n: number)
.decl r(x: symbol, y: symbol)
r(X, Y) :- e(X, Y).
r(X, Z) :- r(X, Y), e(Y, Z).
.decl p(x: symbol, y: symbol)
p(X, Y) :- e(X, Y), X != "c".
p(X, Z) :- p(X, Y), p(Y, Z).
.decl cnt(x: symbol, n: number)
cnt(X, count(Y)) :- r(X, Y).
.decl mx(n: number)
mx(max(N)) :- w(_, N).
.decl lo(x: symbol, n: number)
lo(X, min(N)) :- w(X, N).
.decl acyc(x: symbol)
acyc(X) :- w(X, _), !r(X, X).
.decl sq(x: symbol, n: number)
sq(X, M) :- w(X, N), M = N * N.
.decl both(x: symbol)
both(X) :- acyc(X), cnt(X, N), N > 0.
""" + "".join(f".decl f{i}(x: symbol)\nf{i}(X) :- e(X, _), w(X, {i}).\n" for i in range(20))
FACTS: dict[str, list[Row]] = {
    "e": [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e2"), ("x", "y")],
    "w": [("a", 1), ("b", 2), ("d", 3), ("x", 5), ("x", 2), ("e2", 4)],
}
RELATIONS = ("r", "p", "cnt", "mx", "lo", "acyc", "sq", "both", *(f"f{i}" for i in range(20)))


@pytest.fixture(autouse=True)
def no_threads_left() -> Iterator[None]:
    yield
    # Whether evaluate() returned or raised, no thread of the pool outlives it.
    assert not [t for t in threading.enumerate() if t.name.startswith("topolog-stratum")]


def concurrent(workers: int, seed: int) -> DuckDBBackend:
    """An engine that runs strata on `workers` threads on any input, each stratum after a seeded delay (<= 3 ms)."""
    engine = DuckDBBackend()
    engine.workers = workers
    engine.concurrent_rows = 0
    engine.concurrent_strata = 2
    draw = random.Random(seed)
    run = engine._run_stratum
    lock = threading.Lock()

    def slowed(stratum: Stratum) -> int:
        with lock:
            pause = draw.random() * 0.003
        with engine._unlocked():  # asleep without the engine's lock: another stratum may go first
            time.sleep(pause)
        return run(stratum)

    engine._run_stratum = slowed  # type: ignore[method-assign]
    return engine


def sequential() -> DuckDBBackend:
    engine = DuckDBBackend()
    engine.workers = 1
    return engine


def evaluated(engine: DuckDBBackend, text: str = PROGRAM, facts: Mapping[str, Sequence[Row]] = FACTS) -> DuckDBBackend:
    engine.load(parse_program(text, "t.dl"))
    for relation, rows in facts.items():
        engine.add_facts(relation, rows)
    engine.evaluate()
    return engine


def everything(engine: DuckDBBackend) -> dict[str, list[tuple[Row, Proof]]]:
    """Every tuple with its proof (Proof equality compares every stage in the tree)."""
    return {r: [(row, engine.explain(r, row)) for row in engine.query(r)] for r in RELATIONS}


def shape(proof: Proof) -> tuple[Any, ...]:
    """A proof without its stages: which rule and premises derive the tuple."""
    return (proof.relation, proof.row, proof.rule, tuple(shape(p) for p in proof.premises), proof.absent)


def test_tuples_by_hand_and_proofs_as_the_sequential_engine_in_every_order() -> None:
    # r, reachability over e: a, b and c reach each other (the cycle) and d, e2 through c > d > e2:
    # 5 each; d reaches e2; x reaches y. cnt counts those: a, b, c 5, d 1, x 1. p: e's edges but c's
    # (a>b, b>c, d>e2, x>y) and a>c (a>b>c). mx = max(1, 2, 3, 5, 2, 4) = 5; lo: x's min(5, 2) = 2.
    # acyc: the weighted d, x, e2 (a, b reach themselves); both: those of them with a cnt: d, x.
    # sq: N * N per w fact. f1: a (w(a, 1), an edge out); f2: b and x; f3: d; f5: x; e2 (w 4) has
    # no edge out, so f4 and the rest are empty.
    cycle = [(s, t) for s in "abc" for t in ("a", "b", "c", "d", "e2")]
    want = {
        "r": sorted([*cycle, ("d", "e2"), ("x", "y")]),
        "p": [("a", "b"), ("a", "c"), ("b", "c"), ("d", "e2"), ("x", "y")],
        "cnt": [("a", 5), ("b", 5), ("c", 5), ("d", 1), ("x", 1)],
        "mx": [(5,)],
        "lo": [("a", 1), ("b", 2), ("d", 3), ("e2", 4), ("x", 2)],
        "acyc": [("d",), ("e2",), ("x",)],
        "sq": [("a", 1), ("b", 4), ("d", 9), ("e2", 16), ("x", 4), ("x", 25)],
        "both": [("d",), ("x",)],
        "f1": [("a",)],
        "f2": [("b",), ("x",)],
        "f3": [("d",)],
        "f5": [("x",)],
    }
    reference = sequential()
    try:
        proofs = everything(evaluated(reference))
    finally:
        reference.close()
    assert {r: [row for row, _ in proofs[r]] for r in want} == want
    assert all(not proofs[f"f{i}"] for i in (0, 4, *range(6, 20)))
    for seed in range(6):
        engine = evaluated(concurrent(2 + seed % 3, seed))
        try:
            # Proofs asked in another order than the reference's: r's rounds are derived again by
            # the first proof that reads r, whichever that is.
            for relation in reversed(RELATIONS):
                for row in reversed(engine.query(relation)):
                    assert engine.explain(relation, row) == dict(proofs[relation])[row], (seed, relation, row)
        finally:
            engine.close()


def test_re_evaluations_after_new_and_retracted_facts_match_the_sequential_engine() -> None:
    # As the service's placements do: facts added, evaluated, a relation retracted and refilled.
    # Step 2: e2 > a closes d and e2 into the cycle (r then holds 5 x 5 among a, b, c, d, e2, and x > y:
    # acyc is x alone). Step 3: e is only b > x, y > b (x > y went with the retraction): r = b>x,
    # y>b and y>x (through b); nothing reaches itself. Step 4:
    # no w: mx, lo, acyc, sq, both and every f are empty.
    def steps(engine: DuckDBBackend) -> list[dict[str, list[tuple[Row, Proof]]]]:
        out = [everything(evaluated(engine))]
        engine.add_facts("e", [("e2", "a")])
        engine.evaluate()
        out.append(everything(engine))
        engine.retract("e")
        engine.add_facts("e", [("b", "x"), ("y", "b")])
        engine.evaluate()
        out.append(everything(engine))
        engine.retract("w")
        engine.evaluate()
        out.append(everything(engine))
        return out

    reference = sequential()
    try:
        want = steps(reference)
    finally:
        reference.close()
    assert [row for row, _ in want[1]["acyc"]] == [("x",)]
    assert [row for row, _ in want[2]["r"]] == [("b", "x"), ("y", "b"), ("y", "x")]
    assert all(not want[3][r] for r in ("mx", "lo", "acyc", "sq", "both", *(f"f{i}" for i in range(20))))
    for seed in range(3):
        engine = concurrent(2 + seed % 2, seed)
        try:
            assert steps(engine) == want, seed
        finally:
            engine.close()


# aa's addition leaves 64 bits for w(a, 1) (1 + 2^63 - 1); zz's product too (2 * 2^62 for b). aa
# comes first in the sequential order (a < z), so its error is the one reported, on line 6.
OVERFLOW = """.input e(x: symbol, y: symbol)
.input w(x: symbol, n: number)
.decl zz(x: symbol, n: number)
zz(X, M) :- w(X, N), M = N * 4611686018427387904.
.decl aa(x: symbol, n: number)
aa(X, M) :- w(X, N), M = N + 9223372036854775807.
"""


def test_an_overflow_in_one_worker_is_reported_as_the_sequential_engine_reports_it() -> None:
    text = OVERFLOW + "".join(f".decl f{i}(x: symbol)\nf{i}(X) :- e(X, _), w(X, {i}).\n" for i in range(20))
    want = "t.dl:6:26: arithmetic overflowed 64-bit integers in (N + 9223372036854775807) while deriving 'aa'"
    for engine in (sequential(), *(concurrent(2 + seed % 3, seed) for seed in range(6))):
        try:
            with pytest.raises(EngineError) as caught:
                evaluated(engine, text)
            assert str(caught.value).startswith(want), engine.workers
        finally:
            engine.close()


def test_a_failure_beside_a_long_statement_stops_it_and_gives_the_sequential_error() -> None:
    # big is every pair of 2,000 numbers (4 M rows): a statement long enough that aa's overflow
    # (first in the sequential order, a < b) usually comes while it runs, and the pool interrupts
    # it; whether it ran, was cut short or never started, the error is aa's and no thread is left.
    text = OVERFLOW + ".input n(x: number)\n.decl big(x: number, y: number)\nbig(X, Y) :- n(X), n(Y).\n"
    numbers: list[Row] = [(i,) for i in range(2000)]
    facts = {**FACTS, "n": numbers}
    want = "t.dl:6:26: arithmetic overflowed 64-bit integers"
    for seed in range(3):
        engine = concurrent(2, seed)
        try:
            with pytest.raises(EngineError) as caught:
                evaluated(engine, text, facts)
            assert str(caught.value).startswith(want)
        finally:
            engine.close()


def test_a_derived_tuples_limit_names_the_same_relation_in_every_order() -> None:
    # g0..g19 are each the closure of e = a > b > c (a>b, b>c, a>c: 3 tuples), all ready at once. In
    # the sequential order (by name: g0, g1, g10, ..., g19, g2, g3, ...) the 17th, g6, takes the
    # count from 48 to 51, past 50 (its first round's 2 tuples give 50, its second's 1 gives 51).
    # g6 is declared on line 21 (2 input lines, then 3 lines per g: 3 + 3 * 6).
    text = ".input e(x: symbol, y: symbol)\n.input w(x: symbol, n: number)\n" + "".join(
        f".decl g{i}(x: symbol, y: symbol)\ng{i}(X, Y) :- e(X, Y).\ng{i}(X, Z) :- g{i}(X, Y), e(Y, Z).\n"
        for i in range(20)
    )
    facts: dict[str, list[Row]] = {"e": [("a", "b"), ("b", "c")], "w": []}
    want = "t.dl:21:1: the rules derive 51 tuples (relation 'g6' holds 3 of them so far)"
    for engine in (sequential(), *(concurrent(2 + seed % 3, seed) for seed in range(8))):
        try:
            with use_limits(Limits(derived_tuples=50)), pytest.raises(TopologError) as caught:
                evaluated(engine, text, facts)
            assert str(caught.value).startswith(want), engine.workers
        finally:
            engine.close()


def test_evaluated_again_after_a_limit_the_answers_are_a_fresh_evaluations() -> None:
    # A limit passed part way (10 tuples: r alone derives 17) leaves tuples of the concurrent run
    # and of the sequential one it falls back to; asked again without the limit, none may be left
    # twice or at a stale stage.
    reference = sequential()
    try:
        want = everything(evaluated(reference))
    finally:
        reference.close()
    for seed in range(3):
        engine = concurrent(2 + seed % 2, seed)
        try:
            with use_limits(Limits(derived_tuples=10)), pytest.raises(TopologError):
                evaluated(engine)
            engine.evaluate()
            assert everything(engine) == want, seed
        finally:
            engine.close()


def test_ctrl_c_in_a_re_evaluation_then_evaluating_again_gives_the_same_tuples_and_proofs() -> None:
    # A Ctrl-C (raised in r's stratum) stops a re-evaluation; evaluated again, the tuples and the
    # rules and premises of every proof are the sequential engine's. The stage numbers may differ:
    # the sequential engine keeps the stages of the strata it finished before the Ctrl-C, the
    # concurrent one places stages only once every stratum has ended (so after a Ctrl-C none).
    # Each remains well-founded: a premise's stage is below its conclusion's.
    def interrupted_then_again(engine: DuckDBBackend) -> dict[str, list[tuple[Row, Proof]]]:
        evaluated(engine)
        run = engine._run_stratum

        def stopped(stratum: Stratum) -> int:
            if stratum.relations == ("r",):
                raise KeyboardInterrupt
            return run(stratum)

        engine._run_stratum = stopped  # type: ignore[method-assign]
        engine.add_facts("e", [("e2", "a")])
        with pytest.raises(KeyboardInterrupt):
            engine.evaluate()
        engine._run_stratum = run  # type: ignore[method-assign]
        engine.evaluate()
        return everything(engine)

    def founded(proof: Proof) -> bool:
        return all(p.stage < proof.stage and founded(p) for p in proof.premises)

    reference = sequential()
    try:
        want = interrupted_then_again(reference)
    finally:
        reference.close()
    for seed in range(3):
        engine = concurrent(2, seed)
        try:
            got = interrupted_then_again(engine)
            assert {r: [(row, shape(p)) for row, p in got[r]] for r in RELATIONS} == {
                r: [(row, shape(p)) for row, p in want[r]] for r in RELATIONS
            }
            assert all(founded(p) for r in RELATIONS for _, p in got[r])
        finally:
            engine.close()


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every DuckDB engine the CLI makes runs its strata on 3 threads, whatever the input's size;
    the list counts the evaluations that did (so a test knows the concurrent path ran)."""
    monkeypatch.setattr(duckdb_backend, "WORKERS", 3)
    monkeypatch.setattr(duckdb_backend, "CONCURRENT_ROWS", 0)
    monkeypatch.setattr(duckdb_backend, "CONCURRENT_STRATA", 2)
    runs: list[int] = []
    inner = DuckDBBackend._run_concurrently

    def counted(self: DuckDBBackend, todo: Sequence[Stratum], workers: int) -> None:
        runs.append(len(todo))
        inner(self, todo, workers)

    monkeypatch.setattr(DuckDBBackend, "_run_concurrently", counted)
    return runs


CLI_RUNS = (
    ("verify", "inventories/mixed-fleet.yaml", "--engine", "duckdb", "--format", "sarif", "--proofs"),
    ("verify", "inventories/gb200-nvl72.yaml", "--engine", "duckdb", "--format", "json", "--proofs"),
)


def test_cli_outputs_with_proofs_are_byte_identical_sequential_and_concurrent(
    forced: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The shipped inventories are far below a fleet's 200,000 rows, so the CLI evaluates them in
    # order; forced onto 3 threads, SARIF (codeFlows from the proofs) and JSON with proofs must be
    # the same bytes as the sequential run's.
    env = {"TOPOLOG_CACHE_DIR": ""}
    with monkeypatch.context() as m:
        m.setattr(duckdb_backend, "WORKERS", 1)
        want = [run_cli(*args, env=env) for args in CLI_RUNS]
    assert not forced
    assert all(out and not err for _, out, err in want)
    assert [run_cli(*args, env=env) for args in CLI_RUNS] == want
    assert len(forced) == len(CLI_RUNS) and all(n >= 2 for n in forced)


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="a signal needs the main thread")
def test_ctrl_c_while_the_caller_joins_a_running_task_waits_for_it_to_end(python_sigint: None) -> None:
    # Broken before: CPython 3.11's Thread.join, interrupted by a signal, releases the running
    # thread's own state lock (bpo-45274's except branch), so is_alive() said False and the pool
    # returned while a statement ran (`topolog verify` of 32,768 GPUs, Ctrl-C while evaluating:
    # 'internal error (ResourceInUseException ...)', exit 2, at close()).
    # A real SIGINT (as a terminal sends) to the calling thread once it is waiting in a thread's
    # join; the task then waits up to 2 s for the caller to leave run_in_pool. run_in_pool must not
    # return before its task has ended, so the task sees the caller still inside: `left` unset.
    main = threading.main_thread()
    left = threading.Event()
    saw_caller_leave: list[bool] = []

    def joining() -> bool:
        frame = sys._current_frames().get(main.ident or 0)
        while frame is not None:
            if frame.f_code.co_name == "_wait_for_tstate_lock":
                return True
            frame = frame.f_back
        return False

    def task(index: int) -> None:
        deadline = time.monotonic() + 10
        while not joining() and time.monotonic() < deadline:
            time.sleep(0.001)
        signal.pthread_kill(main.ident or 0, signal.SIGINT)
        saw_caller_leave.append(left.wait(2))

    try:
        with pytest.raises(KeyboardInterrupt):
            run_in_pool([()], 1, task, contextlib.nullcontext, lambda: None)
    finally:
        left.set()
        # Should the task outlive the call, let it end before the fixture looks for the pool's threads.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(t.name.startswith("topolog-stratum") for t in threading.enumerate()):
            time.sleep(0.001)
    # Once the call has returned, the task has ended: it never saw the caller leave.
    assert saw_caller_leave == [False]


def test_after_a_failed_concurrent_attempt_the_run_again_has_the_memory_the_sequential_one_has() -> None:
    # aa is every triple of 150 numbers: 150^3 = 3,375,000 tuples of three BIGINTs and a stage,
    # about 100 MiB in DuckDB; one copy fits 160 MiB, two do not. zz stands for a stratum that ran
    # out of memory beside another (the docs' reason for running again in order): once aa's tuples
    # are stored, it fails in the pool, and the engine evaluates again one stratum after another.
    # That must succeed as the sequential engine does, with all 3,375,000 tuples of aa. (Broken
    # before: the tuples were deleted, and DuckDB keeps a deleted row's memory until a checkpoint;
    # at 32,768 GPUs, engine_memory 160 MiB named 'conflicting_link' instead of 'sw_domain_ref'.)
    text = (
        ".input n(x: number)\n.decl aa(x: number, y: number, z: number)\naa(X, Y, Z) :- n(X), n(Y), n(Z).\n"
        ".decl zz(x: number)\nzz(X) :- n(X).\n"
    )
    numbers: list[Row] = [(i,) for i in range(150)]
    engines = [sequential()]
    engine = DuckDBBackend()
    engine.workers = 2
    engine.concurrent_rows = 0
    engine.concurrent_strata = 2
    run = engine._run_stratum

    def failing(stratum: Stratum) -> int:
        if stratum.relations == ("zz",) and threading.current_thread().name.startswith("topolog-stratum"):
            deadline = time.monotonic() + 60
            while "aa" not in engine._filled and time.monotonic() < deadline:  # aa stored: its tuples counted
                with engine._unlocked():
                    time.sleep(0.01)
            raise duckdb.OutOfMemoryException("as two big statements at once")
        return run(stratum)

    engine._run_stratum = failing  # type: ignore[method-assign]
    engines.append(engine)
    for each in engines:
        try:
            with use_limits(Limits(engine_memory=160 * 2**20)):
                evaluated(each, text, {"n": numbers})
            assert each.count("aa") == 150**3
            assert each.count("zz") == 150
        finally:
            each.close()
