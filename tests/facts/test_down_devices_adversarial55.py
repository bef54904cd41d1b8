"""Adversarial review of "a device marked down carries nothing inside its node" (b7c86ba, eed7e4b).

Since b7c86ba a NIC, PCIe switch, CPU or NVSwitch chip written `state: down` carries nothing, as
`--fail` has it, and the checks of the detours it causes (BW002, BW009, TOPO004, BW001) leave them
to the device's own finding (HEALTH002, SCALE006/SCALE007): one root cause, one finding. These
tests hold the other half: a second, independent fault of the same node is still found. The
exclusion first covered every GPU of a node with any such device down, so a node type's own wiring
fault (reported in every other node of the type) vanished from the one node that also had a device
down. A detour is now the down device's where the GPU's twin in a healthy node of its type (the node
that stands for the type, node_conformance) does not have it.

Every expected value is derived by hand from the inventories written here and in inventories/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli
from facts.down_helpers import findings, placed, placed_alike

ROOT = Path(__file__).resolve().parents[2]
POD = (ROOT / "inventories" / "dgx-h100-pod.yaml").read_text()
FLEET = (ROOT / "inventories" / "mixed-fleet.yaml").read_text()
POD_ANCHOR = "              dgx03:\n"
A100_NODES = '{template: mf-hgx-a100, name: "a100-n{i}", count: 2}'


def _subjects(found: list[tuple[str, tuple[str, ...]]], rule: str, prefix: str = "") -> list[str]:
    """The subjects of `rule`'s findings (all of them, merged findings too) that start with `prefix`."""
    return sorted({s for r, subjects in found if r == rule for s in subjects if s.startswith(prefix)})


