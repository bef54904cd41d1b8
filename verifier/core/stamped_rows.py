"""Fact rows that many nodes stamped from one plan share, held as the plan's rows and each node's names.

A fleet's nodes stamped whole from one template (Inventory.stamped) give the same rows
with other names: a link row is (its id, its ends, its kind, its bandwidth), where the id
and the ends are the node's own names and the rest is the plan's. `StampBlock` keeps one
copy of those plan rows, each value either a constant or the slot of a name, and a list
of names per node. DuckDB then looks each node's names up once and builds every column by
array indexing (a million links cost a few array operations, not five lookups each);
anything else reads `StampedRows` as the plain tuples it stands for.

Row order carries no meaning for the engines (relations are sets, proofs are chosen by
stage and value): the rows of a `StampedRows` are its plain rows, then block by block,
node by node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import cast, overload

Value = str | int
Row = tuple[Value, ...]


def names_at(slots: Sequence[int]) -> Callable[[Sequence[str]], Sequence[str]]:
    """The items at `slots` of a node's names, in that order, as a sequence, in one C call
    (itemgetter returns an item alone when given one position, and is not callable with none).
    """
    if not slots:
        return lambda names: ()
    if len(slots) == 1:
        only = slots[0]
        return lambda names: (names[only],)
    pick: Callable[[Sequence[str]], Sequence[str]] = itemgetter(*slots)
    return pick


@dataclass(frozen=True)
class StampBlock:
    """The rows that `slots` and `constants` give each node of `names`.

    Column c of a plan row r is `names[node][slots[c][r]]` where `slots[c]` is not None, else
    `constants[c][r]`: every column is all slots or all constants.
    """

    slots: tuple[tuple[int, ...] | None, ...]
    constants: tuple[tuple[Value, ...] | None, ...]
    names: list[Sequence[str]]
    """Per node, its names by slot. Blocks of one plan may share this list (the same object), so that
    an engine can keep the ids it looked up for one block's slots for the others (as long as it holds
    the list)."""

    def __post_init__(self) -> None:
        widths = {len(s) for s in self.slots if s is not None} | {len(c) for c in self.constants if c is not None}
        if len(self.slots) != len(self.constants) or len(widths) > 1:
            raise ValueError("a block's columns must all have one entry per plan row")
        if any((s is None) == (c is None) for s, c in zip(self.slots, self.constants, strict=True)):
            raise ValueError("each column of a block is either slots or constants")

    @classmethod
    def of(cls, rows: Sequence[tuple[Value, ...]], arity: int, named: int, names: list[Sequence[str]]) -> StampBlock:
        """The block of plan `rows` (each of `arity` values) whose first `named` values are slots
        of names, the others constants.
        """
        columns = [tuple(row[c] for row in rows) for c in range(arity)]
        return cls(
            tuple(cast(tuple[int, ...], column) if c < named else None for c, column in enumerate(columns)),
            tuple(None if c < named else column for c, column in enumerate(columns)),
            names,
        )

    @property
    def width(self) -> int:
        """Rows per node (the plan's rows)."""
        for column in (*self.slots, *self.constants):
            if column is not None:
                return len(column)
        return 0

    def __len__(self) -> int:
        return self.width * len(self.names)

    def rows(self) -> Iterator[Row]:
        consts = self.constants
        for names in self.names:
            columns = [
                [names[s] for s in slots] if slots is not None else consts[c] for c, slots in enumerate(self.slots)
            ]
            yield from zip(*columns, strict=True)

    def values_at(self, column: int) -> set[Value]:
        """Every value the block's rows hold in `column`."""
        if not self.names or not self.width:
            return set()
        slots = self.slots[column]
        if slots is None:
            consts = self.constants[column]
            assert consts is not None
            return set(consts)
        return {names[s] for names in self.names for s in set(slots)}

    def keeping(self, column: int, allowed: frozenset[Value]) -> StampBlock | None:
        """The block with only the plan rows whose constant in `column` is `allowed`; None if that
        column holds slots (the caller reads such a block's rows one by one).
        """
        consts = self.constants[column]
        if consts is None:
            return None
        kept = [r for r, v in enumerate(consts) if v in allowed]
        if len(kept) == len(consts):
            return self

        def pick(column_values: tuple[Value, ...] | None) -> tuple[Value, ...] | None:
            return None if column_values is None else tuple(column_values[r] for r in kept)

        return StampBlock(
            tuple(None if s is None else tuple(s[r] for r in kept) for s in self.slots),
            tuple(pick(c) for c in self.constants),
            self.names,
        )


@dataclass
class StampedRows(Sequence[Row]):
    """`plain` rows, then the rows of each block: a sequence of tuples that is made only if read as one.

    Equal to another StampedRows holding the same plain rows and blocks (not to a list of the same rows).
    """

    plain: list[Row]
    blocks: list[StampBlock]
    _made: list[Row] | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.plain) + sum(len(b) for b in self.blocks)

    def __iter__(self) -> Iterator[Row]:
        if self._made is not None:
            yield from self._made
            return
        yield from self.plain
        for block in self.blocks:
            yield from block.rows()

    @overload
    def __getitem__(self, index: int) -> Row: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Row]: ...

    def __getitem__(self, index: int | slice) -> Row | Sequence[Row]:
        if self._made is None:
            self._made = list(self)
        return self._made[index]

    def values_at(self, column: int) -> set[Value]:
        """Every value the rows hold in `column`, without making the rows."""
        out = {row[column] for row in self.plain}
        for block in self.blocks:
            out |= block.values_at(column)
        return out

    def filtered(self, filters: Sequence[tuple[int, frozenset[Value]]]) -> StampedRows:
        """The rows whose value at each filter's column is one it allows."""
        plain = [row for row in self.plain if all(row[i] in allowed for i, allowed in filters)]
        blocks: list[StampBlock] = []
        for block in self.blocks:
            kept: StampBlock | None = block
            for i, allowed in filters:
                kept = kept.keeping(i, allowed) if kept is not None else None
                if kept is None:
                    break
            if kept is None:  # a filter on a column of names: row by row
                plain += [row for row in block.rows() if all(row[i] in allowed for i, allowed in filters)]
            elif len(kept):
                blocks.append(kept)
        return StampedRows(plain, blocks)


def with_blocks(plain: list[Row], blocks: Iterable[StampBlock]) -> Sequence[Row]:
    """`plain` and the rows of those `blocks` that hold any, as StampedRows; `plain` itself if none do."""
    kept = [b for b in blocks if len(b)]
    return StampedRows(plain, kept) if kept else plain
