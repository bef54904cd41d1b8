"""`verify --observed` on the shipped mixed fleet: amd-smi, ibstat and nccl-tests, end to end.

The observation set inventories/observed/mixed-fleet/ (hand-written in the shape of the cited samples,
tests/sources/observed/samples/) says, and so the findings must be, derived by hand:

- mi300x-n0/amd-smi-metric.json: GPU 3 trained to x8 (its object opens at line 113); mixed-fleet.yaml
  declares every MI300X on PCIe Gen5 x16 -> OBS101. The static file states only maxima: nothing to judge.
- mi300x-n0/amd-smi-topology.json: the xGMI link between GPUs 2 and 5 is DISABLED, in GPU 2's list (line
  212) and GPU 5's (line 419); the full mesh declares gpu2-gpu5 working -> one OBS102 naming both places.
  Each of the two GPUs has 6 of its 7 xGMI links active, but that one link is the whole shortfall and
  OBS102 names it: one root cause, one finding, so no OBS003 for either GPU.
- mi300x-n0/ibstat.txt: the node's NICs carry no name label, so mlx5_k is nic{k} (by index). mlx5_5
  (port at line 93) is Down/Polling on a declared 400 Gb/s cable -> OBS103 (error); mlx5_6 (line 110)
  is Active at 200 Gb/s = 200,000 Mb/s where its cable declares 400 Gb/s = 50,000 MB/s x 8 = 400,000
  Mb/s -> OBS104; the others run at 400.
- nccl-tests-h100-n0-n1.all_reduce.txt: all_reduce_perf on the 8 GPUs of h100-n0 and of h100-n1 (16
  ranks). Its largest size, 8 GiB (line 29), peaks at 210.00 GB/s = 210,000 MB/s (out-of-place; in-place
  is 210 / 1.01). What the topology allows: any two H100 of a node, 450,000 MB/s over NVSwitch; each
  node into the fabric 8 x 50,000 = 400,000 MB/s (a 400 Gb/s NIC per GPU), and over K = 2 nodes and
  N = 16 GPUs the bus bandwidth can reach 400,000 x 2 x 15 / (1 x 16) = 750,000. The lower, 450,000, x
  700/1000 = 315,000 > 210,000 -> OBS105.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

FLEET = "inventories/mixed-fleet.yaml"
OBS = "inventories/observed/mixed-fleet"


def _findings() -> list[tuple[str, str, list[str], str]]:
    code, out, err = run_cli("verify", FLEET, "--observed", OBS, "--format", "json")
    assert code == 1, err  # OBS103 is an error
    found = json.loads(out)["findings"]
    return sorted((f["rule"], f["severity"], f["subjects"], f["message"]) for f in found if f["rule"].startswith("OBS"))


def test_verify_observed_amd_ibstat_nccl_findings() -> None:
    found = _findings()
    assert [(rule, severity, subjects) for rule, severity, subjects, _ in found] == [
        ("OBS101", "warning", ["mi300x-n0/gpu3"]),
        ("OBS102", "warning", ["mi300x-n0/gpu2", "mi300x-n0/gpu5"]),
        ("OBS103", "error", ["mi300x-n0/nic5"]),
        ("OBS104", "warning", ["mi300x-n0/nic6"]),
        ("OBS105", "warning", ["h100-n0/gpu0"]),
    ]
    message = {rule: text for rule, _, _, text in found}
    assert message["OBS101"] == (
        "GPU mi300x-n0/gpu3's PCIe link runs at x8 where the declared PCIe link gives x16 "
        f"(observed at {OBS}/mi300x-n0/amd-smi-metric.json:113)."
    )
    assert message["OBS102"].endswith(
        f"(observed at {OBS}/mi300x-n0/amd-smi-topology.json:212, {OBS}/mi300x-n0/amd-smi-topology.json:419)."
    )
    assert message["OBS103"] == (
        "NIC mi300x-n0/nic5 port 1 is Down (physical state Polling) where its fabric link "
        f"mi300x-n0/nic5<->euw-mi300x-leaf is declared working (observed at {OBS}/mi300x-n0/ibstat.txt:93)."
    )
    assert message["OBS104"] == (
        "NIC mi300x-n0/nic6 port 1 runs at 200000 Mb/s where its declared fabric link gives 400000 Mb/s "
        f"(observed at {OBS}/mi300x-n0/ibstat.txt:110)."
    )
    assert message["OBS105"] == (
        "all_reduce_perf on 16 GPU(s) of 2 node(s) (first GPU h100-n0/gpu0) measured 210000 MB/s, below "
        "700/1000 of the 450000 MB/s that the slowest GPU pair inside a node allows "
        f"(measured at {OBS}/nccl-tests-h100-n0-n1.all_reduce.txt:29)."
    )


def test_without_observations_none_of_these_checks_applies() -> None:
    code, out, err = run_cli("verify", FLEET, "--format", "json")
    assert code == 0, err
    assert not [f for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")]


def test_a_truncated_or_foreign_file_is_exit_2_with_its_line(tmp_path: Path) -> None:
    # mi300x-n0's ibstat cut in the middle of mlx5_5's port block (its "Port 1:" is line 93, "State:"
    # line 94), and an amd-smi file that is not JSON: both reported, each at its file:line, exit 2.
    host = tmp_path / "mi300x-n0"
    host.mkdir()
    full = (ROOT / OBS / "mi300x-n0" / "ibstat.txt").read_text().splitlines()
    (host / "ibstat.txt").write_text("\n".join(full[:94]) + "\n")
    (host / "amd-smi.json").write_text('[{"gpu": 0, "pcie": {"width": 16,\n')
    code, out, err = run_cli("verify", FLEET, "--observed", str(tmp_path))
    assert code == 2, out
    assert (
        f"{host}/ibstat.txt:93: port 1 of mlx5_5 has no Physical state, Rate, Link layer; the file looks truncated"
        in err
    )
    assert f"{host}/amd-smi.json:2:1: not valid JSON" in err
    assert "Traceback" not in err
