"""verify's wiring index (link_lines, the lines that wrote the links of each id and of what it
holds) is read from the inventory without making the links it has not made yet: the same
answers as an index over every made link, on shipped, realistic and generated inventories."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from verifier.checks.verify import Place, _WiringIndex, link_lines
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.model import Inventory

ROOT = Path(__file__).resolve().parents[2]

HAND = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: nic0, kind: nic}
    links:
      - {a: gpu0, b: gpu1, kind: nvlink, bandwidth: 100 GB/s}
      - {a: nic0, b: gpu0, kind: pcie, generation: 5, lanes: 16}
      - {a: nic0, b: /mgmt, kind: ethernet, bandwidth: 1 Gb/s}
objects:
  - {name: mgmt, kind: switch}
  - {name: leaf, kind: switch}
  - {template: box, name: "n{i}", count: 3}
links:
  - {a: "n{i}/nic0", b: leaf, kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: 0..1}}
  - {a: n2/nic0, b: leaf, kind: infiniband, bandwidth: 400 Gb/s}
"""


def _lines(inv: Inventory, subject: str) -> list[int]:
    return sorted(line for _file, line, _col in _WiringIndex(inv).places(subject))


def test_the_index_by_hand_makes_no_link() -> None:
    inv = load_inventory_text(HAND, "h.yaml")
    # n0..n2 are stamped whole (their links wait in the plan), n0-n1's cables are one run (line 17).
    assert sorted(inv.unmade_links()) == ["n0", "n1", "n2"] and len(inv.unmade_cables()) == 1
    # The plan's lines: 9 (gpu0-gpu1), 10 (nic0-gpu0), 11 (nic0 to the absolute /mgmt); the run of
    # cables n0/nic0, n1/nic0 -> leaf is line 17, the cable n2/nic0 -> leaf line 18. An id gets the
    # lines of the links that end on it or on anything under it ("/").
    assert _lines(inv, "n0/gpu0") == [9, 10]
    assert _lines(inv, "n0/gpu1") == [9]
    assert _lines(inv, "n0/nic0") == [10, 11, 17]
    assert _lines(inv, "n0") == [9, 10, 11, 17]
    assert _lines(inv, "n1") == [9, 10, 11, 17]
    assert _lines(inv, "n2") == [9, 10, 11, 18]
    assert _lines(inv, "n2/nic0") == [10, 11, 18]
    assert _lines(inv, "leaf") == [17, 18]
    assert _lines(inv, "mgmt") == [11]
    # Not ids of the inventory, though they start like some: nothing.
    assert _lines(inv, "n") == [] and _lines(inv, "n0/gpu") == [] and _lines(inv, "n3") == []
    assert "links" not in vars(inv)  # still deferred
    # Through link_lines: a link is placed by its own line (None), an object by its wiring.
    wiring = link_lines(inv)
    assert wiring("n0/gpu0<->n0/gpu1") is None
    assert wiring("n0/gpu1") == (("h.yaml", 9, 9),)
    assert "links" not in vars(inv)


def _from_links(inv: Inventory) -> dict[str, set[Place]]:
    """The index as it was built before: over every link, made."""
    out: dict[str, set[Place]] = {}
    for link in inv.links.values():
        where = (link.loc.file, link.loc.line, link.loc.col)
        for end in (link.a, link.b):
            while end:
                out.setdefault(end, set()).add(where)
                end = end.rpartition("/")[0]
    return out


FLEET = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: cpu0, b: cpu1, kind: upi, bandwidth: 64 GB/s}
      - {a: "nic{n}", b: "cpu{n}", kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
      - {a: nic1, b: /mgmt, kind: ethernet, bandwidth: 1 Gb/s}
  boxed:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2, overrides: {gpu1: {state: down}}}
      - {name: nic0, kind: nic}
    links:
      - {a: "gpu{i}", b: nic0, kind: pcie, generation: 5, lanes: 16, foreach: {i: 0..1}}
