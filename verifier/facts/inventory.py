"""An `Inventory` as rows of the input relations declared in rules/schema.dl.

`inventory_facts(inv)` returns `{relation: rows}` with every relation of the schema present
(possibly empty). Row order is deterministic: inventory order (files in the order given,
objects and links in the order written and expanded), catalogue models by name; except that
the rows of nodes stamped whole from their template come after the others as StampedRows
(verifier/core/stamped_rows.py: their plan's rows and each node's names, no tuple per row),
node by node, and so do those of objects alike but for their id and parent (_WholeNodes.alike)
and the promise and software rows of objects sharing one tuple or mapping (_shared_rows). No
engine's answer depends on row order.
Only attributes that were written produce facts; absence is for rules to test with `!`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import compress, repeat
from operator import and_
from typing import TypeVar

from verifier.core.gc_pause import collector_paused
from verifier.core.stamped_rows import StampBlock, with_blocks
from verifier.facts.whole_nodes import objects_without
from verifier.sources.inventory.catalog import builtin_models, mig_memory_mb
from verifier.sources.inventory.model import (
    CABLES_UNMADE,
    CableColumns,
    CatalogModel,
    Inventory,
    Link,
    LinkPlan,
    Obj,
    Unmade,
)
from verifier.sources.inventory.software import release_number, software_table, version_number

Value = str | int
Row = tuple[Value, ...]

RELATIONS: frozenset[str] = frozenset(
    {
        "object",
        "parent",
        "model",
        "model_info",
        "spec",
        "feature",
        "mig_profile",
        "model_memory_type",
        "catalogue_figure",
        "memory_type_name",
        "link",
        "link_attr",
        "link_plan",
        "label",
        "quantity",
        "node_type",
        "node_conformance",
        "template_reference",
        "node_slot",
        "promise",
        "software",
        "software_version",
        "software_release",
        "cuda_driver_minimum",
        "rocm_gpu_minimum",
        "vendor_software",
        "state",
        "serves",
    }
)
"""Every relation emitted; their columns are declared in rules/schema.dl (a test holds the rows to it)."""


ROCE = "roce"
"""The kind facts give an Ethernet link written directly between two accelerators of one node: no NIC
or switch between them, so it is the accelerators' own on-chip RoCE ports (Intel Gaudi's scale-up
fabric, the catalogue's `scaleup: {kind: ethernet}`), not the network fabric."""


def link_kind(lk: Link, objects: Mapping[str, Obj]) -> str:
    """The kind a link has in the facts: as written, except an accelerator-to-accelerator Ethernet link (ROCE)."""
    return _kind_between(lk.kind, lk.a, lk.b, objects)


def _kind_between(kind: str, a_id: str, b_id: str, objects: Mapping[str, Obj]) -> str:
    """link_kind of a link of `kind` between `a_id` and `b_id`."""
    if kind != "ethernet":
        return kind
    a, b = objects.get(a_id), objects.get(b_id)
    if a is None or b is None or a.kind != "gpu" or b.kind != "gpu":
        return kind
    return ROCE if node_of(objects, a) == node_of(objects, b) else kind


def node_of(objects: Mapping[str, Obj], o: Obj | None) -> str | None:
    """The node `o` is in (itself when it is one); None outside nodes or for no object."""
    while o is not None and o.kind != "node":
        o = objects.get(o.parent) if o.parent is not None else None
    return o.id if o is not None else None


def inventory_facts(inv: Inventory, keep: AbstractSet[str] | None = None) -> dict[str, Sequence[Row]]:
    """Rows per relation. Millions of tuples and no cycles: the cyclic GC is paused meanwhile.

    With `keep`, only those objects are described, and only links, software and `serves`
    rows whose objects are all kept: for a program that reads nothing else (placement reads
    GPUs and their ancestors), the rest of a fleet need not be built, loaded or closed over.
    """
    with collector_paused():
        return _facts(inv, keep)


