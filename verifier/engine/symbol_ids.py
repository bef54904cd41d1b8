"""The DuckDB engine's symbol dictionary: every symbol's integer id, and every id's text.

Facts and rule constants are stored in DuckDB as ids of one dictionary (see `sql_compiler`). Ids
are given in order of first appearance, from 0, and a symbol never gets two: the engine joins and
compares symbols by id alone.

A fleet's stamped nodes bring about a million names never seen before (each node's link ids at
131,072 GPUs), looked up by text almost never after. Putting each into the dict costs a cache miss
and a write in a table that grows (about half a second there). Such a batch (`defer`) is instead
given the ids of its positions and kept by hash: its hashes in id order and sorted. A batch is taken
so when no hash of it repeats, inside it or among the hashes of every symbol known before (then each
of its names is new and comes once: a name seen twice never gets two ids); else its names go
through the dict as any others. A text the dict lacks is looked for among the deferred ids by hash,
then compared exactly, before it is given a new id (`find`); names of a batch read again in bulk
(the objects a link ends on, in every relation about objects) are put in the dict, slot by slot.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import repeat

import numpy
from numpy.typing import NDArray

from verifier.core.errors import EngineError

_Int64s = NDArray[numpy.int64]

DEFER_AT = 65_536
"""Names in one batch from which `defer` indexes them by hash instead of the dict: below it, sorting
and searching the known hashes costs more than the dict saves."""
BITS = 1 << 25
"""Bits of the filter that tells, by a symbol's hash, that no batch deferred it (4 MiB): with the 1.03 M
link ids of 131,072 GPUs, 3 % of other hashes find their bit set and are searched for."""
FILTER_AFTER = 256
"""Searches of the deferred batches for one symbol after which the filter is made (`_find_deferred`):
a rule's constants are a few hundred; a column of new symbols looked up one by one, many more."""


@dataclass
class _Hashed:
    """The hashes of the symbols of the ids `base` .. `base + len(hashes) - 1`, in id order and sorted."""

    base: int
    hashes: _Int64s
    sorted: _Int64s

    @classmethod
    def of(cls, base: int, hashes: _Int64s) -> _Hashed:
        return cls(base, hashes, numpy.sort(hashes))

    @property
    def end(self) -> int:
        return self.base + len(self.hashes)

    def holding(self, hashes: _Int64s) -> _Int64s:
        """Those of `hashes` (sorted: searched in order, which spares a cache miss each) found here."""
        if not len(self.sorted) or not len(hashes):
            return hashes[:0]
        at = numpy.searchsorted(self.sorted, hashes)
        at[at == len(self.sorted)] = 0
        found: _Int64s = hashes[self.sorted[at] == hashes]
        return found

    def meets(self, other: _Hashed) -> bool:
        """Whether a hash is both here and in `other`: the smaller one's searched in the larger (a
        fleet's million link ids against 320,000 hashes known before: each search a cache miss).
        """
        small, large = (self, other) if len(self.sorted) <= len(other.sorted) else (other, self)
        return bool(len(large.holding(small.sorted)))

    def ids_of(self, hashes: _Int64s) -> _Int64s:
        """The ids here whose hash is one of `hashes` (a pass over them, or one per hash when few)."""
        if len(hashes) <= 16:
            where = [numpy.flatnonzero(self.hashes == h) for h in hashes.tolist()]
            at: _Int64s = numpy.concatenate(where) if where else numpy.zeros(0, dtype=numpy.int64)
        else:
            at = numpy.flatnonzero(numpy.isin(self.hashes, hashes))
        return at + self.base

    def below(self, start: int) -> _Hashed | None:
        """The hashes of its ids below `start`, None if none is."""
        if self.base >= start:
            return None
        if self.end <= start:
            return self
        return _Hashed.of(self.base, self.hashes[: start - self.base])


@dataclass
class _Batch:
    """Names `defer` gave ids, `width` per node: id `hashed.base + n * width + j` is node n's name at
    slot j. The dict holds none of the slots in `pending`.
    """

    hashed: _Hashed
    width: int
    pending: set[int]

    def deferred_below(self, start: int) -> int:
        """How many of its ids below `start` the dict does not hold."""
        base, end = self.hashed.base, min(self.hashed.end, start)
        return sum(len(range(base + j, end, self.width)) for j in self.pending)


