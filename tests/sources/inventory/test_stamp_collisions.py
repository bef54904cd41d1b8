"""A stamped node's objects go into the table in one update (templates.py _stamp): an id an object
written earlier took is still reported, and the other nodes are stamped whole as before."""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text

TEXT = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
objects:
  - {name: r0, kind: rack}
  EARLIER
  - {template: box, name: "n{i}", count: 2, parent: r0}
"""


def test_an_object_named_as_a_stamped_ones_is_a_duplicate() -> None:
    # "n1/gpu1" is written (line 10) at the top level before node n1 is stamped from box, whose plan
    # makes n1/gpu0 and n1/gpu1: the second is that id again, inside n1, reported where box writes it
    # (line 7) as an object in two parents (none, where it was written first, and n1).
    text = TEXT.replace("EARLIER", "- {name: n1/gpu1, kind: gpu, model: H100-SXM5-80GB}")
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    assert [d.message for d in err.value.diagnostics] == ["'n1/gpu1' is in two parents: None (at t.yaml:10:5) and 'n1'"]
    assert err.value.diagnostics[0].location.line == 7


def test_nodes_with_no_such_object_are_stamped_whole() -> None:
    # An earlier object "n9/x" starts with another head (n9): n0 and n1 are stamped as before, each
    # with its two GPUs, and both are whole (Inventory.stamped).
    inv = load_inventory_text(TEXT.replace("EARLIER", "- {name: n9/x, kind: switch}"), "t.yaml")
    assert [o.id for o in inv.objects.values() if o.origin == "n1"] == ["n1/gpu0", "n1/gpu1"]
    assert inv.stamped == {"n0": "box", "n1": "box"}