def _facts(inv: Inventory, keep: AbstractSet[str] | None = None) -> dict[str, Sequence[Row]]:
    obj_rows: list[Row] = []
    parent_rows: list[Row] = []
    model_rows: list[Row] = []
    label_rows: list[Row] = []
    qty_rows: list[Row] = []
    type_rows: list[Row] = []
    state_rows: list[Row] = []
    # One loop appending to every relation rather than one comprehension per relation: at fleet
    # scale each pass over a million objects is memory-bound, and one pass reads each object once.
    # Local names for the appends: this loop runs once per object of a 100k-GPU fleet.
    add_obj, add_parent, add_model = obj_rows.append, parent_rows.append, model_rows.append
    add_label, add_qty = label_rows.append, qty_rows.append
    unmade = inv.unmade_links()
    # The nodes stamped whole from plans with no Ethernet link give every row of their objects and
    # links (those kept) as blocks of their plan: none is made here (see _WholeNodes).
    whole = _WholeNodes(inv, unmade, keep)
    skip = whole.nodes
    # With `keep`, the objects of `skip`'s nodes are passed over below: not read (nor made) here either.
    objects = objects_without(inv, skip)
    if keep is not None:
        objects = [o for o in objects if o.id in keep]
    if keep is None:
        # Objects alike but for their id and parent (a fleet's nodes of one entry, its racks in one
        # place of their pods) give their rows as one block per kind of object: the rest, one by one.
        objects = whole.alike([o for o in objects if not (skip and o.origin is not None and o.origin in skip)])
    for o in objects:
        if skip and o.origin is not None and o.origin in skip:
            continue
        oid = o.id
        add_obj((oid, o.kind))
        if o.parent is not None:
            add_parent((oid, o.parent))
        if o.model is not None:
            add_model((oid, o.model))
        if o.labels:
            for k, v in o.labels.items():
                add_label((oid, k, v))
        if o.quantities:
            for k, n in o.quantities.items():
                add_qty((oid, k, n))
        if o.index is not None and "index" not in o.quantities:
            add_qty((oid, "index", o.index))
        if o.template is not None:
            type_rows.append((oid, o.template))
        if o.state is not None:
            state_rows.append((oid, o.state))
    link_rows: list[Row] = []
    attr_rows: list[Row] = []
    plan_rows: list[Row] = []
    add_link, add_attr = link_rows.append, attr_rows.append
    # The links of nodes stamped whole that are not made yet (a million at fleet scale) are rows
    # stamped from their plan where their node's placeholder stands: never made as Link objects.
    stamps = _LinkStamps(inv.found, label_rows, state_rows, link_rows, attr_rows, keep)
    # So are the runs of cables not made yet (Inventory.unmade_cables): rows from their columns. (The
    # runs first: should another thread make the links meanwhile, `every` holds no placeholder.)
    runs = inv.unmade_cables()
    every = inv.links_but(unmade.keys(), cables=True).values()
    links = (
        every
        if keep is None
        else [
            lk
            for lk in every
            if (lk.a in keep and lk.b in keep)
            or (lk.origin is not None and lk.origin in unmade)
            or lk.loc is CABLES_UNMADE
        ]
    )
    for lk in links:
        if unmade and lk.origin is not None and lk.origin in unmade:
            if lk.origin not in skip:
                stamps.add(lk.origin, unmade[lk.origin])
            continue
        if lk.loc is CABLES_UNMADE:
            _cable_rows(runs[lk.id], keep, inv.found, (link_rows, attr_rows, label_rows, state_rows))
            continue
        lid = lk.id
        add_link((lid, lk.a, lk.b, lk.kind if lk.kind != "ethernet" else link_kind(lk, inv.found), lk.mbps))
        if lk.attrs:
            for k, n in lk.attrs.items():
                add_attr((lid, k, n))
        if lk.labels:
            for k, v in lk.labels.items():
                add_label((lid, k, v))
        if lk.state is not None:
            state_rows.append((lid, lk.state))
        if lk.plan:
            for k, n in lk.plan.items():
                plan_rows.append((lid, k, n))
    info_rows: list[Row] = []
    spec_rows: list[Row] = []
    feature_rows: list[Row] = []
    mig_rows: list[Row] = []
    memory_type_rows: list[Row] = []
    figure_rows: list[Row] = []
    rated = _catalogue_power()
    sockets = _catalogue_sockets()
    builtin = _builtin_by_name()
    for name in sorted(inv.models):
        m = inv.models[name]
        info_rows.append((name, m.vendor, m.kind))
        for k in sorted(m.specs):
            spec_rows.append((name, k, m.specs[k]))
        power = m.specs.get("tdp_w")
        if power is not None and name in rated and rated[name][0] == power and CATALOGUE_POWER not in m.specs:
            spec_rows.append((name, CATALOGUE_POWER, rated[name][1]))
        if name in sockets and sockets[name][0] == m.vendor and m.kind == "cpu" and MAX_SOCKETS not in m.specs:
            spec_rows.append((name, MAX_SOCKETS, sockets[name][1]))
        for f in sorted(m.features):
            feature_rows.append((name, f))
        for profile, count in m.mig:
            mig_rows.append((name, profile, count, mig_memory_mb(profile) or 0))
        if m.memory_type:
            memory_type_rows.append((name, m.memory_type))
        part = builtin.get(name)
        if part is not None and part is not m and (part.vendor, part.kind) == (m.vendor, m.kind):
            # The inventory's own entry of a built-in name (loader.GAINED_LATER keeps its figures):
            # the catalogue's figure beside each one it writes otherwise, for NODE015 to weigh.
            for k in sorted(m.specs.keys() & part.specs.keys()):
                if m.specs[k] != part.specs[k]:
                    figure_rows.append((name, k, part.specs[k]))

    return {
        "object": whole.rows("object", obj_rows),
        "parent": whole.rows("parent", parent_rows),
        "model": whole.rows("model", model_rows),
        "model_info": info_rows,
        "spec": spec_rows,
        "feature": feature_rows,
        "mig_profile": mig_rows,
        "model_memory_type": memory_type_rows,
        "catalogue_figure": figure_rows,
        "memory_type_name": _memory_type_names(label_rows, whole.blocks.get("label", []), memory_type_rows),
        "link": whole.rows("link", link_rows),
        "link_attr": whole.rows("link_attr", attr_rows),
        "link_plan": plan_rows,
        "label": whole.rows("label", label_rows),
        "quantity": whole.rows("quantity", qty_rows),
        "node_type": whole.rows("node_type", type_rows),
        **_conformance(inv, keep),
        **_shared_rows(inv, keep),
        # catalogue data (verifier/sources/inventory/software.yaml), the same for every inventory
        **software_table().rows(),
        "state": whole.rows("state", state_rows),
        "serves": [(m, d) for m, d in inv.serves if keep is None or (m in keep and d in keep)],
    }


