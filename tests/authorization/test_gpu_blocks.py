"""The GPUs' classes read by node groups (classes.gpu_classes, EntityGraph.gpu_blocks) are the classes
worked out GPU by GPU (classes.partition_gpus), and nodes that are not their plan exactly get rows of their own.

A node stamped whole from its template gives its GPUs' classes as a block (its plan's GPU slots,
each one's class); a node changed by an override (a GPU down, labels of its own) is read GPU by
GPU, as is a GPU outside every template.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.authorization.classes import PolicyReads, gpu_classes, partition_gpus, policy_reads
from verifier.authorization.entities import build_graph, uid
from verifier.authorization.policies import load_policies
from verifier.core.stamped_rows import StampedRows
from verifier.engine.ast import Row
from verifier.sources.inventory.loader import load_inventory, load_inventory_text
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[2]
PRINCIPALS = load_principals(ROOT / "inventories" / "principals.yml")

# A node template of two GPUs joined by one NVLink, and the objects section's heading.
BOX = """\
apiVersion: topolog.dev/v1
kind: Inventory
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
    links:
      - {a: gpu0, b: gpu1, kind: nvlink, generation: 4}
objects:
"""

# Two racks of two nodes of one template (two GPUs each). r0 passes tenant a down to n0 and n1,
# both stamped whole. r1 passes tenant b down: its n0 has gpu1 down and its n1 is quarantined by
# an override of its own labels, so neither is its plan exactly. gpu9 hangs from r1 itself.
FLEET = (
    BOX
    + """\
  - name: r0
    kind: rack
    labels: {tenant: a}
    children:
      - {template: box, name: "r0-n{i}", count: 2}
  - name: r1
    kind: rack
    labels: {tenant: b}
    children:
      - {name: gpu9, kind: gpu, model: H100-SXM5-80GB}
      - template: box
        name: "r1-n{i}"
        count: 2
        overrides:
          r1-n0:
            devices: {gpu1: {state: down}}
          r1-n1:
            labels: {quarantine: "true"}
