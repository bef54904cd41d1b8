"""Real NCCL/RCCL topology files not seen before (fixtures/README.md gives each one's source).

rccl-mi300a-4p-cxi.xml: RCCL's dump of a 4x MI300A node with HPE Slingshot `cxi` NICs whose `speed` is
200000000. Before: read as 200,000,000 Mb/s = 25,000,000 MB/s (200 Tb/s), so verify gave four BW003
("A NIC line rate of 25000000 MB/s is more than its PCIe link carries"). No port runs that fast: the
value is in another unit, so the speed is left unknown, with a note.
The other three files were read right before; their tests keep them so.
"""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

from verifier.sources.importers import import_files
from verifier.sources.inventory.model import Inventory


def _ancestors(inv: Inventory, oid: str) -> list[str]:
    chain = []
    parent = inv.objects[oid].parent
    while parent is not None:
        chain.append(parent)
        parent = inv.objects[parent].parent
    return chain


def _xgmi_pairs(inv: Inventory) -> dict[frozenset[str], int]:
    return {
        frozenset((lk.a, lk.b)): lk.attrs.get("count", 0)
        for lk in inv.links.values()
        if lk.kind == "xgmi" and inv.objects[lk.a].kind == "gpu"
    }


def test_slingshot_cxi_speed_beyond_any_port_is_left_unknown(fx: Path) -> None:
    result = import_files("nccl-xml", [fx / "rccl-mi300a-4p-cxi.xml"], node="n")
    inv = result.inventory
    # GPUs in PCI bus order 02, 42, 82, c2 under <cpu numaid> 0, 1, 2, 3 (the file lists numaid 2, 3, 0, 1).
    gpus = {o.labels["pci_busid"]: o.parent for o in inv.objects.values() if o.kind == "gpu"}
    assert gpus == {
        "0000:02:00.0": "n/cpu0",
        "0000:42:00.0": "n/cpu1",
        "0000:82:00.0": "n/cpu2",
        "0000:c2:00.0": "n/cpu3",
    }
    # Each GPU has one xGMI link (count 1) to each of the three others: 4 choose 2 = 6 pairs.
    assert _xgmi_pairs(inv) == {frozenset(p): 1 for p in combinations([f"n/gpu{k}" for k in range(4)], 2)}
    # cxi2 on bus 01, cxi3 on 41, cxi0 on 81, cxi1 on c1: nic0..nic3 in bus order, none with a speed.
    nics = {o.id: o for o in inv.objects.values() if o.kind == "nic"}
    assert {k: o.labels["name"] for k, o in nics.items()} == {
        "n/nic0": "cxi2",
        "n/nic1": "cxi3",
        "n/nic2": "cxi0",
        "n/nic3": "cxi1",
    }
    assert all("bandwidth_mbps" not in o.quantities for o in nics.values())
    notes = [str(n) for n in result.notes]
    assert sum("speed='200000000'" in n and "left unknown" in n for n in notes) == 4


def test_port_speeds_up_to_a_merged_pair_of_the_fastest_ports_are_kept(tmp_path: Path) -> None:
    # 3,200,000 Mb/s (two 1.6 Tb/s ports merged) is 3,200,000 / 8 = 400,000 MB/s; one more Mb/s is no port.
    path = tmp_path / "topo.xml"
    path.write_text(
        '<system version="1"><cpu numaid="0">'
        '<nic><net name="mlx5_0" dev="0" speed="3200000" port="1" guid="0x1070fd0300e5f118" gdr="1"/></nic>'
        '<nic><net name="mlx5_1" dev="1" speed="3200001" port="1" guid="0x1070fd0300e5f119" gdr="1"/></nic>'
        "</cpu></system>\n"
    )
    inv = import_files("nccl-xml", [path], node="n").inventory
    got = {o.labels["name"]: o.quantities.get("bandwidth_mbps") for o in inv.objects.values() if o.kind == "nic"}
    assert got == {"mlx5_0": 400_000, "mlx5_1": None}


