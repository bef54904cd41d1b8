"""Which input relations each part of an inventory feeds, apart from the code that makes them.

Light to import (no graph library): the checks read these names to tell what a finding depends
on (the wiring of copies of one template, what an override changed).
"""

from __future__ import annotations

GRAPH_RELATIONS: frozenset[str] = frozenset(
    {
        "pcie_path",
        "pcie_switch_load",
        "gpu_pair_bottleneck",
        "gpu_nic_path",
        "nearest_nic",
        "gpu_fabric_bottleneck",
        "leaf_class",
        "leaf_class_bottleneck",
        "fabric_island",
        "node_fabric_island",
        "rail",
        "die_pair_bottleneck",
        "scaleup_domain",
        "switch_ports_taken",
    }
)
"""Every relation graph_facts emits; their columns are declared in rules/schema.dl."""

LINK_RELATIONS: frozenset[str] = frozenset({"link", "link_attr", "link_plan"}) | GRAPH_RELATIONS
"""The input relations whose rows follow from how devices are linked: a check that reads none of
them, directly or through other rules, judges the same of two instances however they are wired."""

_ANY_OVERRIDE: frozenset[str] = frozenset({"node_conformance", "node_slot", "node_type", "template_reference"})
"""What every override of a node changes: the node is no longer exactly its type's plan."""

OVERRIDE_RELATIONS: dict[str, frozenset[str]] = {
    "labels": frozenset({"label"}),
    "state": frozenset({"state"}),
    "model": frozenset({"model"}),
    "figures": frozenset({"quantity", "label"}),
    "software": frozenset({"software", "software_version", "software_release"}),
    "links": LINK_RELATIONS | {"state"},
}
"""Per part of a node an override can change (verifier.sources.inventory.model.Inventory.overridden),
the input relations that part feeds, besides _ANY_OVERRIDE's."""


def override_relations(parts: frozenset[str]) -> frozenset[str] | None:
    """The input relations an override of these parts can change; None: any (its devices changed)."""
    if "devices" in parts:
        return None
    out = set(_ANY_OVERRIDE)
    for part in parts:
        out |= OVERRIDE_RELATIONS[part]
    return frozenset(out)
