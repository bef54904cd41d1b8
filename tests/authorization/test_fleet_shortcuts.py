"""The audit's and placement's shortcuts over a fleet's GPUs give what the entity-by-entity answers give.

EntityGraph.attrs_many shares one lookup between GPUs of one parent with one model and state,
groups_many one between GPUs of one parent, classes._Keys one class key between GPUs that no
policy names, and audit counts a run of alike GPUs of one group at once. Each is held here to
the plain answer (attrs, group, the class key as classes.py defines it, a count per GPU) on
every shipped inventory, on layered.yaml (labels between nodes and GPUs, a GPU inside a GPU)
and on a node whose GPUs differ in model, state and labels, listed out of order.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from verifier.authorization.audit import audit
from verifier.authorization.classes import (
    PolicyReads,
    class_keys,
    partition,
    partition_gpus,
    partition_rows,
    policy_reads,
)
from verifier.authorization.entities import build_graph, uid
from verifier.authorization.evaluate import ACTIONS
from verifier.authorization.setup import build_setup
from verifier.sources.inventory.loader import load_inventory, load_inventory_text
from verifier.sources.inventory.model import Inventory
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
INVENTORIES = sorted((ROOT / "inventories").glob("*.yaml"))
PRINCIPALS = load_principals(ROOT / "inventories" / "principals.yml")

# One rack: node n0's GPUs differ from their neighbours in model (gpu1), state (gpu2) and labels
# (gpu3); node n1's two GPUs are alike; gpu9 hangs from the rack itself.
MIXED = """\
apiVersion: topolog.dev/v1
kind: Inventory
objects:
  - name: r0
    kind: rack
    labels: {tenant: research}
    children:
      - {name: gpu9, kind: gpu, model: H100-SXM5-80GB}
      - name: n0
        kind: node
        children:
          - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
          - {name: gpu1, kind: gpu, model: A100-SXM4-80GB}
          - {name: gpu2, kind: gpu, model: H100-SXM5-80GB, state: down}
          - {name: gpu3, kind: gpu, model: H100-SXM5-80GB, labels: {tenant: other}}
          - {name: gpu4, kind: gpu, model: H100-SXM5-80GB}
      - name: n1
        kind: node
        children:
          - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
          - {name: gpu1, kind: gpu, model: H100-SXM5-80GB}
"""


# Nodes in other places: n0 at the top (no parent; its GPUs' group is n0), n1 straight under a
# pod (no rack: group n1) with labels of its own over the pod's, n2 and n3 alike in rack r of a
# labelled fleet (group r), n3 quarantined by its own label, and n4 straight under the fleet.
# m5 (listed first) is n1 but for the pod's tenant: a node's labels read wrong would give n1's
# GPU m5's shared mapping.
NODES = """\
apiVersion: topolog.dev/v1
kind: Inventory
objects:
  - name: n0
    kind: node
    labels: {tenant: solo, quarantine: "true"}
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
      - {name: gpu1, kind: gpu, model: H100-SXM5-80GB}
  - name: p
    kind: pod
    labels: {tenant: pod-t, zone: pz}
    children:
      - name: n1
        kind: node
        labels: {tenant: n1-t, owner: o1}
        children:
          - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
      - name: m5
        kind: node
        labels: {owner: o1}
        children:
          - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
  - name: f
    kind: fleet
    labels: {zone: fz}
    children:
      - name: r
        kind: rack
        children:
          - name: n2
            kind: node
            children:
              - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
          - name: n3
            kind: node
            labels: {quarantine: "true"}
            children:
              - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
      - name: n4
        kind: node
        children:
          - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
