"""fabric_island: switches joined by working switch-to-switch links, by hand on small fabrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from verifier.facts.fabric_islands import down_devices, grouped, switch_islands, switches_of
from verifier.facts.graph import NodePairs, graph_facts
from verifier.facts.whole_nodes import whole_nodes
from verifier.sources.inventory.loader import load_inventory, load_inventory_text

ROOT = Path(__file__).resolve().parents[2]

SPLIT = """\
apiVersion: topolog.dev/v1
objects:
  - {name: "leaf{i}", kind: switch, count: 4, labels: {role: leaf}}
  - {name: "spine{i}", kind: switch, count: 3, labels: {role: spine}}
  - name: n0
    kind: node
    children:
      - {name: "nic{i}", kind: nic, count: 2}
links:
  - {a: leaf0, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf1, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf2, b: spine1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf3, b: spine1, kind: infiniband, bandwidth: 400 Gb/s, state: down}
  - {a: n0/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n0/nic1, b: leaf2, kind: infiniband, bandwidth: 400 Gb/s}
"""


def test_islands_by_hand() -> None:
    # {leaf0, leaf1, spine0} share spine0: island leaf0. {leaf2, spine1}: island leaf2. leaf3's one
    # uplink is down: its own island. spine2 has no link: its own. n0 is cabled to leaf0 and leaf2,
    # and a host routes nothing between its NICs: the two islands stay two.
    facts = graph_facts(load_inventory_text(SPLIT, "t.yaml"), {"fabric_island"})
    assert facts["fabric_island"] == [
        ("leaf0", "leaf0"),
        ("leaf1", "leaf0"),
        ("leaf2", "leaf2"),
        ("leaf3", "leaf3"),
        ("spine0", "leaf0"),
        ("spine1", "leaf2"),
        ("spine2", "spine2"),
    ]


def test_the_shipped_fabrics_are_one_island_each() -> None:
    # dgx-h100-pod: every leaf to every spine: 12 switches, island leaf0. gb200-nvl72: 4 rail leaves
    # to 2 spines: island gb-leaf0. mixed-fleet: 4 rack leaves to one spine: island euw-a100-leaf.
    for name, island, switches in (
        ("dgx-h100-pod.yaml", "leaf0", 12),
        ("gb200-nvl72.yaml", "gb-leaf0", 6),
        ("mixed-fleet.yaml", "euw-a100-leaf", 5),
    ):
        rows = graph_facts(load_inventory([ROOT / "inventories" / name]), {"fabric_island"})["fabric_island"]
        assert len(rows) == switches and {i for _s, i in rows} == {island}, name


def test_node_islands_by_hand() -> None:
    # n0's nic0 lands on leaf0 (island leaf0) and nic1 on leaf2 (island leaf2): a row for each.
    # n1 has a NIC and no cable: one row with island "". n2 has no NIC: no row.
    text = SPLIT.replace(
        "links:\n",
        "  - name: n1\n    kind: node\n    children:\n      - {name: nic0, kind: nic}\n"
        "  - {name: n2, kind: node}\nlinks:\n",
    )
    facts = graph_facts(load_inventory_text(text, "t.yaml"), {"node_fabric_island"})
    assert facts["node_fabric_island"] == [("n0", "leaf0"), ("n0", "leaf2"), ("n1", "")]


FUSED = ("node_fabric_island", "gpu_fabric_bottleneck", "scaleup_domain")
"""What `place` asks for: node_fabric_islands adds up the NICs' fabric cables for the per-node pass."""


def _rows(facts: Mapping[str, Sequence[tuple[object, ...]]], relation: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r) for r in facts[relation])