# JEDEC memory type names: DDR3-5 (JESD79-3/4/5), LPDDR4/4X and LPDDR5/5X (JESD209-4/5), GDDR5/5X,
# GDDR6/6X and GDDR7 (JESD212, JESD250, JESD239), HBM2/2E, HBM3/3E and HBM4 (JESD235, JESD238,
# JESD270-4), in any letter case, DDR and LPDDR with an optional data rate after a hyphen or a space
# ("DDR4-3200", "DDR5 4800", "LPDDR5X-8533 MT/s"), the rate with its JEDEC speed bin or not
# ("DDR4-3200AA", "DDR5-4800B"), and DDR with the module it comes on ("DDR5-4800 RDIMM", "DDR4 ECC
# UDIMM", "DDR5 MRDIMM": the module form says nothing of the generation). The X and E variants
# extend their generation (LPDDR5X is LPDDR5's interface run faster), so they read as that
# generation. Nothing else is read: a name outside these (DDR5X, LPDDR6, "DRAM") gets no row, and
# MEM007 does not judge it.
_MEMORY_TYPE = re.compile(
    r"(?P<family>LPDDR|GDDR|DDR|HBM)(?P<generation>[0-9])(?P<variant>[XE]?)"
    r"(?:[- ](?P<rate>[0-9]{3,5})(?:[A-Z]{1,2})?(?: ?MT/S)?)?"
    r"(?:[- ](?P<module>(?:ECC )?(?:RDIMM|LRDIMM|UDIMM|SODIMM|SO-DIMM|CUDIMM|CSODIMM|MRDIMM)|ECC))?"
)
_MEMORY_GENERATIONS: dict[str, tuple[range, str]] = {
    "DDR": (range(3, 6), ""),
    "LPDDR": (range(4, 6), "X"),
    "GDDR": (range(5, 8), "X"),
    "HBM": (range(2, 5), "E"),
}


CATALOGUE_POWER = "catalogue_power_w"
"""The spec key that gives a model the built-in catalogue's power ceiling (its max_power_w, else its
power figure: the rated, maximum board power, checked against the datasheets): emitted for a
built-in model and for an inventory's own copy that writes the catalogue's power figure (a copy
written before the catalogue had the model keeps the catalogue's rating). An inventory's own model's
`power:` is whatever figure its author had at hand (a default of a part configurable up to more: a
GH200 module written at 900 W, "450-1000 W configurable"), so it is no ceiling."""


@functools.cache
def _catalogue_power() -> dict[str, tuple[int, int]]:
    """Each built-in model's power figure (W) and its ceiling (max_power_w, else that figure)."""
    return {
        m.name: (m.specs["tdp_w"], m.specs.get("max_power_w", m.specs["tdp_w"]))
        for m in builtin_models()
        if "tdp_w" in m.specs
    }


@functools.cache
def _builtin_by_name() -> dict[str, CatalogModel]:
    """The built-in catalogue's models by name."""
    return {m.name: m for m in builtin_models()}


