"""A device written `state: down` carries nothing inside its node, as `--fail` has it.

`place --fail ID` writes the device's links down too (verifier/sources/scenario.py); an inventory
that marks the device down means the same (fabric_islands.carries). The node summaries (nearest
NIC, GPU-NIC paths, PCIe loads, NVLink domains) must give one answer for both, and the checks must
name the down device once (HEALTH002, SCALE006/SCALE007), not the detours it causes as well.

Expected values are derived by hand from inventories/dgx-h100-pod.yaml: in each DGX, GPU 2k, 2k+1
and NIC 2k, 2k+1 share PCIe switch k, every PCIe link is Gen5 x16 (16 lanes x 3938 MB/s = 63008 MB/s
per direction), PCIe switches 0-1 hang off cpu0 and 2-3 off cpu1, and every GPU links to the four
NVSwitch chips.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from facts.down_helpers import findings, placed_alike

from verifier.core import cache
from verifier.facts.graph import graph_facts
from verifier.facts.inventory import Row
from verifier.sources.inventory import load_inventory_text
from verifier.sources.scenario import apply_scenario, scenario_from

ROOT = Path(__file__).resolve().parents[2]
POD = (ROOT / "inventories" / "dgx-h100-pod.yaml").read_text()
ANCHOR = "              dgx03:\n"
NODE_RELATIONS = ["nearest_nic", "gpu_nic_path", "gpu_fabric_bottleneck", "pcie_path", "pcie_switch_load"]
RELATIONS = [*NODE_RELATIONS, "scaleup_domain"]
PCIE_GEN5_X16 = 16 * 3938


def _down(device: str) -> str:
    """The pod with dgx01's `device` written `state: down` (an override of dgx01)."""
    assert POD.count(ANCHOR) == 1
    return POD.replace(
        ANCHOR, f"              dgx01:\n                devices:\n                  {device}: {{state: down}}\n{ANCHOR}"
    )


def _rows(facts: Mapping[str, Sequence[Row]], rel: str, prefix: str = "dgx01/") -> list[tuple[object, ...]]:
    """`rel`'s rows whose first column starts with `prefix`, sorted."""
    return sorted((tuple(r) for r in facts[rel] if str(r[0]).startswith(prefix)), key=repr)


def _both(device: str) -> tuple[Mapping[str, Sequence[Row]], Mapping[str, Sequence[Row]]]:
    """Graph facts of the pod with dgx01/`device` written down, and of the pod with it failed (--fail)."""
    written = graph_facts(load_inventory_text(_down(device), "down.yaml"), RELATIONS)
    failed = graph_facts(
        apply_scenario(load_inventory_text(POD, "pod.yaml"), scenario_from(fail=[f"dgx01/{device}"])), RELATIONS
    )
    return written, failed


# The shipped pod's one finding: dgx03's degraded gpu2-nvsw1 bond takes gpu2 out of NVLink (TOPO005).
BASE = [("TOPO005", ("dgx03/gpu2<->dgx03/nvsw1", "dgx03/gpu2"))]


def test_a_down_nic_is_nobodys_nearest_nic_as_fail_says() -> None:
    written, failed = _both("nic3")
    for rel in RELATIONS:
        assert _rows(written, rel) == _rows(failed, rel), rel
    # gpu3 shares pcie1 with nic2 and nic3; nic3 is down, so nic2 is its nearest (PIX, one switch).
    assert _rows(written, "nearest_nic", "dgx01/gpu3") == [("dgx01/gpu3", "dgx01/nic2", "PIX", PCIE_GEN5_X16)]
    # No GPU reaches nic3, and nic3 reaches no CPU.
    assert not [r for r in _rows(written, "gpu_nic_path") if r[1] == "dgx01/nic3"]
    assert not [r for r in _rows(written, "pcie_path") if "dgx01/nic3" in r[:2]]
    # pcie1: one Gen5 x16 uplink to cpu0; below it gpu2, gpu3 and nic2 (nic3's link carries nothing).
    assert [r for r in _rows(written, "pcie_switch_load") if r[0] == "dgx01/pcie1"] == [
        ("dgx01/pcie1", PCIE_GEN5_X16, 3 * PCIE_GEN5_X16)
    ]


