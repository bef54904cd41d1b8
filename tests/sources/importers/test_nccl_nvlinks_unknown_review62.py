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


def test_amd_gpus_known_by_class_alone_are_not_said_to_hide_nvlinks(tmp_path: Path) -> None:
    # Two MI300X (vendor 0x1002, device 0x74a1) written as bare <pci class="0x120000"> (no <gpu>): the file
    # says nothing of xGMI, but an AMD GPU has no NVLink, so no nvlinks_described label and no such note.
    p = tmp_path / "amd.xml"
    p.write_text(
        '<system version="1">\n<cpu numaid="0" affinity="ffff" arch="x86_64" vendor="AuthenticAMD">\n'
        '<pci busid="0000:05:00.0" class="0x120000" vendor="0x1002" device="0x74a1" link_speed="32.0 GT/s PCIe"'
        ' link_width="16"/>\n'
        '<pci busid="0000:15:00.0" class="0x120000" vendor="0x1002" device="0x74a1" link_speed="32.0 GT/s PCIe"'
        ' link_width="16"/>\n</cpu>\n</system>\n'
    )
    imp = import_files("nccl-xml", [p], node="a")
    assert [g.model for g in imp.inventory.of_kind("gpu")] == ["MI300X", "MI300X"]
    assert "nvlinks_described" not in imp.inventory.objects["a"].labels
    assert not any("NVLink" in n.message for n in imp.notes)
