"""Adversarial review of the ninth round's DuckDB load (issue 46, LD): the key told from StampedRows'
plans (`DuckDBBackend._keyed_by_blocks`, which lets DuckDB load without a DISTINCT), `SymbolIds.defer`
searching the smaller set of hashes in the larger, `check_utf8` by `str.isascii`, `batch_key`'s
tables from 0 (FROM_ZERO) and `_from_same_nodes` passing over small lists.

What held is written down here as tests: each claims what a by-hand reading of its input gives
(the stored rows are the SET of rows given, a count or sum rule counts each row once, a key found
holds no value twice), or what the memory engine answers on the same rows read one by one.

DEFER_AT is lowered so that a few nodes' names make a deferred batch, what the key's proof rests on.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from itertools import combinations

import numpy
import pytest
from cli_helpers import run_cli
from engine.stamp_helpers import link_block, memory_answers, stamp_names
from numpy.typing import NDArray

from verifier.core.errors import EngineError
from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine import column_keys, symbol_ids
from verifier.engine.ast import Row
from verifier.engine.column_keys import batch_key
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program
from verifier.engine.symbol_ids import SymbolIds, _Hashed, check_utf8

TEXT = """
.input link(id: symbol, a: symbol, b: symbol, mbps: number)
.input attr(id: symbol, key: symbol)
.decl per_key(k: symbol, n: number)
per_key(K, count(L)) :- attr(L, K).
.decl into(b: symbol, s: number)
into(B, sum(M)) :- link(_, _, B, M).
.decl tagged(a: symbol, k: symbol)
tagged(A, K) :- link(L, A, _, _), attr(L, K).
"""
RELATIONS = ("link", "attr", "per_key", "into", "tagged")
KEYS = ("a", "b", "c")


@pytest.fixture(autouse=True)
def _small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symbol_ids, "DEFER_AT", 4)


@pytest.fixture
def duck() -> Iterator[DuckDBBackend]:
    engine = DuckDBBackend()
    engine.load(parse_program(TEXT, "t.dl"))
    yield engine
    engine.close()


def _names(nodes: int, prefix: str = "n") -> list[Sequence[str]]:
    """Per node n: links <prefix>n/l0, /l1 (slots 0, 1), GPUs /g0, /g1 (slots 2, 3)."""
    return stamp_names(nodes, prefix)


def _attrs(names: list[Sequence[str]], slots: tuple[int, ...], keys: tuple[str, ...]) -> StampBlock:
    return StampBlock((slots, None), (None, keys), names)


def _memory(given: dict[str, set[Row]]) -> dict[str, list[Row]]:
    """The memory engine's answers for the rows `given`, read one by one."""
    return memory_answers(TEXT, RELATIONS, [(r, sorted(rows, key=repr)) for r, rows in given.items()])


