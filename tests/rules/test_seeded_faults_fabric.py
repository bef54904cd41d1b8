"""Seeded faults of fabric connectivity (issue 40, item 3): nodes off the fabric, fabric islands,
cables to another rack's leaf; and layouts an expert accepts, which must add nothing.

Each case's comment derives by hand which check it adds and which objects that finding names (the
machinery is tests/seeded_faults.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from seeded_faults import GB200, POD, Fault, check_fault

# dgx-h100-pod.yaml: every node's NIC r is cabled to leaf r (64 cables, one line).
_CABLES = "    bandwidth: 400 Gb/s            # ConnectX-7 NDR port, per direction\n    foreach: {n: 0..7, r: 0..7}"


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
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_seeded_fault_adds_exactly_its_findings(name: str, tmp_path: Path) -> None:
    check_fault(FAULTS[name], tmp_path)


@pytest.mark.parametrize("name", sorted(NON_FAULTS))
def test_a_layout_an_expert_accepts_adds_only_what_it_should(name: str, tmp_path: Path) -> None:
    check_fault(NON_FAULTS[name], tmp_path)
