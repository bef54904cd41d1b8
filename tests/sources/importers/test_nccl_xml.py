"""NCCL topology XML: the real AWS files, read by hand for the expected values."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files


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
    lines = [d.location.line for d in err.value.diagnostics]
    assert lines == [3, 4, 5, 6, 9, 10, 11, 12, 13]  # the nine bare <pci busid=...> elements
    assert "has no class" in err.value.diagnostics[0].message


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
