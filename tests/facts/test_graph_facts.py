"""networkx path summaries: hand-computed bottlenecks and classes, structural-class sharing."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from verifier.facts.graph import NodePairs, graph_facts
from verifier.sources.inventory.loader import load_inventory, load_inventory_text
from verifier.sources.inventory.model import Inventory

if TYPE_CHECKING:
    from verifier.engine.ast import Program

ROOT = Path(__file__).resolve().parents[2]

NODE = """\
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, count: 2}
      - {name: "gpu{i}", kind: gpu, count: 3}
      - {name: nvsw0, kind: nvswitch}
      - {name: pcie0, kind: pcie_switch}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: "gpu{g}", b: nvsw0, kind: nvswitch, bandwidth: 450 GB/s, foreach: {g: [0, 1]}}
      - {a: "{d}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu0, gpu1, nic0]}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
      - {a: gpu2, b: cpu1, kind: pcie, generation: 4, lanes: 16}
      - {a: nic1, b: cpu1, kind: pcie, generation: 4, lanes: 8}
      - {a: cpu0, b: cpu1, kind: upi, bandwidth: 128 GB/s}
objects:
  - {template: box, name: "n{i}", count: 2}
  - {name: leaf0, kind: switch, labels: {role: leaf, rail: "0"}}
links:
  - {a: n0/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n0/nic1, b: leaf0, kind: infiniband, bandwidth: 100 Gb/s}
"""


def _facts(text: str = NODE) -> dict[str, Sequence[tuple[str | int, ...]]]:
    return graph_facts(load_inventory_text(text, "t.yaml"))


def test_gpu_pairs_by_hand() -> None:
    pairs = {(a, b): (c, m) for a, b, c, m in _facts()["gpu_pair_bottleneck"] if str(a).startswith("n0/")}
    assert pairs == {
        ("n0/gpu0", "n0/gpu1"): ("NV", 450000),  # through the NVSwitch
        # gpu0 -(63008)- pcie0 -(63008)- cpu0 -(128000)- cpu1 -(Gen4 x16 31504)- gpu2
        ("n0/gpu0", "n0/gpu2"): ("SYS", 31504),
        ("n0/gpu1", "n0/gpu2"): ("SYS", 31504),
    }


def test_pcie_switch_pair_is_pix_at_63_gbs() -> None:
    text = NODE.replace('- {a: "gpu{g}", b: nvsw0, kind: nvswitch, bandwidth: 450 GB/s, foreach: {g: [0, 1]}}', "")
    pairs = {(a, b): (c, m) for a, b, c, m in _facts(text)["gpu_pair_bottleneck"]}
    assert pairs[("n0/gpu0", "n0/gpu1")] == ("PIX", 63008)


def test_nic_paths_nearest_and_fabric() -> None:
    facts = _facts()
    paths = {(g, n): (c, m) for g, n, c, m in facts["gpu_nic_path"] if str(g).startswith("n0/")}
    assert paths[("n0/gpu0", "n0/nic0")] == ("PIX", 63008)
    assert paths[("n0/gpu0", "n0/nic1")] == ("SYS", 15752)  # nic1's Gen4 x8 link
    assert paths[("n0/gpu2", "n0/nic1")] == ("PHB", 15752)
    assert paths[("n0/gpu2", "n0/nic0")] == ("SYS", 31504)
    nearest = {g: (n, c) for g, n, c, _m in facts["nearest_nic"] if str(g).startswith("n0/")}
    assert nearest == {"n0/gpu0": ("n0/nic0", "PIX"), "n0/gpu1": ("n0/nic0", "PIX"), "n0/gpu2": ("n0/nic1", "PHB")}
    # n1 has no fabric links. Each GPU sends through the cabled NICs of its widest path, then its best
    # class (verifier/facts/nic_share.py, as NCCL's ncclTopoGetLocal): gpu0 and gpu1 through nic0 (PIX,
    # 63008), gpu2 through nic0 too (SYS at 31504 is wider than nic1's PHB at 15752). nic0 carries
    # min(its 400 Gb/s = 50000, the widest of its paths 63008) = 50000 for 3 GPUs: 16666 each.
    assert {g: m for g, m in facts["gpu_fabric_bottleneck"]} == {"n0/gpu0": 16666, "n0/gpu1": 16666, "n0/gpu2": 16666}


def test_pcie_paths_and_switch_load() -> None:
    facts = _facts()
    paths = {d: (r, s, m) for d, r, s, m in facts["pcie_path"] if str(d).startswith("n0/")}
    assert paths["n0/gpu0"] == ("n0/cpu0", 1, 63008)
    assert paths["n0/gpu2"] == ("n0/cpu1", 0, 31504)
    assert ("n0/pcie0", 63008, 3 * 63008) in facts["pcie_switch_load"]


def test_instances_share_one_class_but_overrides_do_not() -> None:
    text = NODE.replace(
        '  - {template: box, name: "n{i}", count: 2}',
        '  - {template: box, name: "n{i}", count: 2, overrides: {n1: {links: [{a: gpu1, b: nvsw0, state: down}]}}}',
    )
    pairs = {(a, b): (c, m) for a, b, c, m in _facts(text)["gpu_pair_bottleneck"]}
    assert pairs[("n0/gpu0", "n0/gpu1")] == ("NV", 450000)
    assert pairs[("n1/gpu0", "n1/gpu1")] == ("PIX", 63008)


def test_leaf_classes_on_the_dgx_pod() -> None:
    facts = graph_facts(load_inventory([ROOT / "inventories" / "dgx-h100-pod.yaml"]))
    assert {c for _l, c in facts["leaf_class"]} == {"leaf0"}
    # 4 spines, 2 x 400 Gb/s to each: the widest single path leaf-spine-leaf is 100000 MB/s.
    assert facts["leaf_class_bottleneck"] == [("leaf0", "leaf0", 100000)]
    assert len(facts["gpu_pair_bottleneck"]) == 8 * 28
    degraded = {(a, b): (c, m) for a, b, c, m in facts["gpu_pair_bottleneck"] if str(a).startswith("dgx03/")}
    # dgx03/gpu2's NVSwitch link is degraded: the fabric manager's default takes gpu2 out of NVLink
    # peer-to-peer (rules/topology/lib/platform.dl), so gpu0 - gpu2 runs over PCIe: gpu0 under pcie0,
    # gpu2 under pcie1, both switches on cpu0 (PHB), every hop Gen5 x16 = 16 x 3938 = 63008 MB/s.
    assert degraded[("dgx03/gpu0", "dgx03/gpu2")] == ("PHB", 63008)
    # Its healthy peers keep the whole switch plane: 125 + 100 + 100 + 125 GB/s = 450000 MB/s.
    assert degraded[("dgx03/gpu0", "dgx03/gpu1")] == ("NV", 450000)
    assert ("dgx00/leaf0", 0) not in facts["rail"] and ("leaf3", 3) in facts["rail"]


def test_only_wanted_relations_are_computed() -> None:
    facts = graph_facts(load_inventory_text(NODE, "t.yaml"), {"rail", "link"})
    assert facts["rail"] == [("leaf0", 0)]
    assert facts["gpu_pair_bottleneck"] == [] and facts["leaf_class"] == []


DIES = """apiVersion: topolog.dev/v1
objects:
  - name: n1
    kind: node
    children:
      - name: pkg
        kind: socket
        children:
          - {name: "iod{i}", kind: die, count: 4}
    links:
      - {a: iod0, b: iod1, kind: d2d, bandwidth: 400 GB/s}
      - {a: iod1, b: iod2, kind: d2d, bandwidth: 300 GB/s}
      - {a: iod0, b: iod2, kind: d2d, bandwidth: 100 GB/s}
      - {a: iod2, b: iod3, kind: d2d, bandwidth: 200 GB/s, state: down}
"""


def test_die_pairs_take_the_widest_path_and_skip_links_that_are_down() -> None:
    inv = load_inventory_text(DIES, "dies.yaml")
    rows = graph_facts(inv, {"die_pair_bottleneck"})["die_pair_bottleneck"]
    # iod0-iod2: direct 100 GB/s, but via iod1 min(400, 300) = 300 GB/s is wider.
    # iod3's only link is down, so it pairs with nothing.
    assert sorted(rows) == [
        ("n1/iod0", "n1/iod1", 400000),
        ("n1/iod0", "n1/iod2", 300000),
        ("n1/iod1", "n1/iod2", 300000),
    ]


SCALEUP_INVENTORIES = sorted(
    [*(ROOT / "inventories").glob("*.yaml"), *(ROOT / "tests" / "rules" / "fixtures").glob("*/*.yaml")]
)


REFERENCE_RULES = Path(__file__).with_name("nvlink_domain_reference.dl")


@functools.cache
def _reference_program() -> Program:
    """The shipped pack with nvlink_domain_reference.dl, sliced to the four relations compared.

    Built once per worker, not per inventory: each load_rules reads and hashes every shipped rule
    file and program_for slices it (some 17 ms of CPU together, a third of a small inventory's test),
    and a Program is frozen, so sharing it changes nothing.
    """
    from verifier.engine.queries import program_for
    from verifier.engine.rule_pack import shipped_first
    from verifier.session.session import load_rules

    wanted = {"nvlink_domain", "reference_nvlink_domain", "stray_scaleup_edge", "reference_stray_edge"}
    return program_for(load_rules(shipped_first([REFERENCE_RULES])), wanted)


@pytest.mark.parametrize("path", SCALEUP_INVENTORIES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_scaleup_domain_agrees_with_the_closure_in_rules(path: Path) -> None:
    """TOPO004's nvlink_domain and placement read the union-find answer: it must equal the
    components that closing scale-up reachability in rules gives (nvlink_domain_reference.dl), and
    TOPO004's stray steps (from SCALE005's stray links) the ones found from working steps.
    """
    from verifier.session.session import open_evaluation

    if path.name == "jobs.yaml":
        pytest.skip("a job file, not an inventory")
    # Only the rules the two answers depend on: the same rows as the whole pack gives, sooner.
    wanted = {"nvlink_domain", "reference_nvlink_domain", "stray_scaleup_edge", "reference_stray_edge"}
    program = _reference_program()
    with open_evaluation([path], program, authorize=False, also_read=sorted(wanted)) as model:
        read = sorted((str(g), str(d)) for g, d in model.engine.query("nvlink_domain"))
        closed = sorted((str(g), str(d)) for g, d in model.engine.query("reference_nvlink_domain"))
        stray = sorted((str(a), str(b)) for a, b in model.engine.query("stray_scaleup_edge"))
        reference_stray = sorted((str(a), str(b)) for a, b in model.engine.query("reference_stray_edge"))
    assert sorted(graph_facts(model.inventory, ["scaleup_domain"])["scaleup_domain"]) == closed
    assert read == closed
    assert stray == reference_stray
    assert closed or path.parent.name != "inventories"  # every shipped inventory has GPUs


def test_scaleup_domain_skips_down_links_and_names_by_smallest_gpu() -> None:
    down = "\n      - {a: gpu2, b: nvsw0, kind: nvswitch, bandwidth: 450 GB/s, state: down}"
    text = NODE.replace("foreach: {g: [0, 1]}}", "foreach: {g: [0, 1]}}" + down)
    rows = {g: d for g, d in graph_facts(load_inventory_text(text, "t.yaml"), ["scaleup_domain"])["scaleup_domain"]}
    # gpu0 and gpu1 share nvsw0; gpu2's only scale-up link is down, so it is its own domain.
    assert rows == {
        "n0/gpu0": "n0/gpu0",
        "n0/gpu1": "n0/gpu0",
        "n0/gpu2": "n0/gpu2",
        "n1/gpu0": "n1/gpu0",
        "n1/gpu1": "n1/gpu0",
        "n1/gpu2": "n1/gpu2",
    }


def _slow(inv: Inventory) -> Inventory:
    """The same inventory with no node known to be its template's plan: every node read in full."""
    return replace(inv, stamped={})


def _all_facts(
    inv: Inventory,
) -> tuple[dict[str, list[tuple[str | int, ...]]], dict[str, list[tuple[str, str, int, str]]]]:
    pairs = NodePairs()
    facts = graph_facts(inv, None, pairs)
    facts.update({r: rows for r, rows in graph_facts(inv).items() if r not in facts or not facts[r]})
    per_node = {n: sorted(pairs.pairs[c]) for n, c in pairs.class_of.items()}
    return {r: sorted(rows) for r, rows in facts.items()}, per_node


@pytest.mark.parametrize("path", SCALEUP_INVENTORIES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_template_shortcut_gives_the_same_facts(path: Path) -> None:
    if path.name == "jobs.yaml":
        pytest.skip("a job file, not an inventory")
    inv = load_inventory([path])
    assert _all_facts(inv) == _all_facts(_slow(inv))


def test_template_shortcut_is_used_and_steps_aside() -> None:
    pod = load_inventory([ROOT / "inventories" / "dgx-h100-pod.yaml"])
    # Every DGX node is its template's plan but dgx03, whose override degrades an NVLink bond.
    assert sorted(pod.stamped) == [f"dgx0{i}" for i in range(8) if i != 3]
    mixed = load_inventory([ROOT / "inventories" / "mixed-fleet.yaml"])
    assert "rtx-n2" not in mixed.stamped and "rtx-n3" in mixed.stamped  # rtx-n2 has an override
    # A top-level link into n0 (a second NVSwitch bond for gpu2) makes n0 differ from its template.
    extra = NODE + "  - {a: n0/gpu2, b: n0/nvsw0, kind: nvswitch, bandwidth: 450 GB/s}\n"
    inv = load_inventory_text(extra, "t.yaml")
    assert set(inv.stamped) == {"n0", "n1"}
    fast, slow = _all_facts(inv), _all_facts(_slow(inv))
    assert fast == slow
    pairs = {(a, b): (c, m) for a, b, c, m in fast[0]["gpu_pair_bottleneck"]}
    # n0/gpu2 now meets gpu0 on nvsw0 (450 GB/s each way); n1 keeps the template's SYS path
    # (gpu2's Gen4 x16 to cpu1 is the narrowest hop, 31,504 MB/s, as in test_gpu_pairs_by_hand).
    assert pairs[("n0/gpu0", "n0/gpu2")] == ("NV", 450_000)
    assert pairs[("n1/gpu0", "n1/gpu2")] == ("SYS", 31_504)
    domains = {g: d for g, d in fast[0]["scaleup_domain"]}
    assert domains["n0/gpu2"] == "n0/gpu0" and domains["n1/gpu2"] == "n1/gpu2"
