"""Hostile inventories against this round's loading shortcuts (a foreach's cables made in one pass and
passed over by check_inventory as a run; stamped nodes' runs skipped by Inventory.objects_but; what an
entry's instances share worked out once): every fault is still reported where it is written, and
what loads is what was written. Each expected value is worked out by hand from the text beside it.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.partial import partial_inventory
from verifier.sources.inventory.raw_files import read_files

HEAD = "apiVersion: topolog.dev/v1\n"


def _errors(text: str) -> list[str]:
    with pytest.raises(TopologError) as err:
        load_inventory_text(HEAD + text, "t.yaml")
    return [f"{d.location}: {d.message}" for d in err.value.diagnostics]


# --- the bug found: a run of cables taken out by an override, its ids written again ------------

ONE_CABLE_RUN_REWRITTEN = """objects:
  - name: "n{i}"
    kind: node
    count: 1
    children:
      - {name: "c{i}", kind: cpu, count: 2}
    links:
      - {a: "c{i}", b: "c{j}", kind: upi, bandwidth: 64 GB/s, foreach: {i: 0..0, j: 1..1}}
    overrides: {n0: {links: [{a: c0, b: c1, remove: true}]}}
links:
  - {id: "n0/c0<->n0/c1", a: ghost1, b: ghost2, kind: ethernet, bandwidth: 100 Gb/s}
"""


def test_a_cable_an_override_took_out_does_not_vouch_for_a_link_written_under_its_id() -> None:
    # The foreach makes one cable, n0/c0<->n0/c1 (both ends objects: a run of one). The override
    # takes it out, so its id is free: the top-level link (line 12 of the file, the header being
    # line 1 and `links:` line 11) takes it with ends ghost1 and ghost2, neither an object. The link must be reported
    # (ghost1, and ghost2 as its one more copy), not passed over as the run's cable.
    assert _errors(ONE_CABLE_RUN_REWRITTEN) == ["t.yaml:12:5: link endpoint 'ghost1' does not exist (and 1 more copy)"]


def test_a_whole_run_taken_out_and_written_again_in_order_is_read_link_by_link() -> None:
    # Three cables c0-c3, c1-c3, c2-c3 (one run, ids in that order), all taken out by the override,
    # then written again with the same ids in the same order: the table holds the same ids in a row
    # again, the first and last with their own ends, but the middle one joins n0/c1 to itself
    # (line 13): a loop, to be reported.
    text = """objects:
  - name: "n{i}"
    kind: node
    count: 1
    children:
      - {name: "c{i}", kind: cpu, count: 4}
    links:
      - {a: "c{i}", b: c3, kind: upi, bandwidth: 64 GB/s, foreach: {i: 0..2}}
    overrides: {n0: {links: [{a: c0, b: c3, remove: true}, {a: c1, b: c3, remove: true}, {a: c2, b: c3, remove: true}]}}
links:
  - {id: "n0/c0<->n0/c3", a: n0/c0, b: n0/c3, kind: upi, bandwidth: 64 GB/s}
  - {id: "n0/c1<->n0/c3", a: n0/c1, b: n0/c1, kind: upi, bandwidth: 64 GB/s}
  - {id: "n0/c2<->n0/c3", a: n0/c2, b: n0/c3, kind: upi, bandwidth: 64 GB/s}
"""
    assert _errors(text) == ["t.yaml:13:5: link 'n0/c1<->n0/c3' connects 'n0/c1' to itself"]


# --- what held -------------------------------------------------------------------------------

HELD = {
    # s0-t0 exists; s1-t1 names t1, which nothing makes (only t0): reported once, at the foreach (line 6).
    "a foreach end that is no object": (
        """objects:
  - {name: "s{i}", kind: switch, count: 2}
  - {name: t0, kind: switch}
