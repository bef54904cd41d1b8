"""Adversarial review of the cable ends found in unmade nodes' plans (templates._unmade_ends, with
the heads it hands _note_all): on inventories made to hit its edges, the loader makes the same
objects and links, in the same order, with the same fields and errors, as the end-by-end way it
replaced (the way it still falls back to, forced here by making _unmade_ends find nothing).

Each inventory below has pods of nodes stamped whole from one template (their objects wait:
Sink.unmade_objects), so that a `foreach` cable to their NICs can take the node-by-node way; the
edge each one tries is said beside it. Where the answer is written out, it is derived by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text, templates
from verifier.sources.inventory.model import Inventory

# Lines 1-23 (the text starts with an empty line 1): templates. `box`: cpu0 with a NIC of its own
# (`nicx`: a device's id is its node's and its own name, however deep it sits), two GPUs, two NICs
# and PCIe links from each NIC and GPU to cpu0. `tray`: three NICs (another plan).
TEMPLATES = """
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: edge}
templates:
  box:
    kind: node
    children:
      - name: cpu0
        kind: cpu
        children: [{name: nicx, kind: nic}]
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: "nic{n}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
      - {a: "gpu{n}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {n: 0..1}}
  tray:
    kind: node
    children:
      - {name: "nic{i}", kind: nic, count: 3}
  lonenic:
    kind: node
    children: [{name: nic0, kind: nic}]
"""


def _pods(nodes: str, links: str, *, count: int = 2, tail: str = "") -> str:
    """`count` pods p0, p1, ...: `nodes` (entries), three leaves {pod}-leaf0..2, the pod's `links`."""
    return (
        TEMPLATES
        + f"""objects:
  - name: "p{{i}}"
    kind: pod
    count: {count}
    children:
{nodes}      - {{name: "{{pod}}-leaf{{i}}", kind: switch, count: 3}}
    links:
{links}{tail}"""
    )


def _nodes(tmpl: str = "box", count: int = 2, name: str = "{pod}-n{i}", more: str = "") -> str:
    return f'      - {{template: {tmpl}, name: "{name}", count: {count}{more}}}\n'


def _cable(a: str, b: str, foreach: str, more: str = "") -> str:
    """A `foreach` of 1 GB/s Ethernet cables (line 32 of a _pods text when it is the first link)."""
    return f'      - {{a: "{a}", b: "{b}", kind: ethernet, bandwidth: 1 GB/s, foreach: {{{foreach}}}{more}}}\n'


_NIC5 = '  - {name: "n0/nic5", kind: nic}\n'
_BESIDE = """objects:
{before}  - {{template: box, name: "n{{i}}", count: 2}}
{after}  - {{name: "leaf{{i}}", kind: switch, count: 2}}
links:
  - {{a: "n{{n}}/nic{{l}}", b: "leaf{{l}}", kind: ethernet, bandwidth: 1 GB/s, foreach: {{n: 0..1, l: 0..1}}}}
  - {{a: "n{{n}}/nic5", b: leaf0, kind: ethernet, bandwidth: 1 GB/s, foreach: {{n: [0]}}}}
"""
_RACK = """templates:
  rack:
    kind: rack
    children:
      - {template: box, name: "{rack}-n{i}", count: 2}
"""
STD = _cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: 0..1")
OVERRIDE = ",\n         overrides: {{{}}}"

# name -> (inventory, whether some cable must take the node-by-node way)
CASES: dict[str, tuple[str, bool]] = {
    # An override on one node of a pod: that node is made at once, so its pod's cables go end by
    # end; the other pod's nodes are all unmade (node by node).
    "override-state": (_pods(_nodes(more=OVERRIDE.format("p0-n1: {state: down}")), STD), True),
    "override-device-down": (_pods(_nodes(more=OVERRIDE.format("p1-n0: {devices: {nic1: {state: down}}}")), STD), True),
    # The removed NIC's cable is left out (Sink.removed): the other pod is cabled node by node while
    # `removed` is not empty (the heads are then worked out from the cables kept).
    "override-remove": (_pods(_nodes(more=OVERRIDE.format("p1-n0: {devices: {nic1: {remove: true}}}")), STD), True),
    "pod-override-remove": (
        _pods(_nodes(), STD, tail="    overrides:\n      p0: {devices: {p0-n0/nic1: {remove: true}}}\n"),
        True,
    ),
    # A node with children of its own is not stamped whole: a cable to a NIC only it has, and
    # each pod's cables over one unmade and one made node: end by end.
    "own-children": (
        _pods(
            _nodes(count=1) + '      - {template: box, name: "{pod}-n1", children: [{name: nic9, kind: nic}]}\n',
            STD + _cable("{pod}-n1/nic9", "{pod}-leaf2", "x: [0]"),
        ),
        False,
    ),
    "device-under-cpu": (_pods(_nodes(), _cable("{pod}-n{n}/nicx", "{pod}-leaf2", "n: 0..1")), True),
    # `l: [0, 0, 1]`: the same cable twice per node (the second takes #2).
    "same-end-twice": (_pods(_nodes(), _cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: [0, 0, 1]")), True),
    # A variable no end names (s), first or last: each cable made once per its value.
    "unused-variable": (
        _pods(_nodes(), _cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: 0..1, s: 0..1")),
        True,
    ),
    "unused-variable-first": (
        _pods(_nodes(), _cable("{pod}-n{n}/nic{l}", "{pod}-leaf0", "s: 0..2, n: 0..1, l: 0..1")),
        True,
    ),
    # One variable in the node and in the NIC; the loop's order unlike the pattern's.
    "variable-twice": (_pods(_nodes(), _cable("{pod}-n{l}/nic{l}", "{pod}-leaf{l}", "l: 0..1")), True),
    "loop-order": (_pods(_nodes(), _cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "l: 0..1, n: 0..1")), True),
    # Node names that are prefixes of others (n1, n10).
    "prefix-names": (
        _pods(_nodes(count=11), _cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "n: [1, 10, 0], l: 0..1")),
        True,
    ),
    # a made (overridden) and b unmade, and the other way round; both ends unmade.
    "made-to-unmade": (
        _pods(
            _nodes(more=OVERRIDE.format("p0-n0: {labels: {x: y}}, p1-n0: {labels: {x: y}}")),
            _cable("{pod}-n0/nic{l}", "{pod}-n1/nic{l}", "l: 0..1"),
        ),
        True,
    ),
    "unmade-to-made": (
        _pods(
            _nodes(more=OVERRIDE.format("p0-n0: {labels: {x: y}}, p1-n0: {labels: {x: y}}")),
            _cable("{pod}-n1/nic{l}", "{pod}-n0/nic{l}", "l: 0..1"),
        ),
        True,
    ),
    "unmade-to-unmade": (_pods(_nodes(), _cable("{pod}-n1/nic{l}", "{pod}-n0/nic{l}", "l: 0..1")), True),
    # The same cables written twice (the second entry's take #2), in the same and in another order.
    "entry-twice": (_pods(_nodes(), STD + STD), True),
    "entry-twice-reordered": (
        _pods(_nodes(), STD + _cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "l: 0..1, n: 0..1")),
        True,
    ),
    "non-ascii": (
        _pods(_nodes(name="{pod}-nœud{i}"), _cable("{pod}-nœud{n}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: 0..1")),
        True,
    ),
    "padded": (
        _pods(_nodes(name="{pod}-n{i:02d}"), _cable("{pod}-n{n:02d}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: 0..1")),
        True,
    ),
    "text-values": (
        _pods(
            '      - {template: box, name: "{pod}-a"}\n      - {template: box, name: "{pod}-b"}\n',
            _cable("{pod}-{n}/nic{l}", "{pod}-leaf{l}", "n: [a, b], l: 0..1"),
        ),
        True,
    ),
    "down-cables": (
        _pods(_nodes(), _cable("{pod}-n{n}/nic{l}", "{pod}-leaf{l}", "n: 0..1, l: 0..1", ", state: down")),
        True,
    ),
    # A template of one child and no link: its plan makes its objects at once (nothing unmade).
    "one-child-template": (_pods(_nodes(tmpl="lonenic"), _cable("{pod}-n{n}/nic0", "{pod}-n{n}", "n: 0..1")), False),
    # A cable with a template link's id (n/nic0<->n/cpu0): the deferred links are made first, the
    # cable takes #2 (_note_all, with the heads found node by node); then twice over (#3).
    "template-link-id": (_pods(_nodes(), _cable("{pod}-n{n}/nic{l}", "{pod}-n{n}/cpu0", "n: 0..1, l: 0..1")), True),
    "template-link-id-twice": (
        _pods(_nodes(), 2 * _cable("{pod}-n{n}/nic{l}", "{pod}-n{n}/cpu0", "n: 0..1, l: 0..1")),
        True,
    ),
    # Cables over the whole inventory (no scope), within and across pods.
    "top-level": (
        _pods(
            _nodes(),
            "",
            tail="""links:
  - {a: "p{p}-n{n}/nic{l}", b: "p{q}-n{n}/nic{l}", kind: ethernet, bandwidth: 1 GB/s,
     foreach: {p: [0], q: [1], n: 0..1, l: 0..1}}
""",
        ).replace("    links:\nlinks:", "links:"),
        True,
    ),
    # Nodes of two templates in a pod; a "/" in a value: end by end only. (A variable without values
    # is refused at reading: tests/sources/inventory/test_loading_adversarial.py.)
    "two-templates": (_pods(_nodes(count=1) + '      - {template: tray, name: "{pod}-n1"}\n', STD), False),
    "slash-in-value": (_pods(_nodes(), _cable("{pod}-{e}", "{pod}-leaf0", "e: [n0/nic1, n1/nic0]")), False),
    # An object of n0's head made beside it while n0 waits (n0/nic5: no plan name), then cables to
    # the plan's NICs (node by node) and to n0/nic5 (end by end); written before n0, it keeps n0 made.
    "object-beside-unmade-node": (TEMPLATES + _BESIDE.format(before="", after=_NIC5), True),
    "object-before-node": (TEMPLATES + _BESIDE.format(before=_NIC5, after=""), False),
    # A rack template holding node templates: the racks are no nodes, their nodes wait.
    "rack-template": (
        TEMPLATES.replace("templates:\n", _RACK)
        + """objects:
  - {template: rack, name: "k{i}", count: 2}
  - {name: "leaf{i}", kind: switch, count: 2}
links:
  - {a: "k{r}-n{n}/nic{l}", b: "leaf{l}", kind: ethernet, bandwidth: 1 GB/s, foreach: {r: 0..1, n: 0..1, l: 0..1}}
""",
        True,
    ),
}


def _rows(inv: Inventory) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], int]:
    """Every link and object with every field, in table order; and how many link ends are not their
    object's own id string (each end an object's id string is what keeps a fleet's ends shared)."""
    objects = inv.objects
    links = [
        (
            lk.id,
            lk.a,
            lk.b,
            lk.kind,
            lk.mbps,
            str(lk.loc),
            dict(lk.attrs),
            dict(lk.labels),
            lk.state,
            lk.origin,
            dict(lk.plan),
        )
        for lk in inv.links.values()
    ]
    objs = [
        (
            o.id,
            o.kind,
            o.parent,
            str(o.loc),
            o.model,
            dict(o.labels),
            dict(o.quantities),
            o.state,
            o.template,
            o.index,
            o.origin,
        )
        for o in objects.values()
    ]
    copies = sum(
        1 for lk in inv.links.values() for end in (lk.a, lk.b) if end in objects and objects[end].id is not end
    )
    return links, objs, copies


