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
    nvs = [lk for lk in inv.links.values() if lk.kind == "nvswitch"]
    # Each V100 has 6 NVLinks, one to each NVSwitch of its board: 16 x 6 = 96 GPU-switch links at 25 GB/s.
    assert len(nvs) == 96 and {lk.mbps for lk in nvs} == {25000}
    gpu0 = inv.objects["dgx2/gpu0"]
    assert gpu0.labels["pci_busid"] == "0000:34:00.0" and gpu0.labels["os_devices"] == "nvml0"
    assert gpu0.labels["hwloc_GPUModel"] == "Tesla V100-SXM3-32GB-H" and gpu0.loc.line == 42
    assert inv.links["dgx2/gpu0<->dgx2/pcisw4"].mbps == 15754  # pci_link_speed 15.753846 GB/s
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
    assert sorted({m.labels.get("memory_type") for m in mems}) == ["DRAM", "HBM"] and len(mems) == 8
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
