"""promise and the software relations of objects that share one promises tuple or software mapping
(the nodes of one template) come as one block of rows per shared value (StampedRows), the same rows
as one per object; an object with its own gives plain rows, and so does placement's subset (`keep`):
a block of the kept objects that share a value, plain rows for one kept alone with it."""

from __future__ import annotations

from verifier.core.stamped_rows import StampedRows
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text

FLEET = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    promises: [nvlink_domain, rail_optimized]
    software: {driver: "535.129.03", cuda: "12.2", os: "DGX OS 6.1"}
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
objects:
  - {template: box, name: "n{i}", count: 3}
  - name: odd
    template: box
    software: {driver: "550.90.07"}
"""


def test_nodes_of_one_template_share_a_block_of_their_rows() -> None:
    inv = load_inventory_text(FLEET)
    facts = inventory_facts(inv)
    # n0, n1, n2 share the template's promises and software (one block each); `odd` merges its own
    # driver over the template's: a mapping of its own, so plain rows (the template's keys it does not
    # override first, then its own: cuda, os, driver). Its promises are the template's, but an entry's
    # promises tuple is worked out per entry: its own tuple, so plain rows too.
    software = facts["software"]
    assert isinstance(software, StampedRows)
    assert software.plain == [("odd", "cuda", "12.2"), ("odd", "os", "DGX OS 6.1"), ("odd", "driver", "550.90.07")]
    assert [len(b.names) for b in software.blocks] == [3]
    # Every row, by hand: 3 components for each of the 4 nodes.
    assert sorted(software) == sorted(
        [
            (n, c, v)
            for n in ("n0", "n1", "n2")
            for c, v in (("driver", "535.129.03"), ("cuda", "12.2"), ("os", "DGX OS 6.1"))
        ]
        + [("odd", "driver", "550.90.07"), ("odd", "cuda", "12.2"), ("odd", "os", "DGX OS 6.1")]
    )
    # Versions as numbers, major * 1000 + minor, patch ignored (software.version_number): CUDA 12.2 is
    # 12002, driver 535.129.03 is 535129, 550.90.07 is 550090; "DGX OS 6.1" is not a version: no row.
    assert sorted(facts["software_version"]) == sorted(
        [(n, c, v) for n in ("n0", "n1", "n2") for c, v in (("driver", 535129), ("cuda", 12002))]
        + [("odd", "cuda", 12002), ("odd", "driver", 550090)]
    )
    assert sorted(facts["promise"]) == sorted(
        (n, w) for n in ("n0", "n1", "n2", "odd") for w in ("nvlink_domain", "rail_optimized")
    )


def test_placements_subset_of_one_node_a_mapping_gives_plain_rows() -> None:
    inv = load_inventory_text(FLEET)
    facts = inventory_facts(inv, keep={"n1", "n1/gpu0", "odd"})
    # n1 is the only kept node with the template's mapping, odd has its own: no block, plain lists,
    # nodes in inventory order, each node's components in its mapping's order.
    assert facts["software"] == [
        ("n1", "driver", "535.129.03"),
        ("n1", "cuda", "12.2"),
        ("n1", "os", "DGX OS 6.1"),
        ("odd", "cuda", "12.2"),
        ("odd", "os", "DGX OS 6.1"),
        ("odd", "driver", "550.90.07"),
    ]
    assert facts["promise"] == [
        ("n1", "nvlink_domain"),
        ("n1", "rail_optimized"),
        ("odd", "nvlink_domain"),
        ("odd", "rail_optimized"),
    ]


def test_placements_subset_shares_a_block_among_the_kept_nodes() -> None:
    inv = load_inventory_text(FLEET)
    facts = inventory_facts(inv, keep={"n0", "n2", "n2/gpu1", "odd"})
    # n0 and n2 are kept with the template's mapping (one block of its 3 components, their two
    # names); n1 is not kept (no row); odd, alone with its own mapping, gives plain rows.
    software = facts["software"]
    assert isinstance(software, StampedRows)
    assert software.plain == [("odd", "cuda", "12.2"), ("odd", "os", "DGX OS 6.1"), ("odd", "driver", "550.90.07")]
    assert [[list(n) for n in b.names] for b in software.blocks] == [[["n0"], ["n2"]]]
    assert sorted(software) == sorted(
        [(n, c, v) for n in ("n0", "n2") for c, v in (("driver", "535.129.03"), ("cuda", "12.2"), ("os", "DGX OS 6.1"))]
        + [("odd", "driver", "550.90.07"), ("odd", "cuda", "12.2"), ("odd", "os", "DGX OS 6.1")]
    )
    # Versions as in the test above (12.2 -> 12002, 535.129.03 -> 535129, 550.90.07 -> 550090); a
    # release number is major * 10^6 + minor * 10^3 + patch (software.release_number): 12.2 ->
    # 12002000, 535.129.03 -> 535129003, 550.90.07 -> 550090007; "DGX OS 6.1" has neither.
    assert sorted(facts["software_version"]) == sorted(
        [(n, c, v) for n in ("n0", "n2") for c, v in (("driver", 535129), ("cuda", 12002))]
        + [("odd", "cuda", 12002), ("odd", "driver", 550090)]
    )
    assert sorted(facts["software_release"]) == sorted(
        [(n, c, v) for n in ("n0", "n2") for c, v in (("driver", 535129003), ("cuda", 12002000))]
        + [("odd", "cuda", 12002000), ("odd", "driver", 550090007)]
    )
    assert sorted(facts["promise"]) == sorted(
        (n, w) for n in ("n0", "n2", "odd") for w in ("nvlink_domain", "rail_optimized")
    )


RACKS = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    labels: {zone: a}
    children:
      - {name: gpu0, kind: gpu}
objects:
  - name: "r{i}"
    kind: rack
    count: 2
    children:
      - {template: box, name: "{rack}-n{i}", count: 2}
"""


