"""Arguments swapped or misplaced: exit 2 with the command line that was meant, judged by content."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli

pytestmark = pytest.mark.usefixtures("in_repo_root")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # rules/ holds the *.dl rule files; edge-soc.yaml says `kind: Inventory`.
        (
            ["verify", "rules/", "inventories/edge-soc.yaml"],
            "error: rules: holds rules, not an inventory; "
            "did you mean `topolog verify inventories/edge-soc.yaml --rules rules`?",
        ),
        # principals.yml says `kind: Principals`.
        (
            ["verify", "inventories/principals.yml", "inventories/mixed-fleet.yaml"],
            "error: inventories/principals.yml: holds principals, not an inventory; did you mean "
            "`topolog verify inventories/mixed-fleet.yaml --principals inventories/principals.yml`?",
        ),
        # hpc.yaml says `kind: Jobs`; no inventory was given at all.
        (
            ["verify", "inventories/jobs/hpc.yaml"],
            "error: inventories/jobs/hpc.yaml: holds jobs, not an inventory; "
            "did you mean `topolog verify INVENTORY --jobs inventories/jobs/hpc.yaml`?",
        ),
        # Every YAML file directly in inventories/jobs/ is a job file (kind: Jobs).
        (
            ["place", "inventories/jobs/", "inventories/mixed-fleet.yaml"],
            "error: inventories/jobs: holds jobs, not an inventory (the first argument of place); "
            "did you mean `topolog place inventories/mixed-fleet.yaml inventories/jobs`?",
        ),
        (
            ["place", "inventories/jobs/hpc.yaml", "inventories/mixed-fleet.yaml", "inventories/jobs/portable.yaml"],
            "error: inventories/jobs/hpc.yaml: holds jobs, not an inventory (the first argument of place); "
            "did you mean `topolog place inventories/mixed-fleet.yaml inventories/jobs/hpc.yaml "
            "inventories/jobs/portable.yaml`?",
        ),
    ],
)
def test_swapped_arguments_say_what_was_meant(args: list[str], message: str) -> None:
    code, out, err = run_cli(*args)
    assert (code, out, err) == (2, "", message + "\n")


def test_a_bare_pod_manifest_is_a_job_file(tmp_path: Path) -> None:
    # A Kubernetes Pod (`kind: Pod`, apiVersion v1) is one of the job specs place reads; given as
    # verify's inventory it is refused as jobs, with the --jobs line that was meant.
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - name: c\n      image: x\n      resources: {limits: {nvidia.com/gpu: 1}}\n",
        encoding="utf-8",
    )
    code, out, err = run_cli("verify", str(pod), "inventories/edge-soc.yaml")
    assert (code, out) == (2, "")
    assert err == (
        f"error: {pod}: holds jobs, not an inventory; "
        f"did you mean `topolog verify inventories/edge-soc.yaml --jobs {pod}`?\n"
    )


def test_arguments_in_order_still_run() -> None:
    # jobs/hpc.yaml: 8 FP64 GPUs on one node, placeable on the mixed fleet's MI300X nodes (tests/test_packaging.py).
    code, out, _ = run_cli("place", "inventories/mixed-fleet.yaml", "inventories/jobs/hpc.yaml")
    assert code == 0 and "1 of 1 jobs placeable" in out
    code, _, err = run_cli("verify", "inventories/edge-soc.yaml", "--jobs", "inventories/jobs/hpc.yaml")
    assert code in (0, 1), err
