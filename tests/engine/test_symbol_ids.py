"""The DuckDB engine's symbol dictionary when a stamped block's new names are deferred: given the ids of
their positions without a dict entry each (`SymbolIds.defer`), and still found by text by every path
(queries with a bound name, rule constants, later loads, retract and load again), one id per text.

DEFER_AT is lowered so that a few nodes' names are a batch worth deferring.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence

import numpy
import pytest
from engine.stamp_helpers import link_block, memory_answers, stamp_names
from numpy.typing import NDArray

from verifier.core.errors import EngineError, TopologError
from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine import symbol_ids
from verifier.engine.ast import Row
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program
from verifier.engine.symbol_ids import SymbolIds

TEXT = """
.input link(id: symbol, a: symbol, b: symbol, mbps: number)
.input attr(id: symbol, key: symbol)
.decl via(b: symbol, n: number)
via(B, count(L)) :- link(L, _, B, _).
.decl keyed(a: symbol, k: symbol)
keyed(A, K) :- link(L, A, _, _), attr(L, K).
.decl from_n1_l0(a: symbol)
from_n1_l0(A) :- link("n1/l0", A, _, _).
"""
RELATIONS = ("link", "attr", "via", "keyed", "from_n1_l0")
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


def _names(nodes: int = NODES) -> list[Sequence[str]]:
    """Per node n its names by slot: links n<n>/l0 and n<n>/l1, GPUs n<n>/g0 and n<n>/g1."""
    return stamp_names(nodes, "n")


def _links(names: list[Sequence[str]]) -> StampedRows:
    """Per node two links: l0 from g0 to g1 at 100, l1 from g1 to g0 at 50."""
    return StampedRows([], [link_block(names)])


def _in_dict(engine: DuckDBBackend, symbol: str) -> bool:
    return dict.__contains__(engine._symbol_ids, symbol)


def _recorded_lookups(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The lists of names `SymbolIds.ids_into` is asked for from now on, in order."""
    looked_up: list[list[str]] = []
    original = SymbolIds.ids_into

    def ids_into(self: SymbolIds, symbols: list[str], out: NDArray[numpy.int64]) -> int:
        looked_up.append(symbols)
        return original(self, symbols, out)

    monkeypatch.setattr(SymbolIds, "ids_into", ids_into)
    return looked_up


def _memory_answers(loads: Sequence[tuple[str, Sequence[Row]]]) -> dict[str, list[Row]]:
    return memory_answers(TEXT, RELATIONS, loads)


def test_new_stamped_names_take_their_positions_without_a_dict_entry(duck: DuckDBBackend) -> None:
    duck.add_facts("link", _links(_names()))
    # All four slots were new at node 0: one batch read node by node, slot by slot, so node n's
    # l0, l1, g0, g1 have the ids 4n, 4n + 1, 4n + 2, 4n + 3.
    assert duck._symbol_text == [name for names in _names() for name in names]
    assert not any(_in_dict(duck, name) for names in _names() for name in names)
    assert duck._symbol_ids.find("n3/l1") == 13 and duck._symbol_ids.find("n3/g0") == 14
    assert duck._symbol_ids.find("n3/l9") is None and duck._symbol_ids.find("n3") is None
    duck.evaluate()
    # A bound link id (the REPL's `link("n3/l1", A, B, M)`): node 3's l1 runs from g1 to g0 at 50.
    assert duck.query("link", {0: "n3/l1"}) == [("n3/l1", "n3/g1", "n3/g0", 50)]
    # The rule constant "n1/l0" is node 1's first link, from n1/g0.
    assert duck.query("from_n1_l0") == [("n1/g0",)]
    # Each GPU ends exactly one link (g1 ends l0, g0 ends l1).
    assert duck.query("via") == sorted((f"n{n}/g{g}", 1) for n in range(NODES) for g in (0, 1))
    assert {r: duck.query(r) for r in RELATIONS} == _memory_answers([("link", list(_links(_names())))])


