"""A stamp looks no id up while no object in the table has its node's head (the text before the
first "/", templates.py Expander.object_heads): every id it makes is the node's id, a "/" and more.
Where an object with that head exists, made by another stamp or written, each id is looked up and
a taken one reported as before; where none of them is taken, the node is stamped whole as before."""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text

# Line numbers (1-based) matter below: box's GPU line is 6, odd's child line is 10.
TEXT = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
  odd:
    kind: node
    children:
      - {name: g/gpu1, kind: gpu, model: H100-SXM5-80GB}
objects:
  - {template: odd, name: a}
  - {template: box, name: a/g}
  - {template: box, name: a/h}
"""


def test_an_id_one_stamp_made_is_a_duplicate_in_the_next() -> None:
    # Node a is stamped from odd: a/g/gpu1 (its parent a). Node a/g is stamped from box, whose plan
    # makes a/g/gpu0 and a/g/gpu1: the second was made by a's stamp, with another parent (a, not
    # a/g), so it is reported once, where box writes its GPUs (line 6, column 9), naming where odd
    # wrote it (line 10, column 9). Both stamps share the head "a".
    with pytest.raises(TopologError) as err:
        load_inventory_text(TEXT, "t.yaml")
    assert [(d.message, str(d.location)) for d in err.value.diagnostics] == [
        ("'a/g/gpu1' is in two parents: 'a' (at t.yaml:10:9) and 'a/g'", "t.yaml:6:9")
    ]


def test_a_shared_head_with_no_taken_id_stamps_whole() -> None:
    # Without node a/g: a/h shares the head "a" with a's a/g/gpu1, yet makes a/h/gpu0 and a/h/gpu1,
    # neither taken. The table: a, a/g/gpu1 (a's stamp), a/h, a/h/gpu0, a/h/gpu1 in that order, and
    # both nodes are their plans alone (Inventory.stamped).
    inv = load_inventory_text(TEXT.replace("  - {template: box, name: a/g}\n", ""), "t.yaml")
    assert list(inv.objects) == ["a", "a/g/gpu1", "a/h", "a/h/gpu0", "a/h/gpu1"]
    assert inv.stamped == {"a": "odd", "a/h": "box"}
    assert inv.objects["a/h/gpu1"].parent == "a/h"
    assert inv.objects["a/g/gpu1"].parent == "a"


def test_a_node_id_with_a_slash_meets_an_object_written_before_it() -> None:
    # p/x (head "p") is written before the nodes p/n0 and p/n1 (head "p" too): each stamp looks its
    # ids up, none is taken, both nodes are stamped whole with their two GPUs each.
    text = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
objects:
  - {name: p, kind: rack}
  - {name: p/x, kind: switch}
  - {template: box, name: "p/n{i}", count: 2, parent: p}
"""
    inv = load_inventory_text(text, "t.yaml")
    assert list(inv.objects) == ["p", "p/x", "p/n0", "p/n0/gpu0", "p/n0/gpu1", "p/n1", "p/n1/gpu0", "p/n1/gpu1"]
    assert inv.stamped == {"p/n0": "box", "p/n1": "box"}
    # Written at the same head and taken by n1's plan: p/n1/gpu0 (line 9) meets box's GPU line (6),
    # with parents None (written at the top) and p/n1.
    taken = text.replace("{name: p/x, kind: switch}", "{name: p/n1/gpu0, kind: gpu, model: H100-SXM5-80GB}")
    with pytest.raises(TopologError) as err:
        load_inventory_text(taken, "t.yaml")
    assert [(d.message, str(d.location)) for d in err.value.diagnostics] == [
        ("'p/n1/gpu0' is in two parents: None (at t.yaml:9:5) and 'p/n1'", "t.yaml:6:9")
    ]


def test_an_override_on_one_node_leaves_the_others_stamped_whole() -> None:
    # n1's override takes gpu1 out: n1 is not its plan alone (Inventory.stamped has n0 and n2 only),
    # and its removed GPU is not in the table; n0 and n2 keep both GPUs.
    text = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
objects:
  - template: box
    name: "n{i}"
    count: 3
    overrides:
      n1: {devices: {gpu1: {remove: true}}}
"""
    inv = load_inventory_text(text, "t.yaml")
    assert list(inv.objects) == ["n0", "n0/gpu0", "n0/gpu1", "n1", "n1/gpu0", "n2", "n2/gpu0", "n2/gpu1"]
    assert inv.stamped == {"n0": "box", "n2": "box"}
