"""`verify --jobs` with a what-if scenario: WHATIF001/002/003 findings beside the inventory's own.

Outcomes derived by hand in tests/placement/test_whatif.py: draining h100-n0 and h100-n1 of the
mixed fleet costs llama-70b-serving its placement (WHATIF001, error) and drops finetune-portable
from 450 GB/s on h100-n0 to 448 GB/s on mi300x-n0 (WHATIF002, warning); cfd-fp64 is untouched.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

MIXED = "inventories/mixed-fleet.yaml"
JOBS = ["--jobs", "inventories/jobs/serving.yaml", "--jobs", "inventories/jobs/portable.yaml"]
JOBS += ["--jobs", "inventories/jobs/hpc.yaml"]
ROOT = Path(__file__).resolve().parents[2]


def _whatif(findings: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return sorted(
        (f["rule"], f["severity"], tuple(f["subjects"]), f["location"])  # type: ignore[arg-type]
        for f in findings
        if str(f["rule"]).startswith("WHATIF")
    )


@pytest.mark.usefixtures("in_repo_root")
def test_drain_findings() -> None:
    code, out, err = run_cli("verify", MIXED, *JOBS, "--drain", "h100-n0", "--drain", "h100-n1", "--format", "json")
    assert code == 1, err
    doc = json.loads(out)
    assert _whatif(doc["findings"]) == [
        # serving.yaml line 13 and portable.yaml line 12 are where the two jobs' entries start.
        ("WHATIF001", "error", ("llama-70b-serving",), {"file": "inventories/jobs/serving.yaml", "line": 13}),
        ("WHATIF002", "warning", ("finetune-portable",), {"file": "inventories/jobs/portable.yaml", "line": 12}),
    ]
    lost = next(f for f in doc["findings"] if f["rule"] == "WHATIF001")
    assert "if drain h100-n0, drain h100-n1: it has h100-n0 at 450 GB/s today" in lost["message"]


@pytest.mark.usefixtures("in_repo_root")
def test_a_drain_that_only_moves_jobs_adds_no_finding() -> None:
    """Draining h100-n0 alone moves both H100 jobs to h100-n1 at the same 450 GB/s: no finding,
    and the same exit status and findings as the plain verification."""
    code, out, _ = run_cli("verify", MIXED, *JOBS, "--drain", "h100-n0", "--format", "json")
    plain_code, plain, _ = run_cli("verify", MIXED, *JOBS, "--format", "json")
    assert code == plain_code
    assert _whatif(json.loads(out)["findings"]) == []
    assert json.loads(out)["findings"] == json.loads(plain)["findings"]


@pytest.mark.usefixtures("in_repo_root")
def test_changed_decision_is_a_finding(tmp_path: Path) -> None:
    """With a policy forbidding scheduling on a GPU in state down, failing rtx-n3/gpu0 denies the
    students rtx-n3/gpu0 (2 GPUs allowed -> 1, WHATIF003) and chat-8b-serving, which needs both of
    rtx-n3's GPUs, loses its placement (WHATIF001)."""
    policies = tmp_path / "policies"
    policies.mkdir()
    for f in (ROOT / "policies").glob("*.cedar*"):
        shutil.copy(f, policies / f.name)
    (policies / "down.cedar").write_text(
        '@id("no-scheduling-on-down-gpus")\nforbid (principal, action == Action::"schedule", resource)\n'
        'when { resource.state == "down" };\n',
        encoding="utf-8",
    )
    args = ["--jobs", "inventories/jobs/inference.yaml", "--fail", "rtx-n3/gpu0", "--policies", str(policies)]
    code, out, _ = run_cli("verify", MIXED, *args, "--format", "json")
    assert code == 1
    found = json.loads(out)["findings"]
    assert [f[:3] for f in _whatif(found)] == [
        ("WHATIF001", "error", ("chat-8b-serving",)),
        ("WHATIF003", "warning", ("chat-8b-serving", "students")),
    ]
    decision = next(f for f in found if f["rule"] == "WHATIF003")
    assert "students (job chat-8b-serving) may schedule on 1 GPUs if fail rtx-n3/gpu0 (today 2)" in decision["message"]
    assert decision["message"].endswith("denied now: rtx-n3/gpu0")


@pytest.mark.usefixtures("in_repo_root")
def test_a_scenario_needs_jobs() -> None:
    code, out, err = run_cli("verify", MIXED, "--drain", "h100-n0")
    assert code == 2 and out == "" and "needs --jobs" in err


@pytest.mark.usefixtures("in_repo_root")
def test_unknown_name_is_exit_2() -> None:
    code, out, err = run_cli("verify", MIXED, *JOBS, "--fail", "h100-n0/gpu9")
    assert code == 2 and out == ""
    assert "--fail: fail h100-n0/gpu9: the inventory has no object 'h100-n0/gpu9'; expected a device or node id" in err
