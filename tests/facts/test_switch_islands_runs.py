"""fabric_island reads the runs of cables a foreach made (Inventory.unmade_cables) from their
columns: the islands are those of the cables made one by one, and no cable is made for them."""

from __future__ import annotations

import pytest

import verifier.facts.graph as graph
from verifier.facts.graph import graph_facts
from verifier.sources.inventory import load_inventory_text

# Four runs of InfiniBand cables (foreach: runs not made yet; Ethernet runs are made at once):
# - leaf0, leaf1 to spine0, working: one island of the three, named by its least id, leaf0;
# - leaf0, leaf1 to spine1, the cables marked down: they join nothing, spine1 stays alone;
# - leaf0, leaf1 to spine2, a switch marked down: its cables carry nothing, spine2 stays alone;
# - n0's and n1's NIC to spine3: a NIC is no switch, so spine3 stays alone too.
TEXT = """apiVersion: topolog.dev/v1
objects:
  - {name: "leaf{i}", kind: switch, count: 2}
  - {name: spine0, kind: switch}
  - {name: spine1, kind: switch}
  - {name: spine2, kind: switch, state: down}
  - {name: spine3, kind: switch}
  - name: n0
    kind: node
    children:
      - {name: nic0, kind: nic}
  - name: n1
    kind: node
    children:
      - {name: nic0, kind: nic}
links:
  - {a: "leaf{i}", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: 0..1}}
  - {a: "leaf{i}", b: spine1, kind: infiniband, bandwidth: 400 Gb/s, state: down, foreach: {i: 0..1}}
  - {a: "leaf{i}", b: spine2, kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: 0..1}}
  - {a: "n{i}/nic0", b: spine3, kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: 0..1}}
"""

EXPECTED = [
    ("leaf0", "leaf0"),
    ("leaf1", "leaf0"),
    ("spine0", "leaf0"),
    ("spine1", "spine1"),
    ("spine2", "spine2"),
    ("spine3", "spine3"),
]


def test_runs_join_islands_from_their_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    inv = load_inventory_text(TEXT, "t.yaml")
    assert len(inv.unmade_cables()) == 4  # each foreach one run, none made

    def made(_run: object) -> None:
        raise AssertionError("a run's cables were made for the fabric islands")

    monkeypatch.setattr(graph, "cables_of", made)
    assert graph_facts(inv, {"fabric_island"})["fabric_island"] == EXPECTED


def test_the_same_islands_once_the_cables_are_made() -> None:
    inv = load_inventory_text(TEXT, "t.yaml")
    assert len(inv.links) == 8  # read: every run made in its place
    assert inv.unmade_cables() == {}
    assert graph_facts(inv, {"fabric_island"})["fabric_island"] == EXPECTED
