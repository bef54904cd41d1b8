"""What-if scenarios in `place`: drained nodes, failed devices and links, judged per job.

Every expected outcome is derived by hand from the shipped inventories and jobs (comments),
and a scenario's answer is held equal to `place` on the inventory with the same states written
in as overrides.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.placement.place import Placement, PlaceReport
from verifier.placement.whatif import JobChange
from verifier.session.inputs import read_inventory
from verifier.session.place_run import PlaceSettings, jobs_to_place, place, placements, what_if
from verifier.session.side_files import discover
from verifier.sources.scenario import apply_scenario, scenario_from

REPO = Path(__file__).resolve().parents[2]
INVENTORIES = REPO / "inventories"
MIXED = INVENTORIES / "mixed-fleet.yaml"
POD = INVENTORIES / "dgx-h100-pod.yaml"
NVL72 = INVENTORIES / "gb200-nvl72.yaml"
JOBS = INVENTORIES / "jobs"
# The mixed fleet's placeable jobs (one file each, so that new job files elsewhere change nothing here).
MIXED_JOBS = [JOBS / "portable.yaml", JOBS / "serving.yaml", JOBS / "hpc.yaml", JOBS / "inference.yaml"]


def _by_job(changes: list[JobChange]) -> dict[str, JobChange]:
    return {c.job: c for c in changes}


def _sides(change: JobChange) -> tuple[Placement, Placement]:
    """The best placement before and after, both present."""
    assert change.before is not None and change.after is not None
    return change.before, change.after


def test_draining_the_best_node_moves_jobs_to_the_next_best() -> None:
    """mixed-fleet: h100-n0 and h100-n1 are the two HGX H100 nodes (mf-hgx-h100: 8 H100-SXM5,
    18 NVLink 4 links per GPU over 4 NVSwitch chips = 18 x 25 GB/s = 450 GB/s per GPU pair).
    finetune-portable (8 GPUs, any vendor, one node) and llama-70b-serving (2 replicas x TP=4 on
    80 GB GPUs, nvidia) rank h100-n0 first (equal bottleneck, first by name). Draining h100-n0
    moves both to its twin h100-n1 at the same 450 GB/s; each loses one hosting domain
    (finetune-portable 4 -> 3: h100-n0/n1, mi300x-n0/n1; llama 2 -> 1). cfd-fp64 (mi300x-n0) and
    chat-8b-serving (rtx-n3) are untouched.
    """
    report = what_if([MIXED], MIXED_JOBS, scenario_from(drain=["h100-n0"]))
    jobs = _by_job(report.jobs)
    for name in ("finetune-portable", "llama-70b-serving"):
        change = jobs[name]
        before, after = _sides(change)
        assert change.outcome == "moved"
        assert before.domain == "h100-n0" and after.domain == "h100-n1"
        assert before.bottleneck_mbps == after.bottleneck_mbps == 450_000
    assert (jobs["finetune-portable"].hosting_before, jobs["finetune-portable"].hosting_after) == (4, 3)
    assert (jobs["llama-70b-serving"].hosting_before, jobs["llama-70b-serving"].hosting_after) == (2, 1)
    assert jobs["cfd-fp64"].outcome == jobs["chat-8b-serving"].outcome == "unchanged"
    assert report.lost == [] and report.exit_code == 0


def test_draining_both_h100_nodes_loses_one_job_and_slows_another() -> None:
    """With h100-n0 and h100-n1 drained, llama-70b-serving fits nowhere (place --why-not: no policy
    permits team-vision on the A100 nodes, fp64-reserved-for-hpc denies it the MI300X nodes, the
    RTX nodes are quarantined, short of GPUs or not its tenant's): it loses its placement. finetune-portable
    accepts MI300X too: it keeps mi300x-n0, where each GPU sends to its 7 peers over one xGMI 4 link
    each (64 GB/s per direction): 7 x 64 = 448 GB/s per GPU against the H100's 450 GB/s of NVLink,
    compared like with like (NodePairs.worst), so its bottleneck falls from 450 GB/s to 448 GB/s.
    """
    report = what_if([MIXED], MIXED_JOBS, scenario_from(drain=["h100-n0", "h100-n1"]))
    jobs = _by_job(report.jobs)
    llama = jobs["llama-70b-serving"]
    assert llama.outcome == "loses" and llama.after is None and llama.hosting_after == 0
    fine = jobs["finetune-portable"]
    before, after = _sides(fine)
    assert fine.outcome == "slower"
    assert (before.bottleneck_mbps, after.bottleneck_mbps) == (450_000, 448_000)
    assert after.domain == "mi300x-n0"
    assert report.lost == ["llama-70b-serving"] and report.exit_code == 1


def test_a_failed_gpu_costs_a_two_gpu_job_its_only_node() -> None:
    """chat-8b-serving (students, 2 replicas x 1 RTX-4090) has one node: rtx-n0 and rtx-n1 are
    quarantined, rtx-n2 is lent to robotics (tenant) and has gpu1 down; rtx-n3 has 2 GPUs. Failing
    rtx-n3/gpu1 leaves rtx-n3 one GPU in service: it loses its placement.
    """
    report = what_if([MIXED], [JOBS / "inference.yaml"], scenario_from(fail=["rtx-n3/gpu1"]))
    (change,) = report.jobs
    assert change.outcome == "loses" and change.before is not None and change.before.domain == "rtx-n3"
    # No shipped policy reads `state`: the students may still schedule on both of rtx-n3's GPUs.
    assert change.permitted is not None and not change.permitted.changed
    assert sorted(change.permitted.after) == ["rtx-n3/gpu0", "rtx-n3/gpu1"]


def test_a_failed_nvlink_lowers_the_bottleneck_in_the_nvl72_domain() -> None:
    """gb200-nvl72: each B200 has 18 NVLink 5 links, one to each of the 18 switch chips (9 switch
    trays x 2), 50 GB/s per direction each (catalogue: 18 links, 900 GB/s). llm-pretrain-400b takes
    64 GPUs of the one 72-GPU domain (named tray00/gpu0), the first 64 by name, tray00/gpu0 among
    them. With its link to swtray0/chip0 down, tray00/gpu0 reaches the others over 17 links:
    17 x 50 = 850 GB/s, the new bottleneck of the same placement (was 900 GB/s).
    """
    report = what_if([NVL72], [JOBS / "training.yaml"], scenario_from(fail_links=["tray00/gpu0<->swtray0/chip0"]))
    (change,) = report.jobs
    assert change.outcome == "slower"
    assert change.before is not None and change.after is not None
    assert change.before.domain == change.after.domain == "tray00/gpu0"
    assert (change.before.bottleneck_mbps, change.after.bottleneck_mbps) == (900_000, 850_000)


def test_a_failed_nvswitch_bond_moves_a_job_to_an_intact_node() -> None:
    """dgx-h100-pod: notebooks-mig (12 x 1g.10gb = 2 H100s, 7 instances a GPU) ranks dgx00 first
    (450 GB/s; dgx03's gpu2-nvsw1 bond runs on 3 of 4 links). Failing dgx00's gpu0-nvsw0 bond
    (5 of gpu0's 18 links) leaves gpu0 13 x 25 = 325 GB/s, so dgx00 ranks below the intact dgx01,
    where the job moves at the same 450 GB/s.
    """
    report = what_if([POD], [JOBS / "notebooks.yaml"], scenario_from(fail_links=["dgx00/gpu0<->dgx00/nvsw0"]))
    (change,) = report.jobs
    assert change.outcome == "moved"
    assert change.before is not None and change.after is not None
    assert (change.before.domain, change.after.domain) == ("dgx00", "dgx01")
    assert change.after.bottleneck_mbps == 450_000


def test_a_failed_nvswitch_takes_its_links_down() -> None:
    """A failed device carries nothing: failing dgx00/nvsw0 takes every GPU's 5-link bond to it down,
    so each of dgx00's GPUs reaches the others over 4 + 4 + 5 = 13 links, 13 x 25 = 325 GB/s, and
    notebooks-mig moves from dgx00 to the intact dgx01 (450 GB/s)."""
    inputs = read_inventory([POD], discover([POD]))
    changed = apply_scenario(inputs.inventory, scenario_from(fail=["dgx00/nvsw0"]))
    down = sorted(lid for lid, lk in changed.links.items() if lk.state == "down")
    assert down == [f"dgx00/gpu{g}<->dgx00/nvsw0" for g in range(8)]
    report = what_if([POD], [JOBS / "notebooks.yaml"], scenario_from(fail=["dgx00/nvsw0"]))
    (change,) = report.jobs
    before, after = _sides(change)
    assert change.outcome == "moved" and (before.domain, after.domain) == ("dgx00", "dgx01")


# --- the scenario equals the edited inventory -------------------------------------------------

EDITS = [
    # (inventory, scenario (drain, fail, fail_links), the same change as an inventory edit: (old text, new text))
    (
        MIXED,
        (["h100-n0"], [], []),
        (
            '{template: mf-hgx-h100, name: "h100-n{i}", count: 2}',
            '{template: mf-hgx-h100, name: "h100-n{i}", count: 2, overrides: {h100-n0: {state: drained}}}',
        ),
    ),
    (
        MIXED,
        ([], ["rtx-n3/gpu1"], []),
        (
            "                  rtx-n2:\n",
            "                  rtx-n3:\n"
            "                    devices: {gpu1: {state: down}}\n"
            "                    links: [{a: gpu1, b: cpu0, state: down}]\n"
            "                  rtx-n2:\n",
        ),
    ),
    (
        POD,
        ([], ["dgx00/nvsw0"], []),
        (
            "            overrides:\n",
            "            overrides:\n              dgx00:\n                devices: {nvsw0: {state: down}}\n"
            "                links:\n"
            + "".join(f"                  - {{a: gpu{g}, b: nvsw0, state: down}}\n" for g in range(8)),
        ),
    ),
    (
        POD,
        ([], [], ["dgx00/gpu0<->dgx00/nvsw0"]),
        (
            "            overrides:\n",
            "            overrides:\n              dgx00:\n                links: [{a: gpu0, b: nvsw0, state: down}]\n",
        ),
    ),
]


@pytest.mark.parametrize(("inventory", "changes", "edit"), EDITS, ids=["drain", "fail", "fail-switch", "fail-link"])
def test_scenario_answers_what_the_edited_inventory_answers(
    tmp_path: Path, inventory: Path, changes: tuple[list[str], list[str], list[str]], edit: tuple[str, str]
) -> None:
    from verifier.reports.place_report import render_json

    text = inventory.read_text(encoding="utf-8")
    old, new = edit
    assert text.count(old) == 1
    edited = tmp_path / inventory.name
    edited.write_text(text.replace(old, new), encoding="utf-8")
    shutil.copy(INVENTORIES / "principals.yml", tmp_path / "principals.yml")
    jobs = sorted(JOBS.glob("*.yaml"))
    on_edit = place([edited], jobs)
    # The scenario applied to the inventory as loaded, every placement of every job compared.
    inputs = read_inventory([inventory], discover([inventory]))
    scenario = scenario_from(*changes)
    changed = read_inventory([inventory], discover([inventory]))
    changed.inventory = apply_scenario(inputs.inventory, scenario)
    changed.digest_parts = None
    on_scenario, _ = placements(changed, jobs_to_place(jobs), PlaceSettings())
    assert render_json(on_scenario) == render_json(on_edit)
    # And what_if's "after" side is each job's best placement there.
    report = what_if([inventory], jobs, scenario)
    best = {jp.job.name: (jp.placements[0] if jp.placements else None) for jp in on_edit.jobs}
    assert {c.job: c.after for c in report.jobs} == best
    # The inventory itself is left as loaded.
    assert render_json(placements(inputs, jobs_to_place(jobs), PlaceSettings())[0]) == render_json(
        place([inventory], jobs)
    )


def test_applying_a_scenario_leaves_the_inventory_alone() -> None:
    inputs = read_inventory([POD], discover([POD]))
    before = dict(inputs.inventory.stamped)
    changed = apply_scenario(inputs.inventory, scenario_from(drain=["dgx01"], fail_links=["dgx02/gpu0<->dgx02/nvsw0"]))
    assert changed.objects["dgx01"].state == "drained" and inputs.inventory.objects["dgx01"].state is None
    assert changed.links["dgx02/gpu0<->dgx02/nvsw0"].state == "down"
    assert inputs.inventory.links["dgx02/gpu0<->dgx02/nvsw0"].state is None
    assert inputs.inventory.stamped == before
    # dgx01 and dgx02 are no longer their template's plan alone; the other stamped nodes still are.
    assert sorted(before.keys() - changed.stamped.keys()) == ["dgx01", "dgx02"]


# --- authorization decisions ---------------------------------------------------------------------

DOWN_FORBID = """@id("no-scheduling-on-down-gpus")
forbid (principal, action == Action::"schedule", resource)
when { resource.state == "down" };
"""


def test_a_policy_reading_state_changes_the_decision(tmp_path: Path) -> None:
    """With a policy that forbids scheduling on a GPU in state down, failing rtx-n3/gpu0 turns the
    students' decision on it from allow to deny: 2 GPUs allowed (rtx-n3/gpu0, gpu1) -> 1."""
    policies = tmp_path / "policies"
    policies.mkdir()
    for f in (REPO / "policies").glob("*.cedar*"):
        shutil.copy(f, policies / f.name)
    (policies / "down.cedar").write_text(DOWN_FORBID, encoding="utf-8")
    code, out, err = run_cli(
        "place", str(MIXED), str(JOBS / "inference.yaml"), "--fail", "rtx-n3/gpu0", "--policies", str(policies)
    )
    assert code == 1, err
    assert "job chat-8b-serving (students): loses its placement" in out
    assert "  authorization: students may schedule on 1 GPUs (was 2)\n    denied now: rtx-n3/gpu0\n" in out
    assert out.rstrip().endswith("1 with changed authorization decisions")


# --- bad input -----------------------------------------------------------------------------------


def test_unknown_names_are_exit_2_with_what_was_expected() -> None:
    code, out, err = run_cli(
        "place", str(MIXED), str(JOBS / "hpc.yaml"), "--drain", "h100-n9", "--fail-link", "h100-n0/gpu0<->h100-n0/nvsw9"
    )
    assert code == 2 and out == ""
    assert "--drain: drain h100-n9: the inventory has no object 'h100-n9'; expected a node, rack or GPU id" in err
    assert "did you mean 'h100-n0'?" in err or "did you mean 'h100-n1'?" in err
    assert "--fail-link: fail-link h100-n0/gpu0<->h100-n0/nvsw9: the inventory has no link" in err
    assert "did you mean 'h100-n0/gpu0<->h100-n0/nvsw" in err  # one of the GPU's four NVSwitch bonds
    assert "Traceback" not in err


def test_why_not_with_a_scenario_is_a_usage_error() -> None:
    code, _out, err = run_cli("place", str(MIXED), str(JOBS / "hpc.yaml"), "--drain", "h100-n0", "--why-not")
    assert code == 2 and "--why-not and --limit apply to a plain place" in err


def test_scenario_file(tmp_path: Path) -> None:
    path = tmp_path / "maintenance.yaml"
    path.write_text(
        "apiVersion: topolog.dev/v1\nkind: Scenario\nmetadata: {name: h100 maintenance}\ndrain: [h100-n0, h100-n1]\n",
        encoding="utf-8",
    )
    code, out, _ = run_cli("place", str(MIXED), *map(str, MIXED_JOBS), "--scenario", str(path), "--format", "json")
    doc = json.loads(out)
    # The same scenario as test_draining_both_h100_nodes_loses_one_job_and_slows_another.
    assert code == 1 and doc["lost"] == ["llama-70b-serving"] and doc["changes"] == ["drain h100-n0", "drain h100-n1"]


def test_bad_scenario_file_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        "apiVersion: topolog.dev/v1\nkind: Scenario\ndrian: [h100-n0]\nfail: h100-n0/gpu0\n", encoding="utf-8"
    )
    with pytest.raises(TopologError) as caught:
        scenario_from(files=[path])
    text = str(caught.value)
    assert f"{path}:3:1: unknown key 'drian'" in text and "did you mean 'drain'?" in text
    assert f"{path}:4:1: 'fail' must be a list of ids" in text
    code, _, err = run_cli("place", str(MIXED), str(JOBS / "hpc.yaml"), "--scenario", str(path))
    assert code == 2 and "unknown key 'drian'" in err


def test_report_of_a_plain_place_is_unchanged() -> None:
    assert isinstance(place([MIXED], [JOBS / "hpc.yaml"]), PlaceReport)


def test_library_what_if() -> None:
    """`from verifier import what_if`: the same answer as test_a_failed_nvswitch_bond_moves_a_job_to_an_intact_node."""
    from verifier import what_if as library_what_if

    report = library_what_if(POD, [JOBS / "notebooks.yaml"], fail_links=["dgx00/gpu0<->dgx00/nvsw0"])
    (change,) = report.jobs
    assert change.outcome == "moved" and report.changes == ["fail-link dgx00/gpu0<->dgx00/nvsw0"]
    with pytest.raises(TopologError, match="the scenario changes nothing"):
        library_what_if(POD, [JOBS / "notebooks.yaml"])


def test_shipped_scenario() -> None:
    """inventories/scenarios/h100-maintenance.yaml drains h100-n0 and h100-n1 and fails rtx-n3/gpu1:
    llama-70b-serving loses its placement (both H100 nodes, as in
    test_draining_both_h100_nodes_loses_one_job_and_slows_another), chat-8b-serving too (rtx-n3 left
    one GPU, as in test_a_failed_gpu_costs_a_two_gpu_job_its_only_node), finetune-portable falls to
    mi300x-n0 at 448 GB/s, cfd-fp64 keeps mi300x-n0."""
    scenario = scenario_from(files=[INVENTORIES / "scenarios" / "h100-maintenance.yaml"])
    assert scenario.describe() == ["drain h100-n0", "drain h100-n1", "fail rtx-n3/gpu1"]
    report = what_if([MIXED], MIXED_JOBS, scenario)
    outcomes = {c.job: c.outcome for c in report.jobs}
    assert outcomes == {
        "llama-70b-serving": "loses",
        "chat-8b-serving": "loses",
        "finetune-portable": "slower",
        "cfd-fp64": "unchanged",
    }


def test_unknown_name_in_a_scenario_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text("apiVersion: topolog.dev/v1\nkind: Scenario\ndrain:\n  - h100-n0\n  - h100-m1\n", encoding="utf-8")
    code, out, err = run_cli("place", str(MIXED), str(JOBS / "hpc.yaml"), "--scenario", str(path))
    assert code == 2 and out == ""
    # Line 5, column 5: the second item of `drain`.
    assert f"{path}:5:5: drain h100-m1: the inventory has no object 'h100-m1'" in err
    assert "did you mean 'h100-n1'?" in err
