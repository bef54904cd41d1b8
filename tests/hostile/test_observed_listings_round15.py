"""Two GPU listings of one host are each judged on what they show (OBS006), never the better one alone.

A GPU one full listing of its node shows and another leaves out was "listed" by the first, and the second's
missing GPU went unreported: the listings disagree, and the one without the GPU may be the newer.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventories" / "dgx-h100-pod.yaml"
SHIPPED = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03" / "nvidia-smi.xml"


def _missing(tmp_path: Path, files: dict[str, str]) -> list[str]:
    host = tmp_path / "observed" / "dgx03"
    host.mkdir(parents=True)
    for name, text in files.items():
        (host / name).write_text(text)
    code, out, err = run_cli(
        "verify", str(INVENTORY), "--observed", str(tmp_path / "observed"),
        "--observed-now", "2026-12-06T09:00:00Z", "--format", "json",
    )  # fmt: skip
    assert code in (0, 1), err
    findings = json.loads(out)["findings"]
    return sorted(f["message"] for f in findings if f["rule"] == "OBS006")


def test_a_gpu_one_listing_leaves_out_is_missing_there(tmp_path: Path) -> None:
    lines = SHIPPED.read_text().splitlines(keepends=True)
    # By hand: the shipped listing shows GPUs 0-6 (attached 7; gpu7 is missing, OBS006 of the shipped set).
    # Its copy a.xml drops GPU 6's block (lines 512-595, minor number 6) and says 6 attached: a full listing of
    # GPUs 0-5. gpu6 is missing from a.xml; gpu7 from both files.
    assert (
        lines[6].strip() == "<attached_gpus>7</attached_gpus>"
        and lines[521].strip() == "<minor_number>6</minor_number>"
    )
    copy = [*lines[:6], "    <attached_gpus>6</attached_gpus>\n", *lines[7:511], *lines[595:]]
    got = _missing(tmp_path, {"nvidia-smi.xml": "".join(lines), "a.xml": "".join(copy)})
    d = tmp_path / "observed" / "dgx03"
    assert got == [
        f"GPU dgx03/gpu6, dgx03/gpu7 is declared but {d / 'a.xml'}, the GPU listing of its node, does not show it.",
        f"GPU dgx03/gpu7 is declared but {d / 'nvidia-smi.xml'}, the GPU listing of its node, does not show it.",
    ]
