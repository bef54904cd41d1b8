"""An inventory read now, its rules evaluated on a thread: what `topolog repl` shows its prompt on.

At 4,096 GPUs evaluating every rule (the REPL keeps every relation, since any query may read
any of them) is most of the load: some 360 engine statements, 1.5-2.5 s of CPU, against well
under a second to read the inventory (and build authorization, when
principals are beside it). The prompt needs only the inventory (its banner) and the
program (`.relations`, `.schema`, TAB completion); the first answer waits for the evaluation,
which has gone on while the user typed. The inventory is read before the thread starts, so bad
input is still an error before any prompt; an evaluation that fails raises its error at the
first answer that waits for it (`result`).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from verifier.engine.ast import Program
from verifier.session.inputs import Inputs, authorization_for, read_inventory
from verifier.session.session import Evaluation, evaluate, reads_authorization
from verifier.session.side_files import discover
from verifier.sources.inventory.model import Inventory


class Loading:
    """An evaluation under way: its program and inventory now, the evaluation itself from `result`."""

    def __init__(self, program: Program, inputs: Inputs, future: Future[Evaluation]) -> None:
        self.program = program
        self.inputs = inputs
        self._future = future

    @property
    def inventory(self) -> Inventory:
        return self.inputs.inventory

    def done(self) -> bool:
        """Whether the evaluation has ended (well or not): `result` would not wait."""
        return self._future.done()

    def result(self) -> Evaluation:
        """The evaluation, once it has ended; its error (TopologError, EngineError, ...) if it failed."""
        return self._future.result()


def start_evaluation(
    paths: Sequence[Path], program: Program, *, engine: str = "auto", also_read: Iterable[str] = ()
) -> Loading:
    """As `open_evaluation`, with the inventory read here and the rest on a thread of its own."""
    also = set(also_read)
    inputs = read_inventory(list(paths), discover(list(paths)), None, principals=True)
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
    return Loading(program, inputs, future)
