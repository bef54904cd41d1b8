"""node_conformance, template_reference and node_slot: which nodes NODE001/NODE002 compare, and with what."""

from __future__ import annotations

from collections.abc import Sequence

from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory.loader import load_inventory_text

TEXT = """
apiVersion: topolog.dev/v1
templates:
  t:
    kind: node
    children:
      - {name: cpu0, kind: cpu, children: [{name: dram0, kind: memory}]}
      - {name: "gpu{i}", kind: gpu, count: 2}
  u:
    kind: node
    children:
      - {name: gpu0, kind: gpu}
objects:
  - template: t
    name: "a{i}"
    count: 3
    overrides:
      a2: {devices: {gpu1: {remove: true}}}
  - template: u
    name: "b{i}"
    count: OVERRIDDEN
    overrides:
      b0: {labels: {x: "0"}}
      b1: {labels: {x: "1"}}
      b2: {labels: {x: "2"}}
"""


def _facts(count: int) -> dict[str, Sequence[tuple[str | int, ...]]]:
    text = TEXT.replace("OVERRIDDEN", str(count))
    if count < 3:
        text = text.replace('      b2: {labels: {x: "2"}}\n', "")
    return inventory_facts(load_inventory_text(text, "t.yaml"))


def test_pristine_nodes_are_the_reference_and_get_no_rows_of_their_own() -> None:
    facts = _facts(3)
    # a0 and a1 are stamped whole: a0 (the smallest) stands for t; a1 is neither compared nor described.
    assert ("a2", "t", "a0", "built exactly from its node type") in facts["node_conformance"]
    assert ("t", "a0") in facts["template_reference"]
    nodes = {row[0] for row in facts["node_slot"]}
    assert "a1" not in nodes
    # Devices are named relative to their node, nested ones too (dram0 inside cpu0).
    assert ("a0", "dram0", "a0/dram0") in facts["node_slot"]
    assert ("a2", "gpu0", "a2/gpu0") in facts["node_slot"]
    assert not any(row[:2] == ("a2", "gpu1") for row in facts["node_slot"])


def test_without_a_pristine_node_a_majority_is_the_norm() -> None:
    facts = _facts(3)
    # Every node of u has an override; all three are alike, so the smallest stands for the type.
    assert ("b1", "u", "b0", "like most nodes of its node type") in facts["node_conformance"]
    assert ("b2", "u", "b0", "like most nodes of its node type") in facts["node_conformance"]
    assert ("u", "b0") in facts["template_reference"]


def test_two_overridden_nodes_have_no_norm() -> None:
    facts = _facts(2)
    assert not any(row[1] == "u" for row in facts["node_conformance"])
    assert not any(row[0] == "u" for row in facts["template_reference"])
