"""An instance's own `remove: true` decommissions it (dgx05 of 8 sent back to the vendor).

The instance goes with everything it holds and every link touching any of it, its rack no longer
holds it, and whatever still names it (a `parent:`, a what-if, an authorize request, a waiver) is an
error at its place or a finding, never a crash. Every count below is worked out by hand from the
shipped inventory's text, written next to it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory, load_inventory_text

ROOT = Path(__file__).resolve().parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
GB200 = ROOT / "inventories" / "gb200-nvl72.yaml"

# One DGX H100 node of dgx-h100-pod.yaml: itself, cpu0-1, dram0 under each cpu (2), gpu0-7,
# nvsw0-3, pcie0-3, nic0-7 = 1 + 2 + 2 + 8 + 4 + 4 + 8 = 29 objects. Its own links: GPU-NVSwitch
# 8 x 4 = 32, GPU-PCIe 8, NIC-PCIe 8, PCIe-CPU 4, UPI 1 = 53; and one cable per NIC to its rail's
# leaf (foreach n 0..7, r 0..7): 8.
NODE_OBJECTS, NODE_LINKS, NODE_CABLES = 29, 53, 8
# The pod: pod0, rack0-1, 8 nodes, leaf0-7, spine0-3 = 1 + 2 + 8 * 29 + 8 + 4 = 247 objects;
# 8 * 53 node links + 64 NIC cables + 8 x 4 leaf-spine = 424 + 64 + 32 = 520 links.
POD_OBJECTS, POD_LINKS = 247, 520


def _with(path: Path, anchor: str, added: str, tmp_path: Path) -> Path:
    """`path`'s text with `added` written right after the one line `anchor`, as a new file."""
    text = path.read_text(encoding="utf-8")
    assert text.count(anchor) == 1
    out = tmp_path / path.name
    out.write_text(text.replace(anchor, anchor + added), encoding="utf-8")
    return out


def _pod_without_dgx05(tmp_path: Path) -> Path:
    # dgx05 is the second node of rack1 (dgx{seq:02d}: dgx00-03 in rack0, dgx04-07 in rack1).
    return _with(
        POD, "            overrides:\n", "              dgx05: {remove: true}   # back to the vendor\n", tmp_path
    )


def test_a_removed_node_goes_with_its_devices_links_and_cables(tmp_path: Path) -> None:
    inv = load_inventory([_pod_without_dgx05(tmp_path)])
    assert len(inv.objects) == POD_OBJECTS - NODE_OBJECTS == 218
    assert len(inv.links) == POD_LINKS - NODE_LINKS - NODE_CABLES == 459
    assert not [oid for oid in inv.objects if oid.startswith("dgx05")]
    assert not [lid for lid in inv.links if "dgx05" in lid]
    # 8 GPUs gone of 64; rack1 holds dgx04, dgx06, dgx07.
    assert Counter(o.kind for o in inv.objects.values())["gpu"] == 56
    nodes = Counter(o.parent for o in inv.objects.values() if o.kind == "node")
    assert nodes == {"rack0": 4, "rack1": 3}
    # Each leaf loses the one cable of dgx05's NIC on its rail: 7 nodes + 4 spines (2 cables as one link).
    assert sum(1 for lk in inv.links.values() if "leaf3" in (lk.a, lk.b)) == 7 + 4


def test_a_removed_rack_goes_with_its_nodes(tmp_path: Path) -> None:
    path = _with(POD, '        labels: {row: "A"}\n', "        overrides:\n          rack1: {remove: true}\n", tmp_path)
    inv = load_inventory([path])
    # rack1 and its 4 nodes: 247 - 1 - 4 * 29 = 130 objects; 520 - 4 * (53 + 8) = 276 links.
    assert len(inv.objects) == 130
    assert len(inv.links) == 276
    assert sorted(o.id for o in inv.objects.values() if o.kind in ("rack", "node")) == [
        "dgx00",
        "dgx01",
        "dgx02",
        "dgx03",
        "rack0",
    ]


def test_a_removed_compute_tray_takes_its_nvlink_cables_and_the_rack_is_no_nvl72(tmp_path: Path) -> None:
    path = _with(GB200, "        count: 18\n", "        overrides:\n          tray07: {remove: true}\n", tmp_path)
    inv = load_inventory([path])
    # A tray: itself, grace0-1, lpddr0 under each, gpu0-3, nic0-3 = 13 objects (268 in all).
    # Its links: C2C 4 + NIC PCIe 4, one cable per NIC to its rail's leaf (4), and NVLink
    # foreach g 0..3, s 0..8, c 0..1: 4 x 9 x 2 = 72; 84 in all (1520 in the rack's file).
    assert len(inv.objects) == 268 - 13 == 255
    assert len(inv.links) == 1520 - 84 == 1436
    for engine in ("duckdb", "memory"):
        code, out, err = run_cli("verify", str(path), "--engine", engine, "--format", "json")
        assert code == 1, err
        found = [(f["rule"], f["subjects"]) for f in json.loads(out)["findings"]]
        # The rack's model is a 72-GPU NVL72; 17 trays hold 68: a true finding, on both engines.
        assert found == [("NODE003", ["nvl72-r0"])], engine


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_the_pod_without_a_node_has_the_same_findings_on_both_engines(tmp_path: Path, engine: str) -> None:
    # Taking a healthy node out changes no other node: the one deliberate fault (dgx03's gpu2,
    # tests/sources/inventory/test_shipped_findings.py) is still the only finding.
    path = _pod_without_dgx05(tmp_path)
    code, out, err = run_cli("verify", str(path), "--engine", engine, "--format", "json")
    assert code == 1, err
    found = [(f["rule"], f["subjects"]) for f in json.loads(out)["findings"]]
    assert found == [("TOPO005", ["dgx03/gpu2<->dgx03/nvsw1", "dgx03/gpu2"])]