class _Counted:
    """_unmade_ends, counting the foreach ends it found node by node (or, `off`, finding none)."""

    def __init__(self, off: bool) -> None:
        self.off, self.found, self.real = off, 0, templates._unmade_ends

    def __call__(self, *args: Any) -> Any:
        if self.off:
            return None
        out = self.real(*args)
        self.found += out is not None
        return out


@pytest.fixture
def counted() -> tuple[_Counted, _Counted]:
    """The node-by-node way (counting) and the end-by-end way (monkeypatch puts _unmade_ends back)."""
    return _Counted(False), _Counted(True)


def _load(monkeypatch: pytest.MonkeyPatch, text: str, finder: _Counted) -> Inventory:
    monkeypatch.setattr(templates, "_unmade_ends", finder)
    return load_inventory_text(text, "fleet.yaml")


@pytest.mark.parametrize("name", sorted(CASES))
def test_node_by_node_and_end_by_end_make_the_same_inventory(
    name: str, monkeypatch: pytest.MonkeyPatch, counted: tuple[_Counted, _Counted]
) -> None:
    text, node_by_node = CASES[name]
    fast, slow = counted
    new, old = _rows(_load(monkeypatch, text, fast)), _rows(_load(monkeypatch, text, slow))
    assert new == old
    assert new[2] == 0  # every end is its object's own id string, either way
    assert (fast.found > 0) is node_by_node  # the edge was taken (or, for the last three, not)


