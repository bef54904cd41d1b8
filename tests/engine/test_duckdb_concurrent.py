"""The DuckDB engine evaluating independent strata at once (`DuckDBBackend._run_concurrently`).

Threads finish in whatever order the machine gives them; each stratum here is slowed by a random
delay (seeded, different every run) so that they finish in many orders. Whatever the order, the
tuples, the stage of each (so every proof) and any error must be those of the sequential order.
Expected values are worked out by hand in the comments next to them.
"""

from __future__ import annotations

import _thread
import random
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from verifier.core.errors import TopologError
from verifier.core.limits import Limits, use_limits
from verifier.engine.ast import Row
from verifier.engine.backend import Proof
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.memory_backend import MemoryBackend
from verifier.engine.parser import parse_program
from verifier.engine.schedule import prerequisites
from verifier.engine.strata import Stratum, strata_of

# The strata in evaluation order (strata.stratify: a lexicographic topological sort of the
# relations, inputs included, by name): c, fwd, far, hub, a, b, both, lonely, total. Only far (after
# fwd), lonely (after hub) and both (after a and b) wait for another; the rest read inputs only.
PROGRAM = """
.input edge(x: symbol, y: symbol)
.input tag(x: symbol, t: symbol)
.input weight(x: symbol, w: number)
.decl a(x: symbol)
.decl b(x: symbol)
.decl both(x: symbol)
.decl c(x: symbol, y: symbol)
.decl fwd(x: symbol, y: symbol)
.decl far(x: symbol, y: symbol)
.decl hub(x: symbol)
.decl lonely(x: symbol)
.decl total(x: symbol, w: number)
a(X) :- tag(X, "red").
b(X) :- tag(X, "big").
both(X) :- a(X), b(X).
c(X, Y) :- edge(X, Y), X < Y.
fwd(X, Y) :- edge(X, Y).
far(X, Y) :- fwd(X, Y).
far(X, Z) :- far(X, Y), far(Y, Z).
hub(X) :- edge(X, _), edge(_, X).
lonely(X) :- tag(X, _), !hub(X).
total(X, sum(W)) :- weight(X, W).
"""

FACTS: dict[str, list[Row]] = {
    # A chain n1 > n2 > n3 > n4 > n5: far (non-linear) takes rounds of doubling length.
    "edge": [("n1", "n2"), ("n2", "n3"), ("n3", "n4"), ("n4", "n5")],
    "tag": [("n1", "red"), ("n1", "big"), ("n2", "red"), ("n5", "big")],
    "weight": [("n1", 3), ("n1", 4), ("n2", 5)],
}


@pytest.fixture(autouse=True)
def no_threads_left() -> Iterator[None]:
    yield
    # No evaluation leaves a thread of its pool running, whether it returned or raised.
    assert not [t for t in threading.enumerate() if t.name.startswith("topolog-stratum")]


def concurrent(workers: int, seed: int | None = None) -> DuckDBBackend:
    """A DuckDB engine that evaluates strata on `workers` threads whatever its inputs' size; given
    `seed`, each stratum starts after a random delay of up to 4 ms."""
    engine = DuckDBBackend()
    engine.workers = workers
    engine.concurrent_rows = 0
    engine.concurrent_strata = 2
    if seed is not None:
        draw = random.Random(seed)
        run = engine._run_stratum
        lock = threading.Lock()

        def slowed(stratum: Stratum) -> int:
            with lock:
                pause = draw.random() * 0.004
            # Let go of the engine's lock while asleep, so that another stratum goes first.
            with engine._unlocked():
                time.sleep(pause)
            return run(stratum)

        engine._run_stratum = slowed  # type: ignore[method-assign]
    return engine


def sequential() -> DuckDBBackend:
    engine = DuckDBBackend()
    engine.workers = 1
    return engine


def evaluated(engine: Any, text: str = PROGRAM, facts: Mapping[str, Sequence[Row]] = FACTS) -> Any:
    engine.load(parse_program(text, "t.dl"))
    for relation, rows in facts.items():
        engine.add_facts(relation, rows)
    engine.evaluate()
    return engine


