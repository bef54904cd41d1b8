"""A DuckDB connection stand-in that stops chosen statements, and two small recursive programs,
for the tests of the DuckDB engine after a Ctrl-C or a failure part way (tests/engine).
"""

from __future__ import annotations

from typing import Any

MUTUAL = """
.input e(s: symbol, t: symbol)
.decl odd(a: symbol, b: symbol)
.decl even(a: symbol, b: symbol)
odd(A, B) :- e(A, B).
even(A, C) :- odd(A, B), e(B, C).
odd(A, C) :- even(A, B), e(B, C).
"""
"""Mutual recursion: odd and even paths over e."""

CLOSURE = """
.input link(s: symbol, t: symbol)
.decl reach(s: symbol, t: symbol)
reach(A, B) :- link(A, B).
reach(A, C) :- reach(A, B), link(B, C).
"""
"""A transitive closure over link."""

Stop = tuple[str, bool, BaseException]
"""What a statement holds (a part of its SQL), whether it is stopped as it returns (its work done)
rather than before it runs, and the error raised there (KeyboardInterrupt for a Ctrl-C)."""


class Stops:
    """The connection, raising each stop's error once, at the `at`-th statement holding its text
    (the first stop a statement matches counts it); `stopped`: whether any was raised.
    """

    def __init__(self, con: Any, stops: list[Stop], at: int = 1) -> None:
        self.con, self.stops, self.at = con, list(stops), at
        self.seen = [0] * len(self.stops)
        self.stopped = False

    def execute(self, sql: str, *args: Any) -> Any:
        k = next((k for k, stop in enumerate(self.stops) if stop[0] in sql), None)
        if k is None:
            return self.con.execute(sql, *args)
        self.seen[k] += 1
        if self.seen[k] < self.at:
            return self.con.execute(sql, *args)
        _picks, after, error = self.stops.pop(k)
        del self.seen[k]
        self.stopped = True
        if after:
            self.con.execute(sql, *args)
        raise error

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)
