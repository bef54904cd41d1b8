"""Real tool outputs (fixtures/README.md) verified with `topolog verify --from`: the findings an expert derives by hand.

Each case lists every finding (rule and subjects, node prefix dropped), derived from the file
before the importer was run. Notation: "nearest NIC" is the best class of the GPU's row/path
(PIX < PXB < PHB < NODE < SYS, then the wider path); BW002 reports a nearest NIC at NODE or SYS,
TOPO001 a GPU with no NIC at all, PCIE001 a stated width/generation below what the GPU model
and the other end give.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli import main as cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"

pytestmark = pytest.mark.usefixtures("in_repo_root")


def _bw002(pairs: list[tuple[int, int]]) -> set[tuple[str, ...]]:
    return {("BW002", f"gpu{g}", f"nic{n}") for g, n in pairs}


def _topo001(n: int) -> set[tuple[str, ...]]:
    return {("TOPO001", f"gpu{g}") for g in range(n)}


CASES: list[tuple[str, str, set[tuple[str, ...]]]] = [
    # nvidia-smi. Workstation: GPU rows read NODE NODE for NIC0/NIC1 (NIC0 first on a tie) -> BW002 x2.
    ("nvidia-smi", "workstation-2gpu-2nic-node.txt", _bw002([(0, 0), (1, 0)])),
    # GB200: every GPU row reads SYS for all 8 NICs -> BW002 x4 (NIC0 first on a tie).
    ("nvidia-smi", "gb200-4gpu-numa-lists.txt", _bw002([(g, 0) for g in range(4)])),
    # H200: GPU k is PIX to exactly one NIC (NIC0, NIC3, NIC4 ... NIC9): nothing remote.
    ("nvidia-smi", "h200-8gpu-10nic-empty-affinity.txt", set()),
    # H100 and RTX 5090: no NIC column at all. nvidia-smi's matrix lists RDMA devices only (mlx5_N), so
    # a host with plain Ethernet (a workstation's onboard port) or without its RDMA driver loaded prints
    # none: the NICs are unknown, not absent (as rocm-smi's), and no GPU is said to reach none.
    ("nvidia-smi", "h100-8gpu-no-nic.txt", set()),
    ("nvidia-smi", "rtx5090-2gpu-tabs.txt", set()),
    # H100 (ThunderKittens issue 167): no NIC column (unknown, as above), and nothing about NVLink: the
    # NV18 cells are 18 links per GPU into a switch fabric (read as a mesh they were 126 per GPU).
    ("nvidia-smi", "h100-8gpu-thunderkittens-issue167.txt", set()),
    # amd-smi, 8x MI355X: weights all 0, XGMI at 1 hop everywhere -> a full xGMI mesh; amd-smi lists no
    # NICs (their absence unknown, so no TOPO001) and states no model: nothing to report.
    ("amd-smi", "amd-smi-mi355x-8gpu-zero-weights.txt", set()),
    # NCCL. p4d / p4de: 2 A100 SXM4 (10de:20b0 40GB / 10de:20b2 80GB, PCIe Gen4 devices) and one
    # EFA per switch: PIX, nothing remote. Every GPU link says 8 GT/s x16 = Gen3, below the A100's
    # Gen4, but so does each switch's uplink (8 GT/s x16, on Cascade Lake CPUs: family 6 model 85)
    # and nothing below a switch states more: the switch gives Gen3, what both ends train at.
    ("nccl-xml", "aws-p4d-24xl-topo.xml", set()),
    ("nccl-xml", "aws-p4de-24xl-topo.xml", set()),
    # NDv2: GPUs 0-3 and the only IB NIC on cpu0 (PHB), GPUs 4-7 on cpu1 -> SYS: BW002 x4.
    ("nccl-xml", "azure-ndv2-topo.xml", _bw002([(4, 0), (5, 0), (6, 0), (7, 0)])),
    # NDv4: per NUMA node one switch with 2 GPUs and 2 IB NICs: PIX everywhere, nothing.
    ("nccl-xml", "azure-ndv4-topo.xml", set()),
    # NCv4: one GPU per NUMA node (cpu0..cpu3), the only NIC (eth0) on cpu0: GPU1-3 SYS -> BW002 x3.
    # Links hidden (link_width="0"): nothing to judge about PCIe.
    ("nccl-xml", "azure-ncv4-topo.xml", _bw002([(1, 0), (2, 0), (3, 0)])),
    # IBM cn-h100: each GPU with a NIC below one (emulated) bridge: PIX; widths hidden: nothing.
    ("nccl-xml", "ibm-cn-h100-topo.xml", set()),
    # hwloc. 24em64t: Tesla 06:00.0 on package 0 with both NICs (I350-like 04:00.x, IB 05:00.0);
    # Teslas 11:00.0 and 14:00.0 on package 1 -> SYS; nearest the IB NIC (2 GB/s vs 0.2) -> BW002 x2.
    ("hwloc", "24em64t-2n6c2t-pci.xml", _bw002([(1, 2), (2, 2)])),
    # 32em64t: Tesla 03:00.0 on package 0; every NIC (ConnectX-4, I350 x2) below package 1 -> BW002 x1.
    ("hwloc", "32em64t-2n8c2t-pci-wholeio.xml", _bw002([(0, 0)])),
    # DGX-2 and POWER8: no network device in the file -> TOPO001 for each of 16 and 4 GPUs.
    ("hwloc", "nvidiaDGX2.xml", _topo001(16)),
    ("hwloc", "power8gpudistances.xml", _topo001(4)),
    # manyVFs: NICs only (VIC functions share their device's link): nothing to report.
    ("hwloc", "16intel64-manyVFs.xml", set()),
    ("hwloc", "cxlmem+dax.v3.xml", set()),
    ("hwloc", "16amd64-4distances.xml", set()),
]


@pytest.mark.parametrize(("kind", "name", "expected"), CASES, ids=[c[1] for c in CASES])
def test_findings_an_expert_expects(kind: str, name: str, expected: set[tuple[str, ...]]) -> None:
    result = CliRunner().invoke(cli.main, ["verify", "--from", kind, str(FIXTURES / name), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    node = Path(name).stem
    got = {
        (f["rule"], *(s.replace(f"{node}/", "", 1).replace(node, "{node}") for s in f["subjects"]))
        for f in json.loads(result.stdout)["findings"]
    }
    assert got == expected
