"""The pool that runs independent strata at once (verifier.engine.schedule)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest

from verifier.core.limits import Limits, current_limits, use_limits
from verifier.engine.parser import parse_program
from verifier.engine.schedule import prerequisites, run_in_pool
from verifier.engine.strata import strata_of


@contextlib.contextmanager
def nothing() -> Iterator[None]:
    yield


def test_prerequisites_are_the_strata_a_stratum_reads() -> None:
    # Order (lexicographic topological): a, b, c, d. c reads a positively and b negated; d
    # aggregates over c; a and b read only the input.
    text = (
        ".input e(x: symbol)\n.decl a(x: symbol)\n.decl b(x: symbol)\n.decl c(x: symbol)\n.decl d(n: number)\n"
        'a(X) :- e(X).\nb(X) :- e(X), X = "k".\nc(X) :- a(X), !b(X).\nd(count(X)) :- c(X).\n'
    )
    strata = strata_of(parse_program(text, "t.dl"))
    assert [s.relations for s in strata] == [("a",), ("b",), ("c",), ("d",)]
    assert prerequisites(strata) == [(), (), (0, 1), (2,)]


def test_independent_tasks_run_at_the_same_time() -> None:
    # Tasks 0 and 1 each wait at a barrier for the other: the pool passes only by running them at
    # once (one after another, the first would wait for ever: the barrier's timeout fails it).
    barrier = threading.Barrier(2, timeout=10)
    ran: list[int] = []

    def run(i: int) -> None:
        if i < 2:
            barrier.wait()
        ran.append(i)

    run_in_pool([(), (), (0, 1)], 2, run, nothing, lambda: None)
    assert sorted(ran[:2]) == [0, 1] and ran[2] == 2


def test_a_task_starts_only_after_what_it_needs_and_lowest_index_first() -> None:
    # One thread: the order is the ready task of lowest index each time. 2 needs 3, so after 0 and
    # 1 comes 3 (ready) before 2; 4 needs nothing.
    ran: list[int] = []
    run_in_pool([(), (), (3,), (), ()], 1, ran.append, nothing, lambda: None)
    assert ran == [0, 1, 3, 2, 4]


def test_a_failure_stops_the_pool_and_is_raised_after_every_thread_ended() -> None:
    # Task 1 fails; task 0 waits to be stopped (`stop` releases it), so it ends without failing,
    # and no task after the failure starts (2 needs 0).
    release = threading.Event()
    ran: list[int] = []

    def run(i: int) -> None:
        if i == 0:
            assert release.wait(10)
        if i == 1:
            raise ValueError("task 1")
        ran.append(i)

    with pytest.raises(ValueError, match="task 1"):
        run_in_pool([(), (), (0,)], 2, run, nothing, release.set)
    assert ran == [0]
    assert not [t for t in threading.enumerate() if t.name.startswith("topolog-stratum")]


def test_threads_see_the_callers_limits() -> None:
    # The limits in force are a context variable: each thread runs in a copy of the caller's context.
    seen: list[int] = []
    with use_limits(Limits(fixpoint_rounds=7)):
        run_in_pool([(), ()], 2, lambda i: seen.append(current_limits().fixpoint_rounds), nothing, lambda: None)
    assert seen == [7, 7]
