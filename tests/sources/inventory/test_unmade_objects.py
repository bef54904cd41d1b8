"""The objects of nodes stamped whole are made when `Inventory.objects` is first read
(Inventory.defer_objects): until then they are looked up in their plans (`found`) and passed
over (`objects_but`). Whatever reads them gets the inventory made object by object: the same
objects, field by field, in the same order; the same errors, in the same order."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.authorization.entities import check_label_types
from verifier.core.errors import TopologError
from verifier.facts.whole_nodes import objects_without, whole_nodes
from verifier.placement.place import gpus_and_ancestors
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory import loader as loader_module
from verifier.sources.inventory.model import Inventory, Obj
from verifier.sources.inventory.templates import Sink

FLEET = """\
apiVersion: topolog.dev/v1
templates:
  socket:
    kind: cpu
    labels: {numa: "yes"}
    children:
      - {name: "core{i}", kind: core, count: 2}
  box:
    kind: node
    labels: {zone: z1}
    children:
      - {template: socket, name: cpu0}
      - {name: cpu1, kind: cpu}
      - {name: "gpu{i}", kind: gpu, count: 2, labels: {slot: "{i}"}}
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

# What each extra adds after the pods: its objects come after theirs, as written.
EXTRAS = {
    "nothing": "",
    "an override": """  - template: box
    name: "x{i}"
    count: 2
    overrides: {x1: {devices: {nic0: {labels: {rail: "7"}}, gpu1: {state: down}}}}
""",
    "an override that removes a device": """  - template: box
    name: "y{i}"
    count: 2
    overrides: {y0: {devices: {gpu1: {remove: true}}}}
""",
    "an override naming another node's device": """  - template: box
    name: "w{i}"
    count: 2
    overrides: {w1: {devices: {/p0-n0/gpu0: {state: down}}}}
""",
    "an object put into a stamped node's device with parent:": """  - {name: dimm0, kind: memory, parent: p0-n1/cpu0}
""",
    "an object put into a stamped node with parent:": """  - {name: extra-nic, kind: nic, parent: p1-n0}
""",
    "a node stamped twice under one name": """  - {template: box, name: p0-n1}
""",
    "a rack named as a stamped node": """  - name: p1-n1
    kind: rack
    children: [{name: gpu0, kind: gpu}]
""",
    "an object named as a stamped node's device": """  - {name: "p1-n1/gpu0", kind: gpu}
""",
    "a node under a stamped node's name": """  - {name: "p1-n1/x", kind: node, children: [{name: gpu0, kind: gpu}]}
""",
    "a cable to a device a stamped node lacks": """links:
  - {a: p0-n0/nic5, b: p0-leaf0, kind: infiniband, bandwidth: 400 Gb/s}
""",
    "a cable to a stamped node's device, written at the top": """links:
  - {a: p1-n1/gpu1, b: p1-leaf1, kind: ethernet, bandwidth: 100 Gb/s}
""",
    "cabling in a foreach with an end a stamped node lacks": """links:
  - {a: "p0-n{n}/nic{l}", b: p0-leaf0, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..1, l: 0..2}}
""",
    "cabling in a foreach to stamped nodes' devices and a switch": """links:
  - {a: "p{p}-n{n}/gpu{g}", b: "p{p}-leaf{g}", kind: ethernet, bandwidth: 100 Gb/s,
      foreach: {p: 0..1, n: 0..1, g: 0..1}}
  - {a: "p{p}-leaf0", b: "p{p}-n0/nic{l}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {p: 0..1, l: [1]}}
""",
    "memory serving a stamped node's GPU": """  - name: pool
    kind: memory
    serves: [p0-n0/gpu0, p1-n1/gpu1]
""",
    "a node with children of its own": """  - template: box
    name: own
    children: [{name: "port{i}", kind: nic, count: 2}]
""",
    "a quarantine label that is no boolean": """  - template: box
    name: "q{i}"
    count: 2
    labels: {quarantine: "maybe"}
""",
}


