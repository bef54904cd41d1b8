"""Attacks on this round's `place` shortcuts (issue 46, ninth round): what held.

1. Alike nodes' GPUs named, not read (profile_gpus.GpusByProfile.twins): a node whose one profile
   holds every GPU takes its GPU list from an already read node of its class with the same
   figures, renamed. Fixture fixtures/alike_adversarial55.yaml: one template `box` (4 H100-SXM5-80GB
   GPUs on one NVSwitch at 450 GB/s each, all behind pcie0 (PCIe 5 x16) with cpu0 and nic0), seven
   nodes n0-n6 and two non-ASCII ones nœud0-nœud1 in rack r0 (tenant research), x0-x1 in rack r1
   (no tenant). n2 is quarantined (a node label: its one profile's authorization class differs),
   n3's gpu2 has 40 GB (two profiles), n4's gpu1 is labelled (a tagged profile of its own), n5's
   gpu3 is down (two profiles), n6's only NIC cable is down (its GPUs' fabric share is 0: other
   figures), nœud0-nœud1 are cabled switch first. Each answer is also compared with the same run
   with the shortcut turned off (every profile read by a query, as at the start commit b43b57b),
   and the CLI's `--why-not --format json` was compared byte for byte with the b43b57b wheel.
2. node_fabric_islands in one pass (verifier/facts/fabric_islands.py): cables written either way, a
   NIC on two leaves, a cable between two NICs, a switch and a NIC marked down, a node with no NIC,
   a node not stamped whole and a node written by hand, under two hash seeds.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.facts.graph import graph_facts
from verifier.facts.whole_nodes import whole_nodes
from verifier.placement import profile_gpus
from verifier.placement.place import PlaceReport
from verifier.session.place_run import place
from verifier.sources.inventory.loader import load_inventory_text

HERE = Path(__file__).resolve().parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
INVENTORY, JOBS = HERE / "alike_adversarial55.yaml", HERE / "alike_adversarial55_jobs.yaml"

NVSWITCH = 450_000
"""Members of one node on one NVSwitch, 450 GB/s each: a GPU's scale-up links together (450 GB/s)
are below the sum of its pairs (3 x 450 GB/s), so any set of them has 450,000 MB/s (NodePairs.worst)."""

FABRIC_SHARE = 12_500
"""A GPU's share of the fabric: nic0 carries the smaller of its cable (400 Gb/s = 50,000 MB/s) and
the GPUs' widest path to it (PCIe 5 x16 = 63,008), divided among the 4 GPUs behind pcie0."""


def _gpus(node: str, *ids: int) -> tuple[str, ...]:
    return tuple(f"{node}/gpu{g}" for g in ids)


# dan is in team research (tenant research, inventories/principals.yml): r0's nodes are his unless
# quarantined (n2: policy quarantine-closed); x0 and x1 carry no tenant: no permit. Nodes sort by
# code point: "n6" < "nœud0" ('6' is U+0036, 'œ' U+0153). Members: the first GPUs by name.
# whole-node (4 GPUs, scope node): 11 candidates; n5 has 3 in service; n3's 40 GB GPU is eligible
# (no memory asked): 7 hosts, all at 450 GB/s, by name.
# pair-node (2 GPUs): n5 hosts too (gpu0, gpu1 in service); n4's labelled gpu1 is no exclusion.
# big-three (3 GPUs of 60 GB or more): n3 skips its 40 GB gpu2: gpu0, gpu1, gpu3.
# two-nodes (8 GPUs on at most 2 nodes of a rack): r0 hosts, r1 is denied; fullest nodes first, ties
# by name: n0 and n1, across nodes at their fabric share (FABRIC_SHARE).
HOSTS = ("n0", "n1", "n3", "n4", "n6", "nœud0", "nœud1")
EXPECTED: dict[str, list[tuple[str, tuple[str, ...], int | None]]] = {
    "whole-node": [(n, _gpus(n, 0, 1, 2, 3), NVSWITCH) for n in HOSTS],
    "pair-node": [(n, _gpus(n, 0, 1), NVSWITCH) for n in sorted((*HOSTS, "n5"))],
    "big-three": [(n, _gpus(n, *((0, 1, 3) if n == "n3" else (0, 1, 2))), NVSWITCH) for n in sorted((*HOSTS, "n5"))],
    "two-nodes": [("r0", (*_gpus("n0", 0, 1, 2, 3), *_gpus("n1", 0, 1, 2, 3)), FABRIC_SHARE)],
}
WHY_NOT = {
    "whole-node": {"n2": "authorization", "n5": "healthy", "x0": "authorization", "x1": "authorization"},
    "pair-node": {"n2": "authorization", "x0": "authorization", "x1": "authorization"},
    "big-three": {"n2": "authorization", "x0": "authorization", "x1": "authorization"},
    "two-nodes": {"r1": "authorization"},
}


