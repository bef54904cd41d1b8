"""What the tests of devices written down (test_down_device_paths, test_down_devices_adversarial55)
run through the command line: `verify`'s findings and `place`'s answers for an inventory's text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
JOBS = ROOT / "inventories" / "jobs"
PRINCIPALS = ROOT / "inventories" / "principals.yml"


def findings(tmp_path: Path, text: str) -> list[tuple[str, tuple[str, ...]]]:
    """`verify`'s findings of the inventory `text`, as (rule, subjects), sorted."""
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    code, out, err = run_cli("verify", str(path), "--format", "json", env={"TOPOLOG_CACHE_DIR": ""})
    assert code in (0, 1), err
    return sorted((f["rule"], tuple(f["subjects"])) for f in json.loads(out)["findings"])


def placed(*args: str) -> dict[str, Any]:
    """`place`'s JSON report for `args` (inventory, jobs, options), with the shipped principals."""
    code, out, err = run_cli(
        "place", *args, "--principals", str(PRINCIPALS), "--format", "json", env={"TOPOLOG_CACHE_DIR": ""}
    )
    assert code in (0, 1), err
    doc: dict[str, Any] = json.loads(out)
    return doc


def placed_alike(tmp_path: Path, written: str, target: str) -> None:
    """The shipped jobs placed on the pod `written` (a device or node written down) as on the shipped
    pod with `--fail target` (its `after` side): the same first placement (GPUs, bottleneck) and as
    many hosting domains, job by job."""
    path = tmp_path / "pod.yaml"
    path.write_text(written)
    mine = placed(str(path), str(JOBS))
    failed = placed(str(ROOT / "inventories" / "dgx-h100-pod.yaml"), str(JOBS), "--fail", target)
    after = {j["job"]: j for j in failed["jobs"]}
    assert {j["job"] for j in mine["jobs"]} == set(after)
    for job in mine["jobs"]:
        theirs = after[job["job"]]
        first = job["placements"][0] if job["placements"] else None
        ours = None if first is None else (first["gpus"], first["bottleneck_mbps"])
        what_if = None if theirs["after"] is None else (theirs["after"]["gpus"], theirs["after"]["bottleneck_mbps"])
        assert (ours, job["hosting"]) == (what_if, theirs["hosting_after"]), job["job"]