def _sorted_hashes(symbols: list[str]) -> _Int64s:
    hashes = numpy.fromiter(map(hash, symbols), dtype=numpy.int64, count=len(symbols))
    hashes.sort()
    return hashes


class SymbolIds(dict[str, int]):
    """Symbol -> id for every symbol but the deferred ones, `text`, each id's symbol, and the deferred
    batches (`defer`) with their hashes; looking up a missing symbol (`d[s]`) gives it its deferred id,
    else the next id.

    So a column is interned in one pass of C-level lookups, only the new symbols calling back into Python.
    """

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self._deferred: list[_Batch] = []
        """The batches `defer` gave ids that have a slot the dict does not hold."""
        self._known: list[_Hashed] = []
        """The hashes of the other ids below `_hashed`, which a batch to defer is checked against."""
        self._hashed = 0
        self._bits = bytearray()
        """A bit per hash modulo BITS, set for every deferred symbol's; empty until FILTER_AFTER searches."""
        self._searches = 0

    def __missing__(self, symbol: str) -> int:
        found = self._find_deferred(symbol) if self._deferred else None
        if found is not None:
            return found
        found = self[symbol] = len(self.text)
        self.text.append(symbol)
        return found

    def find(self, symbol: str) -> int | None:
        """The id of a symbol, or None if it has none."""
        found = self.get(symbol)
        if found is None and self._deferred:
            return self._find_deferred(symbol)
        return found

    def _find_deferred(self, symbol: str) -> int | None:
        """The id `defer` gave `symbol`, if it did: by hash, then its text compared (a binary search
        per batch, and a pass over a batch's hashes only when one is the symbol's).
        """
        code = hash(symbol)
        if self._bits:
            # A Python index each: a column of new symbols looked up one by one (misses of the dict
            # after a chunk's first and last were found) stays near the dict's pace.
            at = code % BITS
            if not self._bits[at >> 3] >> (at & 7) & 1:
                return None
        else:
            self._searches += 1
            if self._searches > FILTER_AFTER:
                self._filter()
        wanted = numpy.array([code], dtype=numpy.int64)
        for batch in self._deferred:
            held = batch.hashed.holding(wanted)
            for found in batch.hashed.ids_of(held).tolist():
                if self.text[found] == symbol:
                    return int(found)
        return None

    @staticmethod
    def defers(count: int) -> bool:
        """Whether `defer` takes a batch of `count` names (DEFER_AT or more)."""
        return count >= DEFER_AT

    def defer(self, names: list[str], width: int) -> int | None:
        """Give `names` (strings, `width` per node) the ids from the next one on, by position, without
        a dict entry each, if none of them is known and none comes twice (told by hash: if any hash
        repeats, None and nothing done). UnicodeEncodeError if one is not UTF-8 text, with nothing done.
        """
        if not self.defers(len(names)):
            return None
        hashes = numpy.fromiter(map(hash, names), dtype=numpy.int64, count=len(names))
        hashed = _Hashed.of(len(self.text), hashes)
        if bool((hashed.sorted[1:] == hashed.sorted[:-1]).any()):
            return None
        self._index_known()
        if any(map(hashed.meets, (*self._known, *(b.hashed for b in self._deferred)))):
            return None
        check_utf8(names)
        self.text.extend(names)
        self._hashed = len(self.text)
        self._deferred.append(_Batch(hashed, width, set(range(width))))
        self._bits, self._searches = bytearray(), 0  # made again, with this batch, when searches mount
        return hashed.base

    def _filter(self) -> None:
        """Make the filter of the deferred batches' hashes (`_bits`)."""
        marks = numpy.zeros(BITS, dtype=numpy.bool_)
        for batch in self._deferred:
            marks[batch.hashed.hashes % BITS] = True
        self._bits = bytearray(numpy.packbits(marks, bitorder="little").tobytes())

    def _index_known(self) -> None:
        """Hash the symbols given ids since the last time (all in the dict)."""
        if self._hashed < len(self.text):
            added = self.text[self._hashed :]
            hashes = numpy.fromiter(map(hash, added), dtype=numpy.int64, count=len(added))
            self._known.append(_Hashed.of(self._hashed, hashes))
            self._hashed = len(self.text)

    def _undefer_any_of(self, symbols: list[str]) -> None:
        """Put in the dict each deferred slot that may hold one of `symbols` (one of its hashes): names
        read in bulk again (the objects a link ends on, in every relation about objects) are looked
        up as fast as any other from then on; the others (the link ids) stay out.
        """
        hashes = _sorted_hashes(symbols)
        for batch in list(self._deferred):
            held = batch.hashed.holding(hashes)
            if not len(held):
                continue
            base, end, width = batch.hashed.base, batch.hashed.end, batch.width
            slots = set(((batch.hashed.ids_of(numpy.unique(held)) - base) % width).tolist()) & batch.pending
            for j in sorted(slots):
                # setdefault (a C call each) where update(zip(...)) makes a pair per name: twice as slow.
                deque(map(self.setdefault, self.text[base + j : end : width], range(base + j, end, width)), maxlen=0)
                batch.pending.discard(j)
            if not batch.pending:
                self._deferred.remove(batch)
                self._known.append(batch.hashed)

    def ids_into(self, symbols: list[str], out: _Int64s) -> int:
        """Write the ids of `symbols` (strings) into `out`, giving new ones the next ids; how many were new.

        A new symbol DuckDB could not store as text (a lone surrogate is not UTF-8) is refused here,
        with UnicodeEncodeError, though its text goes to DuckDB only if a statement reads it.
        """
        before, count = len(self.text), len(symbols)
        if symbols[0] in self and symbols[-1] in self:
            # Likely symbols seen before: one dict lookup each, a miss giving the deferred or the next
            # id from __missing__.
            out[:] = numpy.fromiter(map(self.__getitem__, symbols), dtype=numpy.int64, count=count)
            if len(self.text) > before:
                check_utf8(self.text[before:])
            return len(self.text) - before
        if self._deferred:
            # Likely new, or deferred (a stamped name read again through another list of names),
            # which the dict would give a new id.
            self._undefer_any_of(symbols)
        return self._new_ids(symbols, out)

    def _new_ids(self, symbols: list[str], out: _Int64s) -> int:
        """`ids_into` for symbols none of which is deferred."""
        before, count = len(self.text), len(symbols)
        # Likely symbols never seen: each is offered the id of its position, in one C-level pass that
        # looks it up and inserts it at once (at fleet scale each lookup is a cache miss).
        offers = map(self.setdefault, symbols, range(before, before + count))
        got = numpy.fromiter(offers, dtype=numpy.int64, count=count)
        offered = numpy.arange(before, before + count, dtype=numpy.int64)
        taken = got == offered
        if taken.all():
            self.text.extend(symbols)
            check_utf8(symbols)
            out[:] = got
            return count
        # Some were known, or came twice: the new ones take the next ids in order of first appearance,
        # and the later copies of a new one (which got its offered id) follow it.
        first = numpy.flatnonzero(taken)
        renumbered = numpy.full(count, -1, dtype=numpy.int64)
        renumbered[first] = numpy.arange(before, before + len(first), dtype=numpy.int64)
        new = [symbols[i] for i in first.tolist()]
        self.update(zip(new, renumbered[first].tolist(), strict=True))
        self.text.extend(new)
        check_utf8(new)
        offered_ids = got >= before
        got[offered_ids] = renumbered[got[offered_ids] - before]
        out[:] = got
        return len(new)

    def intern(self, symbol: str) -> int:
        """The id of a symbol, adding it to the dictionary when new (a lone surrogate is refused)."""
        found = self.find(symbol)
        if found is None:
            try:
                check_utf8([symbol])
            except UnicodeEncodeError as err:
                raise not_utf8("of a rule or query", err) from None
            new = len(self.text)
            try:
                found = self[symbol]  # __missing__ gives it that id and keeps its text
            except BaseException:
                # Both or neither (a REPL query goes on after Ctrl-C between the two): an id the text
                # list lacks would be given to the next new symbol too.
                if self.get(symbol, -1) >= new:
                    del self[symbol]
                del self.text[new:]
                raise
        return found

    def forget_from(self, start: int) -> None:
        """Forget every symbol whose id is `start` or more (a refused load's): the next ones get those ids."""
        for symbol in self.text[start:]:
            self.pop(symbol, None)
        del self.text[start:]
        deferred = [(b, b.hashed.below(start)) for b in self._deferred]
        self._deferred = [_Batch(h, b.width, b.pending) for b, h in deferred if h is not None]
        self._known = [h for h in (k.below(start) for k in self._known) if h is not None]
        self._hashed = min(self._hashed, start)
        expected = start - sum(batch.deferred_below(start) for batch in self._deferred)
        if len(self) != expected:  # stopped inside ids_into, between its insert and its renumbering
            for symbol in [s for s, i in self.items() if i >= start or self.text[i] != s]:
                del self[symbol]