"""


def _inventories() -> list[tuple[str, Inventory]]:
    out = [(p.name, load_inventory([p])) for p in [*INVENTORIES, HERE / "layered.yaml"]]
    out.append(("mixed", load_inventory_text(MIXED, "mixed.yaml")))
    out.append(("nodes", load_inventory_text(NODES, "nodes.yaml")))
    return out


CASES = _inventories()


def _gpus_in_every_order(inv: Inventory) -> list[list[str]]:
    """The GPU uids sorted (as the audit lists them), reversed, and interleaved (no two neighbours alike)."""
    graph = build_graph(inv, None, PRINCIPALS)
    ordered = graph.uids_of_type("Gpu")
    return [ordered, ordered[::-1], ordered[::2] + ordered[1::2]]


@pytest.mark.parametrize(("name", "inv"), CASES, ids=[c[0] for c in CASES])
def test_attrs_and_groups_of_many_gpus_are_each_gpus(name: str, inv: Inventory) -> None:
    for uids in _gpus_in_every_order(inv):
        many = build_graph(inv, None, PRINCIPALS)
        one = build_graph(inv, None, PRINCIPALS)  # a graph of its own: nothing shared with `many`
        assert many.attrs_many(uids) == [one.attrs(u) for u in uids]
        assert build_graph(inv, None, PRINCIPALS).groups_many(uids) == [one.group(u) for u in uids]


@pytest.mark.parametrize(("name", "inv"), CASES, ids=[c[0] for c in CASES])
def test_gpu_rows_are_each_gpus_uid_attrs_and_group(name: str, inv: Inventory) -> None:
    # gpu_rows reads every GPU in one pass over the GPU objects; each row must be what the
    # entity-by-entity answers give, on a graph of its own (nothing shared or remembered).
    one = build_graph(inv, None, PRINCIPALS)
    uids = one.uids_of_type("Gpu")
    rows_uids, attrs, groups = build_graph(inv, None, PRINCIPALS).gpu_rows()
    assert rows_uids == uids
    assert attrs == [one.attrs(u) for u in uids]
    assert groups == [one.group(u) for u in uids]


@pytest.mark.parametrize(("name", "inv"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("named_node", [False, True])
def test_partition_rows_is_partition_with_positions(name: str, inv: Inventory, named_node: bool) -> None:
    # The classes of partition_rows are partition's, on the GPUs in every order; the positions
    # of each class are its members' places in the list given, in its members' (sorted) order.
    graph = build_graph(inv, None, PRINCIPALS)
    nodes = graph.uids_of_type("Node")
    named = frozenset(nodes[:1]) if named_node else frozenset()
    grouped = PolicyReads(frozenset({"tenant", "state", "model"}), named)
    for reads in (grouped, PolicyReads(grouped.attributes, named, groupable=False)):
        for uids in _gpus_in_every_order(inv):
            rows = partition_rows(uids, graph.attrs_many(uids), graph, reads)
            assert [c for c, _ in rows] == partition(uids, graph, reads)
            for c, at in rows:
                assert [uids[i] for i in at] == list(c.members)


def test_the_nodes_by_hand() -> None:
    # By hand from NODES: groups are a node's rack, else the node; m5 has the pod's tenant and
    # zone and its own owner; n1's tenant is its own label (over the pod's), its zone the pod's;
    # n2, n3 and n4 take zone fz from the fleet and tenant ""; n0 and n3 are quarantined by
    # their own labels.
    _, attrs, groups = build_graph(load_inventory_text(NODES, "nodes.yaml"), None, PRINCIPALS).gpu_rows()
    assert groups == ["m5", "n0", "n0", "n1", "r", "r", "n4"]
    assert [(a["tenant"], a["zone"], a["owner"], a["quarantined"]) for a in attrs] == [
        ("pod-t", "pz", "o1", False),
        ("solo", "", "", True),
        ("solo", "", "", True),
        ("n1-t", "pz", "o1", False),
        ("", "fz", "", False),
        ("", "fz", "", True),
        ("", "fz", "", False),
    ]


def test_the_mixed_node_by_hand() -> None:
    # By hand from MIXED: n0's gpu1 (A100), gpu2 (down) and gpu3 (tenant other) each differ from
    # gpu0 and gpu4, which are alike (tenant research from r0, state ok); every GPU's group is its
    # rack r0, gpu9 (directly under the rack) included.
    inv = load_inventory_text(MIXED, "mixed.yaml")
    graph = build_graph(inv, None, PRINCIPALS)
    uids = [f'Gpu::"n0/gpu{i}"' for i in range(5)]
    attrs = graph.attrs_many(uids)
    assert [a["state"] for a in attrs] == ["ok", "ok", "down", "ok", "ok"]
    assert [a["tenant"] for a in attrs] == ["research", "research", "research", "other", "research"]
    assert attrs[0] is attrs[4]  # alike GPUs share one mapping
    assert attrs[0] != attrs[1] and attrs[0] != attrs[2] and attrs[0] != attrs[3]
    assert graph.groups_many([*uids, 'Gpu::"gpu9"', 'Gpu::"n1/gpu1"']) == ["r0"] * 7


def _plain_key(attrs: Mapping[str, object], etype: str, reads: PolicyReads) -> tuple[object, ...]:
    """classes.py's key of an entity that no policy names, with no named hardware: its type and
    the values of every attribute a policy reads (lists as tuples), by attribute name."""
    values = tuple(
        (a, tuple(v) if isinstance(v, list) else v) for a, v in sorted(attrs.items()) if a in reads.attributes
    )
    return (etype, values, None, ())


@pytest.mark.parametrize(("name", "inv"), CASES, ids=[c[0] for c in CASES])
def test_gpu_class_keys_are_the_keys_classes_define(name: str, inv: Inventory) -> None:
    setup = build_setup(inv, [Path(name)], ROOT / "policies", PRINCIPALS)
    reads = policy_reads(setup.bundle)
    assert not any(u.startswith("Gpu::") for u in reads.named)  # the shipped policies name no GPU
    for uids in _gpus_in_every_order(inv):
        graph = build_graph(inv, None, PRINCIPALS)
        keys = class_keys(graph, reads)(uids)
        assert keys == [_plain_key(graph.attrs(u), "Gpu", reads) for u in uids]


@pytest.mark.parametrize(("name", "inv"), CASES, ids=[c[0] for c in CASES])
def test_a_policy_naming_hardware_still_splits_classes_by_it(name: str, inv: Inventory) -> None:
    # With a named node, the shortcut is off: a GPU under it gets it among its named ancestors,
    # so its class differs from an alike GPU elsewhere.
    graph = build_graph(inv, None, PRINCIPALS)
    gpus = graph.uids_of_type("Gpu")
    nodes = graph.uids_of_type("Node")
    if not nodes:
        pytest.skip("no node to name")
    named = frozenset({nodes[0]})
    reads = PolicyReads(frozenset({"tenant", "state"}), named)
    keys = class_keys(graph, reads)(gpus)
    for u, key in zip(gpus, keys, strict=True):
        under = nodes[0] in graph.ancestors(u)
        assert key[3] == ((nodes[0],) if under else ())


@pytest.mark.parametrize(("name", "inv"), CASES, ids=[c[0] for c in CASES])
def test_audit_counts_are_sums_over_each_gpu(name: str, inv: Inventory) -> None:
    setup = build_setup(inv, [Path(name)], ROOT / "policies", PRINCIPALS)
    result = audit(setup, list(ACTIONS))
    # Every GPU counted once per GPU its attributes count (itself, or the GPUs below it), in its group.
    graph = build_graph(inv, None, PRINCIPALS)
    gpus = graph.uids_of_type("Gpu")
    expected: dict[str, int] = {}
    for u in gpus:
        n = graph.attrs(u).get("gpus", 0)
        assert isinstance(n, int)
        expected[graph.group(u)] = expected.get(graph.group(u), 0) + n
    assert result.groups == dict(sorted(expected.items()))
    classes = partition(gpus, graph, policy_reads(setup.bundle))
    assert sum(len(c.members) for c in classes) == len(gpus)


@pytest.mark.parametrize(("name", "inv"), CASES, ids=[c[0] for c in CASES])
def test_gpu_ids_attrs_are_gpu_rows_without_uids_and_groups(name: str, inv: Inventory) -> None:
    one = build_graph(inv, None, PRINCIPALS)
    uids, attrs, _groups = one.gpu_rows()
    ids, lean_attrs = build_graph(inv, None, PRINCIPALS).gpu_ids_attrs()
    assert [uid("Gpu", i) for i in ids] == uids
    assert lean_attrs == attrs


GpuClasses = tuple[list[str], list[tuple[str, str, list[int]]]]


def _partition_gpus_the_long_way(inv: Inventory, reads: PolicyReads) -> GpuClasses:
    """partition_gpus as partition_rows gives it: every GPU's uid made, the classes keyed from them."""
    graph = build_graph(inv, None, PRINCIPALS)
    uids, attrs, _groups = graph.gpu_rows()
    ids = [graph.existing(u)[1] for u in uids]
    return ids, [(c.id, graph.existing(c.id)[1], at) for c, at in partition_rows(uids, attrs, graph, reads)]


