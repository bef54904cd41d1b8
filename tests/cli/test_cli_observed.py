"""`verify`, `place` and `reconcile` with --observed, end to end on the shipped DGX H100 pod.

The observation set (inventories/observed/dgx-h100-pod/, hand-written in the shape of the cited real
samples, tests/sources/observed/samples/) is judged at 2026-12-06T09:00:00Z. What it says, and so what
each command must answer, derived by hand:

- dgx03/nvidia-smi.xml (printed 2026-12-06 08:30, 1,800 s old: trusted) lists GPUs 0-6: gpu7 is declared
  but not listed -> OBS006 (error). GPU 1 trained x8 of x16 -> OBS001 (width, always judged). GPU 3 runs
  Gen4 of Gen5 at 0 % (idle: not judged); GPU 4 Gen4 of Gen5 at 97 % (>= 50) -> OBS001 (generation).
  GPU 6 has a row remapping pending -> OBS004; its 1 aggregate uncorrectable error is not judged (the
  volatile count, 0, is).
- dgx03/nvlink-s.txt: GPU 2 has link 5 inactive: 17 active = the 17 dgx03 declares for it (its nvsw1 bond
  is overridden to 3): no OBS002. GPU 5 has links 7 and 12 inactive: 16 < 18 on an NVSwitch board in the
  fabric manager's default mode -> OBS002 (error); its first inactive link is line 96 + 1 + 7 = 104
  (GPU 5's header is line 5 x 19 + 1).
- dgx03/dcgm-exporter.prom: GPU 0's last XID is 95 (uncontained memory error: RESET_GPU in NVIDIA's Xid
  Catalog) -> OBS004 at line 3; GPU 3's
  is 13 (RESTART_APP): not a GPU fault.
- dgx01/nvidia-smi.xml printed 2026-11-01 08:00: 35 days 1 hour = 3,027,600 s > 86,400 -> OBS007; its
  failed row remapping on GPU 0 and its one-GPU listing are not trusted: no OBS004, no OBS006 for dgx01.
- dgx12.nvlink-s.txt speaks for a host the pod lacks -> OBS005. dgx00, 02 and 04-07 have no file: not
  observed, no finding.

Placement consequences (hand-derived from the same files):

- dgx03/gpu5 leaves its NVLink domain (OBS002): `place` counts it in no NVLink domain, as if its access
  link were declared failed. dgx03's GPUs in service are gpu1-gpu5 (gpu0, gpu6, gpu7 out, above); in
  its NVLink domain that leaves gpu1-gpu4: 4, short of a 5-GPU nvlink_domain job (5 without the OBS002
  consequence). Every other node's domain has 8.
- A NIC port observed down (OBS103, written by the test in the shape of the cited ibstat sample): dgx05's
  mlx5_2 (nic2, by index) Down/Polling. nearest_nic ranks nic2 and nic3 PIX for dgx05's gpu2 and gpu3
  (the PCIe switch pcie1 holds gpu2, gpu3, nic2, nic3), so both use nic2: their declared fabric share
  (50,000 MB/s) is not trusted and counts 0, and dgx05 has 6 GPUs at 400 Gb/s = 50,000 MB/s, short of
  an 8-GPU job that needs min_network_bandwidth 400 Gb/s.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
POD = "inventories/dgx-h100-pod.yaml"
OBS = "inventories/observed/dgx-h100-pod"
NOW = ("--observed-now", "2026-12-06T09:00:00Z")


def _observed_findings(*extra: str) -> list[tuple[str, str, list[str], str]]:
    code, out, err = run_cli("verify", POD, "--observed", OBS, *NOW, "--format", "json", *extra)
    assert code == 1, err
    found = json.loads(out)["findings"]
    return sorted((f["rule"], f["severity"], f["subjects"], f["message"]) for f in found if f["rule"].startswith("OBS"))


def test_verify_observed_dgx03_findings() -> None:
    # By hand from inventories/observed/dgx-h100-pod: dgx03/nvidia-smi.xml lists GPUs 0-6 (gpu7 is
    # missing: OBS006); gpu1 trained x8 of x16 and gpu4 Gen4 of 5 at 97 % busy (OBS001; gpu3's Gen4 at
    # 0 % is an idle link's downshift); gpu6 has a row remapping pending (OBS004). dcgm-exporter.prom:
    # gpu0's last XID is 95 (OBS004; gpu3's 13 is the application's fault, rules/observed/lib/xid.dl).
    # nvlink-s.txt: gpu5 has 16 of its 18 NVLinks active (OBS002). dgx12.nvlink-s.txt names a host the
    # pod does not declare (OBS005). dgx01's file is dated 2026-11-01 08:00, 35 days and an hour before
    # --observed-now: 3,027,600 s (OBS007).
    found = _observed_findings()
    got = [(rule, severity, subjects) for rule, severity, subjects, _ in found]
    assert got == [
        ("OBS001", "warning", ["dgx03/gpu1"]),
        ("OBS001", "warning", ["dgx03/gpu4"]),
        ("OBS002", "error", ["dgx03/gpu5"]),
        ("OBS004", "error", ["dgx03/gpu0"]),
        ("OBS004", "error", ["dgx03/gpu6"]),
        ("OBS005", "warning", ["dgx12"]),
        ("OBS006", "error", ["dgx03/gpu7"]),
        ("OBS007", "warning", ["dgx01"]),
    ]
    messages = {(rule, subjects[0]): message for rule, _, subjects, message in found}
    assert "16 active NVLinks of the 18" in messages["OBS002", "dgx03/gpu5"]
    assert f"{OBS}/dgx03/nvlink-s.txt:104" in messages["OBS002", "dgx03/gpu5"]
    assert "XID 95, uncontained memory error (immediate action: reset the GPU)" in messages["OBS004", "dgx03/gpu0"]
    assert f"{OBS}/dgx03/dcgm-exporter.prom:3" in messages["OBS004", "dgx03/gpu0"]
    assert "width (lanes) is 8 where the link's own maximum gives 16" in messages["OBS001", "dgx03/gpu1"]
    assert "generation is 4 where the link's own maximum under load gives 5" in messages["OBS001", "dgx03/gpu4"]
    assert "3027600 s" in messages["OBS007", "dgx01"]


def test_verify_without_observations_judges_none() -> None:
    code, out, _ = run_cli("verify", POD, "--format", "json")
    report = json.loads(out)
    assert not [f for f in report["findings"] if f["rule"].startswith("OBS")]
    # OBS005 has no @needs (an unknown host needs no declared node); the other six need an observed node
    assert {f"OBS00{i}" for i in (1, 2, 3, 4, 6, 7)} <= set(report["summary"]["notApplicable"])
    assert code == 1  # the pod's own TOPO005 (dgx03's degraded bond) is an error either way


def test_identity_keys_are_configurable() -> None:
    # Without `index` the pod's GPUs (which declare no uuid, serial or bus id) match nothing: every
    # observed dgx03 GPU is unmatched (7 listed; the links and counters of each add no second finding
    # per GPU), nothing is judged on them, and every dgx03 GPU is missing from its listing.
    got = _observed_findings("--observed-match", "uuid,serial,pci_bus_id")
    rules = [(rule, subjects[0]) for rule, _, subjects, _ in got]
    assert rules.count(("OBS005", "dgx03")) == 7 and ("OBS005", "dgx12") in rules
    # the eight copies of one template line make one finding naming all eight
    assert [subjects for rule, _, subjects, _ in got if rule == "OBS006"] == [[f"dgx03/gpu{i}" for i in range(8)]]
    assert not [r for r, _ in rules if r in ("OBS001", "OBS002", "OBS004")]


def test_bad_observation_is_exit_2_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "dgx03").mkdir()
    text = (ROOT / OBS / "dgx03" / "nvidia-smi.xml").read_text().splitlines()
    (tmp_path / "dgx03" / "nvidia-smi.xml").write_text("\n".join(text[:40]))  # cut inside GPU 1
    (tmp_path / "dgx03" / "notes.txt").write_text("checked by hand, all fine\n")
    code, out, err = run_cli("verify", POD, "--observed", str(tmp_path))
    assert code == 2 and out == ""
    assert f"{tmp_path}/dgx03/notes.txt:1: not a format topolog reads observations from" in err
    assert f"{tmp_path}/dgx03/nvidia-smi.xml:40" in err and "not well-formed XML" in err
    assert "Traceback" not in err


def test_bad_flags_are_exit_2() -> None:
    code, _, err = run_cli("verify", POD, "--observed", OBS, "--observed-match", "uuid,slot")
    assert code == 2 and "--observed-match" in err and "expected some of uuid, serial, pci_bus_id, index" in err
    code, _, err = run_cli("verify", POD, "--observed", OBS, "--observed-now", "yesterday")
    assert code == 2 and "'yesterday' is not a time" in err
    code, _, err = run_cli("verify", POD, "--observed-now", "2026-12-06T09:00:00Z")
    assert code == 2 and "need --observed" in err
    code, _, err = run_cli("verify", POD, "--observed", OBS, "--observed-format", "dcgm-exporter", *NOW)
    # every file read as dcgm-exporter text: the XML's first line is no Prometheus sample
    assert code == 2 and "dgx03/nvidia-smi.xml:1: not a Prometheus sample line" in err


JOB = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: node8
    principal: Team::"research"
    gpus: 8
    topology: {scope: node}
"""