def everything(engine: Any, relations: Sequence[str]) -> dict[str, list[tuple[Row, Proof]]]:
    """Every tuple of `relations` with its proof (which holds its stage and its premises' stages)."""
    return {r: [(row, engine.explain(r, row)) for row in engine.query(r)] for r in relations}


DERIVED = ("a", "b", "both", "c", "fwd", "far", "hub", "lonely", "total")


def test_the_strata_are_independent_as_the_test_needs() -> None:
    strata = strata_of(parse_program(PROGRAM, "t.dl"))
    order = ["c", "fwd", "far", "hub", "a", "b", "both", "lonely", "total"]
    assert [s.relations for s in strata] == [(r,) for r in order]
    needs = prerequisites(strata)
    assert {order[i]: [order[j] for j in n] for i, n in enumerate(needs) if n} == {
        "far": ["fwd"],
        "lonely": ["hub"],
        "both": ["a", "b"],
    }


def test_stages_by_hand_whatever_order_the_threads_end_in() -> None:
    # In the sequential order: c 1 (the 4 edges, each X < Y), fwd 2; far's rounds: round 1 copies
    # fwd (stage 3), round 2 joins pairs (n1>n3, n2>n4, n3>n5: stage 4), round 3 the paths of 3 and
    # 4 edges (n1>n4, n2>n5, n1>n5: stage 5), round 4 finds nothing new (stage 6 spent, as in every
    # engine); hub 7 (n2, n3, n4: an edge in and one out), a 8, b 9, both 10 (n1), lonely 11 (the
    # tagged n1, n2, n5 but the hub n2), total 12 (n1: 3 + 4).
    expected = {
        ("c", ("n1", "n2")): 1,
        ("fwd", ("n1", "n2")): 2,
        ("far", ("n1", "n2")): 3,
        ("far", ("n1", "n3")): 4,
        ("far", ("n2", "n4")): 4,
        ("far", ("n1", "n4")): 5,
        ("far", ("n1", "n5")): 5,
        ("hub", ("n2",)): 7,
        ("a", ("n1",)): 8,
        ("a", ("n2",)): 8,
        ("b", ("n1",)): 9,
        ("b", ("n5",)): 9,
        ("both", ("n1",)): 10,
        ("lonely", ("n1",)): 11,
        ("lonely", ("n5",)): 11,
        ("total", ("n1", 7)): 12,
        ("total", ("n2", 5)): 12,
    }
    for seed in range(8):
        engine = evaluated(concurrent(2 + seed % 3, seed))
        try:
            found = {(r, row): engine._stage_of(r, row) for r, row in expected}
            assert found == expected, f"seed {seed}"
            assert engine.query("lonely") == [("n1",), ("n5",)]
        finally:
            engine.close()


def test_tuples_stages_and_proofs_match_the_sequential_order_and_the_memory_engine() -> None:
    # The memory engine keeps the sequential order and DuckDB's stages; neither runs anything at
    # once, so both are what the concurrent evaluations must give, proof for proof (Proof equality
    # compares every stage in the tree).
    want = everything(evaluated(sequential()), DERIVED)
    assert everything(evaluated(MemoryBackend()), DERIVED) == want
    for seed in range(8):
        engine = evaluated(concurrent(2 + seed % 3, seed))
        try:
            assert everything(engine, DERIVED) == want, f"seed {seed}"
        finally:
            engine.close()


def test_a_re_evaluation_keeps_counting_stages_up_from_the_last_one() -> None:
    # After the first evaluation (12 stages, see above), new tags re-derive what reads tag: a, b,
    # both and lonely (c, fwd, far, hub and total are kept). In the sequential order they take the
    # next stages: a 13, b 14, both 15 (n1 and n3), lonely 16 (n1, n5: n3 is a hub).
    for seed in range(4):
        engine = evaluated(concurrent(2, seed))
        try:
            engine.add_facts("tag", [("n3", "red"), ("n3", "big")])
            engine.evaluate()
            assert engine._stage_of("a", ("n3",)) == 13
            assert engine._stage_of("b", ("n3",)) == 14
            assert engine._stage_of("both", ("n3",)) == 15
            assert engine._stage_of("both", ("n1",)) == 15
            assert engine._stage_of("lonely", ("n1",)) == 16
            assert engine.query("lonely") == [("n1",), ("n5",)]
            assert engine._stage_of("total", ("n1", 7)) == 12  # kept
            seq = evaluated(sequential())
            seq.add_facts("tag", [("n3", "red"), ("n3", "big")])
            seq.evaluate()
            assert everything(engine, DERIVED) == everything(seq, DERIVED)
        finally:
            engine.close()


