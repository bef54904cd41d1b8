"""Keys of a batch of facts: a column, or a pair of columns, that holds no value twice.

A key tells two things for free. The rows are distinct, so loading them needs no DISTINCT (DuckDB
hashing every row: 0.2 s for the 1.8 M link attributes of a 131,072-GPU fleet). And a rule that
reads the relation with the key's values bound reads at most one row, which is what lets
verifier.engine.distinct_rules prove that a rule derives no tuple twice.

Values are marked in a table with an entry per possible value, a linear pass: each value (a symbol
id or a number) by its offset from the column's smallest, when the column spans few enough values.
A column of symbol ids spans far fewer than the dictionary's size when its values were all new in
one batch or are a few names (link_attr's attribute names: 3 entries, not 1.5 M at 131,072 GPUs).
A pair is marked at (offset of the first) x (span of the second) + (offset of the second) where
the two spans multiply to few enough entries, and not far more than ranking would read (OVER_RANKS),
else at (rank of the first among its column's values) x (values of the second column) + (rank of
the second); a pair with fewer possible values than there are rows is passed over.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import combinations

import numpy
from numpy.typing import NDArray

_Int64s = NDArray[numpy.int64]
_Marks = NDArray[numpy.bool_]

MARK_TABLE = 1 << 25
"""The most entries a table marking values or pairs of values may have (32 MiB of booleans)."""
FROM_ZERO = 4
"""Table entries per value up to which a column of values from 0 is marked in a table from 0 (`_offsets`)."""
OVER_RANKS = 8
"""How many times the entries ranking a pair of columns reads and writes a table marking the pair by
its values' offsets may have: past that, the pair is ranked (`batch_key`)."""


def batch_key(columns: list[_Int64s], proven: Callable[[int, int], bool] | None = None) -> tuple[int, ...] | None:
    """A key of the rows `columns` hold: the first column (in order) that holds no value twice, else
    the pair of columns with the smallest table to mark that holds no pair twice; None if neither
    (or the tables would be too large to tell). Symbol ids and numbers alike: every column is marked
    over the span of its own values.

    `proven(i, j)`: True only where the rows are known to hold no pair of columns i and j twice
    (StampedRows' structure), which spares marking them; the key found is the same.
    """
    rows = len(columns[0]) if columns else 0
    marked: list[tuple[int, _Int64s, _Marks, int]] = []  # column, offsets, table, distinct values
    for i, values in enumerate(columns):
        if not len(values):
            return (i,)
        offsets = _offsets(values)
        if offsets is None:
            continue
        present = numpy.zeros(offsets[1], dtype=numpy.bool_)
        present[offsets[0]] = True
        distinct = int(numpy.count_nonzero(present))
        if distinct == len(values):
            return (i,)
        marked.append((i, offsets[0], present, distinct))
    pairs = sorted(((a[3] * b[3], a, b) for a, b in combinations(marked, 2)), key=lambda p: p[0])
    ranks: dict[int, _Int64s] = {}  # a column's ranks, made once for every pair it is in
    for size, (i, first, first_present, _), (j, second, second_present, second_distinct) in pairs:
        if size > MARK_TABLE:
            break
        if size < rows:  # fewer possible pairs of values than rows: one comes twice
            continue
        if proven is not None and proven(i, j):
            return (i, j)
        # Each column's values from its smallest marked one (a table from 0 holds none below it) to its
        # largest, the table's last entry.
        first_low, second_low = int(first_present.argmax()), int(second_present.argmax())
        second_span = len(second_present) - second_low
        spans = (len(first_present) - first_low) * second_span
        # Only where that table is not far larger than the ranks' work (both columns' tables and the
        # ranked pairs'): 24 rows of numbers spread over 0..5790 in three columns made three tables of
        # 33.5 M entries, 20 ms and 67 MB, where ranking took 0.06 ms. (Measured: offsets 4x faster
        # at 2.3 times the ranks' entries, 1.5x slower at 24 times.)
        if spans <= MARK_TABLE and spans <= OVER_RANKS * (len(first_present) + len(second_present) + size):
            # The values mark the pair themselves, in a table of all possible pairs (GPU ids by a few
            # names): ranking a column took a cumulative sum over its table and a random read per
            # row, 2.7x the time of this pass (1.8 M rows of gpu_pair_bottleneck at 524,288 GPUs).
            seen = numpy.zeros(spans, dtype=numpy.bool_)
            seen[(first - first_low) * second_span + (second - second_low)] = True
        else:
            for column, at, marks in ((i, first, first_present), (j, second, second_present)):
                if column not in ranks:
                    ranks[column] = (numpy.cumsum(marks, dtype=numpy.int64) - 1)[at]
            seen = numpy.zeros(size, dtype=numpy.bool_)
            seen[ranks[i] * second_distinct + ranks[j]] = True
        if int(numpy.count_nonzero(seen)) == rows:
            return (i, j)
    return None


def _offsets(values: _Int64s) -> tuple[_Int64s, int] | None:
    """Each value as an offset into a table of all possible values (from the smallest to the
    largest), and that table's size; None when the table would be larger than MARK_TABLE.

    Values from 0 up to four times as many as there are stay as they are, in a table from 0: its
    entries below the smallest are never marked, so every count and rank is the same, and the
    values are not copied (link_attr's 1.8 M symbol ids at 131,072 GPUs, 14 MB a column).
    """
    low, high = int(values.min()), int(values.max())
    if high - low + 1 > MARK_TABLE:
        return None
    if low >= 0 and high < FROM_ZERO * len(values):
        return values, high + 1
    return (values - low if low else values), high - low + 1
