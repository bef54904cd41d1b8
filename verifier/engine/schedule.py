"""Which strata of an evaluation may run at the same time, and a pool of threads that runs them so.

A stratum reads the relations of earlier strata only (`strata.stratify` orders them so), and
only once those are complete; strata that read nothing of each other (most of a rule pack's
checks) can run at once. The pool takes the ready stratum that comes first in the sequential
order, so which thread runs what may vary from run to run, but what each stratum reads never
does: it starts once all it reads is final.

Lowest index first, not longest path first: at 131,072 GPUs the longest chain of strata that
wait for each other took 0.32 s of the 2.9 s all of them took one after another, and replaying
the measured times on two threads ended at 1.467 s in this order, 1.445 s longest path first,
against 1.444 s for half of the whole: the threads end together either way.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from verifier.engine.strata import Stratum

JOIN_POLL = 0.05
"""Seconds between the checks of a thread that waits for the pool (a Ctrl-C lands in between)."""


def prerequisites(strata: Sequence[Stratum]) -> list[tuple[int, ...]]:
    """Per stratum, the indexes of the earlier strata in `strata` whose relations its rules read
    (positively, negated or aggregated). A relation no stratum of `strata` derives is final already.
    """
    owner = {relation: i for i, stratum in enumerate(strata) for relation in stratum.relations}
    out: list[tuple[int, ...]] = []
    for i, stratum in enumerate(strata):
        reads = {a.relation for r in stratum.rules for a in (*r.positive_atoms(), *r.negated_atoms())}
        before = {owner[r] for r in reads if r in owner and owner[r] != i}
        if any(j > i for j in before):
            raise ValueError(f"stratum {i} reads a later stratum: the strata are not in evaluation order")
        out.append(tuple(sorted(before)))
    return out


def run_in_pool(
    needs: Sequence[Sequence[int]],
    workers: int,
    run: Callable[[int], None],
    per_thread: Callable[[], AbstractContextManager[object]],
    stop: Callable[[], None],
) -> None:
    """Run `run(i)` for every task i, each once the tasks `needs[i]` names have run, on `workers`
    threads (each inside its own `per_thread()`, in a copy of the caller's context), the ready
    task of lowest index first.

    The first task to fail stops the pool: no task starts after it, `stop()` is called (to cut
    short what the other threads run), and once every thread has ended its error is raised (of
    several that failed before the stop, the one of lowest index). An exception in the calling
    thread (Ctrl-C) does the same, and is raised itself. No thread outlives the call.
    """
    count = len(needs)
    waiting = [len(n) for n in needs]
    readers: list[list[int]] = [[] for _ in range(count)]
    for i, need in enumerate(needs):
        for j in need:
            readers[j].append(i)
    ready = [i for i in range(count) if not waiting[i]]
    heapq.heapify(ready)
    cond = threading.Condition()
    failures: dict[int, BaseException] = {}
    state = {"done": 0, "stopping": False}
    # Set by each thread as it ends: Thread.is_alive() cannot say so once a Ctrl-C came during a
    # join of it (CPython 3.11's join then releases the running thread's state lock and marks it
    # stopped, bpo-45274's except branch), and the caller must not go on while a statement runs.
    ended = [threading.Event() for _ in range(workers)]

    def fail(index: int, err: BaseException) -> None:
        with cond:
            if not state["stopping"]:
                failures[index] = err
            state["stopping"] = True
            cond.notify_all()
        stop()

    def work(n: int) -> None:
        try:
            _work()
        finally:
            ended[n].set()  # its cursor closed (per_thread): nothing of it is left but returning

    def _work() -> None:
        try:
            with per_thread():
                while True:
                    with cond:
                        while not ready and not state["stopping"] and state["done"] < count:
                            cond.wait()
                        if state["stopping"] or not ready:
                            return
                        index = heapq.heappop(ready)
                    try:
                        run(index)
                    except BaseException as err:  # every failure stops the pool and is raised by the caller
                        fail(index, err)
                        return
                    with cond:
                        state["done"] += 1
                        for reader in readers[index]:
                            waiting[reader] -= 1
                            if not waiting[reader]:
                                heapq.heappush(ready, reader)
                        cond.notify_all()
        except BaseException as err:  # per_thread() failed: no task of this thread ran
            fail(-1, err)

    # Each thread in a copy of the caller's context: the limits in force (core.limits) are a context variable.
    threads = [
        threading.Thread(
            target=contextvars.copy_context().run, args=(work, n), name=f"topolog-stratum-{n}", daemon=True
        )
        for n in range(workers)
    ]
    try:
        for thread in threads:
            thread.start()
        for done in ended:
            while not done.wait(JOIN_POLL):
                pass
    except BaseException:
        with cond:
            state["stopping"] = True
            cond.notify_all()
        _join_all(threads, ended, stop)
        raise
    for thread in threads:
        thread.join()  # each has ended its work (`ended`): only its return is left
    if failures:
        raise failures[min(failures)]


def _join_all(threads: Sequence[threading.Thread], ended: Sequence[threading.Event], stop: Callable[[], None]) -> None:
    """Wait for every thread that started (an ident) to end (`ended`), calling `stop()` again as they
    end (a statement may have started after the last call); a second Ctrl-C does not leave a thread
    running.
    """
    while True:
        try:
            running = [done for thread, done in zip(threads, ended, strict=True) if thread.ident and not done.is_set()]
            if not running:
                break
            stop()
            for done in running:
                done.wait(JOIN_POLL)
        except KeyboardInterrupt:
            continue
    for thread in threads:
        if thread.ident:
            with contextlib.suppress(KeyboardInterrupt):
                thread.join(JOIN_POLL)  # its work ended: only its return is left
