"""switch_ports_taken (verifier/facts/switch_ports.py): a switch's fabric cables counted from wherever
they are written (a node's plan, a run of cables kept as columns, a link written alone), against the
ports of its model, without making the runs of cables or the nodes' links."""

from __future__ import annotations

import dataclasses

from verifier.core.limits import current_limits, use_limits
from verifier.facts.graph import graph_facts
from verifier.sources.inventory import load_inventory_text

# QM9700: 64 ports of 400 Gb/s = 50000 MB/s, 128 cables at most split (breakout_ports); SN5600: 64
# ports of 800 Gb/s = 100000 MB/s, 256 at most (catalog.yaml). A link of n cables and bandwidth m
# takes at least max(min(n x P, m) / P, n x 64 / B) ports.
INVENTORY = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "nic{i}", kind: nic, model: ConnectX-7, count: 2}
    links:
      - {a: nic0, b: /leaf0, kind: infiniband, bandwidth: 400 Gb/s}
      - {a: nic1, b: /leaf0, kind: infiniband, bandwidth: 200 Gb/s}
objects:
  - {name: leaf0, kind: switch, model: QM9700}
  - {name: "spine{i}", kind: switch, model: SN5600, count: 2}
  - {name: bare0, kind: switch}
  - {template: box, name: "n{i}", count: 3}
links:
  - {a: leaf0, b: "spine{s}", kind: infiniband, count: 2, bandwidth: 800 Gb/s, foreach: {s: 0..1}}
  - {a: leaf0, b: bare0, kind: infiniband, count: 3, bandwidth: 300 Gb/s, state: down}
"""


def test_counts_every_cable_at_each_switch_with_ports() -> None:
    inv = load_inventory_text(INVENTORY, "t.yaml")
    rows = graph_facts(inv, ["switch_ports_taken"])["switch_ports_taken"]
    # leaf0 (P = 50000, B = 128: a cable takes at least half a port):
    #   3 nodes' nic0 at 400 Gb/s = 50000: 3 cables, 3 x max(50000 / 50000, 1/2) = 3
    #   3 nodes' nic1 at 200 Gb/s = 25000 (a breakout leg maybe): 3 cables, 3 x max(1/2, 1/2) = 1.5
    #   2 spine links of 2 cables at 800 Gb/s = 100000: 4 cables, 2 x max(min(100000, 100000) / 50000, 1) = 4
    #   the down link to bare0, 3 cables at 300 Gb/s = 37500 in all: max(37500 / 50000, 3/2) = 1.5
    #   13 cables; 3 + 1.5 + 4 + 1.5 = 10 ports taken of 64.
    # spine0, spine1 (P = 100000, B = 256): one link of 2 cables at 100000 in all:
    #   max(min(200000, 100000) / 100000, 2 x 64 / 256) = 1 port (a 2x400G breakout of one 800G port).
    # bare0: no model, no row.
    assert rows == [("leaf0", "QM9700", 13, 10, 64), ("spine0", "SN5600", 2, 1, 64), ("spine1", "SN5600", 2, 1, 64)]


def test_leaves_the_cables_and_the_nodes_links_unmade() -> None:
    inv = load_inventory_text(INVENTORY, "t.yaml")
    runs, nodes = dict(inv.unmade_cables()), dict(inv.unmade_links())
    assert runs and nodes  # the spine run and the three nodes, as the loader keeps them
    graph_facts(inv, ["switch_ports_taken"])
    assert dict(inv.unmade_cables()) == runs
    assert dict(inv.unmade_links()) == nodes


def test_a_sum_past_64_bits_is_held_to_the_largest() -> None:
    text = """
apiVersion: topolog.dev/v1
objects:
  - {name: "leaf{i}", kind: switch, count: 12}
  - {name: spine0, kind: switch, model: QM9700}
links:
  - {a: "leaf{l}", b: spine0, kind: infiniband, count: 900000000000000000, bandwidth: 7200 Pb/s, foreach: {l: 0..11}}
"""
    # A count past template_count is refused at load (dd6d3a3) unless the limit is raised, as here.
    with use_limits(dataclasses.replace(current_limits(), template_count=10**18)):
        rows = graph_facts(load_inventory_text(text, "t.yaml"), ["switch_ports_taken"])["switch_ports_taken"]
    # 12 x 9e17 = 1.08e19 cables, past 2^63 - 1: held there. 7200 Pb/s = 9e17 B/s = 9e11 MB/s a link,
    # 9e11 / 50000 = 1.8e7 ports by bandwidth, less than 9e17 x 64 / 128 = 4.5e17 by breakout cables
    # (128 at most on 64 ports); 12 x 4.5e17 = 5.4e18 ports, under 2^63 - 1.
    assert rows == [("spine0", "QM9700", 2**63 - 1, 5_400_000_000_000_000_000, 64)]
