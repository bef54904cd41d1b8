"""Seeded faults of the network model (issue 40 item 2): GPUDirect RDMA lost, NICs shared by design.

Each case edits a copy of a shipped inventory (tests/seeded_faults.py) and lists, worked out by hand
from the edit, the (rule, subjects) pairs it must add; non-faults an expert accepts add nothing.
A GPU's nearest NIC, and its class, are nvidia-smi's (rules/schema.dl, nearest_nic): PIX one PCIe
switch, PXB several, PHB through one CPU's host bridge, SYS across sockets. NCCL uses GPUDirect RDMA
up to PXB by default (NVIDIA/nccl src/graph/paths.cc, ncclTopoCheckGdr), so in a node type that
promises gpu_nic_affinity or rail_optimized a nearest NIC at PHB or farther is BW009's error.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from seeded_faults import GB200, MIXED, POD, Added, Fault, check_fault, findings

# dgx-h100-pod.yaml: NICs 6 and 7 of the node type hang off PCIe switch 3, with GPUs 6 and 7.
_POD_NICS_67 = '      - {a: "nic{g}", b: pcie3, kind: pcie, generation: 5, lanes: 16, foreach: {g: [6, 7]}}\n'
# mixed-fleet.yaml: GPUs and NICs 2 and 3 of the HGX H100 type share PCIe switch 1 (on cpu0).
_H100_PAIR_23 = (
    '      - {a: "{d}{g}", b: pcie1, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu, nic], g: [2, 3]}}\n'
)


def _subjects(nodes: list[str], gpus: tuple[str, ...], nics: tuple[str, ...]) -> tuple[str, ...]:
    """A finding's subjects: its GPUs in every node, sorted, then its NICs (the report's order)."""
    return (*sorted(f"{n}/{g}" for n in nodes for g in gpus), *sorted(f"{n}/{c}" for n in nodes for c in nics))


POD_NODES = [f"dgx{n:02d}" for n in range(8)]
H100_NODES = ["h100-n0", "h100-n1"]


def _h100_nics_23_on(cpu: str, added: Added) -> Fault:
    """The H100 type's NICs 2 and 3 moved from PCIe switch 1 to a root port of `cpu`."""
    new = (
        '      - {a: "gpu{g}", b: pcie1, kind: pcie, generation: 5, lanes: 16, foreach: {g: [2, 3]}}\n'
        f'      - {{a: "nic{{g}}", b: {cpu}, kind: pcie, generation: 5, lanes: 16, foreach: {{g: [2, 3]}}}}\n'
    )
    return Fault(MIXED, _H100_PAIR_23, new, added)


FAULTS: dict[str, Fault] = {
    # The DGX H100 type (promises gpu_nic_affinity and rail_optimized) with NICs 6 and 7 on cpu1's
    # root ports instead of PCIe switch 3. GPU 6 (under pcie3, on cpu1) reaches nic6 and nic7 through
    # cpu1's host bridge (PHB), and nic4/nic5 through cpu1 and pcie2 (PHB as well); all paths are
    # Gen5 x16 (63008), so the tie goes to the NIC with its index: gpu6 -> nic6, gpu7 -> nic7, both
    # PHB: GPUDirect lost. One template line, so one BW009 naming the 16 GPUs and their 16 NICs. The
    # rails hold (nic6 is rail 6), so no BW006; PHB is not BW002's remote class.
    "pod: the node type's NICs 6 and 7 on cpu1's root ports": Fault(
        POD,
        _POD_NICS_67,
        _POD_NICS_67.replace("b: pcie3", "b: cpu1"),
        frozenset({("BW009", _subjects(POD_NODES, ("gpu6", "gpu7"), ("nic6", "nic7")))}),
    ),
    # The same NICs on cpu0 instead: from GPU 6 (on cpu1) nic6 and nic7 are SYS away, and the nearest
    # NICs are nic4 and nic5 under pcie2 on cpu1 (PHB, 63008); neither has index 6 or 7, so the tie
    # goes to the smaller id, nic4, for both GPUs. nic4 is rail 4's: the GPUs land on another rail,
    # but because their own NIC is far, which BW009 names (not BW006 too); not BW002 (PHB).
    "pod: the node type's NICs 6 and 7 on the other socket": Fault(
        POD,
        _POD_NICS_67,
        _POD_NICS_67.replace("b: pcie3", "b: cpu0"),
        frozenset({("BW009", _subjects(POD_NODES, ("gpu6", "gpu7"), ("nic4",)))}),
    ),
    # The mixed fleet's HGX H100 type (promises rail_optimized) with NICs 2 and 3 on cpu0's root
    # ports: GPU 2 (pcie1, cpu0) reaches nic2 and nic3 PHB, and nic0/nic1 through cpu0 and pcie0, PHB
    # too, all at Gen5 x16 (63008): the tie goes to the NIC of its own index. One BW009 for the type.
    "mixed: the HGX H100 type's NICs 2 and 3 on cpu0's root ports": _h100_nics_23_on(
        "cpu0", frozenset({("BW009", _subjects(H100_NODES, ("gpu2", "gpu3"), ("nic2", "nic3")))})
    ),
    # On cpu1 instead: nic2 and nic3 are SYS from GPU 2 and 3, nic0 and nic1 (pcie0, cpu0) PHB, so
    # both GPUs' nearest NIC is nic0 (no NIC of their index ties; the smaller id): one BW009, not
    # BW002 (whose SYS NICs are not the nearest ones). The leaf has no rail label, so no BW006.
    "mixed: the HGX H100 type's NICs 2 and 3 on the other socket": _h100_nics_23_on(
        "cpu1", frozenset({("BW009", _subjects(H100_NODES, ("gpu2", "gpu3"), ("nic0",)))})
    ),
    # Not a fault: the GB200 tray type promising GPU-NIC affinity. Its GPUs reach their Grace over
    # NVLink-C2C and the NICs hang off the Grace's root ports: PHB here, NCCL's P2C, where it uses
    # GPUDirect RDMA by default (NCCL_NET_GDR_C2C=1). BW009 stays silent.
    "gb200: the tray type promises GPU-NIC affinity (NICs on the Grace, GPUs on C2C)": Fault(
        GB200,
        "    kind: node\n    promises: [nvlink_domain]\n",
        "    kind: node\n    promises: [nvlink_domain, gpu_nic_affinity]\n",
        frozenset(),
    ),
}

