"""Adversarial review of the objects of nodes stamped whole made only when `Inventory.objects` is
read (Inventory.defer_objects). Every reader, command or API, must see what the loader made
object by object: these tests try the readers outside the loader (a scenario's copy, locations,
authorization, queries, explain, draw, serve's rebuild, a copy of the inventory, a look-up view
kept across a change, threads). Two of them failed at first (an old view and a shallow copy
answered from their own ids, not the table: strict xfails in b5cc488, fixed in 5baefc0).

Expected values are worked out by hand from the inventory below (line numbers counted in it).
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path

import pytest
from cli_helpers import run_cli
from fleet_helpers import authorize_cli, place
from service.serve_helpers import copy_inputs, new_revision, serving

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.model import Obj
from verifier.sources.scenario import apply_scenario, scenario_from

# Line numbers (1-based) matter: locations are checked against them.
FLEET = """\
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    labels: {zone: z1}
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: nic0, kind: nic}
    links:
      - {a: gpu0, b: gpu1, kind: nvlink, generation: 4, count: 18}
objects:
  - name: rack0
    kind: rack
    labels: {tenant: research}
    children:
      - template: box
        name: "n{i}"
        count: 3
EXTRA"""
# rack0 (line 12) holds n0, n1, n2 (the entry at line 16), each stamped from box: gpu0 and gpu1
# (line 7), nic0 (line 8). With no override, n0..n2 are stamped whole: their 9 devices are not
# made until `objects` is read; made so far: rack0, n0, n1, n2.

ALL_IDS = [
    "rack0",
    "n0", "n0/gpu0", "n0/gpu1", "n0/nic0",
    "n1", "n1/gpu0", "n1/gpu1", "n1/nic0",
    "n2", "n2/gpu0", "n2/gpu1", "n2/nic0",
]  # fmt: skip
"""Each node's devices right after it, in the template's order: what the loader stamps."""


def _fleet(extra: str = "") -> str:
    return FLEET.replace("EXTRA", extra)


def test_the_fleet_leaves_the_three_nodes_devices_unmade() -> None:
    inv = load_inventory_text(_fleet(), "t.yaml")
    assert sorted(inv.unmade_objects()) == ["n0", "n1", "n2"]
    assert inv.objects_so_far() == -4  # rack0, n0, n1, n2
    assert list(inv.objects) == ALL_IDS


def test_locations_of_unmade_objects_are_their_template_lines() -> None:
    inv = load_inventory_text(_fleet(), "t.yaml")
    # A device: its template line (gpu{i} line 7, nic0 line 8); the node: the line that stamped
    # it (`- template: box`, line 16); an id no plan has (gpu2, count 2 makes gpu0 and gpu1):
    # the first file, line 0. None of these makes an object.
    lines = {oid: inv.location(oid).line for oid in ("n1/gpu1", "n2/nic0", "n1", "n1/gpu2", "n1/")}
    assert lines == {"n1/gpu1": 7, "n2/nic0": 8, "n1": 16, "n1/gpu2": 0, "n1/": 0}
    assert inv.unmade_objects()


def test_a_scenario_changes_a_stamped_gpu_on_its_copy_alone() -> None:
    inv = load_inventory_text(_fleet(), "t.yaml")
    out = apply_scenario(inv, scenario_from(drain=["n2"], fail=["n1/gpu1"]))
    # The copy: n1/gpu1 down, n2 drained; every other object as loaded (state None), same order.
    states = {oid: o.state for oid, o in out.objects.items() if o.state is not None}
    assert states == {"n1/gpu1": "down", "n2": "drained"}
    assert list(out.objects) == ALL_IDS
    assert out.found["n1/gpu1"].state == "down"
    # The original: nothing changed, looked up or read whole.
    assert inv.found["n1/gpu1"].state is None
    assert all(o.state is None for o in inv.objects.values())
    # The changed nodes are no longer their template's plan alone; n0 still is.
    assert sorted(out.stamped) == ["n0"]


def test_a_scenario_naming_a_gpu_no_plan_has_is_refused() -> None:
    inv = load_inventory_text(_fleet(), "t.yaml")
    with pytest.raises(TopologError) as err:
        apply_scenario(inv, scenario_from(fail=["n1/gpu2"]))
    (d,) = err.value.diagnostics
    assert str(d.location) == "--fail" and "'n1/gpu2'" in d.message


def _authorize(tmp_path: Path, text: str, resource: str) -> str:
    code, out, err = authorize_cli(place(tmp_path, text), resource, "--format", "json")
    assert code in (0, 1), err
    decision: str = json.loads(out)["decision"]
    return decision


@pytest.mark.parametrize(
    ("extra", "resource", "expected"),
    [
        # dan is on team research (tenant research); rack0's tenant label reaches every GPU under
        # it (policies/tenants.cedar): a GPU of a node stamped whole is his to schedule.
        ("", "n1/gpu1", "ALLOW"),
        # One node quarantined by an override (no longer whole): its GPUs closed to everyone
        # (policies/quarantine.cedar); a whole node beside it stays open.
        ('        overrides: {n1: {labels: {quarantine: "true"}}}\n', "n1/gpu0", "DENY"),
        ('        overrides: {n1: {labels: {quarantine: "true"}}}\n', "n2/gpu0", "ALLOW"),
        # One node relabelled to another tenant: closed to dan; its neighbour, stamped whole, open.
        ("        overrides: {n0: {labels: {tenant: prod}}}\n", "n0/gpu1", "DENY"),
        ("        overrides: {n0: {labels: {tenant: prod}}}\n", "n1/gpu1", "ALLOW"),
    ],
)
def test_authorize_on_a_gpu_of_a_node_whose_objects_are_not_made(
    tmp_path: Path, extra: str, resource: str, expected: str
) -> None:
    assert _authorize(tmp_path, _fleet(extra), resource) == expected


def test_authorize_on_a_gpu_no_plan_has_is_refused(tmp_path: Path) -> None:
    code, _out, err = authorize_cli(place(tmp_path, _fleet()), "n1/gpu2", "--format", "json")
    # n1 has gpu0 and gpu1 only: an unknown resource is a bad request (exit 2), not a deny.
    assert code == 2 and "n1/gpu2" in err


def test_query_within_a_stamped_node_lists_its_plan_devices(tmp_path: Path) -> None:
    path = place(tmp_path, _fleet())
    code, out, err = run_cli("query", str(path), 'within(X, "n1")', "--format", "json")
    assert code == 0, err
    # n1's devices: gpu0, gpu1, nic0 (from the template), nothing else; one column, X.
    assert sorted(json.loads(out)["rows"]) == [["n1/gpu0"], ["n1/gpu1"], ["n1/nic0"]]


# --- the look-up view and copies -------------------------------------------------------------


def test_iterating_a_view_makes_the_table_and_each_look_up_gets_its_object() -> None:
    # Iterating `found` reads `objects` (made there, in the loader's order); a look-up through the
    # same view while it iterates gets the very object the table holds, made before or not.
    inv = load_inventory_text(_fleet(), "t.yaml")
    view = inv.found
    seen = [(oid, view.get(oid)) for oid in view]
    assert [oid for oid, _ in seen] == ALL_IDS
    assert all(obj is inv.objects[oid] for oid, obj in seen)
    assert not inv.unmade_objects()


def test_a_view_taken_before_the_objects_are_made_agrees_with_the_table() -> None:
    # `found` taken while n0..n2's devices are unmade, kept while the table is made and a device
    # is taken out of it in place: the old view must say what the table says (not in it, get None),
    # as `found` did when it was the table itself (every object made at once). Before 5baefc0 the
    # old view still held n1/gpu1 and its `get` raised KeyError.
    inv = load_inventory_text(_fleet(), "t.yaml")
    view = inv.found
    del inv.objects["n1/gpu1"]
    assert "n1/gpu1" not in inv.found
    assert "n1/gpu1" not in view
    assert view.get("n1/gpu1") is None
    # An object made before (rack0, never unmade) replaced in place: the old view gives the new one.
    rack = inv.objects["rack0"]
    inv.objects["rack0"] = Obj(rack.id, rack.kind, rack.parent, rack.loc, state="down")
    assert view["rack0"] is inv.objects["rack0"]


def test_a_copy_changed_in_place_leaves_the_original_consistent() -> None:
    # A shallow copy taken before the objects are read, whose table is then changed in place. With
    # every object made at once the two share one table (copy.copy): both see the change. Either
    # way an inventory's `found` must give what its own `objects` holds. Before 5baefc0 the original's
    # `found` answered from the copy's table while its `objects` was made anew, unchanged.
    inv = load_inventory_text(_fleet(), "t.yaml")
    other = copy.copy(inv)
    gpu = other.objects["n1/gpu0"]
    other.objects["n1/gpu0"] = Obj(gpu.id, gpu.kind, gpu.parent, gpu.loc, state="down")
    assert inv.found["n1/gpu0"] is inv.objects["n1/gpu0"]
    assert other.found["n1/gpu0"] is other.objects["n1/gpu0"]


def test_explain_names_the_template_line_of_a_stamped_gpu(tmp_path: Path) -> None:
    path = place(tmp_path, _fleet())
    code, out, err = run_cli("explain", str(path), 'within("n1/gpu1", "rack0")', "--format", "json")
    assert code == 0, err
    proof = json.loads(out)
    inputs: dict[str, int] = {}

    def walk(step: dict[str, object]) -> None:
        if step.get("input"):
            loc = step["location"]
            assert isinstance(loc, dict)
            inputs[str(step["fact"])] = int(loc["line"])
        for sub in step.get("premises", []):  # type: ignore[attr-defined]
            walk(sub)

    walk(proof)
    # n1/gpu1 is in n1 by box's `gpu{i}` line (7); n1 in rack0 by the line that stamped it (16).
    assert inputs == {'parent("n1/gpu1", "n1")': 7, 'parent("n1", "rack0")': 16}


def test_draw_of_one_stamped_node_lists_its_plan_devices(tmp_path: Path) -> None:
    path = place(tmp_path, _fleet())
    code, out, err = run_cli("draw", str(path), "--node", "n1", "--format", "dot")
    assert code == 0, err
    boxes = [line.strip() for line in out.splitlines() if " [label=" in line]  # a box per object (edges: --)
    drawn = sorted(line.split(" ")[0] for line in boxes if line.startswith('"n1/'))
    # n1's three devices (gpu0, gpu1, nic0), each drawn once; no other node's.
    assert drawn == ['"n1/gpu0"', '"n1/gpu1"', '"n1/nic0"']
    assert '"n0/' not in out and '"n2/' not in out


def test_serve_rebuilds_a_revision_after_an_edit_to_one_stamped_node(tmp_path: Path) -> None:
    # The shipped DGX pod: dgx00..dgx07 stamped from dgx-h100 (labels tenant: research; only dgx03
    # overridden), so dgx05 and dgx06 are whole, their GPUs not made. dan (team research) may
    # schedule on dgx05/gpu3 (policies/tenants.cedar). The edit quarantines dgx05 by an override:
    # the new revision closes its GPUs to everyone (policies/quarantine.cedar), dgx06's stay open,
    # and a GPU no node has (gpu8: count 8 makes gpu0..gpu7) is denied, with the reason.
    inventory = copy_inputs(tmp_path, "dgx-h100-pod.yaml")
    # The edit is one write_text: a 0.5 s quiet wait (not the default 2 s) is enough to gather it.
    with serving(tmp_path, "--reload-quiet", "0.5", inventory="dgx-h100-pod.yaml") as server:
        before = server.authorize("dan", "schedule", "dgx05/gpu3")
        assert before["decision"] == "ALLOW"
        overrides = "            overrides:\n"
        text = inventory.read_text()
        assert text.count(overrides) == 1
        quarantined = overrides + '              dgx05:\n                labels: {quarantine: "true"}\n'
        inventory.write_text(text.replace(overrides, quarantined))
        new_revision(server, before["revision"])
        after = server.authorize("dan", "schedule", "dgx05/gpu3")
        assert (after["decision"], [p["id"] for p in after["policies"]]) == ("DENY", ["quarantine-closed"])
        assert server.authorize("dan", "schedule", "dgx06/gpu3")["decision"] == "ALLOW"
        # The service answers an unknown resource with a DENY and the reason (test_serve_authorize.py).
        unknown = server.authorize("dan", "schedule", "dgx06/gpu8")
        assert unknown["decision"] == "DENY" and "'dgx06/gpu8' is not a GPU" in unknown["errors"][0]["message"]


def test_threads_looking_up_while_a_copy_makes_the_objects_get_the_one_table() -> None:
    # A copy taken before the objects are made (copy.copy) makes them on one thread while four
    # threads look ids up through views taken before: whatever the order of events, each look-up
    # gets the very object the one shared table ends up holding (made early for a look-up, or
    # made with the table), and the table is the loader's (ALL_IDS, in order).
    inv = load_inventory_text(_fleet(), "t.yaml")
    other = copy.copy(inv)
    views = [inv.found, other.found]
    got: list[tuple[str, Obj | None]] = []
    start = threading.Barrier(5)

    def look(k: int) -> None:
        start.wait()
        for n in range(200):
            oid = ALL_IDS[(k + 3 * n) % len(ALL_IDS)]
            got.append((oid, views[n % 2].get(oid)))

    def make() -> None:
        start.wait()
        other.objects  # noqa: B018  (made here)

    threads = [threading.Thread(target=look, args=(k,)) for k in range(4)] + [threading.Thread(target=make)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    table = inv.objects
    assert table is other.objects and list(table) == ALL_IDS
    assert len(got) == 800 and all(obj is table[oid] for oid, obj in got)
