"""Seeded faults of fabric connectivity (issue 40, item 3): nodes off the fabric, fabric islands,
cables to another rack's leaf; and layouts an expert accepts, which must add nothing.

Each case's comment derives by hand which check it adds and which objects that finding names (the
machinery is tests/seeded_faults.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from seeded_faults import GB200, MIXED, POD, Fault, check_fault

# dgx-h100-pod.yaml: every node's NIC r is cabled to leaf r (64 cables, one line).
_CABLES = "    bandwidth: 400 Gb/s            # ConnectX-7 NDR port, per direction\n    foreach: {n: 0..7, r: 0..7}"
# dgx-h100-pod.yaml: every leaf to every spine, 2 NDR cables each (8 down, 8 up per leaf).
_UPLINKS = (
    '  - a: "leaf{l}"\n    b: "spine{s}"\n    kind: infiniband\n    count: 2\n'
    "    bandwidth: 800 Gb/s            # 2 NDR cables per leaf-spine pair: 8 down, 8 up per leaf\n"
    "    foreach: {l: 0..7, s: 0..3}\n"
)
# dgx-h100-pod.yaml from the spines' entry to the end: the spines, then every link.
_POD_TAIL = POD.read_text(encoding="utf-8")[POD.read_text(encoding="utf-8").index("      - name: spine{i}\n") :]
# mixed-fleet.yaml from the RTX rack's leaf to the end: the leaf, the RTX rack's nodes, then every link.
_MIXED_TAIL = MIXED.read_text(encoding="utf-8")[
    MIXED.read_text(encoding="utf-8").index("              - {name: euw-rtx-leaf") :
]
# mixed-fleet.yaml: each rack's leaf to the pod's spine.
_MIXED_UPLINKS = """  - {a: "{leaf}", b: euw-spine0, kind: ethernet, count: 4, bandwidth: 3.2 Tb/s,
     foreach: {leaf: [euw-a100-leaf, euw-h100-leaf, euw-mi300x-leaf, euw-rtx-leaf]}}"""


FAULTS: dict[str, Fault] = {
    # dgx07 left out of the cable line: its 8 NICs have no fabric link while the other 7 nodes of
    # pod0 are cabled. One root cause (the node was never cabled): one LINK010 finding naming the
    # node, where LINK003 (other NICs of its node cabled) had nothing to say.
    "pod: a node never cabled": Fault(
        POD,
        _CABLES,
        _CABLES.replace("n: 0..7", "n: 0..6"),
        frozenset({("LINK010", ("dgx07",))}),
    ),
    # dgx07's 8 cables all down (its leaf ports shut): the node is off the fabric, one LINK010 finding,
    # not eight LINK006 findings (one per NIC) nor LINK007's warnings that "the fabric keeps working".
    "pod: every cable of a node down": Fault(
        POD,
        _CABLES,
        _CABLES.replace("n: 0..7", "n: 0..6")
        + '\n  - {a: "dgx07/nic{r}", b: "leaf{r}", kind: infiniband, bandwidth: 400 Gb/s, state: down,'
        + " foreach: {r: 0..7}}",
        frozenset({("LINK010", ("dgx07",))}),
    ),
    # gb200-nvl72.yaml: tray05 left out of the NIC cable line, the other 17 trays cabled to the rail
    # leaves; the rack holds them all (no pod), so the rack is the scope. tray05 still reaches the
    # other trays over NVLink, but no node beyond the rack: one LINK010 finding for the tray.
    "gb200: a compute tray never cabled": Fault(
        GB200,
        "    foreach: {t: 0..17, r: 0..3}",
        "    foreach: {t: [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17], r: 0..3}",
        frozenset({("LINK010", ("tray05",))}),
    ),
    # Rail leaves 0-3 cabled to spines 0-1 and leaves 4-7 to spines 2-3 (4 cables a pair, so every leaf
    # keeps 8 x 400 up for 8 x 400 down: no oversubscription). The switches form two islands,
    # {leaf0-3, spine0-1} named leaf0 and {leaf4-7, spine2-3} named leaf4, 4 leaves each: the main
    # one is the smaller id, leaf0. Rail 0 of one node and rail 5 of another no longer reach each
    # other: one LINK011 finding naming leaf4..leaf7 (one island, one root cause).
    "pod: leaves with no common spine": Fault(
        POD,
        _UPLINKS,
        "".join(
            f'  - {{a: "leaf{{l}}", b: "spine{{s}}", kind: infiniband, count: 4, bandwidth: 1.6 Tb/s, {pairs}}}\n'
            for pairs in ("foreach: {l: 0..3, s: [0, 1]}", "foreach: {l: 4..7, s: [2, 3]}")
        ),
        frozenset({("LINK011", ("leaf4", "leaf5", "leaf6", "leaf7"))}),
    ),
    # leaf7's 4 uplinks all down: leaf7 is an island of its own (its down links join nothing); rail
    # 7 of every node reaches no other leaf. One LINK011 error for leaf7, not four LINK007 warnings
    # saying the fabric keeps working.
    "pod: every uplink of a rail leaf down": Fault(
        POD,
        _UPLINKS,
        _UPLINKS.replace("l: 0..7", "l: 0..6")
        + '  - {a: leaf7, b: "spine{s}", kind: infiniband, count: 2, bandwidth: 800 Gb/s, state: down,'
        + " foreach: {s: 0..3}}\n",
        frozenset({("LINK011", ("leaf7",))}),
    ),
    # The RTX rack's bond to the spine down: euw-rtx-leaf (4 workstations below it) is an island of
    # its own; the main island of pod eu-west holds the other 3 leaves and the spine, named
    # euw-a100-leaf. One LINK011 error for the leaf (not LINK007's warning).
    "mixed: a rack leaf's bond to the spine down": Fault(
        MIXED,
        _MIXED_UPLINKS,
        _MIXED_UPLINKS.replace("euw-rtx-leaf]", "]").replace(", ]", "]")
        + "\n  - {a: euw-rtx-leaf, b: euw-spine0, kind: ethernet, count: 4, bandwidth: 3.2 Tb/s, state: down}",
        frozenset({("LINK011", ("euw-rtx-leaf",))}),
    ),
    # a100-n1's two NICs cabled to the H100 rack's leaf instead of its own rack's (euw-a100 holds
    # euw-a100-leaf): one LINK012 finding for the node, naming both cables and the leaf. The H100
    # leaf's two extra 100 GbE downlinks leave it oversubscribed as before (BW005, same subject).
    "mixed: an A100 node cabled to another rack's leaf": Fault(
        MIXED,
        "b: euw-a100-leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: [0, 1], k: [0, 1]}}",
        "b: euw-a100-leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: [0], k: [0, 1]}}\n"
        '  - {a: "a100-n1/nic{k}", b: euw-h100-leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {k: [0, 1]}}',
        frozenset(
            {
                (
                    "LINK012",
                    ("a100-n1", "a100-n1/nic0<->euw-h100-leaf", "a100-n1/nic1<->euw-h100-leaf", "euw-h100-leaf"),
                )
            }
        ),
    ),
}

NON_FAULTS: dict[str, Fault] = {
    # The pod's NIC cables all left out (its compute fabric is not in this file, as the GB200 rack's
    # was): no node of pod0 is cabled, so none is off a fabric the pod has; the leaves have no hosts
    # (LINK004 judges none) and nothing else reads the NICs' cables. Nothing is added.
    "pod: no node cabled at all": Fault(
        POD,
        '  - a: "dgx{n:02d}/nic{r}"\n    b: "leaf{r}"\n    kind: infiniband\n' + _CABLES + "\n",
        "",
        frozenset(),
    ),
    # An end-of-row leaf: the RTX rack has no leaf of its own (its leaf and that leaf's bond left out)
    # and its 4 workstations are cabled to the A100 rack's leaf next door. The RTX rack has no leaf,
    # so LINK012 judges nothing there; euw-a100-leaf then carries 4 x 100 + 4 x 100 GbE = 100,000 MB/s
    # down under its 400,000 MB/s bond (BW005 silent), and the rest is as before. Nothing is added.
    "mixed: a rack served by its neighbour's leaf": Fault(
        MIXED,
        _MIXED_TAIL,
        _MIXED_TAIL.replace(
            "              - {name: euw-rtx-leaf, kind: switch, model: SN5600, labels: {role: leaf}}\n", ""
        )
        .replace(
            "b: euw-rtx-leaf, kind: ethernet, bandwidth: 100 Gb/s",
            "b: euw-a100-leaf, kind: ethernet, bandwidth: 100 Gb/s",
        )
        .replace("euw-mi300x-leaf, euw-rtx-leaf]", "euw-mi300x-leaf]"),
        frozenset(),
    ),
    # A rail-only fabric: the spines and every leaf-spine cable left out. Each rail leaf is an island,
    # by design (NCCL moves cross-rail traffic over NVLink inside the node, PXN), and every node is
    # on all 8 rails: no leaf declares an uplink, so LINK011 judges none, and LINK004 (a pod with
    # spines) has none to judge against. Nothing is added.
    "pod: a rail-only fabric without spines": Fault(
        POD,
        _POD_TAIL,
        _POD_TAIL[_POD_TAIL.index("\nlinks:\n") :].replace(_UPLINKS, ""),
        frozenset(),
    ),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_seeded_fault_adds_exactly_its_findings(name: str, tmp_path: Path) -> None:
    check_fault(FAULTS[name], tmp_path)


@pytest.mark.parametrize("name", sorted(NON_FAULTS))
def test_a_layout_an_expert_accepts_adds_only_what_it_should(name: str, tmp_path: Path) -> None:
    check_fault(NON_FAULTS[name], tmp_path)