@pytest.mark.parametrize(
    "foreach, expected",
    [
        # A NIC no plan has (nic5): reported once at the entry (line 32, column 9: the text's first
        # line is empty, the templates take lines 2-23, the pods 24-31), for the first pod's first
        # node, the other three copies counted (n0 and n1 of p0 and p1). The hint is difflib's among
        # the node's own ids (validate._near): nic0, nic1 and nicx each 18/20 alike, the tie to the
        # greatest text, nicx.
        (
            "n: 0..1, l: [0, 5]",
            "link endpoint 'p0-n0/nic5' does not exist; did you mean 'p0-n0/nicx'? (and 3 more copies)",
        ),
        # A node no pod has (n7): its two NICs in two pods, one mistake with three copies. No id
        # starts with p0-n7/, so the hint is among ids without "/": p0-n0 shares p0-n and the last 0
        # (2 * 5 / 15 = 0.67), the others at most 4 characters (0.53, under difflib's 0.6).
        ("n: [0, 7], l: 0..1", "link endpoint 'p0-n7/nic0' does not exist; did you mean 'p0-n0'? (and 3 more copies)"),
    ],
)
def test_a_missing_end_is_reported_alike(
    foreach: str, expected: str, monkeypatch: pytest.MonkeyPatch, counted: tuple[_Counted, _Counted]
) -> None:
    text = _pods(_nodes(), _cable("{pod}-n{n}/nic{l}", "{pod}-leaf0", foreach))
    messages = []
    for finder in counted:
        with pytest.raises(TopologError) as err:
            _load(monkeypatch, text, finder)
        messages.append(str(err.value))
    assert messages == [f"fleet.yaml:32:9: {expected}"] * 2


