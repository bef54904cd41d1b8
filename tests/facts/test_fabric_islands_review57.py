"""Review of 213ecb9 (node_fabric_islands' one-island path): the nodes of one island, by hand, on
both ways of finding them (the one-island path and the general one it stands in for).

One island (leaf0, leaf1 and spine0: named leaf0, its smallest switch id) with what the path must
tell apart: a node's one cabled NIC, a node with two NICs cabled (one written switch first), a
node whose only switch cable is down and whose other NIC is cabled to another node's NIC (no
island: it reaches none), a hand-written node, a NIC in no node, nodes of a plan with no NIC, and
(overridden) a node not stamped whole. The plans make links: a node whose plan makes none is not
stamped whole (whole_nodes), and the path would not see it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from verifier.facts import fabric_islands
from verifier.facts.graph import graph_facts
from verifier.facts.whole_nodes import whole_nodes
from verifier.sources.inventory.loader import load_inventory_text

FLEET = """\
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 1}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16}
  plain:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
    links:
      - {a: gpu0, b: gpu1, kind: nvlink, generation: 4, count: 2}
objects:
  - template: box
    name: "b{i}"
    count: 4
  - {template: plain, name: "p{i}", count: 2}
  - {name: h0, kind: node, children: [{name: "nic{i}", kind: nic, count: 2}]}
  - {name: lnic, kind: nic}
  - {name: "leaf{i}", kind: switch, count: 2}
  - {name: spine0, kind: switch}
links:
  - {a: leaf0, b: spine0, kind: infiniband, bandwidth: 800 Gb/s}
  - {a: leaf1, b: spine0, kind: infiniband, bandwidth: 800 Gb/s}
  - {a: b0/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: b1/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf1, b: b1/nic1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: b2/nic0, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s, state: down}
  - {a: b2/nic1, b: b3/nic1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: b3/nic0, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: h0/nic1, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: lnic, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
"""

OVERRIDDEN = FLEET.replace(
    "    count: 4\n", "    count: 4\n    overrides:\n      b0: {devices: {gpu0: {state: down}}}\n", 1
)

# By hand: b0 (nic0 on leaf0), b1 (nic0 on leaf0, nic1 on leaf1: the one island once), b3 (nic0 on
# leaf1; its nic1's cable is to b2's NIC, which joins nothing) and h0 (nic1 on leaf1) are on island
# leaf0. b2's one switch cable is down and its other NIC reaches only b3's: it has NICs and reaches
# no island, (b2, ""). lnic is in no node: no row. p0, p1 have no NIC: no row.
EXPECTED = [("b0", "leaf0"), ("b1", "leaf0"), ("b2", ""), ("b3", "leaf0"), ("h0", "leaf0")]


@pytest.fixture(params=["one island", "general"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bool]]:
    """Which way node_fabric_islands goes: its one-island path, or (that path declined) the general
    one; yields, per call of the path, whether it answered."""
    original = fabric_islands._one_island
    answered: list[bool] = []

    def one_island(*args: object) -> object:
        found = None if request.param == "general" else original(*args)  # type: ignore[arg-type]
        answered.append(found is not None)
        return found

    monkeypatch.setattr(fabric_islands, "_one_island", one_island)
    yield answered
    assert answered == [request.param == "one island"]


@pytest.mark.parametrize("text", [FLEET, OVERRIDDEN], ids=["whole", "b0 overridden"])
def test_one_island_nodes_by_hand_on_both_ways(text: str, way: list[bool]) -> None:
    inv = load_inventory_text(text, "t.yaml")
    # The override on b0 (a GPU down) leaves it out of the nodes stamped whole: its NIC is an end
    # found object by object.
    whole = {"b0", "b1", "b2", "b3", "p0", "p1"} - ({"b0"} if text is OVERRIDDEN else set())
    assert whole_nodes(inv) == whole
    assert graph_facts(inv, {"node_fabric_island"})["node_fabric_island"] == EXPECTED
