"""Review of the graph facts read per plan (whole_nodes.plan_groups, fabric_islands' union-find
shortcut and islands picked out in C, rail rows and uplink groups by plan), issue 46, tenth round.

Three kinds of check, none with an expected value taken from the program's output:
- a fleet of stamped nodes (alike templates, counted racks and nodes listed one by one, overrides
  of several kinds, a device put in a node from outside, a NIC down in its template, more than eight
  islands and more than eight different uplinks among one plan's nodes) whose plan groups, down
  devices, switches, islands and rails are worked out by hand below;
- the same fleet with every node made not whole (an override that changes nothing, or a child of
  no graph relation's kind) is read object by object: every graph relation must be the same rows;
- switch graphs drawn at random, cables in any order: islands against components found by a plain
  search, named by their smallest switch.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence

import pytest

from verifier.facts.fabric_islands import down_devices, switches_of
from verifier.facts.graph import NodePairs, graph_facts
from verifier.facts.whole_nodes import plan_groups, whole_nodes
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.model import Inventory
from verifier.sources.scenario import apply_scenario, scenario_from

BOXES = 14  # a0..a13: more than eight of them whole, each with its own nic0 bandwidth (distinct uplinks)

_BOX_BODY = """\
    kind: node
    labels: {zone: z1}
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2, labels: {rail: "{i}"}}
    links:
      - {a: "gpu{g}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..1}}
      - {a: "nic{g}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..1}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
"""


def _fleet(flat: bool) -> str:
    """The fleet below; `flat`: every node changed by an override or a child that changes no graph
    relation (its zone label as its template has it, a memory), so that no node is stamped whole.
    """
    counted_extra: dict[str, dict[str, object]] = (
        {f"a{n}": {"labels": {"zone": "z1"}} for n in range(BOXES)} if flat else {}
    )
    a_overrides: dict[str, dict[str, object]] = {
        **counted_extra,
        "a3": {"labels": {"quarantine": "true"}},  # labels only
        "a4": {"devices": {"nic1": {"state": "drained"}}},  # drained: not down, its cable still works
        "a5": {"devices": {"nic1": {"remove": True}}},  # nic1 and its cable gone
    }
    c_overrides: dict[str, dict[str, object]] = {"c1": {"labels": {"quarantine": "true"}}}  # labels only
    if flat:
        c_overrides["c0"] = {"labels": {"zone": "z1"}}
    pad = ", children: [{name: pad, kind: memory, size: 1 GB}]" if flat else ""
    cables = []
    for n in range(BOXES):
        # a{n}'s nic0 on leaf{n % 10} at its own bandwidth, written NIC first for even n, switch first for odd.
        ends = (f"a{n}/nic0", f"leaf{n % 10}") if n % 2 == 0 else (f"leaf{n % 10}", f"a{n}/nic0")
        cables.append(f"  - {{a: {ends[0]}, b: {ends[1]}, kind: infiniband, bandwidth: {100 * (n + 1)} Gb/s}}")
    cables += [
        "  - {a: a0/nic1, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}",
        "  - {a: a1/nic1, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}",
        "  - {a: a2/nic1, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}",
        "  - {a: a4/nic1, b: leaf5, kind: infiniband, bandwidth: 400 Gb/s}",
        "  - {a: b0/nic0, b: leaf2, kind: infiniband, bandwidth: 400 Gb/s}",
        "  - {a: b2/nic0, b: leaf2, kind: infiniband, bandwidth: 200 Gb/s}",  # twin's nodes: three uplinks
        "  - {a: c0/nic0, b: leaf3, kind: infiniband, bandwidth: 400 Gb/s}",
        "  - {a: c1/nic0, b: leaf3, kind: infiniband, bandwidth: 400 Gb/s}",
        "  - {a: x0/nic0, b: loose, kind: infiniband, bandwidth: 400 Gb/s}",
        "  - {a: x0/extra, b: leaf9, kind: infiniband, bandwidth: 400 Gb/s}",
        # leaf0 and leaf1 share spine0 (leaf1's cable twice, switch first): one island.
        "  - {a: spine0, b: leaf1, kind: infiniband, bandwidth: 800 Gb/s}",
        "  - {a: leaf0, b: spine0, kind: infiniband, bandwidth: 800 Gb/s}",
        "  - {a: leaf1, b: spine0, kind: infiniband, bandwidth: 800 Gb/s}",
    ]
    return (
        "apiVersion: topolog.dev/v1\ntemplates:\n  box:\n"
        + _BOX_BODY
        + "  twin:\n"
        + _BOX_BODY
        + """\
  dead:
    kind: node
    labels: {zone: z1}
    children:
      - {name: gpu0, kind: gpu}
      - {name: nic0, kind: nic, state: down, labels: {rail: "0"}}
    links:
      - {a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16}
objects:
  - name: r0
    kind: rack
    children:
"""
        + f"      - {{template: box, name: 'a{{i}}', count: {BOXES}, overrides: {json.dumps(a_overrides)}}}\n"
        + f"      - {{template: twin, name: b0{pad}}}\n"
        + f"      - {{template: twin, name: b1{pad}}}\n"
        + f"      - {{template: twin, name: b2{pad}}}\n"
        + f"      - {{template: dead, name: 'c{{i}}', count: 2, overrides: {json.dumps(c_overrides)}}}\n"
        + "      - {template: box, name: x0, children: [{name: extra, kind: nic}]}\n"
        + """\
  - {name: "leaf{i}", kind: switch, count: 10}
  - {name: spine0, kind: switch}
  - {name: loose, kind: switch}
links:
"""
        + "\n".join(cables)
        + "\n"
    )


def _load(flat: bool = False) -> Inventory:
    return load_inventory_text(_fleet(flat), "fleet.yaml")


# By hand: a3, a4, a5 have overrides, x0 a child of its own (a NIC its template lacks), c1 an
# override (labels only): none of them is whole. The others are, by plan in stamping order: box's a0-a2, a6-a13,
# then twin's b0-b2 (a template of its own, alike or not), then dead's c0.
WHOLE_BOX = ["a0", "a1", "a2", *(f"a{n}" for n in range(6, BOXES))]
GROUPS = [WHOLE_BOX, ["b0", "b1", "b2"], ["c0"]]


def test_plan_groups_by_hand() -> None:
    inv = _load()
    groups = plan_groups(inv)
    assert [nodes for _plan, nodes, _names in groups] == GROUPS
    assert sorted(whole_nodes(inv)) == sorted(n for nodes in GROUPS for n in nodes)
    unmade = inv.unmade_links()
    for plan, nodes, names in groups:
        assert all(unmade[n][0] is plan and unmade[n][1] is found for n, found in zip(nodes, names, strict=True))


def test_down_devices_and_switches_by_hand() -> None:
    inv = _load()
    # By hand: dead's nic0 is down in the template: c0's (whole, read off the plan) and c1's (not
    # whole, read as an object: its labels-only override leaves the NIC down). a4's nic1 is drained,
    # not down.
    assert down_devices(inv) == frozenset({"c0/nic0", "c1/nic0"})
    assert sorted(switches_of(inv)) == sorted([*(f"leaf{i}" for i in range(10)), "spine0", "loose"])


def _island_rows() -> list[tuple[str, str]]:
    """node_fabric_island by hand. Islands: {leaf0, leaf1, spine0} is leaf0's; every other switch
    its own. a{n}'s nic0 is on leaf{n % 10}; a0-a2's nic1 on leaf0; a4's drained nic1 on leaf5; a5's
    nic1 removed. b0 and b2 on leaf2; b1 has no cable: off (""). c0's and c1's only NIC is down, its cable
    carries nothing: both off. x0's nic0 on loose, its extra NIC on leaf9.
    """
    island = {f"leaf{i}": f"leaf{i}" for i in range(10)} | {"leaf1": "leaf0"}
    rows = {(f"a{n}", island[f"leaf{n % 10}"]) for n in range(BOXES)}
    rows |= {("a0", "leaf0"), ("a1", "leaf0"), ("a2", "leaf0"), ("a4", "leaf5")}
    rows |= {("b0", "leaf2"), ("b2", "leaf2"), ("b1", ""), ("c0", ""), ("c1", ""), ("x0", "loose"), ("x0", "leaf9")}
    return sorted(rows)


@pytest.mark.parametrize("flat", [False, True], ids=["stamped whole", "read object by object"])
def test_islands_by_hand(flat: bool) -> None:
    inv = _load(flat)
    assert bool(whole_nodes(inv)) is not flat
    facts = graph_facts(inv, {"node_fabric_island", "fabric_island"})
    assert facts["node_fabric_island"] == _island_rows()
    # Islands reached: leaf0, leaf2-leaf9 and loose, ten: more than node_fabric_islands picks out one by one.
    assert len({i for _n, i in facts["node_fabric_island"] if i}) == 10
    expected = {s: s for s in [*(f"leaf{i}" for i in range(10)), "spine0", "loose"]} | {
        "leaf1": "leaf0",
        "spine0": "leaf0",
    }
    assert facts["fabric_island"] == sorted(expected.items())
    # fabric_island alone takes switch_islands' path, not node_fabric_islands': the same rows.
    assert graph_facts(_load(flat), {"fabric_island"})["fabric_island"] == sorted(expected.items())


def _rail_rows() -> list[tuple[str, int]]:
    """rail by hand: every box or twin node's nic0 rail 0, nic1 rail 1 (a5's nic1 removed; x0's
    extra NIC has no label); c0's and c1's nic0 rail 0 (down or not, the label is there)."""
    rows = {(f"{n}/nic{r}", r) for n in [*(f"a{k}" for k in range(BOXES)), "b0", "b1", "b2", "x0"] for r in (0, 1)}
    rows -= {("a5/nic1", 1)}
    rows |= {("c0/nic0", 0), ("c1/nic0", 0)}
    return sorted(rows)


@pytest.mark.parametrize("flat", [False, True], ids=["stamped whole", "read object by object"])
def test_rails_by_hand(flat: bool) -> None:
    assert sorted(graph_facts(_load(flat), {"rail"})["rail"]) == _rail_rows()


def _rows(inv: Inventory, wanted: set[str] | None, pairs: NodePairs | None) -> dict[str, list[tuple[object, ...]]]:
    return {k: sorted(map(tuple, v)) for k, v in graph_facts(inv, wanted, pairs).items()}


def _pairs(pairs: NodePairs, nodes: Sequence[str], gpus: Sequence[str]) -> dict[str, int | None]:
    return {n: pairs.worst(n, [f"{n}/{g}" for g in gpus]) for n in nodes}


def test_read_by_plan_is_read_object_by_object() -> None:
    # The plan shortcuts (groups, NIC owners, down devices and switches off plan rows, rails and
    # uplink groups by plan: BOXES nodes with different nic0 bandwidths, more than eight uplink
    # groups; twin's nodes in groups of their own, each picked out in its own pass) must give what
    # reading every node object by object gives, relation by relation.
    stamped, flat = _load(), _load(flat=True)
    assert whole_nodes(stamped) and not whole_nodes(flat)
    pairs_a, pairs_b = NodePairs(), NodePairs()
    a, b = _rows(stamped, None, pairs_a), _rows(flat, None, pairs_b)
    assert a.keys() == b.keys()
    assert {k: v for k, v in a.items() if v != b[k]} == {}
    assert a["gpu_fabric_bottleneck"]  # there is something to compare
    nodes = [*(f"a{n}" for n in range(BOXES)), "b0", "b1", "b2", "c0", "c1", "x0"]
    assert _pairs(pairs_a, nodes, ["gpu0", "gpu1"]) == _pairs(pairs_b, nodes, ["gpu0", "gpu1"])
    for wanted in ({"node_fabric_island"}, {"rail", "fabric_island"}, {"leaf_class", "leaf_class_bottleneck"}):
        assert _rows(_load(), wanted, None) == _rows(_load(flat=True), wanted, None)


def _components(switches: list[str], edges: list[tuple[str, str]]) -> dict[str, str]:
    """Each switch's component by a plain search, named by its smallest switch id."""
    adj: dict[str, set[str]] = {s: set() for s in switches}
    for a, b in edges:
        adj[a].add(b)
        adj[b].add(a)
    out: dict[str, str] = {}
    for s in switches:
        if s in out:
            continue
        seen, todo = {s}, [s]
        while todo:
            for y in adj[todo.pop()] - seen:
                seen.add(y)
                todo.append(y)
        out |= dict.fromkeys(seen, min(seen))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_random_switch_graphs_match_a_plain_search(seed: int) -> None:
    # Random switch graphs (down cables, down switches, PCIe between switches: none joins), every
    # cable in a random order and orientation: union-find's shortcuts must find the components.
    r = random.Random(seed)
    names = [f"s{r.randrange(100):02d}-{i}" for i in range(r.choice([5, 12, 30]))]
    down = {s for s in names if r.random() < 0.08}
    objects: list[dict[str, object]] = [
        {"name": s, "kind": "switch", **({"state": "down"} if s in down else {})} for s in names
    ]
    links, joining = [], []
    for _ in range(r.randrange(2 * len(names))):
        a, b = r.sample(names, 2)
        kind, state = r.choice(["infiniband", "ethernet", "pcie"]), r.choice(["ok"] * 9 + ["down"])
        if kind == "pcie":
            links.append({"a": a, "b": b, "kind": kind, "generation": 5, "lanes": 16, "state": state})
        else:
            links.append({"a": a, "b": b, "kind": kind, "bandwidth": "400 Gb/s", "state": state})
        if kind != "pcie" and state != "down" and a not in down and b not in down:
            joining.append((a, b))
    hosts = []
    for h in range(4):  # a host with a NIC on each of two switches
        on = r.sample(names, 2)
        objects.append(
            {
                "name": f"h{h}",
                "kind": "node",
                "children": [{"name": "nic0", "kind": "nic"}, {"name": "nic1", "kind": "nic"}],
            }
        )
        links += [
            {"a": f"h{h}/nic{k}", "b": s, "kind": "infiniband", "bandwidth": "400 Gb/s"} for k, s in enumerate(on)
        ]
        hosts.append((f"h{h}", on))
    text = json.dumps({"apiVersion": "topolog.dev/v1", "objects": objects, "links": links})
    island = _components(names, joining)
    facts = graph_facts(load_inventory_text(text, "t.yaml"), {"fabric_island", "node_fabric_island"})
    assert facts["fabric_island"] == sorted(island.items())
    # A host reaches the islands of its working switches; one whose two switches are both down, none.
    expected = {(h, island[s]) for h, on in hosts for s in on if s not in down}
    expected |= {(h, "") for h, on in hosts if all(s in down for s in on)}
    assert facts["node_fabric_island"] == sorted(expected)
    assert graph_facts(load_inventory_text(text, "t.yaml"), {"fabric_island"})["fabric_island"] == sorted(
        island.items()
    )


def test_a_drain_leaves_its_nodes_out_of_the_plan_groups() -> None:
    # A drain changes no link: the drained node (a0) and the node of a drained device (a6) keep their
    # links unmade but are no longer stamped whole (scenario._unstamp). By hand: they leave box's group,
    # and what is read of them object by object instead is what their plan said (a drain is not down).
    inv = apply_scenario(_load(), scenario_from(drain=["a0", "a6/gpu0"]))
    assert [nodes for _plan, nodes, _names in plan_groups(inv)] == [
        [n for n in WHOLE_BOX if n not in ("a0", "a6")],
        ["b0", "b1", "b2"],
        ["c0"],
    ]
    assert down_devices(inv) == frozenset({"c0/nic0", "c1/nic0"})
    facts = graph_facts(inv, {"rail", "node_fabric_island"})
    assert sorted(facts["rail"]) == _rail_rows()  # no NIC's rail twice, none lost
    assert facts["node_fabric_island"] == _island_rows()


def test_a_failed_switch_and_nic_by_hand() -> None:
    # By hand: leaf2 and a7's nic0 fail (down). a2 keeps leaf0 over nic1; a12 (nic0 on leaf2), b0 and b2
    # (on leaf2) and a7 (nic0 its only cabled NIC) reach no island: off. leaf2 is still a switch, its own island.
    inv = apply_scenario(_load(), scenario_from(fail=["leaf2", "a7/nic0"]))
    assert down_devices(inv) == frozenset({"c0/nic0", "c1/nic0", "leaf2", "a7/nic0"})
    rows = set(_island_rows()) - {("a2", "leaf2"), ("a12", "leaf2"), ("b0", "leaf2"), ("b2", "leaf2"), ("a7", "leaf7")}
    rows |= {("a12", ""), ("b0", ""), ("b2", ""), ("a7", "")}
    facts = graph_facts(inv, {"node_fabric_island", "fabric_island"})
    assert facts["node_fabric_island"] == sorted(rows)
    assert ("leaf2", "leaf2") in facts["fabric_island"]
