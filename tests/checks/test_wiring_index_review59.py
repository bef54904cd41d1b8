"""Review of a761080 (verify's wiring index read without making deferred links): shapes the
property test of test_wiring_index.py does not load. An inventory split over files (the node
type in one, whose plan cables a NIC to an absolute switch written in the other file), and a
node type holding a sub-template and a nested device, stamped by a rack template whose own
`foreach` cables the trays. The index must equal the one over every made link, and a hand check
pins the plan's line for the switch outside the node (the plan's ends outside its node are read
once per plan, from one node's names)."""

from __future__ import annotations

from pathlib import Path

from verifier.checks.verify import Place, _WiringIndex
from verifier.sources.inventory import load_inventory, load_inventory_text
from verifier.sources.inventory.model import Inventory

TEMPLATES = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: nic0, kind: nic}
    links:
      - {a: gpu0, b: gpu1, kind: nvlink, bandwidth: 100 GB/s}
      - {a: nic0, b: /leaf, kind: infiniband, bandwidth: 400 Gb/s}
"""

OBJECTS = """apiVersion: topolog.dev/v1
objects:
  - {name: leaf, kind: switch}
  - {template: box, name: "n{i}", count: 3}
links:
  - {a: "n{i}/gpu0", b: leaf, kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: 0..2}}
"""

NESTED = """apiVersion: topolog.dev/v1
templates:
  socket:
    kind: cpu
    children:
      - {name: mem0, kind: memory, size: 64 GB}
  tray:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {template: socket, name: cpu0}
      - {name: nic0, kind: nic, children: [{name: port0, kind: nic}]}
    links:
      - {a: gpu0, b: gpu1, kind: nvlink, bandwidth: 100 GB/s}
      - {a: nic0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
      - {a: port0, b: gpu0, kind: pcie, generation: 5, lanes: 16}
  rack:
    kind: rack
    children:
      - {template: tray, name: "{rack}-t{i}", count: 3}
      - {name: "{rack}-sw", kind: switch}
    links:
      - {a: "/{rack}-t{i}/nic0", b: "/{rack}-sw", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..2}}
      - {a: "/{rack}-t{i}/gpu1", b: "/{rack}-sw", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1}}
objects:
  - {template: rack, name: "r{i}", count: 3}
  - {name: spine, kind: switch}
links:
  - {a: "r{i}-sw", b: spine, kind: ethernet, bandwidth: 400 Gb/s, foreach: {i: 0..2}}
  - {a: "r{i}-t0/gpu0", b: "r{j}-t1/gpu0", kind: infiniband, bandwidth: 400 Gb/s, foreach: {i: 0..2, j: 0..2}}
"""


def _from_links(inv: Inventory) -> dict[str, set[Place]]:
    """The index as c7f23ef built it: over every link, made (each end and every id above it)."""
    out: dict[str, set[Place]] = {}
    for link in inv.links.values():
        where = (link.loc.file, link.loc.line, link.loc.col)
        for end in (link.a, link.b):
            while end:
                out.setdefault(end, set()).add(where)
                end = end.rpartition("/")[0]
    return out


def _same_as_made(deferred: Inventory, made: Inventory) -> None:
    assert deferred.unmade_links(), "the stamped nodes' links must still wait, else nothing is compared"
    index = _WiringIndex(deferred)
    assert "links" not in vars(deferred)  # reading the index made no link
    expected = _from_links(made)
    ids = set(expected) | set(made.objects) | {x + "/x" for x in expected}
    wrong = {x: (index.places(x), expected.get(x)) for x in ids if index.places(x) != frozenset(expected.get(x, ()))}
    assert not wrong


def test_a_node_type_in_one_file_cabled_to_a_switch_of_another(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(TEMPLATES, encoding="utf-8")
    (tmp_path / "o.yaml").write_text(OBJECTS, encoding="utf-8")
    files = [tmp_path / "t.yaml", tmp_path / "o.yaml"]
    _same_as_made(load_inventory(files), load_inventory(files))
    # By hand: `leaf` is wired by the plan's line in t.yaml (10: nic0 -> /leaf, every node) and the
    # run of cables in o.yaml (line 6: n{i}/gpu0 -> leaf); n1's gpu0 by t.yaml:9 (gpu0-gpu1) and o.yaml:6.
    index = _WiringIndex(load_inventory(files))
    by_file = {(Path(f).name, line) for f, line, _col in index.places("leaf")}
    assert by_file == {("t.yaml", 10), ("o.yaml", 6)}
    assert {(Path(f).name, line) for f, line, _col in index.places("n1/gpu0")} == {("t.yaml", 9), ("o.yaml", 6)}


def test_a_sub_template_and_a_nested_device_in_trays_a_rack_template_cables() -> None:
    _same_as_made(load_inventory_text(NESTED, "n.yaml"), load_inventory_text(NESTED, "n.yaml"))
    # By hand: r2-t1/port0 (nic0's child, id "<node>/port0") has the port0-gpu0 line (16) only;
    # r2-t2/gpu1 has the NVLink line (14) but no rack cable (the gpu1 foreach stops at tray 1);
    # r2-t1/gpu1 has 14 and the rack's gpu1 line (24).
    index = _WiringIndex(load_inventory_text(NESTED, "n.yaml"))
    assert sorted(line for _f, line, _c in index.places("r2-t1/port0")) == [16]
    assert sorted(line for _f, line, _c in index.places("r2-t2/gpu1")) == [14]
    assert sorted(line for _f, line, _c in index.places("r2-t1/gpu1")) == [14, 24]
