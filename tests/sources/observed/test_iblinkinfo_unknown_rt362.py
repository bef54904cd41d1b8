"""R-RT3 (round 16): an iblinkinfo listing that names none of the inventory's hosts said nothing.

iblinkinfo speaks for the whole fabric, so hosts the inventory lacks (storage, management) are passed over one by
one. But where the node descriptions name no host of the inventory at all (`node-05 mlx5_2` where the inventory
says dgx05: rdma-ndd writes the kernel's host name, `%h`), every port was passed over and the run was clean, while
ibstat's file for an unknown host gives OBS005. Now one OBS005 per such file (its first host by name), none per port.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]

NONE_KNOWN = """\
CA: node-05 mlx5_2:
      0xb8599f0300226270      7    1[  ] ==(                Down/ Polling)==>             [  ] "" ( )
Switch: 0xfc6a1c0300e3f0a0 MF0;leaf1:MQM9700/U1:
          12    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>       9    1[  ] "node-05 mlx5_3" ( )
          12    2[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      10    1[  ] "storage01 mlx5_0" ( )
"""

ONE_KNOWN = NONE_KNOWN.replace("node-05 mlx5_3", "dgx05 mlx5_3")


def _obs(tmp_path: Path, text: str) -> list[tuple[str, list[str], str]]:
    (tmp_path / "fabric").mkdir()
    (tmp_path / "fabric" / "iblinkinfo.txt").write_text(text)
    code, out, err = run_cli(
        "verify", str(ROOT / "inventories/dgx-h100-pod.yaml"), "--observed", str(tmp_path), "--format", "json"
    )
    assert code in (0, 1), err
    return sorted(
        (f["rule"], f["subjects"], f["message"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")
    )


def test_listing_naming_no_host_of_the_inventory(tmp_path: Path) -> None:
    # node-05 (lines 1, 4) and storage01 (line 5): no node of the pod (dgx01..). One OBS005 for the file, naming its
    # first host by name ('node-05' < 'storage01'), none per port and nothing judged (no OBS103/OBS104).
    found = _obs(tmp_path, NONE_KNOWN)
    assert [(rule, subjects) for rule, subjects, _m in found] == [("OBS005", ["node-05"])]
    assert "no node of the inventory has this name" in found[0][2]
    assert "iblinkinfo.txt" in found[0][2]


@pytest.mark.parametrize("text", [ONE_KNOWN])
def test_listing_naming_one_host_of_the_inventory(tmp_path: Path, text: str) -> None:
    # dgx05 mlx5_3 (line 4, nic3 by index) is the pod's: the file is this fabric's, its other hosts (node-05,
    # storage01) are passed over as before. dgx05/nic3 at 4X HDR = 200,000 of its 400 Gb/s -> OBS104 only.
    assert [(rule, subjects) for rule, subjects, _m in _obs(tmp_path, text)] == [("OBS104", ["dgx05/nic3"])]