def test_a_derived_tuples_limit_passed_gives_the_sequential_orders_error() -> None:
    # Tuples in the sequential order: c 4, fwd 4 (8 so far), far's rounds 4 (12), 3 (15), 3 (18):
    # a limit of 16 is passed in far's third round, far holding 10. Run concurrently, hub, a, b or
    # total may have counted before far; the error is still the sequential one (DuckDB counts the
    # relation's tuples with the round's in). far is declared on line 10 (edge 2, ... fwd 9).
    want = "t.dl:10:1: the rules derive 18 tuples (relation 'far' holds 10 of them so far)"
    engines = [sequential(), *(concurrent(2, seed) for seed in range(6))]
    for engine in engines:
        try:
            with use_limits(Limits(derived_tuples=16)), pytest.raises(TopologError) as caught:
                evaluated(engine)
            assert str(caught.value).startswith(want), engine
        finally:
            engine.close()


def test_an_error_in_one_stratum_stops_the_others_and_is_the_sequential_one() -> None:
    # aaa and zzz each count up for ever (n + 1 every round), both from inputs only: aaa comes first
    # in the sequential order (the first relation ready once edge is), so the fixpoint_rounds limit
    # stops it there; concurrently zzz may pass the limit first, or beside it; the error is aaa's.
    text = PROGRAM + (
        ".decl aaa(n: number)\naaa(0) :- edge(_, _).\naaa(M) :- aaa(N), M = N + 1.\n"
        ".decl zzz(n: number)\nzzz(0) :- weight(_, _).\nzzz(M) :- zzz(N), M = N + 1.\n"
    )
    assert strata_of(parse_program(text, "t.dl"))[0].relations == ("aaa",)
    for seed in range(6):
        engine = concurrent(2 + seed % 2, seed)
        try:
            with use_limits(Limits(fixpoint_rounds=30)), pytest.raises(TopologError) as caught:
                evaluated(engine, text)
            assert "the recursion of 'aaa' still derives new tuples after 30 rounds" in str(caught.value)
        finally:
            engine.close()


def test_an_interrupt_in_a_stratum_stops_every_thread_and_the_engine_evaluates_again() -> None:
    # A Ctrl-C comes to the thread that waits; here it is raised inside a stratum, which the pool
    # raises once every thread has ended. Asked again, the engine derives the same as ever.
    engine = concurrent(2)
    run = engine._run_stratum

    def interrupted(stratum: Stratum) -> int:
        if stratum.relations == ("far",):
            raise KeyboardInterrupt
        return run(stratum)

    engine._run_stratum = interrupted  # type: ignore[method-assign]
    try:
        with pytest.raises(KeyboardInterrupt):
            evaluated(engine)
        engine._run_stratum = run  # type: ignore[method-assign]
        engine.evaluate()
        assert everything(engine, DERIVED) == everything(evaluated(sequential()), DERIVED)
    finally:
        engine.close()


@pytest.mark.parametrize("rows, strata", [(200_000, 2), (0, 10)])
def test_small_inputs_evaluate_in_the_calling_thread(rows: int, strata: int) -> None:
    # Below concurrent_rows input rows (here 200,000: the program's 12 facts are fewer), or fewer
    # strata to run than concurrent_strata (the program's 9 are fewer than 10), threads cost more
    # than they save: none is started.
    engine = DuckDBBackend()
    engine.workers = 2
    engine.concurrent_rows = rows
    engine.concurrent_strata = strata
    started: list[str] = []
    run = engine._run_stratum

    def watched(stratum: Stratum) -> int:
        started.append(threading.current_thread().name)
        return run(stratum)

    engine._run_stratum = watched  # type: ignore[method-assign]
    try:
        evaluated(engine)
        assert set(started) == {threading.current_thread().name}
    finally:
        engine.close()