MAX_SOCKETS = "max_sockets"
"""The most CPU sockets one system of a CPU part takes (NODE013). It is the part's, not a figure its
writer chooses: an inventory's own copy of a built-in CPU model (the same name and vendor, written
before the catalogue had it, as the mixed fleet's EPYC-7742) that leaves it out keeps the catalogue's,
so four EPYC 7742 in one node (a 1P/2P part) are reported whoever wrote the model."""


@functools.cache
def _catalogue_sockets() -> dict[str, tuple[str, int]]:
    """Each built-in CPU model's vendor and max_sockets, where the catalogue gives one."""
    return {
        m.name: (m.vendor, m.specs[MAX_SOCKETS]) for m in builtin_models() if m.kind == "cpu" and MAX_SOCKETS in m.specs
    }


def memory_type_reading(name: str) -> tuple[str, int] | None:
    """The JEDEC family and generation a memory type name reads as exactly, or None (see _MEMORY_TYPE)."""
    m = _MEMORY_TYPE.fullmatch(name.strip().upper())
    if m is None:
        return None
    family, generation, variant = m["family"], int(m["generation"]), m["variant"]
    generations, variants = _MEMORY_GENERATIONS[family]
    if generation not in generations or (variant and variant not in variants):
        return None
    if m["rate"] is not None and family not in ("DDR", "LPDDR"):
        return None
    if m["module"] is not None and family != "DDR":
        return None  # LPDDR, GDDR and HBM are soldered or stacked, not sold on DIMMs
    if variant and (family, generation) in (("GDDR", 7), ("HBM", 4)):
        return None  # no GDDR7X or HBM4E in JEDEC's standards
    return family, generation


def _memory_type_names(plain: Sequence[Row], blocks: Sequence[StampBlock], models: Sequence[Row]) -> list[Row]:
    """memory_type_name rows for every memory type written: on memories (label memory_type, in the
    plain label rows or as a constant of a stamped block's) and in catalogue models. A stamped block
    holds its plan's labels once for all its nodes, so this reads a plan's rows, not a fleet's.
    """
    names = {str(r[2]) for r in plain if r[1] == "memory_type"}
    for block in blocks:
        keys, values = block.constants[1], block.constants[2]
        if keys is not None and values is not None:
            names.update(str(v) for k, v in zip(keys, values, strict=True) if k == "memory_type")
    names.update(str(r[1]) for r in models)
    rows: list[Row] = []
    for name in sorted(names):
        reading = memory_type_reading(name)
        if reading is not None:
            rows.append((name, *reading))
    return rows


def _cable_rows(
    run: CableColumns,
    keep: AbstractSet[str] | None,
    objects: Mapping[str, Obj],
    out: tuple[list[Row], list[Row], list[Row], list[Row]],
) -> None:
    """The link, link_attr, label and state rows of a run of cables not made yet (those with both
    ends in `keep`, if given), added to `out` in the run's order: the rows _facts gives their Link
    objects, a relation at a time (each has its own list, so the order within each is the same).
    """
    ids, ends_a, ends_b, kind, mbps, _loc, attrs, labels, state = run
    if keep is not None:
        # A run none of whose ends on one side is kept gives no row: asked in one C call per side.
        # (A placement keeps GPUs and their ancestors: a fleet's 512 runs of NIC-to-leaf cables, 131,072
        # ends a side, keep none, and were told end by end.)
        if keep.isdisjoint(ends_a) or keep.isdisjoint(ends_b):
            return
        kept = list(map(and_, map(keep.__contains__, ends_a), map(keep.__contains__, ends_b)))
        ids, ends_a, ends_b = list(compress(ids, kept)), list(compress(ends_a, kept)), list(compress(ends_b, kept))
    link_rows, attr_rows, label_rows, state_rows = out
    if kind == "ethernet":
        kinds: Iterable[str] = [_kind_between(kind, a, b, objects) for a, b in zip(ends_a, ends_b, strict=True)]
    else:
        kinds = repeat(kind)
    link_rows += zip(ids, ends_a, ends_b, kinds, repeat(mbps))
    if attrs:
        attr_rows += [(lid, k, n) for lid in ids for k, n in attrs.items()]
    if labels:
        label_rows += [(lid, k, v) for lid in ids for k, v in labels.items()]
    if state is not None:
        state_rows += [(lid, state) for lid in ids]


_Cols = tuple[
    list[tuple[int, int, str, int]],  # per link: slot of a, slot of b, kind, mbps
    list[tuple[int, int, int, str]],  # per Ethernet link: its position, slots of its ends, kind
    list[tuple[int, str, int]],  # link_attr: position of the link, attribute, value
    list[tuple[int, str, str]],  # label
    list[tuple[int, str]],  # state
    list[int],  # the positions of the plan's links these are
]


