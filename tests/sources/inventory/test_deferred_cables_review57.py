"""Review 57 of the deferred cables (Inventory.unmade_cables): node_fabric_islands reads a run whose
cables are not all working NIC-to-switch or all switch-to-switch cable by cable, as it reads made links."""

from __future__ import annotations

from verifier.facts.graph import graph_facts
from verifier.sources.inventory import load_inventory_text

TEXT = """apiVersion: topolog.dev/v1
objects:
  - {name: "zl{i}", kind: switch, count: 3, overrides: {zl1: {state: down}}}
  - {name: "n{i}", kind: node, count: 4, children: [{name: nic0, kind: nic}]}
links:
  - {a: "n{i}/nic0", b: "zl{i}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: 0..1}}
  - {a: "zl{i}", b: "n{i}/nic0", kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: [2]}}
  - {a: "zl{i}", b: "zl{j}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: [0], j: 1..2}}
  - {a: "n{i}/nic0", b: "n0/nic0", kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: [3]}}
"""


def test_mixed_runs_are_read_cable_by_cable() -> None:
    inv = load_inventory_text(TEXT, "t.yaml")
    # Four foreaches, each one run not made yet (every end an object, no loop, no id twice).
    assert [run[0] for run in inv.unmade_cables().values()] == [
        ["n0/nic0<->zl0", "n1/nic0<->zl1"],
        ["zl2<->n2/nic0"],
        ["zl0<->zl1", "zl0<->zl2"],
        ["n3/nic0<->n0/nic0"],
    ]
    facts = graph_facts(inv, {"node_fabric_island"})
    # Run 1 (NIC to switch, but zl1 is down, so read cable by cable): n0 reaches zl0; n1's one cable
    # is to a switch that is down and carries nothing. Run 2 is written switch first: n2 reaches zl2.
    # Run 3 joins zl0 and zl2 (zl0-zl1 carries nothing): one island, named by its smallest switch
    # id, zl0. Run 4 joins two NICs (no switch). So n0, n2 are on zl0; n1 and n3 have a NIC and no
    # working cable to a switch: island "".
    assert facts["node_fabric_island"] == [("n0", "zl0"), ("n1", ""), ("n2", "zl0"), ("n3", "")]
    assert inv.unmade_cables()  # read from the columns: none made