def test_mi350x_dump_with_thor2_nics(fx: Path) -> None:
    inv = import_files("nccl-xml", [fx / "rccl-mi350x-8p-bnxt.xml"], node="n").inventory
    gpus = sorted(o.id for o in inv.objects.values() if o.kind == "gpu")
    assert gpus == [f"n/gpu{k}" for k in range(8)]
    # Every GPU lists an xGMI link (count 1) to each of the seven others: 8 choose 2 = 28 pairs.
    assert _xgmi_pairs(inv) == {frozenset(p): 1 for p in combinations(gpus, 2)}
    # bnxt_re<k> at speed 400000 Mb/s = 50,000 MB/s sits beside GPU k under one Broadcom switch (01, 11,
    # 61, 71 on NUMA 0; 81, 91, e1, f1 on NUMA 1), the GPU one AMD bridge further down.
    for k in range(8):
        nic = inv.objects[f"n/nic{k}"]
        assert (nic.labels["name"], nic.quantities["bandwidth_mbps"]) == (f"bnxt_re{k}", 50_000)
        shared = set(_ancestors(inv, nic.id)) & set(_ancestors(inv, f"n/gpu{k}"))
        assert any(inv.objects[s].kind == "pcie_switch" for s in shared)
        assert f"n/cpu{k // 4}" in shared


def test_aws_p5_topology_file(fx: Path) -> None:
    inv = import_files("nccl-xml", [fx / "aws-p5.48xl-topo.xml"], node="n").inventory
    # One CPU, eight bridges 0000:0k:00.0, each with one GPU (sm 90) and four EFA devices at
    # 100000 Mb/s = 12,500 MB/s.
    by_switch: dict[str, list[str]] = {}
    for o in inv.objects.values():
        if o.kind in ("gpu", "nic"):
            assert o.parent is not None and inv.objects[o.parent].kind == "pcie_switch"
            by_switch.setdefault(o.parent, []).append(o.kind)
            if o.kind == "nic":
                assert o.quantities["bandwidth_mbps"] == 12_500 and o.labels["name"].startswith("rdmap")
    assert len(by_switch) == 8
    assert all(sorted(kinds) == ["gpu", "nic", "nic", "nic", "nic"] for kinds in by_switch.values())


def test_azure_ndv5_topology_file(fx: Path) -> None:
    inv = import_files("nccl-xml", [fx / "azure-ndv5-topo.xml"], node="n").inventory
    # Two NUMA nodes of four virtual bridges each; under each bridge one GPU (class 0x030200) and one
    # InfiniBand NIC (class 0x020700) that states no speed (no <net> element).
    per_cpu: dict[str, list[str]] = {}
    for o in inv.objects.values():
        if o.kind in ("gpu", "nic"):
            assert o.parent is not None
            per_cpu.setdefault(inv.objects[o.parent].parent or "", []).append(o.kind)
            assert "bandwidth_mbps" not in o.quantities
    assert {k: sorted(v) for k, v in per_cpu.items()} == {
        "n/cpu0": ["gpu"] * 4 + ["nic"] * 4,
        "n/cpu1": ["gpu"] * 4 + ["nic"] * 4,
    }


def test_mi300x_dump_with_connectx7(fx: Path) -> None:
    inv = import_files("nccl-xml", [fx / "rccl-mi300x-8p-cx7.xml"], node="n").inventory
    gpus = sorted(o.id for o in inv.objects.values() if o.kind == "gpu")
    # 1002:74a1 is the MI300X and 15b3:1021 the ConnectX-7 (device_ids.yaml); 8 GPUs, all-to-all xGMI.
    assert len(gpus) == 8 and all(inv.objects[g].model == "MI300X" for g in gpus)
    assert _xgmi_pairs(inv) == {frozenset(p): 1 for p in combinations(gpus, 2)}
    # mlx5_<k> (bus 07, 10, 19, 64; 9a, aa, ba, da) at 400000 Mb/s = 50,000 MB/s hangs off the top
    # Mellanox switch of GPU k (bus 0c, 15, 1e, 69; 9f, af, bf, df), the GPU two bridges further down.
    for k in range(8):
        nic = inv.objects[f"n/nic{k}"]
        assert (nic.model, nic.labels["name"], nic.quantities["bandwidth_mbps"]) == ("ConnectX-7", f"mlx5_{k}", 50_000)
        assert nic.parent in _ancestors(inv, f"n/gpu{k}")
        assert inv.objects[nic.parent or ""].kind == "pcie_switch"
