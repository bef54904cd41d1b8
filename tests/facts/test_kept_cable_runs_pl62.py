"""The facts of a run of cables not made yet (Inventory.unmade_cables) with `keep` (what a placement
keeps: GPUs and their ancestors): a cable is kept only where both its ends are, and a run with no
kept end on one side gives no row at all, whichever side that is."""

from __future__ import annotations

import pytest

from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text

# Two leaves and two NICs; one foreach cables nic0 -> leaf0 and nic1 -> leaf1 (a run of two cables,
# not made yet), and leaf0 -> leaf1 is written alone. 400 Gb/s is 50,000 MB/s per direction.
FLEET = """apiVersion: topolog.dev/v1
objects:
  - {name: "leaf{i}", kind: switch, count: 2}
  - {name: "nic{i}", kind: nic, count: 2}
links:
  - {a: leaf0, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: "nic{p}", b: "leaf{p}", kind: infiniband, bandwidth: 400 Gb/s, labels: {cable: c}, foreach: {p: 0..1}}
"""


@pytest.mark.parametrize(
    ("keep", "cables"),
    [
        # No NIC kept (side a): no cable, though both leaves (side b) are.
        ({"leaf0", "leaf1"}, []),
        # No leaf kept (side b): no cable, though both NICs (side a) are.
        ({"nic0", "nic1"}, []),
        # Nothing of either side.
        ({"other"}, []),
        # Both ends of nic1's cable only: that cable, none of nic0's (its leaf0 is not kept).
        ({"nic0", "nic1", "leaf1"}, ["nic1<->leaf1"]),
        # Every end: both cables, in the order written.
        ({"nic0", "nic1", "leaf0", "leaf1"}, ["nic0<->leaf0", "nic1<->leaf1"]),
    ],
)
def test_a_run_gives_the_cables_with_both_ends_kept(keep: set[str], cables: list[str]) -> None:
    inv = load_inventory_text(FLEET, "t.yaml")
    assert [run[0] for run in inv.unmade_cables().values()] == [["nic0<->leaf0", "nic1<->leaf1"]]
    facts = inventory_facts(inv, keep=keep)
    run_links = [r for r in facts["link"] if str(r[0]).startswith("nic")]
    assert [r[0] for r in run_links] == cables
    assert all(r[3:] == ("infiniband", 50_000) for r in run_links)
    # Each kept cable has its label, and only those.
    assert [r[0] for r in facts["label"] if r[1] == "cable"] == cables
    # leaf0 <-> leaf1 is written alone: kept where both leaves are.
    alone = [r[0] for r in facts["link"] if r[0] == "leaf0<->leaf1"]
    assert alone == (["leaf0<->leaf1"] if {"leaf0", "leaf1"} <= keep else [])
    assert inv.unmade_cables()  # reading the facts made none of them
