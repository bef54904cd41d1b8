"""NCCL topology XML: the real AWS files, read by hand for the expected values."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files
from verifier.sources.importers.yaml_out import to_yaml
from verifier.sources.inventory.loader import load_inventory_text


def test_p4d_devices_switches_and_speeds(fx: Path) -> None:
    inv = import_files("nccl-xml", [fx / "aws-p4d-24xl-topo.xml"], node="p4d").inventory
    kinds = sorted(o.kind for o in inv.objects.values())
    # 2 <cpu>, 4 switch <pci class=0x060400>, 8 GPUs (class 0x030200), 4 EFA NICs (0x020000), the node.
    assert kinds.count("cpu") == 2 and kinds.count("pcie_switch") == 4
    assert kinds.count("gpu") == 8 and kinds.count("nic") == 4 and kinds.count("node") == 1
    # GPU 2 is 0000:20:1c.0 on line 9 (header comment removed), under switch 1 of cpu 0.
    gpu2 = inv.objects["p4d/gpu2"]
    assert gpu2.labels["pci_busid"] == "0000:20:1c.0"
    assert gpu2.parent == "p4d/pcisw1" and inv.objects["p4d/pcisw1"].parent == "p4d/cpu0"
    assert (gpu2.loc.line, gpu2.labels["source"].split()[-1]) == (9, "/system/cpu[0]/pci[1]/pci[0]")
    # Every link is 8 GT/s (Gen3) x16: 16 x 985 MB/s.
    pcie = [lk for lk in inv.links.values() if lk.kind == "pcie"]
    assert len(pcie) == 16  # 4 switch uplinks + 12 device links
    assert {(lk.mbps, lk.attrs["generation"], lk.attrs["lanes"]) for lk in pcie} == {(15760, 3, 16)}
    assert inv.objects["p4d/nic3"].labels["pci_busid"] == "0000:a0:1b.0"


def test_g5_pci_devices_without_class_are_reported_not_guessed(fx: Path) -> None:
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [fx / "aws-g5.48xl-topo.xml"])
    # One error for the nine bare <pci busid=...> elements (lines 3-6 and 9-13), at the first of them.
    [diag] = err.value.diagnostics
    assert diag.location.line == 3
    assert diag.message.startswith("9 PCI devices, 0000:00:16.0 (line 3), 0000:00:17.0 (line 4), 0000:00:18.0 (line 5)")
    assert "and 6 more, have no class" in diag.message


def _xml(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "topo.xml"
    p.write_text(text)
    return p


def test_gen4_x16_nvlinks_and_nic_speed(tmp_path: Path) -> None:
    p = _xml(
        tmp_path,
        """<system version="1">
  <cpu numaid="0">
    <pci busid="0000:07:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
      <gpu dev="0" sm="80" rank="0" gdr="1">
        <nvlink target="0000:0f:00.0" count="12" tclass="0x030200"/>
      </gpu>
    </pci>
    <pci busid="0000:0f:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="8">
      <gpu dev="1" sm="80"><nvlink target="0000:07:00.0" count="12" tclass="0x030200"/></gpu>
    </pci>
    <pci busid="0000:0c:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16">
      <nic><net name="mlx5_0" dev="0" speed="200000" port="1"/></nic>
    </pci>
  </cpu>