def test_a_down_nic_is_reported_once_by_health002(tmp_path: Path) -> None:
    # gpu3 now sends through nic2, on rail 2's leaf: that detour is nic3's fault (HEALTH002), not a
    # rail mismatch of its own (BW006), nor a lost GPUDirect path or a remote NIC (BW009, BW002).
    assert findings(tmp_path, _down("nic3")) == sorted([*BASE, ("HEALTH002", ("dgx01/nic3",))])


def test_a_down_gpu_leaves_its_domain_as_fail_says(tmp_path: Path) -> None:
    written, failed = _both("gpu5")
    for rel in RELATIONS:
        assert _rows(written, rel) == _rows(failed, rel), rel
    # gpu5 joins nothing: its own domain; the other seven stay one domain, named by gpu0.
    expected = [(f"dgx01/gpu{i}", "dgx01/gpu5" if i == 5 else "dgx01/gpu0") for i in range(8)]
    assert _rows(written, "scaleup_domain") == expected
    # gpu5 reaches no NIC or CPU, and pcie2 carries gpu4, nic4 and nic5 only.
    assert not _rows(written, "nearest_nic", "dgx01/gpu5")
    assert [r for r in _rows(written, "pcie_switch_load") if r[0] == "dgx01/pcie2"] == [
        ("dgx01/pcie2", PCIE_GEN5_X16, 3 * PCIE_GEN5_X16)
    ]
    # A GPU marked down is out of service: the seven in service are one domain, so dgx01 keeps its
    # promise (no TOPO004), and a down GPU is placement's to skip (HEALTH001): no new finding.
    assert findings(tmp_path, _down("gpu5")) == BASE


def test_a_down_nvswitch_joins_no_gpus(tmp_path: Path) -> None:
    # Two GPUs linked to one NVSwitch chip only, which is down; the fabric manager runs
    # nvswitch_failure_mode 1 (it keeps the GPUs, no isolation): nothing joins them, two domains.
    text = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: sw}
