"""This round's fabric shortcuts of `place`, attacked: node_fabric_islands and the NICs' uplinks in one
pass over the fabric cables, a whole-stamped node's NICs read off its plan (611ccd8, f5ed377, f7b59b0),
gpu_fabric_bottleneck worked out once per group of a plan's nodes with the same NIC uplinks (fe5c7b1),
and a plan's GPUs picked in one call (c411c26). Each fleet below breaks one thing those shortcuts could
take for granted (all nodes of a template cabled alike, one cable per NIC, cables only NIC-to-switch)
on ONE stamped node only; every answer held against the start commit a8eff99's installed wheel: verify
(memory and duckdb), place with and without --why-not, queries of gpu_fabric_bottleneck, node_fabric_island
and fabric_island, and audit, compared byte for byte on 45 fleets (the shipped dgx-h100-pod, gb200-nvl72 and
mixed-fleet among them, with MIG and MI300X jobs), place --engine duckdb and what-ifs (--fail of a NIC or of
switches, --fail-link, --drain, --rank cost) on 9, and place --why-not at 32,768 GPUs. The expected values
below are derived by hand.

The fleet, by hand (FLEET below): template t4 is a node of 4 H100 GPUs on one NVSwitch, two PCIe Gen5
switches (pcie0: gpu0, gpu1, nic0, nic1; pcie1: gpu2, gpu3, nic2, nic3, each x16) and NICs nic0-nic3 with
rail labels 0-3. Pods p0, p1 hold racks r0, r1 of nodes n0, n1 (8 nodes, 32 GPUs), NIC l of every node
cabled to its pod's leaf l at 400 Gb/s, every leaf to spine0 and spine1 (2 x 400 Gb/s each): one fabric
island, named by its smallest switch id, p0-leaf0.

A GPU's share of the fabric (rules/schema.dl, gpu_fabric_bottleneck): the cabled NICs on its widest
host path, of its best class, each carrying min(its working fabric cables, the path to it) shared by the
GPUs that use it, summed, at most the GPU's own path. A PCIe Gen5 x16 link carries 63,008 MB/s a
direction in topolog's table (verifier/sources/inventory/specs.py). Here gpu0 and gpu1 both use nic0 and
nic1 (one switch away): each NIC min(400 Gb/s = 50,000 MB/s, 63,008) / 2 GPUs = 25,000 MB/s, two NICs:
50,000 MB/s for every GPU of an untouched node.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli

from verifier.facts.graph import graph_facts
from verifier.sources.inventory.loader import load_inventory_text
from verifier.sources.scenario import apply_scenario, scenario_from

ROOT = Path(__file__).resolve().parents[2]

_HEAD = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: rf54}
templates:
  t4:
    kind: node
    labels: {tenant: research}
    children:
      - {name: cpu0, kind: cpu, model: Xeon-8480C}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}
      - {name: nvsw0, kind: nvswitch, model: NVSwitch-Gen3}
      - {name: "pcie{i}", kind: pcie_switch, model: PEX89104, count: 2}
      - {name: "nic{i}", kind: nic, model: ConnectX-7, count: 4, labels: {rail: "{i}"}}
    links:
      - {a: "gpu{g}", b: nvsw0, kind: nvswitch, generation: 4, count: 18, foreach: {g: 0..3}}
      - {a: "{d}{g}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu, nic], g: [0, 1]}}
      - {a: "{d}{g}", b: pcie1, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu, nic], g: [2, 3]}}
      - {a: "pcie{s}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {s: [0, 1]}}
objects:
  - name: p{i}
    kind: pod
    count: 2
    children:
      - name: "{pod}-r{i}"
        kind: rack
        count: 2
        children:
          - template: t4
            name: "{rack}-n{i}"
            count: 2
            overrides:
"""
_PODS = """\
      - {name: "{pod}-leaf{i}", kind: switch, model: QM9700, count: 4, labels: {role: leaf, rail: "{i}"}}
    links:
      - {a: "{pod}-r{r}-n{n}/nic{l}", b: "{pod}-leaf{l}", kind: infiniband, bandwidth: 400 Gb/s,
         foreach: {r: 0..1, n: 0..1, l: 0..3}}
"""
_POD_OVERRIDE = "    overrides:\n      p0:\n        links: [{links}]\n"
# p1-leaf0 keeps its spine uplinks when p0-leaf0 loses them (leaves="1..3" in fleet()).
_P1_LEAF0_UP = '  - {a: p1-leaf0, b: "spine{s}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {s: 0..1}}\n'
_SPINES = '  - {name: "spine{i}", kind: switch, model: QM9700, count: 2, labels: {role: spine}}\n'
_UPLINKS = (
    'links:\n  - {a: "p{p}-leaf{l}", b: "spine{s}", kind: infiniband, count: 2, bandwidth: 400 Gb/s, '
    "foreach: {p: 0..1, l: LEAVES, s: 0..1}}\n"
)


