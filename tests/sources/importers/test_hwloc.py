"""hwloc XML: the real hwloc test files, and lstopo-no-graphics run here (real and synthetic)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files


def test_dgx2_gpus_nvswitches_and_links(fx: Path) -> None:
    inv = import_files("hwloc", [fx / "nvidiaDGX2.xml"], node="dgx2").inventory
    assert sum(1 for _ in inv.of_kind("gpu")) == 16  # 16 V100 PCIDevs (class 0302, nvml0..15)
    assert sum(1 for _ in inv.of_kind("nvswitch")) == 12  # 12 PCIDevs with subtype NVSwitch
    nvs = [lk for lk in inv.links.values() if lk.kind == "nvswitch" and inv.objects[lk.a].kind == "gpu"]
    # Each V100 has 6 NVLinks, one to each NVSwitch of its board: 16 x 6 = 96 GPU-switch links at 25 GB/s.
    assert len(nvs) == 96 and {lk.mbps for lk in nvs} == {25000}
    gpu0 = inv.objects["dgx2/gpu0"]
    assert gpu0.labels["pci_busid"] == "0000:34:00.0" and gpu0.labels["os_devices"] == "nvml0"
    assert gpu0.labels["hwloc_GPUModel"] == "Tesla V100-SXM3-32GB-H" and gpu0.loc.line == 42
    # gpu0 (34:00.0) sits below downstream port 33:00.0 of the switch whose upstream port is 32:00.0.
    up = inv.objects["dgx2/gpu0"].parent or ""
    assert inv.objects[up].labels["pci_busid"] == "0000:32:00.0"
    assert inv.links[f"dgx2/gpu0<->{up}"].mbps == 15754  # pci_link_speed 15.753846 GB/s
    l3 = inv.objects["dgx2/l3cache0"]
    assert (l3.quantities["size_kb"], l3.quantities["level"]) == (34603, 3)  # cache_size 34603008 B
    assert inv.objects["dgx2/numa0"].quantities["size_mb"] == 810234  # local_memory 810234351616 B


def test_cpu_kinds(fx: Path) -> None:
    inv = import_files("hwloc", [fx / "fakecpukinds.xml"], node="m").inventory
    # Core 0 holds PUs 0 (MySmallCore) and 2 (YouBigcore); core 1 PUs 1 (small) and 3 (IntelCore).
    assert inv.objects["m/core0"].labels["cpu_kind"] == "MySmallCore,YouBigcore"
    assert inv.objects["m/core1"].labels["cpu_kind"] == "IntelCore,MySmallCore"
    assert inv.objects["m/core0"].quantities["threads"] == 2


def test_heterogeneous_memory_and_memattrs(fx: Path) -> None:
    inv = import_files("hwloc", [fx / "64intel64-heteromem.xml"], node="m").inventory
    mems = list(inv.of_kind("memory"))
    assert sorted({m.labels.get("memory_type", "") for m in mems}) == ["DRAM", "HBM"] and len(mems) == 8
    # Bandwidth memattrs with local initiators: 22500 MB/s for 4 nodes, 90000 MB/s for 4.
    assert sorted(m.quantities.get("bandwidth_mbps", 0) for m in mems) == [22500] * 4 + [90000] * 4


def test_memory_side_caches(fx: Path) -> None:
    inv = import_files("hwloc", [fx / "memorysidecaches.xml"], node="m").inventory
    side = [c for c in inv.of_kind("cache") if c.labels.get("memory_side") == "true"]
    assert len(side) == 4  # four MemCache objects, each above one of the four NUMA nodes
    assert {inv.objects[m.parent or ""].labels.get("memory_side") for m in inv.of_kind("memory")} == {"true"}


def test_unmodelled_memattrs_are_noted(fx: Path) -> None:
    result = import_files("hwloc", [fx / "8intel64-4n2t-memattrs.xml"])
    assert any("'foobar'" in n.message for n in result.notes)
    assert sum(1 for _ in result.inventory.of_kind("memory")) == 4


def test_hwloc1_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "old.xml"
    p.write_text('<?xml version="1.0"?>\n<topology>\n  <object type="Machine"/>\n</topology>\n')
    with pytest.raises(TopologError, match="hwloc XML version None") as err:
        import_files("hwloc", [p])
    assert err.value.diagnostics[0].location.line == 2


def _lstopo() -> str:
    # CI installs hwloc (.ci/run); a missing tool must fail here, not skip.
    tool = shutil.which("lstopo-no-graphics")
    assert tool is not None, "lstopo-no-graphics not found: install the Debian package hwloc"
    return tool


def test_lstopo_synthetic(tmp_path: Path) -> None:
    out = subprocess.run(
        [_lstopo(), "--input", "pack:2 numa:2 l3:1 core:4 pu:2", "--of", "xml"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    p = tmp_path / "syn.xml"
    p.write_text(out)
    inv = import_files("hwloc", [p], node="syn").inventory
    assert sum(1 for _ in inv.of_kind("cpu")) == 2
    assert sum(1 for _ in inv.of_kind("memory")) == 4
    assert sum(1 for _ in inv.of_kind("cache")) == 4  # one L3 per NUMA node
    cores = list(inv.of_kind("core"))
    assert len(cores) == 16 and {c.quantities["threads"] for c in cores} == {2}


def test_lstopo_this_machine(tmp_path: Path) -> None:
    p = tmp_path / "self.xml"
    subprocess.run([_lstopo(), "--of", "xml", str(p)], check=True)
    expected_pus = len(
        subprocess.run([_lstopo(), "--only", "pu"], check=True, capture_output=True, text=True).stdout.splitlines()
    )
    inv = import_files("hwloc", [p], node="self").inventory
    assert sum(o.quantities["threads"] for o in inv.of_kind("core")) == expected_pus
    assert sum(1 for _ in inv.of_kind("node")) == 1


def test_a_pcie_switch_is_one_switch_not_one_per_port(fx: Path) -> None:
    # DGX-2, by hand from the bridges (depth 1 root ports, then upstream port / downstream ports):
    # host bridge 2b: switches 2c, 32, 37; 4e: 4f, 55, 5a, 5f (NVSwitches); ae: af, b5, ba, bf;
    # d7: d8, de, e3 -> 14 switches (56 bridges below the host bridges).
    inv = import_files("hwloc", [fx / "nvidiaDGX2.xml"], node="d").inventory
    switches = sorted(o.labels["pci_busid"][5:7] for o in inv.of_kind("pcie_switch"))
    assert switches == ["2c", "32", "37", "4f", "55", "5a", "5f", "af", "b5", "ba", "bf", "d8", "de", "e3"]
    # Both GPUs below 32 (34:00.0 and 36:00.0) hang on that one switch: PIX, not three bridges apart.
    below_32 = sorted(o.labels["pci_busid"] for o in inv.of_kind("gpu") if o.parent == inv.objects["d/gpu0"].parent)
    assert below_32 == ["0000:34:00.0", "0000:36:00.0"]


def test_dgx2_stays_one_nvlink_domain_with_its_trunks(fx: Path) -> None:
    # hwloc lists GPU-NVSwitch links only: 8 GPUs on 6 switches per baseboard. DMI names the DGX-2H,
    # whose 6+6 switches are joined by 6 trunks of 8 NVLinks (DGX-2 whitepaper): added, assumed.
    imp = import_files("hwloc", [fx / "nvidiaDGX2.xml"], node="d")
    objs = imp.inventory.objects
    trunks = [lk for lk in imp.inventory.links.values() if objs[lk.a].kind == objs[lk.b].kind == "nvswitch"]
    assert len(trunks) == 6 and {(lk.attrs["count"], lk.mbps, lk.labels["assumed"]) for lk in trunks} == {
        (8, 200000, "pairing")
    }
    assert any("NVSwitch trunks" in n.message for n in imp.notes)


def test_nvswitch_boards_without_a_known_product_are_a_note(fx: Path, tmp_path: Path) -> None:
    text = (fx / "nvidiaDGX2.xml").read_text().replace("NVIDIA DGX-2H", "Some Server")
    p = tmp_path / "x.xml"
    p.write_text(text)
    imp = import_files("hwloc", [p], node="d")
    objs = imp.inventory.objects
    assert not [lk for lk in imp.inventory.links.values() if objs[lk.a].kind == objs[lk.b].kind == "nvswitch"]
    assert any("form 2 NVLink domains (8, 8 GPUs)" in n.message for n in imp.notes)


def test_bmc_display_chips_are_not_gpus(fx: Path) -> None:
    # 24em64t: 3 Tesla (0302 [10de:06d2]) and an ATI ES1000 VGA (0300 [1002:515e], no OS device).
    imp = import_files("hwloc", [fx / "24em64t-2n6c2t-pci.xml"], node="m")
    assert sorted(o.labels["pci_busid"] for o in imp.inventory.of_kind("gpu")) == [
        "0000:06:00.0",
        "0000:11:00.0",
        "0000:14:00.0",
    ]
    assert any("0000:01:03.0" in n.message and "not a GPU" in n.message for n in imp.notes)
    # 32em64t (--whole-io): 3 NVIDIA 0302 and a Radeon VGA with an OpenCL OS device are GPUs; the
    # Matrox VGA (0300 [102b:0532], no OS device) is the BMC's.
    imp = import_files("hwloc", [fx / "32em64t-2n8c2t-pci-wholeio.xml"], node="m")
    vendors = sorted(o.labels["pci_vendor"] for o in imp.inventory.of_kind("gpu"))
    assert vendors == ["0x1002", "0x10de", "0x10de", "0x10de"]
    assert any("0000:05:03.0" in n.message and "not a GPU" in n.message for n in imp.notes)


def test_functions_of_one_device_share_its_link(fx: Path) -> None:
    # manyVFs: below the Cisco VIC's ports, bus 0b holds 0b:00.0 (1137:0043, the NIC) and 0b:00.1-3
    # (1137:00cf, its virtual functions): one PCIe link, so one uplink and the others hang on it.
    inv = import_files("hwloc", [fx / "16intel64-manyVFs.xml"], node="m").inventory
    by_bus = {o.labels["pci_busid"]: o for o in inv.of_kind("nic")}
    pf = by_bus["0000:0b:00.0"]
    for fn in ("0000:0b:00.1", "0000:0b:00.2", "0000:0b:00.3"):
        vf = by_bus[fn]
        assert vf.labels["shares_link_of"] == pf.id
        assert [lk.b for lk in inv.links.values() if lk.a == vf.id] == [pf.id]
    assert "shares_link_of" not in pf.labels
    # The switch's downstream side counts each physical device once: BW004 has nothing to add up.
    sw = pf.parent or ""
    down = [lk for lk in inv.links.values() if lk.b == sw and inv.objects[lk.a].kind == "nic"]
    assert sorted(inv.objects[lk.a].labels["pci_busid"] for lk in down) == ["0000:0b:00.0", "0000:0c:00.0"]


def test_gpu_cpu_nvlink_is_a_host_link_not_an_nvswitch(fx: Path) -> None:
    # POWER8 + 4 P100: NVLinkBandwidth pairs GPU0-GPU1 and GPU2-GPU3 (40000 MB/s) and each GPU to its
    # package (40000): two nvlink links and four c2c links (NVLink to the CPU), no nvswitch link.
    inv = import_files("hwloc", [fx / "power8gpudistances.xml"], node="p").inventory
    kinds = sorted((lk.kind, lk.mbps) for lk in inv.links.values() if lk.kind in ("nvlink", "nvswitch", "c2c"))
    assert kinds == [("c2c", 40000)] * 4 + [("nvlink", 40000)] * 2
    assert not list(inv.of_kind("nvswitch"))


def test_packages_are_linked_across_the_cpu_interconnect(fx: Path) -> None:
    # DGX-2: two Xeon Platinum 8174 packages (CPUVendor GenuineIntel), each with its host bridges in
    # a socket: one UPI link between the two sockets, figure assumed.
    imp = import_files("hwloc", [fx / "nvidiaDGX2.xml"], node="d")
    cross = [lk for lk in imp.inventory.links.values() if lk.kind == "upi"]
    assert [(lk.a, lk.b, lk.labels["assumed"]) for lk in cross] == [("d/socket0", "d/socket1", "bandwidth")]
    # Host bridges [2b-3b] and [4e-67] of package 0, [ae-c7] and [d7-e7] of package 1.
    bridges = {o.labels["bridge_pci"]: o.parent for o in imp.inventory.of_kind("cpu") if "bridge_pci" in o.labels}
    assert bridges == {
        "0000:[2b-3b]": "d/socket0",
        "0000:[4e-67]": "d/socket0",
        "0000:[ae-c7]": "d/socket1",
        "0000:[d7-e7]": "d/socket1",
    }
    assert imp.inventory.objects["d/cpu0"].parent == "d/socket0"


def test_gpu_models_from_pci_ids_and_names(fx: Path) -> None:
    # DGX-2 GPUs: 0302 [10de:1db8] = "GV100GL [Tesla V100 SXM3 32GB]" (pci.ids) -> V100-SXM3-32GB.
    inv = import_files("hwloc", [fx / "nvidiaDGX2.xml"], node="d").inventory
    assert {o.model for o in inv.of_kind("gpu")} == {"V100-SXM3-32GB"}
    # POWER8 P100s (10de:15f9) are not in the catalogue: their model stays unknown.
    inv = import_files("hwloc", [fx / "power8gpudistances.xml"], node="p").inventory
    assert {o.model for o in inv.of_kind("gpu")} == {None}


def test_accelerators_without_os_devices_are_still_gpus(tmp_path: Path) -> None:
    # hwloc built without RSMI lists an MI300X as a bare PCIDev of class 0380 [1002:74a1] ("Aqua
    # Vanjaram [Instinct MI300X]" in pci.ids): a GPU, model MI300X. The ASPEED VGA (0300 [1a03:2000])
    # of the same board's BMC is not.
    p = tmp_path / "mi.xml"
    p.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<topology version="2.0">\n'
        '  <object type="Machine" os_index="0" cpuset="0x1" complete_cpuset="0x1" gp_index="1">\n'
        '    <object type="Package" os_index="0" cpuset="0x1" complete_cpuset="0x1" gp_index="2">\n'
        '      <object type="Bridge" gp_index="3" bridge_type="0-1" depth="0" bridge_pci="0000:[00-02]">\n'
        '        <object type="Bridge" gp_index="4" bridge_type="1-1" depth="1" bridge_pci="0000:[01-01]"'
        ' pci_busid="0000:00:01.0" pci_type="0604 [1022:14ab] [0000:0000] 00 00" pci_link_speed="63.015385">\n'
        '          <object type="PCIDev" gp_index="5" pci_busid="0000:01:00.0"'
        ' pci_type="0380 [1002:74a1] [1002:74a1] 00 00" pci_link_speed="63.015385"/>\n'
        "        </object>\n"
        '        <object type="PCIDev" gp_index="6" pci_busid="0000:00:05.0"'
        ' pci_type="0300 [1a03:2000] [1a03:2000] 41 00" pci_link_speed="0.000000"/>\n'
        "      </object>\n"
        '      <object type="Core" os_index="0" cpuset="0x1" complete_cpuset="0x1" gp_index="7">\n'
        '        <object type="PU" os_index="0" cpuset="0x1" complete_cpuset="0x1" gp_index="8"/>\n'
        "      </object>\n"
        "    </object>\n"
        "  </object>\n"
        "</topology>\n"
    )
    imp = import_files("hwloc", [p], node="m")
    gpus = list(imp.inventory.of_kind("gpu"))
    assert [(g.labels["pci_busid"], g.model) for g in gpus] == [("0000:01:00.0", "MI300X")]
    # Its link: 63.015385 GB/s, what Gen5 x16 gives (16 x 3938 = 63008): stated, not assumed.
    assert imp.inventory.links["m/gpu0<->m/hb0"].mbps == 63015
    assert any("0000:00:05.0" in n.message and "not a GPU" in n.message for n in imp.notes)


def _two_host_bridges(tmp_path: Path) -> Path:
    # One package, two host bridges: [00-3f] holds a GPU (01:00.0) and a NIC (02:00.0) on two root
    # ports; [40-7f] holds a second NIC (41:00.0). All links 15.753846 GB/s (Gen3 x16).
    def port(gp: int, bus: str, dev: str, cls: str) -> str:
        return (
            f'        <object type="Bridge" gp_index="{gp}" bridge_type="1-1" depth="1" bridge_pci="0000:[{bus}-{bus}]"'
            f' pci_busid="0000:{dev}" pci_type="0604 [8086:2030] [0000:0000] 00 00" pci_link_speed="15.753846">\n'
            f'          <object type="PCIDev" gp_index="{gp + 1}" pci_busid="0000:{bus}:00.0"'
            f' pci_type="{cls} [0000:0000] 00 00" pci_link_speed="15.753846"/>\n'
            "        </object>\n"
        )

    p = tmp_path / "two.xml"
    p.write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<topology version="2.0">\n'
        '  <object type="Machine" os_index="0" cpuset="0x1" complete_cpuset="0x1" gp_index="1">\n'
        '    <object type="Package" os_index="0" cpuset="0x1" complete_cpuset="0x1" gp_index="2">\n'
        '      <object type="Bridge" gp_index="3" bridge_type="0-1" depth="0" bridge_pci="0000:[00-3f]">\n'
        + port(10, "01", "00:01.0", "0302 [10de:1db8]")
        + port(20, "02", "00:02.0", "0200 [15b3:1017]")
        + "      </object>\n"
        '      <object type="Bridge" gp_index="4" bridge_type="0-1" depth="0" bridge_pci="0000:[40-7f]">\n'
        + port(30, "41", "40:01.0", "0200 [15b3:1017]")
        + "      </object>\n"
        '      <object type="Core" os_index="0" cpuset="0x1" complete_cpuset="0x1" gp_index="7">\n'
        '        <object type="PU" os_index="0" cpuset="0x1" complete_cpuset="0x1" gp_index="8"/>\n'
        "      </object>\n"
        "    </object>\n"
        "  </object>\n"
        "</topology>\n"
    )
    return p


def test_host_bridges_keep_phb_and_node_apart(tmp_path: Path) -> None:
    from verifier.facts.graph import graph_facts

    inv = import_files("hwloc", [_two_host_bridges(tmp_path)], node="m").inventory
    # GPU 01:00.0 and NIC 02:00.0 share host bridge [00-3f] (two root ports): PHB, as nvidia-smi says;
    # NIC 41:00.0 is behind the other host bridge of the same package: NODE.
    nics = {o.labels["pci_busid"]: o.id for o in inv.of_kind("nic")}
    paths = {(str(n), str(c)) for _g, n, c, _m in graph_facts(inv, {"gpu_nic_path"})["gpu_nic_path"]}
    assert paths == {(nics["0000:02:00.0"], "PHB"), (nics["0000:41:00.0"], "NODE")}
    # The widest path is the stated 15754 MB/s: the assumed fabric links take the widest link below.
    wide = {str(n): int(m) for _g, n, _c, m in graph_facts(inv, {"gpu_nic_path"})["gpu_nic_path"]}
    assert set(wide.values()) == {15754}


@pytest.mark.parametrize("speed", ["inf", "nan", "1e400", "1e300", "-3", "0.0001", "½", "fast"])
def test_a_link_speed_that_cannot_be_read_exactly_is_refused_at_its_line(fx: Path, tmp_path: Path, speed: str) -> None:
    # manyVFs line 85: 02:00.0, the first function of the Intel i350 on bus 02 (02:00.1 shares its link).
    # Each figure here is not a GB/s a link can have: infinite, not a number, negative, below
    # 1 MB/s once in MB/s (0.0001 GB/s = 0.1 MB/s), past 64 bits once in MB/s, or not a number
    # at all. The function that shares the refused link is not an error of its own.
    lines = (fx / "16intel64-manyVFs.xml").read_text().splitlines(keepends=True)
    assert 'pci_busid="0000:02:00.0"' in lines[84]
    lines[84] = lines[84].replace('pci_link_speed="0.000000"', f'pci_link_speed="{speed}"')
    p = tmp_path / "m.xml"
    p.write_text("".join(lines))
    with pytest.raises(TopologError, match="pci_link_speed") as err:
        import_files("hwloc", [p], node="m")
    assert [(d.location.line, d.location.col) for d in err.value.diagnostics] == [(85, 11)]


def test_a_link_speed_hwloc_could_not_read_is_assumed_and_said_so(fx: Path) -> None:
    # hwloc writes 0.000000 where the OS gives no link speed (all of manyVFs): the link gets the
    # default PCIe figure, labelled as assumed, rather than a bandwidth of zero.
    inv = import_files("hwloc", [fx / "16intel64-manyVFs.xml"], node="m").inventory
    nic = next(o for o in inv.of_kind("nic") if o.labels["pci_busid"] == "0000:02:00.0")
    (up,) = [lk for lk in inv.links.values() if lk.a == nic.id]
    assert up.labels.get("assumed") == "bandwidth" and up.mbps > 0


def test_a_core_with_a_thread_of_no_known_kind_gets_no_kind_figures(fx: Path, tmp_path: Path) -> None:
    # fakecpukinds: core 0 holds PU 0 (MySmallCore, cpuset 0x3 with PU 1) and PU 2 (YouBigcore, 0x4).
    # With MySmallCore's cpuset unreadable it names no PU: core 0 has one known kind, YouBigcore
    # (efficiency 7, 2000 MHz), and a thread of no known kind, so the core's figures are unknown.
    text = (fx / "fakecpukinds.xml").read_text()
    assert text.count('cpuset="0x00000003"') == 1
    p = tmp_path / "k.xml"
    p.write_text(text.replace('cpuset="0x00000003"', 'cpuset="0000:zz:00.0"'))
    core0 = import_files("hwloc", [p], node="m").inventory.objects["m/core0"]
    assert core0.labels["cpu_kind"] == "YouBigcore"
    assert "efficiency" not in core0.quantities and "max_mhz" not in core0.quantities


@pytest.mark.parametrize(("line", "old"), [(85, "0000:02:00.0"), (18, None)])
def test_a_pci_busid_that_is_no_pci_address_is_refused_at_its_line(
    fx: Path, tmp_path: Path, line: int, old: str | None
) -> None:
    # manyVFs line 85: the NIC function 0000:02:00.0 (a PCIDev); the other case is the first Bridge
    # with a pci_busid, found below. A bus written "zz" is no hex number: no PCI address, refused
    # where it stands rather than kept as a label reconcile cannot pair.
    lines = (fx / "16intel64-manyVFs.xml").read_text().splitlines(keepends=True)
    if old is None:
        line = next(i for i, ln in enumerate(lines, 1) if 'type="Bridge"' in ln and 'pci_busid="' in ln)
        old = lines[line - 1].split('pci_busid="', 1)[1].split('"', 1)[0]
    assert f'pci_busid="{old}"' in lines[line - 1]
    bad = old.replace(old.split(":")[1], "zz", 1)
    lines[line - 1] = lines[line - 1].replace(f'pci_busid="{old}"', f'pci_busid="{bad}"')
    p = tmp_path / "m.xml"
    p.write_text("".join(lines))
    with pytest.raises(TopologError) as err:
        import_files("hwloc", [p], node="m")
    assert [d.location.line for d in err.value.diagnostics] == [line]
    assert f"{bad!r} is not a PCI address" in err.value.diagnostics[0].message
