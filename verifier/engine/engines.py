"""The engines by name: each is imported only when asked for (DuckDB and pyDatalog are heavy)."""

from __future__ import annotations

from verifier.engine.backend import Backend

BACKENDS = ("duckdb", "memory", "pydatalog")
ENGINE_CHOICES = ("auto", *BACKENDS)
"""What `--engine` takes: an engine, or `auto` to pick one by the size of the input."""

MEMORY_ENGINE_ROWS = 50_000
"""`auto` evaluates inputs of at most this many fact rows in memory, larger ones in DuckDB.

The memory engine has no per-statement cost, so it wins wherever the rule pack's few hundred
statements, not the rows, are the work (a shipped example runs 4-5x faster); DuckDB joins in
parallel, bounds its memory and wins on fleets. benchmarks/engine_choice_bench.py measures
where they cross.
"""


AUTO_MAX_BINDINGS = 2_000_000
"""Under `auto`, a memory evaluation that would hold more bindings in one join step starts over in
DuckDB: past this the memory engine is slower than DuckDB even on a small input."""

AUTO_MAX_ROUNDS = 256
"""Under `auto`, a recursion still growing after this many rounds starts the evaluation over in DuckDB.
A fleet's recursions end within a few dozen rounds (its longest path); a deep one (the closure of a
long chain) is what DuckDB's recursive queries do best: a chain of 2,000 takes 14 s in memory, 2 s there."""


def choose_engine(name: str, fact_rows: int) -> str:
    """The engine to run: `name` itself, or for `auto` the one that suits `fact_rows` input rows."""
    if name != "auto":
        return name
    return "memory" if fact_rows <= MEMORY_ENGINE_ROWS else "duckdb"


def make_backend(name: str, chosen_by_auto: bool = False) -> Backend:
    """A fresh engine called `name` (one of BACKENDS); ValueError for any other name.

    `chosen_by_auto`: the memory engine stops at AUTO_MAX_BINDINGS or AUTO_MAX_ROUNDS (raising
    OutgrewEngine), so that the caller can start over in DuckDB.
    """
    if name == "duckdb":
        from verifier.engine.duckdb_backend import DuckDBBackend

        return DuckDBBackend()
    if name == "memory":
        from verifier.engine.memory_backend import MemoryBackend

        return MemoryBackend(*((AUTO_MAX_BINDINGS, AUTO_MAX_ROUNDS) if chosen_by_auto else (None, None)))
    if name == "pydatalog":
        from verifier.engine.pydatalog_backend import PyDatalogBackend

        return PyDatalogBackend()
    raise ValueError(f"unknown engine {name!r}; expected one of: {', '.join(BACKENDS)}")