def fleet(
    node_override: str = "",
    pod_links: str = "",
    objects: str = "",
    links: str = "",
    leaves: str = "0..3",
    pods: bool = True,
) -> str:
    """FLEET, changed: an override of one stamped node (YAML lines under `overrides:`), overrides of
    pod p0's cables, objects and top-level links added, the leaves that have spine uplinks in each pod.
    """
    text = _HEAD + "".join(f"              {line}\n" for line in node_override.splitlines())
    if pods:
        text += _PODS
    else:  # the leaves alone: no NIC is cabled
        text += _PODS.split("    links:\n")[0]
    if pod_links:
        text += _POD_OVERRIDE.format(links=pod_links)
    text += _SPINES + objects + _UPLINKS.replace("LEAVES", leaves) + links
    return text


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(text)
    return path


def _rows(path: Path, query: str) -> list[list[object]]:
    code, out, err = run_cli("query", str(path), "--format", "json", query)
    assert code == 0, err
    rows: list[list[object]] = json.loads(out)["rows"]
    return rows


def _changed(path: Path) -> tuple[int, dict[str, object]]:
    """How many GPUs have a gpu_fabric_bottleneck row, and those whose share is not 50,000 MB/s."""
    rows = _rows(path, "gpu_fabric_bottleneck(G, M)")
    return len(rows), {str(g): m for g, m in rows if m != 50_000}


# (fleet, GPUs with a share, the shares other than 50,000 MB/s), each derived by hand:
SHARES = {
    # p0-r1-n0's cable nic2-leaf2 down (a pod override): nic2 has no working cable, so gpu2 and gpu3
    # use nic3 alone: 50,000 / 2 = 25,000 MB/s. Its template-mates keep 50,000.
    "cable-down": (
        fleet(pod_links="{a: p0-r1-n0/nic2, b: p0-leaf2, state: down}"),
        32,
        {"p0-r1-n0/gpu2": 25_000, "p0-r1-n0/gpu3": 25_000},
    ),
    # That cable at 100 Gb/s = 12,500 MB/s: nic2 gives 12,500 / 2 = 6,250, nic3 25,000: 31,250 each.
    "cable-slow": (
        fleet(pod_links="{a: p0-r1-n0/nic2, b: p0-leaf2, bandwidth: 100 Gb/s}"),
        32,
        {"p0-r1-n0/gpu2": 31_250, "p0-r1-n0/gpu3": 31_250},
    ),
    # A degraded cable still works (only `down` takes a cable out): nothing changes.
    "cable-degraded": (fleet(pod_links="{a: p0-r1-n0/nic2, b: p0-leaf2, state: degraded}"), 32, {}),
    # All four cables of p0-r1-n1 down: its NICs reach no switch, its 4 GPUs get no row.
    "node-off-fabric": (
        fleet(pod_links=", ".join(f"{{a: p0-r1-n1/nic{n}, b: p0-leaf{n}, state: down}}" for n in range(4))),
        28,
        {},
    ),
    # p0-r0-n0/nic0 cabled twice (a second 400 Gb/s cable to p0-leaf0): 800 Gb/s = 100,000 MB/s, held
    # to its 63,008 MB/s path: 31,504 for each of gpu0, gpu1, plus nic1's 25,000 = 56,504.
    "nic-cabled-twice": (
        fleet(links="  - {a: p0-r0-n0/nic0, b: p0-leaf0, kind: infiniband, bandwidth: 400 Gb/s}\n"),
        32,
        {"p0-r0-n0/gpu0": 56_504, "p0-r0-n0/gpu1": 56_504},
    ),
    # The same NIC's second cable to another leaf (p0-r0-n0/nic1 to p0-leaf2): the same sum for nic1.
    "nic-to-other-leaf": (
        fleet(links="  - {a: p0-r0-n0/nic1, b: p0-leaf2, kind: infiniband, bandwidth: 400 Gb/s}\n"),
        32,
        {"p0-r0-n0/gpu0": 56_504, "p0-r0-n0/gpu1": 56_504},
    ),
    # A 400 Gb/s cable between nic0 and nic1 of p0-r0-n0: a fabric cable at each end, so both NICs
    # carry 100,000 MB/s, held to 63,008: 31,504 + 31,504 = 63,008, the GPU's own path (no more).
    "nic-to-nic": (
        fleet(links="  - {a: p0-r0-n0/nic0, b: p0-r0-n0/nic1, kind: infiniband, bandwidth: 400 Gb/s}\n"),
        32,
        {"p0-r0-n0/gpu0": 63_008, "p0-r0-n0/gpu1": 63_008},
    ),
    # A cable between p0-r0-n0/nic3 and p1-r0-n0/nic3 (two nodes): nic3 carries 800 Gb/s at both ends:
    # gpu2 and gpu3 of both nodes 31,504 + 25,000 = 56,504.
    "node-to-node": (
        fleet(links="  - {a: p0-r0-n0/nic3, b: p1-r0-n0/nic3, kind: infiniband, bandwidth: 400 Gb/s}\n"),
        32,
        {f"{n}/gpu{g}": 56_504 for n in ("p0-r0-n0", "p1-r0-n0") for g in (2, 3)},
    ),
    # An override removing p0-r0-n1's nic2 (its pod cable goes with it): gpu2, gpu3 share nic3: 25,000.
    "nic-removed": (
        fleet("p0-r0-n1:\n  devices: {nic2: {remove: true}}"),
        32,
        {"p0-r0-n1/gpu2": 25_000, "p0-r0-n1/gpu3": 25_000},
    ),
    # p0-r0-n1's nic2-pcie1 link down: nic2 is on no host path of any GPU: 25,000 as above.
    "nic-pcie-down": (
        fleet("p0-r0-n1:\n  links: [{a: nic2, b: pcie1, state: down}]"),
        32,
        {"p0-r0-n1/gpu2": 25_000, "p0-r0-n1/gpu3": 25_000},
    ),
    # p0-r0-n1's nic0-pcie0 link at 4 lanes (15,752 MB/s): nic1's path (63,008) is the widest, so gpu0
    # and gpu1 use nic1 alone: 25,000 (not 25,000 + a narrower NIC's part).
    "nic-pcie-narrow": (
        fleet("p0-r0-n1:\n  links: [{a: nic0, b: pcie0, lanes: 4}]"),
        32,
        {"p0-r0-n1/gpu0": 25_000, "p0-r0-n1/gpu1": 25_000},
    ),
    # Different rail labels on one node, and leaf0 of p0 without spine uplinks: shares do not change.
    "rail-labels": (fleet('p0-r0-n1:\n  devices: {nic1: {labels: {rail: "3"}}, nic3: {labels: {rail: "1"}}}'), 32, {}),
    "leaf-cut-off": (
        fleet(leaves="1..3", links=_P1_LEAF0_UP),
        32,
        {},
    ),
    # A GPU's own Ethernet port cabled to a leaf (p0-r0-n0/gpu0, 100 Gb/s), or to another node's GPU:
    # no NIC of it, so no share changes.
    "gpu-port-to-leaf": (
        fleet(links="  - {a: p0-r0-n0/gpu0, b: p0-leaf0, kind: ethernet, bandwidth: 100 Gb/s}\n"),
        32,
        {},
    ),
    "gpu-port-to-gpu": (
        fleet(links="  - {a: p0-r0-n0/gpu0, b: p0-r0-n1/gpu0, kind: ethernet, bandwidth: 100 Gb/s}\n"),
        32,
        {},
    ),
    # p0-r1-n1/nic3 also cabled straight to spine1 at 800 Gb/s: 400 + 800 Gb/s held to 63,008 MB/s:
    # 31,504 + nic2's 25,000 = 56,504 for gpu2, gpu3.
    "nic-to-spine": (
        fleet(links="  - {a: p0-r1-n1/nic3, b: spine1, kind: infiniband, bandwidth: 800 Gb/s}\n"),
        32,
        {"p0-r1-n1/gpu2": 56_504, "p0-r1-n1/gpu3": 56_504},
    ),
    # No NIC cabled at all: no GPU has a share.
    "no-fabric": (fleet(pods=False), 0, {}),
}


