"""An override that writes `state: ok` puts back in service what its template wrote down or drained.

Before, the loader read `ok` as "no state written" (specs._state), so the template's `down` stood and
the override was dropped without a word: n1/nic0 below stayed down.
"""

from __future__ import annotations

from verifier.sources.inventory import load_inventory_text

# A template whose nic0 is written down, and whose gpu0-nic0 link is drained; three nodes n0..n2.
DOWN_IN_TEMPLATE = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
      - {name: nic0, kind: nic, state: down}
      - {name: nic1, kind: nic}
    links:
      - {a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16, state: drained}
      - {a: gpu1, b: nic1, kind: pcie, generation: 5, lanes: 16}
objects:
  - template: box
    name: "n{i}"
    count: 3
    overrides:
      n1:
        devices: {nic0: {state: ok}}
        links: [{a: gpu0, b: nic0, state: ok}]
      n2:
        devices: {nic1: {state: drained}}
"""


def test_an_override_writing_ok_clears_the_templates_state() -> None:
    inv = load_inventory_text(DOWN_IN_TEMPLATE, "t.yaml")
    states = {oid: obj.state for oid, obj in inv.objects.items() if "/nic" in oid}
    # n0 as the template wrote it (nic0 down); n1's override brings nic0 back (ok: no state); n2's
    # drains nic1 and leaves nic0 as the template wrote it (down).
    assert states == {
        "n0/nic0": "down", "n0/nic1": None,
        "n1/nic0": None, "n1/nic1": None,
        "n2/nic0": "down", "n2/nic1": "drained",
    }  # fmt: skip
    link_states = {lk.id: lk.state for lk in inv.links.values() if "gpu0" in lk.id}
    # The gpu0-nic0 link is drained in the template; only n1's link override writes it ok.
    assert link_states == {
        "n0/gpu0<->n0/nic0": "drained",
        "n1/gpu0<->n1/nic0": None,
        "n2/gpu0<->n2/nic0": "drained",
    }


def test_an_override_that_writes_no_state_keeps_the_templates() -> None:
    # The same inventory with n1's override writing labels only: every nic0 stays down.
    text = DOWN_IN_TEMPLATE.replace("devices: {nic0: {state: ok}}", "devices: {nic0: {labels: {rack_slot: a}}}")
    inv = load_inventory_text(text, "t.yaml")
    assert [oid for oid, obj in inv.objects.items() if obj.state == "down"] == ["n0/nic0", "n1/nic0", "n2/nic0"]


# A template whose node is written drained; entries using it write ok, nothing, or down.
DRAINED_TEMPLATE = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    state: drained
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
objects:
  - {template: box, name: "a{i}", count: 3, state: ok}
  - {template: box, name: b0}
  - {template: box, name: c0, state: ok}
  - {template: box, name: d0, state: down}
"""


def test_an_object_writing_ok_clears_its_templates_state() -> None:
    # Found by the R-TX review: the object's own `state: ok` was read as "not written" as an
    # override's was, so a0..a2 and c0 stayed drained without a word. By the lines above: the
    # counted entry a0..a2 (every instance, the fast stamping path included) and c0 write ok: in
    # service (no state); b0 writes nothing: drained, as its template; d0 writes down.
    inv = load_inventory_text(DRAINED_TEMPLATE, "t.yaml")
    nodes = {oid: obj.state for oid, obj in inv.objects.items() if obj.kind == "node"}
    assert nodes == {"a0": None, "a1": None, "a2": None, "b0": "drained", "c0": None, "d0": "down"}


def test_a_template_body_writing_ok_says_nothing() -> None:
    # `state: ok` in the template's body is the default: every node is in service but d0, written down.
    text = DRAINED_TEMPLATE.replace("    state: drained\n", "    state: ok\n")
    inv = load_inventory_text(text, "t.yaml")
    nodes = {oid: obj.state for oid, obj in inv.objects.items() if obj.kind == "node"}
    assert nodes == {"a0": None, "a1": None, "a2": None, "b0": None, "c0": None, "d0": "down"}