def test_deferred_names_read_again_in_bulk_keep_their_ids(duck: DuckDBBackend) -> None:
    duck.add_facts("link", _links(_names()))
    attrs: list[Row] = [("n3/l1", "fast"), ("n5/l0", "slow"), ("n5/l0", "fast")]
    duck.add_facts("attr", attrs)
    # Only "fast" and "slow" are new (ids 32 and 33); n3/l1 and n5/l0 are the links' ids 13 and 20,
    # and the slots they were read from are now in the dict (l0 and l1 of every node), the GPUs' not.
    assert duck._symbol_text[32:] == ["fast", "slow"]
    assert duck._symbol_ids.find("n3/l1") == 13 and duck._symbol_ids.find("n5/l0") == 20
    assert _in_dict(duck, "n0/l0") and _in_dict(duck, "n7/l1") and not _in_dict(duck, "n0/g0")
    duck.evaluate()
    # n3/l1 starts at n3/g1, n5/l0 at n5/g0.
    assert duck.query("keyed") == [("n3/g1", "fast"), ("n5/g0", "fast"), ("n5/g0", "slow")]
    assert {r: duck.query(r) for r in RELATIONS} == _memory_answers([("link", list(_links(_names()))), ("attr", attrs)])


def test_a_name_seen_twice_never_gets_two_ids(duck: DuckDBBackend) -> None:
    # Known before: node 2's g0 from a plain row. The batch holding it is not deferred (its hashes
    # meet a known one) and goes through the dict, where n2/g0 keeps id 0.
    duck.add_facts("attr", [("n2/g0", "gpu")])
    duck.add_facts("link", _links(_names()))
    assert duck._symbol_ids.find("n2/g0") == 0 and duck._symbol_text.count("n2/g0") == 1
    # Repeated across blocks: a second list of names whose first slot is every node's l0 again (known,
    # deferred) and whose second is new: only the new ones get ids, each once.
    again: list[Sequence[str]] = [[f"n{n}/l0", f"k{n}"] for n in range(NODES)]
    duck.add_facts("attr", StampedRows([], [StampBlock(((0,), (1,)), (None, None), again)]))
    # Repeated inside a block: two nodes with the same name in one slot (never deferred).
    twice: list[Sequence[str]] = [["x/l", "dup"], ["y/l", "dup"], ["z/l", "dup"], ["w/l", "dup"]]
    duck.add_facts("attr", StampedRows([], [StampBlock(((0,), (1,)), (None, None), twice)]))
    text = duck._symbol_text
    assert len(set(text)) == len(text)
    assert text.count("dup") == 1 and text.count("n0/l0") == 1
    assert all(duck._symbol_ids.find(s) == i for i, s in enumerate(text))
    duck.evaluate()
    # keyed: every node's l0 (from g0) carries k<n>; n2/g0's own attr names no link.
    assert duck.query("keyed") == sorted((f"n{n}/g0", f"k{n}") for n in range(NODES))
    assert duck.query("attr", {1: "dup"}) == [("w/l", "dup"), ("x/l", "dup"), ("y/l", "dup"), ("z/l", "dup")]


def test_retract_and_load_again_give_the_same_ids(duck: DuckDBBackend) -> None:
    duck.add_facts("link", _links(_names()))
    duck.evaluate()
    before = list(duck._symbol_text)
    duck.retract("link")
    # The same names in new objects: nothing shared with the first load but the texts.
    duck.add_facts("link", _links(copy.deepcopy(_names())))
    assert duck._symbol_text == before
    duck.evaluate()
    assert duck.query("link", {0: "n6/l0"}) == [("n6/l0", "n6/g0", "n6/g1", 100)]
    assert duck.query("from_n1_l0") == [("n1/g0",)]


def test_a_refused_load_forgets_its_deferred_names(duck: DuckDBBackend) -> None:
    duck.add_facts("attr", [("a", "b")])
    # The first block is deferred, then the second one's constant is refused (a number where a symbol
    # belongs): the whole load is refused and its ids are given again to the next load's names.
    bad = StampBlock(((0,), (2,), (3,), None), (None, None, None, ("fast",)), _names())
    with pytest.raises(TopologError):
        duck.add_facts("link", StampedRows([], [_links(_names()).blocks[0], bad]))
    assert duck._symbol_text == ["a", "b"]
    assert duck._symbol_ids.find("n0/l0") is None and not duck._symbol_ids._deferred
    duck.add_facts("link", _links(_names()))
    assert duck._symbol_text == ["a", "b", *(name for names in _names() for name in names)]
    assert duck._symbol_ids.find("n0/l0") == 2
    duck.evaluate()
    assert duck.query("from_n1_l0") == [("n1/g0",)]