@dataclass
class SlotIds:
    """The ids of the names of a list that StampBlocks share (`names`: per node, its names by slot), per
    slot each node's, as looked up for one of them (`slots`), so that the others need not again.
    """

    names: list[Sequence[str]]
    slots: dict[int, _Int64s] = field(default_factory=dict)
    batches: dict[int, tuple[int, int]] = field(default_factory=dict)
    """Per slot whose names `SymbolIds.defer` took, that batch's ids (first, end): all distinct, and
    none of them any other name's."""
    _rows: dict[int, int] | None = None
    """Each node's row by the identity of its sequence of names (of its base, where the list has `bases`)."""

    def rows_of(self, names: list[Sequence[str]]) -> _Int64s | None:
        """Each node's row here for another list of names whose nodes' sequences of names are these very
        objects (another relation about the same nodes), -1 for a node not here; None if the first and
        the last are not here, or fewer than half. A list with `bases` (see `same_below`) is told by
        those instead of its own sequences.
        """
        if not names or not self.names:
            return None
        if self._rows is None:
            self._rows = {id(seq): i for i, seq in enumerate(_bases(self.names))}
        mine = _bases(names)
        if id(mine[0]) not in self._rows and id(mine[-1]) not in self._rows:
            return None
        rows = numpy.fromiter(map(self._rows.get, map(id, mine), repeat(-1)), dtype=numpy.int64, count=len(mine))
        if 2 * int(numpy.count_nonzero(rows < 0)) > len(names):
            return None
        return rows


