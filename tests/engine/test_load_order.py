"""The order a DuckDB engine is given the relations in (backend.load_order): `object` first, whose
inventory blocks say which of a node's names other relations read again, then the rest by name.

Given first, the nodes' names go into the symbol dictionary in its pass for new names; a later
block of another list holding the same nodes' sequences (authorization's GPUs: authz_class, first
by name) finds them there and defers none of them. In name order that block came first and its
GPU names were deferred (SymbolIds.defer), which the relations after it undid. The answers are the
same either way.

DEFER_AT is lowered so that two nodes' GPU names make a deferred batch.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from engine.stamp_helpers import FLEET

from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine import symbol_ids
from verifier.engine.ast import Row
from verifier.engine.backend import load_order
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text

TEXT = """
.input object(id: symbol, kind: symbol)
.input authz_class(gpu: symbol, class: symbol)
.decl classed(kind: symbol, class: symbol)
classed(K, C) :- object(G, K), authz_class(G, C).
"""


@pytest.fixture(autouse=True)
def _small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symbol_ids, "DEFER_AT", 4)


def test_object_comes_first_then_the_others_by_name() -> None:
    # By hand: object, then authz_class < label < parent (by name).
    assert load_order({"parent": [], "label": [], "object": [], "authz_class": []}) == [
        "object",
        "authz_class",
        "label",
        "parent",
    ]
    # No object: only by name.
    assert load_order(["quantity", "authz_class", "model"]) == ["authz_class", "model", "quantity"]
    assert load_order([]) == []


def _gpu_block(names: list[Sequence[str]]) -> StampBlock:
    """authz_class(gpu, "c") for each node's two GPUs (slots 1, 2 of FLEET's lists: n, n/gpu0, n/gpu1, n/nvsw0),
    a plain list holding the inventory's own sequences of names, as authorization's GPU blocks do."""
    return StampBlock(((1, 2), None), (None, ("c", "c")), names)


def _load(order: list[str]) -> tuple[list[object], list[Row], list[Row]]:
    """Load FLEET's objects and the GPU block in `order`: the deferred batches left, object's rows, classed's."""
    inv = load_inventory_text(FLEET)
    objects = inventory_facts(inv)["object"]
    names: list[Sequence[str]] = [inv.unmade_links()[n][1] for n in ("n0", "n1")]
    given = {"object": objects, "authz_class": StampedRows([], [_gpu_block(names)])}
    duck = DuckDBBackend()
    try:
        duck.load(parse_program(TEXT, "t.dl"))
        for relation in order:
            duck.add_facts(relation, given[relation])
        duck.evaluate()
        return list(duck._symbol_ids._deferred), duck.query("object"), duck.query("classed")
    finally:
        duck.close()


def test_objects_first_leave_no_gpu_name_deferred_and_the_same_answers() -> None:
    first, objects, classed = _load(load_order(["authz_class", "object"]))
    # In name order the GPU block comes first: its 4 new GPU names (2 nodes x 2, DEFER_AT 4) are a batch.
    by_name, objects_by_name, classed_by_name = _load(["authz_class", "object"])
    assert first == []
    assert len(by_name) == 1
    # By hand: per node n0, n1 the node, two GPUs and an NVSwitch; classed: every GPU is of class c.
    expected = sorted(
        [(f"n{n}", "node") for n in range(2)]
        + [(f"n{n}/gpu{g}", "gpu") for n in range(2) for g in range(2)]
        + [(f"n{n}/nvsw0", "nvswitch") for n in range(2)]
    )
    assert objects == objects_by_name == expected
    assert classed == classed_by_name == [("gpu", "c")]
