"""StampedRows: plain rows, then per block the rows its plan rows give each node, as tuples on demand.

Every expected row below is worked out by hand from the block's slots and constants.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from verifier.core.stamped_rows import Row, StampBlock, StampedRows, with_blocks

# Two nodes of one plan; slots 0-2 are each node's names. Plan row 0 joins slot 1 to slot 2,
# plan row 1 slot 2 to slot 0; the third column is the plan's constant for each row.
NAMES: list[Sequence[str]] = [["n0", "n0/a", "n0/b"], ["n1", "n1/a", "n1/b"]]
BLOCK = StampBlock(((1, 2), (2, 0), None), (None, None, ("x", "y")), NAMES)
ROWS = StampedRows([("p", "q", "x")], [BLOCK])


def test_rows_are_the_plain_ones_then_node_by_node() -> None:
    assert list(ROWS) == [
        ("p", "q", "x"),
        ("n0/a", "n0/b", "x"),  # node n0, plan row 0: slots 1, 2
        ("n0/b", "n0", "y"),  # node n0, plan row 1: slots 2, 0
        ("n1/a", "n1/b", "x"),
        ("n1/b", "n1", "y"),
    ]
    assert len(ROWS) == 5 and len(BLOCK) == 4 and BLOCK.width == 2
    assert ROWS[2] == ("n0/b", "n0", "y") and list(ROWS[3:]) == [("n1/a", "n1/b", "x"), ("n1/b", "n1", "y")]


def test_values_at_a_column_without_making_rows() -> None:
    assert ROWS.values_at(0) == {"p", "n0/a", "n0/b", "n1/a", "n1/b"}
    assert ROWS.values_at(2) == {"x", "y"}


def test_a_filter_on_constants_keeps_plan_rows_and_one_on_names_goes_row_by_row() -> None:
    on_constant = ROWS.filtered([(2, frozenset({"y"}))])
    assert [list(b.rows()) for b in on_constant.blocks] == [[("n0/b", "n0", "y"), ("n1/b", "n1", "y")]]
    assert on_constant.plain == []  # ("p", "q", "x") has no "y"
    on_names = ROWS.filtered([(1, frozenset({"n1", "q"}))])
    assert on_names.blocks == [] and on_names.plain == [("p", "q", "x"), ("n1/b", "n1", "y")]
    assert list(ROWS.filtered([(2, frozenset({"z"}))])) == []


def test_a_block_is_slots_or_constants_per_column_and_one_width() -> None:
    with pytest.raises(ValueError, match="either slots or constants"):
        StampBlock(((0,), (0,)), (None, ("x",)), [])
    with pytest.raises(ValueError, match="one entry per plan row"):
        StampBlock(((0, 1), None), (None, ("x",)), [])


def test_equal_when_plain_rows_and_blocks_are() -> None:
    assert StampedRows([("p", "q", "x")], [BLOCK]) == ROWS
    assert StampedRows([], [BLOCK]) != ROWS


def test_a_block_of_plan_rows_takes_its_first_columns_as_slots() -> None:
    # The plan rows of BLOCK written as rows: (1, 2, "x") and (2, 0, "y"), two columns of slots.
    assert StampBlock.of([(1, 2, "x"), (2, 0, "y")], 3, 2, NAMES) == BLOCK
    assert StampBlock.of([], 3, 2, NAMES).width == 0


def test_with_blocks_keeps_only_blocks_that_hold_rows() -> None:
    plain: list[Row] = [("p", "q", "x")]
    assert with_blocks(plain, [StampBlock.of([], 3, 2, NAMES)]) is plain
    assert with_blocks(plain, [BLOCK, StampBlock.of([(1, 2, "x")], 3, 2, [])]) == ROWS
