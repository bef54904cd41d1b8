"""What-if reports (`place --drain ...`, `diff --jobs`): golden text and JSON, and the diff's answers.

The goldens pin the format; the outcomes in them are the hand-derived ones of
tests/placement/test_whatif.py (drain h100-n0 and h100-n1 on the mixed fleet: llama-70b-serving
loses its placement, finetune-portable falls from 450 GB/s on h100-n0 to 448 GB/s on mi300x-n0).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.placement.whatif import WhatIfReport
from verifier.reports import formats_for
from verifier.session.diff_run import JobsDiffReport

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
MIXED = "inventories/mixed-fleet.yaml"
JOBS = [f"inventories/jobs/{name}.yaml" for name in ("portable", "serving", "hpc", "inference")]
SUFFIX = {"text": "txt", "json": "json"}
H100 = '{template: mf-hgx-h100, name: "h100-n{i}", count: 2}'
H100_DRAINED = (
    '{template: mf-hgx-h100, name: "h100-n{i}", count: 2, '
    "overrides: {h100-n0: {state: drained}, h100-n1: {state: drained}}}"
)


def test_formats() -> None:
    assert formats_for(WhatIfReport) == ("text", "json")
    assert formats_for(JobsDiffReport) == ("text", "json")


@pytest.mark.usefixtures("in_repo_root")
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_place_what_if_golden(fmt: str) -> None:
    code, out, _ = run_cli("place", MIXED, *JOBS, "--drain", "h100-n0", "--drain", "h100-n1", "--format", fmt)
    assert code == 1  # llama-70b-serving loses its placement
    assert out == (GOLDEN / f"whatif-drain.{SUFFIX[fmt]}").read_text(encoding="utf-8")


def _edited(tmp_path: Path) -> Path:
    """The mixed fleet with both H100 nodes drained in the inventory itself, principals beside it."""
    text = (ROOT / MIXED).read_text(encoding="utf-8")
    assert text.count(H100) == 1
    edited = tmp_path / "mixed-fleet.yaml"
    edited.write_text(text.replace(H100, H100_DRAINED), encoding="utf-8")
    shutil.copy(ROOT / "inventories" / "principals.yml", tmp_path / "principals.yml")
    return edited


@pytest.mark.usefixtures("in_repo_root")
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_diff_jobs_golden(tmp_path: Path, fmt: str) -> None:
    edited = _edited(tmp_path)
    args = ["diff", MIXED, str(edited), *(a for j in JOBS for a in ("--jobs", j)), "--format", fmt]
    code, out, _ = run_cli(*args)
    # Draining adds no finding and changes no watched relation (a drained node keeps its NVLink
    # domain, and no shipped policy reads `state`), but llama-70b-serving loses its placement.
    assert code == 1
    out = out.replace(str(edited), "EDITED/mixed-fleet.yaml")
    assert out == (GOLDEN / f"diff-jobs.{SUFFIX[fmt]}").read_text(encoding="utf-8")


@pytest.mark.usefixtures("in_repo_root")
def test_diff_jobs_equals_the_what_if(tmp_path: Path) -> None:
    """The same change as a revision (diff --jobs) and as a scenario (place --drain): one answer per job."""
    edited = _edited(tmp_path)
    _, diffed, _ = run_cli("diff", MIXED, str(edited), *(a for j in JOBS for a in ("--jobs", j)), "--format", "json")
    _, scenario, _ = run_cli("place", MIXED, *JOBS, "--drain", "h100-n0", "--drain", "h100-n1", "--format", "json")
    assert json.loads(diffed)["jobs"]["jobs"] == json.loads(scenario)["jobs"]


@pytest.mark.usefixtures("in_repo_root")
def test_diff_without_jobs_is_unchanged(tmp_path: Path) -> None:
    edited = _edited(tmp_path)
    code, out, _ = run_cli("diff", MIXED, str(edited), "--format", "json")
    assert code == 0 and "jobs" not in json.loads(out)


@pytest.mark.usefixtures("in_repo_root")
def test_diff_jobs_fails_closed_without_principals(tmp_path: Path) -> None:
    edited = _edited(tmp_path)
    (tmp_path / "principals.yml").unlink()
    code, out, err = run_cli("diff", MIXED, str(edited), "--jobs", JOBS[0])
    assert code == 2 and out == "" and "principals" in err and "Traceback" not in err