objects:
  - {name: mgmt, kind: switch}
  - name: "p{i}"
    kind: pod
    count: 2
    children:
      - {template: box, name: "{pod}-n{i}", count: 3}
      - {name: "{pod}-leaf{i}", kind: switch, count: 2}
    links:
      - {a: "{pod}-n{n}/nic{l}", b: "{pod}-leaf{l}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {n: 0..1, l: 0..1}}
EXTRA
"""

EXTRAS = {
    "nothing": "",
    "a loose cable to a node of a run": """links:
  - {a: p0-n2/nic0, b: p0-leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: p0-leaf0, b: p1-leaf0, kind: infiniband, bandwidth: 400 Gb/s}
""",
    "an override of a stamped node's links": """  - template: box
    name: "x{i}"
    count: 2
    overrides: {x1: {links: [{a: cpu0, b: cpu1, state: down}]}}
""",
    "a removed device": """  - template: box
    name: "r{i}"
    count: 2
    overrides: {r1: {devices: {nic1: {remove: true}}}}
""",
    "a removed instance, and cables written to it": """  - template: box
    name: "d{i}"
    count: 3
    overrides: {d1: {remove: true}}
links:
  - {a: "d{i}/nic0", b: p0-leaf0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: 0..2}}
""",
    "an override in a template's body": """  - {template: boxed, name: "b{i}", count: 2}
""",
    "a node with children and links of its own": """  - template: box
    name: solo
    children: [{name: "port{i}", kind: nic, count: 2}]
    links:
      - {a: "port{i}", b: "/p0-leaf{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1}}
      - {a: "/solo/port{i}", b: "cpu{i}", kind: pcie, generation: 4, lanes: 4, foreach: {i: 0..1}}
""",
}


def _generated_fleet() -> str:
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.verify_bench import Layout, inventory_yaml
    finally:
        sys.path.remove(str(ROOT))
    return inventory_yaml(Layout(512))


INVENTORIES = {
    **{f"fleet, {name}": "" for name in EXTRAS},
    "generated fleet": "",
    **{
        str(p.relative_to(ROOT)): ""
        for p in sorted(
            [
                *(ROOT / "inventories").glob("*.yaml"),
                *(ROOT / "tests" / "sources" / "inventory" / "realistic").glob("*.yaml"),
            ]
        )
    },
}


def _text(name: str) -> str:
    if name.startswith("fleet, "):
        return FLEET.replace("EXTRA", EXTRAS[name.removeprefix("fleet, ")])
    if name == "generated fleet":
        return _generated_fleet()
    return (ROOT / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(INVENTORIES))
def test_the_index_is_the_one_over_every_made_link(name: str) -> None:
    text = _text(name)
    deferred = load_inventory_text(text, "t.yaml")
    was_deferred = "links" not in vars(deferred)
    index = _WiringIndex(deferred)
    assert ("links" not in vars(deferred)) == was_deferred  # building it made no link
    expected = _from_links(load_inventory_text(text, "t.yaml"))
    ids = set(expected) | set(deferred.objects) | {x + "x" for x in expected} | {x + "/x" for x in expected}
    wrong = {x: (index.places(x), expected.get(x)) for x in ids if index.places(x) != frozenset(expected.get(x, ()))}
    assert not wrong


def test_the_fleets_above_defer_links_and_cables() -> None:
    # Else the comparison above would only read made links.
    for name in ("fleet, nothing", "generated fleet"):
        inv = load_inventory_text(_text(name), "t.yaml")
        assert inv.unmade_links() and inv.unmade_cables(), name


@pytest.mark.parametrize("name", [n for n in INVENTORIES if n.startswith(("inventories/", "fleet, "))])
def test_link_lines_answers_as_the_index_over_made_links(name: str) -> None:
    # link_lines walks made links when nothing is deferred (a shipped example) and reads plans and
    # runs otherwise (a fleet): either way each id gets the lines of the index over every made link.
    text = _text(name)
    expected = _from_links(load_inventory_text(text, "t.yaml"))
    inv = load_inventory_text(text, "t.yaml")
    inv.links  # noqa: B018 - made before asking, as the inventories a shipped example loads are
    wiring = link_lines(inv)
    assert all(wiring(x) == tuple(sorted(expected[x])) for x in expected if not inv.has_link(x))