links:
  - {a: "s{i}", b: "t{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1}}
""",
        ["t.yaml:6:5: link endpoint 't1' does not exist"],
    ),
    # i, j over 0..1: s0-s0 and s1-s1 are loops (the first reported, the second as its copy).
    "a foreach with loops": (
        """objects:
  - {name: "s{i}", kind: switch, count: 2}
links:
  - {a: "s{i}", b: "s{j}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1, j: 0..1}}
""",
        ["t.yaml:5:5: link 's0<->s0' connects 's0' to itself (and 1 more copy)"],
    ),
    # The run s0-t0, s1-t1 is whole, but the id s1<->t1 is written again with `id:` (line 7).
    "an id: taking a run's cable's id": (
        """objects:
  - {name: "s{i}", kind: switch, count: 2}
  - {name: "t{i}", kind: switch, count: 2}
links:
  - {a: "s{i}", b: "t{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1}}
  - {id: "s1<->t1", a: s0, b: ghost, kind: ethernet, bandwidth: 100 Gb/s}
""",
        ["t.yaml:7:5: duplicate link id 's1<->t1' (first written at t.yaml:6:5)"],
    ),
    # Both counted entries stamp n0 and n1: the second entry's (line 9) are duplicates, n0 reported
    # and n1 its one more copy; its n2 is new.
    "two counted entries whose ids collide": (
        """templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
objects:
  - {template: box, name: "n{i}", count: 2}
  - {template: box, name: "n{i}", count: 3}
""",
        ["t.yaml:9:5: duplicate id 'n0' (first written at t.yaml:8:5) (and 1 more copy)"],
    ),
    # n1/nic0 is removed: its cable to leaf is not made (a removed device takes its links along);
    # the second foreach makes loops n0/nic1-n0/nic1 and n1/nic1-n1/nic1 (line 15).
    "a foreach over an end an override removed, and loops after it": (
        """templates:
  box:
    kind: node
    children:
      - {name: "nic{i}", kind: nic, count: 2}
objects:
  - template: box
    name: "n{i}"
    count: 2
    overrides: {n1: {devices: {nic0: {remove: true}}}}
  - {name: leaf, kind: switch}
links:
  - {a: "n{n}/nic{l}", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..1, l: 0..1}}
  - {a: "n{n}/nic{l}", b: "n{n}/nic{l}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..1, l: 1..1}}
""",
        ["t.yaml:15:5: link 'n0/nic1<->n0/nic1' connects 'n0/nic1' to itself (and 1 more copy)"],
    ),
    # The first foreach's k runs over nothing, which would make no cable at all (s0-t0 and s1-t0,
    # though k is unused in the ends): refused at k, column 80 of line 6. The second writes s{i:02d}:
    # s00 and s01 are no objects (s0, s1 are), and t1 is none either: s00 reported, s01 and t1 its two
    # more copies (line 7).
    "a foreach over an empty list, and padded ends": (
        """objects:
  - {name: "s{i}", kind: switch, count: 2}
  - {name: t0, kind: switch}
links:
  - {a: "s{i}", b: t0, kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1, k: []}}
  - {a: "s{i:02d}", b: "t{k}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1, k: [0, 1]}}
""",
        [
            "t.yaml:6:80: foreach 'k' of link s{i} - t0: the list is empty; expected at least one value"
            " (it would make no link)",
            "t.yaml:7:5: link endpoint 's00' does not exist; did you mean 's0'? (and 2 more copies)",
        ],
    ),
}


@pytest.mark.parametrize("case", list(HELD), ids=list(HELD))
def test_faults_are_reported_where_written(case: str) -> None:
    text, expected = HELD[case]
    assert _errors(text) == expected


def test_a_cable_written_twice_is_numbered() -> None:
    # The first foreach makes s0<->t0 and s1<->t1; the second the same pair again (#2 each); the third
    # runs i over [0, 0, 1]: s0<->t0 twice more (#3, #4), then s1<->t0 (a new id).
    inv = load_inventory_text(
        HEAD
        + """objects:
  - {name: "s{i}", kind: switch, count: 2}
  - {name: "t{i}", kind: switch, count: 2}
links:
  - {a: "s{i}", b: "t{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1}}
  - {a: "s{i}", b: "t{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1}}
  - {a: "s{i}", b: "t0", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: [0, 0, 1]}}
""",
        "t.yaml",
    )
    assert list(inv.links) == [
        "s0<->t0",
        "s1<->t1",
        "s0<->t0#2",
        "s1<->t1#2",
        "s0<->t0#3",
        "s0<->t0#4",
        "s1<->t0",
    ]


def test_an_override_on_one_instance_changes_that_node_alone() -> None:
    # Three nodes of one entry share its labels and software (worked out once); n1's override sets
    # zone b and driver 535.54.03 and downs gpu0, n2's downs its gpu1-nic1 link. n0 and n2 keep
    # zone a and driver 550.54.14; role is w{i} per node; every cable to leaf (3 nodes x 2 NICs) is made.
    inv = load_inventory_text(
        HEAD
        + """templates:
  box:
    kind: node
    labels: {zone: a}
    software: {driver: "550.54.14"}
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: "gpu{i}", b: "nic{i}", kind: pcie, generation: 5, lanes: 16, foreach: {i: 0..1}}
objects:
  - template: box
    name: "n{i}"
    count: 3
    labels: {role: "w{i}"}
    overrides:
      n1: {labels: {zone: b}, software: {driver: "535.54.03"}, devices: {gpu0: {state: down}}}
      n2: {links: [{a: gpu1, b: nic1, state: down}]}
  - {name: leaf, kind: switch}
links:
  - {a: "n{n}/nic{l}", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..2, l: 0..1}}
""",
        "t.yaml",
    )
    assert {n: dict(inv.objects[n].labels) for n in ("n0", "n1", "n2")} == {
        "n0": {"zone": "a", "role": "w0"},
        "n1": {"zone": "b", "role": "w1"},
        "n2": {"zone": "a", "role": "w2"},
    }
    assert {n: dict(sw) for n, sw in inv.software.items()} == {
        "n0": {"driver": "550.54.14"},
        "n1": {"driver": "535.54.03"},
        "n2": {"driver": "550.54.14"},
    }
    assert [o.id for o in inv.objects.values() if o.state == "down"] == ["n1/gpu0"]
    assert [lid for lid, lk in inv.links.items() if lk.state == "down"] == ["n2/gpu1<->n2/nic1"]
    assert sum(1 for lid in inv.links if lid.endswith("<->leaf")) == 6
    facts = inventory_facts(inv)
    assert sorted(r for r in facts["software"]) == [
        ("n0", "driver", "550.54.14"),
        ("n1", "driver", "535.54.03"),
        ("n2", "driver", "550.54.14"),
    ]


def test_a_device_removed_from_one_stamped_node_leaves_the_others_whole() -> None:
    # Four nodes; n2 loses gpu1 (and its gpu1-nic1 link). Objects: 4 nodes x 5 (node, 2 GPUs, 2 NICs)
    # - 1 = 19, plus leaf = 20. Links: 4 x 2 inner - 1 = 7, NIC cables 4 x 2 = 8, GPU1 cables for
    # n0, n1, n3 = 3 (n2's is not made): 18. The facts list every object once, n2/gpu1 not among them.
    inv = load_inventory_text(
        HEAD
        + """templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: "gpu{i}", b: "nic{i}", kind: pcie, generation: 5, lanes: 16, foreach: {i: 0..1}}
objects:
  - template: box
    name: "n{i}"
    count: 4
    overrides: {n2: {devices: {gpu1: {remove: true}}}}
  - {name: leaf, kind: switch}
links:
  - {a: "n{n}/nic{l}", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..3, l: 0..1}}
  - {a: "n{n}/gpu1", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..3}}