class _LinkStamps:
    """The rows of links that are not made yet (Inventory.unmade_links), stamped per node from
    its plan's rows: the rows the Link objects would give (_facts), in their order.

    Each plan's rows are sorted into columns once (per set of ends kept, with `keep`); a node
    then costs one split of its link ids and a comprehension per relation.
    """

    def __init__(
        self,
        objects: Mapping[str, Obj],
        labels: list[Row],
        states: list[Row],
        links: list[Row],
        attrs: list[Row],
        keep: AbstractSet[str] | None,
    ) -> None:
        self.objects = objects
        self.labels, self.states, self.links, self.attrs = labels, states, links, attrs
        self.keep = keep
        self.cols: dict[tuple[int, frozenset[int] | None], _Cols] = {}
        self.ends: dict[int, list[int]] = {}  # plan -> the slots its links end on, for `keep`

    def add(self, node: str, unmade: Unmade) -> None:
        plan, names = unmade
        kept: frozenset[int] | None = None
        if self.keep is not None:
            ends = self.ends.get(id(plan))
            if ends is None:
                ends = self.ends[id(plan)] = sorted({s for a, b, *_ in plan.link_rows for s in (a, b)})
            keep = self.keep
            kept = frozenset([s for s in ends if names[s] in keep])
            if not kept:
                return
        key = (id(plan), kept)
        cols = self.cols.get(key)
        if cols is None:
            cols = self.cols[key] = _columns(plan, kept)
        links, ethernet, attrs, labels, states, only = cols
        if not only:
            return
        every = plan.ids_for(node)
        ids = every if kept is None else [every[j] for j in only]
        rows: list[Row] = [
            (i, names[a], names[b], kind, mbps) for i, (a, b, kind, mbps) in zip(ids, links, strict=True)
        ]
        for k, a, b, kind in ethernet:
            rows[k] = (ids[k], names[a], names[b], _kind_between(kind, names[a], names[b], self.objects), rows[k][4])
        self.links += rows
        if attrs:
            self.attrs += [(ids[k], name, n) for k, name, n in attrs]
        if labels:
            self.labels += [(ids[k], name, v) for k, name, v in labels]
        if states:
            self.states += [(ids[k], state) for k, state in states]


