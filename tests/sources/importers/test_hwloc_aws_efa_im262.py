"""A real hwloc capture of an AWS p5en.48xlarge (aws/aws-ofi-nccl @a090e25d, trimmed to one host bridge:
see fixtures/README.md). AWS documents an "efa" network interface as giving both an EFA device and an ENA
device, so the 4 ENA (1d0f:ec20) beside the 4 EFA (1d0f:efa2) below one switch are 4 network cards, not 8.
Before: 8 NICs each on its own switch port, and BW004 read 378094 MB/s over a 63015 MB/s uplink.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files
from verifier.sources.importers.build import Imported

XML = "aws-p5en-48xl-lstopo-excerpt.xml"


def _inventory(fx: Path) -> Imported:
    imp = import_files("hwloc", [fx / XML], node="p5en")
    return imp


def test_p5en_devices_as_hwloc_lists_them(fx: Path) -> None:
    imp = _inventory(fx)
    objs = imp.inventory.objects
    gpus = sorted(o.labels["pci_busid"] for o in objs.values() if o.kind == "gpu")
    # Two PCIDev of class 0302 [10de:2335] ("GH100 [H200 SXM 141GB]") at 59:00.0 and 5a:00.0.
    assert gpus == ["0000:59:00.0", "0000:5a:00.0"]
    assert {o.model for o in objs.values() if o.kind == "gpu"} == {"H200-SXM-141GB"}
    # Class 0200: ENA at buses 47-4a, EFA at 55-58; only the EFA have an OpenFabrics OS device (rdmapNs0).
    nics = {o.labels["pci_busid"]: o for o in objs.values() if o.kind == "nic"}
    assert sorted(nics) == [f"0000:{b}:00.0" for b in ("47", "48", "49", "4a", "55", "56", "57", "58")]
    assert sorted(o.labels.get("rdma_devices", "") for o in nics.values() if "rdma_devices" in o.labels) == [
        "rdmap85s0",
        "rdmap86s0",
        "rdmap87s0",
        "rdmap88s0",
    ]
    # Root port 44:00.0 (bus 44 = the host bridge's first bus), then one switch: upstream port 45:00.0.
    assert [o.labels["pci_busid"] for o in objs.values() if o.kind == "pcie_switch"] == ["0000:45:00.0"]


def test_each_ena_shares_an_efa_link(fx: Path) -> None:
    imp = _inventory(fx)
    objs = imp.inventory.objects
    by_bus = {o.labels["pci_busid"]: oid for oid, o in objs.items() if o.kind == "nic"}
    # Paired in bus order: 47<->55, 48<->56, 49<->57, 4a<->58.
    for ena, efa in (("47", "55"), ("48", "56"), ("49", "57"), ("4a", "58")):
        ena_id, efa_id = by_bus[f"0000:{ena}:00.0"], by_bus[f"0000:{efa}:00.0"]
        assert objs[ena_id].labels["shares_link_of"] == efa_id
        links = [lk for lk in imp.inventory.links.values() if ena_id in (lk.a, lk.b)]
        assert [(lk.b, lk.mbps, lk.labels.get("inferred")) for lk in links] == [(efa_id, 31508, "true")]
    switch = next(oid for oid, o in objs.items() if o.kind == "pcie_switch")
    down = sorted(lk.mbps for lk in imp.inventory.links.values() if lk.b == switch)
    # On the switch: 4 EFA at 31.507692 GB/s and 2 GPUs at 63.015385 GB/s (31508 and 63015 MB/s);
    # 4 x 31508 + 2 x 63015 = 252062 MB/s, 4.0 times the 63015 MB/s uplink, not 6.0.
    assert down == [31508] * 4 + [63015] * 2
    assert any("4 AWS ENA device(s)" in n.message for n in imp.notes)


def test_ena_alone_keeps_its_own_link(fx: Path, tmp_path: Path) -> None:
    # Without the EFA devices (efa2 renamed to a class 0108 storage id), nothing pairs the ENA.
    text = (
        (fx / XML)
        .read_text()
        .replace('pci_type="0200 [1d0f:efa2] [1d0f:efa2] 00"', 'pci_type="0108 [1d0f:cd01] [1d0f:0000] 00"')
    )
    path = tmp_path / "no-efa.xml"
    path.write_text(text)
    imp = import_files("hwloc", [path], node="p5en")
    nics = [o for o in imp.inventory.objects.values() if o.kind == "nic"]
    assert len(nics) == 4 and not any("shares_link_of" in o.labels for o in nics)


def test_gb200_only_the_switch_with_enas_pairs(fx: Path) -> None:
    """p6e-gb200 (aws-ofi-nccl @fc901d93, three host bridges kept): switches 25:00.0 and 3b:00.0 hold
    2 EFA and one GB200 each (no ENA: nothing paired); switch 30:00.0 holds ENA 32, 33 and EFA 36, 37.
    """
    imp = import_files("hwloc", [fx / "aws-p6e-gb200-lstopo-excerpt.xml"], node="gb")
    objs = imp.inventory.objects
    gpus = {o.labels["pci_busid"]: o.model for o in objs.values() if o.kind == "gpu"}
    assert gpus == {"0000:29:00.0": "B200-GB200-186GB", "0000:3f:00.0": "B200-GB200-186GB"}
    by_bus = {o.labels["pci_busid"]: oid for oid, o in objs.items() if o.kind == "nic"}
    assert len(by_bus) == 8  # 6 EFA (27, 28, 36, 37, 3d, 3e) and 2 ENA (32, 33)
    shares = {
        objs[oid].labels["pci_busid"]: objs[objs[oid].labels["shares_link_of"]].labels["pci_busid"]
        for oid in by_bus.values()
        if "shares_link_of" in objs[oid].labels
    }
    assert shares == {"0000:32:00.0": "0000:36:00.0", "0000:33:00.0": "0000:37:00.0"}
