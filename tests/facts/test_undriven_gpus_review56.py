"""Review of 0fb5447 (undriven GPUs): a PCIe switch or CPU written down in a template; a GPU behind a NIC.

`place` loads only GPUs and their ancestors (gpus_and_ancestors) unless a job asks for rail
alignment; the nodes with a PCIe switch or CPU down are kept whole so that the rules can tell
which GPUs no working host drives. A node stamped whole from a template (its objects made off the
plan, Inventory.defer_objects) whose template writes the device down has it down as well: its
objects must be kept whole too, or the default path offers GPUs the whole-inventory path refuses.
Every expected value is derived by hand from the inventory written here.
"""

from __future__ import annotations

from pathlib import Path

from verifier.reports.place_report import render_json
from verifier.session.place_run import place

# Two nodes stamped whole from one template: gpu0 and gpu1 hang off pcie0 alone, which the template
# writes `state: down`; gpu2 and gpu3 off pcie1; both switches off cpu0. No override: nothing
# unstamps them.
BOXES = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: boxes}
templates:
  box:
    kind: node
    labels: {tenant: research, zone: us-east-1a}
    children:
      - {name: cpu0, kind: cpu}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}
      - {name: pcie0, kind: pcie_switch, model: PEX89104, state: down}
      - {name: pcie1, kind: pcie_switch, model: PEX89104}
    links:
      - {a: "gpu{g}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {g: [0, 1]}}
      - {a: "gpu{g}", b: pcie1, kind: pcie, generation: 5, lanes: 16, foreach: {g: [2, 3]}}
      - {a: "pcie{s}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {s: [0, 1]}}
objects:
  - {template: box, name: "n{i}", count: 2}
"""

JOBS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: four, principal: Team::"research", gpus: 4, topology: {scope: node}}
  - {name: two, principal: Team::"research", gpus: 2, topology: {scope: node}}
"""


def test_a_template_that_writes_a_pcie_switch_down_leaves_its_gpus_undriven_on_both_paths(tmp_path: Path) -> None:
    # In each node gpu0 and gpu1 are undriven (their one path crosses pcie0), gpu2 and gpu3 are
    # driven over pcie1: 2 GPUs in service a node. The 4-GPU job is hosted by neither node (each
    # short at `healthy`, 2 of 4); the 2-GPU job takes gpu2 and gpu3 of n0, then of n1. The
    # GPUs-only path (the default) and the whole inventory answer alike. (Before the fix the default
    # path kept only the stamped nodes' GPUs, saw no pcie0, and put the 4-GPU job on n0 and n1.)
    inv, jobs = tmp_path / "inv.yaml", tmp_path / "jobs.yaml"
    inv.write_text(BOXES)
    jobs.write_text(JOBS)
    subset, whole = (
        place([inv], [jobs], why_not=True, authorize=False, whole_inventory=w, limit=100) for w in (False, True)
    )
    for report in (subset, whole):
        four, two = (next(j for j in report.jobs if j.job.name == name) for name in ("four", "two"))
        assert four.hosting == 0
        assert [(w.domain, w.requirement, w.have, w.need) for w in four.why_not] == [
            ("n0", "healthy", 2, 4),
            ("n1", "healthy", 2, 4),
        ]
        assert [list(p.gpus) for p in two.placements] == [["n0/gpu2", "n0/gpu3"], ["n1/gpu2", "n1/gpu3"]]
    assert render_json(subset) == render_json(whole)


# One node: gpu0 on pcie0, gpu1 behind nic0's own PCIe switch (a converged card: GPU -> NIC -> CPU),
# nic0 written down; pcie1, on cpu0 with nothing below it, is SPARE.
BEHIND_NIC = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: cnx}
objects:
  - name: n0
    kind: node
    labels: {tenant: research, zone: us-east-1a}
    children:
      - {name: cpu0, kind: cpu}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
      - {name: pcie0, kind: pcie_switch, model: PEX89104}
      - {name: pcie1, kind: pcie_switch, model: PEX89104SPARE}
      - {name: nic0, kind: nic, model: ConnectX-7, state: down}
    links:
      - {a: gpu0, b: pcie0, kind: pcie, generation: 5, lanes: 16}
      - {a: gpu1, b: nic0, kind: pcie, generation: 5, lanes: 16}
      - {a: "{d}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {d: [pcie0, pcie1, nic0]}}
"""


def test_a_gpu_behind_a_down_nic_is_undriven_whether_or_not_another_switch_is_down(tmp_path: Path) -> None:
    # gpu1's one path to cpu0 crosses nic0, which is down and carries nothing: gpu1 is undriven, and
    # only gpu0 is in service, so the 2-GPU job is short at `healthy` (1 of 2) and the 1-GPU job takes
    # gpu0. pcie1 (on no GPU's path) up or down changes nothing. (Before the fix, nic0 counted only in a
    # node with a PCIe switch or CPU down: with pcie1 up the 2-GPU job was placed on gpu0 and gpu1.)
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        JOBS.replace('four, principal: Team::"research", gpus: 4', 'one, principal: Team::"research", gpus: 1')
    )
    for spare in ("", ", state: down"):
        inv = tmp_path / "inv.yaml"
        inv.write_text(BEHIND_NIC.replace("SPARE", spare))
        for whole in (False, True):
            report = place([inv], [jobs], why_not=True, authorize=False, whole_inventory=whole, limit=100)
            two, one = (next(j for j in report.jobs if j.job.name == name) for name in ("two", "one"))
            assert (two.hosting, [(w.domain, w.requirement, w.have, w.need) for w in two.why_not]) == (
                0,
                [("n0", "healthy", 1, 2)],
            ), (spare, whole)
            assert [list(p.gpus) for p in one.placements] == [["n0/gpu0"]], (spare, whole)
