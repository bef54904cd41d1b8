"""SR-IOV virtual functions of AMD Instinct GPUs name their GPU's model (device_ids.yaml).

pci.ids (hwdata) names 1002:74b5 "Aqua Vanjaram [Instinct MI300X VF]" and 1002:74b9 "Aqua Vanjaram
[Instinct MI325X VF]"; a VM gets one function per GPU. The real RCCL dump of an 8x MI300X VM
(fixtures/rccl-mi300x-vf-8p-942vm.xml, ROCm/rccl topo_8p_942vm.xml) gives each GPU device 0x74b5.
Before: the model stayed unknown, so no catalogue check applied. The ConnectX function 15b3:101e stays
unknown: pci.ids names it "ConnectX Family mlx5Gen Virtual Function", the whole family.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files
from verifier.sources.inventory.device_ids import model_for_pci


def test_vf_ids_name_the_gpu_model() -> None:
    assert model_for_pci("0x1002", "0x74b5") == "MI300X"
    assert model_for_pci("1002", "74b9") == "MI325X"
    assert model_for_pci("0x15b3", "0x101e") is None


def test_real_vm_dump_reads_eight_mi300x(fx: Path) -> None:
    inv = import_files("nccl-xml", [fx / "rccl-mi300x-vf-8p-942vm.xml"], node="vm").inventory
    gpus = list(inv.of_kind("gpu"))
    assert len(gpus) == 8 and {g.model for g in gpus} == {"MI300X"}
    assert {n.model for n in inv.of_kind("nic")} == {None}
    # Every GPU lists the 7 others once: 8 * 7 / 2 = 28 xGMI pairs.
    assert len([lk for lk in inv.links.values() if lk.kind == "xgmi"]) == 28


def test_mi300a_apu_by_its_pci_id(fx: Path) -> None:
    # pci.ids: 1002:74a0 "Aqua Vanjaram [Instinct MI300A]". The real RCCL dump of a 4x MI300A node
    # (fixtures/rccl-mi300a-4p-cxi.xml, ROCm/rccl topo_4p_942.xml) gives device 0x74a0 on its 4 GPUs.
    assert model_for_pci("0x1002", "0x74a0") == "MI300A"
    inv = import_files("nccl-xml", [fx / "rccl-mi300a-4p-cxi.xml"], node="a").inventory
    assert [g.model for g in inv.of_kind("gpu")] == ["MI300A"] * 4
