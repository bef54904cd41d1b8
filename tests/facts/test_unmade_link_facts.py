"""Facts from an inventory whose stamped nodes' links are not made yet are the facts of the same
inventory with every link made: every relation, row for row (as multisets: the link and link_attr
rows of stamped nodes come as StampedRows, after the others, and no engine's answer depends on row
order). And making them never makes the inventory's deferred links."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from verifier.core.stamped_rows import StampedRows
from verifier.facts.graph import NodePairs, graph_facts, scaleup_domains
from verifier.facts.inventory import Row, inventory_facts
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.model import Inventory

ROOT = Path(__file__).resolve().parents[2]

FLEET = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2, labels: {rail: "{i}"}}
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: pcie0, kind: pcie_switch}
    links:
      - {a: cpu0, b: cpu1, kind: upi, bandwidth: 64 GB/s, labels: {cable: "c1"}}
      - {a: "nic{n}", b: "cpu{n}", kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
      - {a: "gpu{n}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 5, lanes: 16, state: degraded}
objects:
  - name: "p{i}"
    kind: pod
    count: 2
    children:
      - {template: box, name: "{pod}-n{i}", count: 3}
      - {name: "{pod}-leaf{i}", kind: switch, count: 2, labels: {role: leaf}}
    links:
      - {a: "{pod}-n{n}/nic{l}", b: "{pod}-leaf{l}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {n: 0..2, l: 0..1}}
EXTRA
"""

# Gaudi-like nodes: Ethernet between the GPUs of one node is their own RoCE scale-up fabric (a
# kind of its own in the facts), Ethernet to a switch is the network; dies joined die to die.
ROCE = """
apiVersion: topolog.dev/v1
templates:
  gaudi:
    kind: node
    promises: [nvlink_domain]
    children:
      - {name: cpu0, kind: cpu}
      - {name: "gpu{i}", kind: gpu, count: 4}
      - {name: pkg0, kind: socket, children: [{name: "die{i}", kind: die, count: 2}]}
      - {name: pkg1, kind: socket, children: [{name: "die{i}", kind: die, count: 2, start: 2}]}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: "gpu{g}", b: "gpu{h}", kind: ethernet, bandwidth: 300 Gb/s, foreach: {g: 0..1, h: 2..3}}
      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..3}}
      - {a: "nic{n}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
      - {a: "die{d}", b: "die{e}", kind: d2d, bandwidth: 1 TB/s, foreach: {d: [0, 2], e: [1, 3]}}
      - {a: nic0, b: /spine0, kind: ethernet, bandwidth: 400 Gb/s, attrs: {latency_ns: 900}}
objects:
  - {name: spine0, kind: switch, labels: {role: leaf}}
  - name: rack0
    kind: rack
    promises: [nvlink_domain]
    children:
      - {template: gaudi, name: "g{i}", count: 4}
links:
  - {a: g0/gpu0, b: g1/gpu0, kind: ethernet, bandwidth: 300 Gb/s}
  - {a: "g{n}/nic1", b: spine0, kind: ethernet, bandwidth: 400 Gb/s, foreach: {n: 0..3}}
"""

EXTRAS = {
    "nothing": "",
    "a cable with a stamped link's id": """links:
  - {a: p0-n0/cpu0, b: p0-n0/cpu1, kind: upi, bandwidth: 64 GB/s}
""",
    "an override": """  - template: box
    name: "x{i}"
    count: 3
    overrides: {x1: {links: [{a: cpu0, b: cpu1, state: down}]}}
""",
    "a cable into a stamped node": """links:
  - {a: p1-n1/gpu0, b: p1-n2/gpu1, kind: nvlink, bandwidth: 450 GB/s}
  - {a: p0-n1/gpu0, b: p0-leaf0, kind: pcie, generation: 4, lanes: 8}
""",
    "an object put into a stamped node": """  - {name: extra, kind: nic, parent: p0-n2}
links:
  - {a: extra, b: p0-n2/cpu0, kind: pcie, generation: 4, lanes: 8}
""",
    "a node with a link of its own": """  - template: box
    name: own
    links: [{a: cpu0, b: nic1, kind: pcie, generation: 4, lanes: 8}]
""",
    "a link written before its node, with the node's link's id": """  - name: late
    kind: rack
    links: [{a: /late-n0/cpu0, b: /late-n0/cpu1, kind: upi, bandwidth: 64 GB/s}]
  - {template: box, name: late-n0}
""",
    "cabling whose ends are absolute or relative to a node": """  - template: box
    name: solo
    children: [{name: "port{i}", kind: nic, count: 2}]
    links:
      - {a: "port{i}", b: "/p0-leaf{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1}}
      - {a: "/solo/port{i}", b: "cpu{i}", kind: pcie, generation: 4, lanes: 4, foreach: {i: 0..1}}
""",
}


def _fleet() -> str:
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.verify_bench import Layout, inventory_yaml
    finally:
        sys.path.remove(str(ROOT))
    return inventory_yaml(Layout(512))


