"""A `foreach`'s cables made in one pass (templates.py _each_end): the same links, ids and order as
one combination at a time, whichever variables each end uses, and numbered where ids collide."""

from __future__ import annotations

import itertools

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.templates import _formatted

HEAD = """
apiVersion: topolog.dev/v1
objects:
  - {name: "s{i}", kind: switch, count: 3, start: 0}
  - {name: "t{i}", kind: switch, count: 12, start: 0}
links:
"""


def _cables(links: str) -> list[tuple[str, str, str]]:
    inv = load_inventory_text(HEAD + links, "t.yaml")
    return [(lid, lk.a, lk.b) for lid, lk in inv.links.items()]


def test_each_end_over_its_own_variables_in_the_loops_order() -> None:
    # x in 1..1, y in 0..2, z in 0..1 (z varies fastest): a = s{y} uses the middle variable only,
    # b = t{x}{z} the outer and the inner one, so b is "t1" followed by z: t10 or t11 (both exist).
    # Combination by combination: (1,0,0) s0-t10, (1,0,1) s0-t11, (1,1,0) s1-t10, (1,1,1) s1-t11,
    # (1,2,0) s2-t10, (1,2,1) s2-t11.
    cables = _cables(
        '  - {a: "s{y}", b: "t{x}{z}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {x: 1..1, y: 0..2, z: 0..1}}\n'
    )
    assert cables == [
        ("s0<->t10", "s0", "t10"),
        ("s0<->t11", "s0", "t11"),
        ("s1<->t10", "s1", "t10"),
        ("s1<->t11", "s1", "t11"),
        ("s2<->t10", "s2", "t10"),
        ("s2<->t11", "s2", "t11"),
    ]


def test_an_end_of_the_inner_variable_only_repeats_per_outer_value() -> None:
    # a = s{x} (outer, 0..1), b = t{z} (inner, 0..2): (0,0) s0-t0, (0,1) s0-t1, (0,2) s0-t2,
    # (1,0) s1-t0, (1,1) s1-t1, (1,2) s1-t2.
    cables = _cables('  - {a: "s{x}", b: "t{z}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {x: 0..1, z: 0..2}}\n')
    assert [lid for lid, _, _ in cables] == ["s0<->t0", "s0<->t1", "s0<->t2", "s1<->t0", "s1<->t1", "s1<->t2"]


def test_a_cable_made_twice_or_already_there_is_numbered() -> None:
    # The first entry cables s0 to t0 once; the foreach then makes s0-t0 for k = 0 and k = 1 (its
    # ends use no variable): those are the second and third s0-t0 links, "#2" and "#3"; then s0-t1
    # twice, the first taking the plain id, the second "#2".
    cables = _cables(
        "  - {a: s0, b: t0, kind: ethernet, bandwidth: 100 Gb/s}\n"
        '  - {a: s0, b: "t{j}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {j: 0..1, k: 0..1}}\n'
    )
    assert [lid for lid, _, _ in cables] == ["s0<->t0", "s0<->t0#2", "s0<->t0#3", "s0<->t1", "s0<->t1#2"]