def test_duckdb_threads_are_the_databases_own_again_after_a_concurrent_evaluation() -> None:
    # While strata run at once DuckDB gets the cores the other workers leave (one of two, here set
    # with 2 workers); afterwards its own setting is back, whether the evaluation ended or failed.
    engine = concurrent(2)
    try:
        engine.load(parse_program(PROGRAM, "t.dl"))
        before = engine._con.execute("SELECT current_setting('threads')").fetchall()
        for relation, rows in FACTS.items():
            engine.add_facts(relation, rows)
        engine.evaluate()
        assert engine._con.execute("SELECT current_setting('threads')").fetchall() == before
        with use_limits(Limits(derived_tuples=16)), pytest.raises(TopologError):
            evaluated(engine)
        assert engine._con.execute("SELECT current_setting('threads')").fetchall() == before
    finally:
        engine.close()


def test_ctrl_c_in_the_waiting_thread_stops_every_stratum(python_sigint: None) -> None:
    # far's stratum sends the calling thread a Ctrl-C (as a terminal would) and waits until the pool
    # stops it: the caller is then surely waiting in the pool. The interrupt is raised there, once
    # every thread has ended; asked again, the engine derives the same as ever.
    engine = concurrent(2)
    run = engine._run_stratum

    def interrupting(stratum: Stratum) -> int:
        if stratum.relations == ("far",):
            _thread.interrupt_main()
            with engine._unlocked():
                assert engine._halt.wait(10)
        return run(stratum)

    engine._run_stratum = interrupting  # type: ignore[method-assign]
    try:
        with pytest.raises(KeyboardInterrupt):
            evaluated(engine)
        engine._run_stratum = run  # type: ignore[method-assign]
        engine.evaluate()
        assert everything(engine, DERIVED) == everything(evaluated(sequential()), DERIVED)
    finally:
        engine.close()


def test_a_fleet_sized_evaluation_runs_its_strata_on_the_pools_threads() -> None:
    # The other side of the bounds above: from concurrent_rows rows and concurrent_strata strata, no
    # stratum runs in the calling thread, each on one of the pool's.
    engine = concurrent(2)
    started: list[str] = []
    run = engine._run_stratum

    def watched(stratum: Stratum) -> int:
        started.append(threading.current_thread().name)
        return run(stratum)

    engine._run_stratum = watched  # type: ignore[method-assign]
    try:
        evaluated(engine)
        assert len(started) == 9 and all(name.startswith("topolog-stratum-") for name in started)
    finally:
        engine.close()


def test_running_out_of_engine_memory_beside_other_strata_gives_the_sequential_error() -> None:
    # big is every triple of 400 numbers: 64,000,000 rows of three BIGINTs, far past 32 MiB. It
    # fails while the other strata run beside it (or have run), and the error is the sequential
    # one: big's, declared on line 25 (PROGRAM's 12 declarations on lines 2-13, its 10 rules on
    # 14-23, n on 24), with no tuple of it stored.
    text = PROGRAM + (
        ".input n(x: number)\n.decl big(x: number, y: number, z: number)\nbig(X, Y, Z) :- n(X), n(Y), n(Z).\n"
    )
    numbers: list[Row] = [(i,) for i in range(400)]
    facts = {**FACTS, "n": numbers}
    want = (
        "<evaluation>: DuckDB ran out of memory while deriving relation 'big' (declared at t.dl:25:1), 0 tuples so far"
    )
    for engine in (sequential(), concurrent(2, 1), concurrent(3, 2)):
        try:
            with use_limits(Limits(engine_memory=32 * 2**20)), pytest.raises(TopologError) as caught:
                evaluated(engine, text, facts)
            assert str(caught.value).startswith(want)
        finally:
            engine.close()