def test_place_never_on_hardware_observed_failed(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    args = ("place", POD, str(job), "--no-authorization", "--format", "json")
    code, out, _ = run_cli(*args)
    assert code == 0
    before = [p["domain"] for p in json.loads(out)["jobs"][0]["placements"]]
    code, out, _ = run_cli(*args, "--observed", OBS, *NOW)
    assert code == 0
    after = [p["domain"] for p in json.loads(out)["jobs"][0]["placements"]]
    # dgx03 has 8 GPUs declared, but gpu0 (XID 95), gpu6 (remapping pending) and gpu7 (missing) are out
    # of service: 5 left, short of 8. dgx01's stale file is not trusted, so dgx01 stays.
    assert sorted(before) == [f"dgx0{i}" for i in range(8)]
    assert sorted(after) == [f"dgx0{i}" for i in range(8) if i != 3]


def test_reconcile_observed_by_identity() -> None:
    code, out, _ = run_cli("reconcile", POD, "--observed", OBS, "--format", "json")
    assert code == 1
    got = sorted((d["subject"], d["what"], d["a"], d["b"]) for d in json.loads(out)["disagreements"])
    # dgx01's file lists one GPU (index 0): gpu1-7 are not in it; dgx03 lists gpu0-6; gpu5 has 16 of
    # its 18 declared NVLinks active; dgx12 is not declared. The model ("NVIDIA H100 80GB HBM3" is the
    # catalogue's H100-SXM5-80GB) and every PCIe maximum (Gen5, x16) agree with the declaration.
    assert got == sorted(
        [(f"dgx01/gpu{i}", "GPU", "declared", "not in the GPU listing") for i in range(1, 8)]
        + [
            ("dgx03/gpu5", "active scale-up links", "18", "16"),
            ("dgx03/gpu7", "GPU", "declared", "not in the GPU listing"),
            ("dgx12", "host", "not declared", "observed"),
        ]
    )


def test_reconcile_needs_b_or_observed() -> None:
    code, _, err = run_cli("reconcile", POD)
    assert code == 2 and "give B, the other description (or --observed DIR" in err
    code, _, err = run_cli("reconcile", POD, POD, "--observed", OBS)
    assert code == 2 and "give B or --observed, not both" in err


def test_what_if_places_with_the_observations_too(tmp_path: Path) -> None:
    # Draining every node but dgx03 leaves the 8-GPU job dgx03 alone, which has 8 GPUs declared: it
    # still fits without observations. With them dgx03 has 5 GPUs in service (gpu0, gpu6 and gpu7 out,
    # as above), so the drain costs the job its placement: WHATIF001.
    job = tmp_path / "job.yaml"
    job.write_text(JOB)
    drains = [a for n in (0, 1, 2, 4, 5, 6, 7) for a in ("--drain", f"dgx0{n}")]
    args = ("verify", POD, "--jobs", str(job), "--no-authorization", *drains, "--format", "json")
    _, out, _ = run_cli(*args)
    assert "WHATIF001" not in {f["rule"] for f in json.loads(out)["findings"]}
    _, out, _ = run_cli(*args, "--observed", OBS, *NOW)
    assert [f["subjects"] for f in json.loads(out)["findings"] if f["rule"] == "WHATIF001"] == [["node8"]]


def _placed(job_text: str, tmp_path: Path, *extra: str) -> list[str]:
    job = tmp_path / "job.yaml"
    job.write_text(job_text)
    code, out, err = run_cli("place", POD, str(job), "--no-authorization", "--format", "json", *extra)
    assert code == 0, err
    return sorted(p["domain"] for p in json.loads(out)["jobs"][0]["placements"])


TP5 = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: tp5
    principal: Team::"research"
    gpus: 5
    topology: {scope: nvlink_domain}
"""


def test_place_leaves_a_gpu_that_left_its_nvlink_domain_out_of_it(tmp_path: Path) -> None:
    # Each node is one NVLink domain, named by its first GPU. Without observations all 8 host 5 GPUs;
    # with them dgx03's domain holds gpu1-gpu4 in service (gpu5 left it: OBS002): 4 < 5.
    assert _placed(TP5, tmp_path) == [f"dgx0{i}/gpu0" for i in range(8)]
    assert _placed(TP5, tmp_path, "--observed", OBS, *NOW) == [f"dgx0{i}/gpu0" for i in range(8) if i != 3]


NET8 = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: net8
    principal: Team::"research"
    gpus: 8
    topology: {scope: node, min_network_bandwidth: 400 Gb/s}
"""


def _ibstat(down: int) -> str:
    """ibstat for eight single-port ConnectX-7 (MT4129) NDR adapters, mlx5_{down} Down/Polling."""
    lines: list[str] = []
    for k in range(8):
        up = k != down
        lines += [
            f"CA 'mlx5_{k}'",
            "\tCA type: MT4129",
            "\tNumber of ports: 1",
            "\tFirmware version: 28.39.1002",
            "\tHardware version: 0",
            f"\tNode GUID: 0xa088c20300f2000{k}",
            f"\tSystem image GUID: 0xa088c20300f2000{k}",
            "\tPort 1:",
            f"\t\tState: {'Active' if up else 'Down'}",
            f"\t\tPhysical state: {'LinkUp' if up else 'Polling'}",
            f"\t\tRate: {400 if up else 10}",
            f"\t\tBase lid: {10 + k if up else 0}",
            "\t\tLMC: 0",
            f"\t\tSM lid: {1 if up else 0}",
            "\t\tCapability mask: 0x2651e848",
            f"\t\tPort GUID: 0xa088c20300f2000{k}",
            "\t\tLink layer: InfiniBand",
        ]
    return "\n".join(lines) + "\n"


def test_place_needs_the_fabric_not_where_a_nic_port_is_observed_down(tmp_path: Path) -> None:
    observed = tmp_path / "observed"
    shutil.copytree(ROOT / OBS, observed)
    (observed / "dgx05").mkdir()
    (observed / "dgx05" / "ibstat.txt").write_text(_ibstat(down=2))
    # Without the ibstat file dgx03 alone is short (5 GPUs in service); with it dgx05 too (6 GPUs
    # whose fabric share is trusted: gpu2 and gpu3 use the down nic2).
    assert _placed(NET8, tmp_path, "--observed", OBS, *NOW) == [f"dgx0{i}" for i in range(8) if i != 3]
    assert _placed(NET8, tmp_path, "--observed", str(observed), *NOW) == [
        f"dgx0{i}" for i in range(8) if i not in (3, 5)
    ]
    # A job that does not need the fabric still places on dgx05: the GPUs stay in service.
    assert "dgx05" in _placed(JOB, tmp_path, "--observed", str(observed), *NOW)