class _WholeNodes:
    """The nodes whose every object and link row is a row of their plan's blocks (StampedRows).

    Those stamped whole (Inventory.stamped: nothing has changed what their plan made) whose links
    are not made yet, from a plan without Ethernet links (whose kind depends on their ends). Per
    plan, one block per relation and kind of plan row, all holding one list of names per node:
    slots 0.. are the node's names, then its link ids.
    """

    def __init__(self, inv: Inventory, unmade: Mapping[str, Unmade], keep: AbstractSet[str] | None) -> None:
        self.nodes: set[str] = set()
        self.blocks: dict[str, list[StampBlock]] = {}
        per_plan: dict[tuple[int, int, bytes | None], tuple[_NodeNames, list[int]] | None] = {}
        for node, (plan, names) in unmade.items():
            if node not in inv.stamped:
                continue
            # With `keep`, what is kept of a node: the slots of its kept names (as _facts keeps objects
            # and links, by id); nodes of one plan that keep the same slots share blocks. Told in C
            # calls (a byte per name, 1 where kept: bytes of the names' membership), not a Python
            # comparison per name; the slots a mask keeps are made once per plan and mask, not once
            # per node (a placement at 131,072 GPUs: 16,352 nodes, one plan, one mask).
            mask = None if keep is None else bytes(map(keep.__contains__, names))
            key = (id(plan), len(names), mask)
            if key not in per_plan:
                kept = None if mask is None else frozenset(compress(range(len(mask)), mask))
                per_plan[key] = self._add_plan(plan, len(names), kept)
            shared = per_plan[key]
            if shared is None:
                continue
            lists, only = shared
            if mask is None:
                lists.add(names + plan.ids_for(node), names)
            elif only:
                ids = plan.ids_for(node)
                lists.add(names + [ids[j] for j in only], names)
            else:
                # No link of the node kept (a placement keeps GPUs and their ancestors): no link id
                # made, and the node's own list of names itself, which authorization's GPU blocks hold
                # too: the DuckDB engine takes the ids it found there (SlotIds.rows_of, by identity)
                # instead of looking up 130,816 GPU names again at 131,072 GPUs.
                lists.add(names, names)
            self.nodes.add(node)

    def _add_plan(self, plan: LinkPlan, width: int, kept: frozenset[int] | None) -> tuple[_NodeNames, list[int]] | None:
        """Add the blocks of a plan whose nodes have `width` names, of the rows of the `kept` slots
        (all when None); their shared list of names and the positions of the plan's links they hold
        (None: a kept link is Ethernet, and such nodes are read the usual way).
        """
        links, ethernet, attrs, labels, states, only = _columns(plan, kept)
        if ethernet:
            return None
        names = _NodeNames(width)
        objects = [o for o in plan.object_rows if kept is None or o[0] in kept]

        def block(relation: str, rows: Sequence[tuple[Value, ...]], arity: int, named: int) -> None:
            """Rows of the plan whose first `named` values are slots (see StampBlock.of)."""
            if rows:
                self.blocks.setdefault(relation, []).append(StampBlock.of(rows, arity, named, names))

        block("object", [(o[0], o[2]) for o in objects], 2, 1)
        block("parent", [(o[0], o[1]) for o in objects], 2, 2)
        block("model", [(o[0], o[4]) for o in objects if o[4] is not None], 2, 1)
        block("label", [(o[0], k, v) for o in objects for k, v in o[5].items()], 3, 1)
        figures = [(o[0], k, n) for o in objects for k, n in o[6].items()]
        figures += [(o[0], "index", o[9]) for o in objects if o[9] is not None and "index" not in o[6]]
        block("quantity", figures, 3, 1)
        block("node_type", [(o[0], o[8]) for o in objects if o[8] is not None], 2, 1)
        block("state", [(o[0], o[7]) for o in objects if o[7] is not None], 2, 1)
        # The link ids are the slots after the node's names.
        block("link", [(width + k, a, b, kind, mbps) for k, (a, b, kind, mbps) in enumerate(links)], 5, 3)
        block("link_attr", [(width + k, name, n) for k, name, n in attrs], 3, 1)
        block("label", [(width + k, name, v) for k, name, v in labels], 3, 1)
        block("state", [(width + k, state) for k, state in states], 2, 1)
        return names, only

    def alike(self, objects: list[Obj]) -> list[Obj]:
        """The `objects` that share their rows with no other of them, in order; for each set of two
        or more that share every row but their id and parent, blocks of the rows they share (slot 0
        their id, slot 1 their parent), all of one list of names.
        """
        groups: dict[tuple[object, ...], list[Obj]] = {}
        for o in objects:
            # Labels and figures by identity: an entry's instances share its mappings (templates.py _shared).
            key = (o.kind, o.parent is None, o.model, id(o.labels), id(o.quantities), o.index, o.template, o.state)
            groups.setdefault(key, []).append(o)
        single = {id(group[0]) for group in groups.values() if len(group) == 1}
        for group in groups.values():
            if len(group) == 1:
                continue
            o = group[0]
            names: list[Sequence[str]] = [[x.id] if x.parent is None else [x.id, x.parent] for x in group]
            block = functools.partial(self._block, names=names)
            figures: list[tuple[Value, ...]] = [(0, k, n) for k, n in o.quantities.items()]
            if o.index is not None and "index" not in o.quantities:
                figures.append((0, "index", o.index))
            block("object", [(0, o.kind)], 2, 1)
            block("parent", [(0, 1)] if o.parent is not None else [], 2, 2)
            block("model", [(0, o.model)] if o.model is not None else [], 2, 1)
            block("label", [(0, k, v) for k, v in o.labels.items()], 3, 1)
            block("quantity", figures, 3, 1)
            block("node_type", [(0, o.template)] if o.template is not None else [], 2, 1)
            block("state", [(0, o.state)] if o.state is not None else [], 2, 1)
        return [o for o in objects if id(o) in single]

    def _block(
        self, relation: str, rows: Sequence[tuple[Value, ...]], arity: int, named: int, names: list[Sequence[str]]
    ) -> None:
        """A block of `rows` (the first `named` values slots of `names`, see StampBlock.of), if any."""
        if rows:
            self.blocks.setdefault(relation, []).append(StampBlock.of(rows, arity, named, names))

    def rows(self, relation: str, plain: list[Row]) -> Sequence[Row]:
        return with_blocks(plain, self.blocks.get(relation, []))