""",
        "t.yaml",
    )
    assert len(inv.objects) == 20 and "n2/gpu1" not in inv.objects
    assert len(inv.links) == 18
    assert [lid for lid in inv.links if "gpu1<->leaf" in lid] == ["n0/gpu1<->leaf", "n1/gpu1<->leaf", "n3/gpu1<->leaf"]
    listed = sorted(row[0] for row in inventory_facts(inv)["object"])
    assert listed == sorted(inv.objects) and len(listed) == 20


def test_an_object_put_into_a_stamped_node_is_loaded_and_listed() -> None:
    # n0..n2 are stamped whole from box (2 GPUs, 1 NIC); `extra` is put into n1 with `parent:`, so n1
    # is no longer its template's plan alone (n0 and n2 still are). Objects: 3 x 4 + extra + leaf =
    # 14, each listed once by the facts, extra under n1.
    inv = load_inventory_text(
        HEAD
        + """templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 1}
    links:
      - {a: "gpu{i}", b: nic0, kind: pcie, generation: 5, lanes: 16, foreach: {i: 0..1}}
objects:
  - {template: box, name: "n{i}", count: 3}
  - {name: extra, kind: nic, parent: n1}
  - {name: leaf, kind: switch}
links:
  - {a: "n{n}/nic0", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..2}}
  - {a: extra, b: leaf, kind: ethernet, bandwidth: 100 Gb/s}
