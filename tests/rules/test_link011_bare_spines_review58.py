"""Review 58 of R-FP: a fabric whose spines are declared and not one cable to them is no rail-only fabric.

LINK011 leaves a network none of whose leaves has an uplink unjudged (a rail-only fabric, one leaf
per rail, has islands by design), and LINK004 judges only leaves in a pod or fleet. gb200-nvl72.yaml
writes its 4 rail leaves (gb-leaf0..3) and 2 spines (gb-spine0..1) outside every object; its
leaf-to-spine block (9 NDR cables from each leaf to each spine) dropped left both spines with no
link at all and no finding anywhere (before R-FP too; R-FP's split per network also lost the same
fault in its own realistic inventories, where base found it only through the storage leaves).

By hand: the 4 leaves each serve the rack's 18 trays and reach no other switch, so they are 4
islands of one leaf each; the main island is the one with most leaves, the smallest id among equals:
gb-leaf0. Each of the other 3 is one LINK011 finding. With the spines removed as well (objects and
cables), the rack is rail-only by design and nothing is added.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.verify_run import VerifyRun, verify

GB200 = Path(__file__).resolve().parents[2] / "inventories" / "gb200-nvl72.yaml"
_UPLINKS = """  - a: "gb-leaf{l}"
    b: "gb-spine{s}"
    kind: infiniband
    count: 9
    bandwidth: 3.6 Tb/s            # 9 NDR cables per leaf-spine pair
    foreach: {l: 0..3, s: [0, 1]}
"""
_SPINES = """  - name: "gb-spine{i}"
    kind: switch
    model: QM9700
    count: 2
    labels: {role: spine}
"""


def _findings(path: Path, engine: str) -> frozenset[tuple[str, tuple[str, ...]]]:
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    return frozenset((r.finding.rule, r.finding.subjects) for r in report.results)


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
@pytest.mark.parametrize(
    ("spines_kept", "added"),
    [
        (True, {("LINK011", ("gb-leaf1",)), ("LINK011", ("gb-leaf2",)), ("LINK011", ("gb-leaf3",))}),
        (False, set()),
    ],
)
def test_uncabled_spines_leave_every_leaf_an_island(
    spines_kept: bool, added: set[tuple[str, tuple[str, ...]]], engine: str, tmp_path: Path
) -> None:
    text = GB200.read_text(encoding="utf-8")
    assert text.count(_UPLINKS) == 1 and text.count(_SPINES) == 1
    pristine = tmp_path / "pristine.yaml"
    pristine.write_text(text, encoding="utf-8")
    seeded_text = text.replace(_UPLINKS, "")
    if not spines_kept:
        seeded_text = seeded_text.replace(_SPINES, "")
    seeded = tmp_path / "seeded.yaml"
    seeded.write_text(seeded_text, encoding="utf-8")
    before, after = _findings(pristine, engine), _findings(seeded, engine)
    assert before <= after
    assert after - before == added
