"""The instances of a counted entry stamped whole from their template's plan (templates.py
Expander._whole, _stamp_whole): what every instance shares is worked out at the first, and each
later one is a name, an object and a stamp. They must come out as _instantiate makes them, and an
instance that is anything else (an override, a taken id) must still go the long way and be reported
there."""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text

# Line numbers (1-based) matter below: the node entry is line 15, column 9, n3's override line 19,
# column 15.
TEXT = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    model: DGX-H100
    labels: {zone: z1}
    software: {driver: "535.129.03"}
    promises: [nvlink_domain]
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
objects:
  - name: r0
    kind: rack
    children:
      - name: "n{i}"
        template: box
        count: 4
        overrides:
          n3: {labels: {quarantine: "true"}}
"""


def test_every_instance_as_the_template_makes_it() -> None:
    # n0..n3 from box in r0, each with box's model, labels, software and promises and
    # its own {i} as its index. n3 has an override: its own labels on top of box's, and it is not its
    # plan alone (not in Inventory.stamped); n0, n1 and n2 are.
    inv = load_inventory_text(TEXT, "t.yaml")
    nodes = ["n0", "n1", "n2", "n3"]
    assert inv.stamped == {"n0": "box", "n1": "box", "n2": "box"}
    for k, n in enumerate(nodes):
        obj = inv.found[n]
        assert (obj.kind, obj.parent, obj.model, obj.template, obj.index) == ("node", "r0", "DGX-H100", "box", k)
        assert inv.software[n] == {"driver": "535.129.03"}
        assert inv.promises[n] == ("nvlink_domain",)
        assert str(obj.loc) == ("t.yaml:19:15" if n == "n3" else "t.yaml:15:9")
    assert [dict(inv.found[n].labels) for n in nodes] == [{"zone": "z1"}] * 3 + [{"zone": "z1", "quarantine": "true"}]
    # The objects in the order they are made: r0, then each node followed by its two GPUs.
    assert list(inv.objects) == ["r0", *(x for n in nodes for x in (n, f"{n}/gpu0", f"{n}/gpu1"))]
    assert inv.objects["n2/gpu1"].parent == "n2"


def test_a_taken_name_is_reported_where_the_entry_is_written() -> None:
    # A node n2 written in r0 before the entry (line 15): the entry's third instance, in r0 too, takes
    # its id, and is reported once, at the entry (now line 16, column 9), naming the first.
    text = TEXT.replace("    children:\n      - name:", "    children:\n      - {name: n2, kind: node}\n      - name:")
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    assert [(d.message, str(d.location)) for d in err.value.diagnostics] == [
        ("duplicate id 'n2' (first written at t.yaml:15:9)", "t.yaml:16:9")
    ]
