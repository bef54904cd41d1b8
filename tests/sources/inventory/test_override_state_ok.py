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
