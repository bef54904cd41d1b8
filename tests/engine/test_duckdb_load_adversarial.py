"""Trying to break the DuckDB engine's load path through its symbol table: the DuckDB engine's
answers against the memory engine's (which keeps every symbol as its Python string) on strings
that a wrong id would merge or split, across loads, refused loads, retracts and evaluations kept.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.core.errors import EngineError, TopologError
from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine.ast import Row
from verifier.engine.backend import Backend
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program, parse_query

# `item` holds (group, word); the rules compare words as strings (the DuckDB engine reads their
# text from its `_symbols` table), join words across groups (ids must match) and count them.
TEXT = """
.input item(g: symbol, x: symbol)
.input ask(x: symbol)
.decl before(x: symbol, y: symbol)
before(X, Y) :- item(_, X), item(_, Y), X < Y.
.decl first(g: symbol, x: symbol)
first(G, min(X)) :- item(G, X).
.decl shared(x: symbol)
shared(X) :- item("g0", X), item("g1", X).
.decl kinds(g: symbol, n: number)
kinds(G, count(X)) :- item(G, X).
.decl asked(g: symbol, x: symbol)
asked(G, X) :- ask(X), item(G, X).
"""
RELATIONS = ("item", "before", "first", "shared", "kinds", "asked")

# No lone surrogate: DuckDB stores text as UTF-8 and refuses one (test below).
WORDS = ["", "\x00", "a", "a\x00", "a\x00\x00", "a\x00b", "é", "e\u0301", "\U0001f600", "\uffff", "z", "x" * 5_000]


@pytest.fixture
def engines() -> Iterator[tuple[Backend, Backend]]:
    pair = (make_backend("duckdb"), make_backend("memory"))
    for e in pair:
        e.load(parse_program(TEXT, "t.dl"))
    yield pair
    for e in pair:
        e.close()


def _answers(e: Backend) -> dict[str, list[Row]]:
    e.evaluate()
    return {r: e.query(r) for r in RELATIONS}


def _both(engines: tuple[Backend, Backend], relation: str, rows: Sequence[Row]) -> None:
    for e in engines:
        e.add_facts(relation, rows)


def test_strings_a_nul_apart_stay_apart_through_every_path(engines: tuple[Backend, Backend]) -> None:
    duck, memory = engines
    # Batch 1 (12 rows): g0 holds every word. Batch 2 (300 rows, the path for a column of mostly
    # new symbols), g1 holds every word but "a" and "", each 25 times, with 50 words never seen: "w0".."w49".
    _both(engines, "item", [("g0", w) for w in WORDS])
    rest = [w for w in WORDS if w not in ("a", "")]
    big = [("g1", w) for w in rest * 25] + [("g2", f"w{i}") for i in range(50)]
    _both(engines, "item", big)
    _both(engines, "ask", [("a\x00",), ("\x00",)])
    got = _answers(duck)
    assert got == _answers(memory)
    # By hand: shared = the 10 words of g1 (all but "a" and "");
    # first of g0 is "" (the empty string sorts first), of g1 "\x00"; kinds g0 12, g1 10, g2 50.
    assert sorted(x for (x,) in got["shared"]) == sorted(rest)
    assert got["first"] == [("g0", ""), ("g1", "\x00"), ("g2", "w0")]
    assert got["kinds"] == [("g0", 12), ("g1", 10), ("g2", 50)]
    assert got["asked"] == [("g0", "\x00"), ("g0", "a\x00"), ("g1", "\x00"), ("g1", "a\x00")]
    # Looked up alone (a query's bound value, the service's way): each word its own tuples.
    for w in WORDS:
        assert duck.query("item", {1: w}) == memory.query("item", {1: w})
    assert duck.query("item", {1: "a\x00"}) == [("g0", "a\x00"), ("g1", "a\x00")]
    assert duck.query("item", {1: "a"}) == [("g0", "a")]


def test_a_refused_load_leaves_no_symbol_behind(engines: tuple[Backend, Backend]) -> None:
    duck, memory = engines
    duck.add_facts("item", [("g0", "kept")])
    # 200 rows: 150 new words, then a lone surrogate DuckDB cannot store as UTF-8.
    # The load is refused whole (the engine's error, the verification fails closed): the 150 words
    # must not keep ids that later loads would see as known while the `_symbols` table lacks them.
    bad = [("g1", f"n{i}") for i in range(150)] + [("g1", "\udc80")] * 50
    with pytest.raises(EngineError, match="surrogate"):
        duck.add_facts("item", bad)
    memory.add_facts("item", [("g0", "kept")])
    # The same words again, in another order, one batch of 150 and one of 20 (two paths of the dictionary).
    again = [("g1", f"n{i}") for i in reversed(range(150))]
    _both(engines, "item", again)
    _both(engines, "item", [("g0", f"n{i}") for i in range(0, 200, 10)])
    got = _answers(duck)
    assert got == _answers(memory)
    # By hand: g0 holds n0, n10, ..., n190 and "kept"; g1 holds n0..n149: shared n0..n140 by tens.
    assert got["shared"] == sorted((f"n{i}",) for i in range(0, 150, 10))
    assert got["kinds"] == [("g0", 21), ("g1", 150)]


def test_facts_added_and_retracted_again_and_again_on_a_kept_evaluation(engines: tuple[Backend, Backend]) -> None:
    duck, memory = engines
    _both(engines, "item", [("g0", w) for w in WORDS] + [("g1", f"node{i}") for i in range(400)])
    duck.evaluate()
    # The service's way: each job's facts added to the evaluated fleet, evaluated, retracted. Each
    # round asks for words seen (alone), a word never seen before (a new symbol after the load) and
    # a NUL variant of a known one; the DuckDB engine must answer as a fresh memory engine does.
    assert hasattr(duck, "retract")
    for round_ in range(6):
        asks = [(WORDS[round_],), (f"node{round_ * 7}",), (f"job{round_}",), (f"node{round_}\x00",)]
        duck.add_facts("ask", asks)
        duck.evaluate()
        fresh = make_backend("memory")
        try:
            fresh.load(parse_program(TEXT, "t.dl"))
            fresh.add_facts("item", [("g0", w) for w in WORDS] + [("g1", f"node{i}") for i in range(400)])
            fresh.add_facts("ask", asks)
            want = _answers(fresh)
        finally:
            fresh.close()
        assert {r: duck.query(r) for r in RELATIONS} == want
        # By hand: asked holds the known word in g0 and node{7r} in g1; job{r} and the NUL variant
        # are in no item fact.
        assert want["asked"] == sorted([("g0", WORDS[round_]), ("g1", f"node{round_ * 7}")])
        duck.retract("ask")
    duck.evaluate()
    assert duck.query("asked") == []
    # The job words were added as symbols after the load, looked up alone: now loaded in a batch.
    _both(engines, "item", [("g2", f"job{i}") for i in range(6)] + [("g2", w) for w in WORDS])
    assert _answers(duck) == _answers(memory)


tricky = st.sampled_from(WORDS[:-1]) | st.text(alphabet="a\x00é\U0001f600", max_size=3)
rows = st.lists(st.tuples(st.sampled_from(["g0", "g1", "a"]), tricky), max_size=300)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(batches=st.lists(rows, min_size=1, max_size=4), asks=st.lists(tricky, max_size=5))
def test_any_loads_of_tricky_words_answer_as_the_memory_engine(batches: list[list[Row]], asks: list[str]) -> None:
    engines = (make_backend("duckdb"), make_backend("memory"))
    try:
        for e in engines:
            e.load(parse_program(TEXT, "t.dl"))
        for batch in batches:
            _both(engines, "item", batch)
        _both(engines, "ask", [(x,) for x in asks])
        assert _answers(engines[0]) == _answers(engines[1])
    finally:
        for e in engines:
            e.close()


def test_verify_does_not_depend_on_the_hash_seed() -> None:
    # Python's str hash changes with PYTHONHASHSEED, and with it the order of a dict's table;
    # the ids (first appearance) and so the report must not. The mixed fleet with the DuckDB engine,
    # under two seeds, as JSON: byte for byte the same.
    root = Path(__file__).resolve().parents[2]
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "TOPOLOG_CACHE_DIR": ""}
        args = ["--quiet", "verify", "inventories/mixed-fleet.yaml", "--engine", "duckdb", "--format", "json"]
        result = subprocess.run(
            [sys.executable, "-c", f"from verifier.cli.main import run; run({args!r})"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode in (0, 1), result.stderr
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] and outputs[0].startswith("{")


STAMPED = """
.input link(id: symbol, a: symbol, b: symbol, mbps: number)
.input attr(id: symbol, key: symbol)
.decl via(b: symbol, n: number)
via(B, count(L)) :- link(L, _, B, _).
.decl keyed(a: symbol, k: symbol)
keyed(A, K) :- link(L, A, _, _), attr(L, K).
"""


def _stamped(names: list[Sequence[str]]) -> tuple[StampedRows, StampedRows]:
    # Per node the names [l0, l1, g0, g1, switch]: two links l0 g0 -> switch (100), l1 g1 -> switch
    # (50). Every node's switch is one of two names a NUL apart, so a chunk repeats known names.
    links = StampBlock(((0, 1), (2, 3), (4, 4), None), (None, None, None, (100, 50)), names)
    attrs = StampBlock(((0, 1), None), (None, ("nvlink", "nvlink\x00")), names)
    plain: list[Row] = [("cable", "n1/g0", "sw\x00", 25), ("cable\x00", "n1/g0", "sw", 25)]
    return StampedRows(plain, [links]), StampedRows([], [attrs])


def test_stamped_blocks_of_tricky_names_across_a_refused_load() -> None:
    nodes = 300  # 1,500 names: several chunks of slots
    names: list[Sequence[str]] = [
        [f"n{n}/l0", f"n{n}/l1", f"n{n}/g0", f"n{n}/g1\u00e9", "sw" if n % 2 else "sw\x00"] for n in range(nodes)
    ]
    duck, memory = make_backend("duckdb"), make_backend("memory")
    try:
        for e in (duck, memory):
            e.load(parse_program(STAMPED, "t.dl"))
        link, attr = _stamped(names)
        # First a refused load of the same names list: its block is looked up (the slots' ids kept
        # for the list, `_slot_ids`) before its constants are refused. Those ids must be forgotten
        # with the symbols the refused load added, or the next load of the list reuses them while
        # they name other strings. Its plain row comes first, so its names take the first ids.
        bad = StampBlock(((0,), (2,), (4,), None), (None, None, None, ("fast",)), names)
        with pytest.raises(TopologError):
            duck.add_facts("link", StampedRows([("new\x00", "x", "y", 1)], [bad]))
        duck.add_facts("attr", [("other", "z")])  # takes ids the refused load had given
        memory.add_facts("attr", [("other", "z")])
        duck.add_facts("link", link)
        duck.add_facts("attr", attr)
        for relation, rows in (("link", link), ("attr", attr)):
            memory.add_facts(relation, list(rows))
        duck.evaluate()
        memory.evaluate()
        got = {r: duck.query(r) for r in ("link", "attr", "via", "keyed")}
        assert got == {r: memory.query(r) for r in ("link", "attr", "via", "keyed")}
        # By hand: 150 odd nodes end on "sw", 150 even ones on "sw\x00", two links each, plus one
        # plain cable each; keyed pairs each node's g0 with "nvlink", g1 with "nvlink\x00".
        assert got["via"] == [("sw", 301), ("sw\x00", 301)]
        assert len(got["keyed"]) == 2 * nodes
        assert ("n7/g1\u00e9", "nvlink\x00") in got["keyed"] and ("n7/g0", "nvlink") in got["keyed"]
        assert duck.query("link", {0: "new\x00"}) == []
    finally:
        duck.close()
        memory.close()


class _StopAfterTextsCopy:
    """A DuckDB connection whose first copy of texts into the dictionary table (`_store_texts`) is
    done, then interrupted: a Ctrl-C landing as the statement returns, before the engine notes it."""

    def __init__(self, con: Any) -> None:
        self.con, self.stopped = con, False

    def execute(self, sql: str, *args: Any) -> Any:
        done = self.con.execute(sql, *args)
        if not self.stopped and sql.startswith('INSERT INTO "_symbols"'):
            self.stopped = True
            raise KeyboardInterrupt
        return done

    def __getattr__(self, name: str) -> Any:
        return getattr(self.con, name)


def _one_text_per_id(duck: DuckDBBackend) -> None:
    """Every row of the dictionary table is an id with its own text, each id once."""
    rows = duck._con.execute('SELECT id, s FROM "_symbols" ORDER BY id').fetchall()
    assert len({i for i, _ in rows}) == len(rows)
    assert all(duck._symbol_text[i] == s for i, s in rows)


def test_an_evaluation_interrupted_after_copying_texts_leaves_one_text_per_id() -> None:
    # item: g0 holds "a", "c", "z". `before` and `first` order words by text, so the evaluation
    # copies their texts into the dictionary table; it is stopped as that copy returns, then asked
    # again. Texts copied twice would make each comparison's row come twice (a join per copy).
    # By hand: before holds a<c, a<z, c<z; first of g0 is "a".
    duck = DuckDBBackend()
    try:
        duck.load(parse_program(TEXT, "t.dl"))
        duck.add_facts("item", [("g0", "a"), ("g0", "c"), ("g0", "z")])
        con = duck._con
        duck._con = _StopAfterTextsCopy(con)  # type: ignore[assignment]  # a stand-in on purpose
        with pytest.raises(KeyboardInterrupt):
            duck.evaluate()
        duck._con = con
        duck.evaluate()
        assert duck.query("before") == [("a", "c"), ("a", "z"), ("c", "z")]
        assert duck.query("first") == [("g0", "a")]
        _one_text_per_id(duck)
    finally:
        duck.close()


def test_a_query_interrupted_after_copying_its_texts_leaves_one_text_per_id() -> None:
    # item: g0 holds "a", "c", "z". A query comparing a variable bound to the new constant "m" copies
    # the texts it may read (any id's: Y is a constant's, not a table column's), and is stopped as
    # that copy returns; the REPL then goes on with "b", another new constant, and "m" again.
    # By hand: X < "b" for X = "a" only; X < "m" for "a" and "c".
    duck = DuckDBBackend()
    try:
        duck.load(parse_program(TEXT, "t.dl"))
        duck.add_facts("item", [("g0", "a"), ("g0", "c"), ("g0", "z")])
        duck.evaluate()
        con = duck._con
        duck._con = _StopAfterTextsCopy(con)  # type: ignore[assignment]  # a stand-in on purpose
        with pytest.raises(KeyboardInterrupt):
            duck.answer(parse_query('item(G, X), Y = "m", X < Y'))
        duck._con = con
        assert duck.answer(parse_query('item(G, X), Y = "b", X < Y')) == [("g0", "a", "b")]
        assert duck.answer(parse_query('item(G, X), Y = "m", X < Y')) == [("g0", "a", "m"), ("g0", "c", "m")]
        _one_text_per_id(duck)
    finally:
        duck.close()