@pytest.mark.parametrize("name", sorted(SHARES))
def test_a_gpus_share_of_the_fabric_follows_its_own_nodes_cables(tmp_path: Path, name: str) -> None:
    text, count, changed = SHARES[name]
    assert _changed(_write(tmp_path, text)) == (count, changed)


def test_a_plain_node_among_stamped_ones_has_its_own_share(tmp_path: Path) -> None:
    # `lone` (not from a template): gpu0, gpu1, nic0, nic1 each x16 straight to cpu0; nic0 cabled to
    # p0-leaf0 at 400 Gb/s (50,000 MB/s), nic1 to p0-leaf1 at 200 Gb/s (25,000). Both NICs one CPU away
    # from each GPU, paths alike: nic0 50,000 / 2 + nic1 25,000 / 2 = 37,500 each; on the island.
    lone = (
        "  - name: lone\n    kind: node\n    labels: {tenant: research}\n    children:\n"
        "      - {name: cpu0, kind: cpu, model: Xeon-8480C}\n"
        '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}\n'
        '      - {name: "nic{i}", kind: nic, model: ConnectX-7, count: 2, labels: {rail: "{i}"}}\n'
        "    links:\n"
        "      - {a: gpu0, b: gpu1, kind: nvlink, generation: 4, count: 18}\n"
        '      - {a: "{d}{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu, nic], g: [0, 1]}}\n'
    )
    cables = (
        "  - {a: lone/nic0, b: p0-leaf0, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: lone/nic1, b: p0-leaf1, kind: infiniband, bandwidth: 200 Gb/s}\n"
    )
    path = _write(tmp_path, fleet(objects=lone, links=cables))
    assert _changed(path) == (34, {"lone/gpu0": 37_500, "lone/gpu1": 37_500})
    assert ["lone", "p0-leaf0"] in _rows(path, "node_fabric_island(N, I)")
    # Uncabled, it is the one node off the fabric: ("lone", "").
    path = _write(tmp_path, fleet(objects=lone))
    assert [r for r in _rows(path, "node_fabric_island(N, I)") if r[1] != "p0-leaf0"] == [["lone", ""]]


NODES = [f"p{p}-r{r}-n{n}" for p in range(2) for r in range(2) for n in range(2)]


def test_one_stamped_node_off_the_fabric_gets_the_empty_island(tmp_path: Path) -> None:
    # All four cables of p0-r1-n1 down: it alone has NICs reaching no switch.
    downs = ", ".join(f"{{a: p0-r1-n1/nic{n}, b: p0-leaf{n}, state: down}}" for n in range(4))
    rows = _rows(_write(tmp_path, fleet(pod_links=downs)), "node_fabric_island(N, I)")
    assert rows == sorted([[n, "p0-leaf0"] for n in NODES if n != "p0-r1-n1"] + [["p0-r1-n1", ""]])


