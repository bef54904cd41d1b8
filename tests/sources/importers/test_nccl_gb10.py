"""A real GB10 (DGX Spark) NCCL dump (fixtures/gb10-nccl-pr2202.xml, README.md): numaid -1, NVLink-C2C,
and NCCL socket devices at its default speed.

Before: refused at line 2 (numaid -1 was not a NUMA number); the <c2c> element was dropped; the Wi-Fi
card's 10000 Mb/s (NCCL's default for a device whose kernel states no speed) gave a BW003 on its x1 slot.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files


def test_gb10_dump_reads_as_the_machine_it_describes(fx: Path) -> None:
    result = import_files("nccl-xml", [fx / "gb10-nccl-pr2202.xml"], node="spark")
    inv = result.inventory
    # numaid -1: the kernel states no NUMA node, a CPU domain named as nvidia-smi's unknown ones are.
    cpu = inv.objects["spark/cpu-unknown0"]
    assert cpu.kind == "cpu" and "numa" not in cpu.labels and cpu.labels["arch"] == "arm64"
    links = {(lk.a, lk.b, lk.kind): lk for lk in inv.links.values()}
    # GPU 000f:01:00.0: "2.5 GT/s PCIe" x16 is Gen1 x16 = 16 x 250 MB/s = 4,000 MB/s, as stated.
    pcie = links["spark/gpu0", "spark/cpu-unknown0", "pcie"]
    assert (pcie.mbps, dict(pcie.attrs)) == (4_000, {"generation": 1, "lanes": 16})
    # <c2c bw="43125" count="8"/>: NCCL's bw is one link's MB/s, so 8 x 43,125 = 345,000 MB/s to its CPU.
    c2c = links["spark/gpu0", "spark/cpu-unknown0", "c2c"]
    assert (c2c.mbps, dict(c2c.attrs)) == (345_000, {"count": 8})
    # Wi-Fi wlP9s9 (dev 0, guid 0x0) and tailscale0 (dev 1, guid 0x1) are NCCL socket devices at exactly
    # 10000 Mb/s, the default NCCL writes when /sys/class/net/<if>/speed gives none: no speed kept.
    for nic, name in (("spark/nic0", "wlP9s9"), ("spark/nic1", "tailscale0")):
        assert inv.objects[nic].labels["name"] == name
        assert "bandwidth_mbps" not in inv.objects[nic].quantities
    # The Wi-Fi card's own link is stated: "5.0 GT/s PCIe" x1 = Gen2 x1 = 500 MB/s.
    assert links["spark/nic0", "spark/cpu-unknown0", "pcie"].mbps == 500
    notes = [str(n) for n in result.notes]
    assert any("numaid -1" in n for n in notes)
    assert sum("NCCL's default when the kernel states no speed" in n for n in notes) == 2


def test_socket_device_speeds_nccl_read_are_kept(tmp_path: Path) -> None:
    # A socket device whose kernel gave 25000 Mb/s, and an IB port at 10000 Mb/s with a real GUID: both
    # are rates the port states (25000 / 8 = 3,125 MB/s; 10000 / 8 = 1,250 MB/s).
    path = tmp_path / "topo.xml"
    path.write_text(
        '<system version="1"><cpu numaid="0">'
        '<nic><net name="eth0" dev="0" speed="25000" port="0" guid="0x0" maxconn="65536" gdr="0"/></nic>'
        '<nic><net name="mlx5_0" dev="1" speed="10000" port="1" guid="0x1070fd0300e5f118" maxconn="131072" gdr="1"/>'
        "</nic></cpu></system>\n"
    )
    inv = import_files("nccl-xml", [path], node="n").inventory
    got = {o.labels["name"]: o.quantities.get("bandwidth_mbps") for o in inv.objects.values() if o.kind == "nic"}
    assert got == {"eth0": 3_125, "mlx5_0": 1_250}


def test_a_dump_of_several_hosts_is_refused_not_read_as_one_machine(fx: Path, tmp_path: Path) -> None:
    # The GB10 dump's <cpu> twice, the second with another host_hash (and its own bus ids), as NCCL writes a
    # topology it fused from several hosts: read as one node it would be one machine with both hosts' GPUs.
    text = (fx / "gb10-nccl-pr2202.xml").read_text()
    inner = text.split('<system version="1">\n', 1)[1].rsplit("</system>", 1)[0]
    other = inner.replace("0xcb0355b3c0b2caa", "0x1111111111111111").replace(":01:00.0", ":02:00.0")
    path = tmp_path / "fused.xml"
    path.write_text('<system version="1">\n' + inner + other + "</system>\n")
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [path])
    assert str(err.value).startswith(
        f"{path}:1:1: this NCCL topology holds 2 hosts (<cpu host_hash> 0xcb0355b3c0b2caa, 0x1111111111111111)"
    )
