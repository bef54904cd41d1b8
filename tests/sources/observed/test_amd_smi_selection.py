"""amd-smi / rocm-smi output of some of a host's GPUs (`amd-smi static -g 0 1`) names no other GPU missing.

amd-smi prints no count of its host's GPUs and numbers the GPUs it sees from 0, so `-g 0 1` on a host of eight
(real posts use it: ROCm/rocm-systems PR 2987 shows `amd-smi static -g 0 1` of an MI350X host) prints the same as
a whole listing of a host of two, or of a host of eight whose other six amd-smi no longer sees. The file cannot
say which: a listing of fewer GPUs than the node declares judges none missing and says so (OBS009, the warning
nvidia-smi's `-i` selections already give); before, six good GPUs were OBS006 missing (errors, and never placed).
The listing is the shipped one of mi300x-n0 (inventories/observed/mixed-fleet), cut to its GPUs 0 and 1.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
STATIC = ROOT / "inventories" / "observed" / "mixed-fleet" / "mi300x-n0" / "amd-smi-static.json"


def _verify(tmp_path: Path, name: str, text: str) -> tuple[int, list[tuple[str, list[str], str]]]:
    (tmp_path / "mi300x-n0").mkdir()
    (tmp_path / "mi300x-n0" / name).write_text(text)
    code, out, err = run_cli(
        "verify", str(ROOT / "inventories" / "mixed-fleet.yaml"), "--observed", str(tmp_path), "--format", "json"
    )
    assert code in (0, 1), err
    found = [(f["rule"], f["subjects"], f["message"]) for f in json.loads(out)["findings"] if f["rule"][:3] == "OBS"]
    return code, found


def test_amd_smi_g_0_1_on_a_host_of_eight_is_told_not_judged(tmp_path: Path) -> None:
    # mixed-fleet.yaml declares mi300x-n0 with gpu0-gpu7; the file shows GPUs 0 and 1: 2 of 8, one OBS009 warning
    # (exit 0), no OBS006 (base: OBS006 for gpu2-gpu7, exit 1).
    static = json.loads(STATIC.read_text())
    code, found = _verify(tmp_path, "amd-smi-static.json", json.dumps(static[:2], indent=4))
    assert code == 0
    [(rule, subjects, message)] = found
    assert (rule, subjects) == ("OBS009", ["mi300x-n0"])
    assert "shows 2 of the 8 GPUs mi300x-n0 declares (amd-smi prints no count" in message


def test_rocm_smi_d_0_1_alike(tmp_path: Path) -> None:
    # rocm-smi --json of card0 and card1 (`rocm-smi -d 0 1`): 2 of 8 declared, one OBS009, nothing missing.
    cards = {f"card{i}": {"PCI Bus": f"0000:{0x05 + 0x20 * i:02x}:00.0", "Card series": "AMD Instinct MI300X"}
             for i in range(2)}  # fmt: skip
    code, found = _verify(tmp_path, "rocm-smi.json", json.dumps(cards, indent=4))
    assert code == 0
    assert [(rule, subjects) for rule, subjects, _ in found] == [("OBS009", ["mi300x-n0"])]
    assert "(rocm-smi prints no count" in found[0][2]


def test_a_whole_listing_of_the_declared_count_is_judged_as_before(tmp_path: Path) -> None:
    # All eight GPUs listed: 8 of 8, a whole listing: no OBS009 and no OBS006 (as on base).
    code, found = _verify(tmp_path, "amd-smi-static.json", STATIC.read_text())
    assert (code, found) == (0, [])