def _placed(report: PlaceReport) -> dict[str, list[tuple[str, tuple[str, ...], int | None]]]:
    return {jp.job.name: [(p.domain, p.gpus, p.bottleneck_mbps) for p in jp.placements] for jp in report.jobs}


def _why_not(report: PlaceReport) -> dict[str, dict[str, str]]:
    return {jp.job.name: {w.domain: w.requirement for w in jp.why_not} for jp in report.jobs}


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    """The fixture beside the shipped principals file (found next to the inventory)."""
    shutil.copy(INVENTORY, tmp_path / INVENTORY.name)
    shutil.copy(ROOT / "inventories" / "principals.yml", tmp_path / "principals.yml")
    return tmp_path / INVENTORY.name


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_alike_nodes_named_as_read_by_hand(engine: str, copied: Path, nodes_read: list[str]) -> None:
    report = place([copied], [JOBS], why_not=True, engine=engine)
    assert report.authorization_checked
    assert _placed(report) == EXPECTED
    assert _why_not(report) == WHY_NOT
    # n1, nœud0 and nœud1 are n0's twins (one class, one profile, the same figures): named from n0's
    # read, never queried. n3, n4 and n5 have two profiles each, n6 other figures (fabric 0): read.
    # n2, x0 and x1 host nothing: their GPUs are never asked for.
    assert sorted(nodes_read) == ["n0", "n3", "n4", "n5", "n6"]


@pytest.mark.parametrize(("engine", "rank", "limit"), [("memory", "bandwidth", 0), ("duckdb", "cost", 2)])
def test_twins_give_what_queries_give(
    engine: str, rank: str, limit: int, copied: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With the shortcut off every profile's GPUs come from a query (the start commit's reading):
    # the whole report, why-not answers included, must be the same.
    fast = place([copied], [JOBS], rank=rank, why_not=True, engine=engine, limit=limit)
    monkeypatch.setattr(profile_gpus.GpusByProfile, "twins", lambda self, twins: None)
    slow = place([copied], [JOBS], rank=rank, why_not=True, engine=engine, limit=limit)
    assert fast == slow
    if limit:
        assert _placed(fast) == {name: shown[:limit] for name, shown in EXPECTED.items()}


_CHANGES = (
    '{labels: {quarantine: "true"}}',
    "{devices: {gpu%d: {state: down}}}",
    "{devices: {gpu%d: {remove: true}}}",
    "{devices: {gpu%d: {memory: {size: 40 GB}}}}",
    "{devices: {gpu%d: {labels: {pool: x}}}}",
    "{links: [{a: gpu%d, b: nvsw0, state: down}]}",
    "{state: drained}",
    "{devices: {nic0: {state: down}}}",
)
"""Per-node overrides of the fixture's template: each leaves a node of the class or changes what
place reads of it (an authorization class, a GPU's health, memory or tag, the node's GPUs)."""


