"""`place` and `verify --jobs` on jobs as schedulers write them: a Kueue Job and a Slurm batch script.

The shipped examples (inventories/jobs/schedulers/) on the shipped DGX H100 pod. Expected
placements derived by hand from inventories/dgx-h100-pod.yaml: 8 DGX H100 nodes, dgx00..dgx03 in
rack0 and dgx04..dgx07 in rack1, 8 H100-SXM5-80GB each at $4.10 per GPU-hour, NVLink 4 through
NVSwitches (18 links x 25 GB/s = 450 GB/s per GPU), one 400 Gb/s NDR rail per GPU between nodes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
EXAMPLES = ROOT / "inventories" / "jobs" / "schedulers"
KUEUE = EXAMPLES / "kueue-pretrain.yaml"
SBATCH = EXAMPLES / "finetune.sbatch"
RULES = ("--principal-from", "namespace=Team", "--principal-from", "account=Team")


def _gpus(*nodes: str) -> list[str]:
    return [f"{n}/gpu{i}" for n in nodes for i in range(8)]


def test_place_kueue_job_and_slurm_script() -> None:
    code, out, _ = run_cli("place", str(POD), str(EXAMPLES), "--format", "json", *RULES)
    assert code == 0
    doc = json.loads(out)
    jobs = {j["job"]: j for j in doc["jobs"]}
    # finetune.sbatch: --nodes=1 --gres=gpu:h100:8 -> 8 GPUs on one node, H100 only; account research.
    # Every node has 8 H100: 8 candidates. dgx00 first: 450 GB/s between its GPUs, 8 x $4.10 = $32.80/h.
    ft = jobs["finetune-h100"]
    assert (ft["principal"], ft["gpus"], ft["scope"], ft["candidates"], ft["hosting"]) == ("research", 8, "node", 8, 8)
    best = ft["placements"][0]
    assert (best["domain"], best["gpus"], best["bottleneck_mbps"]) == ("dgx00", _gpus("dgx00"), 450_000)
    assert best["cost_millicents_per_hour"] == 3_280_000  # $32.80 = 3,280,000 millicents
    # kueue-pretrain.yaml: parallelism 2 x 8 GPUs, required rack -> 16 GPUs in one rack, at most 2 nodes.
    # rack0 and rack1 host it; in each the first two nodes by name: the fabric (50 GB/s) is the bottleneck.
    pt = jobs["pretrain-rack"]
    assert (pt["principal"], pt["gpus"], pt["scope"], pt["hosting"]) == ("research", 16, "rack", 2)
    assert [(p["domain"], p["gpus"], p["nodes"], p["bottleneck_mbps"]) for p in pt["placements"]] == [
        ("rack0", _gpus("dgx00", "dgx01"), 2, 50_000),
        ("rack1", _gpus("dgx04", "dgx05"), 2, 50_000),
    ]
    assert pt["placements"][0]["cost_millicents_per_hour"] == 6_560_000  # 16 x $4.10 = $65.60
    # Not judged, and said: the tolerations and the memory limit of the Job, the partition of the script.
    assert any("tolerations of nvidia.com/gpu not judged" in n for n in pt["notes"])
    assert any("limits.memory: 1600Gi not judged" in n for n in pt["notes"])
    assert any(
        n.endswith("finetune.sbatch:8: --partition=dgx: which nodes it holds is not judged") for n in ft["notes"]
    )


def test_place_text_lists_notes_under_each_job() -> None:
    code, out, _ = run_cli("place", str(POD), str(SBATCH), "--limit", "1", *RULES)
    assert code == 0
    lines = out.splitlines()
    assert (
        lines[0]
        == "job finetune-h100 (research, 8 GPUs, scope node): 8 placements of 8 candidate domains (the best 1 shown)"
    )
    assert lines[1].startswith("  note: ") and lines[1].endswith(
        "finetune.sbatch:8: --partition=dgx: which nodes it holds is not judged"
    )
    assert lines[-1] == "1 of 1 jobs placeable (ranked by bandwidth)"


def test_verify_jobs_judges_them_and_notes_on_stderr() -> None:
    code, out, err = run_cli("verify", str(POD), "--jobs", str(KUEUE), "--jobs", str(SBATCH), *RULES)
    # Both jobs fit (no PLACE001); the pod's one finding is TOPO005, an error (dgx03's degraded NVLink
    # bond takes gpu2 out of NVLink under the fabric manager's default), so verify exits 1.
    assert code == 1 and "PLACE001" not in out and out.count("error TOPO005") == 1
    assert "note: " in err and "kueue-pretrain.yaml:28:9: container trainer: image, command not judged" in err


def test_principal_from_configuration_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".topolog.yaml").write_text("principal-from: [namespace=Team, account=Team]\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli("place", str(POD), str(KUEUE), "--limit", "1")
    assert code == 0 and out.startswith("job pretrain-rack (research, 16 GPUs, scope rack): 2 placements")


def test_without_principal_rule_the_job_is_refused() -> None:
    code, out, err = run_cli("place", str(POD), str(KUEUE))
    assert code == 2 and out == ""
    # Line 5: `kind: Job`, where the workload starts after the header comment.
    assert "kueue-pretrain.yaml:5:1: Job pretrain-rack: cannot tell which principal it acts as" in err
    assert "Traceback" not in err


def test_a_principal_not_in_the_principals_file_is_refused() -> None:
    # The Kueue queue name, research-queue, is no principal of inventories/principals.yml.
    code, _, err = run_cli("place", str(POD), str(KUEUE), "--principal-from", "queue=Team")
    assert code == 2 and "principal 'research-queue' is not in" in err


def test_bad_rule_and_bad_manifest_exit_2(tmp_path: Path) -> None:
    code, _, err = run_cli("place", str(POD), str(KUEUE), "--principal-from", "namespase")
    assert code == 2 and "unknown principal source 'namespase'" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: research\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: c\n        resources:\n          limits:\n"
        "            nvidia.com/gpu: 0.5\n",
        encoding="utf-8",
    )
    code, out, err = run_cli("verify", str(POD), "--jobs", str(bad), *RULES)
    assert code == 2 and out == ""
    assert f"{bad}:13:13: limits nvidia.com/gpu of container c is '0.5'; expected a whole number of devices" in err


def test_diff_jobs_reads_them_too(tmp_path: Path) -> None:
    # The pod against a copy of itself: nothing changes, so each job keeps its best placement
    # (finetune-h100 on dgx00, pretrain-rack on rack0, as derived above).
    copy = tmp_path / "dgx-h100-pod.yaml"
    copy.write_text(POD.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "principals.yml").write_text(
        (ROOT / "inventories" / "principals.yml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    code, out, _ = run_cli("diff", str(POD), str(copy), "--jobs", str(EXAMPLES), *RULES)
    assert code == 0
    assert "  job finetune-h100 (research): unchanged\n    on dgx00 (bottleneck 450 GB/s" in out
    assert "  job pretrain-rack (research): unchanged\n    on rack0 (bottleneck 50 GB/s" in out
