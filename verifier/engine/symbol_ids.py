"""The DuckDB engine's symbol dictionary: every symbol's integer id, and every id's text.

Facts and rule constants are stored in DuckDB as ids of one dictionary (see `sql_compiler`). Ids
are given in order of first appearance, from 0, and a symbol never gets two: the engine joins and
compares symbols by id alone.
"""

from __future__ import annotations

import numpy
from numpy.typing import NDArray

from verifier.core.errors import EngineError

_Int64s = NDArray[numpy.int64]


class SymbolIds(dict[str, int]):
    """Symbol -> id, and `text`, each id's symbol; looking up a missing symbol (`d[s]`) gives it the next id.

    So a column is interned in one pass of C-level lookups, only the new symbols calling back into Python.
    """

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []

    def __missing__(self, symbol: str) -> int:
        found = self[symbol] = len(self.text)
        self.text.append(symbol)
        return found

    def find(self, symbol: str) -> int | None:
        """The id of a symbol, or None if it has none."""
        return self.get(symbol)

    def ids_into(self, symbols: list[str], out: _Int64s) -> int:
        """Write the ids of `symbols` (strings) into `out`, giving new ones the next ids; how many were new.

        A new symbol DuckDB could not store as text (a lone surrogate is not UTF-8) is refused here,
        with UnicodeEncodeError, though its text goes to DuckDB only if a statement reads it.
        """
        before, count = len(self), len(symbols)
        if symbols[0] in self and symbols[-1] in self:
            # Likely symbols seen before: one dict lookup each, a miss giving the next id from __missing__.
            out[:] = numpy.fromiter(map(self.__getitem__, symbols), dtype=numpy.int64, count=count)
            if len(self) > before:
                check_utf8(self.text[before:])
            return len(self) - before
        # Likely symbols never seen (a fleet's link ids): each is offered the id of its position, in one
        # C-level pass that looks it up and inserts it at once (at fleet scale each lookup is a cache miss).
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
        if len(self) != start:  # stopped inside ids_into, between its insert and its renumbering
            for symbol in [s for s, i in self.items() if i >= start or self.text[i] != s]:
                del self[symbol]


def check_utf8(symbols: list[str]) -> None:
    """Raise UnicodeEncodeError if a symbol holds a lone surrogate (not UTF-8, so DuckDB could not store it)."""
    # One join per list: ASCII-only text (all of a fleet's names) is known so without a look at
    # each string; anything else is encoded.
    joined = "".join(symbols)
    if not joined.isascii():
        joined.encode("utf-8")


def not_utf8(where: str, err: UnicodeEncodeError) -> EngineError:
    """The error for a symbol holding a lone surrogate (`err`, from `check_utf8`), met `where`."""
    bad = err.object[err.start : err.end]
    return EngineError(
        f"duckdb cannot take a symbol {where}: it holds the lone surrogate {bad!a}, which is not"
        " UTF-8 text (DuckDB stores text as UTF-8)"
    )
