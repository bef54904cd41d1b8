"""A hand-written NCCL_TOPO_FILE lists no NVLink: the node's NVLinks are unknown, not absent.

NCCL's own dump writes a <gpu> element per GPU (with its <nvlink>s) and the vendor id it reads from sysfs on
every <pci>. aws-ofi-nccl's p4d file lists the 8 A100 GPUs by class only (no <gpu>); its p5 file
(@79565c0) has <gpu sm="90"> elements on <pci> with no vendor id. Both machines have NVSwitch NVLinks.
Before: no label, and reconcile against nvidia-smi reported each NV# GPU pair as a path-class conflict.
"""

from __future__ import annotations

import re
from pathlib import Path

from verifier.sources.importers import import_files
from verifier.sources.importers.reconcile import load_side, reconcile


def test_gpus_known_by_class_only_leave_nvlinks_unknown(fx: Path) -> None:
    imp = import_files("nccl-xml", [fx / "aws-p4d-24xl-topo.xml"], node="p4d")
    assert imp.inventory.objects["p4d"].labels["nvlinks_described"] == "false"
    assert any("8 of the 8 GPUs" in n.message and "unknown, not absent" in n.message for n in imp.notes)


def test_gpu_elements_without_vendor_ids_leave_nvlinks_unknown(fx: Path) -> None:
    imp = import_files("nccl-xml", [fx / "aws-p5.48xl-topo.xml"], node="p5")
    assert imp.inventory.objects["p5"].labels["nvlinks_described"] == "false"
    assert any("have no PCI vendor id" in n.message for n in imp.notes)


def test_real_dumps_keep_their_word(fx: Path) -> None:
    # The IBM H100 dump states NVLinks; the 2-GPU workstation file has <gpu> and vendor ids and no NVLink:
    # both describe them (the second: none), so neither is labelled.
    for name in ("ibm-cn-h100-topo.xml", "workstation-2gpu-2nic-nccl-handwritten.xml", "rccl-mi300x-8p-cx7.xml"):
        inv = import_files("nccl-xml", [fx / name], node="n").inventory
        assert "nvlinks_described" not in inv.objects["n"].labels, name


def test_reconcile_does_not_read_unlisted_nvlinks_as_a_conflict(fx: Path, tmp_path: Path) -> None:
    # The IBM dump with its <nvlink> elements and vendor ids removed, as a hand-written file would be, against
    # the nvidia-smi matrix written from that dump (NV18 between every pair of its 8 GPUs): 8*7/2 = 28 GPU
    # pairs were NV18 on one side and PIX/NODE/SYS on the other. Nothing else differs.
    text = (fx / "ibm-cn-h100-topo.xml").read_text()
    text = re.sub(r' vendor="[^"]*"', "", re.sub(r"\s*<nvlink [^>]*/>", "", text))
    stripped = tmp_path / "topo.xml"
    stripped.write_text(text)
    got = reconcile(load_side(stripped, None), load_side(fx / "ibm-cn-h100-nvidia-smi-handwritten.txt", None))
    assert [d.text() for d in got] == []
