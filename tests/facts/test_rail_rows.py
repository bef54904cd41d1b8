"""`rail(object, number)`: the NICs of nodes stamped whole from their template come as one block of
their plan's rows (StampedRows), every other object's as rows; the same rows either way."""

from __future__ import annotations

from verifier.core.stamped_rows import StampedRows
from verifier.facts.graph import graph_facts
from verifier.sources.inventory import load_inventory_text

FLEET = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "nic{i}", kind: nic, count: 2, labels: {rail: "{i}"}}
      - {name: gpu0, kind: gpu}
    links:
      - {a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16}
objects:
  - {template: box, name: "n{i}", count: 2}
  - {name: leaf, kind: switch, labels: {role: leaf, rail: "3"}}
  - {name: odd, kind: switch, labels: {rail: "x"}}
"""


def test_rails_of_stamped_nodes_come_as_a_block() -> None:
    inv = load_inventory_text(FLEET)
    rows = graph_facts(inv, ["rail"])["rail"]
    # n0 and n1 are stamped whole (no override, links only inside the node): their NICs' rails are
    # the plan's, nic0 -> 0 and nic1 -> 1, in one block; the leaf's "3" is a row of its own; "x" is
    # not a number, so `odd` has none.
    assert isinstance(rows, StampedRows)
    assert rows.plain == [("leaf", 3)]
    assert len(rows.blocks) == 1
    assert sorted(rows) == [("leaf", 3), ("n0/nic0", 0), ("n0/nic1", 1), ("n1/nic0", 0), ("n1/nic1", 1)]


def test_rails_once_links_are_made_are_the_same_rows() -> None:
    inv = load_inventory_text(FLEET)
    assert inv.links  # made now: no node's names are at hand, so every rail is a row
    assert graph_facts(inv, ["rail"])["rail"] == [
        ("n0/nic0", 0),
        ("n0/nic1", 1),
        ("n1/nic0", 0),
        ("n1/nic1", 1),
        ("leaf", 3),
    ]