def _replace(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def _pod_down(text: str, device: str) -> str:
    """The pod `text` with dgx01's `device` written `state: down` (an override of dgx01)."""
    override = f"              dgx01:\n                devices:\n                  {device}: {{state: down}}\n"
    return _replace(text, POD_ANCHOR, override + POD_ANCHOR)


def _a100_down(text: str, device: str) -> str:
    """The fleet `text` with a100-n1's `device` written `state: down`."""
    return _replace(
        text,
        A100_NODES,
        '{template: mf-hgx-a100, name: "a100-n{i}", count: 2, '
        f"overrides: {{a100-n1: {{devices: {{{device}: {{state: down}}}}}}}}}}",
    )


# A DGX H100 node type wired wrongly: nic6 and nic7 hang on pcie2 (with gpu4, gpu5, nic4, nic5), so
# pcie3 holds gpu6 and gpu7 and no NIC. gpu6's nearest NIC is then across cpu1's host bridge
# (pcie3 -> cpu1 -> pcie2 -> nic4..7): past NCCL's GPUDirect level PXB in a node type that promises
# gpu_nic_affinity and rail_optimized, BW009's error for gpu6 and gpu7 of each of the 8 nodes.
ODD_POD = _replace(
    POD,
    '- {a: "nic{g}", b: pcie3, kind: pcie, generation: 5, lanes: 16, foreach: {g: [6, 7]}}',
    '- {a: "nic{g}", b: pcie2, kind: pcie, generation: 5, lanes: 16, foreach: {g: [6, 7]}}',
)
ODD_GPUS = sorted(f"dgx{n:02d}/gpu{g}" for n in range(8) for g in (6, 7))


def test_a_down_nic_does_not_hide_its_node_types_gpudirect_fault(tmp_path: Path) -> None:
    # dgx01/nic1 down: gpu1 sends through nic0 on the same pcie0 (PIX), no detour worth a finding;
    # nic1 is HEALTH002's. gpu6 and gpu7 of dgx01 lose GPUDirect as in the seven other nodes, for
    # the wiring of the type, not for nic1 (their twins dgx00/gpu6, gpu7 are as far): BW009 still
    # names all 16 GPUs. (b7c86ba dropped dgx01/gpu6 and gpu7: 14.)
    found = findings(tmp_path, _pod_down(ODD_POD, "nic1"))
    assert [s for s in _subjects(found, "BW009") if "/gpu" in s] == ODD_GPUS
    assert _subjects(found, "HEALTH002") == ["dgx01/nic1"]
    assert not _subjects(found, "BW002") and not _subjects(found, "BW006")


def test_a_down_pcie_switch_does_not_hide_it_either(tmp_path: Path) -> None:
    # dgx01/pcie0 down: gpu0 and gpu1 reach no NIC at all (their one PCIe link is to pcie0), so no
    # detour of theirs is judged; gpu6 and gpu7 keep their type's BW009, as in every node.
    found = findings(tmp_path, _pod_down(ODD_POD, "pcie0"))
    assert _subjects(found, "BW009", "dgx01/gpu") == ["dgx01/gpu6", "dgx01/gpu7"]
    assert _subjects(found, "HEALTH002") == ["dgx01/pcie0"]


def test_any_healthy_node_of_the_type_is_a_twin(tmp_path: Path) -> None:
    # nic1 down in every node but dgx03 (which has its own override, a degraded NVLink bond): no node
    # is stamped whole, so the node that stands for the type is the smallest of the 8 alike, dgx00,
    # itself with nic1 down. dgx03 is the one healthy twin (nic1 up, the same wiring): its gpu6 and
    # gpu7 are as far from a NIC, so all 16 GPUs keep BW009, and the 7 down NICs are HEALTH002's.
    override = "".join(
        f"              dgx{n:02d}:\n                devices:\n                  nic1: {{state: down}}\n"
        for n in range(8)
        if n != 3
    )
    found = findings(tmp_path, _replace(ODD_POD, POD_ANCHOR, override + POD_ANCHOR))
    assert [s for s in _subjects(found, "BW009") if "/gpu" in s] == ODD_GPUS
    assert _subjects(found, "HEALTH002") == [f"dgx{n:02d}/nic1" for n in range(8) if n != 3]


DGX03_OVERRIDE = """            count: 4
            overrides:
              dgx03:
                # One of the four NVLinks between GPU 2 and NVSwitch 1 failed its
                # link training: the bond runs on 3 links (75 GB/s per direction).
                links:
                  - {a: gpu2, b: nvsw1, count: 3, state: degraded}
"""


def _two_nodes(dgx00: str) -> str:
    """The odd type, one node per rack (dgx00, dgx01; cabled as the pod's), dgx01 with nic1 down and
    dgx00 with the override lines `dgx00` (none: stamped whole, the type's reference)."""
    overrides = "              dgx01:\n                devices:\n                  nic1: {state: down}\n"
    if dgx00:
        overrides = f"              dgx00:\n{dgx00}" + overrides
    text = _replace(ODD_POD, DGX03_OVERRIDE, "            count: 1\n            overrides:\n" + overrides)
    return _replace(text, "foreach: {n: 0..7, r: 0..7}", "foreach: {n: 0..1, r: 0..7}")


def test_two_nodes_one_with_a_down_nic_keep_their_types_gpudirect_fault(tmp_path: Path) -> None:
    # gpu6 and gpu7 are far from any NIC with nic1 up or down (their switch, pcie3, holds no NIC):
    # BW009 for both nodes' gpu6 and gpu7. dgx00 is stamped whole and stands for the type: dgx01's twin.
    found = findings(tmp_path, _two_nodes(""))
    assert [s for s in _subjects(found, "BW009") if "/gpu" in s] == [
        "dgx00/gpu6", "dgx00/gpu7", "dgx01/gpu6", "dgx01/gpu7"
    ]  # fmt: skip
    assert _subjects(found, "HEALTH002") == ["dgx01/nic1"]


@pytest.mark.xfail(
    strict=True,
    reason="a node with no healthy node of its type to compare with has no twin to tell its type's wiring "
    "from the down device's detour: all its GPUs' detours are left to HEALTH002 (graph facts as if the "
    "device were up would tell them apart)",
)
def test_a_node_with_no_twin_keeps_its_types_gpudirect_fault(tmp_path: Path) -> None:
    # The same with dgx00 overridden too (a label): no node is stamped whole and two nodes make no
    # majority (verifier/facts/inventory.py: _conformance), so no node stands for the type, dgx01 has
    # no twin, and its gpu6 and gpu7 go unreported. An expert signs BW009 for all four GPUs still.
    found = findings(tmp_path, _two_nodes("                labels: {rack_slot: a}\n"))
    assert [s for s in _subjects(found, "BW009") if "/gpu" in s] == [
        "dgx00/gpu6", "dgx00/gpu7", "dgx01/gpu6", "dgx01/gpu7"
    ]  # fmt: skip


def test_the_detour_a_down_nic_causes_is_still_left_to_health002(tmp_path: Path) -> None:
    # The shipped pod with dgx01's nic2 and nic3 both down: gpu2 and gpu3 (on pcie1 with them) go to
    # nic0/nic1 on pcie0 through cpu0's host bridge, past PXB, and to another rail's NIC. Their twins
    # dgx00/gpu2, gpu3 have nic2/nic3 on their own switch (PIX): the down NICs are the one cause.
    text = _replace(
        POD,
        POD_ANCHOR,
        "              dgx01:\n                devices:\n                  nic2: {state: down}\n"
        f"                  nic3: {{state: down}}\n{POD_ANCHOR}",
    )
    found = findings(tmp_path, text)
    assert [f for f in found if f[0] in ("BW002", "BW006", "BW009")] == []
    assert _subjects(found, "HEALTH002") == ["dgx01/nic2", "dgx01/nic3"]


# A DGX H100 node type with nic3 on pcie3 (beside gpu6, gpu7, nic6, nic7) instead of pcie1: gpu3's
# nearest NIC is nic2 on its own pcie1 (PIX; nic3 is two switches and a host bridge away), which lands
# on leaf2: rail 2 for GPU index 3, BW006's error for gpu3 of every node (merged: gpu3 and nic2 of
# each node and leaf2).
RAIL_POD = _replace(
    POD,
    '- {a: "nic{g}", b: pcie1, kind: pcie, generation: 5, lanes: 16, foreach: {g: [2, 3]}}',
    '- {a: "nic{g}", b: pcie1, kind: pcie, generation: 5, lanes: 16, foreach: {g: [2]}}\n'
    "      - {a: nic3, b: pcie3, kind: pcie, generation: 5, lanes: 16}",
)


def test_a_down_own_rail_nic_does_not_hide_its_node_types_rail_mismatch(tmp_path: Path) -> None:
    # dgx01/nic3 down: gpu3 reaches the fabric through nic2 (leaf2) with nic3 up or down, for the
    # type's wiring (its twin dgx00/gpu3 does too), so BW006 still names dgx01/gpu3 as the seven
    # other nodes' gpu3. (b7c86ba dropped it: its own rail's NIC being down was taken as the cause.)
    found = findings(tmp_path, _pod_down(RAIL_POD, "nic3"))
    assert _subjects(found, "BW006", "dgx") == sorted(f"dgx{n:02d}/{d}" for n in range(8) for d in ("gpu3", "nic2"))
    assert _subjects(found, "HEALTH002") == ["dgx01/nic3"]


def test_a_down_own_rail_nic_whose_twins_are_miscabled_is_still_health002s(tmp_path: Path) -> None:
    # The shipped type (nic3 beside gpu3 on pcie1), but every node's nic3 cabled to leaf4 (rail 4):
    # gpu3's nearest NIC is nic3, on rail 4's leaf: BW006 for gpu3 of every node with nic3 up. In
    # dgx01 nic3 is down and gpu3 goes to nic2 (leaf2, cabled right): that detour is nic3's (the
    # healthy twins' nearest NIC is their own rail's, nic3), left to HEALTH002; nic3's cable to rail
    # 4's leaf is BW007's, down or not. So BW006 names gpu3 of the seven other nodes (ee2a2e6 named
    # dgx01/gpu3 with nic2 and leaf2, a cable that is right; b43b57b named it with nic3).
    text = _replace(
        POD,
        "    foreach: {n: 0..7, r: 0..7}\n",
        "    foreach: {n: 0..7, r: [0, 1, 2, 4, 5, 6, 7]}\n"
        '  - {a: "dgx{n:02d}/nic3", b: leaf4, kind: infiniband, bandwidth: 400 Gb/s, foreach: {n: 0..7}}\n',
    )
    found = findings(tmp_path, _pod_down(text, "nic3"))
    assert [s for s in _subjects(found, "BW006") if "/gpu" in s] == [f"dgx{n:02d}/gpu3" for n in range(8) if n != 1]
    assert _subjects(found, "HEALTH002") == ["dgx01/nic3"]
    assert "dgx01/nic3" in _subjects(found, "BW007")


# inventories/mixed-fleet.yaml's HGX A100 type wired wrongly: both NICs on cpu0 (the shipped type has
# nic1 on cpu1). gpu4..7 hang on cpu1, so their nearest NIC is across the sockets (SYS): BW002's
# warning (the type promises nvlink_domain only, no GPUDirect, so not BW009). gpu0..3 reach nic0 and
# nic1 through cpu0 (PHB), not remote.
ODD_FLEET = _replace(
    FLEET,
    '- {a: "nic{n}", b: "cpu{n}", kind: pcie, generation: 4, lanes: 16, foreach: {n: [0, 1]}}',
    '- {a: "nic{n}", b: cpu0, kind: pcie, generation: 4, lanes: 16, foreach: {n: [0, 1]}}',
)


def test_a_down_nic_does_not_hide_its_node_types_remote_nic(tmp_path: Path) -> None:
    # a100-n1/nic0 down: a100-n1's gpu4..7 now reach nic1 (also on cpu0, still SYS): the type's own
    # fault, reported as in a100-n0 (whose gpu4..7 reach nic0, the smaller id at the same class and
    # width). a100-n1's gpu0..3 reach nic1 at PHB: nothing. (b7c86ba dropped a100-n1's four GPUs.)
    found = findings(tmp_path, _a100_down(ODD_FLEET, "nic0"))
    gpus = [f"a100-n{n}/gpu{g}" for n in (0, 1) for g in range(4, 8)]
    assert _subjects(found, "BW002") == sorted([*gpus, "a100-n0/nic0", "a100-n1/nic1"])
    assert _subjects(found, "HEALTH002") == ["a100-n1/nic0"]


def test_a_down_nic_whose_detour_crosses_sockets_is_health002s(tmp_path: Path) -> None:
    # The shipped fleet, a100-n1/nic0 down: gpu0..3 (cpu0) now reach nic1 on cpu1 across the sockets
    # (SYS), a detour caused by nic0 alone: their twins a100-n0/gpu0..3 have nic0 on cpu0 (PHB).
    found = findings(tmp_path, _a100_down(FLEET, "nic0"))
    assert _subjects(found, "BW002") == []
    assert _subjects(found, "HEALTH002") == ["a100-n1/nic0"]


# The fleet's HGX A100 type with gpu7 linked to no NVSwitch chip (a type that splits its own promised
# NVLink domain: gpu0..6 one domain over the 6 chips, gpu7 alone) and a fabric manager that keeps
# GPUs in NVLink when a chip fails (nvswitch_failure_mode 1: a down chip is SCALE006's warning).
SPLIT_FLEET = _replace(
    _replace(
        FLEET,
        '{a: "gpu{g}", b: "nvsw{s}", kind: nvswitch, generation: 3, count: 2, foreach: {g: 0..7, s: 0..5}}',
        '{a: "gpu{g}", b: "nvsw{s}", kind: nvswitch, generation: 3, count: 2, foreach: {g: 0..6, s: 0..5}}',
    ),
    "  mf-hgx-a100:\n    kind: node\n",
    "  mf-hgx-a100:\n    kind: node\n    attrs: {nvswitch_failure_mode: 1}\n",
)


def test_a_down_nvswitch_chip_does_not_hide_its_node_types_split(tmp_path: Path) -> None:
    # a100-n1/nvsw0 down: gpu0..6 stay one domain over nvsw1..5, gpu7 is alone as in a100-n0, for
    # the type's wiring, not the chip. TOPO004 names both nodes, and BW001 gpu7 with each of the 7
    # others in both (merged findings: every GPU of both nodes is a subject); SCALE006 names the chip.
    # (eed7e4b and b7c86ba dropped a100-n1 from TOPO004 and BW001.)
    found = findings(tmp_path, _a100_down(SPLIT_FLEET, "nvsw0"))
    assert _subjects(found, "TOPO004", "a100") == ["a100-n0", "a100-n1"]
    assert _subjects(found, "BW001", "a100") == sorted(f"a100-n{n}/gpu{g}" for n in (0, 1) for g in range(8))
    assert _subjects(found, "SCALE006") == ["a100-n1/nvsw0"]


# A node type with two NVSwitch chips: gpu0 and gpu1 on both, gpu2 and gpu3 on nvsw1 only (9 NVLink 4
# links each); its fabric manager keeps GPUs when a chip fails (nvswitch_failure_mode 1). Healthy,
# nvsw1 joins all four GPUs: one domain. n1's nvsw1 is down: gpu0, gpu1 stay joined by nvsw0, gpu2
# and gpu3 are alone: three domains, every pair but (gpu0, gpu1) over PCIe, all for the chip.
BOX = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: box}
templates:
  box:
    kind: node
    promises: [nvlink_domain]
    labels: {tenant: research, zone: us-east-1a}
    attrs: {nvswitch_failure_mode: 1}
    children:
      - {name: cpu0, kind: cpu}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}
      - {name: nic0, kind: nic, model: ConnectX-7}
      - {name: "nvsw{i}", kind: nvswitch, model: NVSwitch-Gen3, count: 2}
    links:
      - {a: "gpu{g}", b: nvsw0, kind: nvswitch, generation: 4, count: 9, foreach: {g: [0, 1]}}
      - {a: "gpu{g}", b: nvsw1, kind: nvswitch, generation: 4, count: 9, foreach: {g: [0, 1, 2, 3]}}
      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {g: [0, 1, 2, 3]}}
      - {a: nic0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
objects:
  - {template: box, name: "n{i}", count: 2, overrides: {n1: {devices: {nvsw1: {state: down}}}}}
"""
SCALEUP_RULES = ("BW001", "SCALE006", "SCALE007", "TOPO004")


def _scaleup(found: list[tuple[str, tuple[str, ...]]]) -> list[tuple[str, tuple[str, ...]]]:
    return [f for f in found if f[0] in SCALEUP_RULES]


def test_a_split_the_down_chip_alone_makes_is_the_chips(tmp_path: Path) -> None:
    # n0 (the healthy twin) is one domain, so n1's three domains and its five pairs off NVLink are
    # the chip's: SCALE006 names nvsw1, once.
    assert _scaleup(findings(tmp_path, BOX)) == [("SCALE006", ("n1/nvsw1",))]


def test_healthy_twins_with_a_gpu_down_still_judge_the_chips_split(tmp_path: Path) -> None:
    # Three nodes of BOX's type: n1 with nvsw1 down, n0 and n2 each with gpu3 down (no node stamped
    # whole: n0, the smallest of three alike, stands for the type). Each twin is one domain for its
    # GPUs in service (gpu0..2 over nvsw1), so n1's split is the chip's: SCALE006 alone, no TOPO004;
    # n1's pairs with gpu3 have no twin pair in service to judge by (gpu3 down in both twins), so they
    # are left to the chip too: no BW001. (ee2a2e6 reported TOPO004 for n1 and BW001 for its pairs.)
    text = _replace(
        BOX,
        '{template: box, name: "n{i}", count: 2, overrides: {n1: {devices: {nvsw1: {state: down}}}}}',
        '{template: box, name: "n{i}", count: 3, overrides: {n0: {devices: {gpu3: {state: down}}}, '
        "n1: {devices: {nvsw1: {state: down}}}, n2: {devices: {gpu3: {state: down}}}}}",
    )
    assert _scaleup(findings(tmp_path, text)) == [("SCALE006", ("n1/nvsw1",))]


def _pairs_off_nvlink(tmp_path: Path, text: str) -> list[tuple[str, str]]:
    """BW001's pairs (gpu_pair_off_nvlink), one row per pair: its findings merge pairs."""
    path = tmp_path / "q.yaml"
    path.write_text(text)
    code, out, err = run_cli(
        "query", str(path), "gpu_pair_off_nvlink(A, B, X, C, M)", "--format", "json", env={"TOPOLOG_CACHE_DIR": ""}
    )
    assert code == 0, err
    return sorted((str(r[0]), str(r[1])) for r in json.loads(out)["rows"])


def test_a_split_the_down_chip_alone_makes_has_no_pair_off_nvlink(tmp_path: Path) -> None:
    assert _pairs_off_nvlink(tmp_path, BOX) == []


def test_a_split_of_the_type_and_one_of_the_chip_in_one_node(tmp_path: Path) -> None:
    # The type links gpu3 to no chip (nvsw1's links for gpu0..2 only): every node of it has gpu3
    # alone, TOPO004 in n0 and n1, BW001 for (gpu0, gpu3), (gpu1, gpu3), (gpu2, gpu3) in both. In n1
    # the down nvsw1 also cuts gpu2 off: (gpu0, gpu2) and (gpu1, gpu2) are the chip's (their twins
    # in n0 talk over nvsw1), SCALE006's. (eed7e4b dropped n1's three pairs and its TOPO004.)
    text = _replace(
        BOX,
        'foreach: {g: [0, 1, 2, 3]}}\n      - {a: "gpu{g}", b: cpu0',
        'foreach: {g: [0, 1, 2]}}\n      - {a: "gpu{g}", b: cpu0',
    )
    found = findings(tmp_path, text)
    assert _subjects(found, "TOPO004") == ["n0", "n1"]
    assert _subjects(found, "SCALE006") == ["n1/nvsw1"]
    assert _pairs_off_nvlink(tmp_path, text) == [(f"n{n}/gpu{g}", f"n{n}/gpu3") for n in (0, 1) for g in range(3)]


@pytest.mark.parametrize("device", ["nic3", "pcie1", "cpu0", "nvsw0"])
def test_place_answers_alike_for_each_kind_written_down_and_failed(tmp_path: Path, device: str) -> None:
    # b7c86ba's test holds this for a GPU; a NIC, a PCIe switch, a CPU and an NVSwitch chip of dgx01
    # written down must place the shipped jobs as `--fail dgx01/<device>` does.
    placed_alike(tmp_path, _pod_down(POD, device), f"dgx01/{device}")


def test_place_answers_alike_for_a_node_written_down_and_failed(tmp_path: Path) -> None:
    # dgx01 itself written `state: down` (an override of the node) and `--fail dgx01`.
    written = _replace(POD, POD_ANCHOR, "              dgx01:\n                state: down\n" + POD_ANCHOR)
    placed_alike(tmp_path, written, "dgx01")


ONE_GPU = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: one-gpu, principal: Team::"research", gpus: 1, topology: {scope: nvlink_domain}}
"""


def test_a_down_gpus_own_domain_is_a_candidate_never_a_placement(tmp_path: Path) -> None:
    # p32's candidates went 4098 -> 4099 with b7c86ba: a GPU marked down is its own one-GPU NVLink
    # domain (as `--fail` made it before). The pod with dgx01/gpu5 down: dgx01 is two domains (gpu5;
    # the other seven), dgx03 two (its gpu2, whose degraded bond its fabric manager answers by taking
    # it out of NVLink: TOPO005; the other seven), the six other DGX one each: 10 candidates for a
    # one-GPU job of team research (allowed on all 8 nodes). Every domain but gpu5's hosts it (9);
    # gpu5's is rejected as out of service, and no placement ever holds dgx01/gpu5.
    path = tmp_path / "pod.yaml"
    path.write_text(_pod_down(POD, "gpu5"))
    jobs = tmp_path / "one.yaml"
    jobs.write_text(ONE_GPU)
    doc = placed(str(path), str(jobs), "--why-not", "--limit", "100")
    (job,) = doc["jobs"]
    assert (job["candidates"], job["hosting"]) == (10, 9)
    assert not [p for p in job["placements"] if "dgx01/gpu5" in p["gpus"]]
    assert [(w["domain"], w["requirement"], w["have"], w["need"]) for w in job["why_not"]] == [
        ("dgx01/gpu5", "healthy", 0, 1)
    ]


BOX_JOBS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: two, principal: Team::"research", gpus: 2, topology: {scope: nvlink_domain}}
  - {name: four, principal: Team::"research", gpus: 4, topology: {scope: nvlink_domain}}
"""


