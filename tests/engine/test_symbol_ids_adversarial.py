"""Adversarial tests of the DuckDB engine's deferred symbol ids (`SymbolIds.defer`): every text finds the
one id it has, no text gets two ids, no two texts share one, and texts read back exactly, when hashes
collide, when a deferred name comes back as a rule or query constant, in another block, list or load, and
when a load is refused after a batch was deferred.

Hash collisions of real strings cannot be crafted (str hashes are keyed by PYTHONHASHSEED): the module's
`hash` is replaced by a weak one (a few low bits of the real one, or a table), which only the deferred
index reads; the dict itself still uses the real hash. DEFER_AT is lowered so that a few names are a batch.

The expected ids follow from one rule, derived by hand per case: ids are given in order of first
appearance from 0, whichever way (dict or deferred batch) a name took.
"""

from __future__ import annotations

import builtins
import random
from collections.abc import Callable, Iterator, Sequence

import numpy
import pytest
from engine.stamp_helpers import link_block, memory_answers, stamp_names
from numpy.typing import NDArray

from verifier.core.errors import TopologError
from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine import symbol_ids
from verifier.engine.ast import Row
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program, parse_query
from verifier.engine.symbol_ids import SymbolIds

TEXT = """
.input link(id: symbol, a: symbol, b: symbol, mbps: number)
.input attr(id: symbol, key: symbol)
.decl via(b: symbol, n: number)
via(B, count(L)) :- link(L, _, B, _).
.decl keyed(a: symbol, k: symbol)
keyed(A, K) :- link(L, A, _, _), attr(L, K).
.decl from_x1(a: symbol)
from_x1(A) :- link("x1/l0", A, _, _).
.decl tagged(l: symbol)
tagged(L) :- attr(L, "x2/l1").
"""
RELATIONS = ("link", "attr", "via", "keyed", "from_x1", "tagged")


@pytest.fixture(autouse=True)
def _small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symbol_ids, "DEFER_AT", 2)


def _weak_hash(monkeypatch: pytest.MonkeyPatch, of: Callable[[str], int]) -> None:
    # The module looks `hash` up as a global before the builtin: this replaces it for the index only.
    monkeypatch.setattr(symbol_ids, "hash", of, raising=False)


def _table_hash(monkeypatch: pytest.MonkeyPatch, table: dict[str, int]) -> None:
    """Hashes by table (others keep their real hash, shifted away from the table's small values)."""
    _weak_hash(monkeypatch, lambda s: table[s] if s in table else (builtins.hash(s) | (1 << 40)))


def _sound(ids: SymbolIds) -> None:
    """One id per text and one text per id: every text's lookup finds its own index, the dict names
    only ids whose text is that key, and the dict plus the deferred slots hold every id exactly once."""
    text = ids.text
    assert len(set(text)) == len(text)
    assert all(ids.find(s) == i for i, s in enumerate(text))
    assert all(text[i] == s for s, i in ids.items())
    pending = sum(b.deferred_below(len(text)) for b in ids._deferred)
    assert len(ids) + pending == len(text)


def _into(ids: SymbolIds, symbols: list[str]) -> list[int]:
    out = numpy.empty(len(symbols), dtype=numpy.int64)
    ids.ids_into(symbols, out)
    return [int(i) for i in out]


# -- hash collisions, in SymbolIds alone ---------------------------------------------------------------


def test_a_batch_whose_names_share_a_hash_is_not_deferred_and_each_keeps_its_own_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "p" and "q" collide: defer refuses the batch (a repeated hash may be a repeated name), and the
    # dict gives p, q, r the ids 0, 1, 2 (first appearance).
    _table_hash(monkeypatch, {"p": 7, "q": 7, "r": 8})
    ids = SymbolIds()
    assert ids.defer(["p", "q", "r"], 1) is None and ids.text == []
    assert _into(ids, ["p", "q", "r", "q"]) == [0, 1, 2, 1]
    _sound(ids)


def test_a_batch_colliding_with_a_known_or_deferred_hash_is_not_deferred(monkeypatch: pytest.MonkeyPatch) -> None:
    # "k" known (id 0) shares a hash with batch name "a"; "c" of a second batch shares one with the
    # deferred "b". Neither batch is taken; the first's names go through the dict as ids 1, 2.
    _table_hash(monkeypatch, {"k": 1, "a": 1, "b": 2, "c": 2, "d": 3, "e": 4})
    ids = SymbolIds()
    assert _into(ids, ["k"]) == [0]
    assert ids.defer(["a", "d"], 1) is None
    assert ids.defer(["b", "e"], 2) == 1  # b, e get ids 1, 2 by position
    assert ids.defer(["c", "x"], 1) is None  # c's hash is the deferred b's
    assert ids.text == ["k", "b", "e"]
    # The refused batches' names are new: 3, 4, 5, 6 in order of first appearance.
    assert _into(ids, ["a", "d", "c", "x", "b"]) == [3, 4, 5, 6, 1]
    _sound(ids)