LAYOUTS: dict[str, str] = {
    **{f"fleet, {name}": FLEET.replace("EXTRA", extra) for name, extra in EXTRAS.items()},
    "RoCE and d2d": ROCE,
    **{p.name: p.read_text(encoding="utf-8") for p in sorted((ROOT / "inventories").glob("*.yaml"))},
}


def _load(name: str) -> str:
    return _fleet() if name == "generated fleet" else LAYOUTS[name]


def _both(text: str) -> tuple[Inventory, Inventory]:
    """The inventory as loaded (links deferred where they can be), and again with its links made first."""
    deferred = load_inventory_text(text, "t.yaml")
    made = load_inventory_text(text, "t.yaml")
    assert made.links is not None
    return deferred, made


def _keep(inv: Inventory) -> set[str]:
    """What placement keeps: GPUs and their ancestors."""
    keep: set[str] = set()
    for o in inv.objects.values():
        if o.kind == "gpu":
            oid: str | None = o.id
            while oid is not None and oid not in keep:
                keep.add(oid)
                oid = inv.objects[oid].parent
    return keep


def _pairs(pairs: NodePairs) -> tuple[object, ...]:
    return pairs.class_of, pairs.pairs


def _rows(facts: Mapping[str, Sequence[Row]]) -> dict[str, list[Row]]:
    """Each relation's rows, sorted (duplicates kept): the rows as a multiset."""
    return {relation: sorted(rows) for relation, rows in facts.items()}


@pytest.mark.parametrize("name", [*LAYOUTS, "generated fleet"])
def test_facts_are_those_of_the_made_links(name: str) -> None:
    deferred, made = _both(_load(name))
    stamped = inventory_facts(deferred)
    assert _rows(stamped) == _rows(inventory_facts(made))
    if name in ("fleet, nothing", "generated fleet"):  # every node stamped whole, no Ethernet inside one
        for relation in ("object", "parent", "label", "link", "link_attr"):
            rows = stamped[relation]
            assert isinstance(rows, StampedRows) and rows.blocks, relation
    keep = _keep(made)
    kept = inventory_facts(deferred, keep)
    assert _rows(kept) == _rows(inventory_facts(made, keep))
    if name in ("fleet, nothing", "generated fleet"):  # the GPUs of stamped nodes, kept as blocks
        rows = kept["object"]
        assert isinstance(rows, StampedRows) and rows.blocks
    got, want = NodePairs(), NodePairs()
    per_node = graph_facts(deferred, None, got)
    # As multisets: `rail` of a whole stamped node's NICs comes as a block of its plan only where the
    # node's names are at hand (links not made yet); the made inventory's are rows.
    assert _rows(per_node) == _rows(graph_facts(made, None, want))
    if name in ("fleet, nothing", "generated fleet"):  # each node class's rows, with its nodes' names
        for relation in ("gpu_pair_bottleneck", "rail"):
            rows = per_node[relation]
            assert isinstance(rows, StampedRows) and rows.blocks, relation
    assert _pairs(got) == _pairs(want)
    assert scaleup_domains(deferred) == scaleup_domains(made)
    for relation in ("scaleup_domain", "gpu_pair_bottleneck", "leaf_class", "die_pair_bottleneck"):
        # As multisets: a deferred node's blocks hold the loader's lists of its names (all of them,
        # by the plan's slots), the made inventory's the names picked per node.
        assert _rows(graph_facts(deferred, [relation])) == _rows(graph_facts(made, [relation]))
    if deferred.unmade_links():
        assert "links" not in deferred.__dict__  # none of it made the deferred links
    assert deferred.links == made.links  # and they are still what they were


def test_the_layouts_defer_links_and_reach_what_they_are_about() -> None:
    facts = {name: inventory_facts(load_inventory_text(text, "t.yaml")) for name, text in LAYOUTS.items()}
    # An id one of them would take, or an object put into one, makes every link at load.
    made_at_once = {"fleet, a cable with a stamped link's id", "fleet, an object put into a stamped node"}
    made_at_once.add("edge-soc.yaml")  # nothing stamped
    for name, text in LAYOUTS.items():
        assert bool(load_inventory_text(text, "t.yaml").unmade_links()) == (name not in made_at_once), name
    links = facts["RoCE and d2d"]["link"]
    kinds = {(str(a), str(b)): kind for _i, a, b, kind, _m in links}
    assert kinds["g2/gpu0", "g2/gpu2"] == "roce"  # inside a deferred node
    assert kinds["g0/gpu0", "g1/gpu0"] == "ethernet"  # between nodes
    assert kinds["g3/nic0", "spine0"] == "ethernet"
    assert ("g1/nic0<->spine0", "latency_ns", 900) in facts["RoCE and d2d"]["link_attr"]
    assert ("p1-n2/cpu0<->p1-n2/cpu1", "cable", "c1") in facts["fleet, nothing"]["label"]
    assert ("p1-n2/pcie0<->p1-n2/cpu0", "degraded") in facts["fleet, nothing"]["state"]
    inv = load_inventory_text(ROCE, "t.yaml")
    dies = graph_facts(inv, ["die_pair_bottleneck"])["die_pair_bottleneck"]
    assert ("g3/die2", "g3/die3", 1_000_000) in dies
    assert "links" not in inv.__dict__
