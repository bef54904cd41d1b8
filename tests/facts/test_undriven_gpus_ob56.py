"""`place` offers no GPU whose every host path crosses a PCIe switch or CPU written down (HEALTH002).

A GPU hangs off its host through PCIe switches to a CPU's root port: with every such path through a
device that is down, no root port enumerates it, no driver runs it, and it takes no job
(rules/placement/lib/candidates.dl: place_gpu_undriven). `--fail` of the device answers alike.
Every expected value is derived by hand from the inventories written here and in inventories/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from facts.down_helpers import placed

from verifier.reports.place_report import render_json
from verifier.session.place_run import place

ROOT = Path(__file__).resolve().parents[2]
POD_PATH = ROOT / "inventories" / "dgx-h100-pod.yaml"
POD = POD_PATH.read_text()
ANCHOR = "              dgx03:\n"

# scope node: 8 GPUs (a whole DGX H100), 6, 4, 3 and 1.
JOBS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: eight, principal: Team::"research", gpus: 8, topology: {scope: node}}
  - {name: six, principal: Team::"research", gpus: 6, topology: {scope: node}}
  - {name: four, principal: Team::"research", gpus: 4, topology: {scope: node}}
  - {name: three, principal: Team::"research", gpus: 3, topology: {scope: node}}
  - {name: one, principal: Team::"research", gpus: 1, topology: {scope: node}}
"""


def _pod_down(device: str) -> str:
    """The pod with dgx01's `device` written `state: down` (an override of dgx01)."""
    assert POD.count(ANCHOR) == 1
    override = f"              dgx01:\n                devices:\n                  {device}: {{state: down}}\n"
    return POD.replace(ANCHOR, override + ANCHOR)


def _place(tmp_path: Path, text: str, *extra: str) -> dict[str, dict[str, Any]]:
    inv, jobs = tmp_path / "inv.yaml", tmp_path / "jobs.yaml"
    inv.write_text(text)
    jobs.write_text(JOBS)
    return {j["job"]: j for j in placed(str(inv), str(jobs), "--why-not", "--limit", "100", *extra)["jobs"]}


def _on(job: dict[str, Any], node: str) -> list[list[str]]:
    """The GPUs of `job`'s placements on `node`."""
    return [p["gpus"] for p in job["placements"] if p["domain"] == node]


def _why(job: dict[str, Any], node: str) -> list[tuple[str, int, int]]:
    return [(w["requirement"], w["have"], w["need"]) for w in job["why_not"] if w["domain"] == node]


def test_a_down_pcie_switch_takes_its_two_gpus_out_of_service(tmp_path: Path) -> None:
    # The DGX H100 of inventories/dgx-h100-pod.yaml: gpu0 and gpu1 hang off pcie0 alone, pcie0 off
    # cpu0. pcie0 down: gpu0, gpu1 undriven, 6 GPUs of dgx01 in service. An 8-GPU job is hosted by
    # the 7 other nodes (dgx03's degraded NVLink bond costs no GPU of a node-scope job) and dgx01 is
    # short at `healthy` (6 of 8); a 6-GPU job takes dgx01's gpu2..gpu7 (before: gpu0..gpu5).
    jobs = _place(tmp_path, _pod_down("pcie0"))
    assert (jobs["eight"]["candidates"], jobs["eight"]["hosting"]) == (8, 7)
    assert _why(jobs["eight"], "dgx01") == [("healthy", 6, 8)]
    assert _on(jobs["six"], "dgx01") == [[f"dgx01/gpu{g}" for g in range(2, 8)]]
    assert jobs["six"]["hosting"] == 8
    assert _on(jobs["one"], "dgx01") == [["dgx01/gpu2"]]


def test_a_down_cpu_takes_the_four_gpus_behind_it_out_of_service(tmp_path: Path) -> None:
    # cpu0 down: pcie0 and pcie1 hang off cpu0 only (the UPI link to cpu1 is no root port), so gpu0..3
    # are undriven; gpu4..7 (pcie2, pcie3 off cpu1) are in service. 8 and 6 GPUs: dgx01 short (4);
    # 4 GPUs: dgx01's gpu4..gpu7.
    jobs = _place(tmp_path, _pod_down("cpu0"))
    assert (jobs["eight"]["hosting"], jobs["six"]["hosting"], jobs["four"]["hosting"]) == (7, 7, 8)
    assert _why(jobs["six"], "dgx01") == [("healthy", 4, 6)]
    assert _on(jobs["four"], "dgx01") == [[f"dgx01/gpu{g}" for g in range(4, 8)]]


