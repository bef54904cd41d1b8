"""Errors a user can act on: each carries the place (file:line:col) and a plain sentence.

Anything raised as a `TopologError` is bad input and becomes exit code 2 at the CLI;
any other exception escaping is a bug.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from verifier.core.frozen import OrderedFrozen

_set = object.__setattr__


# Frozen and ordered as `@dataclass(frozen=True, order=True)` made them, their methods written once in
# verifier.core.frozen rather than compiled at every start (0.8 ms of it for these two).
@dataclass(frozen=True, init=False, repr=False, eq=False)
class SourceLocation(OrderedFrozen):
    """Where something was written. `line` and `col` are 1-based; 0 means unknown."""

    file: str
    line: int = 0
    col: int = 0

    def __init__(self, file: str, line: int = 0, col: int = 0) -> None:
        _set(self, "file", file)
        _set(self, "line", line)
        _set(self, "col", col)

    def __str__(self) -> str:
        if self.line and self.col:
            return f"{self.file}:{self.line}:{self.col}"
        if self.line:
            return f"{self.file}:{self.line}"
        return self.file


MAX_MESSAGE_CHARS = 2_000
"""A message longer than this keeps its start and end: an error that quotes the offending value
(a 10 MB label, a megabyte of JSON) must stay a line a person reads, not a copy of the input."""


def clipped(message: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """`message` with its middle left out past `limit` characters, saying how much was left out."""
    if len(message) <= limit:
        return message
    keep = limit // 2
    left_out = len(message) - 2 * keep
    return f"{message[:keep]}…[{left_out:,} characters left out]…{message[-keep:]}"


@dataclass(frozen=True, init=False, repr=False, eq=False)
class Diagnostic(OrderedFrozen):
    """One problem in the input: where it is and what was wrong / expected."""

    location: SourceLocation
    message: str

    def __init__(self, location: SourceLocation, message: str) -> None:
        _set(self, "location", location)
        _set(self, "message", clipped(message))  # as it is when no longer than MAX_MESSAGE_CHARS

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


class TopologError(Exception):
    """Bad input. Holds every problem found, not only the first, sorted by place."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics: list[Diagnostic] = sorted(set(diagnostics))
        super().__init__("\n".join(str(d) for d in self.diagnostics))

    @classmethod
    def at(cls, location: SourceLocation, message: str) -> TopologError:
        return cls([Diagnostic(location, message)])


class ProgramError(TopologError):
    """A Datalog program or query that cannot be accepted (syntax, declarations, safety, strata)."""


class FactError(TopologError):
    """A fact that does not fit its relation's declaration (arity or type)."""


class EngineError(Exception):
    """An engine could not evaluate something it accepted: the verification must fail closed."""
