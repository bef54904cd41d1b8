"""Adversarial review of the rows shared across alike objects (issue 46's loading and fact shortcuts).

inventory_facts gives the rows of objects alike but for their id and parent as one StampedRows
block per group (_WholeNodes.alike), promise and software rows as one block per shared tuple or
mapping (_shared_rows); graph_facts gives the rails of whole stamped nodes as one block per plan
(_rails) and picks stamped nodes' names from the loader's (_StampedNames); batch_key decides
whether a batch of rows needs a DISTINCT. Each is only right while every object it lumps
together really has the same rows: these tests give one instance of a group something of its
own (labels, software, a device removed or relabelled, a state, a what-if) and check every row
against what the inventory says, worked out by hand in the comments.

Differentially (not in this file): 60 inventories (benchmarks/verify_bench.py's layout at 256 and 512
GPUs with hand-picked and seeded overrides and faults, two shipped inventories with an override on one
instance) gave the same facts (every relation as a multiset, the placement subset too), verify
json/sarif, query output, exit codes and errors as the round's start commit (ffe2ae7).
"""

from __future__ import annotations

import json
import random
from itertools import combinations
from pathlib import Path

import numpy
from cli_helpers import run_cli

from verifier.core.stamped_rows import StampedRows
from verifier.engine.column_keys import MARK_TABLE, batch_key
from verifier.facts.graph import graph_facts
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory, load_inventory_text
from verifier.sources.scenario import apply_scenario, scenario_from

# Two racks of two `box` nodes, every node of one entry: rack0-n0, rack0-n1, rack1-n0, rack1-n1.
# Each node: nic0 and nic1 (rails "0" and "1", from the entry's {i}) and gpu0, a PCIe link gpu0-nic0
# inside the node (so the nodes are stamped whole from the template's plan).
FLEET = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    labels: {tenant: a}
    software: {driver: "535.129.03"}
    promises: [nvlink_domain]
    children:
      - {name: "nic{i}", kind: nic, count: 2, labels: {rail: "{i}"}}
      - {name: gpu0, kind: gpu}
    links:
      - {a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16}
objects:
  - name: "rack{i}"
    kind: rack
    count: 2
    labels: {row: A}
    children:
      - template: box
        name: "{rack}-n{i}"
        count: 2
        overrides:
