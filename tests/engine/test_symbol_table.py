"""The DuckDB engine's symbol table against a dict that interns strings one at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verifier.engine.symbol_table as symbol_table
from verifier.core.errors import EngineError
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program
from verifier.engine.symbol_table import MIN_SIZE, SMALL_BATCH, SymbolTable


def _interned_one_by_one(batches: list[list[str]]) -> tuple[dict[str, int], list[list[int]], list[int]]:
    """The reference: each new string of each batch, in order, takes the next id."""
    ids: dict[str, int] = {}
    outs: list[list[int]] = []
    added: list[int] = []
    for batch in batches:
        before = len(ids)
        outs.append([ids.setdefault(s, len(ids)) for s in batch])
        added.append(len(ids) - before)
    return ids, outs, added


def _collide_mod(buckets: int) -> Callable[[str], int]:
    """A hash that puts every string into one of `buckets` values: equal hashes, different texts."""
    return lambda s: sum(map(ord, s)) % buckets


def _check(batches: list[list[str]], hash_of: Callable[[str], int]) -> SymbolTable:
    table = SymbolTable(hash_of)
    expected_ids, expected_outs, expected_added = _interned_one_by_one(batches)
    for batch, want, count in zip(batches, expected_outs, expected_added, strict=True):
        out = numpy.full(len(batch), -7, dtype=numpy.int64)
        assert table.ids_into(batch, out) == count
        assert out.tolist() == want
    assert table.text == list(expected_ids)
    assert {s: table.get(s) for s in expected_ids} == expected_ids
    return table


symbols = st.text(alphabet="abc/-\u00e9", min_size=0, max_size=4)
batches = st.lists(st.lists(symbols, min_size=0, max_size=60), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(batches=batches, buckets=st.sampled_from([1, 2, 7, 2**61]), small=st.sampled_from([0, 3, SMALL_BATCH]))
def test_ids_are_those_of_interning_one_at_a_time(batches: list[list[str]], buckets: int, small: int) -> None:
    # With 1 or 2 buckets every string shares its hash with many others: only the text tells them
    # apart, in a lookup and between the new strings of one batch. 2**61 buckets: hardly any collide.
    # small: batches up to this many strings go one by one, longer ones in probe rounds (0: all in rounds).
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(symbol_table, "SMALL_BATCH", small)
        table = _check(batches, _collide_mod(buckets))
    assert table.get("never seen") is None and "never seen" not in table


@pytest.fixture(params=[0, SMALL_BATCH], ids=["rounds", "one-by-one"])
def small(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(symbol_table, "SMALL_BATCH", request.param)
    return int(request.param)


def test_a_batch_with_copies_and_known_strings_numbers_new_ones_by_first_appearance(small: int) -> None:
    # Batch 1: x. Batch 2: p (new, 1), x (0), q (new, 2), p again (1), r (new, 3), q again (2).
    table = _check([["x"], ["p", "x", "q", "p", "r", "q"]], hash)
    assert table.text == ["x", "p", "q", "r"]


def test_strings_with_one_hash_in_one_batch_are_told_apart_by_text(small: int) -> None:
    # Every string hashes to 0: "ab" and "ba" are different symbols, the second "ab" a copy of the first.
    table = _check([["ab", "ba", "ab", "b", "ba"]], lambda s: 0)
    assert table.text == ["ab", "ba", "b"]
    assert [table.get(s) for s in ("ab", "ba", "b", "a")] == [0, 1, 2, None]


def test_the_table_grows_and_keeps_every_id(small: int) -> None:
    # 5 * MIN_SIZE distinct strings in batches of 1,000: the table is resized several times on the way.
    strings = [f"n{i:05d}/gpu{i % 8}" for i in range(5 * MIN_SIZE)]
    table = _check([strings[i : i + 1000] for i in range(0, len(strings), 1000)], hash)
    assert len(table._slots) >= 4 * len(strings) // 2
    assert table.get(strings[-1]) == len(strings) - 1 and table.get(strings[0]) == 0


def test_add_and_get_one_symbol() -> None:
    table = SymbolTable(_collide_mod(3))
    assert table.add("a") == 0 and table.add("b") == 1 and table.add("a") == 0
    assert table.get("b") == 1 and table.get("c") is None and len(table) == 2
    assert 5 not in table
    # One at a time past the first size: the table grows under add too.
    assert [table.add(f"s{i}") for i in range(MIN_SIZE)] == list(range(2, MIN_SIZE + 2))
    assert table.get("s0") == 2 and table.get("a") == 0


@pytest.mark.parametrize("buckets", [1, 2**61])
def test_truncate_forgets_the_symbols_from_an_id_on(buckets: int, small: int) -> None:
    table = SymbolTable(_collide_mod(buckets))
    table.ids_into(["a", "b", "c"], numpy.empty(3, dtype=numpy.int64))
    table.ids_into([f"s{i}" for i in range(3 * MIN_SIZE)], numpy.empty(3 * MIN_SIZE, dtype=numpy.int64))
    table.truncate(2)
    assert table.text == ["a", "b"]
    assert [table.get(s) for s in ("a", "b", "c", "s0", f"s{3 * MIN_SIZE - 1}")] == [0, 1, None, None, None]
    # What was forgotten comes back with the next ids.
    out = numpy.empty(3, dtype=numpy.int64)
    assert table.ids_into(["s0", "a", "c"], out) == 2
    assert out.tolist() == [2, 0, 3]


def test_a_table_left_half_way_through_a_batch_is_rebuilt_by_truncate(monkeypatch: pytest.MonkeyPatch) -> None:
    # An interruption after free entries were claimed for a batch but before its ids were written
    # there: truncate builds the table again from the ids kept, so no claimed entry is left behind.
    monkeypatch.setattr(symbol_table, "SMALL_BATCH", 0)
    table = SymbolTable()
    table.ids_into(["a", "b"], numpy.empty(2, dtype=numpy.int64))
    place_new = table._place_new

    def claimed_then_stopped(*args: Any) -> Any:
        place_new(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(table, "_place_new", claimed_then_stopped)
    with pytest.raises(KeyboardInterrupt):
        table.ids_into(["c", "d"], numpy.empty(2, dtype=numpy.int64))
    assert int((table._slots == -2).sum()) == 2
    table.truncate(2)
    assert int((table._slots == -2).sum()) == 0
    assert [table.get(s) for s in ("a", "b", "c", "d")] == [0, 1, None, None]


def test_the_engine_refuses_facts_past_the_id_limit_with_an_engine_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # MAX_IDS 3: x, y and z take ids 0-2; a fourth symbol is refused with an EngineError naming the
    # relation (no traceback at the CLI), and the engine keeps the three symbols it had.
    monkeypatch.setattr(symbol_table, "MAX_IDS", 3)
    engine = DuckDBBackend()
    engine.load(parse_program(".input u(a: symbol)\n"))
    engine.add_facts("u", [("x",), ("y",), ("z",)])
    with pytest.raises(EngineError, match="the facts of u bring more than 3 distinct symbols"):
        engine.add_facts("u", [("x",), ("w",)])
    assert engine._symbol_text == ["x", "y", "z"]
    assert engine.query("u") == [("x",), ("y",), ("z",)]
    engine.close()
