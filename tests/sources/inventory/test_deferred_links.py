"""Stamped nodes' links are made when first read, and cabling is rendered once per entry: the
inventory is the one made link by link, in the same order, with the same ids and errors."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory import loader as loader_module
from verifier.sources.inventory.model import Inventory
from verifier.sources.inventory.patterns import compile_pattern
from verifier.sources.inventory.templates import Sink, _positional, resolve

FLEET = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: cpu0, b: cpu1, kind: upi, bandwidth: 64 GB/s}
      - {a: "nic{n}", b: "cpu{n}", kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
objects:
  - name: "p{i}"
    kind: pod
    count: 2
    children:
      - {template: box, name: "{pod}-n{i}", count: 2}
      - {name: "{pod}-leaf{i}", kind: switch, count: 2}
    links:
      - {a: "{pod}-n{n}/nic{l}", b: "{pod}-leaf{l}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {n: 0..1, l: 0..1}}
EXTRA
"""


def _eager(text: str, monkeypatch: pytest.MonkeyPatch) -> Inventory:
    """The inventory with every link made as it is stamped (nothing deferred)."""

    def sink(*args: Any, **kwargs: Any) -> Sink:
        kwargs["deferred"] = None
        return Sink(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(loader_module, "Sink", sink)
        inv = load_inventory_text(text, "t.yaml")
        assert "links" in inv.__dict__
        return inv


def _rows(inv: Inventory) -> list[tuple[object, ...]]:
    return [(lid, lk, lk.origin, lk.plan) for lid, lk in inv.links.items()]


def _errors(text: str) -> list[str]:
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    return [f"{d.location}: {d.message}" for d in err.value.diagnostics]


EXTRAS = {
    "nothing": "",
    # Cables whose ends hold no "/" (each id is its own head, templates.py expand_link), beside cables
    # from the stamped nodes' NICs.
    "a leaf-to-spine foreach with no slash in its ends": """  - {name: "s{i}", kind: switch, count: 2}
links:
  - {a: "p{p}-leaf{l}", b: "s{s}", kind: infiniband, bandwidth: 800 Gb/s, foreach: {p: 0..1, l: 0..1, s: 0..1}}
  - {a: "p{p}-n{n}/nic{l}", b: "s{l}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: 0..1, n: 0..1, l: 0..1}}
""",
    "a top-level cable with a stamped link's id": """links:
  - {a: p0-n0/cpu0, b: p0-n0/cpu1, kind: upi, bandwidth: 64 GB/s}
  - {a: "p{p}-n1/cpu0", b: "p{p}-n1/cpu1", kind: upi, bandwidth: 64 GB/s, foreach: {p: 0..1}}
""",
    "a link written before its node, with the node's link's id": """  - name: late
    kind: rack
    links: [{a: /late-n0/cpu0, b: /late-n0/cpu1, kind: upi, bandwidth: 64 GB/s}]
  - {template: box, name: late-n0}
""",
    "a stamped node with an override": """  - template: box
    name: "x{i}"
    count: 2
    overrides: {x1: {links: [{a: cpu0, b: cpu1, state: down}]}}
""",
    "a node with a link of its own": """  - template: box
    name: own
    links: [{a: cpu0, b: nic1, kind: pcie, generation: 4, lanes: 8}]
""",
    "cabling whose ends are absolute or relative to a node": """  - template: box
    name: solo
    children: [{name: "port{i}", kind: nic, count: 2}]
    links:
      - {a: "port{i}", b: "/p0-leaf{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1}}
      - {a: "/solo/port{i}", b: "cpu{i}", kind: pcie, generation: 4, lanes: 4, foreach: {i: 0..1}}
""",
}


@pytest.mark.parametrize("extra", list(EXTRAS), ids=list(EXTRAS))
def test_links_are_those_made_link_by_link(extra: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = FLEET.replace("EXTRA", EXTRAS[extra])
    inv = load_inventory_text(text, "t.yaml")
    eager = _eager(text, monkeypatch)
    assert _rows(inv) == _rows(eager)
    assert inv == eager


def test_a_whole_stamped_node_makes_its_links_when_they_are_read() -> None:
    inv = load_inventory_text(FLEET.replace("EXTRA", ""), "t.yaml")
    assert "links" not in inv.__dict__  # objects only, so far
    assert inv.objects["p1-n0/cpu1"].origin == "p1-n0"
    assert inv.location("p1-n1/cpu0<->p1-n1/cpu1").line == 10
    upi = inv.links["p1-n1/cpu0<->p1-n1/cpu1"]
    assert upi.origin == "p1-n1" and upi.a is inv.objects["p1-n1/cpu0"].id
    assert list(inv.links)[:8] == [
        "p0-n0/cpu0<->p0-n0/cpu1",
        "p0-n0/nic0<->p0-n0/cpu0",
        "p0-n0/nic1<->p0-n0/cpu1",
        "p0-n1/cpu0<->p0-n1/cpu1",
        "p0-n1/nic0<->p0-n1/cpu0",
        "p0-n1/nic1<->p0-n1/cpu1",
        "p0-n0/nic0<->p0-leaf0",
        "p0-n0/nic1<->p0-leaf1",
    ]


def test_cables_name_their_ends_by_the_objects_own_ids() -> None:
    # The pods' cabling "{pod}-n{n}/nic{l}" -> "{pod}-leaf{l}" is made after the pod's children, so
    # both ends exist by then: each cable holds the object's id string itself, not a copy of its text
    # (a fleet's cables would otherwise keep a copy per end, 17 MiB at 131,072 GPUs).
    inv = load_inventory_text(FLEET.replace("EXTRA", ""), "t.yaml")
    cable = inv.links["p1-n0/nic1<->p1-leaf1"]
    assert (cable.a, cable.b) == ("p1-n0/nic1", "p1-leaf1")
    assert cable.a is inv.objects["p1-n0/nic1"].id
    assert cable.b is inv.objects["p1-leaf1"].id


def test_a_cable_named_as_a_deferred_link_is_numbered_after_it() -> None:
    inv = load_inventory_text(
        FLEET.replace("EXTRA", "links: [{a: p1-n0/cpu0, b: p1-n0/cpu1, kind: upi, bandwidth: 64 GB/s}]"), "t.yaml"
    )
    assert inv.links["p1-n0/cpu0<->p1-n0/cpu1#2"].origin is None
    assert inv.links["p1-n0/cpu0<->p1-n0/cpu1"].origin == "p1-n0"


def test_a_link_id_a_deferred_link_has_is_a_duplicate() -> None:
    extra = "links: [{id: p1-n0/cpu0<->p1-n0/cpu1, a: p1-n0/cpu0, b: p1-n0/nic1, kind: pcie, generation: 5, lanes: 16}]"
    assert _errors(FLEET.replace("EXTRA", extra)) == [
        "t.yaml:21:9: duplicate link id 'p1-n0/cpu0<->p1-n0/cpu1' (first written at t.yaml:10:9)"
    ]


def test_deferred_links_are_checked_when_their_plan_is_not_sound() -> None:
    # A plan cabled to a switch that does not exist: every copy's links are read, one by one.
    cable = "\n      - {a: nic1, b: /nowhere, kind: ethernet, bandwidth: 100 Gb/s}"
    text = FLEET.replace("EXTRA", "").replace("foreach: {n: 0..1}}", "foreach: {n: 0..1}}" + cable)
    assert _errors(text) == ["t.yaml:12:9: link endpoint 'nowhere' does not exist"]


PATTERNS = ["nic{l}", "/leaf{l:02d}", "{pod}-r{r}/x{l}", "/{pod}-leaf{l}", "{{lit}}{r}", "{d}{l}", "", "/", "{pod}"]


@pytest.mark.parametrize("text", PATTERNS)
@pytest.mark.parametrize("scope", [None, "n0", "a{b}"])
def test_cabling_ends_render_as_each_combination_would(text: str, scope: str | None) -> None:
    pattern = compile_pattern(text)
    names = ["r", "l", "d"]
    loop: list[tuple[int | str, ...]] = [(0, 1), (0, 7, 12), ("gpu", "nic")]
    ns: dict[str, int | str] = {"pod": "su0001", "i": 3}
    form = _positional(pattern, names, loop, ns, scope)
    for combo in itertools.product(*loop):
        expected = resolve(pattern.render({**ns, **dict(zip(names, combo, strict=True))}), scope)
        if form is not None:
            assert form.format(*combo) == expected


def test_cabling_ends_that_cannot_be_written_out_before_the_loop() -> None:
    loop: list[tuple[int | str, ...]] = [(0, 1), ("a", "/b")]
    assert _positional(compile_pattern("{x}{i}"), ["i"], loop[:1], {}, None) is None  # {x} is not defined
    assert _positional(compile_pattern("n{d:02d}"), ["i", "d"], loop, {}, None) is None  # text under a number
    assert _positional(compile_pattern("{d}"), ["i", "d"], loop, {}, "s") is None  # "/" or not depends on d
    assert _positional(compile_pattern("{p:02d}"), ["i"], loop[:1], {"p": "x"}, None) is None
    assert _positional(compile_pattern("/a{i}"), ["i"], loop[:1], {}, "s") == "a{0}"
    assert _positional(compile_pattern("a{i}"), ["i"], loop[:1], {}, "s{") == "s{{/a{0}"


@pytest.mark.parametrize("extra", list(EXTRAS), ids=list(EXTRAS))
def test_links_are_found_and_placed_without_being_made(extra: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = FLEET.replace("EXTRA", EXTRAS[extra])
    inv = load_inventory_text(text, "t.yaml")
    deferred = bool(inv.unmade_links())
    eager = _eager(text, monkeypatch)
    asked = [*eager.links, *(lid + "x" for lid in eager.links), *(lid[:-1] for lid in eager.links)]
    asked += ["\x00p1-n0", "p1-n0", "p1-n0/", "p1-n0/cpu0", "p9-n0/cpu0<->p9-n0/cpu1", ""]
    for lid in asked:
        assert inv.has_link(lid) == (lid in eager.links), lid
        assert inv.location(lid) == eager.location(lid), lid
    assert ("links" not in inv.__dict__) == deferred
    assert inv.has_link("p0-n1/cpu0<->p0-n1/cpu1") and inv.location("p0-n1/cpu0<->p0-n1/cpu1").line == 10