def _eager(text: str, monkeypatch: pytest.MonkeyPatch) -> Inventory:
    """The inventory with every object made as it is stamped (nothing left unmade)."""

    def sink(*args: Any, **kwargs: Any) -> Sink:
        kwargs["unmade_objects"] = None
        return Sink(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(loader_module, "Sink", sink)
        inv = load_inventory_text(text, "t.yaml")
        assert not inv.unmade_objects()
        return inv


def _rows(objects: Any) -> list[tuple[object, ...]]:
    """Every field of each object, `origin` (left out of ==) included, in the table's order."""
    return [
        (oid, o.id, o.kind, o.parent, o.loc, o.model, dict(o.labels), dict(o.quantities), *_rest(o))
        for oid, o in objects.items()
    ]


def _rest(o: Obj) -> tuple[object, ...]:
    return (o.state, o.template, o.index, o.origin)


def _outcome(text: str) -> tuple[Inventory | None, list[str]]:
    try:
        return load_inventory_text(text, "t.yaml"), []
    except TopologError as err:
        return None, [f"{d.location}: {d.message}" for d in err.diagnostics]


@pytest.mark.parametrize("extra", list(EXTRAS), ids=list(EXTRAS))
def test_objects_made_when_read_are_those_made_as_stamped(extra: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = FLEET.replace("EXTRA", EXTRAS[extra])
    inv, errors = _outcome(text)
    try:
        eager: Inventory | None = _eager(text, monkeypatch)
        eager_errors: list[str] = []
    except TopologError as err:
        eager, eager_errors = None, [f"{d.location}: {d.message}" for d in err.diagnostics]
    assert errors == eager_errors
    if inv is None or eager is None:
        assert inv is eager is None
        return
    ids = [*eager.objects, "p0-n0/gpu9", "p0-n0/", "p0-n0", "p9-n0/gpu0", "p0-n0/gpu0/x", ""]
    for oid in ids:  # looked up and placed without making anything
        assert (oid in inv.found) == (oid in eager.objects), oid
    assert [inv.location(oid) for oid in ids] == [eager.location(oid) for oid in ids]
    assert sorted(gpus_and_ancestors(inv)) == sorted(gpus_and_ancestors(eager))
    skip = whole_nodes(inv)
    assert _rows({o.id: o for o in objects_without(inv, skip)}) == _rows({o.id: o for o in eager.objects_but(skip)})
    assert _rows(inv.objects) == _rows(eager.objects)
    assert inv == eager


def test_a_fleet_of_whole_nodes_leaves_their_objects_unmade() -> None:
    inv = load_inventory_text(FLEET.replace("EXTRA", ""), "t.yaml")
    # Two pods of two nodes stamped whole from box, each of whose plans makes a socket with 2 cores,
    # a second CPU, 2 GPUs and 2 NICs: 8 objects a node, 32 in all, none made yet. Made: the 2 pods,
    # their 4 nodes and 4 leaves, 10; with the plans' 32, 42 objects.
    assert sorted(inv.unmade_objects()) == ["p0-n0", "p0-n1", "p1-n0", "p1-n1"]
    assert inv.objects_so_far() == -10
    assert "p1-n0/core1" in inv.found and "p1-n0/core2" not in inv.found
    # The socket's line (line 12: `- {template: socket, name: cpu0}`) made p1-n0/cpu0; its core, line 7.
    assert (inv.location("p1-n0/cpu0").line, inv.location("p1-n0/core1").line) == (12, 7)
    assert inv.unmade_objects()  # nothing asked so far made anything
    gpu = inv.found["p0-n1/gpu1"]  # got: made, with its node's others
    assert (gpu.parent, dict(gpu.labels), gpu.origin) == ("p0-n1", {"slot": "1"}, "p0-n1")
    assert len(inv.objects) == 42
    assert not inv.unmade_objects() and inv.objects_so_far() == 42
    assert inv.objects["p0-n1/gpu1"] is gpu  # the very object got before
    # Each node's plan objects right after it, in its plan's order (the socket, then its cores).
    assert list(inv.objects)[:11] == [
        "p0",
        "p0-n0",
        "p0-n0/cpu0",
        "p0-n0/core0",
        "p0-n0/core1",
        "p0-n0/cpu1",
        "p0-n0/gpu0",
        "p0-n0/gpu1",
        "p0-n0/nic0",
        "p0-n0/nic1",
        "p0-n1",
    ]


def test_cables_to_unmade_objects_name_them_by_the_ids_they_will_have() -> None:
    # The pods' cabling "{pod}-n{n}/nic{l}" is made while the nodes' objects are not: its ends are
    # found in the plans, and each cable holds the id string the object is made with.
    inv = load_inventory_text(FLEET.replace("EXTRA", ""), "t.yaml")
    cable = inv.links["p1-n0/nic1<->p1-leaf1"]
    assert cable.a is inv.objects["p1-n0/nic1"].id


def test_a_quarantine_label_in_a_plan_is_refused_at_its_line() -> None:
    text = FLEET.replace("EXTRA", "").replace('labels: {slot: "{i}"}', 'labels: {slot: "{i}", quarantine: "no way"}')
    inv = load_inventory_text(text, "t.yaml")
    with pytest.raises(TopologError) as err:
        check_label_types(inv)
    # Every GPU is a plan object of box (its line, 14): 2 GPUs in each of the 4 nodes, p0-n0/gpu0
    # first in the inventory's order and 7 more.
    (d,) = err.value.diagnostics
    assert d.location.line == 14
    assert d.message.startswith("label 'quarantine' of 'p0-n0/gpu0' (and 7 more objects) is 'no way'")


_PIECES = st.lists(st.sampled_from(sorted(EXTRAS)), min_size=1, max_size=4, unique=True)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=_PIECES)
def test_any_mix_of_extras_loads_as_made_object_by_object(pieces: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    tops = "".join(EXTRAS[p] for p in pieces if not EXTRAS[p].startswith("links:"))
    links = [EXTRAS[p].removeprefix("links:\n") for p in pieces if EXTRAS[p].startswith("links:")]
    text = FLEET.replace("EXTRA", tops + ("links:\n" + "".join(links) if links else ""))
    inv, errors = _outcome(text)
    try:
        eager = _eager(text, monkeypatch)
    except TopologError as err:
        assert errors == [f"{d.location}: {d.message}" for d in err.diagnostics]
        return
    assert inv is not None and not errors
    assert _rows(inv.objects) == _rows(eager.objects)


def test_objects_set_anew_are_the_ones_found() -> None:
    # A copy given a table of its own (as a scenario's copy is) finds in that table, not in the
    # plans of the objects its original had not made yet.
    inv = load_inventory_text(FLEET.replace("EXTRA", ""), "t.yaml")
    assert inv.unmade_objects()
    inv.objects = {"p0": inv.found["p0"]}
    assert not inv.unmade_objects() and inv.objects_so_far() == 1
    assert inv.found is inv.objects and "p0-n0/gpu0" not in inv.found
    assert [o.id for o in inv.objects_but({"p0-n0"})] == ["p0"]


def test_threads_reading_the_objects_at_once_get_one_table() -> None:
    # A service answers on more than one thread: the objects are made once, and a look-up made
    # meanwhile gets the very object the table holds.
    inv = load_inventory_text(FLEET.replace("EXTRA", ""), "t.yaml")
    tables: list[object] = []
    gotten: list[Obj] = []

    def read() -> None:
        gotten.append(inv.found["p1-n1/nic0"])
        tables.append(inv.objects)

    workers = [threading.Thread(target=read) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert all(t is inv.objects for t in tables)
    assert all(g is inv.objects["p1-n1/nic0"] for g in gotten)
