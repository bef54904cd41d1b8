"""Review of batch_key's pair marking by offsets (4eaaf57) and of the plain rows' repeated-pair check
by sorting (756b9e2): the key found is the one a plain reading of the rows gives, on any values
(negative, far apart, at the int64 edges, spans multiplying to exactly MARK_TABLE or past it), and
a small batch of far-apart values is not marked in a table of every possible pair.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy
import pytest
from engine.stamp_helpers import link_block, stamp_names
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine import symbol_ids
from verifier.engine.column_keys import MARK_TABLE, batch_key
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def ids(values: list[int]) -> NDArray[numpy.int64]:
    return numpy.array(values, dtype=numpy.int64)


def reference_key(columns: list[list[int]]) -> tuple[int, ...] | None:
    """The key as batch_key's docstring defines it, read with Python sets. A column is judged only when
    its values span at most MARK_TABLE (largest - smallest + 1); an empty batch is keyed by its first
    column; else the first judged column with no value twice; else, among pairs of judged columns
    with at least as many possible value pairs (distinct x distinct) as rows and at most MARK_TABLE,
    smallest first (ties in column order), the first with no pair twice.
    """
    if not columns:
        return None
    rows = len(columns[0])
    if rows == 0:
        return (0,)
    judged = [i for i, c in enumerate(columns) if max(c) - min(c) + 1 <= MARK_TABLE]
    for i in judged:
        if len(set(columns[i])) == rows:
            return (i,)
    pairs = sorted(
        ((len(set(columns[i])) * len(set(columns[j])), i, j) for i, j in combinations(judged, 2)),
        key=lambda p: p[0],
    )
    for size, i, j in pairs:
        if size > MARK_TABLE:
            break
        if size >= rows and len(set(zip(columns[i], columns[j], strict=True))) == rows:
            return (i, j)
    return None


# Values drawn near a few bases: small ids, negatives, the int64 edges, and bases whose spans
# multiply past MARK_TABLE with another column's (2^13 x 2^13 = 2^26) or come just under it.
_BASES = [0, -7, 1 << 20, INT64_MIN, INT64_MAX - 40, -(1 << 40)]


@st.composite
def _batches(draw: Any) -> list[list[int]]:
    rows = draw(st.integers(1, 9))
    width = draw(st.integers(1, 4))
    columns = []
    for _ in range(width):
        base = draw(st.sampled_from(_BASES))
        wide = draw(st.sampled_from([3, 12, 1 << 13, (1 << 12) + 1, MARK_TABLE]))
        # Few distinct offsets, so that columns repeat and pairs get judged; one spread wide apart.
        offsets = draw(st.lists(st.sampled_from([0, 1, 2, wide - 1]), min_size=rows, max_size=rows))
        column = [base + o for o in offsets]
        if not all(INT64_MIN <= v <= INT64_MAX for v in column):
            column = [base - o for o in offsets]
        columns.append(column)
    return columns


# derandomize: the same draws on every run (a gate must not depend on the draw).
@settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_batches())
def test_batch_key_is_the_key_a_plain_reading_gives(columns: list[list[int]]) -> None:
    assert batch_key([ids(c) for c in columns]) == reference_key(columns)


def test_spans_multiplying_to_exactly_mark_table_and_one_past_it() -> None:
    # Column 0: 0 and 2^13 - 1 (a span of 2^13), column 1: 5 and 5 + 2^12 - 1 (2^12): 2^25 =
    # MARK_TABLE possible pairs. Rows (0, 5), (0, 5 + 4095), (8191, 5), (8191, 5 + 4095): each column
    # repeats, the four pairs differ: key (0, 1). (With 4 rows these pairs are ranked, not marked by
    # offsets: the answer must not depend on which.)
    a, b = (1 << 13) - 1, 5 + (1 << 12) - 1
    assert (a + 1) * (b - 5 + 1) == MARK_TABLE
    assert batch_key([ids([0, 0, a, a]), ids([5, b, 5, b])]) == (0, 1)
    assert batch_key([ids([0, 0, a, a]), ids([5, b, 5, 5])]) is None  # (a, 5) twice
    # One more value in column 0's span (2^13 + 1): 2^25 + 2^12 pairs, past MARK_TABLE: the same
    # answers from ranks (each column has 2 distinct values: 4 ranked pairs).
    assert batch_key([ids([0, 0, a + 1, a + 1]), ids([5, b, 5, b])]) == (0, 1)
    assert batch_key([ids([0, 0, a + 1, a + 1]), ids([5, b, 5, 5])]) is None


def test_pairs_at_the_int64_edges() -> None:
    # Column 0 at INT64_MAX - 1 and INT64_MAX, column 1 at INT64_MIN and INT64_MIN + 2: spans 2 and 3
    # (their difference, not the values, sizes the table). Rows (max-1, min), (max-1, min+2),
    # (max, min), (max, min+2): four different pairs.
    first = ids([INT64_MAX - 1, INT64_MAX - 1, INT64_MAX, INT64_MAX])
    assert batch_key([first, ids([INT64_MIN, INT64_MIN + 2, INT64_MIN, INT64_MIN + 2])]) == (0, 1)
    assert batch_key([first, ids([INT64_MIN, INT64_MIN + 2, INT64_MIN, INT64_MIN])]) is None
    # A column spanning both edges is never judged (its span does not fit a table): no key, though
    # its two values differ; the other column (7 twice) repeats.
    assert batch_key([ids([INT64_MIN, INT64_MAX]), ids([7, 7])]) is None


def test_a_small_batch_of_far_apart_values_is_not_marked_in_a_table_of_every_pair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 24 rows, three columns of 12 values each from 0 to 5790 (port speeds, memory sizes: numbers
    # spread wide), the last row a repeat of the one before: no column and no pair is a key, and
    # every pair is judged (12 x 12 = 144 possible pairs >= 24 rows). All possible pairs of two such
    # columns are 5791^2 = 33,535,681 <= MARK_TABLE (33,554,432) entries; ranked, 144. Marking by
    # offsets took 20 ms and 67 MB for these 24 rows (ranks: 0.06 ms, 0.1 MB). No table of the
    # batch may be far larger (10x) than its columns' own tables (5791 entries each) and the ranked one.
    sizes: list[int] = []
    zeros = numpy.zeros

    def counted(shape: int, dtype: Any = float) -> Any:
        sizes.append(int(shape))
        return zeros(shape, dtype=dtype)

    monkeypatch.setattr(numpy, "zeros", counted)  # column_keys calls numpy.zeros through the module
    values = [0, 5790, 400, 800, 1200, 1600, 2000, 2400, 2800, 3200, 3600, 4000]
    columns = [
        values * 2,
        values[3:] + values[:3] + values[5:] + values[:5],
        values[1:] + values[:1] + values[7:] + values[:7],
    ]
    for column in columns:
        column[-1] = column[-2]
    assert batch_key([ids(c) for c in columns]) is None
    assert max(sizes) <= 10 * (2 * 5791 + 144), sizes


# The plain rows of a block-keyed load: a repeated pair among them, however far apart and whatever
# order, keeps the key unclaimed and the repeat stored once.
TEXT = """
.input link(id: symbol, a: symbol, b: symbol, mbps: number)
.input attr(id: symbol, key: symbol)
.decl tagged(a: symbol, k: symbol)
tagged(A, K) :- link(L, A, _, _), attr(L, K).
"""
NODES = 4


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["x/l9", "x/l8", "y"]), st.sampled_from(["a", "b"])), min_size=1, max_size=7))
def test_plain_rows_claimed_only_without_a_repeated_pair(
    monkeypatch: pytest.MonkeyPatch, plain: list[tuple[str, str]]
) -> None:
    monkeypatch.setattr(symbol_ids, "DEFER_AT", 4)  # a node's four new names are one deferred batch
    duck = DuckDBBackend()
    duck.load(parse_program(TEXT, "t.dl"))
    try:
        _judge_plain_rows(duck, plain)
    finally:
        duck.close()


def _judge_plain_rows(duck: DuckDBBackend, plain: list[tuple[str, str]]) -> None:
    names = stamp_names(NODES, "n")
    duck.add_facts("link", StampedRows([], [link_block(names)]))
    # Per node (l0, a), (l0, b), (l1, a): 3 distinct rows, none naming a plain row's link.
    rows = StampedRows(list(plain), [StampBlock(((0, 0, 1), None), (None, ("a", "b", "a")), names)])
    arrays, _ = duck._encoded(duck._input_declaration("attr"), rows)
    proven = duck._pairs_proven(rows, arrays)
    claimed = proven is not None and proven(0, 1)
    # Claimed exactly when the plain rows repeat no (link, key) pair.
    assert claimed == (len(set(plain)) == len(plain))
    duck.add_facts("attr", rows)
    assert duck.count("attr") == NODES * 3 + len(set(plain))