</system>
""",
    )
    inv = import_files("nccl-xml", [p], node="h").inventory
    assert inv.links["h/gpu0<->h/cpu0"].mbps == 31504  # Gen4 x16: 16 x 1969 MB/s
    assert inv.links["h/gpu1<->h/cpu0"].attrs["lanes"] == 8
    nv = [lk for lk in inv.links.values() if lk.kind == "nvlink"]
    assert [(lk.a, lk.b, lk.mbps, lk.attrs["count"]) for lk in nv] == [("h/gpu0", "h/gpu1", 300000, 12)]
    nic = inv.objects["h/nic0"]
    assert nic.quantities["bandwidth_mbps"] == 25000 and nic.labels["name"] == "mlx5_0"


@pytest.mark.parametrize(
    ("attrs", "line", "needle"),
    [
        ('link_speed="fast" link_width="16"', 3, "link_speed='fast'"),
        ('link_speed="16.0 GT/s PCIe" link_width="x16"', 3, "link_width='x16'"),
        ('class="zz" link_speed="8 GT/s" link_width="16"', 3, "class='zz'"),
    ],
)
def test_bad_values_point_at_the_line(tmp_path: Path, attrs: str, line: int, needle: str) -> None:
    cls = "" if "class=" in attrs else 'class="0x030200" '
    p = _xml(
        tmp_path,
        f'<system version="1">\n  <cpu numaid="0">\n    <pci busid="0000:01:00.0" {cls}{attrs}/>\n'
        "  </cpu>\n</system>\n",
    )
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [p])
    assert [d.location.line for d in err.value.diagnostics] == [line]
    assert needle in err.value.diagnostics[0].message


def test_entity_declarations_are_refused(tmp_path: Path) -> None:
    p = _xml(
        tmp_path,
        '<?xml version="1.0"?>\n<!DOCTYPE system [\n <!ENTITY a "aaaaaaaaaa">\n'
        ' <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n]>\n<system version="1">&b;</system>\n',
    )
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [p])
    assert "declares entity" in str(err.value) and err.value.diagnostics[0].location.line == 3


def test_malformed_xml_has_line(tmp_path: Path) -> None:
    p = _xml(tmp_path, '<system version="1">\n  <cpu numaid="0">\n  </pci>\n</system>\n')
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [p])
    assert err.value.diagnostics[0].location.line == 3
    assert "not well-formed XML" in err.value.diagnostics[0].message


def test_hidden_link_speed_and_width_are_unknown_not_errors(fx: Path) -> None:
    # Azure NCv4 (a VM): every GPU says link_speed="" link_width="0": the link is unknown, so its
    # bandwidth is the documented default labelled assumed, with a note per device, and no
    # generation or width is recorded (nothing for PCIE001 to misjudge).
    imp = import_files("nccl-xml", [fx / "azure-ncv4-topo.xml"], node="n")
    inv = imp.inventory
    gpu_links = [lk for lk in inv.links.values() if lk.kind == "pcie" and inv.objects[lk.a].kind == "gpu"]
    assert len(gpu_links) == 4
    assert {(lk.mbps, lk.labels["assumed"], tuple(lk.attrs)) for lk in gpu_links} == {(31504, "bandwidth", ())}
    assert sum("does not state its PCIe link speed and width" in n.message for n in imp.notes) == 4


def test_known_speed_with_hidden_width_keeps_the_generation(fx: Path) -> None:
    # IBM cn-h100: GPUs and NICs at link_speed="32.0 GT/s PCIe" (Gen5) with link_width="0": the
    # generation is kept, the width assumed x16 (16 x 3938 = 63008 MB/s), labelled assumed.
    imp = import_files("nccl-xml", [fx / "ibm-cn-h100-topo.xml"], node="i")
    inv = imp.inventory
    gpu0 = next(lk for lk in inv.links.values() if lk.a == "i/gpu0" and lk.kind == "pcie")
    assert (gpu0.mbps, dict(gpu0.attrs), gpu0.labels["assumed"]) == (63008, {"generation": 5}, "bandwidth")


def test_emulated_bridges_do_not_throttle(fx: Path) -> None:
    # IBM cn-h100: each GPU+NIC pair sits below a 104c:8232 bridge (TI XIO3130, which QEMU emulates)
    # stating 2.5 GT/s x1 (250 MB/s) above devices at 32 GT/s: the emulation's default, not a real
    # 250 MB/s uplink. Its bandwidth is unknown (assumed), so BW004 does not see 63008 over 250 MB/s.
    imp = import_files("nccl-xml", [fx / "ibm-cn-h100-topo.xml"], node="i")
    inv = imp.inventory
    uplinks = [lk for lk in inv.links.values() if inv.objects[lk.a].kind == "pcie_switch"]
    assert len(uplinks) == 8 and {(lk.mbps, lk.labels["assumed"]) for lk in uplinks} == {(31504, "bandwidth")}
    assert sum("hypervisors emulate" in n.message for n in imp.notes) == 8


def test_nvlink_to_itself_is_understood(fx: Path) -> None:
    # NCv4: each A100 PCIe lists <nvlink target="its own busid" count="12">: its NVLink bridge peer is
    # not in the VM. No self-link is made; a note says so for each of the 4 GPUs.
    imp = import_files("nccl-xml", [fx / "azure-ncv4-topo.xml"], node="n")
    assert not [lk for lk in imp.inventory.links.values() if lk.kind in ("nvlink", "nvswitch")]
    assert sum("12 NVLinks to itself" in n.message for n in imp.notes) == 4


def test_a_nic_without_pci_path_hangs_on_its_cpu(fx: Path) -> None:
    # NCv4: <nic> directly in <cpu numaid="0"> (eth0, 100000 Mb/s): on cpu0 by an assumed link.
    inv = import_files("nccl-xml", [fx / "azure-ncv4-topo.xml"], node="n").inventory
    nic = inv.objects["n/nic0"]
    assert nic.parent == "n/cpu0" and nic.quantities["bandwidth_mbps"] == 12500  # 100000 / 8
    assert inv.links["n/nic0<->n/cpu0"].labels["assumed"] == "bandwidth,kind"


def test_cpus_are_linked_across_the_interconnect(fx: Path) -> None:
    # NDv4: 4 <cpu> of vendor AuthenticAMD: every pair linked by xGMI (Infinity Fabric): 4*3/2 = 6.
    inv = import_files("nccl-xml", [fx / "azure-ndv4-topo.xml"], node="n").inventory
    cross = sorted((lk.a, lk.b) for lk in inv.links.values() if lk.kind == "xgmi")
    assert cross == [(f"n/cpu{a}", f"n/cpu{b}") for a in range(4) for b in range(a + 1, 4)]
    # NDv2: 2 GenuineIntel <cpu>: one UPI link.
    inv = import_files("nccl-xml", [fx / "azure-ndv2-topo.xml"], node="n").inventory
    assert [(lk.a, lk.b) for lk in inv.links.values() if lk.kind == "upi"] == [("n/cpu0", "n/cpu1")]


def test_pci_ids_give_catalogue_models(fx: Path) -> None:
    # vendor="0x10de" device="0x20b2" is "GA100 [A100 SXM4 80GB]" in pci.ids; 0x2330 "GH100 [H100
    # SXM5 80GB]"; 0x20b5 "GA100 [A100 PCIe 80GB]". EFA (1d0f:efa0) is not in the catalogue.
    def models(name: str, kind: str) -> set[str | None]:
        inv = import_files("nccl-xml", [fx / name], node="n").inventory
        return {o.model for o in inv.of_kind(kind)}

    assert models("aws-p4de-24xl-topo.xml", "gpu") == {"A100-SXM4-80GB"}
    assert models("aws-p4de-24xl-topo.xml", "nic") == {None}
    assert models("ibm-cn-h100-topo.xml", "gpu") == {"H100-SXM5-80GB"}
    assert models("azure-ncv4-topo.xml", "gpu") == {"A100-PCIE-80GB"}
    # The GPU's ids are on its <pci> element, not on <gpu>: kept as labels too.
    gpu = import_files("nccl-xml", [fx / "ibm-cn-h100-topo.xml"], node="n").inventory.objects["n/gpu0"]
    assert (gpu.labels["pci_vendor"], gpu.labels["pci_device"], gpu.labels["nccl_sm"]) == ("0x10de", "0x2330", "90")


def test_nic_speed_is_compared_with_its_model(tmp_path: Path) -> None:
    # A ConnectX-7 (15b3:1021, 400 Gb/s ports in the catalogue = 50000 MB/s) whose port runs at
    # 200000 Mb/s = 25000 MB/s: the speed is kept, and the difference said.
    p = _xml(
        tmp_path,
        """<system version="1">
  <cpu numaid="0" vendor="GenuineIntel">
    <pci busid="0000:0c:00.0" class="0x020700" vendor="0x15b3" device="0x1021"
         link_speed="32.0 GT/s PCIe" link_width="16">
      <nic><net name="mlx5_0" dev="0" speed="200000" port="1"/></nic>
    </pci>
  </cpu>