def _claims(duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What `_keyed_by_blocks` answers from now on, in order."""
    said: list[bool] = []
    original = DuckDBBackend._keyed_by_blocks

    def keyed(self: DuckDBBackend, *args: object) -> bool:
        got: bool = original(self, *args)  # type: ignore[arg-type]
        said.append(got)
        return got

    monkeypatch.setattr(DuckDBBackend, "_keyed_by_blocks", keyed)
    return said


# -- the key told from the plans: every way a row could come twice --------------------------------


def test_two_plan_rows_giving_one_row_through_two_slots_holding_one_name_are_stored_once(
    duck: DuckDBBackend,
) -> None:
    # A node whose two slots hold the same name (an override that names a link twice): the batch of
    # the attrs' slot names repeats "n1/l0", so defer refuses it and nothing is claimed. Node 1's
    # rows (n1/l0, a) from slot 0 and (n1/l0, a) from slot 1 are one row: 4 nodes x 2 rows - 1 = 7.
    names = _names(4)
    names[1] = ["n1/l0", "n1/l0", "n1/g0", "n1/g1"]
    duck.add_facts("attr", StampedRows([], [_attrs(names, (0, 1), ("a", "a"))]))
    assert duck.count("attr") == 7
    duck.evaluate()
    # per_key: "a" on the 7 distinct link ids.
    assert duck.query("per_key") == [("a", 7)]


def test_a_list_holding_one_node_twice_is_stored_once(duck: DuckDBBackend) -> None:
    # The same sequence object twice in one list (one node stamped twice): its names repeat in the
    # batch, defer refuses it, and its rows (n0/l0, a), (n0/l1, b) come once: 3 distinct nodes x 2.
    names = _names(3)
    names.append(names[0])
    duck.add_facts("attr", StampedRows([], [_attrs(names, (0, 1), ("a", "b"))]))
    assert duck.count("attr") == 6
    duck.evaluate()
    assert duck.query("per_key") == [("a", 3), ("b", 3)]


def test_two_lists_of_the_same_names_as_other_objects_are_stored_once(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two templates stamped over the same node list: two lists whose sequences are other objects
    # holding the same texts. The first list's link ids are a deferred batch; the second's are then
    # known, looked up (no batch of their own), so the two blocks cannot be claimed apart, and each
    # node's (l0, a) is in both: 4 nodes x {(l0, a), (l1, a), (l0, b)} = 12 rows.
    said = _claims(duck, monkeypatch)
    first = _names(4)
    second: list[Sequence[str]] = [list(seq) for seq in first]
    rows = StampedRows(
        [], [_attrs(first, (0, 1), ("a", "a")), _attrs(second, (0,), ("a",)), _attrs(second, (0,), ("b",))]
    )
    duck.add_facts("attr", rows)
    assert said and not any(said)
    assert duck.count("attr") == 12
    duck.evaluate()
    assert duck.query("per_key") == [("a", 8), ("b", 4)]


def test_a_link_loaded_again_as_a_plain_row_and_a_block_row_counts_once(duck: DuckDBBackend) -> None:
    # An override adding a link equal to a stamped one: the plain row (n2/l0, n2/g0, n2/g1, 100) is
    # node 2's first block row. Plain rows are encoded first, so n2/l0 is known and the block's
    # batch is refused (a known name): 4 nodes x 2 links = 8 rows, the plain one among them.
    names = _names(4)
    duck.add_facts("link", StampedRows([("n2/l0", "n2/g0", "n2/g1", 100)], [link_block(names)]))
    assert duck.count("link") == 8
    duck.evaluate()
    # into: each g1 is reached by its node's l0 at 100, each g0 by l1 at 50, each once.
    assert duck.query("into") == sorted([(f"n{n}/g1", 100) for n in range(4)] + [(f"n{n}/g0", 50) for n in range(4)])


def test_a_block_name_met_again_as_a_plain_row_of_a_later_relation_is_not_claimed(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The links defer node n's l0, l1, g0, g1 (ids 4n .. 4n + 3). attr then has a plain row
    # (n1/l1, a) in the middle of known names (first and last in the dict: found by text, its
    # deferred id 5, inside the batch): no claim, and node 1's block row (n1/l1, a) is that row.
    names = _names(4)
    duck.add_facts("link", StampedRows([], [link_block(names)]))
    duck.add_facts("attr", [("x", "a")])
    said = _claims(duck, monkeypatch)
    plain: list[Row] = [("x", "a"), ("n1/l1", "a"), ("x", "b")]
    duck.add_facts("attr", [("y", "c")])  # attr loaded once already: this one is a second load
    duck.retract("attr")
    duck.add_facts("attr", StampedRows(plain, [_attrs(names, (0, 1), ("b", "a"))]))
    assert said == [False, False]
    # 3 plain + 4 nodes x 2 - 1 repeated = 10.
    assert duck.count("attr") == 10
    duck.evaluate()
    assert duck.query("per_key") == [("a", 5), ("b", 5)]


def test_attrs_of_two_plans_each_over_its_own_batch_are_claimed_and_counted_once(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two node types: n* (4 nodes) and m* (3 nodes), each list's link ids its own deferred batch.
    # attr has one block per list and a plain row of a name no node has: claimed, and rightly so:
    # 4 x 3 + 3 x 1 + 1 = 16 rows, all different.
    n, m = _names(4), _names(3, "m")
    duck.add_facts("link", StampedRows([], [link_block(n), link_block(m, (7, 9))]))
    said = _claims(duck, monkeypatch)
    duck.add_facts("attr", StampedRows([("z", "a")], [_attrs(n, (0, 0, 1), ("a", "b", "a")), _attrs(m, (1,), ("c",))]))
    assert True in said
    assert duck._keys["attr"] == [(0, 1)]
    assert duck.count("attr") == 16
    duck.evaluate()
    # per_key: a on n*/l0, n*/l1, z (9); b on n*/l0 (4); c on m*/l1 (3).
    assert duck.query("per_key") == [("a", 9), ("b", 4), ("c", 3)]
    # into: n-links at 100 / 50, m-links at 7 / 9, each end once per link.
    assert ("m2/g1", 7) in duck.query("into") and ("n3/g0", 50) in duck.query("into")


def test_the_same_rows_loaded_again_the_repl_way_are_not_added_twice(duck: DuckDBBackend) -> None:
    # A second add_facts of a relation (REPL :add, a service revision's extra facts): set semantics
    # across calls. The first load was claimed (keyed by (id, key)); the second finds every row there.
    names = _names(4)
    duck.add_facts("link", StampedRows([], [link_block(names)]))
    rows = StampedRows([], [_attrs(names, (0, 1), ("a", "b"))])
    duck.add_facts("attr", rows)
    duck.evaluate()
    duck.add_facts("attr", rows)
    duck.add_facts("attr", StampedRows([("n0/l0", "a"), ("new", "c")], []))
    assert duck.count("attr") == 9  # 4 x 2 + "new"
    duck.evaluate()
    assert duck.query("per_key") == [("a", 4), ("b", 4), ("c", 1)]


def test_a_list_grown_after_its_batch_is_looked_up_again_and_not_claimed(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The names list gains a node after the links' load (same object, one more entry): the kept ids
    # are one node short, so the slots are looked up again (no longer one batch's), and the appended
    # node repeats node 0's names: rows (n0/l0, a) and (n0/l1, b) come twice in the block.
    names = _names(4)
    duck.add_facts("link", StampedRows([], [link_block(names)]))
    names.append(list(names[0]))
    said = _claims(duck, monkeypatch)
    duck.add_facts("attr", StampedRows([], [_attrs(names, (0, 1), ("a", "b"))]))
    assert said and not any(said)
    assert duck.count("attr") == 8
    duck.evaluate()
    assert duck.query("per_key") == [("a", 4), ("b", 4)]


def test_a_template_stamped_once_is_its_own_batch_and_claimed_rightly(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One node: its four names are the batch (DEFER_AT 4). attr's plan (l0, a), (l0, b), (l1, a)
    # repeats no (slot, key): claimed, 3 rows; then a second one-node list of other names, its own
    # batch: 3 + 2 rows, claimed again, per_key counting each link once per key.
    said = _claims(duck, monkeypatch)
    one, other = _names(1), _names(1, "m")
    duck.add_facts("link", StampedRows([], [link_block(one), link_block(other)]))
    duck.add_facts(
        "attr", StampedRows([], [_attrs(one, (0, 0, 1), ("a", "b", "a")), _attrs(other, (0, 1), ("a", "a"))])
    )
    assert said and said[-1]
    assert duck.count("attr") == 5
    duck.evaluate()
    # a: n0/l0, n0/l1, m0/l0, m0/l1; b: n0/l0.
    assert duck.query("per_key") == [("a", 4), ("b", 1)]


def test_a_ctrl_c_while_the_key_is_told_leaves_a_load_that_can_be_made_again(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C inside the proof (after the rows were encoded, before DuckDB saw them): nothing is
    # stored and attr is not loaded; the same load made again is claimed and stores its rows once.
    names = _names(4)
    duck.add_facts("link", StampedRows([], [link_block(names)]))
    original = DuckDBBackend._keyed_by_blocks

    def interrupted(self: DuckDBBackend, *args: object) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(DuckDBBackend, "_keyed_by_blocks", interrupted)
    rows = StampedRows([], [_attrs(names, (0, 0, 1), ("a", "b", "b"))])
    with pytest.raises(KeyboardInterrupt):
        duck.add_facts("attr", rows)
    assert duck.count("attr") == 0
    monkeypatch.setattr(DuckDBBackend, "_keyed_by_blocks", original)
    said = _claims(duck, monkeypatch)
    duck.add_facts("attr", rows)
    assert said and said[-1]
    # 4 nodes x (l0, a), (l0, b), (l1, b).
    assert duck.count("attr") == 12
    duck.evaluate()
    assert duck.query("per_key") == [("a", 4), ("b", 8)]


def test_a_block_of_constants_only_gives_each_row_once(duck: DuckDBBackend) -> None:
    # Every column constant: each of the 4 nodes gives the same rows (x, a) and (x, b), and the plain
    # row (x, a) is one of them: 2 rows. No column holds slots, so nothing is claimed from the plan.
    names = _names(4)
    duck.add_facts("attr", StampedRows([("x", "a")], [StampBlock((None, None), (("x", "x"), ("a", "b")), names)]))
    assert duck.count("attr") == 2 and "attr" not in duck._keys
    # A link plan row twice (slot 0, then the same constants): one link per node, 4 rows.
    twice = StampBlock(((0, 0), None, None, None), (None, ("p", "p"), ("q", "q"), (1, 1)), names)
    duck.add_facts("link", StampedRows([], [twice]))
    assert duck.query("link") == [(f"n{n}/l0", "p", "q", 1) for n in range(4)]


def _random_loads(rng: random.Random, tag: str) -> list[tuple[str, StampedRows | None]]:
    """A few loads of link and attr over lists of fresh (named after `tag`), repeated and shared names
    (None: retract)."""
    lists: list[list[Sequence[str]]] = []
    loads: list[tuple[str, StampedRows | None]] = []
    for step in range(rng.randint(2, 6)):
        relation = rng.choice(("link", "attr", "attr"))
        if loads and rng.random() < 0.1:
            loads.append((relation, None))
            continue
        blocks = []
        for _ in range(rng.randint(1, 2)):
            if lists and rng.random() < 0.4:
                names = rng.choice(lists)
            else:
                nodes, how = rng.randint(2, 6), rng.random()
                names = _names(nodes, f"{tag}.{step}.{len(lists)}.")
                if how < 0.08:  # a node stamped twice
                    names.append(names[0])
                elif how < 0.15:  # two slots of a node holding one name
                    names[0] = ["d/l", "d/l", "d/g", "d/g0"]
                elif how < 0.3 and lists:  # the same texts as an earlier list, other objects
                    names = [list(seq) for seq in rng.choice(lists)]
                elif how < 0.4 and lists:  # a subset of an earlier list, the same objects
                    names = rng.choice(lists)[: rng.randint(1, 3)]
                lists.append(names)
            if relation == "link":
                blocks.append(link_block(names, (rng.choice((1, 2)), rng.choice((1, 2, 3)))))
            else:
                width = rng.randint(2, 3)
                blocks.append(
                    _attrs(
                        names,
                        tuple(rng.choice((0, 1)) for _ in range(width)),
                        tuple(rng.choice(KEYS) for _ in range(width)),
                    )
                )
        known = [name for names in lists for seq in names for name in seq[:2]]
        plain: list[Row] = []
        for _ in range(rng.randint(0, 3)):
            link = rng.choice(known) if known and rng.random() < 0.25 else f"p/l{rng.randint(0, 2)}"
            plain.append(
                (link, "p/g", rng.choice([*known, "p/g2"]), 1) if relation == "link" else (link, rng.choice(KEYS))
            )
        loads.append((relation, StampedRows(plain, blocks)))
    return loads


def test_random_stamped_loads_store_the_set_of_rows_and_count_each_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # 80 seeded runs of loads mixing every case above (repeated names, shared lists, lists of the
    # same texts, subsets, plain rows naming block names, retracts, loads on top): DuckDB's tables
    # hold exactly the set of rows given, any key it keeps holds no value twice, and every derived
    # relation (count, sum, join) is the memory engine's on the same rows read one by one.
    claimed = 0
    original = DuckDBBackend._keyed_by_blocks

    def keyed(self: DuckDBBackend, *args: object) -> bool:
        nonlocal claimed
        got: bool = original(self, *args)  # type: ignore[arg-type]
        claimed += got
        return got

    monkeypatch.setattr(DuckDBBackend, "_keyed_by_blocks", keyed)
    # One engine for all runs (as a REPL or the service keeps one): each run retracts both inputs
    # first, so every load of a run is a first load again, and names new to the run are its own.
    duck = DuckDBBackend()
    try:
        duck.load(parse_program(TEXT, "t.dl"))
        for seed in range(80):
            given: dict[str, set[Row]] = {"link": set(), "attr": set()}
            for relation, rows in [("link", None), ("attr", None), *_random_loads(random.Random(seed), f"r{seed}")]:
                if rows is None:
                    duck.retract(relation)
                    given[relation] = set()
                    continue
                duck.add_facts(relation, rows)
                given[relation] |= set(rows)
                assert duck.count(relation) == len(given[relation]), seed
                for key in duck._keys.get(relation, []):
                    assert len({tuple(r[i] for i in key) for r in given[relation]}) == len(given[relation]), seed
            duck.evaluate()
            assert {r: duck.query(r) for r in RELATIONS} == _memory(given), seed
    finally:
        duck.close()
    # The claim was made (and so put to the test) in many of them.
    assert claimed >= 10


# -- SymbolIds.defer: hash collisions -----------------------------------------------------------


def _colliding(monkeypatch: pytest.MonkeyPatch, same: Callable[[str], bool]) -> None:
    """Every string `same` picks hashes to 7 in symbol_ids (defer, find, the known hashes)."""

    def fake(value: object) -> int:
        return 7 if isinstance(value, str) and same(value) else hash(value)

    monkeypatch.setattr(symbol_ids, "hash", fake, raising=False)


def test_two_names_of_one_batch_with_one_hash_go_through_the_dict(monkeypatch: pytest.MonkeyPatch) -> None:
    # "q1" and "q3" hash alike but differ: the batch is refused (a repeated hash may be a repeated
    # name), so each name gets the next id through the dict, four distinct ids in order.
    _colliding(monkeypatch, lambda s: s in ("q1", "q3"))
    ids = SymbolIds()
    assert ids.defer(["q0", "q1", "q2", "q3"], 1) is None
    out = numpy.empty(4, dtype=numpy.int64)
    ids.ids_into(["q0", "q1", "q2", "q3"], out)
    assert out.tolist() == [0, 1, 2, 3] and ids.find("q3") == 3


@pytest.mark.parametrize("known", [1, 40])
def test_a_batch_meeting_a_known_hash_of_another_text_is_refused_either_size(
    monkeypatch: pytest.MonkeyPatch, known: int
) -> None:
    # A known name ("k0") and a batch name ("b2") share a hash: the batch is refused whether it is
    # the larger (1 known) or the smaller (40 known) of the two searched; after it, the batch's names
    # get their own ids, one each, and "k0" keeps id 0.
    _colliding(monkeypatch, lambda s: s in ("k0", "b2"))
    ids = SymbolIds()
    out = numpy.empty(known, dtype=numpy.int64)
    ids.ids_into([f"k{i}" for i in range(known)], out)
    batch = [f"b{i}" for i in range(6)]
    assert ids.defer(batch, 1) is None
    out = numpy.empty(6, dtype=numpy.int64)
    ids.ids_into(batch, out)
    assert out.tolist() == list(range(known, known + 6))
    assert ids.find("k0") == 0 and ids.find("b2") == known + 2


def test_a_deferred_name_and_another_text_of_its_hash_keep_their_own_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    # "d1" is deferred (id 1); "other" hashes alike: found among the deferred by hash, compared by
    # text, not taken for d1: a new id, 4. A later batch holding "other" meets d1's hash: refused.
    _colliding(monkeypatch, lambda s: s in ("d1", "other"))
    ids = SymbolIds()
    assert ids.defer(["d0", "d1", "d2", "d3"], 1) == 0
    assert ids.find("other") is None
    assert ids.intern("other") == 4 and ids.find("d1") == 1
    assert ids.defer(["e0", "e1", "e2", "other2"], 1) == 5  # no shared hash: taken
    assert ids.defer(["f0", "f1", "f2", "d1"], 1) is None  # d1 itself: refused


def test_meets_searches_either_way_round_at_the_int64_ends() -> None:
    # Hashes at both ends of int64 and between, in sets of 1 and 5: a shared one found whichever is
    # the smaller; none shared, none found (a value past the largest is not taken for the first).
    low, high = -(2**63), 2**63 - 1

    def hashed(*values: int) -> _Hashed:
        return _Hashed.of(0, numpy.array(values, dtype=numpy.int64))

    big = hashed(low, -5, 0, 9, high)
    assert hashed(high).meets(big) and big.meets(hashed(high))
    assert hashed(low).meets(big) and big.meets(hashed(low))
    assert not hashed(10).meets(big) and not big.meets(hashed(10))
    assert not hashed(low + 1, high - 1).meets(big)
    assert not hashed().meets(big) and not big.meets(hashed())


# -- check_utf8 --------------------------------------------------------------------------------------


def test_non_ascii_names_of_a_deferred_batch_load_and_are_found(duck: DuckDBBackend) -> None:
    # Names with "é" and "Ω" (valid UTF-8, not ASCII) in a deferred batch: loaded and found by text.
    names: list[Sequence[str]] = [[f"né{n}/l0", f"né{n}/l1", f"Ω{n}/g0", f"Ω{n}/g1"] for n in range(4)]
    duck.add_facts("link", StampedRows([], [link_block(names)]))
    assert duck._symbol_ids.find("né2/l1") == 9
    duck.evaluate()
    assert duck.query("link", {0: "né2/l1"}) == [("né2/l1", "Ω2/g1", "Ω2/g0", 50)]


@pytest.mark.parametrize("where", [0, 3, 7])
def test_a_lone_surrogate_among_non_ascii_names_of_a_deferred_batch_is_refused(duck: DuckDBBackend, where: int) -> None:
    # Non-ASCII names everywhere, one lone surrogate at node `where`'s GPU: refused (not UTF-8), the
    # load's symbols forgotten, the error naming the surrogate.
    names: list[Sequence[str]] = [[f"né{n}/l0", f"né{n}/l1", f"Ω{n}/g0", f"Ω{n}/g1"] for n in range(8)]
    names[where] = [f"né{where}/l0", f"né{where}/l1", f"Ω{where}/g\udc80", f"Ω{where}/g1"]
    with pytest.raises(EngineError, match=r"lone surrogate '\\udc80'"):
        duck.add_facts("link", StampedRows([], [link_block(names)]))
    assert duck._symbol_text == [] and not duck._slot_ids


def test_a_surrogate_pair_split_over_two_symbols_is_refused_at_the_first() -> None:
    # Each symbol is checked alone: "a\ud800" is refused by itself (the joined text used to report
    # the run "\ud800\udc00" it made with the next symbol; both are refused either way).
    with pytest.raises(UnicodeEncodeError) as caught:
        check_utf8(["ok", "a\ud800", "\udc00b"])
    assert caught.value.object == "a\ud800" and (caught.value.start, caught.value.end) == (1, 2)
    check_utf8(["plain", "é", ""])  # valid text: no error


# -- batch_key and FROM_ZERO ----------------------------------------------------------------------


def _key_by_reading(columns: list[list[int]], table: int) -> tuple[int, ...] | None:
    """batch_key's definition read row by row: the first column with no value twice among those
    whose span (largest - smallest + 1) is at most `table`; else among the pairs of such columns
    with at least as many possible value pairs as rows and at most `table`, smallest first (ties in
    column order), the first with no pair twice.
    """
    rows = len(columns[0]) if columns else 0
    spans = [c for c, values in enumerate(columns) if not values or max(values) - min(values) + 1 <= table]
    for c in spans:
        if len(set(columns[c])) == rows:
            return (c,)
    sizes = sorted(
        ((len(set(columns[i])) * len(set(columns[j])), i, j) for i, j in combinations(spans, 2)), key=lambda p: p[0]
    )
    for size, i, j in sizes:
        if size > table:
            break
        if size >= rows and len(set(zip(columns[i], columns[j], strict=True))) == rows:
            return (i, j)
    return None


def _pair_in(truth: set[tuple[int, int]]) -> Callable[[int, int], bool]:
    return lambda i, j: (i, j) in truth


def test_batch_keys_of_negative_huge_gapped_and_empty_columns_are_the_definitions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # MARK_TABLE lowered to 64 so that spans just under, at and over it (and over it only from 0,
    # FROM_ZERO's table) are all met; values negative, at int64's ends, from 0 with gaps.
    monkeypatch.setattr(column_keys, "MARK_TABLE", 64)
    rng = random.Random(55)
    pools = [
        list(range(0, 12)),
        list(range(-6, 6)),
        [0, 1, 60, 63, 64],  # from 0, a span of 64 or 65
        [40, 50, 60, 100],  # past 64 from 0, within it from 40 (but 100: 61 entries)
        [-(2**63), 2**63 - 1, 0],
        [5, 6, 7, 19],  # from 0 within four per value for 5+ rows
    ]
    for _ in range(1500):
        count, width = rng.randint(0, 9), rng.randint(1, 4)
        columns = [[rng.choice(pool) for _ in range(count)] for pool in (rng.choice(pools) for _ in range(width))]
        arrays: list[NDArray[numpy.int64]] = [numpy.array(c, dtype=numpy.int64) for c in columns]
        expected = _key_by_reading(columns, 64)
        assert batch_key(arrays) == expected, columns
        # A proof that says True only for pairs truly without a repeat changes nothing found.
        truth = {
            (i, j)
            for i, j in combinations(range(width), 2)
            if len(set(zip(columns[i], columns[j], strict=True))) == count
        }
        assert batch_key(arrays, _pair_in(truth)) == expected, columns


def test_batch_key_leaves_its_columns_as_they_were() -> None:
    # A column from 0 is used as its own offsets (no copy): marking must not write to it.
    columns = [numpy.array([3, 0, 3, 1], dtype=numpy.int64), numpy.array([1, 1, 2, 2], dtype=numpy.int64)]
    before = [c.copy() for c in columns]
    # Neither column alone (3 and 1 and 2 twice); pairs (3,1), (0,1), (3,2), (1,2) all different.
    assert batch_key(columns) == (0, 1)
    assert all((a == b).all() for a, b in zip(columns, before, strict=True))


# -- _from_same_nodes passing over small lists ----------------------------------------------------


def test_a_list_of_one_node_many_times_reads_its_names_itself(duck: DuckDBBackend) -> None:
    # The links' list holds nodes 0..3; attr's list holds node 2's very sequence 9 times. The links'
    # list (4) is under half of 9, so its ids are not searched (rows_of would have mapped all 9 to
    # node 2's row): the names are looked up and find node 2's ids; the 9 copies give 2 rows.
    names = _names(4)
    duck.add_facts("link", StampedRows([], [link_block(names)]))
    duck.add_facts("attr", StampedRows([], [_attrs([names[2]] * 9, (0, 1), ("a", "b"))]))
    assert duck.count("attr") == 2
    duck.evaluate()
    assert duck.query("tagged") == [("n2/g0", "a"), ("n2/g1", "b")]


# -- a shipped inventory end to end ----------------------------------------------------------------


@pytest.mark.parametrize("inventory", ["dgx-h100-pod", "gb200-nvl72"])
def test_a_shipped_inventory_verifies_alike_with_every_block_deferred(
    monkeypatch: pytest.MonkeyPatch, inventory: str
) -> None:
    # DEFER_AT 1: every stamped block's new names are a deferred batch, so link_attr's key is told
    # from the plans (claimed at least once); the report is the one of the ordinary path (DEFER_AT
    # as shipped, where these small inventories defer nothing), byte for byte.
    args = ("verify", f"inventories/{inventory}.yaml", "--engine", "duckdb", "--format", "json")
    env = {"TOPOLOG_CACHE_DIR": ""}
    monkeypatch.setattr(symbol_ids, "DEFER_AT", 1 << 40)
    ordinary = run_cli(*args, env=env)
    monkeypatch.setattr(symbol_ids, "DEFER_AT", 1)
    claims: list[bool] = []
    original = DuckDBBackend._keyed_by_blocks

    def keyed(self: DuckDBBackend, *args: object) -> bool:
        got: bool = original(self, *args)  # type: ignore[arg-type]
        claims.append(got)
        return got

    monkeypatch.setattr(DuckDBBackend, "_keyed_by_blocks", keyed)
    deferred = run_cli(*args, env=env)
    assert True in claims
    assert deferred == ordinary and ordinary[0] in (0, 1) and ordinary[1].startswith("{")
