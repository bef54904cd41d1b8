"""Trying to break the DuckDB engine's symbol table (verifier/engine/symbol_table.py).

A wrong id silently changes answers: two symbols merged into one, a symbol given two ids, an id
read back as another text. Every test compares the table with the reference it replaces, a dict
interning the strings one at a time (a new string takes the next id, in order of first appearance),
on inputs chosen to reach its corners: hashes that collide (equal, or equal modulo every table size),
a table resized in the middle of a batch, batches repeating strings or mixing known and new ones,
strings a byte apart (a trailing NUL), lone surrogates, very long strings, an interrupted batch.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verifier.engine.symbol_table as symbol_table
from verifier.engine.symbol_table import MIN_SIZE, SMALL_BATCH, SymbolTable

# Strings that differ only in a trailing NUL, lone surrogates (what surrogateescape gives a file
# name that is not UTF-8), astral and non-ASCII characters, the empty string, a long string.
TRICKY = [
    "",
    "\x00",
    "a",
    "a\x00",
    "a\x00\x00",
    "\udc80",
    "\udcff",
    "\ud800",
    "é",
    "e\u0301",
    "\U0001f600",
    "x" * 100_000,
]


def _reference(batches: list[list[str]]) -> tuple[list[str], list[list[int]], list[int]]:
    """Each batch's ids and new-symbol count when a dict interns every string one at a time."""
    ids: dict[str, int] = {}
    outs: list[list[int]] = []
    added: list[int] = []
    for batch in batches:
        before = len(ids)
        outs.append([ids.setdefault(s, len(ids)) for s in batch])
        added.append(len(ids) - before)
    return list(ids), outs, added


def _run(table: SymbolTable, batches: list[list[str]]) -> None:
    """Feed `batches` to `table` and hold every answer to the reference's."""
    text, outs, added = _reference(batches)
    for batch, want, count in zip(batches, outs, added, strict=True):
        out = numpy.full(len(batch), -7, dtype=numpy.int64)
        assert table.ids_into(batch, out) == count
        assert out.tolist() == want
    assert table.text == text
    # Every symbol found again alone, and through a batch of all of them in reverse (the rounds).
    assert [table.get(s) for s in text] == list(range(len(text)))
    again = numpy.empty(len(text), dtype=numpy.int64)
    assert table.ids_into(text[::-1], again) == 0
    assert again.tolist() == list(range(len(text)))[::-1]


