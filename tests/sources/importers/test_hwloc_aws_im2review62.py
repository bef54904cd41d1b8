"""Review of IM2 (round 16): the real AWS hwloc captures (fixtures/README.md cites aws/aws-ofi-nccl).

1. A p6e-gb200.36xlarge switch above a GB200 and two EFA devices states an uplink of 1.969231 GB/s
   (Amazon's virtual bridge 1d0f:0200; the same model states 63.015385 GB/s above the ENA/EFA-only
   switch of the same capture): read as a link, BW004 reported 189045 MB/s over 1969 MB/s (96:1).
2. An ENA and an EFA that are functions of one device already share its link: the pairing note
   must not name them as paired by bus order.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files
from verifier.sources.importers.build import Imported

P6E = "aws-p6e-gb200-lstopo-excerpt.xml"
P5EN = "aws-p5en-48xl-lstopo-excerpt.xml"


def _uplinks(imp: Imported) -> dict[str, tuple[int, str | None]]:
    """Each PCIe switch's link towards its host bridge, by the switch's bus id: (MB/s, assumed label)."""
    objs = imp.inventory.objects
    out = {}
    for oid, o in objs.items():
        if o.kind != "pcie_switch":
            continue
        up = next(lk for lk in imp.inventory.links.values() if lk.a == oid and lk.b == o.parent)
        out[o.labels["pci_busid"]] = (up.mbps, up.labels.get("assumed"))
    return out


def test_amazon_virtual_uplink_far_below_its_devices_is_not_taken(fx: Path) -> None:
    imp = import_files("hwloc", [fx / P6E], node="gb")
    # 25:00.0 and 3b:00.0 state 1.969231 GB/s = 1969 MB/s over a GB200 and two EFA at 63.015385 GB/s
    # (63015 MB/s): 10 x 1969 = 19690 < 63015, so the figure is set aside and the uplink takes the
    # widest link below, 63015, labelled assumed. 30:00.0 states 63015 over two EFA at 31508 (its two
    # ENA hang on the EFA): 10 x 63015 is not below 31508, so it stays as stated.
    assert _uplinks(imp) == {
        "0000:25:00.0": (63015, "bandwidth"),
        "0000:30:00.0": (63015, None),
        "0000:3b:00.0": (63015, "bandwidth"),
    }
    notes = [n.message for n in imp.notes if "Amazon virtual PCIe bridge" in n.message]
    assert len(notes) == 2 and all("states 1969 MB/s" in n for n in notes)
    # Downstream of 25:00.0: 3 x 63015 = 189045 over 63015 is 3:1, under BW004's 4:1 (was 96:1).


def test_non_amazon_bridge_keeps_a_narrow_uplink(fx: Path, tmp_path: Path) -> None:
    # The same tree with the bridges of a PLX/Broadcom switch (10b5:c010): a real switch that states
    # Gen4 x1 under Gen5 x16 devices has a link that trained down, which is a finding, not noise.
    text = (fx / P6E).read_text().replace("0604 [1d0f:0200] [1d0f:0200]", "0604 [10b5:c010] [10b5:c010]")
    path = tmp_path / "plx.xml"
    path.write_text(text)
    ups = _uplinks(import_files("hwloc", [path], node="gb"))
    assert ups["0000:25:00.0"] == (1969, None) and ups["0000:3b:00.0"] == (1969, None)


def test_function_pair_is_not_named_by_the_bus_order_note(fx: Path, tmp_path: Path) -> None:
    # The first EFA (55:00.0) made function 1 of the first ENA's device (47:00.1): it shares the ENA's
    # link as a function of one device. Bus order would pair ENA 47:00.0 with it; that pair has no
    # link of its own to move, so only 48<->56, 49<->57 and 4a<->58 are paired and named.
    text = (fx / P5EN).read_text().replace('pci_busid="0000:55:00.0"', 'pci_busid="0000:47:00.1"')
    path = tmp_path / "fn.xml"
    path.write_text(text)
    imp = import_files("hwloc", [path], node="p5en")
    objs = imp.inventory.objects
    by_bus = {o.labels["pci_busid"]: oid for oid, o in objs.items() if o.kind == "nic"}
    efa_fn = by_bus["0000:47:00.1"]
    assert objs[efa_fn].labels["shares_link_of"] == by_bus["0000:47:00.0"]
    assert "shares_link_of" not in objs[by_bus["0000:47:00.0"]].labels
    notes = [n.message for n in imp.notes if "AWS ENA device(s)" in n.message]
    assert len(notes) == 1 and notes[0].count(" shares ") == 3
    assert f"{by_bus['0000:47:00.0']} shares" not in notes[0]


def test_p6_b200_enas_at_the_efa_figure_pair_too(fx: Path) -> None:
    """A real p6-b200.48xlarge switch (aws-ofi-nccl @a090e25d, one host bridge): its ENA state
    63.015385 GB/s like the EFA (p5en's ENA state half that), and the switch holds no primary ENA
    apart: 2 ENA (7c, 7d) + 2 EFA (84, 85) + 2 B200 (86, 87), NVMe not imported.
    """
    imp = import_files("hwloc", [fx / "aws-p6-b200-lstopo-excerpt.xml"], node="b2")
    objs = imp.inventory.objects
    by_bus = {o.labels["pci_busid"]: oid for oid, o in objs.items() if o.kind == "nic"}
    shares = {
        bus: objs[objs[oid].labels["shares_link_of"]].labels["pci_busid"]
        for bus, oid in by_bus.items()
        if "shares_link_of" in objs[oid].labels
    }
    # Bus order: 7c <-> 84, 7d <-> 85.
    assert shares == {"0000:7c:00.0": "0000:84:00.0", "0000:7d:00.0": "0000:85:00.0"}
    switch = next(oid for oid, o in objs.items() if o.kind == "pcie_switch")
    down = sorted(lk.mbps for lk in imp.inventory.links.values() if lk.b == switch)
    # 2 EFA + 2 B200 at 63015 MB/s: 252060 MB/s over the stated 63015 MB/s uplink is 4000/1000, at
    # BW004's limit and not over it; counting the ENA too gave 6 x 63015 = 378090 (6000/1000).
    assert down == [63015] * 4
    assert _uplinks(imp) == {"0000:7a:00.0": (63015, None)}