objects:
  - name: n1
    kind: node
    promises: [nvlink_domain]
    attrs: {nvswitch_failure_mode: 1}
    children:
      - {name: cpu0, kind: cpu}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
      - {name: nic0, kind: nic, model: ConnectX-7}
      - {name: nvsw0, kind: nvswitch, model: NVSwitch-Gen3, state: down}
    links:
      - {a: "gpu{g}", b: nvsw0, kind: nvswitch, generation: 4, count: 18, foreach: {g: [0, 1]}}
      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {g: [0, 1]}}
      - {a: nic0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
"""
    written = graph_facts(load_inventory_text(text, "sw.yaml"), ["scaleup_domain"])
    up = text.replace(", state: down}", "}")
    failed = graph_facts(
        apply_scenario(load_inventory_text(up, "sw.yaml"), scenario_from(fail=["n1/nvsw0"])), ["scaleup_domain"]
    )
    expected = [("n1/gpu0", "n1/gpu0"), ("n1/gpu1", "n1/gpu1")]
    assert _rows(written, "scaleup_domain", "n1/") == expected
    assert _rows(failed, "scaleup_domain", "n1/") == expected
    # The pair now meets only through cpu0 (PHB, Gen5 x16: 63,008 MB/s), and the split is the chip's:
    # SCALE006 names it (2 GPUs x 18 links x 25,000 MB/s = 900,000 MB/s lost), once. TOPO004 (split
    # promise) and BW001 (a pair of an NVLink promise over PCIe) leave it to that finding.
    pairs = graph_facts(load_inventory_text(text, "sw.yaml"), ["gpu_pair_bottleneck"])
    assert _rows(pairs, "gpu_pair_bottleneck", "n1/") == [("n1/gpu0", "n1/gpu1", "PHB", PCIE_GEN5_X16)]
    assert findings(tmp_path, text) == [("SCALE006", ("n1/nvsw0",))]


def test_a_warm_node_class_cache_gives_the_down_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The node-class cache (verifier/facts/class_cache.py) names an entry by the classes' shapes, whose
    # links are the working ones: a DGX with nic3 down is another shape than its healthy siblings, so
    # an entry made from the healthy pod never answers for it (gpu3's nearest NIC stays nic3 if it did).
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    healthy = graph_facts(load_inventory_text(POD, "pod.yaml"), RELATIONS)
    assert _rows(healthy, "nearest_nic", "dgx01/gpu3") == [("dgx01/gpu3", "dgx01/nic3", "PIX", PCIE_GEN5_X16)]
    warm = graph_facts(load_inventory_text(_down("nic3"), "down.yaml"), RELATIONS)
    assert _rows(warm, "nearest_nic", "dgx01/gpu3") == [("dgx01/gpu3", "dgx01/nic2", "PIX", PCIE_GEN5_X16)]
    monkeypatch.setenv(cache.ENV_DIR, "")
    cold = graph_facts(load_inventory_text(_down("nic3"), "down.yaml"), RELATIONS)
    for rel in RELATIONS:
        assert sorted(map(tuple, warm[rel]), key=repr) == sorted(map(tuple, cold[rel]), key=repr), rel


FLEET = (ROOT / "inventories" / "mixed-fleet.yaml").read_text()
RTX_N2 = "                  rtx-n2:\n"


def test_a_gpu_whose_only_nic_is_down_has_no_nic_and_one_finding(tmp_path: Path) -> None:
    # inventories/mixed-fleet.yaml: an RTX workstation (rtx-n3) has one NIC, nic0 on cpu0 (Gen4 x4),
    # and its two GPUs on cpu0 (Gen4 x8). With nic0 down neither GPU reaches a NIC: no nearest NIC,
    # no GPU-NIC path, no fabric bandwidth, as `--fail rtx-n3/nic0` has it.
    assert FLEET.count(RTX_N2) == 1
    text = FLEET.replace(
        RTX_N2,
        "                  rtx-n3:\n                    devices:\n                      nic0: {state: down}\n" + RTX_N2,
    )
    written = graph_facts(load_inventory_text(text, "fleet.yaml"), RELATIONS)
    failed = graph_facts(
        apply_scenario(load_inventory_text(FLEET, "fleet.yaml"), scenario_from(fail=["rtx-n3/nic0"])), RELATIONS
    )
    for rel in RELATIONS:
        assert _rows(written, rel, "rtx-n3/") == _rows(failed, rel, "rtx-n3/"), rel
    for rel in ("nearest_nic", "gpu_nic_path", "gpu_fabric_bottleneck"):
        assert _rows(written, rel, "rtx-n3/") == [], rel
    # The one cause is the down NIC: HEALTH002 names it, once; no GPU-without-NIC (TOPO001) or
    # off-fabric (LINK010) finding besides. (rtx-n3's other finding, BW003 on nic0's x4 link, is the
    # shipped fleet's own.)
    found = [f for f in findings(tmp_path, text) if any(s.startswith("rtx-n3/") or s == "rtx-n3" for s in f[1])]
    assert found == [("BW003", ("rtx-n3/nic0",)), ("HEALTH002", ("rtx-n3/nic0",))]


def test_place_answers_alike_for_a_device_written_down_and_failed(tmp_path: Path) -> None:
    # The shipped jobs on the pod with dgx01/gpu5 written down, and on the pod with `--fail
    # dgx01/gpu5` (a what-if: its `after` side): every job is hosted by as many domains and placed
    # first on the same GPUs at the same bottleneck.
    placed_alike(tmp_path, _down("gpu5"), "dgx01/gpu5")
