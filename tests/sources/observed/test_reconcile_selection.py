"""`topolog reconcile --observed`: an amd-smi listing of fewer GPUs than declared names none missing.

amd-smi prints no count of its host's GPUs and numbers those it sees from 0, so `amd-smi static -g 0 1` on a host of
eight (ROCm/rocm-systems PR 2987 posts one) prints what a host of two prints. Before, reconcile called the six GPUs
it does not show "not in the GPU listing". The listing is the shipped one of mi300x-n0
(inventories/observed/mixed-fleet), cut to its GPUs 0 and 1.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
STATIC = ROOT / "inventories" / "observed" / "mixed-fleet" / "mi300x-n0" / "amd-smi-static.json"


def _reconcile(tmp_path: Path, gpus: list[object]) -> tuple[int, str]:
    (tmp_path / "mi300x-n0").mkdir()
    (tmp_path / "mi300x-n0" / "amd-smi-static.json").write_text(json.dumps(gpus, indent=4))
    code, out, err = run_cli("reconcile", str(ROOT / "inventories" / "mixed-fleet.yaml"), "--observed", str(tmp_path))
    assert code in (0, 1), err
    return code, out


def test_two_of_eight_name_none_missing(tmp_path: Path) -> None:
    # GPUs 0 and 1 of the eight mi300x-n0 declares: none "not in the GPU listing" (base: six, gpu2-gpu7). OB63: the
    # node gets one line saying what verify's OBS009 says (2 shown of the 8 declared: a selection or GPUs gone);
    # before, reconcile said nothing at all and exited 0.
    code, out = _reconcile(tmp_path, json.loads(STATIC.read_text())[:2])
    assert (code, "not in the GPU listing" in out) == (1, False)
    lines = [line for line in out.splitlines() if line.startswith("mi300x-n0")]
    assert len(lines) == 1
    assert lines[0].startswith("mi300x-n0: GPU listing: A 8 GPUs declared")
    assert (
        "B 2 of the 8 GPUs mi300x-n0 declares (amd-smi prints no count of its host's GPUs): a selection (-g)"
        in lines[0]
    )


def test_a_listing_of_eight_is_still_compared(tmp_path: Path) -> None:
    # All eight listed, the last numbered 9 instead of 7 (matched by index): 8 shown of 8 declared is a whole listing,
    # so gpu7 is "not in the GPU listing" and GPU 9 is "not declared" (as before).
    gpus = json.loads(STATIC.read_text())
    gpus[7]["gpu"] = 9
    code, out = _reconcile(tmp_path, gpus)
    assert code == 1
    assert "mi300x-n0/gpu7: GPU: A declared" in out and "not in the GPU listing" in out