# Not a fault: the HGX A100 type rebuilt with its 8 GPUs in pairs behind 4 PCIe switches, one NIC per
# switch (4 NICs, each cabled at 100 GbE): a NIC shared by 2 GPUs on one switch by design. Each GPU's
# nearest NIC is its switch's (PIX), GPUDirect holds, every GPU's share is the same (12500 / 2), and
# the type promises no rails: nothing to report. Three edits (devices, links, cables), so the case
# is checked here rather than with one Fault.
_A100_PAIRS = (
    (
        '      - {name: "nic{i}", kind: nic, model: ConnectX-6-Dx, count: 2}\n',
        '      - {name: "nic{i}", kind: nic, model: ConnectX-6-Dx, count: 4}\n'
        '      - {name: "pcie{i}", kind: pcie_switch, count: 4}\n',
    ),
    (
        '      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 4, lanes: 16, foreach: {g: 0..3}}\n'
        '      - {a: "gpu{g}", b: cpu1, kind: pcie, generation: 4, lanes: 16, foreach: {g: 4..7}}\n'
        '      - {a: "nic{n}", b: "cpu{n}", kind: pcie, generation: 4, lanes: 16, foreach: {n: [0, 1]}}\n',
        '      - {a: "gpu{g}", b: pcie0, kind: pcie, generation: 4, lanes: 16, foreach: {g: [0, 1]}}\n'
        '      - {a: "gpu{g}", b: pcie1, kind: pcie, generation: 4, lanes: 16, foreach: {g: [2, 3]}}\n'
        '      - {a: "gpu{g}", b: pcie2, kind: pcie, generation: 4, lanes: 16, foreach: {g: [4, 5]}}\n'
        '      - {a: "gpu{g}", b: pcie3, kind: pcie, generation: 4, lanes: 16, foreach: {g: [6, 7]}}\n'
        '      - {a: "nic{n}", b: "pcie{n}", kind: pcie, generation: 4, lanes: 16, foreach: {n: 0..3}}\n'
        '      - {a: "pcie{s}", b: cpu0, kind: pcie, generation: 4, lanes: 16, foreach: {s: [0, 1]}}\n'
        '      - {a: "pcie{s}", b: cpu1, kind: pcie, generation: 4, lanes: 16, foreach: {s: [2, 3]}}\n',
    ),
    (
        "kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: [0, 1], k: [0, 1]}}",
        "kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: [0, 1], k: 0..3}}",
    ),
)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_seeded_fault_adds_exactly_its_findings(name: str, tmp_path: Path) -> None:
    check_fault(FAULTS[name], tmp_path)


def test_a100_nics_shared_by_pairs_of_gpus_by_design_add_nothing(tmp_path: Path) -> None:
    edited = MIXED.read_text(encoding="utf-8")
    for old, new in _A100_PAIRS:
        assert edited.count(old) == 1, "each text the case replaces is in the inventory once"
        edited = edited.replace(old, new)
    copy = tmp_path / MIXED.name
    copy.write_text(edited, encoding="utf-8")
    assert findings(copy) == findings(MIXED)