</system>
""",
    )
    imp = import_files("nccl-xml", [p], node="h")
    nic = imp.inventory.objects["h/nic0"]
    assert (nic.model, nic.quantities["bandwidth_mbps"]) == ("ConnectX-7", 25000)
    assert any("runs its port at 25000 MB/s; the model's ports are 50000 MB/s" in n.message for n in imp.notes)


def test_what_the_tool_left_empty_is_left_out_and_the_inventory_loads_back(tmp_path: Path) -> None:
    # rank="" and the CPU's affinity="": NCCL said nothing there, so the GPU has no nccl_rank label
    # and the CPU no affinity label (the YAML loader refuses an empty label: written, the
    # inventory would not load back).
    p = _xml(
        tmp_path,
        '<system version="1">\n  <cpu numaid="0" affinity="">\n'
        '    <pci busid="0000:07:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">\n'
        '      <gpu dev="0" sm="80" rank="" gdr="1"/>\n    </pci>\n  </cpu>\n</system>\n',
    )
    inv = import_files("nccl-xml", [p], node="h").inventory
    assert "nccl_rank" not in inv.objects["h/gpu0"].labels
    assert "affinity" not in inv.objects["h/cpu0"].labels
    back = load_inventory_text(to_yaml(inv, "h", "imported"), "h.yaml")
    assert sorted(back.objects) == sorted(inv.objects)


def test_a_figure_past_64_bits_is_refused_at_the_tools_line(tmp_path: Path) -> None:
    # speed="99999999999999999999999" Mb/s / 8 = 12,499,999,999,999,999,999,999.875, rounded to
    # 12,500,000,000,000,000,000,000 MB/s (exactly: a float would give 12,499,999,999,999,998,951,424),
    # which the engines' 64-bit integers cannot hold: refused at the NIC's line, not later in the YAML.
    p = _xml(
        tmp_path,
        '<system version="1">\n  <cpu numaid="0">\n'
        '    <pci busid="0000:0c:00.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16">\n'
        '      <nic><net name="mlx5_0" dev="0" speed="99999999999999999999999" port="1"/></nic>\n'
        "    </pci>\n  </cpu>\n</system>\n",
    )
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [p], node="h")
    (d,) = err.value.diagnostics
    assert "does not fit in 64 bits" in d.message and "12500000000000000000000 does" in d.message
    assert d.location.line in (3, 4)


@pytest.mark.parametrize("bad", ["0000:.nan:1c.0", "0000:10:1c", "0000:10:1c.8", "0000:10/1c.0", "gpu0"])
def test_a_busid_that_is_no_pci_address_is_refused_at_its_line(fx: Path, tmp_path: Path, bad: str) -> None:
    # p4d line 4 is GPU 0, busid 0000:10:1c.0. Each replacement is no domain:bus:device.function in
    # hex: a bus that is no hex number, no function, function 8 (a function is 0-7), a slash, a name.
    # Reconcile pairs devices by this address: read as a label, it would leave GPU 0 unpaired.
    lines = (fx / "aws-p4d-24xl-topo.xml").read_text().splitlines(keepends=True)
    assert 'busid="0000:10:1c.0"' in lines[3]
    lines[3] = lines[3].replace('busid="0000:10:1c.0"', f'busid="{bad}"')
    p = tmp_path / "p4d.xml"
    p.write_text("".join(lines))
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [p], node="p4d")
    assert [d.location.line for d in err.value.diagnostics] == [4]
    assert f"{bad!r} is not a PCI address" in err.value.diagnostics[0].message


def test_an_nvlink_target_that_is_no_pci_address_is_refused(tmp_path: Path) -> None:
    # One GPU with 12 NVLinks to "nvswitch0": a name where NCCL writes the switch's bus id.
    p = _xml(
        tmp_path,
        '<system version="1">\n  <cpu numaid="0">\n    <pci busid="0000:01:00.0" class="0x030200" '
        'link_speed="16 GT/s" link_width="16">\n      <gpu dev="0" sm="80" rank="0" gdr="1">\n'
        '        <nvlink target="nvswitch0" count="12" tclass="0x068000"/>\n      </gpu>\n    </pci>\n'
        "  </cpu>\n</system>\n",
    )
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [p])
    assert [d.location.line for d in err.value.diagnostics] == [5]
    assert "'nvswitch0' is not a PCI address" in err.value.diagnostics[0].message