def test_a_leaf_with_no_spine_is_an_island_its_pods_nodes_also_reach(tmp_path: Path) -> None:
    # p0-leaf0 has no spine cable: an island of its own; the rest (p0-leaf1..3, p1-leaf0..3, spines)
    # is one, named p0-leaf1. p0's nodes reach both, p1's only p0-leaf1: 4 + 8 rows.
    text = fleet(leaves="1..3", links=_P1_LEAF0_UP)
    path = _write(tmp_path, text)
    expected = [[n, "p0-leaf1"] for n in NODES] + [[n, "p0-leaf0"] for n in NODES if n.startswith("p0")]
    assert _rows(path, "node_fabric_island(N, I)") == sorted(expected)
    islands = {str(s): str(i) for s, i in _rows(path, "fabric_island(S, I)")}
    assert islands["p0-leaf0"] == "p0-leaf0" and islands["spine1"] == islands["p1-leaf0"] == "p0-leaf1"


def test_no_fabric_leaves_every_node_on_the_empty_island(tmp_path: Path) -> None:
    # Leaves and spines cabled, no NIC: every node has NICs reaching no switch.
    rows = _rows(_write(tmp_path, fleet(pods=False)), "node_fabric_island(N, I)")
    assert rows == [[n, ""] for n in NODES]


def test_a_cable_between_nodes_or_nics_joins_no_island(tmp_path: Path) -> None:
    # Device-to-device cables: every node still reaches p0-leaf0 only, and no switch changes island.
    for extra in (
        "  - {a: p0-r0-n0/nic3, b: p1-r0-n0/nic3, kind: infiniband, bandwidth: 400 Gb/s}\n",
        "  - {a: p0-r0-n0/nic0, b: p0-r0-n0/nic1, kind: infiniband, bandwidth: 400 Gb/s}\n",
    ):
        path = _write(tmp_path, fleet(links=extra))
        assert _rows(path, "node_fabric_island(N, I)") == [[n, "p0-leaf0"] for n in NODES]


def test_a_spine_with_no_leaf_is_its_own_island(tmp_path: Path) -> None:
    path = _write(tmp_path, fleet(objects="  - {name: spine9, kind: switch, model: QM9700, labels: {role: spine}}\n"))
    islands = {str(s): str(i) for s, i in _rows(path, "fabric_island(S, I)")}
    assert islands["spine9"] == "spine9" and set(islands.values()) == {"p0-leaf0", "spine9"}


def _place(tmp_path: Path, text: str, jobs: str) -> dict[str, dict[str, Any]]:
    (tmp_path / "principals.yml").write_text((ROOT / "inventories" / "principals.yml").read_text())
    job_file = tmp_path / "jobs.yaml"
    job_file.write_text("apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n" + jobs)
    code, out, err = run_cli("place", str(_write(tmp_path, text)), str(job_file), "--why-not", "--format", "json")
    assert code in (0, 1), err
    return {j["job"]: j for j in json.loads(out)["jobs"]}


def test_min_network_bandwidth_judges_the_one_node_whose_cable_is_down(tmp_path: Path) -> None:
    # p0-r1-n0's nic2 cable down: its gpu2, gpu3 reach the fabric at 25,000 MB/s (above), gpu0, gpu1 at
    # 50,000. 400 Gb/s = 50,000 MB/s: 2 of its GPUs qualify, the job needs 4; the 7 other nodes host it.
    # 100 Gb/s = 12,500 MB/s: all 8 nodes host a 2-GPU job.
    jobs = (
        "  - {name: fab400, principal: research, gpus: 4, topology: {scope: node, min_network_bandwidth: 400 Gb/s}}\n"
        "  - {name: fab100, principal: research, gpus: 2, topology: {scope: node, min_network_bandwidth: 100 Gb/s}}\n"
    )
    got = _place(tmp_path, fleet(pod_links="{a: p0-r1-n0/nic2, b: p0-leaf2, state: down}"), jobs)
    assert (got["fab400"]["candidates"], got["fab400"]["hosting"]) == (8, 7)
    assert [w["message"] for w in got["fab400"]["why_not"]] == [
        "p0-r1-n0: 2 GPUs reach the fabric at 50 GB/s or more, job needs 4"
    ]
    assert (got["fab100"]["candidates"], got["fab100"]["hosting"]) == (8, 8)


def test_rail_alignment_is_judged_per_stamped_node(tmp_path: Path) -> None:
    # A GPU is on its rail when every rail of its nearest NIC (its own label, its leaves') is the GPU's
    # index (rules/placement/lib/stages.dl). p0-r0-n1's nic1 says rail 3 and is cabled to p0-leaf1
    # (rail 1), nic3 the other way round: rails {1, 3} for both, so gpu1 and gpu3 are off their rail and
    # the node hosts none of a rail-aligned node job; its 7 template-mates (rails 0-3 in order) do.
    jobs = "  - {name: rail4, principal: research, gpus: 4, topology: {scope: node, rail_aligned: true}}\n"
    text = fleet('p0-r0-n1:\n  devices: {nic1: {labels: {rail: "3"}}, nic3: {labels: {rail: "1"}}}')
    got = _place(tmp_path, text, jobs)["rail4"]
    assert (got["candidates"], got["hosting"]) == (8, 7)
    assert [w["message"] for w in got["why_not"]] == [
        "p0-r0-n1: 0 GPUs on nodes whose GPUs each reach the fabric through a NIC of their own rail, job needs 4"
    ]


