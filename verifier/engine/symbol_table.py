"""The DuckDB engine's symbol dictionary in Python: each symbol's id, and each id's symbol.

Loading a fleet's facts turns millions of strings into ids (1.55 M distinct symbols and 4 M
lookups at 131,072 GPUs). A dict did it one string at a time: each insert a cache miss into
an index of many megabytes, a Python int made for every id, and the dict re-hashed as it grew
(0.4-0.5 us a new symbol, about 130 MiB at that size). Here the table is a NumPy array of ids
with open addressing (linear probing), and a batch of strings is looked up and added a probe
round at a time, each round a few array operations over the whole batch, so that the memory
accesses of a round overlap instead of following one another. Python still computes each
string's hash (`hash`, cached in the string) and compares the text of a found entry with the string
looked up (at once when they are the very same string object), so two strings with one hash are
never taken for one another.

Ids are given in order of first appearance (a batch's new strings in the order they first occur
in it), as a dict interning the strings one by one would give them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import eq

import numpy
from numpy.typing import NDArray

_Int64s = NDArray[numpy.int64]
_Int32s = NDArray[numpy.int32]

EMPTY = -1
"""A free entry of the table (ids are >= 0)."""
UNCLAIMED = numpy.iinfo(numpy.int32).max
"""The claim of an entry no string of the running batch is being placed in."""
MIN_SIZE = 1 << 10
"""Entries of an empty table."""
SMALL_BATCH = 128
"""Batches up to this many strings are looked up one by one: the rounds' array operations cost a
fixed 0.1-0.3 ms a batch, a string looked up alone about 1 us (a service's job facts, a rule's
constants), and one looked up alone before a dict lookup (`_recent`)."""
RECENT = 1 << 16
"""The most symbols `_recent` keeps (it starts again empty past that)."""
MAX_IDS = 1 << 31
"""Ids fit a signed 32-bit integer (the SQL type of a symbol id): more symbols are refused."""


class SymbolTable:
    """Symbol -> id (`get`, `ids_into`, `add`) and id -> symbol (`text`).

    `hash_of` is Python's `hash` (a test may pass one that collides on purpose).
    """

    def __init__(self, hash_of: Callable[[str], int] = hash) -> None:
        self.text: list[str] = []
        """Each id's symbol, at the index that is the id."""
        self._hash_of = hash_of
        self._hashes = numpy.empty(MIN_SIZE // 2, dtype=numpy.int64)
        """Each id's hash (the first len(text) entries; room for as many ids as the table may hold)."""
        self._slots = numpy.full(MIN_SIZE, EMPTY, dtype=numpy.int32)
        """The table: ids, at the first free entry from their hash on (modulo its size), or EMPTY."""
        self._claims = numpy.full(MIN_SIZE, UNCLAIMED, dtype=numpy.int32)
        """Per entry, while a batch is placed: the first string of the batch that wants it."""
        self._recent: dict[str, int] = {}
        """Symbols looked up one at a time, with their ids: asked again (a service's job facts, a proof's
        values), a dict lookup."""

    def __len__(self) -> int:
        return len(self.text)

    def __contains__(self, symbol: object) -> bool:
        return isinstance(symbol, str) and self.get(symbol) is not None

    def get(self, symbol: str) -> int | None:
        """The id of `symbol`, or None if it has none."""
        found = self._recent.get(symbol)
        if found is None:
            found, _ = self._probe(symbol, self._hash_of(symbol))
            if found is not None:
                self._remember(symbol, found)
        return found

    def add(self, symbol: str) -> int:
        """The id of `symbol`, giving it the next one when it has none."""
        found = self._recent.get(symbol)
        if found is not None:
            return found
        wanted = self._hash_of(symbol)
        found, free = self._probe(symbol, wanted)
        if found is not None:
            self._remember(symbol, found)
            return found
        new = len(self.text)
        if new >= MAX_IDS:
            raise OverflowError(f"more than {MAX_IDS} distinct symbols")
        if 2 * (new + 1) > len(self._slots):
            self._resize(new + 1)
            _, free = self._probe(symbol, wanted)
        self._slots[free] = new
        self._hashes[new] = wanted
        self.text.append(symbol)
        self._remember(symbol, new)
        return new

    def _remember(self, symbol: str, found: int) -> None:
        if len(self._recent) >= RECENT:
            self._recent.clear()
        self._recent[symbol] = found

    def _probe(self, symbol: str, wanted: int) -> tuple[int | None, int]:
        """The id of `symbol` whose hash is `wanted` (None if it has none), and the entry where probing stopped."""
        slots, hashes, text = self._slots, self._hashes, self.text
        mask = len(slots) - 1
        at = wanted & mask
        while True:
            found: int = slots.item(at)
            if found == EMPTY:
                return None, at
            if hashes.item(found) == wanted and text[found] == symbol:
                return found, at
            at = (at + 1) & mask

    def ids_into(self, symbols: Sequence[str], out: _Int64s) -> int:
        """Write the id of each of `symbols` into `out`, giving new ones the next ids in order of first
        appearance; how many were new.
        """
        count = len(symbols)
        if count <= SMALL_BATCH:
            before = len(self.text)
            out[:] = numpy.fromiter(map(self.add, symbols), dtype=numpy.int64, count=count)
            return len(self.text) - before
        hashes = numpy.fromiter(map(self._hash_of, symbols), dtype=numpy.int64, count=count)
        ids, stops = self._find(symbols, hashes)
        missing = numpy.flatnonzero(ids == EMPTY)
        if not len(missing):
            out[:] = ids
            return 0
        before = len(self.text)
        # `missing` counts a new string once per copy: near the limit, count the distinct ones.
        if before + len(missing) > MAX_IDS and before + len(set(map(symbols.__getitem__, missing.tolist()))) > MAX_IDS:
            raise OverflowError(f"more than {MAX_IDS} distinct symbols")
        if 2 * (before + len(missing)) > len(self._slots):
            self._resize(before + len(missing))
            stops[missing] = self._free_from(hashes[missing])
        firsts, positions, copies = self._place_new(symbols, hashes, missing, stops[missing])
        # The new strings take the next ids in the order they first occur in the batch.
        is_new = numpy.zeros(count, dtype=numpy.bool_)
        is_new[firsts] = True
        new_ids = numpy.cumsum(is_new, dtype=numpy.int64) + (before - 1)
        ids[firsts] = new_ids[firsts]
        self._slots[positions] = new_ids[firsts]
        copy_of, first_of = copies
        ids[copy_of] = ids[first_of]
        added = len(firsts)
        self._hashes[before : before + added] = hashes[is_new]
        if added == count:
            self.text.extend(symbols)
        else:
            self.text.extend(map(symbols.__getitem__, numpy.flatnonzero(is_new).tolist()))
        out[:] = ids
        return added

    def truncate(self, size: int) -> None:
        """Forget the symbols from id `size` on (a load that failed part way, perhaps inside `ids_into`:
        the table is built again from the ids kept).
        """
        del self.text[size:]
        self._recent.clear()
        self._slots.fill(EMPTY)
        # A batch stopped between claiming entries and releasing them leaves claims behind: a later
        # string that lost to one would skip a free entry, be placed past it and never be found.
        # Made anew at the table's size: one stopped inside _resize has the new table, the old claims.
        self._claims = numpy.full(len(self._slots), UNCLAIMED, dtype=numpy.int32)
        self._place_known(numpy.arange(size, dtype=numpy.int64))

    # -- the table ---------------------------------------------------------------------

    def _find(self, symbols: Sequence[str], hashes: _Int64s) -> tuple[_Int64s, _Int64s]:
        """Each string's id (EMPTY if it has none), and where its probing stopped: its entry, or the
        first free entry from its hash on.
        """
        slots, stored, text = self._slots, self._hashes, self.text
        mask = len(slots) - 1
        ids = numpy.full(len(hashes), EMPTY, dtype=numpy.int64)
        at = hashes & mask
        todo: _Int64s | None = None  # None: the whole batch (the first round)
        while todo is None or len(todo):
            held = slots[at] if todo is None else slots[at[todo]]
            wanted = hashes if todo is None else hashes[todo]
            # An EMPTY entry reads the last id's hash (index -1): `taken` discards it.
            taken = held != EMPTY
            same = taken & (stored[held] == wanted)
            if same.any():
                found = numpy.flatnonzero(same)
                which = found if todo is None else todo[found]
                candidates = held[found].astype(numpy.int64)
                # Equal hashes, and (checked here) equal text: a hash alone may collide.
                texts = map(text.__getitem__, candidates.tolist())
                looked_up = symbols if len(which) == len(symbols) else map(symbols.__getitem__, which.tolist())
                equal = numpy.fromiter(map(eq, texts, looked_up), dtype=numpy.bool_, count=len(which))
                ids[which[equal]] = candidates[equal]
                same[found[~equal]] = False
            go_on = numpy.flatnonzero(taken & ~same)
            todo = go_on if todo is None else todo[go_on]
            at[todo] = (at[todo] + 1) & mask
        return ids, at

    def _place_new(
        self, symbols: Sequence[str], hashes: _Int64s, missing: _Int64s, stops: _Int64s
    ) -> tuple[_Int64s, _Int64s, tuple[_Int64s, _Int64s]]:
        """Claim free entries for the strings at `missing` (indexes into the batch, ascending), from
        `stops` on. Returns the first occurrence of each distinct string and the entry it took (ids
        still to write there), and the later copies of one with the first occurrence of each.

        A string and its copies have one hash, so they probe the same entries in the same rounds:
        where several strings want one free entry, the earliest in the batch takes it (`claims`),
        and the others there that have its text are its copies; the rest probe on.
        """
        slots, claims = self._slots, self._claims
        mask = len(slots) - 1
        todo, at = missing, stops
        firsts: list[_Int64s] = []
        positions: list[_Int64s] = []
        copy_of: list[_Int64s] = []
        first_of: list[_Int64s] = []
        while len(todo):
            free = slots[at] == EMPTY
            want, where = todo[free], at[free]
            numpy.minimum.at(claims, where, want.astype(numpy.int32))
            winner = claims[where].astype(numpy.int64)
            claims[where] = UNCLAIMED
            won = winner == want
            firsts.append(want[won])
            positions.append(where[won])
            slots[where[won]] = -2  # taken (its id is written once the batch's new ids are known)
            lost, lost_to = want[~won], winner[~won]
            copy = hashes[lost] == hashes[lost_to]
            if copy.any():  # equal hashes: copies if their texts are equal too
                texts = map(symbols.__getitem__, lost[copy].tolist())
                firsts_text = map(symbols.__getitem__, lost_to[copy].tolist())
                copy[copy] = numpy.fromiter(map(eq, texts, firsts_text), dtype=numpy.bool_, count=int(copy.sum()))
                copy_of.append(lost[copy])
                first_of.append(lost_to[copy])
            todo = numpy.concatenate((todo[~free], lost[~copy]))
            at = (numpy.concatenate((at[~free], where[~won][~copy])) + 1) & mask
        return _joined(firsts), _joined(positions), (_joined(copy_of), _joined(first_of))

    def _place_known(self, ids: _Int64s) -> None:
        """Put `ids` (distinct symbols, none in the table) into free entries."""
        slots, claims = self._slots, self._claims
        mask = len(slots) - 1
        todo = ids
        at = self._hashes[ids] & mask
        while len(todo):
            free = slots[at] == EMPTY
            want, where = todo[free], at[free]
            numpy.minimum.at(claims, where, want.astype(numpy.int32))
            won = claims[where] == want
            claims[where] = UNCLAIMED
            slots[where[won]] = want[won]
            todo = numpy.concatenate((todo[~free], want[~won]))
            at = (numpy.concatenate((at[~free], where[~won])) + 1) & mask

    def _free_from(self, hashes: _Int64s) -> _Int64s:
        """For each hash, the first free entry from it on."""
        slots = self._slots
        mask = len(slots) - 1
        at = hashes & mask
        todo = numpy.flatnonzero(slots[at] != EMPTY)
        while len(todo):
            at[todo] = (at[todo] + 1) & mask
            todo = todo[slots[at[todo]] != EMPTY]
        return at

    def _resize(self, symbols: int) -> None:
        """A table of at least three entries a symbol, all ids placed again (grown only when half full, so
        that probing stays short: one or two entries a lookup).
        """
        size = len(self._slots)
        while size < 3 * symbols:
            size *= 2
        used = len(self.text)
        self._hashes = _grown(self._hashes, used, size // 2)
        self._slots = numpy.full(size, EMPTY, dtype=numpy.int32)
        self._claims = numpy.full(size, UNCLAIMED, dtype=numpy.int32)
        self._place_known(numpy.arange(used, dtype=numpy.int64))


def _grown(values: _Int64s, used: int, size: int) -> _Int64s:
    grown = numpy.empty(size, dtype=numpy.int64)
    grown[:used] = values[:used]
    return grown


def _joined(parts: list[_Int64s]) -> _Int64s:
    return numpy.concatenate(parts) if parts else numpy.empty(0, dtype=numpy.int64)