def test_place_counts_the_gpus_left(tmp_path: Path) -> None:
    path = _pod_without_dgx05(tmp_path)
    jobs = tmp_path / "jobs.yaml"
    # research owns the pod's nodes (tenant label, inventories/principals.yml): 64 GPUs no longer
    # fit anywhere, the 56 left do, on the 7 nodes left.
    jobs.write_text(
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        '  - {name: all64, principal: Team::"research", gpus: 64}\n'
        '  - {name: all56, principal: Team::"research", gpus: 56}\n',
        encoding="utf-8",
    )
    (tmp_path / "principals.yml").write_bytes((ROOT / "inventories" / "principals.yml").read_bytes())
    code, out, err = run_cli("place", str(path), str(jobs), "--format", "json")
    assert code == 1, err
    report = {j["job"]: j for j in json.loads(out)["jobs"]}
    assert report["all64"]["placements"] == []
    (first,) = report["all56"]["placements"]
    assert len(first["gpus"]) == 56
    assert not [g for g in first["gpus"] if g.startswith("dgx05/")]


def test_what_still_names_a_removed_node_is_an_error_or_a_finding(tmp_path: Path) -> None:
    path = _pod_without_dgx05(tmp_path)
    (tmp_path / "principals.yml").write_bytes((ROOT / "inventories" / "principals.yml").read_bytes())
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        'apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: j, principal: Team::"research", gpus: 8}\n',
        encoding="utf-8",
    )
    for what_if in (["--fail", "dgx05"], ["--drain", "dgx05"], ["--fail-link", "dgx05/nic0<->leaf0"]):
        code, _out, err = run_cli("verify", str(path), "--jobs", str(jobs), *what_if)
        assert code == 2, what_if
        assert "dgx05" in err and "Traceback" not in err, what_if
    code, _out, err = run_cli(
        "authorize", str(path), "--principal", "dan", "--action", "schedule", "--resource", "dgx05/gpu0"
    )
    assert code == 2 and "'dgx05/gpu0'" in err
    waivers = tmp_path / "w.yaml"
    waivers.write_text(
        'waivers:\n  - {rule: TOPO005, subject: "dgx05/*", reason: RMA, expires: 2099-01-31}\n', encoding="utf-8"
    )
    code, out, err = run_cli("verify", str(path), "--waivers", str(waivers), "--format", "json")
    rules = sorted(f["rule"] for f in json.loads(out)["findings"])
    assert rules == ["TOPO005", "WAIVER002"]  # the waiver matches no finding any more


def _errors(text: str) -> list[str]:
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    return [f"{d.location}: {d.message}" for d in err.value.diagnostics]


def test_an_object_placed_in_a_removed_node_says_it_was_removed() -> None:
    # x (line 7) names n1, which n1's override (line 6) removed.
    text = """apiVersion: topolog.dev/v1
objects:
  - name: "n{i}"
    kind: node
    count: 2
    overrides: {n1: {remove: true}}
  - {name: x, kind: gpu, parent: n1}
"""
    assert _errors(text) == [
        "t.yaml:7:5: 'x' names parent 'n1', which does not exist; an override removed it ('remove: true'):"
        " expected nothing to name it"
    ]


BODY = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - name: "gpu{i}"
        kind: gpu
        count: 4
        overrides: {gpu2: %s}
      - {name: sw, kind: nvswitch}
    links:
      - {a: "gpu{g}", b: sw, kind: nvswitch, generation: 4, count: 4, foreach: {g: 0..3}}
objects:
  - {template: box, name: "n{i}", count: 3, overrides: {n0: {remove: true}}}
  - {name: leaf, kind: switch}
links:
  - {a: "n{n}/sw", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..2}}
"""


def test_an_override_in_a_template_body_applies_to_every_instance() -> None:
    # The node type's plan was stamped without its body's overrides: gpu2 stayed in every node,
    # and a `state: down` there was dropped too. n0 is removed; n1 and n2 each keep gpu0, 1, 3, sw
    # (5 objects with the node) and 3 GPU links + the sw-leaf cable: 2 * 5 + leaf = 11 objects, 8 links.
    inv = load_inventory_text(BODY % "{remove: true}", "t.yaml")
    assert sorted(inv.objects) == [
        "leaf",
        "n1",
        "n1/gpu0",
        "n1/gpu1",
        "n1/gpu3",
        "n1/sw",
        "n2",
        "n2/gpu0",
        "n2/gpu1",
        "n2/gpu3",
        "n2/sw",
    ]
    assert len(inv.links) == 8
    down = load_inventory_text(BODY % "{state: down}", "t.yaml")
    assert sorted(oid for oid, o in down.objects.items() if o.state == "down") == ["n1/gpu2", "n2/gpu2"]
