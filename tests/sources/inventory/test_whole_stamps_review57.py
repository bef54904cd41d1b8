"""Review of the lean path for counted nodes (templates.py Expander._whole, _stamp_whole): the first
instance of an entry goes the long way (_instantiate) and works out what the instances share; every
later one is stamped from that. What the entry itself writes over its template (state, model,
labels, software, promises, figures) must reach the later instances too, not only the first: a
fast path that took the template's state or model alone passed every other test of the loader.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text

# Template box: a node, model DGX-H100, state drained, label zone, software driver, promise
# nvlink_domain, price $4.10/h, memory type HBM3 (a typed label). Entry "n{i}" (line 18, column 9)
# writes its own state, model, label, software, promise and power; entry "m{i}" (line 27, column 9)
# writes nothing of its own.
TEXT = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    model: DGX-H100
    state: drained
    labels: {zone: z1}
    software: {driver: "535.129.03"}
    promises: [nvlink_domain]
    price: $4.10/h
    type: HBM3
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
objects:
  - name: r0
    kind: rack
    children:
      - name: "n{i}"
        template: box
        count: 3
        state: down
        model: GB200-NVL72
        labels: {tenant: t1}
        software: {cuda: "12.2"}
        promises: [full_mesh]
        power: 9 kW
      - name: "m{i}"
        template: box
        count: 3
        start: 5
"""


def test_what_an_entry_writes_reaches_every_instance() -> None:
    inv = load_inventory_text(TEXT, "t.yaml")
    # By hand. n0..n2: the entry's keys win over box's (state down, model GB200-NVL72), labels and
    # software merge (box's first), promises are box's then the entry's; figures: price $4.10/h is
    # 4.10 x 100,000 = 410,000 millicents per hour, power 9 kW is 9,000 W; `type: HBM3` is the
    # typed label memory_type. m5..m7 (start 5): box's alone. Index = {i}; parent r0; every node is
    # its template's plan alone (no override, children or links of its own).
    for k in range(3):
        n = inv.found[f"n{k}"]
        assert (n.kind, n.parent, n.model, n.state, n.template, n.index) == (
            "node",
            "r0",
            "GB200-NVL72",
            "down",
            "box",
            k,
        ), n
        assert dict(n.labels) == {"memory_type": "HBM3", "zone": "z1", "tenant": "t1"}, n
        assert dict(n.quantities) == {"price_millicents_per_hour": 410_000, "power_w": 9_000}, n
        assert dict(inv.software[f"n{k}"]) == {"driver": "535.129.03", "cuda": "12.2"}
        assert inv.promises[f"n{k}"] == ("nvlink_domain", "full_mesh")
        assert str(n.loc) == "t.yaml:18:9"
    for k in range(5, 8):
        m = inv.found[f"m{k}"]
        assert (m.model, m.state, m.index, str(m.loc)) == ("DGX-H100", "drained", k, "t.yaml:27:9"), m
        assert dict(m.labels) == {"memory_type": "HBM3", "zone": "z1"}, m
        assert dict(m.quantities) == {"price_millicents_per_hour": 410_000}, m
        assert dict(inv.software[f"m{k}"]) == {"driver": "535.129.03"}
        assert inv.promises[f"m{k}"] == ("nvlink_domain",)
    assert inv.stamped == {**{f"n{k}": "box" for k in range(3)}, **{f"m{k}": "box" for k in range(5, 8)}}
    # Each node's GPUs are box's, under the node.
    assert [inv.found[f"{n}/gpu1"].parent for n in ("n2", "m7")] == ["n2", "m7"]


# A two-GPU node template (lines 3-6, the GPU entry at line 6, column 9), then objects from line 8.
BOX = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
objects:
"""


def _problems(text: str) -> list[tuple[str, str]]:
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    return [(d.message, str(d.location)) for d in err.value.diagnostics]


def test_an_id_taken_before_a_later_instance_is_stamped_is_reported() -> None:
    # A loose GPU n1/gpu0 (line 8, column 5, no parent) written before the entry n{i} (line 9): n0 is
    # the entry's first instance, n1 its second (the lean path). n1's GPU 0 from box's line 6 takes
    # the loose GPU's id with another parent, n1: reported there, naming both parents.
    text = BOX + '  - {name: n1/gpu0, kind: gpu, model: H100-SXM5-80GB}\n  - {name: "n{i}", template: box, count: 2}\n'
    assert _problems(text) == [("'n1/gpu0' is in two parents: None (at t.yaml:8:5) and 'n1'", "t.yaml:6:9")]


def test_a_later_instance_named_as_a_device_not_made_yet_is_reported() -> None:
    # box makes gpu1 alone here (start 1). Node n0 (line 8) is stamped, its GPU n0/gpu1 not made yet.
    # The entry n0/gpu{i} (line 9, column 5) makes node n0/gpu0 (free: its first instance) and then
    # node n0/gpu1 (its second, the lean path): n0's GPU's id, top-level (parent None) where the GPU
    # is in n0 (box's line 6): reported at the entry, naming both parents.
    text = BOX.replace("count: 2}\nobjects", "count: 1, start: 1}\nobjects") + (
        '  - {name: "n{i}", template: box, count: 1}\n  - {name: "n0/gpu{i}", template: box, count: 2}\n'
    )
    assert _problems(text) == [("'n0/gpu1' is in two parents: 'n0' (at t.yaml:6:9) and None", "t.yaml:9:5")]


def test_a_link_id_taken_before_a_later_instance_is_stamped_gets_the_next_number() -> None:
    # Rack rk (line 10) writes an NVLink between n1's GPUs (line 13, column 9) before the entry
    # n{i} (line 14) stamps box, whose own NVLink gpu0-gpu1 (line 8, column 9) is in every node:
    # in n1 (the entry's second instance, the lean path) its id n1/gpu0<->n1/gpu1 is taken, so it
    # is the parallel link #2. Bandwidths: NVLink 4 is 25 GB/s a link, 1 link 25,000 MB/s, 2 links
    # 50,000. In the order made: rk's link, n0's, n1's.
    text = (
        BOX.replace(
            "count: 2}\nobjects:\n",
            "count: 2}\n    links:\n      - {a: gpu0, b: gpu1, kind: nvlink, generation: 4, count: 2}\nobjects:\n",
        )
        + "  - name: rk\n    kind: rack\n    links:\n"
        + "      - {a: n1/gpu0, b: n1/gpu1, kind: nvlink, generation: 4, count: 1}\n"
        + '  - {name: "n{i}", template: box, count: 2}\n'
    )
    inv = load_inventory_text(text, "t.yaml")
    assert [(lk.id, lk.a, lk.b, lk.mbps, str(lk.loc)) for lk in inv.links.values()] == [
        ("n1/gpu0<->n1/gpu1", "n1/gpu0", "n1/gpu1", 25_000, "t.yaml:13:9"),
        ("n0/gpu0<->n0/gpu1", "n0/gpu0", "n0/gpu1", 50_000, "t.yaml:8:9"),
        ("n1/gpu0<->n1/gpu1#2", "n1/gpu0", "n1/gpu1", 50_000, "t.yaml:8:9"),
    ]
