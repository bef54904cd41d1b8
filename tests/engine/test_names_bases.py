"""A list of stamped names with `bases` (facts.inventory's _NodeNames: per node, the inventory's list of
the node's names, which its sequence starts with) is told node by node by those bases: another
relation's block whose nodes' sequences are those very lists gives it the ids of the slots below
`read_once_from` (no name looked up again), and the other way round. The slots from
`read_once_from` on (a list's link ids) are never taken from another list, not even one with the
same bases. The answers are what the rows say, by hand.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from engine.stamp_helpers import FLEET, Based

from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program
from verifier.engine.symbol_ids import SlotIds, SymbolIds, same_below
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text

TEXT = """
.input gpu(g: symbol)
.input link(id: symbol, a: symbol, b: symbol)
.input other(id: symbol, a: symbol)
"""


@pytest.fixture
def duck() -> Iterator[DuckDBBackend]:
    engine = DuckDBBackend()
    engine.load(parse_program(TEXT, "t.dl"))
    yield engine
    engine.close()


def _bases() -> list[Sequence[str]]:
    """Per node n (three): its GPUs n<n>/g0, n<n>/g1."""
    return [[f"n{n}/g0", f"n{n}/g1"] for n in range(3)]


def _looked_up(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every name SymbolIds.ids_into is asked for from now on."""
    asked: list[str] = []
    original = SymbolIds.ids_into

    def spy(self: SymbolIds, symbols: list[str], out: object) -> int:
        asked.extend(symbols)
        return original(self, symbols, out)  # type: ignore[arg-type]

    monkeypatch.setattr(SymbolIds, "ids_into", spy)
    return asked


def test_a_based_list_takes_the_ids_of_its_bases_slots(duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    bases = _bases()
    duck.add_facts("gpu", StampedRows([], [StampBlock(((0, 1),), (None,), bases)]))
    asked = _looked_up(monkeypatch)
    names = Based([[*b, f"n{n}/l0"] for n, b in enumerate(bases)], bases, 2)
    # link(l0, g0, g1) per node: l0 is slot 2, its ends slots 0 and 1.
    duck.add_facts("link", StampedRows([], [StampBlock(((2,), (0,), (1,)), (None, None, None), names)]))
    # The GPUs' ids came from the gpu block's list (the same bases): only the link ids were looked up.
    assert sorted(asked) == sorted(f"n{n}/l0" for n in range(3))
    duck.evaluate()
    assert sorted(duck.query("link")) == sorted((f"n{n}/l0", f"n{n}/g0", f"n{n}/g1") for n in range(3))
    assert sorted(duck.query("gpu")) == sorted((f"n{n}/g{k}",) for n in range(3) for k in range(2))


def test_slots_from_read_once_are_never_taken_from_a_list_of_the_same_bases(
    duck: DuckDBBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    bases = _bases()
    first = Based([[*b, f"n{n}/first"] for n, b in enumerate(bases)], bases, 2)
    second = Based([[*b, f"n{n}/second"] for n, b in enumerate(bases)], bases, 2)
    duck.add_facts("link", StampedRows([], [StampBlock(((2,), (0,), (1,)), (None, None, None), first)]))
    asked = _looked_up(monkeypatch)
    duck.add_facts("other", StampedRows([], [StampBlock(((2,), (0,)), (None, None), second)]))
    # Slot 2 is each list's own (first's ids are not second's): looked up; slot 0 taken from `first`.
    assert sorted(asked) == sorted(f"n{n}/second" for n in range(3))
    duck.evaluate()
    assert sorted(duck.query("other")) == sorted((f"n{n}/second", f"n{n}/g0") for n in range(3))
    assert sorted(duck.query("link")) == sorted((f"n{n}/first", f"n{n}/g0", f"n{n}/g1") for n in range(3))


def test_rows_of_tells_nodes_by_their_bases() -> None:
    bases = _bases()
    based = Based([[*b, "x"] for b in bases], bases, 2)
    plain = SlotIds(list(reversed(bases)))
    # The plain list holds the bases in reverse: node n of `based` is row 2 - n there.
    rows = plain.rows_of(based)
    assert rows is not None and rows.tolist() == [2, 1, 0]
    assert same_below(based) == 2 and same_below(bases) is None
    # Equal names but other sequences: not the same nodes.
    assert SlotIds([list(b) for b in bases]).rows_of(based) is None


def test_stamped_nodes_names_have_the_inventorys_lists_as_bases() -> None:
    inv = load_inventory_text(FLEET)
    unmade = inv.unmade_links()
    links = inventory_facts(inv)["link"]
    assert isinstance(links, StampedRows)
    names = links.blocks[0].names
    bases: list[Sequence[str]] = getattr(names, "bases", [])
    # By hand: node n's base is the inventory's list of its 4 names (itself, gpu0, gpu1, nvsw0), and its
    # sequence here is that list's names, then its two link ids.
    assert [base is unmade[f"n{n}"][1] for n, base in enumerate(bases)] == [True, True]
    assert [list(seq[:4]) == list(base) for seq, base in zip(names, bases, strict=True)] == [True, True]
    assert same_below(names) == 4
