"""One root cause, one finding: `@group` columns, and rows that say the same of one written line."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from verifier.checks.check import checks_from_program
from verifier.checks.verify import finding_fingerprint, root_causes
from verifier.core.errors import ProgramError, SourceLocation
from verifier.engine.parser import parse_program

DOWN = """# @id: TEST001
# @severity: error
# @summary: A GPU lost its links.
# @remediation: Reseat it.
# @reports: cut_off
# @subjects: link, gpu
# @group: gpu
# @message: GPU {gpu} is cut off; down: {link}.
.input down(l: symbol, g: symbol)
.decl cut_off(link: symbol, gpu: symbol)
cut_off(L, G) :- down(L, G).
"""

# Where each subject is written: the links each on a line of their own, both GPUs on one
# `count:` line (line 3), as template instances are.
WRITTEN = {"g0-sw0": 10, "g0-sw1": 11, "g1-sw0": 12, "n/gpu0": 3, "n/gpu1": 3}


def _locate(subjects: Sequence[str]) -> SourceLocation | None:
    lines = [WRITTEN[s] for s in subjects if s in WRITTEN]
    return SourceLocation("inv.yaml", lines[0], 5) if lines else None


def test_rows_that_agree_on_the_group_columns_are_one_finding() -> None:
    [check] = checks_from_program(parse_program(DOWN, "t.dl"))
    rows = [("g0-sw1", "n/gpu0"), ("g1-sw0", "n/gpu1"), ("g0-sw0", "n/gpu0")]
    groups = root_causes(check, rows, _locate)
    # n/gpu0 lost two links (lines 10 and 11), n/gpu1 one (line 12): two findings, located
    # at their first link's line, so the two GPUs' line 3 does not merge them.
    assert groups == [[("g0-sw0", "n/gpu0"), ("g0-sw1", "n/gpu0")], [("g1-sw0", "n/gpu1")]]
    first = groups[0]
    assert check.subjects_of_rows(first) == ("g0-sw0", "g0-sw1", "n/gpu0")
    assert check.message_for_rows(first) == "GPU n/gpu0 is cut off; down: g0-sw0, g0-sw1."
    # Every row of the group has the finding's fingerprint (the GPU's), whichever link it names.
    assert finding_fingerprint(check, first[0]) == finding_fingerprint(check, first[1])
    assert finding_fingerprint(check, first[0]) != finding_fingerprint(check, groups[1][0])


NIC = """# @id: TEST002
# @severity: warning
# @summary: A NIC slot is too narrow.
# @remediation: Use a wider slot.
# @reports: starved
# @subjects: nic
# @message: NIC {nic} runs at {mbps} MB/s.
.input rate(n: symbol, m: number)
.input link_attr(l: symbol, a: symbol, v: number)
.decl starved(nic: symbol, mbps: number)
starved(N, M) :- rate(N, M), link_attr(N, "lanes", _).
"""

# The same finding about a node's own software: it reads no relation made from the links.
SOFT = """# @id: TEST003
# @severity: error
# @summary: A driver is too old.
# @remediation: Upgrade it.
# @reports: old
# @subjects: node
# @message: Node {node} runs {driver}.
.input software(n: symbol, c: symbol, v: symbol)
.decl old(node: symbol, driver: symbol)
old(N, V) :- software(N, "driver", V).
"""


def test_instances_of_one_line_that_say_the_same_are_one_finding() -> None:
    [check] = checks_from_program(parse_program(NIC, "t.dl"))
    written = {"w0/nic0": 7, "w1/nic0": 7, "w2/nic0": 7, "w3/nic0": 20, "w4/nic0": 7}
    # The lines that wrote each NIC's links: w4's slot was cabled by a line of its own (30).
    wired = {"w0/nic0": (9,), "w1/nic0": (9,), "w2/nic0": (9,), "w3/nic0": (9,), "w4/nic0": (30,)}

    def locate(subjects: Sequence[str]) -> SourceLocation | None:
        return SourceLocation("inv.yaml", written[subjects[0]], 9)

    rows = [("w2/nic0", 7876), ("w0/nic0", 7876), ("w1/nic0", 3938), ("w3/nic0", 7876), ("w4/nic0", 7876)]
    # w0 and w2: written on line 7, wired by line 9, at 7876: one finding. w1: line 7 too but
    # at another rate, its own. w3: written elsewhere (line 20), its own. w4: line 7 and 7876,
    # but wired apart (line 30): its slot's cause is its own cable, so its own finding.
    assert root_causes(check, rows, locate, wired.__getitem__) == [
        [("w0/nic0", 7876), ("w2/nic0", 7876)],
        [("w1/nic0", 3938)],
        [("w3/nic0", 7876)],
        [("w4/nic0", 7876)],
    ]
    assert check.message_for_rows([("w0/nic0", 7876), ("w2/nic0", 7876)]) == "NIC w0/nic0, w2/nic0 runs at 7876 MB/s."


def test_a_check_that_reads_no_link_merges_copies_wired_apart() -> None:
    # A driver too old on a template line: the instance whose links an override changed (n3,
    # wired by line 30) runs the same driver for the same reason, so it is part of the one finding.
    [check] = checks_from_program(parse_program(SOFT, "t.dl"))
    [nic] = checks_from_program(parse_program(NIC, "t.dl"))
    assert (check.reads_links, nic.reads_links) == (False, True)
    wired = {"n1": (9,), "n2": (9,), "n3": (30,)}
    rows = [("n3", "470.57.02"), ("n1", "470.57.02"), ("n2", "470.57.02")]
    groups = root_causes(check, rows, lambda _s: SourceLocation("inv.yaml", 7, 9), wired.__getitem__)
    assert groups == [[("n1", "470.57.02"), ("n2", "470.57.02"), ("n3", "470.57.02")]]


def test_without_a_wiring_nothing_merges() -> None:
    # The default wiring is the id itself: every subject wired apart (the library's safe default).
    [check] = checks_from_program(parse_program(NIC, "t.dl"))
    rows = [("a", 1), ("b", 1)]
    assert root_causes(check, rows, lambda _s: SourceLocation("inv.yaml", 3, 1)) == [[("a", 1)], [("b", 1)]]


def test_rows_placed_nowhere_stay_apart() -> None:
    [check] = checks_from_program(parse_program(NIC, "t.dl"))
    rows = [("a", 1), ("b", 1)]
    assert root_causes(check, rows, lambda _s: SourceLocation("inv.yaml")) == [[("a", 1)], [("b", 1)]]


@pytest.mark.parametrize("value", ["nic, speed", ""])
def test_group_must_name_columns(value: str) -> None:
    with pytest.raises(ProgramError) as info:
        checks_from_program(
            parse_program(NIC.replace("# @subjects: nic", f"# @subjects: nic\n# @group: {value}"), "f.dl")
        )
    [message] = [str(d) for d in info.value.diagnostics]
    assert message.startswith("f.dl:7:1: '@group' names unknown columns")
    assert message.endswith("starved has nic, mbps")


PCIE = """# @id: TEST004
# @severity: warning
# @summary: A GPU's PCIe link runs below the GPU.
# @remediation: Reseat it.
# @reports: slow
# @subjects: gpu, link
# @message: GPU {gpu} runs Gen{gen} on {link}.
.input link_attr(l: symbol, a: symbol, v: number)
.input at(l: symbol, g: symbol)
.decl slow(gpu: symbol, link: symbol, gen: number)
slow(G, L, V) :- at(L, G), link_attr(L, "generation", V).
"""


def test_a_finding_that_names_its_link_compares_the_lines_of_that_link() -> None:
    # n1..n3's gpu0 are written on line 3, and their PCIe links on line 9; n3's gpu0 also has an
    # NVLink of its own (line 30), which this finding is not about: one finding. n4's link was
    # written apart (line 40), so its finding is its own.
    [check] = checks_from_program(parse_program(PCIE, "t.dl"))
    written = {"n1/gpu0": 3, "n2/gpu0": 3, "n3/gpu0": 3, "n4/gpu0": 3, "l1": 9, "l2": 9, "l3": 9, "l4": 40}
    wired = {"n1/gpu0": (9,), "n2/gpu0": (9,), "n3/gpu0": (9, 30), "n4/gpu0": (40,), "l1": None, "l2": None}
    wired |= {"l3": None, "l4": None}

    def locate(subjects: Sequence[str]) -> SourceLocation | None:
        return SourceLocation("inv.yaml", written[subjects[0]], 5)

    rows = [("n1/gpu0", "l1", 4), ("n2/gpu0", "l2", 4), ("n3/gpu0", "l3", 4), ("n4/gpu0", "l4", 4)]
    assert root_causes(check, rows, locate, wired.__getitem__) == [
        [("n1/gpu0", "l1", 4), ("n2/gpu0", "l2", 4), ("n3/gpu0", "l3", 4)],
        [("n4/gpu0", "l4", 4)],
    ]


RAIL = """# @id: TEST005
# @severity: error
# @summary: A GPU lands on another rail.
# @remediation: Re-cable.
# @reports: off_rail
# @subjects: gpu, nic
# @message: GPU {gpu} reaches the fabric through {nic} of rail {rail}.
.input link_attr(l: symbol, a: symbol, v: number)
.input near(g: symbol, n: symbol, r: number)
.decl off_rail(gpu: symbol, nic: symbol, rail: number)
off_rail(G, N, R) :- near(G, N, R), link_attr(N, "lanes", _).
"""


def test_copies_naming_several_objects_merge_when_each_is_wired_as_its_counterpart() -> None:
    # n1..n3 copy one node type: gpu2 (line 3) lands on nic0 (line 5). Each copy's GPU is wired by
    # line 9 and its NIC by line 10, except n3's GPU, which an override of line 30 also wires: n1 and
    # n2 are one finding, n3 its own.
    [check] = checks_from_program(parse_program(RAIL, "t.dl"))
    written = {f"n{i}/{d}": line for i in (1, 2, 3) for d, line in (("gpu2", 3), ("nic0", 5))}
    wired = {f"n{i}/gpu2": (9,) for i in (1, 2)} | {"n3/gpu2": (9, 30)} | {f"n{i}/nic0": (10,) for i in (1, 2, 3)}

    def locate(subjects: Sequence[str]) -> SourceLocation | None:
        return SourceLocation("inv.yaml", written[subjects[0]], 5)

    rows = [("n1/gpu2", "n1/nic0", 0), ("n2/gpu2", "n2/nic0", 0), ("n3/gpu2", "n3/nic0", 0)]
    assert root_causes(check, rows, locate, wired.__getitem__) == [
        [("n1/gpu2", "n1/nic0", 0), ("n2/gpu2", "n2/nic0", 0)],
        [("n3/gpu2", "n3/nic0", 0)],
    ]
