"""Python computes the rest of the facts on a thread while DuckDB evaluates the inventory's rules.

At fleet scale an evaluation waits for authorization decisions (Cedar, about 0.9 s of Python at
131,072 GPUs) and graph summaries (about 0.4 s) before DuckDB starts, and DuckDB then spends 3 s in
its own C++ code, most of it in strata that read neither. Those strata are evaluated as soon as the
inventory's facts are loaded, while a thread computes the decisions and summaries (DuckDB lets the
GIL go while a statement runs); then their facts are loaded and the strata that read them are
evaluated (DuckDBBackend.evaluate_without). The answers are those of one evaluation of all the
facts: the same program and facts, the same strata, each stratum's stages in the same order.

The engine stays on this thread (a statement that Ctrl-C stops stops as in one evaluation); the
thread only computes rows, and hands them, or what it raised, back at `join`. A failure of the
engine is not reported from here: the caller evaluates again in one go (`None`), so that a limit
reached or a statement that failed is reported exactly as that evaluation reports it, naming the
same relation with the same counts.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Mapping, Sequence, Set
from typing import TYPE_CHECKING

from verifier.core.errors import EngineError, TopologError
from verifier.engine.ast import Program, Query, Row
from verifier.engine.engines import choose_engine

if TYPE_CHECKING:
    from verifier.engine.duckdb_backend import DuckDBBackend

OVERLAP_ROWS = 500_000
"""Input rows from which the first strata are evaluated on a thread. Below it there is little to
overlap: at 32,768 GPUs (1.3 M rows) the decisions and summaries take 0.2 s of the 3.5 s; a shipped
example (a few thousand rows) runs in the memory engine, where nothing is overlapped."""


def worth_overlapping(engine: str, facts: Mapping[str, Sequence[Row]], wanted: Set[str], late: Set[str]) -> bool:
    """Whether to evaluate on a thread: DuckDB runs it, the input is a fleet's, and no fact of `late` is at hand yet."""
    if engine not in ("auto", "duckdb") or not late.isdisjoint(facts):
        return False
    rows = sum(len(rows) for relation, rows in facts.items() if relation in wanted)
    return rows >= OVERLAP_ROWS and choose_engine(engine, rows) == "duckdb"


def evaluate_overlapped(
    program: Program,
    first: dict[str, Sequence[Row]],
    late: Set[str],
    late_rows: Callable[[], dict[str, Sequence[Row]]],
    needs: Mapping[str, Query],
    step: Callable[[str], None],
) -> tuple[DuckDBBackend, frozenset[str]] | None:
    """A DuckDB engine loaded with `first` (each relation dropped from it once loaded) and the rows
    `late_rows()` computes meanwhile for the relations `late`, and evaluated; the checks whose @needs
    have no answer. None when the engine failed (TopologError, EngineError): evaluated again in one
    go, the caller reports what failed. What `late_rows` raises is raised as it is: one evaluation
    computes those rows before the engine starts, so its errors come first there too.
    """
    from verifier.engine.duckdb_backend import DuckDBBackend

    backend = DuckDBBackend()
    try:
        try:
            backend.load(program)
            step("loading facts into duckdb")
            for relation in list(first):
                backend.add_facts(relation, first.pop(relation))
        except (TopologError, EngineError):
            backend.close()
            return None
        step("evaluating rules")
        worker = _Worker(late_rows)
        try:
            backend.evaluate_without(late)
            failed = False
        except (TopologError, EngineError):
            failed = True
        finally:
            # Its errors first: one evaluation computes these rows before the engine starts.
            rows = worker.join()
        if failed:
            backend.close()
            return None
        try:
            for relation in list(rows):
                backend.add_facts(relation, rows.pop(relation))
            backend.evaluate()
            # A check whose @needs has no answer had nothing to judge: not applicable, not passed.
            not_applicable = frozenset(cid for cid, q in needs.items() if not backend.holds(q))
        except (TopologError, EngineError):
            backend.close()
            return None
    except BaseException:
        backend.close()
        raise
    return backend, not_applicable


class _Worker:
    """`late_rows()` on a thread of its own."""

    def __init__(self, late_rows: Callable[[], dict[str, Sequence[Row]]]) -> None:
        self._late_rows = late_rows
        self._rows: dict[str, Sequence[Row]] = {}
        self._failed: BaseException | None = None
        # In a copy of this context: the limits in force (`--limits`) are a context variable, which a
        # new thread would otherwise see at its defaults.
        run = contextvars.copy_context().run
        self._thread = threading.Thread(target=run, args=(self._work,), name="topolog-late-facts", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            self._rows = self._late_rows()
        except BaseException as err:  # handed to the waiting thread (join)
            self._failed = err

    def join(self) -> dict[str, Sequence[Row]]:
        """The rows, once computed; what computing them raised, raised here."""
        self._thread.join()
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed
        return self._rows