def test_a_lone_surrogate_in_a_deferred_batch_is_refused_with_nothing_kept(duck: DuckDBBackend) -> None:
    names = _names()
    names[5] = ["n5/l0", "n5/l1", "n5/g\ud800", "n5/g1"]
    with pytest.raises(EngineError, match="lone surrogate"):
        duck.add_facts("link", _links(names))
    assert duck._symbol_text == [] and not duck._symbol_ids._deferred
    duck.add_facts("link", _links(_names()))
    duck.evaluate()
    assert duck.query("link", {0: "n5/l1"}) == [("n5/l1", "n5/g1", "n5/g0", 50)]


def test_blocks_over_the_same_nodes_take_the_ids_already_looked_up(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _names()
    duck.add_facts("link", _links(names))
    # Another relation about nodes 1..7 with a list of its own holding the very same per-node
    # sequences: their ids are taken from the links' lookups, no name is looked up again.
    looked_up = _recorded_lookups(monkeypatch)
    subset = names[1:]
    duck.add_facts("attr", StampedRows([], [StampBlock(((0, 1), None), (None, ("even", "odd")), subset)]))
    assert looked_up == [["even", "odd"]]  # the plan's constants only
    duck.evaluate()
    # keyed: node n's l0 starts at g0 ("even"), l1 at g1 ("odd"), for n = 1..7.
    assert duck.query("keyed") == sorted(
        [(f"n{n}/g0", "even") for n in range(1, NODES)] + [(f"n{n}/g1", "odd") for n in range(1, NODES)]
    )


def test_symbol_ids_defer_refuses_a_batch_with_a_known_or_repeated_name() -> None:
    ids = SymbolIds()
    out = numpy.empty(2, dtype=numpy.int64)
    ids.ids_into(["a", "b"], out)
    assert ids.defer(["x", "y", "z", "a"], 1) is None  # "a" known
    assert ids.defer(["x", "y", "z", "x"], 1) is None  # "x" twice
    assert ids.text == ["a", "b"]
    assert ids.defer(["x", "y", "z", "w"], 2) == 2
    assert ids.defer(["p", "q", "r", "z"], 1) is None  # "z" deferred already
    # intern (a rule or query constant) and find agree on the deferred id; a new one comes after.
    assert ids.intern("w") == 5 and ids.find("w") == 5 and ids.intern("new") == 6
    ids.forget_from(4)
    assert ids.text == ["a", "b", "x", "y"] and ids.find("z") is None and ids.find("new") is None
    assert ids.find("y") == 3 and ids.intern("z") == 4


def test_lookups_past_the_filter_threshold_find_the_same_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    # After FILTER_AFTER searches the deferred batches' hashes are kept as a bit filter too: a name no
    # batch holds is answered by its bit (most of the time), a deferred one still found by search.
    monkeypatch.setattr(symbol_ids, "FILTER_AFTER", 2)
    ids = SymbolIds()
    names = [f"n{n}/l{j}" for n in range(50) for j in range(3)]
    assert ids.defer(names, 3) == 0
    assert [ids.find(f"other{i}") for i in range(5)] == [None] * 5
    assert ids._bits  # made on the third search
    assert all(ids.find(name) == i for i, name in enumerate(names))
    assert ids.intern("other0") == 150 and ids.intern("n49/l2") == 149
    # A second batch makes the filter again when searches mount: its names are found through it.
    more = [f"m{n}" for n in range(10)]
    assert ids.defer(more, 1) == 151 and not ids._bits
    assert [ids.find(f"none{i}") for i in range(3)] == [None] * 3 and ids._bits
    assert [ids.find(name) for name in more] == list(range(151, 161))


def test_a_block_over_mostly_the_same_nodes_looks_up_only_the_others(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = _names()
    duck.add_facts("link", _links(names))
    looked_up = _recorded_lookups(monkeypatch)
    # Nodes 0..6 as the links had them, and a node z the links never named: only z's two names at
    # the block's slots (its links l0 and l1) are looked up, then the plan's constants.
    other: list[Sequence[str]] = [*names[:-1], ["z/l0", "z/l1", "z/g0", "z/g1"]]
    duck.add_facts("attr", StampedRows([], [StampBlock(((0, 1), None), (None, ("even", "odd")), other)]))
    assert looked_up == [["z/l0"], ["z/l1"], ["even", "odd"]]
    # z/l0 and z/l1 are new: ids 32 and 33 after the 32 link names, then "even" and "odd".
    assert duck._symbol_text[32:] == ["z/l0", "z/l1", "even", "odd"]
    duck.evaluate()
    # keyed: node n's l0 starts at g0 ("even"), l1 at g1 ("odd"), for n = 0..6; z's links have no row.
    assert duck.query("keyed") == sorted(
        [(f"n{n}/g0", "even") for n in range(NODES - 1)] + [(f"n{n}/g1", "odd") for n in range(NODES - 1)]
    )
    assert duck.query("attr", {0: "z/l1"}) == [("z/l1", "odd")]


def test_a_block_of_known_new_and_looked_up_slots_in_plan_order_gives_its_rows(duck: DuckDBBackend) -> None:
    # The GPUs (slots 2, 3) are known first, as a plain attr row each; the links (slots 0, 1) are
    # then new at node 0 and deferred; a second block over the same list reads its GPU slots in
    # the reverse order (3 before 2) and its link slots from the ids kept for the list.
    names = _names()
    duck.add_facts("attr", [(f"n{n}/g{g}", "gpu") for n in range(NODES) for g in (0, 1)])
    duck.add_facts("link", _links(names))
    duck.add_facts("attr", StampedRows([], [StampBlock(((1, 0), None), (None, ("b", "a")), names)]))
    # The 16 GPU names and "gpu" take ids 0..16; the links' l0, l1 of node n are deferred at 17 + 2n,
    # 18 + 2n (two new slots per node); "b" and "a" follow at 33 and 34.
    assert duck._symbol_ids.find("n0/l0") == 17 and duck._symbol_ids.find("n7/l1") == 32
    assert duck._symbol_text[33:] == ["b", "a"]
    duck.evaluate()
    # Node n's l0 runs g0 -> g1 at 100, l1 g1 -> g0 at 50 (_links), whatever ids the slots got.
    assert duck.query("link", {0: "n6/l0"}) == [("n6/l0", "n6/g0", "n6/g1", 100)]
    assert duck.query("link", {0: "n6/l1"}) == [("n6/l1", "n6/g1", "n6/g0", 50)]
    # keyed joins a link's start with its attrs: l1 (from g1) has "b", l0 (from g0) has "a".
    assert duck.query("keyed") == sorted(
        [(f"n{n}/g0", "a") for n in range(NODES)] + [(f"n{n}/g1", "b") for n in range(NODES)]
    )
    rows: list[tuple[str, list[Row]]] = [("attr", [(f"n{n}/g{g}", "gpu") for n in range(NODES) for g in (0, 1)])]
    rows += [("link", list(_links(names)))]
    rows += [("attr", [(f"n{n}/l{slot}", key) for n in range(NODES) for slot, key in ((1, "b"), (0, "a"))])]
    assert {r: duck.query(r) for r in RELATIONS} == _memory_answers(rows)


def test_a_small_list_of_the_same_nodes_looks_its_names_up_itself(duck: DuckDBBackend) -> None:
    # Two of the links' eight nodes, the same sequences: fewer than half of the links' list, so
    # the ids kept for that list are not searched (_from_same_nodes); the names are looked up and
    # find the links' ids all the same (no name gets a second id).
    names = _names()
    duck.add_facts("link", _links(names))
    duck.add_facts("attr", StampedRows([], [StampBlock(((0,), None), (None, ("x",)), [names[2], names[5]])]))
    assert duck._symbol_ids.find("n2/l0") == 8 and duck._symbol_ids.find("n5/l0") == 20
    assert duck._symbol_text[32:] == ["x"]
    duck.evaluate()
    # n2/l0 starts at n2/g0, n5/l0 at n5/g0.
    assert duck.query("keyed") == [("n2/g0", "x"), ("n5/g0", "x")]


def test_symbol_ids_defer_finds_a_known_name_in_a_smaller_or_larger_batch() -> None:
    # defer searches the smaller of (its batch, each batch known before) in the larger: a known
    # name must refuse the batch either way round. DEFER_AT is 4 here (the autouse fixture).
    ids = SymbolIds()
    assert ids.defer([f"big{i}" for i in range(12)], 1) == 0  # 12 names, ids 0..11
    # A 4-name batch (smaller than the 12) holding big7, and a 20-name batch (larger) holding big3.
    assert ids.defer(["s0", "s1", "big7", "s2"], 1) is None
    assert ids.defer([f"l{i}" for i in range(19)] + ["big3"], 1) is None
    assert ids.find("big7") == 7 and ids.find("big3") == 3 and ids.find("s0") is None
    # Without a known name both are taken, after the 12: ids 12..15, then 16..35.
    assert ids.defer(["s0", "s1", "s3", "s2"], 1) == 12
    assert ids.defer([f"l{i}" for i in range(20)], 1) == 16
    assert ids.find("s2") == 15 and ids.find("l19") == 35