""",
        "t.yaml",
    )
    assert sorted(inv.stamped) == ["n0", "n2"]
    assert inv.objects["extra"].parent == "n1"
    facts = inventory_facts(inv)
    assert sorted(row[0] for row in facts["object"]) == sorted(inv.objects) and len(inv.objects) == 14
    assert ("extra", "n1") in set(facts["parent"])


def _fleet() -> str:
    from benchmarks.verify_bench import Layout, inventory_yaml

    return inventory_yaml(Layout(256))


def test_a_fleet_cable_to_a_leaf_past_the_last_is_reported() -> None:
    # verify_bench's 256-GPU fleet: one scalable unit su0000 with leaves 0..7 (one per rail), 16
    # spines, cabled by `foreach: {p: 0..0, l: 0..7, s: 0..15}`. Running l to 8 asks for su0000-leaf8,
    # which is no object: reported once (its 16 cables are one missing end), at the spine foreach.
    text = _fleet()
    assert "foreach: {p: 0..0, l: 0..7, s: 0..15}" in text
    bad = text.replace("foreach: {p: 0..0, l: 0..7, s: 0..15}", "foreach: {p: 0..0, l: 0..8, s: 0..15}")
    line = bad.splitlines().index("links:") + 2  # the foreach's entry starts on the line after `links:`
    with pytest.raises(TopologError) as err:
        load_inventory_text(bad, "fleet.yaml")
    assert [f"{d.location}: {d.message}" for d in err.value.diagnostics] == [
        f"fleet.yaml:{line}:5: link endpoint 'su0000-leaf8' does not exist; did you mean 'su0000-leaf7'?"
    ]


def test_a_fleet_node_losing_a_nic_loses_its_cable_alone() -> None:
    # The quarantined node su0000-r2-n0 also has nic4 removed by its override: the fleet's NIC cables
    # are 32 nodes x 8 rails = 256, less that one = 255; every other node keeps all 8. Nothing else
    # changes: the object count drops by exactly one (nic4 has no children).
    text = _fleet()
    old = "                devices: {gpu6: {state: down}}"
    assert old in text
    whole = load_inventory_text(text, "fleet.yaml")
    inv = load_inventory_text(old.replace("}}", "}, nic4: {remove: true}}").join(text.split(old)), "fleet.yaml")
    assert "su0000-r2-n0/nic4" not in inv.objects
    assert len(inv.objects) == len(whole.objects) - 1
    cables = [lid for lid, lk in inv.links.items() if lk.kind == "infiniband" and "-leaf" in lk.b and "/nic" in lk.a]
    assert len(cables) == 255
    assert "su0000-r2-n0/nic4<->su0000-leaf4" not in inv.links
    assert "su0000-r2-n1/nic4<->su0000-leaf4" in inv.links


TWO_FLEETS = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
objects:
  - name: "a{i}"
    kind: pod
    count: 8
    labels: {team: alpha}
    software: {driver: "550.54.14"}
    children:
      - {template: box, name: "{pod}-n{i}", count: 2}
  - name: "b{i}"
    kind: pod
    count: 8
    labels: {team: beta}
    software: {driver: "535.54.03"}
    children:
      - {template: box, name: "{pod}-n{i}", count: 2}
"""


def test_a_partial_inventory_gives_each_entry_its_own_labels_and_software(tmp_path: Path) -> None:
    # authorize's partial inventory expands an entry one instance at a time, each from a spec made
    # for that instance and dropped after it: what an entry's instances share was kept by the spec's
    # id, which the next entry's spec could take over, giving the b pods team alpha and driver
    # 550.54.14. By hand from the text: every a pod is team alpha with driver 550.54.14, every b pod
    # team beta with driver 535.54.03, whichever two pods the question names.
    path = tmp_path / "fleet.yaml"
    path.write_text(TWO_FLEETS)
    expected = {"a": ({"team": "alpha"}, {"driver": "550.54.14"}), "b": ({"team": "beta"}, {"driver": "535.54.03"})}
    names = [f"{e}{i}" for e in "ab" for i in range(8)]
    for wanted in itertools.combinations(names, 2):
        partial = partial_inventory(read_files([path]), list(wanted))
        assert partial is not None, wanted
        inv = partial.inventory
        pods = [o for o in inv.objects.values() if o.kind == "pod"]
        assert {w for w in wanted} <= {o.id for o in pods}
        for pod in pods:
            assert (dict(pod.labels), dict(inv.software[pod.id])) == expected[pod.id[0]], (wanted, pod.id)


def test_an_id_removed_and_made_again_is_read_once_where_it_now_is() -> None:
    # a0, a1, b0, b1 are stamped whole (their GPUs one run each, which Inventory.objects_but passes
    # over without testing each object). m0's x1 is removed by its override and made again at the top
    # (`name: m0/x1`, after b1), and x9 is put into m0: the table holds m0/x1 once, at its new place,
    # and objects_but({"b0"}) is that order without b0's GPUs (b0 itself is no object of its plan).
    inv = load_inventory_text(
        HEAD
        + """templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
    links:
      - {a: gpu0, b: gpu1, kind: nvlink, generation: 4, count: 2}
objects:
  - {template: box, name: "a{i}", count: 2}
  - name: "m{i}"
    kind: node
    count: 1
    children: [{name: "x{i}", kind: nic, count: 2}]
    overrides: {m0: {devices: {x1: {remove: true}}}}
  - {template: box, name: "b{i}", count: 2}
  - {name: "m0/x1", kind: nic}
  - {name: x9, kind: nic, parent: m0}
""",
        "t.yaml",
    )
    table = ["a0", "a0/gpu0", "a0/gpu1", "a1", "a1/gpu0", "a1/gpu1", "m0", "m0/x0", "b0", "b0/gpu0", "b0/gpu1"]
    table += ["b1", "b1/gpu0", "b1/gpu1", "m0/x1", "x9"]
    assert list(inv.objects) == table
    assert [o.id for o in inv.objects_but({"b0"})] == [t for t in table if t not in ("b0/gpu0", "b0/gpu1")]
    assert inv.objects["m0/x1"].parent is None
    assert sorted(row[0] for row in inventory_facts(inv)["object"]) == sorted(table)