def test_a_switch_inside_every_stamped_node(tmp_path: Path) -> None:
    # t4 given a switch `tor` of its own, nic3 cabled to it at 400 Gb/s (a template fabric link): nic3
    # carries 800 Gb/s = 100,000 MB/s, held to its 63,008 MB/s path: gpu2 and gpu3 of every node
    # 31,504 + nic2's 25,000 = 56,504. p0-r0-n1/nic0 is also cabled to p0-r0-n0/tor: its gpu0, gpu1
    # the same 56,504. p0-r0-n0/tor has a cable to spine0, so it is in island p0-leaf0; every other
    # tor is an island of its own, reached by its own node. Every node reaches p0-leaf0.
    text = fleet().replace(
        "      - {name: nvsw0, kind: nvswitch, model: NVSwitch-Gen3}\n",
        "      - {name: nvsw0, kind: nvswitch, model: NVSwitch-Gen3}\n"
        "      - {name: tor, kind: switch, model: QM9700}\n",
    )
    text = text.replace(
        "foreach: {s: [0, 1]}}\n",
        "foreach: {s: [0, 1]}}\n      - {a: nic3, b: tor, kind: infiniband, bandwidth: 400 Gb/s}\n",
        1,
    )
    text += (
        "  - {a: p0-r0-n1/nic0, b: p0-r0-n0/tor, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: p0-r0-n0/tor, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}\n"
    )
    path = _write(tmp_path, text)
    changed = {f"{n}/gpu{g}": 56_504 for n in NODES for g in (2, 3)}
    changed |= {"p0-r0-n1/gpu0": 56_504, "p0-r0-n1/gpu1": 56_504}
    assert _changed(path) == (32, changed)
    expected = [[n, "p0-leaf0"] for n in NODES] + [[n, f"{n}/tor"] for n in NODES if n != "p0-r0-n0"]
    assert _rows(path, "node_fabric_island(N, I)") == sorted(expected)
    islands = {str(s): str(i) for s, i in _rows(path, "fabric_island(S, I)")}
    assert islands["p0-r0-n0/tor"] == "p0-leaf0" and islands["p1-r1-n1/tor"] == "p1-r1-n1/tor"


def test_a_template_with_one_nic(tmp_path: Path) -> None:
    # t4 with one NIC (nic0, on pcie0 with gpu0 and gpu1; gpu2, gpu3 on pcie1): all four GPUs reach it
    # (one PCIe switch or the CPU away), it is the only cabled NIC: 400 Gb/s = 50,000 MB/s / 4 = 12,500.
    text = fleet(leaves="0..3").replace('count: 4, labels: {rail: "{i}"}}', 'count: 1, labels: {rail: "0"}}')
    text = text.replace(
        "foreach: {d: [gpu, nic], g: [0, 1]}}",
        "foreach: {d: [gpu, nic], g: [0]}}\n      - {a: gpu1, b: pcie0, kind: pcie, generation: 5, lanes: 16}",
    )
    text = text.replace(
        '      - {a: "{d}{g}", b: pcie1, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu, nic], g: [2, 3]}}',
        '      - {a: "gpu{g}", b: pcie1, kind: pcie, generation: 5, lanes: 16, foreach: {g: [2, 3]}}',
    )
    text = text.replace("l: 0..3}}", "l: [0]}}")
    path = _write(tmp_path, text)
    assert _changed(path) == (32, {f"{n}/gpu{g}": 12_500 for n in NODES for g in range(4)})
    assert _rows(path, "node_fabric_island(N, I)") == [[n, "p0-leaf0"] for n in NODES]


def test_a_second_cable_to_a_lone_leaf_or_a_plain_nodes_switch_adds_an_island(tmp_path: Path) -> None:
    # p1-r1-n1/nic0 also cabled to `isl`, a leaf with no other cable: isl is an island of its own and
    # p1-r1-n1 reaches it besides p0-leaf0. nic0 now has 800 Gb/s: gpu0, gpu1 31,504 + 25,000 = 56,504.
    isl = '  - {name: isl, kind: switch, model: QM9700, labels: {role: leaf, rail: "0"}}\n'
    path = _write(
        tmp_path, fleet(objects=isl, links="  - {a: p1-r1-n1/nic0, b: isl, kind: infiniband, bandwidth: 400 Gb/s}\n")
    )
    assert _changed(path) == (32, {"p1-r1-n1/gpu0": 56_504, "p1-r1-n1/gpu1": 56_504})
    assert _rows(path, "node_fabric_island(N, I)") == sorted([[n, "p0-leaf0"] for n in NODES] + [["p1-r1-n1", "isl"]])
    # A switch inside a plain node `hub` (no GPU, no NIC), nic0 of p1-r0-n0 and p1-r0-n1 cabled to it:
    # hub/tor an island of its own, both nodes reach it; hub itself has no NIC, so no row.
    hub = "  - name: hub\n    kind: node\n    children:\n      - {name: tor, kind: switch, model: QM9700}\n"
    cables = "".join(
        f"  - {{a: {n}/nic0, b: hub/tor, kind: infiniband, bandwidth: 400 Gb/s}}\n" for n in ("p1-r0-n0", "p1-r0-n1")
    )
    path = _write(tmp_path, fleet(objects=hub, links=cables))
    rows = [[n, "p0-leaf0"] for n in NODES] + [["p1-r0-n0", "hub/tor"], ["p1-r0-n1", "hub/tor"]]
    assert _rows(path, "node_fabric_island(N, I)") == sorted(rows)