class _NodeNames(list[Sequence[str]]):
    """The names of a plan's nodes stamped whole (_WholeNodes), a sequence per node: its own names
    (its objects', which many relations read: object, parent, label, link ends...), then from
    `read_once_from` on its link ids, which only these blocks read (link, link_attr, and the links'
    labels and states). The DuckDB engine indexes the link ids apart (SymbolIds.defer), the others
    as every relation's names.

    `bases`: per node, the list of its own names the inventory keeps (Unmade), which the node's
    sequence here starts with. Other relations' blocks (authorization's GPUs, graph facts' NICs and
    PCIe switches) hold those very lists: the engine tells their nodes and these the same by it, and
    takes the ids of slots below `read_once_from` looked up for either (SlotIds.rows_of): at 131,072
    GPUs verify's load went from 1.48-1.55 to 1.30-1.41 s CPU (nearest_nic's 131,072 NIC and GPU
    names and pcie_switch_load's 65,536 no longer looked up again).
    """

    def __init__(self, read_once_from: int) -> None:
        super().__init__()
        self.read_once_from = read_once_from
        self.bases: list[Sequence[str]] = []

    def add(self, names: Sequence[str], base: Sequence[str]) -> None:
        """Add a node's `names`, which start with the inventory's list of its names, `base`."""
        self.append(names)
        self.bases.append(base)


def _columns(plan: LinkPlan, kept: frozenset[int] | None) -> _Cols:
    """A plan's link rows as _LinkStamps stamps them: those both of whose ends are `kept` (all when None)."""
    only = [j for j, (a, b, *_) in enumerate(plan.link_rows) if kept is None or (a in kept and b in kept)]
    rows = [plan.link_rows[j] for j in only]
    return (
        [(a, b, kind, mbps) for a, b, kind, mbps, *_ in rows],
        [(k, a, b, kind) for k, (a, b, kind, *_) in enumerate(rows) if kind == "ethernet"],
        [(k, name, n) for k, row in enumerate(rows) for name, n in row[5].items()],
        [(k, name, v) for k, row in enumerate(rows) for name, v in row[6].items()],
        [(k, row[7]) for k, row in enumerate(rows) if row[7] is not None],
        only,
    )


def _shared_rows(inv: Inventory, keep: AbstractSet[str] | None = None) -> dict[str, Sequence[Row]]:
    """promise, software, software_version and software_release of every object (of the `keep`
    objects only, if given), as StampedRows: the objects that share one promises tuple or one
    software mapping (the same object: the nodes of one template, as the loader makes them) come as
    one block of its rows and their names, not as a row each (a fleet's 16,384 nodes: 65,536 rows
    per software relation). An object with a mapping or tuple of its own gives its rows as before.
    """
    promised: Iterable[tuple[str, tuple[str, ...]]] = inv.promises.items()
    stacked: Iterable[tuple[str, Mapping[str, str]]] = inv.software.items()
    if keep is not None:
        # A placement's subset (the GPUs and their ancestors) keeps a fleet's nodes, which share their
        # template's mapping there too: one block per mapping, not a row per node and component as
        # before (at 131,072 GPUs these four relations' rows took 0.04-0.07 s CPU, now 0.02-0.03).
        promised = [(n, ws) for n, ws in promised if n in keep]
        stacked = [(n, sw) for n, sw in stacked if n in keep]
    promises = _SharedRows(_by_identity(promised), lambda ws: [(0, w) for w in ws])
    # The three software relations share one grouping of the objects by mapping (and its lists of names).
    stacks = _by_identity(stacked)
    software = _SharedRows(stacks, lambda sw: [(0, c, v) for c, v in sw.items()])
    versions = _SharedRows(stacks, _Numbered(version_number).rows)
    releases = _SharedRows(stacks, _Numbered(release_number).rows)
    return {
        "promise": promises.rows(2),
        "software": software.rows(3),
        "software_version": versions.rows(3),
        "software_release": releases.rows(3),
    }


_Shared = TypeVar("_Shared")


def _by_identity(items: Iterable[tuple[str, _Shared]]) -> list[tuple[_Shared, list[Sequence[str]]]]:
    """The values of `items` (name, value) by identity, in the order first met, each with the names
    that have it, one list each. The caller keeps the values alive (they are the inventory's), so
    no id is reused meanwhile.
    """
    groups: dict[int, tuple[_Shared, list[Sequence[str]]]] = {}
    for name, value in items:
        held = groups.get(id(value))
        if held is None:
            held = groups[id(value)] = (value, [])
        held[1].append([name])
    return list(groups.values())