@pytest.mark.parametrize(("name", "inv"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("named", ["none", "gpu", "node"])
def test_partition_gpus_is_partition_rows_of_every_gpu(name: str, inv: Inventory, named: str) -> None:
    # partition_gpus groups GPUs by their shared attribute mapping without a uid per GPU; with a
    # GPU named (a class of its own) and with a node named (the shortcut off), grouped or not.
    graph = build_graph(inv, None, PRINCIPALS)
    gpus, nodes = graph.uids_of_type("Gpu"), graph.uids_of_type("Node")
    names = {"none": frozenset(), "gpu": frozenset(gpus[1:2]), "node": frozenset(nodes[:1])}[named]
    grouped = PolicyReads(frozenset({"tenant", "state", "model"}), names)
    for reads in (grouped, PolicyReads(grouped.attributes, names, groupable=False)):
        assert partition_gpus(build_graph(inv, None, PRINCIPALS), reads) == _partition_gpus_the_long_way(inv, reads)


# Two alike GPUs at the top whose ids sort one way and whose uids the other: `g` < `g!` as ids,
# but Gpu::"g!" < Gpu::"g" as uids ('!' sorts before the closing '"'), and a class is named by
# its smallest uid (Cedar's representative). A GPU named by a policy is a class of its own.
ODD_IDS = """\
apiVersion: topolog.dev/v1
kind: Inventory
objects:
  - {name: g, kind: gpu, model: H100-SXM5-80GB}
  - {name: "g!", kind: gpu, model: H100-SXM5-80GB}
  - {name: h, kind: gpu, model: H100-SXM5-80GB}
"""


def test_a_class_is_named_by_its_smallest_uid_not_its_smallest_id() -> None:
    inv = load_inventory_text(ODD_IDS, "odd.yaml")
    reads = PolicyReads(frozenset({"tenant", "state", "model"}), frozenset())
    ids, classes = partition_gpus(build_graph(inv, None, PRINCIPALS), reads)
    # By hand: ids sorted g, g!, h (positions 0, 1, 2); one class of all three, its smallest uid
    # Gpu::"g!" (position 1), members in uid order g!, g, h.
    assert ids == ["g", "g!", "h"]
    assert classes == [('Gpu::"g!"', "g!", [1, 0, 2])]
    named = PolicyReads(reads.attributes, frozenset({'Gpu::"h"'}))
    # h named: its own class; g and g! stay one, named g!; classes sorted by uid (g! < g < h).
    assert partition_gpus(build_graph(inv, None, PRINCIPALS), named)[1] == [
        ('Gpu::"g!"', "g!", [1, 0]),
        ('Gpu::"h"', "h", [2]),
    ]