def test_a_later_name_colliding_with_a_deferred_one_gets_a_new_id_by_every_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Batch n0/l0, n0/l1, n1/l0, n1/l1 (width 2) takes ids 0..3. "rule" and "plain" and "query" share the
    # hashes of n1/l0 (id 2), n0/l1 (id 1) and n1/l1 (id 3) but not their texts: each is new.
    batch = ["n0/l0", "n0/l1", "n1/l0", "n1/l1"]
    _table_hash(monkeypatch, {**{s: 100 + i for i, s in enumerate(batch)}, "rule": 102, "plain": 101, "query": 103})
    ids = SymbolIds()
    assert ids.defer(batch, 2) == 0
    assert ids.find("query") is None  # a query's constant: found by hash, refused by text
    assert ids.intern("rule") == 4  # a rule's constant: the next id
    # Plain rows: "plain" then a deferred name read again in bulk (its slot, l1, goes into the dict).
    assert _into(ids, ["plain", "n1/l1", "plain"]) == [5, 3, 5]
    assert dict.__contains__(ids, "n0/l1") and not dict.__contains__(ids, "n0/l0")
    assert [ids.find(s) for s in batch] == [0, 1, 2, 3]
    assert ids.text == [*batch, "rule", "plain"]
    _sound(ids)