NODES = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
      - {name: cpu0, kind: cpu}
      - {name: nic0, kind: nic}
    links:
      - {a: gpu0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
      - {a: nic0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
objects:
  - {template: box, name: "n{i}", count: 2}
  - {name: sw0, kind: switch}
links:
"""


def test_a_foreach_cable_with_a_stamped_links_id_is_numbered_after_it() -> None:
    # Each node's own links wait to be made (its plan's); the foreach cables gpu0 to cpu0 again in
    # each node, "n0/gpu0<->n0/cpu0" and "n1/gpu0<->n1/cpu0": ids the nodes' links have, so those
    # are made first and the cables take "#2".
    inv = load_inventory_text(
        NODES + '  - {a: "n{k}/gpu0", b: "n{k}/cpu0", kind: pcie, bandwidth: 64 GB/s, foreach: {k: 0..1}}\n', "t.yaml"
    )
    for n in ("n0", "n1"):
        assert inv.links[f"{n}/gpu0<->{n}/cpu0"].origin == n
        cable = inv.links[f"{n}/gpu0<->{n}/cpu0#2"]
        assert (cable.origin, cable.mbps) == (None, 64_000)


def test_cables_that_start_in_a_stamped_node_but_are_none_of_its_links() -> None:
    # The NICs cabled to sw0 ("n0/nic0<->sw0", "n1/nic0<->sw0") start with the nodes' ids like the
    # nodes' own links, but none of those ends in "sw0": the nodes' links stay unmade, the cables keep
    # their plain ids, and each node still has its 2 links once they are read.
    inv = load_inventory_text(
        NODES + '  - {a: "n{k}/nic0", b: sw0, kind: ethernet, bandwidth: 400 Gb/s, foreach: {k: 0..1}}\n', "t.yaml"
    )
    assert set(inv.unmade_links()) == {"n0", "n1"}
    assert sorted(lid for lid, lk in inv.links.items() if lk.origin is None) == ["n0/nic0<->sw0", "n1/nic0<->sw0"]
    assert len([lk for lk in inv.links.values() if lk.origin == "n1"]) == 2


def test_loops_of_one_shape_with_other_variables_used_keep_their_own_order() -> None:
    # Both entries loop x in 0..1, y in 0..2 (the same sizes, 2 x 3): the positions of each end in
    # the product are worked out once per shape and per variables used, so the second entry, whose
    # ends use the other variable each, must not take the first's. First: a = s{x}, b = t{y}:
    # (0,0) s0-t0, (0,1) s0-t1, (0,2) s0-t2, (1,0) s1-t0, (1,1) s1-t1, (1,2) s1-t2. Second:
    # a = s{y}, b = t1{x}: (0,0) s0-t10, (0,1) s1-t10, (0,2) s2-t10, (1,0) s0-t11, (1,1) s1-t11,
    # (1,2) s2-t11.
    cables = _cables(
        '  - {a: "s{x}", b: "t{y}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {x: 0..1, y: 0..2}}\n'
        '  - {a: "s{y}", b: "t1{x}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {x: 0..1, y: 0..2}}\n'
    )
    assert [lid for lid, _, _ in cables] == [
        "s0<->t0",
        "s0<->t1",
        "s0<->t2",
        "s1<->t0",
        "s1<->t1",
        "s1<->t2",
        "s0<->t10",
        "s1<->t10",
        "s2<->t10",
        "s0<->t11",
        "s1<->t11",
        "s2<->t11",
    ]


def test_a_cable_end_that_is_no_object_is_reported_by_its_text() -> None:
    # s{x} for x in 0..3: s3 does not exist (HEAD has s0..s2), so the ends are not all objects;
    # the cables are still made, s3's by its text, and the load names s3 as a missing endpoint.
    with pytest.raises(TopologError) as err:
        _cables('  - {a: "s{x}", b: t0, kind: ethernet, bandwidth: 100 Gb/s, foreach: {x: 0..3}}\n')
    assert [d.message for d in err.value.diagnostics] == ["link endpoint 's3' does not exist"]


FORMS = """
apiVersion: topolog.dev/v1
objects:
  - {name: "t{i}", kind: switch, count: 12, start: 0}
  - {name: "u{i}{i}", kind: switch, count: 2, start: 0}
  - {name: "v{i:02d}", kind: switch, count: 12, start: 0}
  - {name: s0, kind: switch}
links:
"""


def test_ends_with_fields_in_any_order_twice_or_number_formats() -> None:
    # The ends are grown field by field where the fields name the loop's variables in order, each
    # once; otherwise formatted combination by combination. Both give the same cables:
    # 1. a = t{z}{x} (fields out of order), x in 0..1, z in 1..1: (0,1) t10, (1,1) t11.
    # 2. a = u{x}{x} (x twice), x in 0..1: u00, u11 (the objects "u{i}{i}" made).
    # 3. a = v{x:02d} and b = t{y} (in order, a number format), x in 9..10, y in 0..1:
    #    (9,0) v09-t0, (9,1) v09-t1, (10,0) v10-t0, (10,1) v10-t1.
    inv = load_inventory_text(
        FORMS
        + '  - {a: "t{z}{x}", b: s0, kind: ethernet, bandwidth: 100 Gb/s, foreach: {x: 0..1, z: 1..1}}\n'
        + '  - {a: "u{x}{x}", b: s0, kind: ethernet, bandwidth: 100 Gb/s, foreach: {x: 0..1}}\n'
        + '  - {a: "v{x:02d}", b: "t{y}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {x: 9..10, y: 0..1}}\n',
        "t.yaml",
    )
    assert list(inv.links) == [
        "t10<->s0",
        "t11<->s0",
        "u00<->s0",
        "u11<->s0",
        "v09<->t0",
        "v09<->t1",
        "v10<->t0",
        "v10<->t1",
    ]
    # Each end is its object's own id string (the cable holds no copy of it).
    assert inv.links["v09<->t1"].a is inv.objects["v09"].id


@pytest.mark.parametrize(
    ("form", "sub"),
    [
        ("su0007-r{0}-n{1}/nic{2}", [[0, 1], [0, 1, 2], [5, 6]]),  # a pod's NIC ends: grown field by field
        ("spine{2:02d}", [[0], [3], [0, 15]]),  # one field, the first two variables unused
        ("{0}{{x}}{1}", [["a", "b"], [1, 2]]),  # braces written in the text
        ("t{1}{0}", [[0, 1], [1, 2]]),  # out of order: one combination at a time
        ("u{0}{0}", [[0, 1]]),  # one variable twice
        ("w{0}", [[]]),  # no value: no end
        ("const", [[1]]),  # no field
    ],
)
def test_formatted_ends_are_str_format_of_each_combination(form: str, sub: list[list[int | str]]) -> None:
    # The reference is str.format over itertools.product, the way the ends were made before.
    expected = list(itertools.starmap(form.format, itertools.product(*sub)))
    assert _formatted(form, sub) == expected
