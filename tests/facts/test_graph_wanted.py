"""graph_facts gives each relation the same rows whatever else is wanted with it.

The per-node relations skip work only gpu_fabric_bottleneck reads (adding up every NIC's fabric
cables) when it is not wanted: the other relations must not change with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.facts.graph import NODE_RELATIONS, graph_facts
from verifier.sources.inventory.loader import load_inventory

ROOT = Path(__file__).resolve().parents[2]
INVENTORIES = sorted((ROOT / "inventories").glob("*.yaml"))


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: p.name)
def test_per_node_rows_do_not_depend_on_the_fabric_share_being_wanted(path: Path) -> None:
    every = graph_facts(load_inventory([path]))
    others = NODE_RELATIONS - {"gpu_fabric_bottleneck"}
    alone = graph_facts(load_inventory([path]), others)
    for rel in sorted(others):
        assert sorted(alone[rel]) == sorted(every[rel]), rel
    assert not alone["gpu_fabric_bottleneck"]  # not wanted: none made
    # Every inventory with a fabric has GPUs that reach it through a NIC (held by hand in
    # test_graph_facts); here only that the relation is there when wanted.
    if path.name in ("dgx-h100-pod.yaml", "mixed-fleet.yaml"):
        assert every["gpu_fabric_bottleneck"]
