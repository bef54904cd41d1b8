"""Rows read by column name, through the relation's declaration in the rules (never by position).

A rule file may reorder or add columns; code that reads `row[7]` would then read the wrong
one in silence, while `Columns.of(program, "place_profile")("fabric_mbps", row)` follows.
"""

from __future__ import annotations

from collections.abc import Iterable

from verifier.core.errors import SourceLocation, TopologError
from verifier.engine.ast import Declaration, FrozenNode, Program, Row, Value


class Columns(FrozenNode):
    """The columns of one declared relation (written out, not a frozen dataclass: verifier.engine.ast.FrozenNode)."""

    _fields = __match_args__ = ("relation", "names")  # `index` is neither shown nor compared
    relation: str
    names: tuple[str, ...]
    index: dict[str, int]

    def __init__(self, relation: str, names: tuple[str, ...], index: dict[str, int]) -> None:
        object.__setattr__(self, "relation", relation)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "index", index)

    def _key(self) -> tuple[object, ...]:
        return (self.relation, self.names)

    @classmethod
    def of(cls, program: Program, relation: str, needs: Iterable[str] = ()) -> Columns:
        """The columns of `relation`; TopologError when it is not declared or lacks a column in `needs`."""
        decl: Declaration | None = program.relations.get(relation)
        if decl is None:
            raise TopologError.at(SourceLocation("<rules>"), f"relation {relation} is not declared by the rules")
        names = tuple(c.name for c in decl.columns)
        missing = [n for n in needs if n not in names]
        if missing:
            raise TopologError.at(
                decl.loc, f"relation {relation} has no column {', '.join(missing)}; its columns: {', '.join(names)}"
            )
        return cls(relation, names, {n: i for i, n in enumerate(names)})

    def __call__(self, name: str, row: Row) -> Value:
        """The value of column `name` in `row`."""
        return row[self.index[name]]

    def pick(self, row: Row, names: Iterable[str]) -> tuple[Value, ...]:
        """The values of `names`, in that order."""
        return tuple(row[self.index[n]] for n in names)

    def without(self, *names: str) -> tuple[str, ...]:
        """Every column name but `names`, in declaration order."""
        return tuple(n for n in self.names if n not in names)
