"""check_inventory passes over a foreach's cables made in one pass (validate._suspects) only while
their run is whole and none of their ends was removed: the same links reported as reading each."""

from __future__ import annotations

import pytest

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.model import Link
from verifier.sources.inventory.validate import _suspects

LOC = SourceLocation("t.yaml", 1)
OBJECTS = {"s0": None, "s1": None, "t0": None}


def _links(*pairs: tuple[str, str]) -> dict[str, Link]:
    return {f"{a}<->{b}": Link(f"{a}<->{b}", a, b, "ethernet", 1, LOC) for a, b in pairs}


def test_a_whole_run_is_passed_over_and_the_rest_read() -> None:
    # The run is the first two cables (s0-t0, s1-t0: both ends objects); s1-gone after it names no
    # object and is reported.
    links = _links(("s0", "t0"), ("s1", "t0"), ("s1", "gone"))
    run = ("s0<->t0", "s1<->t0", 2, ["s0", "s1"], ["t0", "t0"])
    assert [lk.id for lk in _suspects(links, OBJECTS, set(), [run], set())] == ["s1<->gone"]


def test_a_run_cut_short_is_read_one_by_one() -> None:
    # A cable to a missing object sits where the run's second cable should be (the run no longer
    # follows on): passing over two cables from s0-t0 would pass over it; read one by one, it is found.
    links = _links(("s0", "t0"), ("s0", "gone"), ("s1", "t0"))
    run = ("s0<->t0", "s1<->t0", 2, ["s0", "s1"], ["t0", "t0"])
    assert [lk.id for lk in _suspects(links, OBJECTS, set(), [run], set())] == ["s0<->gone"]


def test_a_run_with_a_removed_end_is_read_one_by_one() -> None:
    # s1 was removed after the run was made (it is no object any more): the run is not passed over,
    # and its one cable naming s1 (s1-t0) is reported.
    links = _links(("s0", "t0"), ("s1", "t0"))
    run = ("s0<->t0", "s1<->t0", 2, ["s0", "s1"], ["t0", "t0"])
    objects = {"s0": None, "t0": None}
    assert [lk.id for lk in _suspects(links, objects, set(), [run], {"s1"})] == ["s1<->t0"]


def test_foreach_cables_to_a_missing_switch_are_still_reported() -> None:
    # The leaf "{p}-leaf9" does not exist: those cables are not a run of known ends, so each is
    # checked and the missing endpoint reported (once, with its copies counted).
    text = """
apiVersion: topolog.dev/v1
objects:
  - {name: "p{i}", kind: switch, count: 2}
  - {name: spine0, kind: switch}
links:
  - {a: "p{p}", b: spine0, kind: ethernet, bandwidth: 100 Gb/s, foreach: {p: 0..1}}
  - {a: "p{p}-leaf9", b: spine0, kind: ethernet, bandwidth: 100 Gb/s, foreach: {p: 0..1}}
"""
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    assert "link endpoint 'p0-leaf9' does not exist" in str(err.value)
    assert "1 more copy" in str(err.value)