@pytest.mark.parametrize(
    "path",
    [
        *sorted((ROOT / "inventories").glob("*.yaml")),
        # Ethernet links: a GPU's RoCE port (link_kind: not a fabric cable) next to Ethernet fabrics.
        *sorted(p for p in (ROOT / "tests" / "rules" / "fixtures").glob("*/*.yaml") if "ethernet" in p.read_text()),
    ],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_one_pass_over_the_cables_gives_what_each_pass_gives(path: Path) -> None:
    # Asked together (with the node classes' pairs, as `place` asks), the cables are gone through
    # once for the islands and for each NIC's fabric bandwidth; asked one at a time, each pass
    # goes through them itself. The rows must be the same either way.
    inv = load_inventory([path])
    together = graph_facts(inv, set(FUSED), NodePairs())
    for relation in FUSED:
        alone = graph_facts(load_inventory([path]), {relation})
        assert _rows(together, relation) == _rows(alone, relation), relation


STAMPED = """\
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "nic{i}", kind: nic, count: 2}
      - {name: gpu0, kind: gpu}
    links:
      - {a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16}
  boxsw:
    kind: node
    children:
      - {name: nic0, kind: nic}
      - {name: tor, kind: switch}
    links:
      - {a: nic0, b: tor, kind: infiniband, bandwidth: 400 Gb/s}
objects:
  - {name: "leaf{i}", kind: switch, count: 3}
  - {name: spine0, kind: switch}
  - {template: box, name: "n{i}", count: 4}
  - {template: boxsw, name: "s{i}", count: 2}
  - name: plain
    kind: node
    children:
      - {name: nic0, kind: nic}
links:
  - {a: leaf0, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n0/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n0/nic1, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n1/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s, state: down}
  - {a: n1/nic1, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s, state: down}
  - {a: n2/nic1, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n3/nic0, b: n3/nic1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: s0/tor, b: leaf2, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: s1/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: plain/nic0, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
"""


def test_stamped_nodes_islands_by_hand() -> None:
    # Switch-to-switch links: leaf0-spine0 (island leaf0) and s0/tor-leaf2, a switch a node's plan
    # made (island leaf2: "leaf2" < "s0/tor"); leaf1 and s1/tor have no such link: their own islands.
    # n0: nic0 on leaf0, nic1 on leaf1: two rows. n1: both cables down, NICs left: (n1, "").
    # n2: nic1 on leaf1, nic0 uncabled: the node reaches leaf1, no "" row. n3: a cable between its
    # own NICs reaches no switch: (n3, ""). s0: its plan's cable from nic0 to its own tor, island
    # leaf2. s1: the same cable to its tor (no other link: island s1/tor), and nic0 on leaf0 too.
    # plain (no template): nic0 on spine0, island leaf0. The six template nodes are stamped whole
    # (their links not made: the plans' NICs are found from the plans, not object by object).
    inv = load_inventory_text(STAMPED, "t.yaml")
    assert whole_nodes(inv) == {"n0", "n1", "n2", "n3", "s0", "s1"}
    facts = graph_facts(inv, {"node_fabric_island", "fabric_island"})
    assert facts["node_fabric_island"] == [
        ("n0", "leaf0"),
        ("n0", "leaf1"),
        ("n1", ""),
        ("n2", "leaf1"),
        ("n3", ""),
        ("plain", "leaf0"),
        ("s0", "leaf2"),
        ("s1", "leaf0"),
        ("s1", "s1/tor"),
    ]
    assert facts["fabric_island"] == [
        ("leaf0", "leaf0"),
        ("leaf1", "leaf1"),
        ("leaf2", "leaf2"),
        ("s0/tor", "leaf2"),
        ("s1/tor", "s1/tor"),
        ("spine0", "leaf0"),
    ]
    # Read off the plans: none of the six nodes' objects was made for it (Inventory.defer_objects).
    assert set(inv.unmade_objects()) == {"n0", "n1", "n2", "n3", "s0", "s1"}


def test_stamped_nodes_uplinks_by_hand() -> None:
    # What `place` asks for: the islands and each NIC's fabric uplinks on one pass; asked alone,
    # each relation gives the same rows. gpu0 reaches nic0 over PCIe (its only NIC): its share of
    # the fabric is nic0's working fabric cables, 400 Gb/s = 50,000 MB/s on n0 (its cable to leaf0)
    # and on n3 (its cable to nic1 counts: a NIC's cables are added up whatever the other end), none
    # on n1 (down) and n2 (nic1 is the cabled one).
    together = graph_facts(load_inventory_text(STAMPED, "t.yaml"), set(FUSED), NodePairs())
    for relation in FUSED:
        alone = graph_facts(load_inventory_text(STAMPED, "t.yaml"), {relation})
        assert _rows(together, relation) == _rows(alone, relation), relation
    assert _rows(together, "gpu_fabric_bottleneck") == [("n0/gpu0", 50_000), ("n3/gpu0", 50_000)]


EITHER_WAY = """\
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "nic{i}", kind: nic, count: 2}
      - {name: gpu0, kind: gpu}
    links:
      - {a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16}
  bare:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
    links:
      - {a: gpu0, b: gpu1, kind: nvlink, generation: 4, count: 18}
objects:
  - {name: "leaf{i}", kind: switch, count: 2}
  - {name: spine0, kind: switch, state: down}
  - {template: box, name: "n{i}", count: 3}
  - {template: bare, name: "b{i}", count: 2}
links:
  - {a: leaf0, b: n0/nic0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n0/nic1, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf1, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n1/nic0, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n2/nic1, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: b0/gpu0, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
"""


def test_cables_written_either_way_and_a_switch_marked_down_by_hand() -> None:
    # spine0 is marked down: none of its three cables carries anything (fabric_islands.carries), so
    # leaf1 is not joined to it: leaf0, leaf1 and spine0 are an island each. n0: its cable is written
    # switch first (leaf0 -> nic0), still n0's: (n0, leaf0); nic1's cable goes to spine0, down, and
    # n0 reaches leaf0 anyway: no "" row. n1: its only cable goes to spine0: nic0 and nic1 reach
    # nothing: (n1, ""). n2: nic1 on leaf1: (n2, leaf1). b0: a GPU cabled to leaf1 (any device of a
    # node puts it on an island): (b0, leaf1). b1: no NIC and no cable: no row. All five nodes are
    # stamped whole (no override; the fleet's cables are outside their plans).
    inv = load_inventory_text(EITHER_WAY, "t.yaml")
    assert whole_nodes(inv) == {"n0", "n1", "n2", "b0", "b1"}
    facts = graph_facts(inv, {"node_fabric_island", "fabric_island"})
    assert facts["node_fabric_island"] == [("b0", "leaf1"), ("n0", "leaf0"), ("n1", ""), ("n2", "leaf1")]
    assert facts["fabric_island"] == [("leaf0", "leaf0"), ("leaf1", "leaf1"), ("spine0", "spine0")]
    # Asked as `place` asks (with the NICs' uplinks on the same pass), the same rows.
    together = graph_facts(load_inventory_text(EITHER_WAY, "t.yaml"), set(FUSED), NodePairs())
    assert _rows(together, "node_fabric_island") == facts["node_fabric_island"]


PICKED = """\
apiVersion: topolog.dev/v1
objects:
  - {name: "leaf{i}", kind: switch, count: 6}
  - {name: "spine{i}", kind: switch, count: 3}
  - {name: spine2x, kind: switch, state: down}
  - name: n0
    kind: node
    children:
      - {name: "nic{i}", kind: nic, count: 2}
links:
  - {a: spine0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf1, b: spine0, kind: ethernet, bandwidth: 400 Gb/s}
  - {a: leaf2, b: n0/nic0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n0/nic1, b: leaf2, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: spine1, b: n0/nic0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf4, b: spine0, kind: pcie, generation: 5, lanes: 16}
  - {a: leaf3, b: spine2x, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: spine2x, b: spine1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf4, b: spine1, kind: infiniband, bandwidth: 400 Gb/s, state: down}
  - {a: spine2, b: leaf5, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf5, b: spine1, kind: infiniband, bandwidth: 400 Gb/s}
"""


def test_only_working_switch_to_switch_cables_join_whichever_end_is_written_first() -> None:
    # switch_islands picks the links whose end `a` is a switch, then checks `b`, the kind, the state
    # and the devices marked down. By hand: spine0 -> leaf0 (switch first) and leaf1 -> spine0
    # (Ethernet between switches: a fabric cable) join {leaf0, leaf1, spine0}: island leaf0.
    # leaf2 -> n0/nic0 and spine1 -> n0/nic0 are written switch first but end on a NIC, and
    # n0/nic1 -> leaf2 starts at one: a host routes nothing, so leaf2 stays alone and does not join
    # spine1. leaf4 -> spine0 is PCIe, no fabric cable: leaf4 is not joined to spine0. spine2x is
    # marked down: leaf3's cable to it and its own to spine1 carry nothing: leaf3, spine2x alone.
    # leaf4's cable to spine1 is down: leaf4 alone. spine2 -> leaf5 and
    # leaf5 -> spine1, joined one after the other with the larger roots first: {leaf5, spine1,
    # spine2}, named by its smallest id, leaf5, whatever the order the unions came in.
    inv = load_inventory_text(PICKED, "t.yaml")
    assert graph_facts(inv, {"fabric_island"})["fabric_island"] == [
        ("leaf0", "leaf0"),
        ("leaf1", "leaf0"),
        ("leaf2", "leaf2"),
        ("leaf3", "leaf3"),
        ("leaf4", "leaf4"),
        ("leaf5", "leaf5"),
        ("spine0", "leaf0"),
        ("spine1", "leaf5"),
        ("spine2", "leaf5"),
        ("spine2x", "spine2x"),
    ]


def test_switch_islands_take_links_in_any_order_and_once_through() -> None:
    # The islands are the components' smallest ids, so the links reversed give the same answer; a
    # one-shot iterator of them is read as a list would be (the links are picked in two passes).
    inv = load_inventory_text(PICKED, "t.yaml")
    links = list(inv.links.values())
    found, down = switches_of(inv), down_devices(inv)
    expected = switch_islands(inv.found, links, found, down)
    assert expected["spine2"] == "leaf5" and expected["leaf2"] == "leaf2"
    assert switch_islands(inv.found, links[::-1], found, down) == expected
    assert switch_islands(inv.found, iter(links), found, down) == expected
    assert switch_islands(inv.found, tuple(links)) == expected  # found and down worked out from the objects


def _separate_leaves(count: int) -> str:
    """`count` leaves with no spine (each its own island), node n{i}'s NIC on leaf{i}, n0's second NIC
    on leaf1, and a NIC in no node on leaf0."""
    nodes = "".join(
        f"  - {{name: n{i}, kind: node, children: [{{name: nic0, kind: nic}}, {{name: nic1, kind: nic}}]}}\n"
        for i in range(count)
    )
    cables = "".join(f"  - {{a: n{i}/nic0, b: leaf{i}, kind: infiniband, bandwidth: 400 Gb/s}}\n" for i in range(count))
    return (
        "apiVersion: topolog.dev/v1\nobjects:\n"
        f'  - {{name: "leaf{{i}}", kind: switch, count: {count}, labels: {{role: leaf}}}}\n'
        "  - {name: loose, kind: nic}\n"
        + nodes
        + "links:\n"
        + cables
        + "  - {a: n0/nic1, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}\n"
        + "  - {a: loose, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}\n"
    )


@pytest.mark.parametrize("count", [3, 9], ids=["few islands", "more islands than picked out one by one"])
def test_node_islands_of_separate_leaves_by_hand(count: int) -> None:
    # By hand: each leaf is its own island (no switch-to-switch link). n{i} reaches leaf{i}'s; n0 also
    # leaf1's over its second NIC; the loose NIC is in no node: no row. Every node has a cabled NIC,
    # so none gets the "" row (their uncabled nic1s do not count: a cabled NIC puts the node on).
    facts = graph_facts(load_inventory_text(_separate_leaves(count), "t.yaml"), {"node_fabric_island"})
    expected = sorted([(f"n{i}", f"leaf{i}") for i in range(count)] + [("n0", "leaf1")])
    assert facts["node_fabric_island"] == expected


MERGED_LATE = """\
apiVersion: topolog.dev/v1
objects:
  - {name: "leaf{i}", kind: switch, count: 3}
  - {name: "spine{i}", kind: switch, count: 2}
links:
  - {a: leaf1, b: spine1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf2, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: spine0, b: leaf2, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: spine1, b: leaf2, kind: infiniband, bandwidth: 400 Gb/s}
"""


def test_islands_joined_after_each_formed_by_hand() -> None:
    # By hand: {leaf1, spine1} and {leaf2, spine0} form first; the third cable joins nothing new; the
    # fourth, from a switch joined already, joins the two. One island of four, named by its smallest
    # switch id, leaf1; leaf0 has no cable: its own island.
    facts = graph_facts(load_inventory_text(MERGED_LATE, "t.yaml"), {"fabric_island"})
    assert facts["fabric_island"] == [
        ("leaf0", "leaf0"),
        ("leaf1", "leaf1"),
        ("leaf2", "leaf1"),
        ("spine0", "leaf1"),
        ("spine1", "leaf1"),
    ]


@pytest.mark.parametrize("keys", [1, 3, 12])
def test_grouped_by_hand(keys: int) -> None:
    # grouped takes three ways: one key, up to 8 (a pass per key), more (a step per value). The
    # values 0..35 keyed by v % keys: key k holds k, k + keys, k + 2 * keys... below 36, in that
    # order; the keys first met in the order 0, 1, ..., keys - 1 (value v < keys meets key v first).
    # Written out for 3 keys: 0 -> 0, 3, ..., 33; 1 -> 1, 4, ..., 34; 2 -> 2, 5, ..., 35.
    values = list(range(36))
    got = grouped([v % keys for v in values], values)
    assert list(got) == list(range(keys))
    for k, group in got.items():
        assert group == list(range(k, 36, keys))
    if keys == 3:
        assert got[1] == [1, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34]
    # Keys that are tuples with None (graph's uplinks) and no values at all.
    assert grouped([(1, None), (2,), (1, None)], ["a", "b", "c"]) == {(1, None): ["a", "c"], (2,): ["b"]}
    assert grouped([], []) == {}


ONE_ISLAND = """\
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16}
objects:
  - template: box
    name: "n{i}"
    count: 4
    overrides:
      n1: {devices: {gpu1: {state: down}}}
  - {name: "leaf{i}", kind: switch, count: 2}
  - {name: spine0, kind: switch}
links:
  - {a: n0/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n1/nic1, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n2/gpu0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf0, b: spine0, kind: infiniband, bandwidth: 800 Gb/s}
"""


@pytest.mark.parametrize("joined", [True, False])
def test_node_islands_of_one_island_and_of_two_with_ends_outside_whole_nics_by_hand(joined: bool) -> None:
    # n1's GPU marked down by an override: n1 is not stamped whole, its cabled NIC is an end of a
    # node read object by object. n2's cable is at its GPU, not a NIC. n3 has NICs and no cable.
    # joined: leaf1-spine0 too, one island (named leaf0, its smallest switch): n0 (nic0 on leaf0),
    # n1 (nic1 on leaf1), n2 (gpu0 on leaf0) on it; n3: (n3, ""). Not joined: leaf1 is an island of
    # its own, n1's row names it; the others as before.
    text = ONE_ISLAND + ("  - {a: leaf1, b: spine0, kind: infiniband, bandwidth: 800 Gb/s}\n" if joined else "")
    inv = load_inventory_text(text, "t.yaml")
    assert whole_nodes(inv) == {"n0", "n2", "n3"}
    facts = graph_facts(inv, {"node_fabric_island"})
    n1 = "leaf0" if joined else "leaf1"
    assert facts["node_fabric_island"] == [("n0", "leaf0"), ("n1", n1), ("n2", "leaf0"), ("n3", "")]
