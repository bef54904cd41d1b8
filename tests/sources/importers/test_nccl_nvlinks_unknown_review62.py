"""Review of the `nvlinks_described: "false"` label (round 16). The label goes on a node whose NCCL file has
GPUs on a <pci> without a vendor id and no <nvlink>/<xgmi>, as hand-written NCCL_TOPO_FILEs are. RCCL's older
dumps also write no PCI ids (ROCm/rccl tools/topo_expl/models/topo_8p_pcie.xml: 8 Vega 20 on PCIe, no xGMI):
that real dump was said to be a hand-written file whose NVLinks are unknown, on a node of AMD GPUs.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files


def test_an_rccl_dump_without_pci_ids_is_not_a_hand_written_nvidia_file(fx: Path) -> None:
    imp = import_files("nccl-xml", [fx / "rccl-vega20-8p-pcie.xml"], node="v")
    # 8 <gpu gcn="906"> elements, all on <pci> without vendor ids: AMD GPUs, read as RCCL wrote them.
    assert len(list(imp.inventory.of_kind("gpu"))) == 8
    assert "nvlinks_described" not in imp.inventory.objects["v"].labels
    assert not any("NCCL_TOPO_FILE" in n.message for n in imp.notes)


def test_the_hand_written_p5_file_keeps_its_label(fx: Path) -> None:
    # Control: aws-ofi-nccl's p5.48xl file has <gpu> elements without `gcn` on <pci> without vendor ids.
    imp = import_files("nccl-xml", [fx / "aws-p5.48xl-topo.xml"], node="p")
    assert imp.inventory.objects["p"].labels.get("nvlinks_described") == "false"
