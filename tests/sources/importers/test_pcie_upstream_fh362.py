"""A GPU's PCIe link judged against what its other end can give (PCIE001, PCIE002), on real imports.

aws-p6-b200-lstopo-excerpt.xml: one host bridge of a real p6-b200.48xlarge lstopo capture
(aws/aws-ofi-nccl tests/unit/fixtures/topology/p6-b200 @a090e25d). Two B200s (catalogue
B200-HGX-180GB: PCIe Gen6 x16, 16 x 7562 = 120992 MB/s) state 63.015385 GB/s, read as 63015 MB/s,
under an Amazon switch whose uplink states the same 63015 MB/s, beside two EFA at 63015 MB/s.
aws-p4d-24xl-topo.xml: NCCL's topology file for p4d.24xlarge (aws-ofi-nccl; README of the fixtures):
eight A100s (catalogue Gen4) at 8 GT/s x16 (Gen3) under four switches whose uplinks state 8 GT/s x16
on Cascade Lake CPUs.
"""

from __future__ import annotations

from pathlib import Path

from verifier.session.verify_run import verify
from verifier.sources.importers import import_files
from verifier.sources.importers.yaml_out import to_yaml

_B200 = "aws-p6-b200-lstopo-excerpt.xml"


def _findings(fx_file: Path, kind: str, tmp_path: Path, rule: str, text: str | None = None) -> list[str]:
    src = fx_file
    if text is not None:
        src = tmp_path / fx_file.name
        src.write_text(text)
    inv = import_files(kind, [src], node="m").inventory
    path = tmp_path / "m.yaml"
    path.write_text(to_yaml(inv, "m", "m"))
    return sorted(f.message for f in verify([path]).findings if f.rule == rule)


def test_b200_at_gen5_x16_under_a_gen5_uplink_is_the_design(fx: Path, tmp_path: Path) -> None:
    # The uplink's 63015 MB/s is Gen5 x16 (16 x 3938 = 63008) within 10%, short of 90% of Gen6 x16
    # (108892.8), and no link below outruns it (all 63015): the switch gives Gen5, so each B200 is
    # judged at Gen5 x16, 63008 (90% is 56707.2): 63015 is not below. The base read Gen6 x16 (120992)
    # and reported both GPUs.
    assert _findings(fx / _B200, "hwloc", tmp_path, "PCIE002") == []


def test_b200_at_x8_under_the_same_uplink_is_reported(fx: Path, tmp_path: Path) -> None:
    # One B200 (86:00.0) edited to 31.507692 GB/s (Gen5 x8 or Gen4 x16: 31508 MB/s): below 56707.2,
    # reported against Gen5 x16 (63008), the older generation the switch gives.
    text = (fx / _B200).read_text()
    old = 'pci_busid="0000:86:00.0" pci_type="0302 [10de:2901] [10de:1999] a1" pci_link_speed="63.015385"'
    assert text.count(old) == 1
    text = text.replace(old, old.replace("63.015385", "31.507692"))
    assert _findings(fx / _B200, "hwloc", tmp_path, "PCIE002", text) == [
        "GPU m/gpu0's PCIe link m/gpu0<->m/pcisw0 carries 31508 MB/s, below the 63008 MB/s of PCIe Gen5 x16"
        " (its model's width at the older generation its upstream gives)."
    ]


def test_a100_at_gen3_under_gen3_uplinks_is_the_design(fx: Path, tmp_path: Path) -> None:
    # Each switch's uplink states generation 3 (8 GT/s) and nothing below it states more: the A100s'
    # Gen3 is what both ends give (the base reported all eight against the A100's Gen4).
    assert _findings(fx / "aws-p4d-24xl-topo.xml", "nccl-xml", tmp_path, "PCIE001") == []
