"""Inventory.objects_but: the objects in order without those stamped for some nodes; the same answer
as reading them one by one, also once objects were taken out of the table or moved in it."""

from __future__ import annotations

from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.model import Inventory

TEXT = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
      - {name: cpu0, kind: cpu, children: [{name: dram0, kind: memory}]}
    links:
      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..1}}
objects:
  - name: r0
    kind: rack
    children:
      - {template: box, name: "n{i}", count: 3}
  - {name: sw0, kind: switch}
"""


def _one_by_one(inv: Inventory, skip: set[str]) -> list[str]:
    return [o.id for o in inv.objects.values() if o.origin is None or o.origin not in skip]


def test_the_objects_of_skipped_nodes_are_left_out_in_order() -> None:
    inv = load_inventory_text(TEXT, "t.yaml")
    # Each node n0..n2 is stamped whole: its own object, then its plan's 4 objects (gpu0, gpu1,
    # cpu0, dram0). Leaving n1's out keeps r0, n0 and its 4, n1 itself, n2 and its 4, sw0.
    assert set(inv.unmade_links()) == {"n0", "n1", "n2"}
    kept = [o.id for o in inv.objects_but({"n1"})]
    assert kept == [
        "r0",
        "n0",
        "n0/gpu0",
        "n0/gpu1",
        "n0/cpu0",
        "n0/dram0",
        "n1",
        "n2",
        "n2/gpu0",
        "n2/gpu1",
        "n2/cpu0",
        "n2/dram0",
        "sw0",
    ]
    assert [o.id for o in inv.objects_but(set())] == list(inv.objects)
    assert [o.id for o in inv.objects_but({"n0", "n2", "sw0"})] == _one_by_one(inv, {"n0", "n2", "sw0"})


def test_a_run_that_is_not_whole_is_read_one_by_one() -> None:
    # An object of n1 taken out and put back goes to the end of the table: n1's run is one short,
    # so the object that ends it is not the plan's last; the answer is still the one-by-one filter.
    inv = load_inventory_text(TEXT, "t.yaml")
    moved = inv.objects.pop("n1/gpu1")
    inv.objects["n1/gpu1"] = moved
    assert [o.id for o in inv.objects_but({"n1"})] == _one_by_one(inv, {"n1"})
    assert "n1/gpu1" not in [o.id for o in inv.objects_but({"n1"})]
    # The last object of n0's run removed: the run ends early, and n0's other objects stay out.
    del inv.objects["n0/dram0"]
    assert [o.id for o in inv.objects_but({"n0", "n1"})] == _one_by_one(inv, {"n0", "n1"})
    assert [o.id for o in inv.objects_but({"n0"})][:2] == ["r0", "n0"]