def _variant(seed: int) -> str:
    """The fixture's template in one rack of 6 nodes, each changed by one of _CHANGES or not (by
    seed), each cabled to leaf0 either way round, or with its cable down, or with none."""
    pick = random.Random(seed)
    text = INVENTORY.read_text(encoding="utf-8").split("objects:")[0]
    lines = [text, "objects:\n  - {name: leaf0, kind: switch}\n  - name: r0\n    kind: rack\n"]
    lines.append("    labels: {tenant: research}\n    children:\n      - template: box\n")
    lines.append('        name: "n{i}"\n        count: 6\n')
    changes, links = ["        overrides:\n"], ["links:\n"]
    for n in range(6):
        change = pick.choice((*_CHANGES, "", "", ""))
        if change:
            changes.append(f"          n{n}: {change.replace('%d', str(pick.randrange(4)))}\n")
        ends = (f"n{n}/nic0", "leaf0") if pick.random() < 0.5 else ("leaf0", f"n{n}/nic0")
        state = pick.choice(("", "", ", state: down", None))
        if state is not None:
            links.append(f"  - {{a: {ends[0]}, b: {ends[1]}, kind: infiniband, bandwidth: 400 Gb/s{state}}}\n")
    return "".join(lines + (changes if len(changes) > 1 else []) + links)


