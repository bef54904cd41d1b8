"""Errors a user can act on: each carries the place (file:line:col) and a plain sentence.

Anything raised as a `TopologError` is bad input and becomes exit code 2 at the CLI;
any other exception escaping is a bug.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class SourceLocation:
    """Where something was written. `line` and `col` are 1-based; 0 means unknown."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line and self.col:
            return f"{self.file}:{self.line}:{self.col}"
        if self.line:
            return f"{self.file}:{self.line}"
        return self.file


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem in the input: where it is and what was wrong / expected."""

    location: SourceLocation
    message: str

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
