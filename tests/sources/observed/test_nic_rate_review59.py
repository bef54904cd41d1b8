"""Review R-RT (round 13) of 9dbcbc2: OBS104 pairs a port's state with the rate of the same observation.

9dbcbc2 moved the rate to observed_nic_port_rate and joined it to the port's state by NIC and port only, so a
port observed in two files (an ibstat and a later one, or ibstat beside ibv_devinfo) paired one file's state
with the other's rate: the finding cited a file that states another rate, and came once per file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import run_cli

FIXTURE = Path(__file__).resolve().parents[2] / "rules" / "fixtures" / "OBS104"


def _obs104(tmp_path: Path, second: str) -> list[str]:
    obs = tmp_path / "obs"
    shutil.copytree(FIXTURE / "fail.observed", obs)
    (obs / "n2" / "ibstat-2.txt").write_text(second)
    code, out, err = run_cli("verify", str(FIXTURE / "fail.yaml"), "--observed", str(obs), "--format", "json")
    assert code == 1, err
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "OBS104" and f["subjects"] == ["n2/nic1"]]
    return sorted(f["message"].split("(observed at ")[1].rsplit("/", 1)[1] for f in found)


def test_a_port_at_its_rate_in_a_second_file_is_judged_by_that_files_rate(tmp_path: Path) -> None:
    # n2's ibstat.txt: mlx5_1 (n2/nic1, declared 400 Gb/s) Active at Rate 200, its `Port 1:` block at line 25.
    # ibstat-2.txt is the same with Rate 400 on every port: 400 Gb/s is the declared rate, no finding from it.
    # One finding, from ibstat.txt:25 only (9dbcbc2: a second one citing ibstat-2.txt:25, whose rate is 400).
    second = (FIXTURE / "fail.observed" / "n2" / "ibstat.txt").read_text().replace("Rate: 200", "Rate: 400")
    assert _obs104(tmp_path, second) == ["ibstat.txt:25)."]


def test_a_plain_ibv_devinfo_beside_ibstat_adds_no_finding(tmp_path: Path) -> None:
    # Plain ibv_devinfo (no -v) of the same two ports, both PORT_ACTIVE: it states no rate, so it judges
    # no speed; the one finding is ibstat.txt's (9dbcbc2: a second one citing the devinfo file's port line).
    devinfo = "".join(
        f"hca_id:\tmlx5_{i}\n\ttransport:\t\t\tInfiniBand (0)\n\tphys_port_cnt:\t\t\t1\n"
        "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tlink_layer:\t\tInfiniBand\n\n"
        for i in (0, 1)
    )
    assert _obs104(tmp_path, devinfo) == ["ibstat.txt:25)."]
