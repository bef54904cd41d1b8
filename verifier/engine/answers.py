"""A query's answers, as the output layer renders them (no parser needed to hold them)."""

from __future__ import annotations

from verifier.engine.ast import FrozenNode, Row


class QueryResult(FrozenNode):
    """A query's answers: one sorted row per binding of its variables (no variables: true or false).

    Written out, not a frozen dataclass (verifier.engine.ast.FrozenNode says why).
    """

    _fields = __match_args__ = ("variables", "rows")
    variables: tuple[str, ...]
    rows: list[Row]

    def __init__(self, variables: tuple[str, ...], rows: list[Row]) -> None:
        object.__setattr__(self, "variables", variables)
        object.__setattr__(self, "rows", rows)

    def _key(self) -> tuple[object, ...]:
        return (self.variables, self.rows)