"""
)

READS = PolicyReads(frozenset({"tenant", "state", "quarantined"}), frozenset())
"""A policy set reading the tenant, the state and the quarantine of hardware, naming none of it."""


def test_classes_by_node_groups_are_derived_by_hand() -> None:
    inv = load_inventory_text(FLEET, "fleet.yaml")
    assert set(inv.stamped) == {"r0-n0", "r0-n1"}  # the overridden nodes are not their plan exactly
    assert set(inv.unmade_links()) == {"r0-n0", "r0-n1"}  # their plan and names at hand
    graph = build_graph(inv, None, PRINCIPALS)
    found = gpu_classes(graph, READS)
    assert found is not None
    classes, rows = found
    # By hand, (tenant, state, quarantined) of each GPU:
    #   r0-n0/gpu0, r0-n0/gpu1, r0-n1/gpu0, r0-n1/gpu1: (a, ok, false)   -> class r0-n0/gpu0
    #   r1-n0/gpu0 and gpu9 (from r1 itself):           (b, ok, false)   -> class gpu9 ("g" < "r")
    #   r1-n0/gpu1:                                      (b, down, false) -> class r1-n0/gpu1
    #   r1-n1/gpu0, r1-n1/gpu1:                          (b, ok, true)    -> class r1-n1/gpu0
    # Classes are sorted by their representative's uid.
    names = ["gpu9", "r0-n0/gpu0", "r1-n0/gpu1", "r1-n1/gpu0"]
    assert classes == [(uid("Gpu", n), n) for n in names]
    expected = {
        ("r0-n0/gpu0", "r0-n0/gpu0"),
        ("r0-n0/gpu1", "r0-n0/gpu0"),
        ("r0-n1/gpu0", "r0-n0/gpu0"),
        ("r0-n1/gpu1", "r0-n0/gpu0"),
        ("gpu9", "gpu9"),
        ("r1-n0/gpu0", "gpu9"),
        ("r1-n0/gpu1", "r1-n0/gpu1"),
        ("r1-n1/gpu0", "r1-n1/gpu0"),
        ("r1-n1/gpu1", "r1-n1/gpu0"),
    }
    assert sorted(rows) == sorted(expected) and len(rows) == len(expected)
    # The stamped nodes' rows are one block (their plan's two GPU slots); the others are plain rows.
    assert isinstance(rows, StampedRows)
    assert len(rows.blocks) == 1 and len(rows.blocks[0]) == 4
    assert sorted(rows.plain) == sorted(r for r in expected if not r[0].startswith("r0-"))


# A GPU inside a GPU in every node of the template: the GPU holding it is read one by one (its
# attributes are its own and its inner GPU's), on nodes stamped whole too.
NESTED = FLEET.replace(
    '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}\n',
    '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}\n'
    "      - {name: gpu5, kind: gpu, model: H100-SXM5-80GB,\n"
    "         children: [{name: inner, kind: gpu, model: H100-SXM5-80GB}]}\n",
)


def test_a_gpu_holding_a_gpu_in_a_plan_is_read_one_by_one() -> None:
    inv = load_inventory_text(NESTED, "nested.yaml")
    assert {"r0-n0", "r0-n1"} <= set(inv.unmade_links())  # stamped whole, links not made
    counting = PolicyReads(READS.attributes | {"gpus"}, frozenset())  # also reads how many GPUs it holds
    found = gpu_classes(build_graph(inv, None, PRINCIPALS), counting)
    assert found is not None
    classes, rows = found
    ids, partitioned = partition_gpus(build_graph(inv, None, PRINCIPALS), counting)
    assert classes == [(u, name) for u, name, _at in partitioned]
    assert sorted(rows) == _by_gpu(partitioned, ids)
    assert not isinstance(rows, StampedRows)  # no block: a GPU holds another
    # By hand: gpu5 holds 2 GPUs (itself and inner), gpu0 1: not one class where the count is read.
    by_gpu = {str(gpu): str(name) for gpu, name in rows}
    assert by_gpu["r0-n0/gpu5"] == by_gpu["r0-n1/gpu5"] != by_gpu["r0-n0/gpu0"]


def _by_gpu(rows: list[tuple[str, str, list[int]]], ids: list[str]) -> list[Row]:
    return sorted((ids[i], name) for _uid, name, at in rows for i in at)


@pytest.mark.parametrize("path", [*sorted((ROOT / "inventories").glob("*.yaml")), None], ids=lambda p: str(p))
def test_classes_by_node_groups_are_those_worked_out_gpu_by_gpu(path: Path | None) -> None:
    inv = load_inventory([path]) if path is not None else load_inventory_text(FLEET, "fleet.yaml")
    for reads in (READS, policy_reads(load_policies(ROOT / "policies"))):
        found = gpu_classes(build_graph(inv, None, PRINCIPALS), reads)
        assert found is not None
        classes, rows = found
        ids, partitioned = partition_gpus(build_graph(inv, None, PRINCIPALS), reads)
        assert classes == [(u, name) for u, name, _at in partitioned]
        assert sorted(rows) == _by_gpu(partitioned, ids)


def test_a_policy_naming_hardware_leaves_the_classes_to_partition_gpus() -> None:
    inv = load_inventory_text(FLEET, "fleet.yaml")
    named = PolicyReads(READS.attributes, frozenset({uid("Gpu", "r0-n0/gpu0")}))
    assert gpu_classes(build_graph(inv, None, PRINCIPALS), named) is None


# Two nodes of one template whose ids differ in length, one the start of the other: "x." sorts
# after "x", but "x./gpu0" before "x/gpu0" ("." is below "/"), so the class's smallest GPU is not
# the smallest node's.
PREFIXED = (
    BOX
    + """\
  - name: r0
    kind: rack
    children:
      - {template: box, name: x}
      - {template: box, name: x.}
"""
)


def test_the_smallest_gpu_of_nodes_whose_ids_start_alike_is_found_gpu_by_gpu() -> None:
    inv = load_inventory_text(PREFIXED, "prefixed.yaml")
    assert set(inv.unmade_links()) == {"x", "x."}
    found = gpu_classes(build_graph(inv, None, PRINCIPALS), READS)
    assert found is not None
    classes, rows = found
    # By hand: the four GPUs look alike (tenant, state, quarantine); sorted, x./gpu0 comes first.
    assert classes == [(uid("Gpu", "x./gpu0"), "x./gpu0")]
    assert sorted(rows) == sorted((g, "x./gpu0") for g in ("x/gpu0", "x/gpu1", "x./gpu0", "x./gpu1"))
