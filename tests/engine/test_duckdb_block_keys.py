"""The key of a load of StampedRows told from its blocks' plans (`DuckDBBackend._keyed_by_blocks`)
instead of marking every row: claimed only where no pair of the two columns can come twice, so that
DuckDB loads the rows without a DISTINCT; wherever a pair may repeat (a plan row repeated, two
blocks over one list of names, a plain row naming a block's name), the rows are marked as before and
a repeated row is stored once.

DEFER_AT is lowered so that a few nodes' link ids are a deferred batch (`SymbolIds.defer`), whose
ids are all distinct and no other name's: what the claim rests on.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from engine.stamp_helpers import link_block, stamp_names

from verifier.core.errors import TopologError
from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine import symbol_ids
from verifier.engine.ast import Row
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program

TEXT = """
.input link(id: symbol, a: symbol, b: symbol, mbps: number)
.input attr(id: symbol, key: symbol)
.decl tagged(a: symbol, k: symbol)
tagged(A, K) :- link(L, A, _, _), attr(L, K).
"""
NODES = 8


@pytest.fixture(autouse=True)
def _small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symbol_ids, "DEFER_AT", 4)


@pytest.fixture
def duck() -> Iterator[DuckDBBackend]:
    engine = DuckDBBackend()
    engine.load(parse_program(TEXT, "t.dl"))
    yield engine
    engine.close()


def _names() -> list[Sequence[str]]:
    """Per node n its names by slot: links n<n>/l0 and n<n>/l1, GPUs n<n>/g0 and n<n>/g1."""
    return stamp_names(NODES, "n")


def _links(names: list[Sequence[str]]) -> StampedRows:
    """Per node two links: l0 from g0 to g1 at 100, l1 from g1 to g0 at 50 (all four slots new at
    node 0: one deferred batch, ids 4n .. 4n + 3 for node n's l0, l1, g0, g1)."""
    return StampedRows([], [link_block(names)])


def _attrs(names: list[Sequence[str]], slots: tuple[int, ...], keys: tuple[str, ...]) -> StampBlock:
    return StampBlock((slots, None), (None, keys), names)


def _claimed(duck: DuckDBBackend, rows: StampedRows) -> bool:
    """Whether attr's rows are told keyed by (id, key) from their blocks (encoded again: same ids)."""
    arrays, _ = duck._encoded(duck._input_declaration("attr"), rows)
    proven = duck._pairs_proven(rows, arrays)
    return proven is not None and proven(0, 1)


def test_distinct_plan_rows_over_one_batch_key_the_rows_without_marking(duck: DuckDBBackend) -> None:
    names = _names()
    duck.add_facts("link", _links(names))
    # Per node: (l0, a), (l0, b), (l1, a): no plan row repeats its slot and key, the link ids are the
    # deferred batch's; the plain row's link x/l9 is no node's.
    rows = StampedRows([("x/l9", "a")], [_attrs(names, (0, 0, 1), ("a", "b", "a"))])
    duck.add_facts("attr", rows)
    assert _claimed(duck, rows)
    # No column alone is a key (l0 twice per node, "a" everywhere): the pair is, found without marking.
    assert duck._keys["attr"] == [(0, 1)]
    # 8 nodes x 3 rows + the plain one, none repeated.
    assert duck.count("attr") == 25
    duck.evaluate()
    # n2/l0 starts at n2/g0 and has a and b; n2/l1 starts at n2/g1 and has a.
    assert [r for r in duck.query("tagged") if str(r[0]).startswith("n2/")] == [
        ("n2/g0", "a"),
        ("n2/g0", "b"),
        ("n2/g1", "a"),
    ]


def test_a_repeated_plan_row_is_stored_once(duck: DuckDBBackend) -> None:
    names = _names()
    duck.add_facts("link", _links(names))
    # (l0, a) twice per node: the same row twice for every node.
    rows = StampedRows([], [_attrs(names, (0, 0, 1), ("a", "a", "b"))])
    duck.add_facts("attr", rows)
    assert not _claimed(duck, rows)
    # Per node (l0, a) and (l1, b): 16 rows.
    assert duck.count("attr") == 16


def test_two_blocks_over_one_list_of_names_are_marked(duck: DuckDBBackend) -> None:
    names = _names()
    duck.add_facts("link", _links(names))
    # Two blocks of one plan list (one batch): their rows may be the same, and here each node's
    # (l0, a) is in both.
    rows = StampedRows([], [_attrs(names, (0,), ("a",)), _attrs(names, (0, 1), ("a", "b"))])
    duck.add_facts("attr", rows)
    assert not _claimed(duck, rows)
    # Per node (l0, a) once and (l1, b): 16 rows.
    assert duck.count("attr") == 16


def test_a_plain_row_naming_a_block_name_is_marked(duck: DuckDBBackend) -> None:
    names = _names()
    duck.add_facts("link", _links(names))
    # The plain row (n3/l0, a) is also node 3's first block row.
    rows = StampedRows([("n3/l0", "a")], [_attrs(names, (0, 1), ("a", "b"))])
    duck.add_facts("attr", rows)
    assert not _claimed(duck, rows)
    # 8 nodes x 2 rows; the plain one is one of them.
    assert duck.count("attr") == 16
    # With another key the plain row is a new one: its id is still in the batch, so not claimed;
    # the rows are marked, all 17 distinct, and keyed by (id, key).
    duck.retract("attr")
    other = StampedRows([("n3/l0", "c")], [_attrs(names, (0, 1), ("a", "b"))])
    duck.add_facts("attr", other)
    assert not _claimed(duck, other)
    assert duck._keys["attr"] == [(0, 1)]
    assert duck.count("attr") == 17


def test_retract_and_load_again_claim_the_same_key(duck: DuckDBBackend) -> None:
    names = _names()
    duck.add_facts("link", _links(names))
    rows = StampedRows([], [_attrs(names, (0, 0, 1), ("a", "b", "a"))])
    duck.add_facts("attr", rows)
    duck.retract("attr")
    assert duck.count("attr") == 0
    duck.add_facts("attr", rows)
    # Loaded again first: keyed by (id, key) as before (l0 has two keys), each of the 24 rows once.
    assert duck._keys["attr"] == [(0, 1)]
    assert duck.count("attr") == 24
    assert _claimed(duck, rows)
    # A second load on top (not the first): set semantics across calls, nothing added twice.
    duck.add_facts("attr", rows)
    assert duck.count("attr") == 24


def test_a_refused_load_leaves_no_batch_to_claim_from(duck: DuckDBBackend) -> None:
    names = _names()
    # The links' block is deferred, then the second block's constant is refused (a symbol where a
    # number belongs): every id of the load is forgotten, with the slots' batches.
    bad = StampBlock(((0,), (2,), (3,), None), (None, None, None, ("fast",)), names)
    with pytest.raises(TopologError):
        duck.add_facts("link", StampedRows([], [_links(names).blocks[0], bad]))
    assert not duck._slot_ids
    # attr's link ids are new again: deferred by attr's own load (ids 0 .. 15, node n's l0 and l1 at
    # 2n and 2n + 1), the batch the claim rests on now.
    rows = StampedRows([], [_attrs(names, (0, 0, 1), ("a", "b", "a"))])
    duck.add_facts("attr", rows)
    assert duck._symbol_ids.find("n3/l1") == 7
    assert _claimed(duck, rows)
    assert duck._keys["attr"] == [(0, 1)]
    assert duck.count("attr") == 24
    plain: list[Row] = [(f"n{n}/l{k}", key) for n in range(NODES) for k, key in ((0, "a"), (0, "b"), (1, "a"))]
    assert duck.query("attr") == sorted(plain)


def test_plain_rows_repeating_a_pair_among_themselves_are_marked(duck: DuckDBBackend) -> None:
    names = _names()
    duck.add_facts("link", _links(names))
    # Three plain rows over links no node has: (x/l9, a) twice, (x/l8, a) once. The blocks' rows
    # repeat nothing (as in the first test), but the plain rows repeat (x/l9, a): not claimed.
    rows = StampedRows([("x/l9", "a"), ("x/l8", "a"), ("x/l9", "a")], [_attrs(names, (0, 0, 1), ("a", "b", "a"))])
    duck.add_facts("attr", rows)
    assert not _claimed(duck, rows)
    # 8 nodes x 3 block rows + 2 distinct plain rows = 26.
    assert duck.count("attr") == 26
    # One link with two keys and two links with one key each repeat no pair (though x/l9 and "a"
    # each come twice): claimed, and all 24 + 3 = 27 rows are kept.
    duck.retract("attr")
    other = StampedRows([("x/l9", "a"), ("x/l9", "b"), ("x/l8", "a")], [_attrs(names, (0, 0, 1), ("a", "b", "a"))])
    duck.add_facts("attr", other)
    assert _claimed(duck, other)
    assert duck.count("attr") == 27