def test_objects_alike_but_for_id_and_parent_share_a_block() -> None:
    facts = inventory_facts(load_inventory_text(RACKS))
    # r0-n0 and r1-n0 are alike (a node of `box`, index 0, label zone=a, in different racks), and so
    # are r0-n1 and r1-n1 (index 1): two blocks. The racks differ in index (0, 1): a row each. The
    # GPUs are their nodes' plan's (blocks of the plan, as before).
    objects = facts["object"]
    assert isinstance(objects, StampedRows) and objects.plain == [("r0", "rack"), ("r1", "rack")]
    assert sorted(objects) == [
        ("r0", "rack"),
        ("r0-n0", "node"),
        ("r0-n0/gpu0", "gpu"),
        ("r0-n1", "node"),
        ("r0-n1/gpu0", "gpu"),
        ("r1", "rack"),
        ("r1-n0", "node"),
        ("r1-n0/gpu0", "gpu"),
        ("r1-n1", "node"),
        ("r1-n1/gpu0", "gpu"),
    ]
    parents = sorted(facts["parent"])
    assert [p for p in parents if "/" not in str(p[0])] == [
        ("r0-n0", "r0"),
        ("r0-n1", "r0"),
        ("r1-n0", "r1"),
        ("r1-n1", "r1"),
    ]
    # Each node's index is a quantity row; the racks' too (r0: 0, r1: 1).
    assert sorted(r for r in facts["quantity"] if r[1] == "index") == [
        ("r0", "index", 0),
        ("r0-n0", "index", 0),
        ("r0-n1", "index", 1),
        ("r1", "index", 1),
        ("r1-n0", "index", 0),
        ("r1-n1", "index", 1),
    ]
    assert sorted(facts["label"]) == [(n, "zone", "a") for n in ("r0-n0", "r0-n1", "r1-n0", "r1-n1")]
    assert sorted(facts["node_type"]) == [(n, "box") for n in ("r0-n0", "r0-n1", "r1-n0", "r1-n1")]