OVERRIDES
"""

NODES = ["rack0-n0", "rack0-n1", "rack1-n0", "rack1-n1"]


def fleet(overrides: str) -> str:
    """FLEET with these override lines (an `overrides:` entry needs at least one)."""
    return FLEET.replace("OVERRIDES\n", overrides)


BASE = FLEET.replace("        overrides:\nOVERRIDES\n", "")
"""FLEET without overrides."""


def _sorted(rows: object) -> list[tuple[object, ...]]:
    assert isinstance(rows, (list, StampedRows))
    return sorted(rows, key=repr)


def test_the_untouched_fleet_has_every_row_once() -> None:
    facts = inventory_facts(load_inventory_text(BASE))
    # rack0 and rack1 differ in their index (0, 1); the nodes n0 of both racks are alike (same entry,
    # labels, index 0), as are the nodes n1: their rows come as blocks, and must still be each node's.
    assert _sorted(facts["parent"]) == _sorted(
        [(n, n[:5]) for n in NODES] + [(f"{n}/{d}", n) for n in NODES for d in ("nic0", "nic1", "gpu0")]
    )
    assert _sorted(facts["label"]) == _sorted(
        [("rack0", "row", "A"), ("rack1", "row", "A")]
        + [(n, "tenant", "a") for n in NODES]
        + [(f"{n}/nic{r}", "rail", str(r)) for n in NODES for r in (0, 1)]
    )
    # `index` of every counted object: racks 0 and 1, nodes by their place in the rack, NICs by {i}.
    assert _sorted(facts["quantity"]) == _sorted(
        [("rack0", "index", 0), ("rack1", "index", 1)]
        + [(n, "index", int(n[-1])) for n in NODES]
        + [(f"{n}/nic{r}", "index", r) for n in NODES for r in (0, 1)]
    )
    assert _sorted(facts["node_type"]) == _sorted([(n, "box") for n in NODES])
    assert _sorted(facts["software"]) == _sorted([(n, "driver", "535.129.03") for n in NODES])
    assert _sorted(facts["promise"]) == _sorted([(n, "nvlink_domain") for n in NODES])
    rails = graph_facts(load_inventory_text(BASE), ["rail"])["rail"]
    assert _sorted(rails) == _sorted([(f"{n}/nic{r}", r) for n in NODES for r in (0, 1)])


def test_an_override_on_one_instance_of_a_group_changes_its_rows_alone() -> None:
    # rack0-n1's own tenant b; rack1-n0's nic1 on rail 7; rack1-n1 without nic0 (and so without the
    # gpu0-nic0 link) and with driver 550.90.07. rack0-n0 stays its plan's.
    text = fleet(
        "          rack0-n1: {labels: {tenant: b}}\n"
        '          rack1-n0: {devices: {nic1: {labels: {rail: "7"}}}}\n'
        '          rack1-n1: {software: {driver: "550.90.07"}, devices: {nic0: {remove: true}}}\n'
    )
    facts = inventory_facts(load_inventory_text(text))
    devices = [f"{n}/{d}" for n in NODES for d in ("nic0", "nic1", "gpu0") if f"{n}/{d}" != "rack1-n1/nic0"]
    assert _sorted(facts["object"]) == _sorted(
        [("rack0", "rack"), ("rack1", "rack")]
        + [(n, "node") for n in NODES]
        + [(d, d.rsplit("/", 1)[1][:3]) for d in devices]
    )
    assert _sorted(facts["label"]) == _sorted(
        [
            ("rack0", "row", "A"),
            ("rack1", "row", "A"),
            ("rack0-n0", "tenant", "a"),
            ("rack0-n1", "tenant", "b"),
            ("rack1-n0", "tenant", "a"),
            ("rack1-n1", "tenant", "a"),
            ("rack0-n0/nic0", "rail", "0"),
            ("rack0-n0/nic1", "rail", "1"),
            ("rack0-n1/nic0", "rail", "0"),
            ("rack0-n1/nic1", "rail", "1"),
            ("rack1-n0/nic0", "rail", "0"),
            ("rack1-n0/nic1", "rail", "7"),
            ("rack1-n1/nic1", "rail", "1"),
        ]
    )
    # The link gpu0-nic0 of every node but rack1-n1 (its nic0 removed, the link with it).
    assert sorted(str(row[0]) for row in facts["link"]) == sorted(
        f"{n}/gpu0<->{n}/nic0" for n in ("rack0-n0", "rack0-n1", "rack1-n0")
    )
    # software: the template's driver but on rack1-n1; its version as major * 1000 + minor.
    assert _sorted(facts["software"]) == _sorted(
        [(n, "driver", "535.129.03") for n in NODES[:3]] + [("rack1-n1", "driver", "550.90.07")]
    )
    assert _sorted(facts["software_version"]) == _sorted(
        [(n, "driver", 535129) for n in NODES[:3]] + [("rack1-n1", "driver", 550090)]
    )
    assert _sorted(facts["promise"]) == _sorted([(n, "nvlink_domain") for n in NODES])
    rails = graph_facts(load_inventory_text(text), ["rail"])["rail"]
    assert _sorted(rails) == _sorted(
        [
            ("rack0-n0/nic0", 0),
            ("rack0-n0/nic1", 1),
            ("rack0-n1/nic0", 0),
            ("rack0-n1/nic1", 1),
            ("rack1-n0/nic0", 0),
            ("rack1-n0/nic1", 7),
            ("rack1-n1/nic1", 1),
        ]
    )


def test_placements_subset_of_an_overridden_fleet_is_read_row_by_row() -> None:
    # Placement keeps GPUs and their ancestors: here rack1-n1 (driver 550.90.07 by override), its gpu0
    # and rack1, and rack0-n0 (the template's driver) with its gpu0. Rows of those objects alone.
    text = fleet('          rack1-n1: {software: {driver: "550.90.07"}, labels: {tenant: c}}\n')
    keep = {"rack1", "rack1-n1", "rack1-n1/gpu0", "rack0-n0", "rack0-n0/gpu0"}
    facts = inventory_facts(load_inventory_text(text), keep)
    assert _sorted(facts["software"]) == _sorted(
        [("rack0-n0", "driver", "535.129.03"), ("rack1-n1", "driver", "550.90.07")]
    )
    assert _sorted(facts["label"]) == _sorted(
        [("rack1", "row", "A"), ("rack0-n0", "tenant", "a"), ("rack1-n1", "tenant", "c")]
    )
    assert _sorted(facts["parent"]) == _sorted(
        [("rack0-n0", "rack0"), ("rack0-n0/gpu0", "rack0-n0"), ("rack1-n1", "rack1"), ("rack1-n1/gpu0", "rack1-n1")]
    )
    assert _sorted(facts["promise"]) == _sorted([("rack0-n0", "nvlink_domain"), ("rack1-n1", "nvlink_domain")])


def test_an_override_equal_to_the_template_still_gives_each_row_once() -> None:
    # rack0-n0 written with the template's own tenant and driver: the same values in mappings of its
    # own, so it is no longer in a group with rack1-n0; its rows are the same as before, each once.
    text = fleet('          rack0-n0: {labels: {tenant: a}, software: {driver: "535.129.03"}}\n')
    facts = inventory_facts(load_inventory_text(text))
    assert _sorted(facts["label"]) == _sorted(
        [("rack0", "row", "A"), ("rack1", "row", "A")]
        + [(n, "tenant", "a") for n in NODES]
        + [(f"{n}/nic{r}", "rail", str(r)) for n in NODES for r in (0, 1)]
    )
    assert _sorted(facts["software"]) == _sorted([(n, "driver", "535.129.03") for n in NODES])


def test_a_state_on_one_node_or_device_is_its_own() -> None:
    # rack1-n0 drained (the node itself), rack0-n1's gpu0 down: two state rows, no other.
    text = fleet("          rack1-n0: {state: drained}\n          rack0-n1: {devices: {gpu0: {state: down}}}\n")
    facts = inventory_facts(load_inventory_text(text))
    assert _sorted(facts["state"]) == _sorted([("rack1-n0", "drained"), ("rack0-n1/gpu0", "down")])


def test_placeholders_per_instance_give_each_instance_its_values() -> None:
    # A label and a software version written with the entry's {i} and {rack}: each node's own text
    # (n0 and n1 of both racks share an index, but not their rack).
    text = BASE.replace(
        '        name: "{rack}-n{i}"\n        count: 2\n',
        '        name: "{rack}-n{i}"\n        count: 2\n        labels: {slot: "{rack}.{i}"}\n'
        '        software: {cuda: "12.{i}"}\n',
    )
    facts = inventory_facts(load_inventory_text(text))
    assert _sorted([r for r in facts["label"] if r[1] == "slot"]) == _sorted(
        [(n, "slot", f"{n[:5]}.{n[-1]}") for n in NODES]
    )
    # cuda 12.0 and 12.1 as numbers: 12000 and 12001; the driver is the template's.
    assert _sorted([r for r in facts["software_version"] if r[1] == "cuda"]) == _sorted(
        [(n, "cuda", 12000 + int(n[-1])) for n in NODES]
    )
    assert _sorted([r for r in facts["software"] if r[1] == "driver"]) == _sorted(
        [(n, "driver", "535.129.03") for n in NODES]
    )


def test_one_template_under_two_parents_and_two_entries() -> None:
    # Entry 1: rack0-n0, rack0-n1, rack1-n0, rack1-n1 (in racks). Entry 2: "spare{i}" x 2 at the top,
    # no parent, indexes 0 and 1 like the rack nodes: alike to each other, never to the racks' nodes
    # (those have a parent). Every node: tenant a, a parent row only in racks.
    text = BASE + '  - {template: box, name: "spare{i}", count: 2}\n'
    facts = inventory_facts(load_inventory_text(text))
    nodes = [*NODES, "spare0", "spare1"]
    assert _sorted([r for r in facts["parent"] if "/" not in str(r[0])]) == _sorted([(n, n[:5]) for n in NODES])
    assert _sorted([r for r in facts["label"] if r[1] == "tenant"]) == _sorted([(n, "tenant", "a") for n in nodes])
    assert _sorted([r for r in facts["quantity"] if "/" not in str(r[0]) and "spare" in str(r[0])]) == _sorted(
        [("spare0", "index", 0), ("spare1", "index", 1)]
    )
    rails = graph_facts(load_inventory_text(text), ["rail"])["rail"]
    assert _sorted(rails) == _sorted([(f"{n}/nic{r}", r) for n in nodes for r in (0, 1)])


def test_a_what_if_on_a_stamped_node_changes_that_node_alone() -> None:
    # --fail rack1-n0/nic1 and --drain rack0-n1: the NIC down (and its node no longer stamped whole),
    # the node drained; every other row as in the untouched fleet, the rails included.
    inv = apply_scenario(load_inventory_text(BASE), scenario_from(drain=["rack0-n1"], fail=["rack1-n0/nic1"]))
    facts = inventory_facts(inv)
    assert _sorted(facts["state"]) == _sorted([("rack0-n1", "drained"), ("rack1-n0/nic1", "down")])
    assert _sorted(facts["label"]) == _sorted(
        [("rack0", "row", "A"), ("rack1", "row", "A")]
        + [(n, "tenant", "a") for n in NODES]
        + [(f"{n}/nic{r}", "rail", str(r)) for n in NODES for r in (0, 1)]
    )
    rails = graph_facts(apply_scenario(load_inventory_text(BASE), scenario_from(fail=["rack1-n0/nic1"])), ["rail"])
    assert _sorted(rails["rail"]) == _sorted([(f"{n}/nic{r}", r) for n in NODES for r in (0, 1)])


def test_a_second_file_putting_a_device_into_a_stamped_node(tmp_path: Path) -> None:
    # extra.yaml puts a third NIC, rail 5, into rack0-n0: that node now holds an object its plan does
    # not, so it is read object by object; its rails are 0, 1 and 5, the other nodes' 0 and 1.
    (tmp_path / "fleet.yaml").write_text(BASE)
    (tmp_path / "extra.yaml").write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n"
        '  - {name: "rack0-n0/nic9", kind: nic, parent: rack0-n0, labels: {rail: "5"}}\n'
    )
    paths = [tmp_path / "fleet.yaml", tmp_path / "extra.yaml"]
    rails = graph_facts(load_inventory(paths), ["rail"])["rail"]
    assert _sorted(rails) == _sorted([(f"{n}/nic{r}", r) for n in NODES for r in (0, 1)] + [("rack0-n0/nic9", 5)])
    facts = inventory_facts(load_inventory(paths))
    assert ("rack0-n0/nic9", "rack0-n0") in list(facts["parent"])
    assert _sorted([r for r in facts["label"] if r[1] == "rail"]) == _sorted(
        [(f"{n}/nic{r}", "rail", str(r)) for n in NODES for r in (0, 1)] + [("rack0-n0/nic9", "rail", "5")]
    )


def test_query_reads_the_shared_rows_as_rows_on_every_engine(tmp_path: Path) -> None:
    # The override fleet of the test above, through `topolog query`: the DuckDB engine loads the
    # blocks as blocks, memory and pydatalog as tuples; all three give the rails and tenants by hand.
    path = tmp_path / "fleet.yaml"
    path.write_text(
        fleet(
            "          rack0-n1: {labels: {tenant: b}}\n"
            '          rack1-n0: {devices: {nic1: {labels: {rail: "7"}}}}\n'
            "          rack1-n1: {devices: {nic0: {remove: true}}}\n"
        )
    )
    expected_rails = sorted(
        [
            ["rack0-n0/nic0", 0],
            ["rack0-n0/nic1", 1],
            ["rack0-n1/nic0", 0],
            ["rack0-n1/nic1", 1],
            ["rack1-n0/nic0", 0],
            ["rack1-n0/nic1", 7],
            ["rack1-n1/nic1", 1],
        ]
    )
    expected_tenants = sorted([["rack0-n0", "a"], ["rack0-n1", "b"], ["rack1-n0", "a"], ["rack1-n1", "a"]])
    for engine in ("duckdb", "memory", "pydatalog"):
        code, out, err = run_cli("query", str(path), "rail(O, R)", "--format", "json", "--engine", engine)
        assert code == 0, err
        assert sorted(json.loads(out)["rows"]) == expected_rails, engine
        code, out, err = run_cli("query", str(path), 'label(N, "tenant", T)', "--format", "json", "--engine", engine)
        assert code == 0, err
        assert sorted(json.loads(out)["rows"]) == expected_tenants, engine


def _unique(columns: list[numpy.ndarray], key: tuple[int, ...]) -> bool:
    rows = list(zip(*(columns[c].tolist() for c in key), strict=True))
    return len(set(rows)) == len(rows)


def test_batch_key_never_claims_a_key_that_repeats() -> None:
    # 400 seeded random batches: small value ranges (so repeats are common), some offset far from 0,
    # some columns spread wider than MARK_TABLE (which batch_key may not judge). Whatever it returns
    # must hold no value (or pair of values) twice, by brute force; and where it returns None, no
    # column within MARK_TABLE's span is unique, nor any pair of such columns with at least as many
    # possible value pairs as rows and at most MARK_TABLE of them.
    rng = random.Random(46)
    for _ in range(400):
        rows = rng.randint(1, 12)
        width = rng.randint(1, 4)
        columns = []
        for _c in range(width):
            base = rng.choice([0, 5, -(10**12), 10**15])
            spread = rng.choice([1, 2, 3, rows, 4 * rows])
            values = [base + rng.randrange(spread) for _r in range(rows)]
            if rng.random() < 0.1:
                values[0] = base + MARK_TABLE + 7  # too wide a span to mark
            columns.append(numpy.array(values, dtype=numpy.int64))
        key = batch_key(columns)
        if key is not None:
            assert _unique(columns, key), (columns, key)
            continue
        spans = [int(values.max()) - int(values.min()) + 1 for values in columns]
        narrow = [c for c in range(width) if spans[c] <= MARK_TABLE]
        assert not any(_unique(columns, (c,)) for c in narrow), columns
        for a, b in combinations(narrow, 2):
            possible = len(set(columns[a].tolist())) * len(set(columns[b].tolist()))
            if rows <= possible <= MARK_TABLE:
                assert not _unique(columns, (a, b)), (columns, a, b)
