"""Correct inventories of machines people run verify with true findings only (R-FP).

Each file in realistic/ describes one kind of machine or fleet as its vendor documents it (the
file's header cites the source). Built as documented, an expert signs no finding on them but the
ones listed here, each derived by hand from the file. Placement is checked where the layout
decides what a job gets (NVLink pairs, a fat tree spanning scalable units).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main

HERE = Path(__file__).resolve().parent / "realistic"

Key = tuple[str, tuple[str, ...]]

# Findings at warning or above per file. An empty set: nothing an expert would sign.
EXPECTED: dict[str, set[Key]] = {
    # HGX B200, 2 NVLink 5 switch chips (9 + 9 NVLinks per GPU), 3-tier NDR fat tree across 2 units.
    "hgx-b200-ib-fattree.yaml": set(),
    # HGX H200 on 8 RoCE rails, and a BlueField-3 storage network of its own leaf and spine
    # (`network: storage`): two networks by design, not a fabric island (LINK011 said so before).
    "hgx-h200-roce.yaml": set(),
    # GB200 NVL72 rack (as the shipped one) with its trays' BlueField-3 DPUs on an Ethernet storage
    # network of its own beside the InfiniBand compute fabric: another fabric kind, never an island
    # of the compute fabric (LINK011 said so before).
    "gb200-nvl72-storage.yaml": set(),
    # Gaudi 3: the accelerators' own RoCE ports form the all-to-all and reach the scale-out leaves
    # (no NIC needed), and a frontend switch of its own (`network: frontend`) has no spine to lack
    # an uplink to (LINK004 said it had before).
    "gaudi3-hls.yaml": set(),
    # DGX A100, 6 NVSwitches, fabric manager modes 1 (legal on A100), HDR rails.
    "dgx-a100.yaml": set(),
    # MI300X platform: a full xGMI mesh of 28 links, 8 x 400GbE rails.
    "mi300x-platform.yaml": set(),
    # Cray EX235a (MI250X, 2 GCDs per package), NICs on the GPUs, a dragonfly group without spines.
    "mi250x-cray-ex.yaml": set(),
    # GH200: one Hopper reads its Grace's 512 GB/s LPDDR5X over 450 GB/s of NVLink-C2C, the port's
    # rated figure: the superchip's design (MEM002 warned on every superchip before).
    "gh200-cluster.yaml": set(),
    # L40S PCIe: no NVLink, GPUs 0-3 and NICs 0-1 under switch 0, 4-7 and 2-3 under switch 1: PIX.
    "l40s-pcie.yaml": set(),
    # H100 NVL: two bridged pairs per server, a NIC per socket next to each pair's root ports.
    "h100-nvl-pairs.yaml": set(),
    # Two-socket EPYC CPU nodes, no GPU.
    "cpu-2s-epyc.yaml": set(),
    # Jetson AGX Orin: unified LPDDR5 (204.8 GB/s) over the SoC fabric at the same figure.
    "jetson-agx-orin.yaml": set(),
    # R-FP59. DGX H200 scalable unit: rail-optimised NDR compute fabric, an InfiniBand storage
    # fabric of its own (`network: storage`) on both NDR200 ports of the first BlueField-3 B3220,
    # an Ethernet in-band network (`network: inband`) on the second.
    "dgx-h200-superpod-su.yaml": set(),
    # MI325X platform, xGMI full mesh, a Pollara 400 NIC per GPU under its PCIe switch, 800G rail
    # switch ports split to 400G hosts.
    "mi325x-pollara.yaml": set(),
    # MI355X: the same platform, its Infinity Fabric links written by bandwidth (76.8 GB/s per
    # direction, no generation), 7 x 76.8 = 537.6 GB/s as the catalogue's model.
    "mi355x-pollara.yaml": set(),
    # 8 H100 PCIe per server as 4 bridged pairs, 4 GPUs and one NIC under each PCIe switch.
    "h100-pcie-shared-nic.yaml": {
        # BW004, true: each switch has 4 GPUs and a NIC, 5 x16 Gen5 ports (5 x 63,008 = 315,040
        # MB/s) downstream over one x16 Gen5 uplink (63,008 MB/s): 5:1, past the 4:1 limit. GPU
        # to host traffic of the 4 GPUs and the NIC shares one x16; the file's one template line
        # per switch: one finding per switch name, naming the 4 servers' switches.
        ("BW004", tuple(f"h100p-{n:02d}/pcie0" for n in range(4))),
        ("BW004", tuple(f"h100p-{n:02d}/pcie1" for n in range(4))),
    },
    # One workstation: 4 A100 PCIe on the CPU's root ports, bridged as 2 pairs, one 2x100GbE NIC.
    "a100-pcie-workstation.yaml": set(),
    # L4 servers with a NIC on each socket beside its 2 GPUs (no BW002, unlike the L4 boxes of
    # mixed-vendor-fleet), MLAG leaf pairs at 100GbE and 400GbE uplinks on Spectrum-3 switches.
    "l4-inference-ethernet.yaml": set(),
    # GH200 NVL2: 2 superchips, GPUs joined by their 18 NVLinks, no NVSwitch, C2C at 450 GB/s.
    "gh200-nvl2.yaml": set(),
    # GH200 NVL32: 32 GPUs, one NVLink 4 link to each of 18 NVSwitch chips in 9 switch trays.
    "gh200-nvl32.yaml": set(),
    # Perlmutter-like Cray EX GPU nodes: 4 A100 all-to-all by NVLink 3 (4 links a pair), 4
    # Slingshot NICs on the CPU, two dragonfly groups of Rosetta switches joined by global links.
    "slingshot-a100-dragonfly.yaml": set(),
    # HGX H100 and MI300X node pools on one shared rail-optimised RoCE fabric.
    "k8s-mixed-shared-fabric.yaml": set(),
    # R-FP60. AWS p5.48xlarge as AWS's NCCL topology file lays it out: a PCIe switch per GPU with
    # 4 EFA devices (Gen4 x8), x16 Gen4 up: 63,008 + 4 x 15,754 = 126,024 MB/s over 31,508, 3.9997:1,
    # inside the 4:1 limit.
    "aws-p5-efa.yaml": set(),
    # AWS p4d.24xlarge: 2 GPUs and one EFA under each switch, every link Gen3 x16 as the VM sees it
    # (3:1), HGX A100 board (6 NVSwitch Gen2, 2 NVLinks a GPU to each).
    "aws-p4d-efa.yaml": set(),
    # Azure ND H100 v5 and ND MI300X v5: one GPU and its own NDR NIC under each of 8 PCIe bridges
    # (Azure's ndv5 topology file), 4 a socket; NVSwitch board / Infinity Fabric full mesh.
    "azure-nd-h100-v5.yaml": set(),
    "azure-nd-mi300x-v5.yaml": set(),
    # Google Cloud A3 Ultra: HGX H200, a CX-7 per GPU, each rail a one-tier network of its own.
    "gcp-a3-ultra.yaml": set(),
    # HGX B300: each ConnectX-8's own PCIe switch holds its GPU and its NIC at Gen6 x16 over a
    # Gen5 x16 host uplink: 2 x 120,992 (16 x 7,562, FLIT mode) / 63,008 = 3.841, within the 4:1
    # limit (BW004 warned on every switch before R-FP60, at the old 7,877 per lane).
    "hgx-b300-cx8.yaml": set(),
    # El Capitan-like EX255a nodes: 4 MI300A APUs, CPU and GPU of each sharing its 128 GB HBM3,
    # every two APUs joined by 2 xGMI links, a Slingshot NIC on each APU.
    "mi300a-el-capitan.yaml": set(),
    # Grace CPU Superchip nodes: two Grace CPUs joined by NVLink-C2C at 450 GB/s, no GPU.
    "grace-cpu-superchip.yaml": set(),
    # VDI servers: 2 A16 boards (4 GPUs behind each board's switch, 4:1 over its Gen4 x16), a
    # dual-port 100GbE NIC per socket on an MLAG leaf pair.
    "a16-vdi.yaml": set(),
    # H200 NVL cards in two 4-way NVLink bridge groups (6 links a pair, 18 a GPU), a 400G NIC under
    # each PCIe switch beside its 2 GPUs.
    "h200-nvl-4way.yaml": set(),
    "mixed-vendor-fleet.yaml": {
        # BW002: an L4 box has its only NIC on cpu0's root port and GPUs 2 and 3 on cpu1's: their
        # nearest NIC is across the UPI (SYS). True of every box, one template line: one finding
        # naming the 8 GPUs and the 4 NICs. (The H100 and MI300X nodes have a NIC under each GPU's
        # switch: PIX, nothing.)
        (
            "BW002",
            (
                *(f"l4-{n}/gpu{g}" for n in range(4) for g in (2, 3)),
                *(f"l4-{n}/nic0" for n in range(4)),
            ),
        ),
    },
}


def test_every_realistic_inventory_is_listed() -> None:
    assert sorted(p.name for p in HERE.glob("*.yaml")) == sorted(EXPECTED)


def _verify(name: str) -> set[Key]:
    result = CliRunner().invoke(main, ["verify", str(HERE / name), "--format", "json", "--fail-on", "error"])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    return {(f["rule"], tuple(f["subjects"])) for f in report["findings"] if f["severity"] in ("warning", "error")}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_correct_inventory_gets_true_findings_only(name: str) -> None:
    assert _verify(name) == EXPECTED[name]


def _placements(name: str, jobs: str, tmp_path: Path) -> dict[str, list[list[str]]]:
    path = tmp_path / "jobs.yaml"
    path.write_text(jobs, encoding="utf-8")
    result = CliRunner().invoke(main, ["place", str(HERE / name), str(path), "--no-authorization", "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    return {j["job"]: [p["gpus"] for p in j["placements"]] for j in report["jobs"]}


def test_h100_nvl_pairs_are_the_nvlink_domains(tmp_path: Path) -> None:
    # 4 servers x 2 bridged pairs: a 2-GPU NVLink job has 8 places, each a pair (gpu0-1 or gpu2-3);
    # a 4-GPU NVLink job has none (no bridge joins the pairs).
    jobs = (
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        '  - {name: pair, principal: Team::"ops", gpus: 2, topology: {scope: nvlink_domain}}\n'
        '  - {name: four, principal: Team::"ops", gpus: 4, topology: {scope: nvlink_domain}}\n'
    )
    got = _placements("h100-nvl-pairs.yaml", jobs, tmp_path)
    pairs = sorted(sorted(p) for p in got["pair"])
    assert pairs == sorted([f"nvl-{n:02d}/gpu{a}", f"nvl-{n:02d}/gpu{a + 1}"] for n in range(4) for a in (0, 2))
    assert got["four"] == []


def test_a_job_spans_the_scalable_units_of_a_fat_tree(tmp_path: Path) -> None:
    # 4 DGX B200 x 8 GPUs = 32, two per scalable unit, the units joined through the core tier: a
    # 32-GPU job takes all of them in one placement.
    jobs = 'apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: dp32, principal: Team::"ops", gpus: 32}\n'
    got = _placements("hgx-b200-ib-fattree.yaml", jobs, tmp_path)
    assert [sorted(p) for p in got["dp32"]] == [sorted(f"b200-{n:02d}/gpu{g}" for n in range(4) for g in range(8))]


def test_an_nvlink_switch_rack_is_one_domain(tmp_path: Path) -> None:
    # GH200 NVL32: every GPU of the 16 trays has a link to each of the 18 chips, so a 32-GPU
    # NVLink job takes all 32 GPUs (16 trays x 2) in one placement; in the NVL2 servers, whose two
    # GPUs are joined only to each other, a 2-GPU NVLink job has one place per server (4) and a
    # 4-GPU one none.
    jobs = (
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        '  - {name: nv2, principal: Team::"ops", gpus: 2, topology: {scope: nvlink_domain}}\n'
        '  - {name: nv4, principal: Team::"ops", gpus: 4, topology: {scope: nvlink_domain}}\n'
        '  - {name: nv32, principal: Team::"ops", gpus: 32, topology: {scope: nvlink_domain}}\n'
    )
    rack = _placements("gh200-nvl32.yaml", jobs, tmp_path)
    assert [sorted(p) for p in rack["nv32"]] == [sorted(f"tray{t:02d}/gpu{g}" for t in range(16) for g in (0, 1))]
    pairs = _placements("gh200-nvl2.yaml", jobs, tmp_path)
    assert sorted(sorted(p) for p in pairs["nv2"]) == [[f"nvl2-{n:02d}/gpu0", f"nvl2-{n:02d}/gpu1"] for n in range(4)]
    assert pairs["nv4"] == []


def test_mi300a_apus_of_a_node_are_one_mesh(tmp_path: Path) -> None:
    # 8 EX255a nodes x 4 APUs, every two APUs of a node joined by Infinity Fabric: a 4-GPU mesh job
    # has 8 places, each the 4 GPUs of one node; a 5-GPU one has none (no fabric joins nodes).
    jobs = (
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        '  - {name: four, principal: Team::"ops", gpus: 4, topology: {scope: nvlink_domain}}\n'
        '  - {name: five, principal: Team::"ops", gpus: 5, topology: {scope: nvlink_domain}}\n'
    )
    got = _placements("mi300a-el-capitan.yaml", jobs, tmp_path)
    assert sorted(sorted(p) for p in got["four"]) == sorted(
        sorted(f"nid{n:03d}/gpu{g}" for g in range(4)) for n in range(8)
    )
    assert got["five"] == []