def test_a_down_nic_is_on_no_gpus_host_path(tmp_path: Path) -> None:
    # nic0 hangs off pcie0 beside gpu0 and gpu1: it carries their fabric traffic, not their host's.
    # Every GPU of dgx01 stays in service: the 8-GPU job is hosted by all 8 nodes.
    jobs = _place(tmp_path, _pod_down("nic0"))
    assert jobs["eight"]["hosting"] == 8
    assert _on(jobs["eight"], "dgx01") == [[f"dgx01/gpu{g}" for g in range(8)]]


@pytest.mark.parametrize(("device", "hosting"), [("pcie0", (7, 8)), ("cpu0", (7, 7))])
def test_fail_of_the_device_answers_alike(tmp_path: Path, device: str, hosting: tuple[int, int]) -> None:
    # `--fail dgx01/<device>` on the shipped pod writes the device and its links down: the links at a
    # down device still count as its GPUs' wiring, so the same GPUs are undriven as above (pcie0:
    # dgx01 short of 8, not of 6; cpu0: short of both).
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(JOBS)
    doc = placed(str(POD_PATH), str(jobs), "--fail", f"dgx01/{device}")
    after = {j["job"]: j["hosting_after"] for j in doc["jobs"]}
    assert (after["eight"], after["six"]) == hosting


# One node: gpu0 on pcie0 and pcie1 both (two paths), gpu1 on pcie0 only, gpu2 with no host link
# written at all; pcie0 and pcie1 on cpu0. ATTR is pcie0's state.
TWO_PATHS = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: paths}
objects:
  - name: n0
    kind: node
    labels: {tenant: research, zone: us-east-1a}
    children:
      - {name: cpu0, kind: cpu}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 3}
      - {name: pcie0, kind: pcie_switch, model: PEX89104STATE}
      - {name: pcie1, kind: pcie_switch, model: PEX89104}
    links:
      - {a: gpu0, b: pcie0, kind: pcie, generation: 5, lanes: 16}
      - {a: gpu0, b: pcie1, kind: pcie, generation: 5, lanes: 16}
      - {a: gpu1, b: pcie0, kind: pcie, generation: 5, lanes: 16}
      - {a: "pcie{s}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {s: [0, 1]}}
"""


def test_a_gpu_with_a_working_path_left_or_no_host_link_at_all_stays(tmp_path: Path) -> None:
    # pcie0 down: gpu0 still reaches cpu0 through pcie1 (driven); gpu1 only through pcie0
    # (undriven); gpu2 has no host link written (TOPO006's, not a down device's): it stays as
    # before. 2 GPUs in service (gpu0, gpu2): the 3-GPU job is short at `healthy` with 2 of 3; the
    # 4-GPU job is short before that, at `gpus` (the node has 3 of 4); the 1-GPU job takes gpu0.
    jobs = _place(tmp_path, TWO_PATHS.replace("STATE", ", state: down"))
    assert _why(jobs["four"], "n0") == [("gpus", 3, 4)]
    assert _why(jobs["three"], "n0") == [("healthy", 2, 3)]
    assert _on(jobs["one"], "n0") == [["n0/gpu0"]]
    # pcie0 up: all 3 in service, the 3-GPU job placed on them.
    up = _place(tmp_path, TWO_PATHS.replace("STATE", ""))
    assert _on(up["three"], "n0") == [[f"n0/gpu{g}" for g in range(3)]]


@pytest.mark.parametrize("device", ["pcie0", "cpu0"])
def test_the_gpus_subset_and_the_whole_inventory_answer_alike(tmp_path: Path, device: str) -> None:
    # `place` loads only GPUs and their ancestors unless a job asks for rail alignment (then every
    # object): a node with a PCIe switch or CPU down is loaded whole either way, so both answer alike,
    # and dgx01 is short of 8 GPUs in both.
    inv, jobs = tmp_path / "inv.yaml", tmp_path / "jobs.yaml"
    inv.write_text(_pod_down(device))
    jobs.write_text(JOBS)
    subset, whole = (
        place([inv], [jobs], why_not=True, authorize=False, whole_inventory=w, limit=100) for w in (False, True)
    )
    assert render_json(subset) == render_json(whole)
    eight = next(j for j in subset.jobs if j.job.name == "eight")
    assert eight.hosting == 7
