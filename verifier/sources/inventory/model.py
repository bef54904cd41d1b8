"""The loaded, validated inventory: plain data that `verifier.facts.inventory` turns into facts.

Objects from templates share their `labels`/`quantities` mappings and `SourceLocation`
with every other instance of the same template line (an override gives the instance its
own copy), which keeps a 131,072-GPU fleet to a few hundred MB. Treat these mappings as
read-only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from verifier.core.errors import SourceLocation

EMPTY_STR: Mapping[str, str] = MappingProxyType({})
EMPTY_INT: Mapping[str, int] = MappingProxyType({})

OBJECT_KINDS: tuple[str, ...] = (
    "fleet",
    "pod",
    "rack",
    "node",
    "socket",
    "die",
    "gpu",
    "fpga",
    "cpu",
    "core",
    "nic",
    "nvswitch",
    "pcie_switch",
    "switch",
    "memory",
    "cache",
)
FABRIC_LINK_KINDS = frozenset({"infiniband", "ethernet"})
"""Link kinds of the network fabric, outside the host."""

LINK_KINDS: tuple[str, ...] = (
    "nvlink",
    "nvswitch",
    "pcie",
    "c2c",
    "upi",
    "xgmi",
    "infiniband",
    "ethernet",
    "d2d",
    "soc",
)
MODEL_KINDS: tuple[str, ...] = (
    "gpu",
    "hpu",
    "fpga",
    "cpu",
    "nic",
    "dpu",
    "nvswitch",
    "pcie_switch",
    "switch",
    "memory",
    "system",
)
STATES: tuple[str, ...] = ("ok", "down", "degraded", "drained")
PROMISES: tuple[str, ...] = ("nvlink_domain", "rail_optimized", "gpu_nic_affinity", "full_mesh")


@dataclass(slots=True)
class Obj:
    """One object: a fleet, rack, node, device, memory or cache."""

    id: str
    kind: str
    parent: str | None
    loc: SourceLocation
    model: str | None = None
    labels: Mapping[str, str] = field(default_factory=lambda: EMPTY_STR)
    quantities: Mapping[str, int] = field(default_factory=lambda: EMPTY_INT)
    state: str | None = None  # None means healthy ("ok")
    template: str | None = None  # set on the root object of a template instance
    index: int | None = None  # position in its `count` group ({i}), for rules that align GPU i with NIC i
    origin: str | None = field(default=None, compare=False)
    """The node whose template's plan stamped it (see Inventory.stamped), as for links; None otherwise."""


@dataclass(slots=True)
class Link:
    """One declared link (a bond of several lanes or NVLinks is one link)."""

    id: str
    a: str
    b: str
    kind: str
    mbps: int  # whole link, per direction
    loc: SourceLocation
    attrs: Mapping[str, int] = field(default_factory=lambda: EMPTY_INT)  # generation, lanes, count, latency_ns
    labels: Mapping[str, str] = field(default_factory=lambda: EMPTY_STR)
    state: str | None = None
    origin: str | None = field(default=None, compare=False)  # the node whose template stamped it (Inventory.stamped)
    plan: Mapping[str, int] = field(default_factory=lambda: EMPTY_INT, compare=False)
    """The template's generation/lanes, on a template link whose override changed them (empty otherwise)."""


@dataclass(frozen=True, slots=True)
class CatalogModel:
    """One hardware model with its published figures."""

    name: str
    vendor: str
    kind: str
    specs: Mapping[str, int]
    features: frozenset[str]
    source: str
    loc: SourceLocation
    mig: tuple[tuple[str, int], ...] = ()
    """MIG profiles the model can be partitioned into ("3g.40gb") and how many instances of each fit one GPU."""


@dataclass
class Inventory:
    """Everything loaded from one or more inventory files, merged and validated."""

    objects: dict[str, Obj] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    models: dict[str, CatalogModel] = field(default_factory=dict)
    software: dict[str, Mapping[str, str]] = field(default_factory=dict)
    promises: dict[str, tuple[str, ...]] = field(default_factory=dict)
    serves: list[tuple[str, str]] = field(default_factory=list)
    templates: dict[str, SourceLocation] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    names: dict[str, str] = field(default_factory=dict)  # file -> metadata.name
    stamped: dict[str, str] = field(default_factory=dict)
    """node id -> template, for nodes that are exactly their template's plan: stamped whole, with
    no override and no children or links of their own, whose template links stay inside the node
    (fabric links aside). Their links and objects carry `origin`. verifier/facts/graph.py works out such
    nodes once per template; anything else that touches them there sends them the slow way."""

    def location(self, id: str) -> SourceLocation:
        """Where `id` (an object, link, catalogue model or template) was written.

        For an object made from a template this is its own line in the template, or the
        line of the override that changed it; for the template instance itself, the line
        that instantiated it. Unknown ids give a location naming the first file, line 0.
        """
        obj = self.objects.get(id)
        if obj is not None:
            return obj.loc
        link = self.links.get(id)
        if link is not None:
            return link.loc
        model = self.models.get(id)
        if model is not None:
            return model.loc
        tmpl = self.templates.get(id)
        if tmpl is not None:
            return tmpl
        return SourceLocation(self.files[0] if self.files else "<inventory>")

    def of_kind(self, kind: str) -> Iterator[Obj]:
        return (o for o in self.objects.values() if o.kind == kind)

    def count(self, kind: str) -> int:
        return sum(1 for o in self.objects.values() if o.kind == kind)

    def children(self, id: str) -> list[str]:
        """Direct children of `id` (a scan: build your own index for repeated use)."""
        return [o.id for o in self.objects.values() if o.parent == id]
