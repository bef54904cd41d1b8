"""graph_facts runs with the cyclic garbage collector paused (verifier.core.gc_pause): that is exact
only if it makes no reference cycle (one made meanwhile waits for the collector, or is frozen for
good at fleet scale) and it leaves the collector as it found it.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from verifier.facts.graph import NodePairs, graph_facts
from verifier.sources.inventory.loader import load_inventory

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["dgx-h100-pod", "gb200-nvl72", "mixed-fleet", "edge-soc"])
def test_graph_facts_leave_no_garbage_cycle(name: str) -> None:
    # Every graph relation and the node classes' pairs (what `place` asks for too): once its answer
    # is dropped, a full collection finds nothing unreachable that graph_facts made.
    inv = load_inventory([ROOT / "inventories" / f"{name}.yaml"])
    gc.collect()
    facts = graph_facts(inv, None, NodePairs())
    assert facts["fabric_island"] or name == "edge-soc"  # (edge-soc has no switch)
    del facts
    assert gc.collect() == 0


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was_found(enabled: bool) -> None:
    inv = load_inventory([ROOT / "inventories" / "dgx-h100-pod.yaml"])
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        graph_facts(inv, {"fabric_island"})
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