def test_colliding_names_through_the_bit_filter(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the filter made at once (FILTER_AFTER 0), "far" has the hash of n0/b plus BITS: the same bit,
    # so it is searched, and its hash (or text) differs: not found, a new id. "n0/b" is found as 1.
    monkeypatch.setattr(symbol_ids, "FILTER_AFTER", 0)
    _table_hash(monkeypatch, {"n0/a": 5, "n0/b": 6, "n1/a": 7, "n1/b": 8, "far": 6 + symbol_ids.BITS, "twin": 6})
    ids = SymbolIds()
    assert ids.defer(["n0/a", "n0/b", "n1/a", "n1/b"], 2) == 0
    assert ids.find("far") is None and ids._bits
    assert ids.find("twin") is None  # same hash, other text
    assert ids.find("n0/b") == 1 and ids.find("n1/b") == 3
    assert ids.intern("twin") == 4 and ids.intern("far") == 5
    _sound(ids)


def test_forgetting_from_inside_a_partly_read_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    # Batch a0 b0 a1 b1 a2 b2 (width 2) at ids 1..6 after "k" (id 0); reading b1 in bulk puts slot b in
    # the dict. Forgetting from id 4 (a refused load that began there would) keeps k a0 b0 a1: b1, a2,
    # b2 are gone from dict and index alike, and come back as new ids 4, 5, 6 in the order read.
    batch = ["a0", "b0", "a1", "b1", "a2", "b2"]
    _table_hash(monkeypatch, {s: i for i, s in enumerate(["k", *batch, "zz"])})  # no two alike
    ids = SymbolIds()
    assert _into(ids, ["k"]) == [0]
    assert ids.defer(batch, 2) == 1
    assert _into(ids, ["zz", "b1"])[1] == 4 and dict.__contains__(ids, "b2")
    ids.forget_from(4)
    assert ids.text == ["k", "a0", "b0", "a1"]
    assert [ids.find(s) for s in ("b1", "a2", "b2", "zz")] == [None] * 4
    _sound(ids)
    assert _into(ids, ["b2", "a1", "a2", "b1"]) == [4, 3, 5, 6]
    _sound(ids)


# -- a model of first appearance, against every operation, under weak hashes ---------------------------


@pytest.mark.parametrize("seed", range(24))
def test_random_operations_give_the_ids_of_first_appearance(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    # Model: a text's id is the number of distinct texts before its first appearance, and forgetting
    # from `start` drops the texts from there. Hashes keep 6 bits (64 values), so batches of 2..12 names
    # are often refused and later names often collide with deferred ones; the filter is made after 0,
    # 3 or the usual 256 searches. Texts include non-ASCII ones (never deferred any differently).
    rng = random.Random(seed)
    bits = rng.choice([0x3F, 0xFF, -1])
    _weak_hash(monkeypatch, lambda s: builtins.hash(s) & bits)
    monkeypatch.setattr(symbol_ids, "FILTER_AFTER", rng.choice([0, 3, 256]))
    pool = [f"n{n}/{k}" for n in range(12) for k in ("l0", "l1", "g", "é")] + ["π", "link", "x"]
    ids, model = SymbolIds(), list[str]()

    def expect(symbols: Sequence[str]) -> list[int]:
        for s in symbols:
            if s not in model:
                model.append(s)
        return [model.index(s) for s in symbols]

    for _ in range(60):
        op = rng.choice(["into", "into", "defer", "defer", "intern", "find", "forget"])
        if op == "into":
            symbols = [rng.choice(pool) for _ in range(rng.randint(1, 8))]
            assert _into(ids, symbols) == expect(symbols)
        elif op == "defer":
            width = rng.randint(1, 3)
            names = [rng.choice(pool) for _ in range(width * rng.randint(1, 4))]
            base = ids.defer(names, width)
            if base is None:
                assert ids.text == model
            else:
                # Taken only if every name is new and comes once: then positions are first appearances.
                assert base == len(model) and not set(names) & set(model) and len(set(names)) == len(names)
                assert expect(names) == list(range(base, base + len(names)))
        elif op == "intern":
            s = rng.choice(pool)
            assert ids.intern(s) == expect([s])[0]
        elif op == "find":
            s = rng.choice(pool)
            assert ids.find(s) == (model.index(s) if s in model else None)
        else:
            start = rng.randint(0, len(model))
            ids.forget_from(start)
            del model[start:]
        assert ids.text == model
        _sound(ids)


# -- the engine, against the memory engine -------------------------------------------------------------


@pytest.fixture
def duck() -> Iterator[DuckDBBackend]:
    engine = DuckDBBackend()
    engine.load(parse_program(TEXT, "t.dl"))
    yield engine
    engine.close()


def _names(nodes: int, prefix: str = "x") -> list[Sequence[str]]:
    """Per node n: links <prefix><n>/l0 and /l1, GPUs <prefix><n>/g0 and /g1."""
    return stamp_names(nodes, prefix)


def _tags(names: list[Sequence[str]], tag: str) -> StampBlock:
    """Per node: attr(l0, tag) and attr(l1, tag)."""
    return StampBlock(((0, 1), None), (None, (tag, tag)), names)


def _answers(engine: DuckDBBackend) -> dict[str, list[Row]]:
    return {r: engine.query(r) for r in RELATIONS}


def _memory(loads: Sequence[tuple[str, Sequence[Row]]]) -> dict[str, list[Row]]:
    return memory_answers(TEXT, RELATIONS, loads)


def test_equal_texts_in_another_node_order_and_in_a_later_load_are_one_symbol(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hashes are exact for x-names and keep 2 bits for y-names: the x block (16 new names) is deferred,
    # the y block (8 names in 4 hash values) is not and goes through the dict.
    _weak_hash(monkeypatch, lambda s: builtins.hash(s) & 3 if s.startswith("y") else builtins.hash(s))
    xs, ys = _names(4), _names(2, "y")
    duck.add_facts("link", StampedRows([], [link_block(xs), link_block(ys)]))
    assert duck._symbol_ids._deferred  # the x batch deferred, the y one through the dict
    # The same texts in new objects, nodes reversed, and a REPL-style plain row naming a deferred link.
    reversed_names: list[Sequence[str]] = [list(n) for n in reversed(xs)]
    duck.add_facts("attr", StampedRows([("x3/l1", "x2/l1")], [_tags(reversed_names, "t"), _tags(ys, "x2/l1")]))
    _sound(duck._symbol_ids)
    assert duck._symbol_text.count("x2/l1") == 1 and len(duck._symbol_text) == 16 + 8 + 1
    duck.evaluate()
    # tagged: links with attr "x2/l1": x3/l1 (plain row) and the y nodes' l0 and l1.
    assert duck.query("tagged") == [("x3/l1",), ("y0/l0",), ("y0/l1",), ("y1/l0",), ("y1/l1",)]
    # from_x1: x1/l0 runs from x1/g0. A query bound to a deferred link id finds its row.
    assert duck.query("from_x1") == [("x1/g0",)]
    assert duck.query("link", {0: "x2/l1"}) == [("x2/l1", "x2/g1", "x2/g0", 50)]
    loads = [
        ("link", list(StampedRows([], [link_block(xs), link_block(ys)]))),
        ("attr", list(StampedRows([("x3/l1", "x2/l1")], [_tags(reversed_names, "t"), _tags(ys, "x2/l1")]))),
    ]
    assert _answers(duck) == _memory(loads)


def test_a_refused_later_load_rolls_back_to_the_deferred_state_exactly(duck: DuckDBBackend) -> None:
    # Load 1 defers 3 nodes' 12 names (ids 0..11). Load 2 reads x1/l0 in bulk (slot l0 into the dict),
    # adds the new "t", then a bad row (a number for a symbol): refused, so dict, texts and deferred
    # slots are those after load 1 again, and x1/l0 still has id 4 (node 1, slot 0).
    duck.add_facts("link", StampedRows([], [link_block(_names(3))]))
    text, entries = list(duck._symbol_text), dict(duck._symbol_ids)
    with pytest.raises(TopologError):
        duck.add_facts("attr", [("x1/l0", "t"), ("x0/l1", 5)])
    assert duck._symbol_text == text and duck._symbol_ids.find("t") is None
    assert duck._symbol_ids.find("x1/l0") == 4
    assert set(dict(duck._symbol_ids).items()) >= set(entries.items())
    _sound(duck._symbol_ids)
    duck.add_facts("attr", [("x1/l0", "t")])
    assert duck._symbol_ids.find("t") == 12
    duck.evaluate()
    # keyed: x1/l0 starts at x1/g0.
    assert duck.query("keyed") == [("x1/g0", "t")]


def test_non_ascii_deferred_names_read_back_exactly(duck: DuckDBBackend) -> None:
    # Names with é, a CJK character and an emoji (4 bytes in UTF-8): deferred, then read back through
    # DuckDB's text table by a query bound to one and by the rule that counts links per GPU.
    names: list[Sequence[str]] = [[f"é{n}/l0", f"链{n}/l1", f"🚀{n}/g0", f"ß{n}/g1"] for n in range(3)]
    duck.add_facts("link", StampedRows([], [link_block(names)]))
    assert duck._symbol_ids._deferred
    duck.evaluate()
    assert duck.query("link", {0: "链1/l1"}) == [("链1/l1", "ß1/g1", "🚀1/g0", 50)]
    # via: each GPU ends one link (ß<n>/g1 ends l0, 🚀<n>/g0 ends l1).
    assert duck.query("via") == sorted([(f"ß{n}/g1", 1) for n in range(3)] + [(f"🚀{n}/g0", 1) for n in range(3)])


@pytest.mark.parametrize("seed", range(8))
def test_random_stamped_loads_answer_as_the_memory_engine(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    # Random blocks over shared and reordered node lists, plain rows naming their links, rule constants
    # (x1/l0, x2/l1) among the names, retracts and reloads, with 5-bit hashes in the index: the DuckDB
    # engine's answers are the memory engine's, and its dictionary stays one id per text.
    rng = random.Random(seed)
    _weak_hash(monkeypatch, lambda s: builtins.hash(s) & 0x1F)
    monkeypatch.setattr(symbol_ids, "FILTER_AFTER", rng.choice([0, 256]))
    lists = {p: _names(rng.randint(1, 5), p) for p in ("x", "y")}
    duck = DuckDBBackend()
    duck.load(parse_program(TEXT, "t.dl"))
    loads: dict[str, list[Row]] = {"link": [], "attr": []}
    try:
        for _ in range(6):
            names = lists[rng.choice("xy")]
            if rng.random() < 0.5:
                names = [list(n) for n in rng.sample(names, len(names))]  # same texts, new objects
            plain: list[Row] = []
            if rng.random() < 0.5:
                plain = [(rng.choice(rng.choice(names)), rng.choice(["x2/l1", "t", "x1/l0"]))]
            relation = rng.choice(["link", "attr", "attr"])
            if relation == "link":
                rows = StampedRows([], [link_block(names)])
            else:
                rows = StampedRows(plain, [_tags(names, rng.choice(["t", "x2/l1"]))])
            if rng.random() < 0.15 and loads[relation]:
                duck.retract(relation)
                loads[relation] = []
            duck.add_facts(relation, rows)
            loads[relation].extend(rows)
            _sound(duck._symbol_ids)
        duck.evaluate()
        memory = make_backend("memory")
        try:
            memory.load(parse_program(TEXT, "t.dl"))
            for relation, loaded in loads.items():
                memory.add_facts(relation, loaded)
            memory.evaluate()
            assert _answers(duck) == {r: memory.query(r) for r in RELATIONS}
            # Bound deferred names and text order on them (DuckDB reads their texts for `<`).
            for text in (
                'link("x1/l0", A, B, M)',
                'attr(L, K), L < "x2/l1"',
                'link(L, A, B, _), A > "y0", L <= "y1/l0"',
            ):
                assert duck.answer(parse_query(text)) == memory.answer(parse_query(text)), text
            # keyed(A, K) has one derivation (A starts one link), so both engines prove it the same way.
            for row in memory.query("keyed"):
                assert duck.explain("keyed", row).render() == memory.explain("keyed", row).render()
        finally:
            memory.close()
    finally:
        duck.close()


class _Stop(KeyboardInterrupt):
    """Ctrl-C, raised by a fault injected in the dictionary's work."""


@pytest.mark.parametrize("seed", range(12))
def test_ctrl_c_anywhere_in_a_load_leaves_one_id_per_text(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    # Ctrl-C at a random call of the dictionary's inner steps: the UTF-8 check (in defer before it takes
    # a batch, in ids_into after new names were added), a hash search, or half-way through putting a
    # deferred slot in the dict. The load is refused (forget_from, as _encoded does), so the engine must
    # answer as if it never began: the memory engine given only the loads that finished.
    rng = random.Random(seed)
    _weak_hash(monkeypatch, lambda s: builtins.hash(s) & 0x3F)
    calls = [0, rng.randint(1, 12)]  # calls so far in this load, the call that stops it

    def tick() -> None:
        calls[0] += 1
        if calls[0] == calls[1]:
            raise _Stop

    check, holding = symbol_ids.check_utf8, symbol_ids._Hashed.holding

    def checked(symbols: list[str]) -> None:
        tick()
        check(symbols)

    def held(self: symbol_ids._Hashed, hashes: NDArray[numpy.int64]) -> NDArray[numpy.int64]:
        tick()
        return holding(self, hashes)

    def drained(items: Iterator[object], maxlen: int) -> None:
        # Half of a slot's names put in the dict, then Ctrl-C (if it is this call's turn).
        for _, _ in zip(range(2), items, strict=False):
            pass
        tick()
        for _ in items:
            pass

    monkeypatch.setattr(symbol_ids, "check_utf8", checked)
    monkeypatch.setattr(symbol_ids._Hashed, "holding", held)
    monkeypatch.setattr(symbol_ids, "deque", drained)
    lists = {p: _names(rng.randint(2, 5), p) for p in ("x", "y")}
    duck = DuckDBBackend()
    duck.load(parse_program(TEXT, "t.dl"))
    done: dict[str, list[Row]] = {"link": [], "attr": []}
    stopped = 0
    try:
        for _ in range(6):
            names: list[Sequence[str]] = [list(n) for n in rng.sample(lists[rng.choice("xy")], 2)]
            plain: list[Row] = [(rng.choice(names[0]), rng.choice(["t", "x1/l0", "n", "y0/g0"]))]
            relation = rng.choice(["link", "attr"])
            if relation == "link":
                rows = StampedRows([], [link_block(names)])
            else:
                rows = StampedRows(plain, [_tags(names, "t")])
            calls[0] = 0
            try:
                duck.add_facts(relation, rows)
            except _Stop:
                stopped += 1
            else:
                done[relation].extend(rows)
            calls[0] = -1_000_000  # no fault while the dictionary is checked
            text = duck._symbol_text
            # One id per text, every text found at its own id, every dict entry naming its own text.
            assert len(set(text)) == len(text)
            assert all(duck._symbol_ids.find(s) == i for i, s in enumerate(text))
            assert all(text[i] == s for s, i in duck._symbol_ids.items())
        duck.evaluate()
        assert _answers(duck) == _memory(list(done.items()))
    finally:
        duck.close()


def test_a_rule_constant_interned_before_the_block_keeps_its_id(duck: DuckDBBackend) -> None:
    # The first evaluation (one plain link p from q to r, one attr) runs every rule and so interns their
    # constants "x1/l0" and "x2/l1". Then a block of 3 nodes whose names hold both: the batch meets
    # known hashes and goes through the dict, where the two constants keep their ids. tagged is empty
    # (the one attr is (p, a)); from_x1: x1/l0 runs from x1/g0; via: r and every g0, g1 end one link.
    duck.add_facts("link", [("p", "q", "r", 1)])
    duck.add_facts("attr", [("p", "a")])
    duck.evaluate()
    constants = {s: duck._symbol_ids.find(s) for s in ("x1/l0", "x2/l1")}
    assert None not in constants.values()
    duck.add_facts("link", StampedRows([], [link_block(_names(3))]))
    assert not duck._symbol_ids._deferred
    assert {s: duck._symbol_ids.find(s) for s in constants} == constants
    _sound(duck._symbol_ids)
    duck.evaluate()
    assert duck.query("from_x1") == [("x1/g0",)] and duck.query("tagged") == []
    assert duck.query("via") == sorted([("r", 1)] + [(f"x{n}/g{g}", 1) for n in range(3) for g in (0, 1)])
