"""hwloc XML: a GPU's catalogue model from its PCI id, else from the GPUModel name hwloc read from NVML.

Variant derived by hand from the real 24em64t-2n6c2t-pci.xml (open-mpi/hwloc, three Tesla GPUs at
4.0 GB/s): Tesla 06:00.0 rewritten as 10de:2331 (pci.ids "GH100 [H100 PCIe]"); Tesla 14:00.0
rewritten as 10de:2336 (pci.ids "GH100 [H100]": no single model) with an NVML OS device whose
GPUModel is "NVIDIA H100 PCIe"; Tesla 11:00.0 left as it is (10de:06d2, not in the catalogue).
"""

from __future__ import annotations

from pathlib import Path

from verifier.session.verify_run import verify
from verifier.sources.importers import import_files
from verifier.sources.importers.yaml_out import to_yaml

_TESLA_14 = """pci_busid="0000:14:00.0" pci_type="0302 [10de:06d2] [00de:0030] a3 00" pci_link_speed="4.000000">
            <info name="PCIVendor" value="nVidia Corporation"/>"""
_NVML = """
            <object type="OSDev" gp_index="900" id="obj900" name="nvml1" osdev_type="12">
              <info name="Backend" value="NVML"/>
              <info name="GPUModel" value="NVIDIA H100 PCIe"/>
            </object>"""


def _variant(fx: Path, tmp_path: Path) -> Path:
    text = (fx / "24em64t-2n6c2t-pci.xml").read_text()
    assert text.count(_TESLA_14) == 1
    text = text.replace(
        'pci_busid="0000:06:00.0" pci_type="0302 [10de:06d2]', 'pci_busid="0000:06:00.0" pci_type="0302 [10de:2331]'
    )
    text = text.replace(_TESLA_14, _TESLA_14.replace("10de:06d2", "10de:2336") + _NVML)
    path = tmp_path / "h100-pcie.xml"
    path.write_text(text)
    return path


def test_h100_pcie_by_pci_id_and_by_gpu_model(fx: Path, tmp_path: Path) -> None:
    inv = import_files("hwloc", [_variant(fx, tmp_path)], node="m").inventory
    models = {o.labels["pci_busid"]: o.model for o in inv.of_kind("gpu")}
    assert models == {"0000:06:00.0": "H100-PCIE-80GB", "0000:14:00.0": "H100-PCIE-80GB", "0000:11:00.0": None}


def test_pcie_checks_judge_the_h100_pcie(fx: Path, tmp_path: Path) -> None:
    # Each H100 PCIe's link is 4.0 GB/s = 4,000 MB/s; the model is PCIe Gen5 x16 = 16 * 3,938 = 63,008
    # MB/s: PCIE002 for gpu0 (06:00.0) and gpu2 (14:00.0). The unmodelled Tesla (gpu1) is not judged.
    # BW002 x2 as for the unedited file (gpu1 and gpu2 are SYS from the IB NIC).
    inv = import_files("hwloc", [_variant(fx, tmp_path)], node="m").inventory
    path = tmp_path / "m.yaml"
    path.write_text(to_yaml(inv, "m", "test"))
    got = sorted((f.rule, *f.subjects) for f in verify([path]).findings)
    assert got == [
        ("BW002", "m/gpu1", "m/nic2"),
        ("BW002", "m/gpu2", "m/nic2"),
        ("PCIE002", "m/gpu0", "m/gpu0<->m/hb0"),
        ("PCIE002", "m/gpu2", "m/gpu2<->m/hb1"),
    ]
    messages = [f.message for f in verify([path]).findings if f.rule == "PCIE002"]
    assert all("4000 MB/s" in m and "63008 MB/s" in m for m in messages)
