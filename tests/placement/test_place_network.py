"""`min_network_bandwidth` is judged on each GPU's share of the fabric, not on a whole NIC.

On the shipped mixed fleet (verifier/facts/nic_share.py, tests/facts/test_nic_share.py): an HGX A100
GPU gets 12500 / 4 = 3125 MB/s (two 100 GbE NICs, one per socket, each serving its socket's 4 GPUs),
an HGX H100 or MI300X GPU 50000, an RTX workstation GPU 7876 / 2 = 3938 (its NIC's Gen4 x4 slot).
"""

from __future__ import annotations

from pathlib import Path

from verifier.session.place_run import place

MIXED = Path(__file__).resolve().parents[2] / "inventories" / "mixed-fleet.yaml"

JOB = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: net-30g, principal: anyone, gpus: 2, topology: {scope: node, min_network_bandwidth: 30 Gb/s}}
"""


def test_a100_gpus_share_their_nic_and_fall_short(tmp_path: Path) -> None:
    jobs = tmp_path / "net.yaml"
    jobs.write_text(JOB, encoding="utf-8")
    (job,) = place([MIXED], [jobs], why_not=True, authorize=False).jobs
    # 30 Gb/s = 3750 MB/s per GPU: the A100's 3125 falls short (a whole 100 GbE NIC, 12500, would
    # not); the RTX GPUs' 3938 and the H100's and MI300X's 50000 meet it. rtx-n2 has gpu1 down.
    assert [p.domain for p in job.placements] == [
        "h100-n0",
        "h100-n1",
        "mi300x-n0",
        "mi300x-n1",
        "rtx-n0",
        "rtx-n1",
        "rtx-n3",
    ]
    assert [(w.domain, w.requirement, w.have, w.need) for w in job.why_not] == [
        ("a100-n0", "min_fabric_mbps", 0, 2),
        ("a100-n1", "min_fabric_mbps", 0, 2),
        ("rtx-n2", "healthy", 1, 2),
    ]
    assert job.why_not[0].message == "a100-n0: 0 GPUs reach the fabric at 3.75 GB/s or more, job needs 2"
