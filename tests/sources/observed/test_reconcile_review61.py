"""`reconcile --observed` counts observations as verify does (review R-HI2 of b27ea38 and 639151e).

verify's facts count one (gpu, kind, link) once however many files report it, the inactive report standing,
and judge each full GPU listing on what it shows; reconcile summed links file by file (a copy of
`nvidia-smi nvlink -s` beside it doubled every GPU's count: 18 declared, 36 observed) and took a GPU shown by
any file as listed (a listing without it was silent).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
OBSERVED = ROOT / "inventories" / "observed"


def _lines(inventory: str, observed: Path) -> list[str]:
    code, out, err = run_cli("reconcile", str(ROOT / "inventories" / f"{inventory}.yaml"), "--observed", str(observed))
    assert code in (0, 1), err
    return [ln for ln in out.splitlines() if ln.startswith(("dgx03/", "mi300x-n0/"))]


def test_a_copy_of_nvlink_s_counts_each_link_once(tmp_path: Path) -> None:
    obs = tmp_path / "obs"
    shutil.copytree(OBSERVED / "dgx-h100-pod", obs)
    shutil.copy(obs / "dgx03" / "nvlink-s.txt", obs / "dgx03" / "nvlink-s-copy.txt")
    got = _lines("dgx-h100-pod", obs)
    # By hand: dgx03's nvlink-s.txt shows GPU 5 with 16 of 18 links active (two `<inactive>` lines) and every
    # other GPU as its node declares; the copy adds no link, so the only link disagreement stays gpu5's 16
    # (it read 32, and 36 for each healthy GPU, before).
    links = [ln for ln in got if "active scale-up links" in ln]
    assert [ln.split(" (")[0] for ln in links] == ["dgx03/gpu5: active scale-up links: A 18"]
    assert ", B 16 (" in links[0]


def test_a_gpu_one_amd_smi_listing_leaves_out_is_missing_there(tmp_path: Path) -> None:
    obs = tmp_path / "obs"
    shutil.copytree(OBSERVED / "mixed-fleet", obs)
    metric = obs / "mi300x-n0" / "amd-smi-metric.json"
    gpus = json.loads(metric.read_text())
    # By hand: the shipped metric listing shows GPUs 0-7; GPU 3's entry renumbered 8 (the static listing still shows
    # GPU 3). Round 16 (RT62): the metric listing must still show 8 GPUs, as many as mi300x-n0 declares, to be
    # compared at all: amd-smi prints no count, so one of fewer GPUs (GPU 3's entry dropped, as this test first
    # did) may be a `-g` selection and names none missing.
    assert [g["gpu"] for g in gpus] == list(range(8))
    metric.write_text(json.dumps([{**g, "gpu": 8} if g["gpu"] == 3 else g for g in gpus]))
    missing = [ln for ln in _lines("mixed-fleet", obs) if "not in the GPU listing" in ln]
    assert len(missing) == 1
    assert missing[0].startswith("mi300x-n0/gpu3: GPU: A declared (")
    assert missing[0].endswith(f"B not in the GPU listing ({metric})")
