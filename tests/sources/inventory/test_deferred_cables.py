"""A foreach's cables made in one pass are kept as one run of columns until `links` is read
(Inventory.unmade_cables): the inventory answers about them, and their facts, as if they were made."""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.facts.graph import graph_facts
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text

HEAD = """apiVersion: topolog.dev/v1
objects:
  - {name: "p{i}", kind: switch, count: 2}
  - {name: spine0, kind: switch}
links:
  - {a: p0, b: p1, kind: ethernet, bandwidth: 100 Gb/s}
  - {a: "p{p}", b: spine0, kind: ethernet, bandwidth: 100 Gb/s, state: down, labels: {cable: c1}, foreach: {p: 0..1}}
"""
# Line 1 is apiVersion: the foreach is written on line 7.
FOREACH_LINE = 7


def test_cables_wait_in_their_place_and_are_answered_for() -> None:
    inv = load_inventory_text(HEAD, "t.yaml")
    runs = inv.unmade_cables()
    # The foreach's two cables (p0, p1 to spine0) are one run not made yet; p0-p1 is written alone.
    assert [run[0] for run in runs.values()] == [["p0<->spine0", "p1<->spine0"]]
    assert inv.has_link("p1<->spine0") and not inv.has_link("p1<->spine1")
    assert inv.location("p1<->spine0").line == FOREACH_LINE
    links = inv.links  # made now, in the order written
    assert list(links) == ["p0<->p1", "p0<->spine0", "p1<->spine0"]
    cable = links["p1<->spine0"]
    # 100 Gb/s is 12,500 MB/s per direction.
    assert (cable.a, cable.b, cable.kind, cable.mbps, cable.state) == ("p1", "spine0", "ethernet", 12_500, "down")
    assert dict(cable.labels) == {"cable": "c1"} and cable.loc.line == FOREACH_LINE
    assert inv.unmade_cables() == {}


def test_a_link_written_later_with_a_cable_id_is_a_duplicate() -> None:
    text = HEAD + '  - {id: "p0<->spine0", a: p0, b: p1, kind: ethernet, bandwidth: 100 Gb/s}\n'
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    assert "duplicate link id 'p0<->spine0'" in str(err.value)


def test_a_later_cable_between_the_same_ends_takes_a_free_id() -> None:
    # The second foreach joins the same ends: its ids are taken by the first run, so each gets "#2".
    text = HEAD + '  - {a: "p{p}", b: spine0, kind: ethernet, bandwidth: 100 Gb/s, foreach: {p: 0..1}}\n'
    inv = load_inventory_text(text, "t.yaml")
    assert list(inv.links) == ["p0<->p1", "p0<->spine0", "p1<->spine0", "p0<->spine0#2", "p1<->spine0#2"]


def test_the_facts_of_cables_not_made_are_their_rows() -> None:
    inv = load_inventory_text(HEAD, "t.yaml")
    assert inv.unmade_cables()
    facts = inventory_facts(inv)
    # Ethernet between two switches stays ethernet (RoCE is only between GPUs of one node).
    assert list(facts["link"]) == [
        ("p0<->p1", "p0", "p1", "ethernet", 12_500),
        ("p0<->spine0", "p0", "spine0", "ethernet", 12_500),
        ("p1<->spine0", "p1", "spine0", "ethernet", 12_500),
    ]
    assert [r for r in facts["label"] if r[1] == "cable"] == [
        ("p0<->spine0", "cable", "c1"),
        ("p1<->spine0", "cable", "c1"),
    ]
    assert [r for r in facts["state"] if "<->" in str(r[0])] == [("p0<->spine0", "down"), ("p1<->spine0", "down")]
    # Kept: only p0 and spine0, so of the cables only p0-spine0 (p0-p1 has p1, not kept).
    kept = inventory_facts(inv, keep={"p0", "spine0"})
    assert list(kept["link"]) == [("p0<->spine0", "p0", "spine0", "ethernet", 12_500)]
    assert inv.unmade_cables()  # none of this made them


def test_node_islands_read_a_run_with_a_device_marked_down() -> None:
    # Both NICs are cabled to zleaf by one foreach (a run not made yet). n1's NIC is marked down, so
    # its cable carries nothing (nor joins it an island: a NIC is no switch): n0 is on zleaf's island
    # (named by its one switch), and n1, which has a NIC and no working cable, gets island "".
    text = """apiVersion: topolog.dev/v1
objects:
  - {name: zleaf, kind: switch}
  - name: n0
    kind: node
    children:
      - {name: nic0, kind: nic}
  - name: n1
    kind: node
    children:
      - {name: nic0, kind: nic, state: down}
links:
  - {a: "n{i}/nic0", b: zleaf, kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: 0..1}}
"""
    inv = load_inventory_text(text, "t.yaml")
    assert [run[0] for run in inv.unmade_cables().values()] == [["n0/nic0<->zleaf", "n1/nic0<->zleaf"]]
    facts = graph_facts(inv, {"node_fabric_island"})
    assert facts["node_fabric_island"] == [("n0", "zleaf"), ("n1", "")]