def test_a_what_if_failing_one_stamped_nodes_cable(tmp_path: Path) -> None:
    # --fail-link on p0-r1-n0's nic2 cable, FLEET unchanged on disk: as "cable-down" above, gpu2 and
    # gpu3 of p0-r1-n0 reach the fabric at 25,000 MB/s after it. pod16 (16 GPUs, each at 400 Gb/s =
    # 50,000 MB/s or more, scope any): before, p0 and p1 both hold 16 such GPUs (the tie goes to the
    # name, p0); after, p0 holds 14: the job moves to p1, hosted by 1 pod instead of 2. fab400 (a node's
    # 4 GPUs at 50,000): p0-r1-n0 no longer hosts it (8 nodes -> 7); p0-r0-n0 stays the best.
    (tmp_path / "principals.yml").write_text((ROOT / "inventories" / "principals.yml").read_text())
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        "  - {name: pod16, principal: research, gpus: 16, topology: {scope: any, min_network_bandwidth: 400 Gb/s}}\n"
        "  - {name: fab400, principal: research, gpus: 4, topology: {scope: node, min_network_bandwidth: 400 Gb/s}}\n"
    )
    path = _write(tmp_path, fleet())
    code, out, err = run_cli(
        "place", str(path), str(jobs), "--fail-link", "p0-r1-n0/nic2<->p0-leaf2", "--format", "json"
    )
    assert code in (0, 1), err
    got = {j["job"]: j for j in json.loads(out)["jobs"]}
    pod16, fab400 = got["pod16"], got["fab400"]
    assert (pod16["outcome"], pod16["before"]["domain"], pod16["after"]["domain"]) == ("moved", "p0", "p1")
    assert (pod16["hosting_before"], pod16["hosting_after"]) == (2, 1)
    assert (fab400["outcome"], fab400["after"]["domain"]) == ("unchanged", "p0-r0-n0")
    assert (fab400["hosting_before"], fab400["hosting_after"]) == (8, 7)


# Objects put into one stamped node from outside its template (`parent:`), each cabled by top-level links.
_PARENTED = {
    # A fifth NIC in p0-r0-n0, x16 on pcie1, cabled to p0-leaf3 at 400 Gb/s: gpu2 and gpu3 now share
    # nic2, nic3 and nicx, 25,000 MB/s each: 75,000, held to the GPU's own 63,008 MB/s path.
    "nic-cabled": (
        '  - {name: p0-r0-n0/nicx, kind: nic, model: ConnectX-7, parent: p0-r0-n0, labels: {rail: "0"}}\n',
        "  - {a: p0-r0-n0/nicx, b: p0-leaf3, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: p0-r0-n0/nicx, b: p0-r0-n0/pcie1, kind: pcie, generation: 5, lanes: 16}\n",
        (32, {"p0-r0-n0/gpu2": 63_008, "p0-r0-n0/gpu3": 63_008}),
    ),
    # The same NIC with no link at all: the node's other NICs still reach p0-leaf0 (no "" row).
    "nic-uncabled": (
        '  - {name: p0-r0-n0/nicx, kind: nic, model: ConnectX-7, parent: p0-r0-n0, labels: {rail: "0"}}\n',
        "",
        (32, {}),
    ),
    # A fifth GPU in p0-r0-n0 on pcie0: gpu0, gpu1 and gpux share nic0 and nic1: 50,000 // 3 = 16,666
    # from each, 33,332.
    "gpu": (
        "  - {name: p0-r0-n0/gpux, kind: gpu, model: H100-SXM5-80GB, parent: p0-r0-n0}\n",
        "  - {a: p0-r0-n0/gpux, b: p0-r0-n0/pcie0, kind: pcie, generation: 5, lanes: 16}\n",
        (33, {f"p0-r0-n0/gpu{g}": 33_332 for g in ("0", "1", "x")}),
    ),
    # A switch in p0-r0-n0, p0-r0-n1/nic0 cabled to it: an island of its own that p0-r0-n1 reaches;
    # nic0 at 800 Gb/s: p0-r0-n1's gpu0, gpu1 31,504 + 25,000 = 56,504.
    "switch": (
        "  - {name: p0-r0-n0/tor, kind: switch, model: QM9700, parent: p0-r0-n0}\n",
        "  - {a: p0-r0-n1/nic0, b: p0-r0-n0/tor, kind: infiniband, bandwidth: 400 Gb/s}\n",
        (32, {"p0-r0-n1/gpu0": 56_504, "p0-r0-n1/gpu1": 56_504}),
    ),
}
_PARENTED_ISLANDS = {"switch": [["p0-r0-n1", "p0-r0-n0/tor"]]}