@pytest.fixture(params=[0, SMALL_BATCH], ids=["rounds", "one-by-one"])
def small(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    monkeypatch.setattr(symbol_table, "SMALL_BATCH", request.param)
    yield int(request.param)


def _same_modulo_every_size(s: str) -> int:
    # Distinct hashes for distinct lengths, all multiples of 2**40: equal modulo every table size
    # up to 2**40 entries, so every string probes from entry 0 and only the full hash and the
    # text tell them apart. Negative for odd lengths (Python's hash is signed).
    return (len(s) << 40) * (-1 if len(s) % 2 else 1)


def test_tricky_strings_are_all_distinct_symbols(small: int) -> None:
    # 12 distinct strings (TRICKY has no two equal): 12 ids in order, the batch of 24 repeats each.
    table = SymbolTable()
    _run(table, [TRICKY, TRICKY[::-1] + TRICKY])
    assert len(table) == len(TRICKY)


@pytest.mark.parametrize(
    "hash_of", [lambda s: 0, _same_modulo_every_size, lambda s: -1], ids=["zero", "modulo", "minus-one"]
)
def test_tricky_strings_with_colliding_hashes(small: int, hash_of: Callable[[str], int]) -> None:
    _run(SymbolTable(hash_of), [TRICKY[:6], TRICKY + TRICKY[:6], ["never", *TRICKY]])


def test_growth_in_the_middle_of_a_batch_mixing_known_new_and_repeated_strings(small: int) -> None:
    # 400 known strings, then one batch of 900: 300 known ones, 400 new ones each twice, the
    # strings interleaved. 400 + 400 symbols need 1,600 entries: the 1,024-entry table is resized
    # inside the batch (2 * 800 > 1,024). Ids of the new ones: 400.. in order of first appearance.
    known = [f"k{i}" for i in range(400)]
    new = [f"n{i}" for i in range(400)]
    batch = [s for i in range(400) for s in (new[i], known[i % 300], new[i])][:900]
    table = SymbolTable()
    _run(table, [known, batch])
    assert len(table._slots) > MIN_SIZE


def test_growth_with_every_hash_colliding_modulo_the_table(small: int) -> None:
    # Hashes i * 2**20: all equal modulo 1,024, 2,048 ... up to 2**20 entries, all different.
    # 1,500 strings in batches of 500, then all of them again plus 100 new ones: each probe runs
    # along one cluster of up to 1,600 taken entries, through two resizes.
    strings = [f"s{i}" for i in range(1_600)]
    index = {s: i for i, s in enumerate(strings)}
    table = SymbolTable(lambda s: index[s] << 20)
    _run(table, [strings[0:500], strings[500:1000], strings[1000:1500], strings[::-1]])


def test_real_hashes_colliding_modulo_the_table_size(small: int) -> None:
    # Python's own hash, the strings picked so that all of them share the same low 10 bits: they
    # collide in the first table without a hash_of made up for the test.
    picked = [s for s in (f"gpu-{i}" for i in range(400_000)) if hash(s) & (MIN_SIZE - 1) == 0][:150]
    assert len(picked) == 150  # about 390 of 400,000 strings qualify, whatever the seed
    _run(SymbolTable(), [picked[:75], picked + picked[:20]])


def _zero(s: str) -> int:
    return 0


def _low_bits(s: str) -> int:
    return hash(s) & 7


symbols = st.sampled_from(TRICKY[:-1]) | st.text(alphabet="a\x00\udc80é\U0001f600", max_size=3)


@settings(max_examples=150, deadline=None)
@given(
    batches=st.lists(st.lists(symbols, max_size=300), min_size=1, max_size=5),
    hash_kind=st.sampled_from(["python", "zero", "modulo", "low-bits"]),
    small=st.sampled_from([0, 3, SMALL_BATCH]),
)
def test_any_batches_of_tricky_strings_get_the_ids_of_a_dict(
    batches: list[list[str]], hash_kind: str, small: int
) -> None:
    # "low-bits": only 3 bits of Python's hash kept, so many unrelated strings collide at once.
    hashes: dict[str, Callable[[str], int]] = {
        "python": hash,
        "zero": _zero,
        "modulo": _same_modulo_every_size,
        "low-bits": _low_bits,
    }
    hash_of = hashes[hash_kind]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(symbol_table, "SMALL_BATCH", small)
        # MIN_SIZE 8: batches of up to 300 strings resize the table several times inside a batch.
        patch.setattr(symbol_table, "MIN_SIZE", 8)
        _run(SymbolTable(hash_of), batches)


def _seeded(seed: int, s: str) -> int:
    return hash((seed, s))


def test_ids_do_not_depend_on_the_hash_seed(small: int) -> None:
    # Two "seeds": hashes that differ for every string. Ids are by first appearance only.
    strings = [f"n{i % 700}" for i in range(2_000)] + TRICKY
    tables = [SymbolTable(functools.partial(_seeded, seed)) for seed in (1, 2)]
    outs = []
    for table in tables:
        out = numpy.empty(len(strings), dtype=numpy.int64)
        table.ids_into(strings, out)
        outs.append(out.tolist())
    assert outs[0] == outs[1]
    assert tables[0].text == tables[1].text


class _StopAfterClaims:
    """numpy, but `numpy.minimum.at` (the claims of free entries) raises after its first call, as a
    KeyboardInterrupt landing between the claims and their release would."""

    def __init__(self) -> None:
        self.calls = 0
        outer = self

        class _Minimum:
            def at(self, *args: Any) -> None:
                numpy.minimum.at(*args)
                outer.calls += 1
                raise KeyboardInterrupt

        self.minimum = _Minimum()

    def __getattr__(self, name: str) -> Any:
        return getattr(numpy, name)


def test_a_batch_interrupted_while_claiming_entries_leaves_no_claim_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every string hashes to 0, so all of them probe from entry 0: "a" at 0, "b" at 1. The batch
    # [c, d] claims entry 2 and is interrupted before the claim is released. After truncate (what
    # the engine does on a failed load) the next strings must still go to the first free entries:
    # a string left past a free entry is never found again, and is given a second id.
    monkeypatch.setattr(symbol_table, "SMALL_BATCH", 0)
    table = SymbolTable(lambda s: 0)
    table.ids_into(["a", "b"], numpy.empty(2, dtype=numpy.int64))
    stopper = _StopAfterClaims()
    monkeypatch.setattr(symbol_table, "numpy", stopper)
    with pytest.raises(KeyboardInterrupt):
        table.ids_into(["c", "d"], numpy.empty(2, dtype=numpy.int64))
    monkeypatch.setattr(symbol_table, "numpy", numpy)
    assert stopper.calls == 1
    table.truncate(2)
    # The next batch's first new string is its second ("a" is known): it must take entry 2, whose
    # stale claim (batch index 0, "c") is lower than its own index.
    _run_from(table, ["a", "b"], [["a", "e", "f"], ["f", "e", "g"]])


def _run_from(table: SymbolTable, held: list[str], batches: list[list[str]]) -> None:
    """`_run` for a table already holding `held` (ids 0..)."""
    text, outs, added = _reference([held, *batches])
    for batch, want, count in zip(batches, outs[1:], added[1:], strict=True):
        out = numpy.empty(len(batch), dtype=numpy.int64)
        assert table.ids_into(batch, out) == count
        assert out.tolist() == want
    assert table.text == text
    assert [table.get(s) for s in text] == list(range(len(text)))


def test_more_ids_than_max_ids_are_refused_with_nothing_added(small: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # MAX_IDS 4: ids 0..3 are given, a fifth symbol is refused (never wrapped to a negative id or
    # to 0), and the table holds what it held before the refused batch.
    monkeypatch.setattr(symbol_table, "MAX_IDS", 4)
    table = SymbolTable()
    out = numpy.empty(3, dtype=numpy.int64)
    assert table.ids_into(["a", "b", "c"], out) == 3
    with pytest.raises(OverflowError, match="more than 4 distinct symbols"):
        table.ids_into(["a", "d", "e"], numpy.empty(3, dtype=numpy.int64))
    if small:  # one by one: "d" took the last id before "e" was refused; the engine truncates
        table.truncate(3)
    assert table.text == ["a", "b", "c"] and table.get("d") is None
    assert table.add("d") == 3
    with pytest.raises(OverflowError):
        table.add("e")
    assert table.text == ["a", "b", "c", "d"] and table.get("e") is None
    # Known symbols are still given their ids at the limit.
    assert table.ids_into(["d", "a", "d"], out) == 0 and out.tolist() == [3, 0, 3]


def test_a_batch_repeating_one_new_symbol_at_the_limit_is_not_refused(
    small: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # MAX_IDS 4, ids 0..2 given: a batch of 200 strings that are "d" 190 times and 10 known ones
    # brings one new symbol (id 3, the last one allowed), as interning one at a time gives it.
    # Counting the batch's 190 missing strings instead of its 1 distinct one would refuse it.
    monkeypatch.setattr(symbol_table, "MAX_IDS", 4)
    table = SymbolTable()
    table.ids_into(["a", "b", "c"], numpy.empty(3, dtype=numpy.int64))
    _run_from(table, ["a", "b", "c"], [["d"] * 190 + ["a", "b"] * 5])
    with pytest.raises(OverflowError):
        table.ids_into(["e"] * 200, numpy.empty(200, dtype=numpy.int64))


class _StopInResize:
    """numpy, but `numpy.full` raises once the table's entries were replaced by a bigger array: a
    KeyboardInterrupt landing inside `_resize` after the new table but before its new claims."""

    def __init__(self, table: SymbolTable) -> None:
        self.table, self.size, self.stopped = table, len(table._slots), False

    def full(self, *args: Any, **kwargs: Any) -> Any:
        if len(self.table._slots) != self.size and not self.stopped:
            self.stopped = True
            raise KeyboardInterrupt
        return numpy.full(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(numpy, name)


def test_a_batch_interrupted_inside_a_resize_is_undone_by_truncate(small: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # 300 symbols held (the table of 1,024 entries grows past 512), then 400 new ones: the table is
    # resized, and stopped between its new entries and its new claims. truncate (what the engine
    # does on a failed load) must leave a table that finds the 300 and numbers the next ones.
    table = SymbolTable()
    held = [f"h{i}" for i in range(300)]
    table.ids_into(held, numpy.empty(300, dtype=numpy.int64))
    stopper = _StopInResize(table)
    monkeypatch.setattr(symbol_table, "numpy", stopper)
    with pytest.raises(KeyboardInterrupt):
        if small:  # one at a time: the 213th new symbol (the 513th in all) resizes the table inside add()
            for i in range(400):
                table.add(f"n{i}")
        else:
            table.ids_into([f"n{i}" for i in range(400)], numpy.empty(400, dtype=numpy.int64))
    monkeypatch.setattr(symbol_table, "numpy", numpy)
    assert stopper.stopped
    table.truncate(300)
    _run_from(table, held, [[f"n{i}" for i in range(400)] + held[:10], ["x", "n0", "y"]])
