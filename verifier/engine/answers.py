"""A query's answers, as the output layer renders them (no parser needed to hold them)."""

from __future__ import annotations

from dataclasses import dataclass

from verifier.engine.ast import Row


@dataclass(frozen=True)
class QueryResult:
    """A query's answers: one sorted row per binding of its variables (no variables: true or false)."""

    variables: tuple[str, ...]
    rows: list[Row]