class _SharedRows:
    """Rows per object from a value many objects share (by identity): one block per shared value."""

    def __init__(
        self, groups: list[tuple[_Shared, list[Sequence[str]]]], plan: Callable[[_Shared], list[tuple[Value, ...]]]
    ) -> None:
        # Per value (`_by_identity`): its plan rows, slot 0 the object, and the names of the objects that have it.
        self.of = [(plan(value), names) for value, names in groups]

    def rows(self, arity: int) -> Sequence[Row]:
        """An object alone with its value gives plain rows; the others, a block per value."""
        plain: list[Row] = []
        blocks: list[StampBlock] = []
        for rows, names in self.of:
            if len(names) > 1:
                blocks.append(StampBlock.of(rows, arity, 1, names))
            else:
                plain += [(names[0][0], *row[1:]) for row in rows]
        return with_blocks(plain, blocks)


class _Numbered:
    """A software mapping's components with a number (`encode`): each text read once."""

    def __init__(self, encode: Callable[[str], int | None]) -> None:
        self.encode = encode
        self.seen: dict[str, int | None] = {}  # a fleet repeats a few stacks on every node

    def rows(self, sw: Mapping[str, str]) -> list[tuple[Value, ...]]:
        seen = self.seen
        out: list[tuple[Value, ...]] = []
        for component, text in sw.items():
            number = seen[text] if text in seen else seen.setdefault(text, self.encode(text))
            if number is not None:
                out.append((0, component, number))
        return out


def _conformance(inv: Inventory, keep: AbstractSet[str] | None) -> dict[str, list[Row]]:
    """Which nodes to compare with their node type, with what, and the devices of those nodes by name.

    A node stamped whole from its template's plan (`Inventory.stamped`) is its template by
    construction: it needs no comparison, and one of them (the smallest id) stands for the
    template. A template none of whose nodes is stamped whole (each has an override) is
    represented by the devices more than half of its nodes share, when they do; otherwise
    there is no norm to compare with and its nodes are not compared. Only the nodes that are
    not stamped whole and the references get `node_slot` rows, so a fleet of pristine nodes
    adds one row per template, not per device.
    """
    if keep is not None:  # placement's subset reads no conformance
        return {"node_conformance": [], "template_reference": [], "node_slot": []}
    reference: dict[str, tuple[str, str]] = {}
    for node, tmpl in inv.stamped.items():
        if tmpl not in reference or node < reference[tmpl][0]:
            reference[tmpl] = (node, "built exactly from its node type")
    # The stamped nodes that do not stand for their template are neither compared nor read: their
    # objects are passed over in runs, in the one pass kept for the inventory (whole_nodes.py).
    objects = objects_without(inv, inv.stamped.keys() - {n for n, _ in reference.values()})
    loose: dict[str, list[str]] = {}
    for o in objects:
        if o.kind == "node" and o.template is not None and o.id not in inv.stamped:
            loose.setdefault(o.template, []).append(o.id)
    if not loose:
        return {"node_conformance": [], "template_reference": _ref_rows(reference), "node_slot": []}
    compared = {n for nodes in loose.values() for n in nodes} | {n for n, _ in reference.values()}
    slots: dict[str, list[tuple[str, str]]] = {}
    where: dict[str, str] = {}  # object -> the compared node it is in
    for o in objects:  # parents are expanded before their children
        par = o.parent
        if par is None or o.kind == "node":
            continue
        found = par if par in compared else where.get(par)
        if found is None:
            continue
        node = where[o.id] = found
        prefix = node + "/"
        slots.setdefault(node, []).append((o.id[len(prefix) :] if o.id.startswith(prefix) else o.id, o.id))
    for tmpl, nodes in loose.items():
        if tmpl in reference or len(nodes) < 3:  # two nodes that differ have no majority
            continue
        shapes: dict[frozenset[tuple[str, str, str | None]], list[str]] = {}
        for n in nodes:
            objs = inv.found
            shape = frozenset((slot, objs[d].kind, objs[d].model) for slot, d in slots.get(n, ()))
            shapes.setdefault(shape, []).append(n)
        most = max(shapes.values(), key=len)
        if 2 * len(most) > len(nodes):
            reference[tmpl] = (min(most), "like most nodes of its node type")
    conf_rows: list[Row] = []
    emitted: set[str] = set()
    for tmpl, nodes in loose.items():
        ref = reference.get(tmpl)
        if ref is None:
            continue
        emitted.add(ref[0])
        for n in nodes:
            if n != ref[0]:
                conf_rows.append((n, tmpl, ref[0], ref[1]))
                emitted.add(n)
    slot_rows: list[Row] = [(n, slot, d) for n, pairs in slots.items() if n in emitted for slot, d in pairs]
    return {"node_conformance": conf_rows, "template_reference": _ref_rows(reference), "node_slot": slot_rows}


def _ref_rows(reference: dict[str, tuple[str, str]]) -> list[Row]:
    return [(t, n) for t, (n, _) in sorted(reference.items())]
