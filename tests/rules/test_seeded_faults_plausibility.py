"""Seeded faults of the plausibility kind (issue 40, item 4): a node type that its catalogue models
cannot carry as written (CPU lanes against a two-socket configuration, core counts against an SoC,
a PCIe generation below both ends' catalogue figure).

Each case seeds one fault into a copy of a shipped inventory (tests/seeded_faults.py) and names, derived
by hand in its comment, exactly the (rule, subjects) it adds; the non-faults an expert accepts add nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from seeded_faults import EDGE, MIXED, Fault, check_fault

# mixed-fleet.yaml, the MI300X type: its GPUs and NICs in pairs behind four PCIe switches, two
# switch uplinks per socket, four xGMI socket links between the EPYC 9654s.
_X16 = "kind: pcie, generation: 5, lanes: 16"
_PAIR = '      - {{a: "{{d}}{{g}}", b: pcie{k}, ' + _X16 + ", foreach: {{d: [gpu, nic], g: [{a}, {b}]}}}}"
_UPLINKS = '      - {{a: "pcie{{s}}", b: cpu{c}, ' + _X16 + ", foreach: {{s: [{a}, {b}]}}}}   # uplinks\n"
_MI300X_PCIE = "".join(_PAIR.format(k=k, a=2 * k, b=2 * k + 1) + f"   # MI300X pair {k}\n" for k in range(4)) + "".join(
    _UPLINKS.format(c=c, a=2 * c, b=2 * c + 1) for c in range(2)
)
_MI300X_SWITCHES = (
    '      - {name: "pcie{i}", kind: pcie_switch, model: PEX89104, count: 4}'
    "   # PCIe Gen5 switches, 2 GPUs + 2 NICs each\n"
)
# The MI300X type written with every GPU and NIC at x16 straight on a socket (4 + 4 per EPYC) and no
# PCIe switches: the layout the example had before issue 40.
_MI300X_DIRECT = (
    '      - {a: "{d}{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu, nic], g: 0..3}}\n'
    '      - {a: "{d}{g}", b: cpu1, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu, nic], g: 4..7}}\n'
)
_SOCKET_LINKS = "- {a: cpu0, b: cpu1, kind: xgmi, count: 4, bandwidth: 128 GB/s}"
MI300X_NODES = ("mi300x-n0", "mi300x-n1")


# edge-soc.yaml: the M2's performance cluster of 4 cores.
_P_CORES = "                    count: 4\n                    labels: {core_type: performance}"


# mixed-fleet.yaml: the HGX A100 type's GPUs at Gen4 x16 on their sockets.
_A100_GPUS = (
    '      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 4, lanes: 16, foreach: {g: 0..3}}\n'
    '      - {a: "gpu{g}", b: cpu1, kind: pcie, generation: 4, lanes: 16, foreach: {g: 4..7}}\n'
)


# mixed-fleet.yaml: the HGX H100 type's first PCIe switch line (GPUs 0, 1 and NICs 0, 1), and that
# line split with the NICs written Gen4.
_H100_SWITCH0 = (
    '      - {a: "{d}{g}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu, nic], g: [0, 1]}}\n'
)
_H100_SWITCH0_NICS_GEN4 = (
    '      - {a: "gpu{g}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {g: [0, 1]}}\n'
    '      - {a: "nic{g}", b: pcie0, kind: pcie, generation: 4, lanes: 16, foreach: {g: [0, 1]}}\n'
)


def _three_p_cores() -> Fault:
    """The P cluster with 3 cores, its L2 serving the three."""
    text = EDGE.read_text(encoding="utf-8")
    start = text.index(_P_CORES)
    end = text.index("serves: [p0, p1, p2, p3]", start) + len("serves: [p0, p1, p2, p3]")
    old = text[start:end]
    new = old.replace("count: 4", "count: 3").replace("[p0, p1, p2, p3]", "[p0, p1, p2]")
    return Fault(EDGE, old, new, frozenset())


def _direct(socket_links: str) -> Fault:
    """The MI300X type's devices straight on the sockets (switches and their links gone), and its
    socket-link line as `socket_links` writes it."""
    text = MIXED.read_text(encoding="utf-8")
    start = text.index(_MI300X_SWITCHES)
    end = text.index(_SOCKET_LINKS, start) + len(_SOCKET_LINKS)
    old = text[start:end]
    new = old.replace(_MI300X_SWITCHES, "").replace(_MI300X_PCIE, _MI300X_DIRECT).replace(_SOCKET_LINKS, socket_links)
    assert new != old and _MI300X_PCIE not in new
    return Fault(MIXED, old, new, frozenset())


def _with(fault: Fault, added: frozenset[tuple[str, tuple[str, ...]]]) -> Fault:
    return Fault(fault.inventory, fault.old, fault.new, added)


FAULTS: dict[str, Fault] = {
    # Every GPU and NIC at x16 on its socket with four xGMI socket links: each EPYC 9654 (128 lanes,
    # socket_link_lanes 16 in the catalogue) has 4 GPUs + 4 NICs x 16 = 128 lanes of PCIe plus
    # 4 x 16 = 64 lanes to its socket links: 192 > 128 on cpu0 and on cpu1. The two CPUs are two
    # lines of findings (one per CPU of the type, each naming it in both nodes): LINK009 twice.
    # Nothing else moves: the type promises only its xGMI full mesh (no GPUDirect promise: BW009
    # stays silent when the GPU-NIC paths become PHB).
    "mixed: the MI300X type's devices straight on the sockets with four socket links": _with(
        _direct(_SOCKET_LINKS),
        frozenset(
            {
                ("LINK009", tuple(f"{n}/cpu0" for n in MI300X_NODES)),
                ("LINK009", tuple(f"{n}/cpu1" for n in MI300X_NODES)),
            }
        ),
    ),
    # Not a fault: the shipped layout (devices behind the PCIe switches, 2 x16 uplinks = 32 lanes
    # per socket) with three xGMI socket links instead of four, as ASUS's ESC A8A-E12U is built:
    # 32 + 3 x 16 = 80 of 128 lanes. Silent.
    "mixed: the MI300X type with three socket links (behind switches)": Fault(
        MIXED, _SOCKET_LINKS, _SOCKET_LINKS.replace("count: 4, bandwidth: 128", "count: 3, bandwidth: 96"), frozenset()
    ),
    # The edge box's P cluster written with 6 performance cores where the Apple M2 has 4 (its model in
    # edge-soc.yaml: performance_cores 4, efficiency_cores 4, cores 8, from Apple's "8-core CPU, 4P +
    # 4E"): 6 > 4, one NODE009 naming the SoC. The total, 6 + 4 = 10 > 8, is the same cause: not
    # reported besides. The L2 still serves p0..p3 as written: MEM004 stays silent (p4, p5 only
    # gain an L1 each, no cache is skipped).
    "edge: the M2's performance cluster written with 6 cores": Fault(
        EDGE, _P_CORES, _P_CORES.replace("count: 4", "count: 6"), frozenset({("NODE009", ("edge-m2-01/soc",))})
    ),
    # Not a fault: a performance core left out of the inventory (3 of the model's 4: an operator may
    # leave out a core it reserves; fewer than the model's is not judged). Silent.
    "edge: the M2's performance cluster written with 3 cores": _three_p_cores(),
    # The HGX A100 type's eight GPU slots written Gen3 (two lines, cpu0's four and cpu1's four, one
    # text): the A100 SXM4 and the EPYC 7742 are both PCIe Gen4 in the catalogue, 3 < 4. Every A100
    # runs Gen3, so no GPU is below another of its model (PCIE001 silent); the nodes match their type
    # (NODE005 silent). One NODE010 for the type (one generation written, one expected), naming the
    # type and its 8 links as a100-n0, the node that stands for the type, has them.
    "mixed: the HGX A100 type's GPU slots written Gen3": Fault(
        MIXED,
        _A100_GPUS,
        _A100_GPUS.replace("generation: 4", "generation: 3"),
        frozenset(
            {
                (
                    "NODE010",
                    (
                        "mf-hgx-a100",
                        *(f"a100-n0/gpu{g}<->a100-n0/cpu0" for g in range(4)),
                        *(f"a100-n0/gpu{g}<->a100-n0/cpu1" for g in range(4, 8)),
                    ),
                )
            }
        ),
    ),
    # The HGX H100 type's first PCIe switch line split so its two NICs (ConnectX-7, Gen5 in the
    # catalogue, on a PEX Gen5 switch) are written Gen4 while its GPUs stay Gen5. One cause, the type's
    # NIC line: one NODE010 naming the type and the two NIC links as h100-n0 (the node that stands for
    # the type) has them. The NICs' 400 Gb/s (50,000 MB/s) is now above their Gen4 x16 link
    # (16 x 1,969 = 31,504 MB/s) on both H100 nodes, which BW003 said on its own before: it now steps
    # aside for the type line NODE010 reports (no GPU shares it, so PCIE001 is silent). No BW004: the
    # switch carries less than before over the same Gen5 uplink.
    "mixed: the HGX H100 type's NIC line written Gen4 (NODE010's, not also BW003's)": Fault(
        MIXED,
        _H100_SWITCH0,
        _H100_SWITCH0_NICS_GEN4,
        frozenset(
            {
                (
                    "NODE010",
                    ("mf-hgx-h100", "h100-n0/nic0<->h100-n0/pcie0", "h100-n0/nic1<->h100-n0/pcie0"),
                )
            }
        ),
    ),
    # One MI300X pair's line written Gen3 (GPUs 0, 1 and NICs 0, 1 on PCIe switch 0; all Gen5 in the
    # catalogue). GPUs 0 and 1 now run below the other six MI300X of their node (Gen5): PCIE001's
    # sibling case, one finding for the line's GPU links in both nodes. The NIC links of that line
    # share switch 0 and generation 3 with them: the same line, so NODE010 stays silent. The NICs'
    # 400 Gb/s (50,000 MB/s) is now above their Gen3 x16 link (16 x 985 = 15,760 MB/s): BW003 for
    # the four NICs, as before this change (a consequence BW003 reports on its own). No BW004: switch
    # 0 has 4 x 15,760 = 63,040 MB/s downstream over its 63,008 MB/s Gen5 uplink, 1:1.
    "mixed: one MI300X pair's line written Gen3 (PCIE001's, not also NODE010's)": Fault(
        MIXED,
        _PAIR.format(k=0, a=0, b=1) + "   # MI300X pair 0\n",
        _PAIR.format(k=0, a=0, b=1).replace("generation: 5", "generation: 3") + "   # MI300X pair 0\n",
        frozenset(
            {
                ("BW003", tuple(f"{n}/nic{c}" for n in MI300X_NODES for c in (0, 1))),
                (
                    "PCIE001",
                    (
                        *(f"{n}/gpu{g}" for n in MI300X_NODES for g in (0, 1)),
                        *(f"{n}/gpu{g}<->{n}/pcie0" for n in MI300X_NODES for g in (0, 1)),
                    ),
                ),
            }
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_seeded_fault_adds_exactly_its_findings(name: str, tmp_path: Path) -> None:
    check_fault(FAULTS[name], tmp_path)