@pytest.mark.parametrize("name", sorted(_PARENTED))
def test_an_object_put_into_one_stamped_node_from_outside(tmp_path: Path, name: str) -> None:
    obj, cables, shares = _PARENTED[name]
    path = _write(tmp_path, fleet(objects=obj, links=cables))
    assert _changed(path) == shares
    expected = [[n, "p0-leaf0"] for n in NODES] + _PARENTED_ISLANDS.get(name, [])
    assert _rows(path, "node_fabric_island(N, I)") == sorted(expected)


def test_a_node_whose_own_cables_are_down_reaches_the_fabric_through_a_nic_put_into_it(tmp_path: Path) -> None:
    # p0-r1-n1's four template NIC cables down, a NIC put into it (`parent:`, on no PCIe link) cabled
    # to p0-leaf0: the node reaches island p0-leaf0 (no "" row), but no GPU of it has a host path to
    # that NIC: its 4 GPUs get no share (28 rows).
    downs = ", ".join(f"{{a: p0-r1-n1/nic{n}, b: p0-leaf{n}, state: down}}" for n in range(4))
    text = fleet(
        pod_links=downs,
        objects="  - {name: p0-r1-n1/nicx, kind: nic, model: ConnectX-7, parent: p0-r1-n1}\n",
        links="  - {a: p0-r1-n1/nicx, b: p0-leaf0, kind: infiniband, bandwidth: 400 Gb/s}\n",
    )
    path = _write(tmp_path, text)
    assert _changed(path) == (28, {})
    assert _rows(path, "node_fabric_island(N, I)") == [[n, "p0-leaf0"] for n in NODES]


def test_a_second_file_of_the_inventory_cables_its_own_stamped_nodes_to_the_first_files_leaves(
    tmp_path: Path,
) -> None:
    # A second file of the same inventory (metadata.name rf54) stamps b0, b1, b2 from its template t2:
    # 2 GPUs and one NIC, each x16 to cpu0. b0/nic0 cabled to p0-leaf0 at 400 Gb/s: both GPUs share
    # 50,000 MB/s: 25,000 each; b1/nic0 to p1-leaf1 at 200 Gb/s: 12,500 each; b2 uncabled: no share,
    # and the one node off the fabric ("" row). FLEET's 32 GPUs keep 50,000: 36 rows.
    second = tmp_path / "b.yaml"
    second.write_text(
        "apiVersion: topolog.dev/v1\nkind: Inventory\nmetadata: {name: rf54}\ntemplates:\n  t2:\n    kind: node\n"
        "    labels: {tenant: research}\n    children:\n      - {name: cpu0, kind: cpu, model: Xeon-8480C}\n"
        '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}\n'
        "      - {name: nic0, kind: nic, model: ConnectX-7}\n    links:\n"
        '      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {g: [0, 1]}}\n'
        "      - {a: nic0, b: cpu0, kind: pcie, generation: 5, lanes: 16}\n"
        'objects:\n  - {template: t2, name: "b{i}", count: 3}\nlinks:\n'
        "  - {a: b0/nic0, b: p0-leaf0, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: b1/nic0, b: p1-leaf1, kind: infiniband, bandwidth: 200 Gb/s}\n"
    )
    first = _write(tmp_path, fleet())
    code, out, err = run_cli("query", str(first), str(second), "--format", "json", "gpu_fabric_bottleneck(G, M)")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert len(rows) == 36
    assert [r for r in rows if r[1] != 50_000] == [
        ["b0/gpu0", 25_000],
        ["b0/gpu1", 25_000],
        ["b1/gpu0", 12_500],
        ["b1/gpu1", 12_500],
    ]
    code, out, err = run_cli("query", str(first), str(second), "--format", "json", "node_fabric_island(N, I)")
    assert code == 0, err
    expected = [[n, "p0-leaf0"] for n in [*NODES, "b0", "b1"]] + [["b2", ""]]
    assert json.loads(out)["rows"] == sorted(expected)


def _nic2_down() -> str:
    """FLEET with p0-r0-n1's nic2 marked down (an override of the device; its cable untouched)."""
    return fleet("p0-r0-n1:\n  devices: {nic2: {state: down}}")


def _leaf2_down() -> str:
    """FLEET with p0's leaf p0-leaf2 marked down (a pod override of the device; its cables untouched)."""
    override = "    overrides:\n      p0:\n        devices: {p0-leaf2: {state: down}}\n"
    return fleet().replace(_SPINES, override + _SPINES, 1)


# A device marked down in the inventory moves no data: its cables carry nothing (as `place --fail ID`
# already has it, which also takes the device's links down).
_DOWN_DEVICES: dict[str, tuple[Callable[[], str], dict[str, int]]] = {
    # p0-r0-n1's nic2 down: gpu2 and gpu3 have only nic3: 50,000 / 2 = 25,000 MB/s each.
    "nic": (
        _nic2_down,
        {"p0-r0-n1/gpu2": 25_000, "p0-r0-n1/gpu3": 25_000},
    ),
    # p0-leaf2 down: nic2 of each of p0's 4 nodes reaches no working switch: their gpu2, gpu3 25,000.
    "leaf": (_leaf2_down, {f"{n}/gpu{g}": 25_000 for n in NODES[:4] for g in (2, 3)}),
}