def _ethernet(inv: Inventory) -> list[tuple[str, str, str]]:
    return [(lk.id, lk.a, lk.b) for lk in inv.links.values() if lk.kind == "ethernet"]


def test_prefix_names_keep_the_loop_order() -> None:
    # 11 nodes per pod (n0..n10); n takes 1, 10, 0 in that order, l (inner) 0 and 1; NIC l goes
    # to leaf l. n1 is not mistaken for n10's prefix nor the other way round.
    inv = load_inventory_text(CASES["prefix-names"][0])
    assert _ethernet(inv) == [
        (f"{p}-n{n}/nic{k}<->{p}-leaf{k}", f"{p}-n{n}/nic{k}", f"{p}-leaf{k}")
        for p in ("p0", "p1")
        for n in (1, 10, 0)
        for k in (0, 1)
    ]


def test_a_cable_with_a_template_links_id_takes_the_next_number() -> None:
    # box's plan has a PCIe link `nic{n}<->cpu0` per NIC: the cable p0-n0/nic0 -> p0-n0/cpu0 has
    # that id, so it is p0-n0/nic0<->p0-n0/cpu0#2 (the template's link keeps the plain id and its
    # place); the second entry's cables are #3.
    inv = load_inventory_text(CASES["template-link-id-twice"][0])
    expected = [
        (f"{p}-n{n}/nic{k}<->{p}-n{n}/cpu0#{h}", f"{p}-n{n}/nic{k}", f"{p}-n{n}/cpu0")
        for p in ("p0", "p1")
        for h in (2, 3)
        for n in (0, 1)
        for k in (0, 1)
    ]
    assert _ethernet(inv) == expected
    pcie = [lk.id for lk in inv.links.values() if lk.kind == "pcie" and lk.b.endswith("/cpu0") and "nic" in lk.a]
    assert pcie == [f"{p}-n{n}/nic{k}<->{p}-n{n}/cpu0" for p in ("p0", "p1") for n in (0, 1) for k in (0, 1)]


def test_a_removed_nic_leaves_its_cable_out_and_the_other_pod_is_cabled_whole() -> None:
    # p0's override removes p0-n0/nic1: of p0's four cables three are left (n0/nic0, n1/nic0,
    # n1/nic1); p1's four are all there.
    inv = load_inventory_text(CASES["pod-override-remove"][0])
    assert [a for _id, a, _b in _ethernet(inv)] == [
        "p0-n0/nic0",
        "p0-n1/nic0",
        "p0-n1/nic1",
        "p1-n0/nic0",
        "p1-n0/nic1",
        "p1-n1/nic0",
        "p1-n1/nic1",
    ]


def test_non_ascii_node_names_are_cabled() -> None:
    inv = load_inventory_text(CASES["non-ascii"][0])
    assert [a for _id, a, _b in _ethernet(inv)] == [
        f"{p}-nœud{n}/nic{k}" for p in ("p0", "p1") for n in (0, 1) for k in (0, 1)
    ]
