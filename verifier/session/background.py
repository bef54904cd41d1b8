"""An inventory read now, its rules evaluated on a thread: what `topolog repl` shows its prompt on.

At 4,096 GPUs evaluating every rule (the REPL keeps every relation, since any query may read
any of them) is most of the load: some 360 engine statements, 1.5-2.5 s of CPU, against well
under a second to read the inventory (and build authorization, when principals are beside it).
The prompt needs only the inventory (its banner) and the program (`.relations`, `.schema`, TAB
completion); an answer that needs the whole model (`.explain`) waits for the evaluation, which has
gone on while the user typed. The inventory is read before the thread starts, so bad input is
still an error before any prompt; an evaluation that fails raises its error at the first answer
that waits for it (`result`).

A query typed before the evaluation ends need not wait for all of it (`answer_now`): it is answered
from an evaluation of only the rules it depends on (queries.program_for, as `topolog query` does),
the same rows under stratified semantics, in a fraction of the time (a handful of rules out of
more than a thousand for most queries; 274 at most).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from verifier.core.errors import EngineError, TopologError
from verifier.engine.ast import Program, Query, Row
from verifier.engine.queries import program_for, query_relations
from verifier.session.inputs import Inputs, authorization_for, read_inventory
from verifier.session.session import Evaluation, evaluate, reads_authorization
from verifier.session.side_files import discover
from verifier.sources.inventory.model import Inventory


class Loading:
    """An evaluation under way: its program and inventory now, the evaluation itself from `result`."""

    def __init__(self, program: Program, inputs: Inputs, future: Future[Evaluation], engine: str = "auto") -> None:
        self.program = program
        self.inputs = inputs
        self._future = future
        self._engine = engine

    @property
    def inventory(self) -> Inventory:
        return self.inputs.inventory

    def done(self) -> bool:
        """Whether the evaluation has ended (well or not): `result` would not wait."""
        return self._future.done()

    def result(self) -> Evaluation:
        """The evaluation, once it has ended; its error (TopologError, EngineError, ...) if it failed."""
        return self._future.result()

    def answer_now(self, query: Query) -> list[Row] | None:
        """`query`'s sorted rows, evaluated from only the rules it depends on; None when it must wait
        for `result` instead: the evaluation has ended, the query reads authorization decisions, or
        the slice's own evaluation failed (the whole evaluation then reports what was wrong, or answers).

        Runs on the caller's thread, beside the evaluation: what the two share (the program, the
        inventory) is only read or keeps what it derives (strata, parsed queries: the same whichever
        thread does it first), the inventory's links were made before the thread started, and the
        Cedar setup (which writes as it decides) stays the thread's own.
        """
        if self.done():
            return None
        read = query_relations(query)
        sliced = program_for(self.program, read)
        if reads_authorization(sliced, read):
            return None
        try:
            with evaluate(sliced, self.inputs, engine=self._engine, also_read=read, judge_checks=False) as early:
                return early.engine.answer(query)
        except (TopologError, EngineError):
            # A limit the slice reached, say: the whole evaluation meets it too and its error is the one to show.
            return None


def start_evaluation(
    paths: Sequence[Path], program: Program, *, engine: str = "auto", also_read: Iterable[str] = ()
) -> Loading:
    """As `open_evaluation`, with the inventory read here and the rest on a thread of its own."""
    also = set(also_read)
    inputs = read_inventory(list(paths), discover(list(paths)), None, principals=True)
    # A stamped inventory makes its links when they are first read (Inventory.defer_links), which
    # two threads must not both do: made here, before the thread that reads them (20 ms at 4,096 GPUs),
    # so that an early answer (Loading.answer_now) on this thread reads them too.
    inputs.inventory.links  # noqa: B018
    # As open_evaluation: Cedar is asked only when something reads its decisions. Built here, so
    # that a policy in error is bad input before the prompt too.
    authorization = authorization_for(inputs) if reads_authorization(program, also) else None
    # One worker, shut down at once: the thread ends with the evaluation, and the interpreter
    # waits for it at exit (the engine is never closed under a running statement).
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="topolog-evaluate")
    # In a copy of this context: the limits in force (`--limits`, verifier.core.limits) are a
    # context variable, which a new thread would otherwise see at its defaults.
    run_here = contextvars.copy_context().run
    # No check is judged: the REPL reports none (its `.explain` of a finding derives the finding).
    future = pool.submit(
        run_here,
        evaluate,
        program,
        inputs,
        engine=engine,
        authorization=authorization,
        also_read=also,
        judge_checks=False,
    )
    pool.shutdown(wait=False)
    return Loading(program, inputs, future, engine)
