"""Every shipped inventory loads cleanly, alone and all together, with hand-counted sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.sources.inventory import load_inventory

INVENTORIES = Path(__file__).resolve().parents[3] / "inventories"

# (objects, gpus, links), counted by hand from the files:
EXPECTED = {
    # 8 nodes x (1 node + 2 cpu + 2 dram + 8 gpu + 4 nvsw + 4 pcie + 8 nic = 29) + pod + 2 racks
    # + 8 leaves + 4 spines = 247; links 8 x (32 gpu-nvsw + 8 + 8 + 4 pcie + 1 upi = 53) + 64 + 32.
    "dgx-h100-pod.yaml": (247, 64, 520),
    # 18 trays x (1 + 2 grace + 2 lpddr + 4 gpu + 4 nic = 13) + rack + 9 switch trays x (1 + 2 chips)
    # + 4 rail leaves + 2 spines = 268; links 18 x (4 c2c + 4 pcie) + 72 x 18 NVLink + 72 NIC
    # cables (18 trays x 4 rails) + 8 leaf-spine bonds (4 leaves x 2 spines) = 1,520.
    "gb200-nvl72.yaml": (268, 72, 1520),
    # fleet + pod + spine + 4 racks + 4 leaves + 2 x 19 (A100) + 2 x 27 (H100: node, 2 CPUs, 8 GPUs,
    # 4 NVSwitches, 4 PCIe switches, 8 NICs) + 2 x 23 (MI300X: node, 2 CPUs, 8 GPUs, 8 NICs, 4 PCIe
    # switches) + 4 x 5 (RTX) = 169; links 2 x 59 + 2 x 53 (H100: 32 NVSwitch bonds, 16 devices to
    # their switches, 4 uplinks, UPI) + 2 x 49 (MI300X: 28 xGMI mesh, 16 devices to their switches,
    # 4 uplinks, the socket link) + 4 x 3 + 4 + 16 + 16 + 4 + 4 = 378.
    "mixed-fleet.yaml": (169, 56, 378),
    # node, socket, die, 2 clusters, 8 cores, 16 L1, 2 L2, SLC, iGPU, memory, eth0 = 35;
    # links: 3 clusters/GPU to the die fabric, die to memory, eth0 over PCIe = 5.
    "edge-soc.yaml": (35, 1, 5),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_shipped_inventory_loads(name: str) -> None:
    inv = load_inventory([INVENTORIES / name])
    assert (len(inv.objects), inv.count("gpu"), len(inv.links)) == EXPECTED[name]
    for obj in inv.objects.values():
        assert obj.loc.file.endswith(name) and obj.loc.line > 0


def test_all_shipped_inventories_load_together() -> None:
    inv = load_inventory(sorted(INVENTORIES.glob("*.yaml")))
    assert len(inv.objects) == sum(e[0] for e in EXPECTED.values())


def test_specific_facts_of_shipped_inventories() -> None:
    dgx = load_inventory([INVENTORIES / "dgx-h100-pod.yaml"])
    degraded = dgx.links["dgx03/gpu2<->dgx03/nvsw1"]
    assert (degraded.mbps, degraded.state) == (75_000, "degraded")
    assert dgx.links["dgx00/nic3<->leaf3"].mbps == 50_000
    assert dgx.objects["dgx07/nic5"].labels["rail"] == "5"
    assert dgx.objects["dgx00"].quantities["price_millicents_per_hour"] == 410_000
    mixed = load_inventory([INVENTORIES / "mixed-fleet.yaml"])
    assert [n for n in ("rtx-n0", "rtx-n1", "rtx-n2", "rtx-n3") if mixed.objects[n].labels.get("quarantine")] == [
        "rtx-n0",
        "rtx-n1",
    ]
    assert "quarantine" not in mixed.objects["euw-rtx"].labels
    assert mixed.objects["rtx-n2"].labels["tenant"] == "robotics"
    assert mixed.objects["rtx-n2/gpu1"].state == "down"
    assert mixed.software["mi300x-n0"]["rocm"] == "6.1.2"
    assert mixed.models["NVSwitch-Gen2"].loc.file.endswith("mixed-fleet.yaml")
    edge = load_inventory([INVENTORIES / "edge-soc.yaml"])
    assert edge.objects["edge-m2-01/p0-l1d"].quantities["size_kb"] == 131  # 128 KiB
    assert ("edge-m2-01/lpddr5", "edge-m2-01/igpu") in edge.serves


def test_scaleup_checks_on_shipped_inventories() -> None:
    """SCALE001..SCALE005 find exactly the deliberate scale-up faults (inventories/README.md).

    dgx-h100-pod: dgx03's GPU 2 - NVSwitch 1 bond runs on 3 of its 4 NVLinks (`count: 3,
    state: degraded`, 3 x 25 GB/s = 75000 MB/s); the fabric manager's default takes GPU 2 out
    of NVLink peer-to-peer, so no SCALE check reports it: TOPO005's error does, and SCALE003
    leaves a GPU with a failed link alone. Every other H100 has 5+4+4+5 = 18 links x 25 GB/s =
    450 GB/s, as the catalogue. gb200-nvl72: 18 x 50 GB/s = 900 GB/s per GPU, as the catalogue;
    its tray-to-switch-tray links cross nodes inside rack nvl72-r0, which promises one domain.
    mixed-fleet: A100 6 x 2 x 25 = 300 GB/s, H100 450 GB/s, MI300X 7 x 64 = 448 GB/s, as the
    catalogue; the RTX 4090s have no scale-up. edge-soc has no scale-up link.
    """
    from verifier.session.verify_run import verify

    got: dict[str, list[str]] = {}
    for name in sorted(EXPECTED):
        report = verify([INVENTORIES / name])
        got[name] = sorted(f"{f.rule} {', '.join(f.subjects)}" for f in report.findings if f.rule.startswith("SCALE"))
    assert got == {
        "dgx-h100-pod.yaml": [],
        "edge-soc.yaml": [],
        "gb200-nvl72.yaml": [],
        "mixed-fleet.yaml": [],
    }
