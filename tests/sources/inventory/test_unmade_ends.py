"""A foreach's cables whose ends are objects of nodes not made yet (Inventory.defer_objects) find
those ends node by node in the nodes' plans (templates._unmade_ends): the same cables, in the same
order, each end the object's own id string, as finding them end by end; and where that is not
certain (an end no node has, nodes of two templates, a "/" in a value), end by end, with the same
errors at the same lines."""

from __future__ import annotations

from typing import Any

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text, templates
from verifier.sources.inventory.model import Inventory

TEMPLATES = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "nic{i}", kind: nic, count: 2}
      - {name: cpu0, kind: cpu}
    links:
      - {a: "nic{n}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
  tray:
    kind: node
    children:
      - {name: "nic{i}", kind: nic, count: 2}
"""


def _fleet(links: str, second: str = "box") -> str:
    # Two pods of two nodes each (the second node of each from `second`) and two leaves per pod.
    return (
        TEMPLATES
        + f"""
objects:
  - name: "p{{i}}"
    kind: pod
    count: 2
    children:
      - {{template: box, name: "{{pod}}-n0"}}
      - {{template: {second}, name: "{{pod}}-n1"}}
      - {{name: "{{pod}}-leaf{{i}}", kind: switch, count: 2}}
    links:
{links}
"""
    )


def _cable(a: str, b: str, foreach: str) -> str:
    """The pods' one `links:` entry: a foreach of 1 GB/s Ethernet cables from `a` to `b`."""
    return f'      - {{a: "{a}", b: "{b}", kind: ethernet, bandwidth: 1 GB/s, foreach: {{{foreach}}}}}'


def _cables(inv: Inventory) -> list[tuple[str, str, str]]:
    return [(lk.id, lk.a, lk.b) for lk in inv.links.values() if lk.kind == "ethernet"]


def test_cables_to_nodes_not_made_take_their_ends_from_the_plans() -> None:
    inv = load_inventory_text(_fleet(_cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: 0..1")))
    # Every node is stamped whole, so their objects wait (the cables found their ends without them).
    assert sorted(inv.unmade_objects()) == ["p0-n0", "p0-n1", "p1-n0", "p1-n1"]
    # Per pod, n outer and l inner (foreach order): n0/nic0-leaf0, n0/nic1-leaf1, n1/nic0-leaf0,
    # n1/nic1-leaf1; the b end is the pod's leaf of the NIC's number.
    expected = [
        (f"{p}-n{n}/nic{k}<->{p}-leaf{k}", f"{p}-n{n}/nic{k}", f"{p}-leaf{k}")
        for p in ("p0", "p1")
        for n in (0, 1)
        for k in (0, 1)
    ]
    assert _cables(inv) == expected
    # Each end is its object's own id string (one string per NIC, however many cables name it).
    objects = inv.objects
    for lk in inv.links.values():
        if lk.kind == "ethernet":
            assert objects[lk.a].id is lk.a
            assert objects[lk.b].id is lk.b


def test_a_loop_whose_node_variable_comes_last_keeps_foreach_order() -> None:
    # foreach {l, n}: l outer, n inner, while the node (n) is written before the NIC (l) in `a`.
    inv = load_inventory_text(_fleet(_cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "l: 0..1, n: 0..1")))
    expected = [
        (f"{p}-n{n}/nic{k}<->{p}-leaf{k}", f"{p}-n{n}/nic{k}", f"{p}-leaf{k}")
        for p in ("p0", "p1")
        for k in (0, 1)
        for n in (0, 1)
    ]
    assert _cables(inv) == expected


def test_nodes_of_two_templates_are_cabled_end_by_end_alike() -> None:
    # p*-n1 is a tray (another plan): the ends are found one by one, the same cables.
    inv = load_inventory_text(
        _fleet(
            _cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: 0..1"),
            second="tray",
        )
    )
    assert [a for _id, a, _b in _cables(inv)] == [
        f"{p}-n{n}/nic{k}" for p in ("p0", "p1") for n in (0, 1) for k in (0, 1)
    ]
    objects = inv.objects
    assert all(objects[a].id is a for _id, a, _b in _cables(inv))


def test_a_value_holding_the_slash_is_cabled_end_by_end() -> None:
    # The node part is not before a "/" written in the pattern: the value itself holds it.
    inv = load_inventory_text(_fleet(_cable("{pod}-{e}", "{pod}-leaf0", "e: [n0/nic1, n1/nic0]")))
    assert [a for _id, a, _b in _cables(inv)] == ["p0-n0/nic1", "p0-n1/nic0", "p1-n0/nic1", "p1-n1/nic0"]


def test_a_cable_to_a_nic_no_node_has_is_reported_where_it_is_written() -> None:
    # nic2 is in no plan (count: 2 makes nic0 and nic1): the ends are read one by one, and the four
    # cables to nic2 (two pods, n0 and n1) are one mistake at the entry (its `{` on line 25, column
    # 9: the text's first line is empty, the templates take lines 2-17, the objects lines 18-24),
    # reported once for the first pod's n0 with the other three as copies.
    text = _fleet(_cable("{pod}-n{n}/nic{l}", "{pod}-leaf0", "n: 0..1, l: [0, 2]"))
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "fleet.yaml")
    assert str(err.value) == (
        "fleet.yaml:25:9: link endpoint 'p0-n0/nic2' does not exist; did you mean 'p0-n0/nic1'? (and 3 more copies)"
    )


def test_only_ends_outside_unmade_nodes_are_found_end_by_end(monkeypatch: pytest.MonkeyPatch) -> None:
    # Which ends go the end-by-end way (_each_end): with every node of one plan, only the leaves
    # (made objects); with a tray among them, the NICs too.
    forms: list[str] = []
    each_end = templates._each_end

    def recording(form: str, *args: Any, **kwargs: Any) -> tuple[list[str], bool]:
        if "\x00" not in form:  # not a template's own links, while its plan is made (templates._HOLE)
            forms.append(form)
        return each_end(form, *args, **kwargs)

    monkeypatch.setattr(templates, "_each_end", recording)
    load_inventory_text(_fleet(_cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: 0..1")))
    # The pattern as a format of one combination, the pod written in (templates._positional).
    assert forms == ["p0-leaf{1}", "p1-leaf{1}"]
    forms.clear()
    load_inventory_text(_fleet(_cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: 0..1"), second="tray"))
    assert forms == ["p0-n{0}/nic{1}", "p0-leaf{1}", "p1-n{0}/nic{1}", "p1-leaf{1}"]


NESTED = """
apiVersion: topolog.dev/v1
templates:
  host:
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, count: 2, children: [{name: "dram{i}", kind: memory}]}
    links: [{a: cpu0, b: cpu1, kind: upi, bandwidth: 64 GB/s}]  # (a plan with no link makes its objects at once)
objects:
  - {template: host, name: "h-{i}", count: 2}
  - {name: "mem-sw", kind: switch}
links:
  - {a: "h-{h}/dram{c}", b: mem-sw, kind: ethernet, bandwidth: 1 GB/s, foreach: {h: [a, b], c: 0..1}}
"""


def test_ends_under_a_device_and_nodes_named_by_a_text_value(monkeypatch: pytest.MonkeyPatch) -> None:
    # The nodes are h-0 and h-1 (count 2); the foreach names them through the text values a and b,
    # which name no node: every end is then looked for end by end and reported missing.
    with pytest.raises(TopologError, match="link endpoint 'h-a/dram0' does not exist"):
        load_inventory_text(NESTED)
    # Named by number, the four ends are the memories under the CPUs (`dram{i}` under `cpu{i}` takes
    # the CPU's i; a device's id is its node's and its own name, however deep it sits: h-0/dram0),
    # found in the plan without going end by end.
    forms: list[str] = []
    each_end = templates._each_end

    def recording(form: str, *args: Any, **kwargs: Any) -> tuple[list[str], bool]:
        if "\x00" not in form:
            forms.append(form)
        return each_end(form, *args, **kwargs)

    monkeypatch.setattr(templates, "_each_end", recording)
    inv = load_inventory_text(NESTED.replace("{h: [a, b], c: 0..1}", "{h: 0..1, c: 0..1}"))
    assert [(lk.a, lk.b) for lk in inv.links.values() if lk.kind == "ethernet"] == [
        ("h-0/dram0", "mem-sw"),
        ("h-0/dram1", "mem-sw"),
        ("h-1/dram0", "mem-sw"),
        ("h-1/dram1", "mem-sw"),
    ]
    assert forms == ["mem-sw"]  # only the switch, a made object
    objects = inv.objects
    assert all(objects[lk.a].id is lk.a for lk in inv.links.values() if lk.kind == "ethernet")
