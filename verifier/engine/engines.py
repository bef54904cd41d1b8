"""The engines by name: each is imported only when asked for (DuckDB and pyDatalog are heavy)."""

from __future__ import annotations

from verifier.engine.backend import Backend

BACKENDS = ("duckdb", "pydatalog")


def make_backend(name: str) -> Backend:
    """A fresh engine called `name` (one of BACKENDS); ValueError for any other name."""
    if name == "duckdb":
        from verifier.engine.duckdb_backend import DuckDBBackend

        return DuckDBBackend()
    if name == "pydatalog":
        from verifier.engine.pydatalog_backend import PyDatalogBackend

        return PyDatalogBackend()
    raise ValueError(f"unknown engine {name!r}; expected one of: {', '.join(BACKENDS)}")
