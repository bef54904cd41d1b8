"""A GPU listing shorter than its driver's count (OBS009), end to end on the shipped DGX H100 pod.

The shipped dgx03/nvidia-smi.xml says <attached_gpus>7</attached_gpus> and lists 7 <gpu> elements
(GPUs 0-6; gpu7 declared but not listed: OBS006). Here its third <gpu> (bus 00000000:3A:00.0, GPU 2)
is cut out and <attached_gpus> left at 7: the shape nvidia-smi prints for `-q -x -i` of 6 GPUs, and
the shape a GPU the driver counts but cannot read leaves. So, derived by hand:

- one OBS009 warning for dgx03: the file shows 6 of the 7 GPUs its driver counts;
- the file is a selection: its positions are not nvidia-smi's indexes, and dgx-h100-pod declares its
  GPUs by position only (no uuid, serial or pci_bus_id), so none of the 6 is matched. They are not
  each reported unmatched (OBS005): OBS009 names the one cause. The dgx12 host file's OBS005 stays;
- no GPU of dgx03 is judged missing (OBS006) from a selection, and the findings that matched dgx03's
  GPUs by index from this file (OBS001 on gpu1 and gpu4, OBS004 on gpu6) are not made.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
POD = str(ROOT / "inventories" / "dgx-h100-pod.yaml")
NOW = ("--observed-now", "2026-12-06T09:00:00Z")


def _without_third_gpu(folder: Path) -> Path:
    shutil.copytree(ROOT / "inventories" / "observed" / "dgx-h100-pod", folder)
    xml = folder / "dgx03" / "nvidia-smi.xml"
    text = xml.read_text()
    starts = [m.start() for m in re.finditer(r"[ \t]*<gpu id=", text)]
    third, fourth = starts[2], starts[3]
    assert 'id="00000000:3A:00.0"' in text[third:fourth]
    xml.write_text(text[:third] + text[fourth:])
    return xml


def test_a_listing_shorter_than_attached_is_one_warning(tmp_path: Path) -> None:
    xml = _without_third_gpu(tmp_path / "obs")
    status, out, err = run_cli("verify", POD, "--observed", str(tmp_path / "obs"), *NOW, "--format", "json")
    assert status == 1, err  # dgx03's OBS002 (nvlink -s) and the stale dgx01 file stay
    findings = json.loads(out)["findings"]
    short = [f for f in findings if f["rule"] == "OBS009"]
    assert [(f["subjects"], f["message"]) for f in short] == [
        (
            ["dgx03"],
            f"{xml} shows 6 of the 7 GPUs the driver of dgx03 counts: a selection (-i) or a GPU it cannot "
            "read; the GPUs left out are not judged.",
        )
    ]
    unmatched = sorted(tuple(f["subjects"]) for f in findings if f["rule"] == "OBS005")
    assert unmatched == [("dgx12",)]
    assert not [f for f in findings if f["rule"] == "OBS006" and f["subjects"][0].startswith("dgx03/")]
    assert not [f for f in findings if f["rule"] in {"OBS001", "OBS004"} and str(xml) in json.dumps(f)]
