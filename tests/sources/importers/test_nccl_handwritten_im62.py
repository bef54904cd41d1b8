"""Hand-written NCCL_TOPO_FILEs: what they say is read, what they leave to sysfs is refused once.

fixtures/aws-p5.48xl-topo-8807ce1.xml is aws/aws-ofi-nccl's p5.48xlarge file at commit 8807ce1: 2 NUMA
nodes, each with 4 bridges of 4 devices, every device a bare `<pci busid link_speed="32 GT/s PCIe/s">`.
Before: 64 errors, two per device (no class; and the speed string, which NCCL itself reads as 32 GT/s
by matching its table's "32 GT/s" as a prefix).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files


def test_classless_file_is_one_error_at_its_first_device(fx: Path) -> None:
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [fx / "aws-p5.48xl-topo-8807ce1.xml"], node="p5")
    [diag] = err.value.diagnostics
    # 14 lines of comment, <system> on 15, <cpu numaid="0"> on 16, the bridge 0000:45:00.0 on 17 (it holds
    # devices: a switch, never refused) and its first device 0000:4f:00.0 on 18. 2 x 4 x 4 = 32 devices.
    assert diag.location.line == 18
    assert diag.message.startswith("32 PCI devices, 0000:4f:00.0 (line 18), 0000:50:00.0 (line 19), 0000:51:00.0")
    assert "and 29 more, have no class" in diag.message and "NCCL_TOPO_DUMP_FILE" in diag.message


def test_pcie_per_second_speed_is_read_as_nccl_reads_it(tmp_path: Path) -> None:
    # One classed NIC under a bridge, written with the p5 file's speed string: 32 GT/s is Gen5, x16.
    p = tmp_path / "t.xml"
    p.write_text(
        '<system version="1"><cpu numaid="0"><pci busid="0000:45:00.0" class="0x060400" link_speed="32 GT/s PCIe/s"'
        ' link_width="16"><pci busid="0000:4f:00.0" class="0x020000" link_speed="32 GT/s PCIe/s" link_width="16">'
        '<nic><net name="rdmap79s0" speed="100000"/></nic></pci></pci></cpu></system>\n'
    )
    inv = import_files("nccl-xml", [p], node="n").inventory
    pcie = sorted((lk.attrs["generation"], lk.attrs["lanes"]) for lk in inv.links.values() if lk.kind == "pcie")
    assert pcie == [(5, 16), (5, 16)]


def test_one_classless_device_among_classed_ones_is_named(tmp_path: Path) -> None:
    p = tmp_path / "t.xml"
    p.write_text(
        '<system version="1">\n<cpu numaid="0">\n<pci busid="0000:4f:00.0" class="0x020000" link_speed="16 GT/s"'
        ' link_width="16"><nic><net name="mlx5_0" speed="200000"/></nic></pci>\n'
        '<pci busid="0000:50:00.0" link_speed="16 GT/s" link_width="16"/>\n</cpu>\n</system>\n'
    )
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [p], node="n")
    [diag] = err.value.diagnostics
    assert diag.location.line == 4
    assert diag.message.startswith("PCI device 0000:50:00.0 (/system/cpu[0]/pci[1]) has no class")
