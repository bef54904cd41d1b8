"""A list of stamped names may say from which slot on its names are read by its own blocks alone
(`read_once_from`: a plan's link ids, after its nodes' objects). The DuckDB engine defers only those
(SymbolIds.defer: ids by position, no dict entry each); the names before that slot, which other
relations read too, go into the dictionary at once, as every relation's names. A list that says
nothing has every new slot deferred, as before. The answers are the memory engine's either way.

DEFER_AT is lowered so that three nodes' names make a deferred batch.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from engine.stamp_helpers import FLEET, ReadOnce, memory_answers

from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine import symbol_ids
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text

TEXT = """
.input link(id: symbol, a: symbol, b: symbol, mbps: number)
.decl into(b: symbol, s: number)
into(B, sum(M)) :- link(_, _, B, M).
"""


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
    """Per node n: GPUs n<n>/g0, /g1 (slots 0, 1), then links n<n>/l0, /l1 (slots 2, 3)."""
    return [[f"n{n}/g0", f"n{n}/g1", f"n{n}/l0", f"n{n}/l1"] for n in range(3)]


def _links(names: list[Sequence[str]]) -> StampBlock:
    """link(id, a, b, mbps) per node: l0 from g0 to g1 at 100, l1 from g1 to g0 at 50."""
    return StampBlock(((2, 3), (0, 1), (1, 0), None), (None, None, None, (100, 50)), names)


Row = tuple[str | int, ...]


def _rows() -> list[Row]:
    """By hand: per node n, link(n<n>/l0, n<n>/g0, n<n>/g1, 100) and link(n<n>/l1, n<n>/g1, n<n>/g0, 50)."""
    out: list[Row] = []
    for n in range(3):
        out += [(f"n{n}/l0", f"n{n}/g0", f"n{n}/g1", 100), (f"n{n}/l1", f"n{n}/g1", f"n{n}/g0", 50)]
    return out


def _check(duck: DuckDBBackend) -> None:
    """The rows and sums by hand (into: n<n>/g1 is l0's b at 100, n<n>/g0 is l1's at 50), as the memory engine's."""
    duck.evaluate()
    into = [(f"n{n}/g1", 100) for n in range(3)] + [(f"n{n}/g0", 50) for n in range(3)]
    assert sorted(duck.query("link")) == sorted(_rows())
    assert sorted(duck.query("into")) == sorted(into)
    memory = memory_answers(TEXT, ("link", "into"), [("link", _rows())])
    assert sorted(memory["link"]) == sorted(_rows())
    assert sorted(memory["into"]) == sorted(into)


def test_only_the_names_read_once_are_deferred(duck: DuckDBBackend) -> None:
    duck.add_facts("link", StampedRows([], [_links(ReadOnce(_names(), 2))]))
    known = duck._symbol_ids
    # The GPUs (slots 0, 1: before read_once_from) are in the dictionary; the six link ids (slots 2, 3
    # of three nodes, past DEFER_AT 4) are not, yet each has an id, found by its text.
    assert all(f"n{n}/g{k}" in known for n in range(3) for k in range(2))
    assert not any(f"n{n}/l{k}" in known for n in range(3) for k in range(2))
    assert None not in [known.find(f"n{n}/l{k}") for n in range(3) for k in range(2)]
    _check(duck)


def test_a_list_that_says_nothing_has_every_new_slot_deferred(duck: DuckDBBackend) -> None:
    duck.add_facts("link", StampedRows([], [_links(_names())]))
    known = duck._symbol_ids
    # All four slots of the three nodes are new: one batch of twelve names, none in the dictionary.
    assert not any(f"n{n}/{x}" in known for n in range(3) for x in ("g0", "g1", "l0", "l1"))
    _check(duck)


def test_stamped_nodes_names_say_their_link_ids_are_read_once() -> None:
    facts = inventory_facts(load_inventory_text(FLEET))
    links = facts["link"]
    assert isinstance(links, StampedRows)
    assert len(links.blocks) == 1
    names = links.blocks[0].names
    # By hand: a node's own names are itself, gpu0, gpu1 and nvsw0 (4 slots); its two links, named
    # by their ends, come after them.
    assert getattr(names, "read_once_from", None) == 4
    assert [set(node[:4]) for node in names] == [{f"n{n}", f"n{n}/gpu0", f"n{n}/gpu1", f"n{n}/nvsw0"} for n in range(2)]
    assert [list(node[4:]) for node in names] == [
        [f"n{n}/gpu0<->n{n}/nvsw0", f"n{n}/gpu1<->n{n}/nvsw0"] for n in range(2)
    ]
