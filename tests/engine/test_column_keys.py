"""batch_key: a column or a pair of columns of a batch of facts that holds no value twice.

Each expected key is read off the rows by hand: the first column in order whose values are all
different, else a pair whose value pairs are; None when every column and pair repeats.
"""

from __future__ import annotations

import random
from itertools import combinations

import numpy
from numpy.typing import NDArray

from verifier.engine.column_keys import MARK_TABLE, batch_key


def ids(*values: int) -> NDArray[numpy.int64]:
    return numpy.array(values, dtype=numpy.int64)


def test_the_first_column_without_a_repeat_is_the_key() -> None:
    # Symbol ids 0..9. Column 0 repeats 3; column 1 (4, 5, 6) does not; column 2 does not either but comes later.
    assert batch_key([ids(3, 3, 2), ids(4, 5, 6), ids(7, 8, 9)]) == (1,)


def test_a_pair_of_columns_when_no_column_alone_is_a_key() -> None:
    # link_attr-like rows: (l1, generation, 5), (l1, lanes, 16), (l2, generation, 5), (l2, lanes, 16).
    # Every column repeats; the pairs (link, name) are all different: (l1, gen) (l1, lanes) (l2, gen) (l2, lanes).
    l1, l2, gen, lanes = 0, 1, 2, 3
    rows = [ids(l1, l1, l2, l2), ids(gen, lanes, gen, lanes), ids(5, 16, 5, 16)]
    assert batch_key(rows) == (0, 1)


def test_rows_that_repeat_have_no_key() -> None:
    # (a, b) twice: every column and every pair repeats.
    assert batch_key([ids(0, 0, 2), ids(1, 1, 1)]) is None


def test_numbers_are_marked_from_their_smallest_value() -> None:
    # Column 0 repeats; numbers -5 and 7 differ: offsets 0 and 12 in a table of 13.
    assert batch_key([ids(1, 1), ids(-5, 7)]) == (1,)


def test_numbers_spread_too_wide_are_not_judged() -> None:
    # 0 and MARK_TABLE differ, but marking them would need a table of MARK_TABLE + 1 entries: no key
    # is claimed (the rows then get a DISTINCT, which is never wrong).
    assert batch_key([ids(1, 1), ids(0, MARK_TABLE)]) is None


def test_an_empty_batch_is_keyed_by_any_column() -> None:
    assert batch_key([ids(), ids()]) == (0,)


def test_symbol_ids_are_marked_over_their_own_span() -> None:
    # A dictionary of 2 x MARK_TABLE symbols (too many for a table of them all), but column 0 holds
    # only ids MARK_TABLE + 1 and MARK_TABLE + 2: a table of 2 entries from the smallest, both
    # marked once, so column 0 is a key. Column 1 (ids 0 and 2 x MARK_TABLE - 1) spans the whole
    # dictionary: not judged, which does not matter, column 0 coming first.
    big = 2 * MARK_TABLE
    assert batch_key([ids(MARK_TABLE + 1, MARK_TABLE + 2), ids(0, big - 1)]) == (0,)


def test_a_pair_with_fewer_value_pairs_than_rows_is_passed_over() -> None:
    # Rows (a, x, 1), (a, y, 2), (b, x, 1), (b, y, 3): every column repeats (a, x, 1 twice each).
    # Pairs by table size: (0, 1) has 2 x 2 = 4 possible pairs, (0, 2) 2 x 3 = 6, (1, 2) 2 x 3 = 6.
    # (0, 1): (a,x) (a,y) (b,x) (b,y) all different: the key. A batch of 5 rows adding (a, x, 4):
    # (0, 1) has 4 possible pairs for 5 rows, so one repeats ((a, x)) and it is passed over; (0, 2)
    # (2 x 4 = 8 possible, first of the two of that size) holds (a,1) (a,2) (b,1) (b,3) (a,4): all
    # different, the key.
    a, b, x, y = 0, 1, 2, 3
    assert batch_key([ids(a, a, b, b), ids(x, y, x, y), ids(1, 2, 1, 3)]) == (0, 1)
    assert batch_key([ids(a, a, b, b, a), ids(x, y, x, y, x), ids(1, 2, 1, 3, 4)]) == (0, 2)


def test_a_proven_pair_is_taken_in_the_order_marking_takes_pairs() -> None:
    # The link_attr-like rows of the pair test: (0, 1) is the key. Every pair has 2 x 2 = 4 possible
    # value pairs for 4 rows, so all are eligible, in order (0, 1), (0, 2), (1, 2): (0, 1) is asked
    # first, proven, and taken; no other pair is asked or marked.
    l1, l2, gen, lanes = 0, 1, 2, 3
    rows = [ids(l1, l1, l2, l2), ids(gen, lanes, gen, lanes), ids(5, 16, 5, 16)]
    asked: list[tuple[int, int]] = []

    def proven(i: int, j: int) -> bool:
        asked.append((i, j))
        return (i, j) == (0, 1)

    assert batch_key(rows, proven) == (0, 1)
    assert asked == [(0, 1)]