def _box_placements(tmp_path: Path, *extra: str, down: bool) -> dict[str, tuple[int, list[tuple[str, int]]]]:
    """Per job of BOX_JOBS: (hosting, [(domain, bottleneck)]) on BOX, its chip written down or failed."""
    path = tmp_path / "box.yaml"
    path.write_text(BOX if down else _replace(BOX, ", overrides: {n1: {devices: {nvsw1: {state: down}}}}", ""))
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(BOX_JOBS)
    doc = placed(str(path), str(jobs), *extra)
    if down:
        shown = {j["job"]: [(p["domain"], p["bottleneck_mbps"]) for p in j["placements"]] for j in doc["jobs"]}
        return {j["job"]: (j["hosting"], shown[j["job"]]) for j in doc["jobs"]}
    return {
        j["job"]: (j["hosting_after"], [(j["after"]["domain"], j["after"]["bottleneck_mbps"])] if j["after"] else [])
        for j in doc["jobs"]
    }


# BOX's GPUs have 9 NVLink 4 links (25,000 MB/s each) to each chip they reach: 225,000 MB/s a chip.
# Healthy n0: gpu0 and gpu1 meet over both chips (450,000), gpu2 and gpu3 over nvsw1 alone (225,000).
# n1 with nvsw1 down, its fabric manager in nvswitch_failure_mode 1 (GPUs kept, SCALE006): gpu0 and
# gpu1 still meet over nvsw0 (225,000); gpu2 and gpu3 are alone. A 2-GPU job fits n0 (450,000,
# first) and n1's gpu0-gpu1 domain (225,000): 2 hosting; a 4-GPU job fits n0 alone (225,000).
BOX_EXPECTED = {"two": (2, [("n0/gpu0", 450_000), ("n1/gpu0", 225_000)]), "four": (1, [("n0/gpu0", 225_000)])}


def test_a_chip_written_down_under_failure_mode_1_keeps_its_gpus_in_nvlink(tmp_path: Path) -> None:
    assert _box_placements(tmp_path, down=True) == BOX_EXPECTED


def test_a_chip_failed_with_fail_under_failure_mode_1_keeps_its_gpus_in_nvlink(tmp_path: Path) -> None:
    # The same chip failed with `--fail n1/nvsw1` (the what-if's `after` side, its first placement):
    # the fabric manager keeps n1's GPUs as for the chip written down, so the 2-GPU job still has 2
    # hosting domains. (Before, `--fail` wrote the chip's links down, which the default
    # access_link_failure_mode 0 answers by taking n1's four GPUs out of NVLink: 1 hosting domain.)
    placed = _box_placements(tmp_path, "--fail", "n1/nvsw1", down=False)
    assert placed == {job: (hosting, first[:1]) for job, (hosting, first) in BOX_EXPECTED.items()}