@pytest.mark.parametrize("seed", [2, 10, 19, 27, 33, 34])  # seeds whose variants take two twins or more
def test_generated_alike_nodes_give_what_queries_give(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nodes of one template changed at random (seeded): with and without the twins' shortcut, the
    # same report. Beside these, 400 inventories of a like generator (one or two racks of 2- or 4-GPU
    # nodes, prices, a node written by hand) were placed three ways each (why-not; cost, duckdb,
    # limit 2; no authorization, limit 3) by this round's code and the start commit's (b43b57b):
    # the same reports, with 516 profiles named from a twin.
    inventory = tmp_path / "variant.yaml"
    inventory.write_text(_variant(seed), encoding="utf-8")
    shutil.copy(ROOT / "inventories" / "principals.yml", tmp_path / "principals.yml")
    named: list[str] = []
    from_twin = profile_gpus.GpusByProfile._from_twin

    def spied(self: profile_gpus.GpusByProfile, key: profile_gpus.ProfileKey) -> tuple[str, ...] | None:
        found = from_twin(self, key)
        if found is not None:
            named.append(str(key[0]))
        return found

    monkeypatch.setattr(profile_gpus.GpusByProfile, "_from_twin", spied)
    fast = place([inventory], [JOBS], why_not=True)
    assert len(named) >= 2  # the shortcut was taken
    monkeypatch.setattr(profile_gpus.GpusByProfile, "twins", lambda self, twins: None)
    assert fast == place([inventory], [JOBS], why_not=True)


def test_a_twin_of_another_length_of_name_and_count() -> None:
    # A profile's twin is only taken when its count agrees; the rename keeps the suffix after the
    # twin's node, whatever the two names' lengths (n0 -> nœud10: "nœud10/gpu0"...).
    gpus = profile_gpus.GpusByProfile.__new__(profile_gpus.GpusByProfile)
    a: profile_gpus.ProfileKey = ("n0", "H100", 1)
    b: profile_gpus.ProfileKey = ("nœud10", "H100", 1)
    c: profile_gpus.ProfileKey = ("n9", "H100", 1)
    gpus._key_node, gpus._twin_read = 0, {}
    gpus._lists = {a: ("n0/gpu0", "n0/gpu1", "n0/gpu10", "n0/gpu2")}
    gpus.counts = {a: 4, b: 4, c: 3}
    gpus.twins({a: 7, b: 7, c: 7})
    assert gpus._from_twin(b) == ("nœud10/gpu0", "nœud10/gpu1", "nœud10/gpu10", "nœud10/gpu2")
    assert gpus._from_twin(c) is None  # 3 GPUs, not 4: read by a query instead


# Fabric islands. leaf0-spine0-leaf1 are one island (leaf0, the smallest id); leaf2 has no switch
# link (its own); leaf3 is marked down (its own, and carries nothing). n0: nic0 -> leaf0 written NIC
# first, nic1 <- leaf2 written switch first: two rows. n1: nic0 on leaf1 and leaf2 (one NIC, two
# leaves; a host routes nothing): (n1, leaf0) and (n1, leaf2). n2 and n3: a cable between their
# nic0s reaches no switch, their nic1s have none: ("") each. n4: its one cable goes to leaf3 (down):
# (n4, ""). n5: nic1 is marked down (an override: not stamped whole), its cable carries nothing and
# nic0 has none: (n5, ""). b0 (stamped whole) has no NIC; its GPU is cabled to leaf2: (b0, leaf2). b1: no NIC and no
# cable: no row. h0 (written by hand): nic0 <- leaf1, written switch first: (h0, leaf0).
FABRIC = """\
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
  - {name: "leaf{i}", kind: switch, count: 3}
  - {name: leaf3, kind: switch, state: down}
  - {name: spine0, kind: switch}
  - template: box
    name: "n{i}"
    count: 6
    overrides:
      n5: {devices: {nic1: {state: down}}}
  - {template: bare, name: "b{i}", count: 2}
  - name: h0
    kind: node
    children: [{name: nic0, kind: nic}]
links:
  - {a: leaf0, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: spine0, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n0/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf2, b: n0/nic1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n1/nic0, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n1/nic0, b: leaf2, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n2/nic0, b: n3/nic0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n4/nic0, b: leaf3, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: n5/nic1, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: b0/gpu0, b: leaf2, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: leaf1, b: h0/nic0, kind: infiniband, bandwidth: 400 Gb/s}
"""
NODE_ISLANDS = [
    ("b0", "leaf2"),
    ("h0", "leaf0"),
    ("n0", "leaf0"),
    ("n0", "leaf2"),
    ("n1", "leaf0"),
    ("n1", "leaf2"),
    ("n2", ""),
    ("n3", ""),
    ("n4", ""),
    ("n5", ""),
]
SWITCH_ISLANDS = [("leaf0", "leaf0"), ("leaf1", "leaf0"), ("leaf2", "leaf2"), ("leaf3", "leaf3"), ("spine0", "leaf0")]


def _swapped(text: str) -> str:
    """Every top-level cable written with its ends the other way round."""
    lines = []
    for line in text.splitlines():
        if line.startswith("  - {a: "):
            a, rest = line[len("  - {a: ") :].split(", b: ", 1)
            b, rest = rest.split(", ", 1)
            line = f"  - {{a: {b}, b: {a}, {rest}"
        lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text", [FABRIC, _swapped(FABRIC)], ids=["as-written", "swapped"])
@pytest.mark.parametrize("uplinks", [False, True], ids=["islands", "with-uplinks"])
def test_node_islands_either_way_by_hand(text: str, uplinks: bool) -> None:
    inv = load_inventory_text(text, "t.yaml")
    assert whole_nodes(inv) == {"n0", "n1", "n2", "n3", "n4", "b0", "b1"}  # n5 overridden, h0 by hand
    # With gpu_fabric_bottleneck asked too, the cables' MB/s are added up on the same pass (place's way).
    want = {"node_fabric_island", "fabric_island"} | ({"gpu_fabric_bottleneck"} if uplinks else set())
    facts = graph_facts(inv, want)
    assert sorted(tuple(r) for r in facts["node_fabric_island"]) == NODE_ISLANDS
    assert sorted(tuple(r) for r in facts["fabric_island"]) == SWITCH_ISLANDS


def test_node_islands_under_other_hash_seeds(tmp_path: Path) -> None:
    # Sets of switches and nodes inside: the rows must not follow the string hashes.
    script = tmp_path / "islands.py"
    script.write_text(
        "import sys\n"
        "from verifier.facts.graph import graph_facts\n"
        "from verifier.sources.inventory.loader import load_inventory_text\n"
        "facts = graph_facts(load_inventory_text(sys.stdin.read(), 't.yaml'), {'node_fabric_island'})\n"
        "print(sorted(tuple(r) for r in facts['node_fabric_island']))\n"
    )
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, str(script)],
            input=FABRIC,
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=120,
        )
        assert done.stdout.strip() == repr(NODE_ISLANDS)