@pytest.mark.parametrize("device", sorted(_DOWN_DEVICES))
def test_a_down_device_carries_nothing(tmp_path: Path, device: str) -> None:
    make, changed = _DOWN_DEVICES[device]
    assert _changed(_write(tmp_path, make())) == (32, changed)


# The device each of _DOWN_DEVICES marks down, and what `place` makes of it, by hand. fab400 wants a
# node's 4 GPUs at 400 Gb/s = 50,000 MB/s each: p0-r0-n1 with nic2 down has 2 such GPUs (gpu0, gpu1;
# gpu2, gpu3 at 25,000, above): 7 of the 8 nodes host it. p0-leaf2 down: p0's 4 nodes have 2 each:
# p1's 4 nodes host it.
_DOWN_TARGETS = {"nic": ("p0-r0-n1/nic2", 7), "leaf": ("p0-leaf2", 4)}
_FAB400 = "  - {name: fab400, principal: research, gpus: 4, topology: {scope: node, min_network_bandwidth: 400 Gb/s}}\n"
_FABRIC_RELATIONS = {
    "gpu_fabric_bottleneck",
    "node_fabric_island",
    "fabric_island",
    "leaf_class",
    "leaf_class_bottleneck",
}


def _fabric_facts(text: str, fail: tuple[str, ...] = ()) -> dict[str, list[tuple[object, ...]]]:
    inv = load_inventory_text(text, "fleet.yaml")
    if fail:
        inv = apply_scenario(inv, scenario_from(fail=fail))
    got = graph_facts(inv, _FABRIC_RELATIONS)
    return {rel: sorted(tuple(row) for row in got[rel]) for rel in sorted(_FABRIC_RELATIONS)}


@pytest.mark.parametrize("device", sorted(_DOWN_DEVICES))
def test_a_device_marked_down_and_its_what_if_agree(tmp_path: Path, device: str) -> None:
    # `place --fail ID` writes the device down and every link at it; the inventory writes the device
    # down only. Both mean the device carries nothing: the same fabric summaries, the same hosts.
    make, _shares = _DOWN_DEVICES[device]
    target, hosts = _DOWN_TARGETS[device]
    assert _fabric_facts(make()) == _fabric_facts(fleet(), (target,))
    assert _place(tmp_path, make(), _FAB400)["fab400"]["hosting"] == hosts
    jobs = tmp_path / "jobs.yaml"  # written by _place
    code, out, err = run_cli("place", str(_write(tmp_path, fleet())), str(jobs), "--fail", target, "--format", "json")
    assert code in (0, 1), err
    (fab400,) = json.loads(out)["jobs"]
    assert (fab400["hosting_before"], fab400["hosting_after"]) == (8, hosts)


def test_a_leaf_marked_down_joins_no_island(tmp_path: Path) -> None:
    # p0-leaf2 down: its spine cables carry nothing, so it is an island of its own (named by itself);
    # every other switch stays on p0-leaf0's. p0's nodes reach p0-leaf0 through nic0, nic1, nic3 (no
    # island through nic2, and no "" row: each reaches one); p1's nodes as before.
    path = _write(tmp_path, _leaf2_down())
    islands = {str(s): i for s, i in _rows(path, "fabric_island(S, I)")}
    assert islands.pop("p0-leaf2") == "p0-leaf2"
    assert set(islands.values()) == {"p0-leaf0"} and len(islands) == 9  # 8 leaves, 2 spines, less p0-leaf2
    assert _rows(path, "node_fabric_island(N, I)") == [[n, "p0-leaf0"] for n in NODES]
    # verify: HEALTH002 names the down leaf; LINK011 (a pod's leaves split into islands) leaves it to
    # that finding, since a leaf that is down serves no host (rules/links/lib/fabric_scope.dl).
    (tmp_path / "principals.yml").write_text((ROOT / "inventories" / "principals.yml").read_text())
    code, out, err = run_cli("verify", str(path), "--format", "json")
    assert code == 1, err
    found = [(f["rule"], f["subjects"]) for f in json.loads(out)["findings"]]
    assert ("HEALTH002", ["p0-leaf2"]) in found
    assert [f for f in found if f[0] == "LINK011"] == []


def test_nics_marked_down_in_the_template_carry_nothing_on_any_stamped_node(tmp_path: Path) -> None:
    # t4's NICs written `state: down` in the template itself: every node is still stamped whole from
    # its plan (the down devices are read off the plan). No NIC carries anything: no GPU has a share
    # (gpu_fabric_bottleneck has rows only for GPUs with a working NIC: 0 rows), and every node, whose
    # NICs reach no switch, is on the "" island. The same as failing all 32 NICs with `place --fail`.
    text = fleet().replace('count: 4, labels: {rail: "{i}"}}', 'count: 4, labels: {rail: "{i}"}, state: down}', 1)
    assert text != fleet()
    path = _write(tmp_path, text)
    assert _changed(path) == (0, {})
    assert _rows(path, "node_fabric_island(N, I)") == [[n, ""] for n in NODES]
    nics = tuple(f"{n}/nic{i}" for n in NODES for i in range(4))
    assert _fabric_facts(text) == _fabric_facts(fleet(), nics)