def _bases(names: list[Sequence[str]]) -> list[Sequence[str]]:
    """The sequences a list of names is told by: its `bases` where it has them (see `same_below`)."""
    bases: list[Sequence[str]] | None = getattr(names, "bases", None)
    return bases if bases is not None and len(bases) == len(names) else names


def same_below(names: list[Sequence[str]]) -> int | None:
    """For a list of names with `bases` (per node, a sequence its node's sequence starts with, which other
    lists may hold: facts.inventory's _NodeNames), the slot below which its names are its bases'
    (`read_once_from`); None for a list without, whose every slot is its sequences' own.
    """
    if _bases(names) is names:
        return None
    below: int = getattr(names, "read_once_from", 0)  # (0, none the same, where it would lack one)
    return below


def check_utf8(symbols: list[str]) -> None:
    """Raise UnicodeEncodeError if a symbol holds a lone surrogate (not UTF-8, so DuckDB could not store it)."""
    # ASCII-only text (all of a fleet's names) is known so by a flag of each string (str.isascii
    # reads it, a C call each): joined first, a million link ids were copied into 30 MB once more.
    if all(map(str.isascii, symbols)):
        return
    for symbol in symbols:
        if not symbol.isascii():
            symbol.encode("utf-8")


def not_utf8(where: str, err: UnicodeEncodeError) -> EngineError:
    """The error for a symbol holding a lone surrogate (`err`, from `check_utf8`), met `where`."""
    bad = err.object[err.start : err.end]
    return EngineError(
        f"duckdb cannot take a symbol {where}: it holds the lone surrogate {bad!a}, which is not"
        " UTF-8 text (DuckDB stores text as UTF-8)"
    )
