"""whole_nodes.objects_without, the one pass over an inventory's objects kept for every reader, is
Inventory.objects_but: the same objects in the same order, whichever whole nodes are put back.
"""

from __future__ import annotations

import pytest

from verifier.facts.whole_nodes import objects_without, plan_groups, plan_names, whole_nodes
from verifier.sources.inventory import load_inventory_text

FLEET = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, count: 2}
      - {name: "gpu{i}", kind: gpu, count: 2}
    links:
      - {a: "gpu{n}", b: "cpu{n}", kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
objects:
  - name: "r{i}"
    kind: rack
    count: 2
    children:
      - {template: box, name: "{rack}-n{i}", count: 3}
      - {name: "{rack}-leaf", kind: switch}
EXTRA
"""

EXTRAS = {
    "nothing": "",
    "an override": """  - template: box
    name: "x{i}"
    count: 2
    overrides: {x1: {devices: {gpu1: {state: down}}}}
""",
    "an object put into a whole node": "  - {name: extra, kind: nic, parent: r0-n2}\n",
    "an object hung from a whole node's GPU": "  - {name: inner, kind: gpu, parent: r1-n0/gpu1}\n",
}


NODES = {"r0-n0", "r0-n1", "r0-n2", "r1-n0", "r1-n1", "r1-n2"}
WHOLE = {
    "nothing": NODES,
    "an override": {*NODES, "x0"},  # x1 is changed by its override
    # An object hung from a node's object makes the loader make every link and that node no longer
    # its plan exactly: no node is whole then (their links are made), and each reader passes on its own.
    "an object put into a whole node": set(),
    "an object hung from a whole node's GPU": set(),
}


@pytest.mark.parametrize("extra", list(EXTRAS), ids=list(EXTRAS))
def test_objects_without_is_objects_but(extra: str) -> None:
    inv = load_inventory_text(FLEET.replace("EXTRA", EXTRAS[extra]), "fleet.yaml")
    whole = whole_nodes(inv)
    assert whole == WHOLE[extra]
    ordered = sorted(inv.stamped)
    for skip in (
        set(ordered),
        set(ordered[1:]),  # the first put back
        set(ordered[:-1]) - {ordered[2]},  # two put back
        set(ordered[:-1]) - {ordered[2], ordered[3]},  # three put back
        set(),
        {*ordered, "r0"},  # not every one whole: a pass of its own
    ):
        assert objects_without(inv, skip) == inv.objects_but(skip), skip
        # By hand: every object but those a skipped node's plan made (its two CPUs and two GPUs).
        assert [o.id for o in objects_without(inv, skip)] == [
            oid for oid, o in inv.objects.items() if o.origin is None or o.origin not in skip
        ]
    # The pass is kept: asked again, the same answer.
    assert objects_without(inv, whole) == inv.objects_but(whole)


def test_plan_names_are_the_loaders_lists_with_each_name_where_asked() -> None:
    inv = load_inventory_text(FLEET.replace("EXTRA", EXTRAS["an override"]), "fleet.yaml")
    nodes = ["r0-n0", "r1-n2", "x0"]
    found = plan_names(inv, nodes, ["/gpu1", "/cpu0"])
    assert found is not None
    slots, lists = found
    # By hand: each node's GPU 1 and CPU 0 are its id followed by "/gpu1" and "/cpu0".
    assert [[names[s] for s in slots] for names in lists] == [[f"{n}/gpu1", f"{n}/cpu0"] for n in nodes]
    assert all(names is inv.unmade_links()[n][1] for n, names in zip(nodes, lists, strict=True))
    assert plan_names(inv, nodes, ["/gpu7"]) is None  # no such name in the plan
    assert plan_names(inv, [*nodes, "x1"], ["/gpu1"]) is None  # x1 is overridden: not its plan


def test_the_kept_pass_follows_the_links_being_made() -> None:
    inv = load_inventory_text(FLEET.replace("EXTRA", ""), "fleet.yaml")
    assert whole_nodes(inv) == NODES
    kept = objects_without(inv, NODES)
    assert "links" not in vars(inv)  # the pass made no link
    assert len(inv.links) == 12  # by hand: 2 racks x 3 nodes x 2 GPU-CPU links, all made now
    # No node is whole once its links are made: each reader passes on its own, with the same answer.
    assert whole_nodes(inv) == frozenset()
    assert objects_without(inv, NODES) == inv.objects_but(NODES) == kept


TWO_PLANS = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, count: 2}
      - {name: "gpu{i}", kind: gpu, count: 2}
    links:
      - {a: "gpu{n}", b: "cpu{n}", kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
  tiny:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: gpu0, kind: gpu}
    links:
      - {a: gpu0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
objects:
  - name: "r{i}"
    kind: rack
    count: 2
    children:
      - {template: box, name: "{rack}-n{i}", count: 2}
      - {template: tiny, name: "{rack}-t{i}", count: 2}
      - template: box
        name: "{rack}-m{i}"
        count: 1
        overrides: {r1-m0: {devices: {gpu0: {state: down}}}}
"""


def test_plan_groups_are_the_whole_nodes_by_plan_in_stamping_order() -> None:
    inv = load_inventory_text(TWO_PLANS, "fleet.yaml")
    groups = plan_groups(inv)
    # By hand: the loader stamps r0's nodes (n0, n1, t0, t1, m0), then r1's. The box plan is met first
    # (r0-n0), the tiny one next (r0-t0); r1-m0 is changed by its override, so not whole, not grouped.
    assert [nodes for _plan, nodes, _names in groups] == [
        ["r0-n0", "r0-n1", "r0-m0", "r1-n0", "r1-n1"],
        ["r0-t0", "r0-t1", "r1-t0", "r1-t1"],
    ]
    unmade = inv.unmade_links()
    for plan, nodes, names in groups:
        assert all(unmade[n][0] is plan and unmade[n][1] is found for n, found in zip(nodes, names, strict=True))
    # Every whole node is in exactly one group.
    assert sorted(n for _p, nodes, _n in groups for n in nodes) == sorted(whole_nodes(inv))
    assert plan_groups(inv) is groups  # kept for the inventory: made once