def test_a_pair_not_proven_is_still_marked() -> None:
    # Nothing proven: the marking finds (0, 1) as without a proof; with rows that repeat, no key.
    l1, l2, gen, lanes = 0, 1, 2, 3
    rows = [ids(l1, l1, l2, l2), ids(gen, lanes, gen, lanes), ids(5, 16, 5, 16)]
    assert batch_key(rows, lambda i, j: False) == (0, 1)
    assert batch_key([ids(1, 1), ids(2, 2)], lambda i, j: False) is None


def test_values_from_zero_marked_in_a_table_from_zero_give_the_same_keys() -> None:
    # Ids 6..9 in 4 rows: 4 x 4 = 16 table entries allowed from 0, so the table runs from 0 (10
    # entries, 0..5 never marked) instead of from 6 (4 entries). Rows (6, 8), (6, 9), (7, 8), (7, 9):
    # no column alone is a key (6, 7, 8, 9 twice each); the pair (0, 1) has 2 x 2 = 4 possible pairs
    # for 4 rows, ranked 0 and 1 in each column whichever table: all 4 different, the key.
    assert batch_key([ids(6, 6, 7, 7), ids(8, 9, 8, 9)]) == (0, 1)
    # The same with (7, 9) made (7, 8): (7, 8) twice, so no key.
    assert batch_key([ids(6, 6, 7, 7), ids(8, 9, 8, 8)]) is None
    # Ids 100 and 101 in 2 rows (past 4 entries a value): marked from 100 as before; both once.
    assert batch_key([ids(100, 101)]) == (0,)


def test_random_batches_get_the_key_a_row_by_row_reading_gives() -> None:
    # Small columns of values 0..11 or 5..16 (some marked from 0, some from their smallest: FROM_ZERO),
    # against the definition read row by row: the first column with no value twice, else among the
    # pairs with at least as many possible value pairs as rows, smallest first (ties in column
    # order), the first with no pair twice.
    rng = random.Random(46)
    for _ in range(500):
        count, width = rng.randint(1, 8), rng.randint(1, 3)
        low = rng.choice([0, 0, 5])
        columns = [[rng.randint(low, low + 11) for _ in range(count)] for _ in range(width)]
        expected: tuple[int, ...] | None = (
            next((i,) for i, c in enumerate(columns) if len(set(c)) == count)
            if any(len(set(c)) == count for c in columns)
            else None
        )
        if expected is None:
            pairs = sorted(
                ((len(set(columns[i])) * len(set(columns[j])), i, j) for i, j in combinations(range(width), 2)),
                key=lambda p: p[0],
            )
            expected = next(
                (
                    (i, j)
                    for size, i, j in pairs
                    if size >= count and len(set(zip(columns[i], columns[j], strict=True))) == count
                ),
                None,
            )
        assert batch_key([ids(*c) for c in columns]) == expected, columns


def test_a_pair_whose_values_span_too_wide_a_table_is_marked_by_rank() -> None:
    # Column 0 holds 0 and 2^24 (a table of 2^24 + 1 entries, within MARK_TABLE), column 1 holds 0
    # and 3 (4 entries): all possible pairs of values would take (2^24 + 1) x 4 > MARK_TABLE entries,
    # so each value is ranked in its column (0 or 1) and the 2 x 2 = 4 ranked pairs are marked.
    far = 1 << 24
    assert (far + 1) * 4 > MARK_TABLE
    # Rows (0, 0), (0, 3), (far, 0), (far, 3): each column repeats, the 4 pairs are all different.
    assert batch_key([ids(0, 0, far, far), ids(0, 3, 0, 3)]) == (0, 1)
    # (far, 3) made (far, 0): that pair twice, so no key.
    assert batch_key([ids(0, 0, far, far), ids(0, 3, 0, 0)]) is None


def test_a_pair_of_values_far_from_zero_is_marked_over_their_spans() -> None:
    # Ids 1,000,000..1,000,001 and 2,000,000..2,000,002 in 6 rows: tables from their smallest (past 4
    # entries a row from 0), 2 and 3 entries, so the 6 possible pairs are marked as they are.
    a, b = 1_000_000, 2_000_000
    # Rows (a, b), (a, b+1), (a, b+2), (a+1, b), (a+1, b+1), (a+1, b+2): all 6 different.
    first = ids(a, a, a, a + 1, a + 1, a + 1)
    assert batch_key([first, ids(b, b + 1, b + 2, b, b + 1, b + 2)]) == (0, 1)
    # The last made (a+1, b+1): that pair twice, so no key.
    assert batch_key([first, ids(b, b + 1, b + 2, b, b + 1, b + 1)]) is None
