"""Each NIC's MB/s of working fabric cables (node_fabric_islands' `uplinks`) from runs of cables not
made yet (Inventory.unmade_cables): a NIC met twice in one run, or in two runs, counts every cable."""

from __future__ import annotations

from verifier.facts.fabric_islands import down_devices, node_fabric_islands
from verifier.sources.inventory import load_inventory_text

# Three runs (foreach), 400 Gb/s each cable, which is 50,000 MB/s per direction:
# - nic0 to leaf0 and to leaf1: nic0 twice in one run;
# - nic0 and nic1 to leaf2: nic0 counted already when this run comes;
# - nic2 and nic3 each to leaf0 and leaf1 (foreach is every p with every q: four cables), none counted
#   before, each twice in the run;
# - nic4 and nic5 to leaf2: each once, none counted before.
FLEET = """apiVersion: topolog.dev/v1
objects:
  - {name: "leaf{i}", kind: switch, count: 3}
  - {name: spine0, kind: switch}
  - {name: "nic{i}", kind: nic, count: 6}
links:
  - {a: "leaf{p}", b: spine0, kind: infiniband, bandwidth: 800 Gb/s, foreach: {p: 0..2}}
  - {a: nic0, b: "leaf{p}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: 0..1}}
  - {a: "nic{p}", b: leaf2, kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: 0..1}}
  - {a: "nic{p}", b: "leaf{q}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: [2, 3], q: [0, 1]}}
  - {a: "nic{p}", b: leaf2, kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: [4, 5]}}
"""


def test_every_cable_of_a_nic_counts_whatever_run_it_is_in() -> None:
    inv = load_inventory_text(FLEET, "t.yaml")
    # The links as graph facts reads them: a placeholder per run, each run read from its columns.
    parts = list(inv.links_but(set(), cables=True).values())
    cables = inv.unmade_cables()
    assert len(parts) == len(cables) == 5  # all five written as runs: the runs' pass is what is tested
    ups: dict[str, int] = {}
    rows, island = node_fabric_islands(inv, parts, lambda _oid: None, ups, down_devices(inv), cables)
    # nic0: leaf0, leaf1 and leaf2, 3 x 50,000; nic2, nic3: 2 x 50,000; the others one cable each.
    # A switch's sum is never kept (only a node's NICs are read from it).
    want = {"nic0": 150_000, "nic1": 50_000, "nic2": 100_000, "nic3": 100_000, "nic4": 50_000, "nic5": 50_000}
    assert ups == want
    # Every leaf is cabled to spine0: one island, named by its smallest switch id.
    assert island == dict.fromkeys(["leaf0", "leaf1", "leaf2", "spine0"], "leaf0")
    assert rows == []  # no NIC is in a node
