"""Review of the by-head collision checks and the lazy cable-id table (templates.py Sink.heads,
CableIndex): ids that share a head with a foreach's cables, ids with no "/", and cables looked up
only after the load. Every expected value is worked out by hand from the text below."""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text

# Line 1 is apiVersion. Four nodes of one template (their links wait: Sink.deferred), two leaves.
HEAD = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "nic{i}", kind: nic, model: ConnectX-7, count: 2}
objects:
  - {name: "leaf{i}", kind: switch, count: 2}
  - {name: spine0, kind: switch}
  - {name: "n{i}", template: box, count: 4}
links:
"""
NIC_RUN = '  - {a: "n{n}/nic{l}", b: "leaf{l}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {n: 0..3, l: 0..1}}\n'
SPINE_RUN = '  - {a: "leaf{l}", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {l: 0..1}}\n'


def test_an_id_written_by_hand_before_a_run_sends_that_cable_to_a_free_id() -> None:
    # Line 12 names a leaf-to-leaf link by hand with the id the run of line 13 gives n3's nic1
    # cable: that cable, the run's last (n=3, l=1), takes "#2"; the seven others keep their ids.
    hand = '  - {id: "n3/nic1<->leaf1", a: leaf0, b: leaf1, kind: ethernet, bandwidth: 100 Gb/s}\n'
    inv = load_inventory_text(HEAD + hand + NIC_RUN, "t.yaml")
    links = inv.links
    assert (links["n3/nic1<->leaf1"].a, links["n3/nic1<->leaf1"].b) == ("leaf0", "leaf1")
    assert (links["n3/nic1<->leaf1#2"].a, links["n3/nic1<->leaf1#2"].b) == ("n3/nic1", "leaf1")
    assert links["n3/nic1<->leaf1#2"].loc.line == 13
    assert "n0/nic0<->leaf0#2" not in links and links["n0/nic0<->leaf0"].loc.line == 13


@pytest.mark.parametrize(("written", "lid"), [("x", "x"), ("/x", "x"), ("n1/x", "n1/x")])
def test_an_id_written_twice_around_a_run_is_a_duplicate(written: str, lid: str) -> None:
    # Lines 12 and 14 write the same id, with a run of cables between them: the second is refused
    # at its own line (14), naming the first (line 12). "x" has no "/"; "/x" is read from the top
    # level, as an end written so is, hence "x"; "n1/x" has a node's id as its head (round 16: "n1/",
    # the same head with an empty part after it, is refused as no id).
    one = '  - {id: "' + written + '", a: leaf0, b: leaf1, kind: ethernet, bandwidth: 100 Gb/s}\n'
    with pytest.raises(TopologError) as err:
        load_inventory_text(HEAD + one + NIC_RUN + one.replace("leaf1", "spine0"), "t.yaml")
    text = str(err.value)
    assert f"t.yaml:14:5: duplicate link id {lid!r} (first written at t.yaml:12:5)" in text


def test_a_cable_is_found_after_the_load_in_the_run_that_made_it() -> None:
    # Two runs kept whole (lines 12 and 13), no id looked up while loading: each cable's line is
    # its own run's, an id that differs after its first "/" is no cable, and the reversed pair
    # (spine0<->leaf0) is not the leaf0<->spine0 cable.
    inv = load_inventory_text(HEAD + SPINE_RUN + NIC_RUN, "t.yaml")
    assert len(inv.unmade_cables()) == 2
    assert inv.location("leaf1<->spine0").line == 12
    assert inv.location("n2/nic1<->leaf1").line == 13
    assert inv.has_link("n2/nic1<->leaf1") and not inv.has_link("n2/nic1<->leaf10")
    assert not inv.has_link("spine0<->leaf0") and not inv.has_link("n2")
    assert inv.unmade_cables()  # none of these questions made the cables


def test_the_same_run_written_twice_gives_the_second_free_ids() -> None:
    # SPINE_RUN on lines 12 and 13: the second run's two cables collide with the first's and take
    # "#2", in the order written.
    inv = load_inventory_text(HEAD + SPINE_RUN + SPINE_RUN, "t.yaml")
    ids = [lid for lid in inv.links if "spine0" in lid]
    assert ids == ["leaf0<->spine0", "leaf1<->spine0", "leaf0<->spine0#2", "leaf1<->spine0#2"]
    assert inv.links["leaf1<->spine0#2"].loc.line == 13
