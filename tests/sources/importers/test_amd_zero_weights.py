"""`amd-smi topology` whose weight table is all zeros: the hops and link-type tables still give the xGMI links.

amd-smi-mi355x-8gpu-zero-weights.txt is the real output of an 8x MI355X node (fixtures/README.md).
Each expected value below is read off the file by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

from verifier.facts.graph import graph_facts
from verifier.sources.importers import import_files
from verifier.sources.inventory.model import Inventory

REAL = "amd-smi-mi355x-8gpu-zero-weights.txt"
BUSES = ["0d", "26", "5d", "75", "8e", "a7", "dc", "f4"]  # the header's bus ids, in PCI bus order


def _xgmi(inv: Inventory) -> set[tuple[str, str]]:
    return {tuple(sorted((lk.a, lk.b))) for lk in inv.links.values() if lk.kind == "xgmi"}  # type: ignore[misc]


def test_zero_weights_with_xgmi_one_hop_are_a_full_mesh(fx: Path) -> None:
    # By hand: WEIGHT TABLE all 0; HOPS TABLE 1 off the diagonal; LINK TYPE TABLE XGMI off the
    # diagonal; NUMA BW 0-0 (not stated). So every one of the 8*7/2 = 28 pairs is one xGMI hop:
    # 28 direct links, the full mesh of an 8-GPU MI355X board (7 links per GPU), bandwidth assumed.
    result = import_files("amd-smi", [fx / REAL], node="m")
    inv = result.inventory
    gpus = [f"m/gpu{k}" for k in range(8)]
    assert [inv.objects[g].labels["pci_busid"] for g in gpus] == [f"0000:{b}:00.0" for b in BUSES]
    pairs = {(a, b) for i, a in enumerate(gpus) for b in gpus[i + 1 :]}
    assert _xgmi(inv) == pairs
    links = [lk for lk in inv.links.values() if lk.kind == "xgmi"]
    assert {(lk.mbps, lk.labels.get("assumed")) for lk in links} == {(50000, "bandwidth")}
    for g in gpus:
        assert sum(1 for lk in links if g in (lk.a, lk.b)) == 7
    # One scale-up domain of 8 GPUs, not 8 domains of one.
    domains = {str(d) for _g, d in graph_facts(inv, {"scaleup_domain"})["scaleup_domain"]}
    assert domains == {"m/gpu0"}
    assert any("every weight is 0" in n.message and "28 pairs" in n.message for n in result.notes)


def test_zero_weights_keep_pcie_and_two_hop_pairs_out(fx: Path, tmp_path: Path) -> None:
    # Variant derived by hand from the real file: the pair 0d <-> f4 (gpu0, gpu7) rewritten as
    # PCIE at 2 hops, and the pair 26 <-> 5d (gpu1, gpu2) as XGMI at 2 hops (routed through a third GPU).
    # Expected: 28 - 2 = 26 direct links; neither edited pair has one.
    text = (fx / REAL).read_text()
    lines = text.splitlines()
    section = ""
    for i, line in enumerate(lines):
        if line.endswith("TABLE:"):
            section = line
            continue
        row = line.split(" ", 1)[0]
        for a, b, table, value in [
            ("0d", "f4", "LINK TYPE TABLE:", "PCIE"),
            ("0d", "f4", "HOPS TABLE:", "2"),
            ("26", "5d", "HOPS TABLE:", "2"),
        ]:
            for r, c in ((a, b), (b, a)):
                if section == table and row == f"0000:{r}:00.0":
                    cells = line.split()
                    cells[1 + BUSES.index(c)] = value
                    lines[i] = line = cells[0] + " " + " ".join(v.ljust(12) for v in cells[1:]).rstrip()
    path = tmp_path / "edited.txt"
    path.write_text("\n".join(lines) + "\n")
    inv = import_files("amd-smi", [path], node="m").inventory
    xgmi = _xgmi(inv)
    assert len(xgmi) == 26
    assert ("m/gpu0", "m/gpu7") not in xgmi and ("m/gpu1", "m/gpu2") not in xgmi


def test_filled_weights_are_still_read_as_before(fx: Path, tmp_path: Path) -> None:
    # The same file with weight 15 off the diagonal (what the driver writes for one xGMI hop) gives
    # the same 28 links, and no note about unfilled weights.
    text = (fx / REAL).read_text()
    head, rest = text.split("WEIGHT TABLE:\n", 1)
    table, tail = rest.split("HOPS TABLE:\n", 1)
    rows = table.splitlines()
    edited = [rows[0]]
    for k, row in enumerate(rows[1:]):
        cells = row.split()
        values = ["0" if j == k else "15" for j in range(8)]
        edited.append(cells[0] + " " + " ".join(v.ljust(12) for v in values).rstrip())
    path = tmp_path / "filled.txt"
    path.write_text(head + "WEIGHT TABLE:\n" + "\n".join(edited) + "\nHOPS TABLE:\n" + tail)
    result = import_files("amd-smi", [path], node="m")
    assert len(_xgmi(result.inventory)) == 28
    assert not any(re.search("every weight is 0", n.message) for n in result.notes)
