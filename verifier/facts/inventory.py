"""An `Inventory` as rows of the input relations declared in rules/schema.dl.

`inventory_facts(inv)` returns `{relation: [row, ...]}` with every relation of the schema
present (possibly empty). Row order is deterministic: inventory order (files in the order
given, objects and links in the order written and expanded), catalogue models by name.
Only attributes that were written produce facts; absence is for rules to test with `!`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from verifier.core.gc_pause import collector_paused
from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.sources.inventory.catalog import mig_memory_mb
from verifier.sources.inventory.model import Inventory, Link, LinkPlan, Obj, Unmade
from verifier.sources.inventory.software import release_number, software_table, version_number

Row = tuple[str | int, ...]

RELATIONS: frozenset[str] = frozenset(
    {
        "object",
        "parent",
        "model",
        "model_info",
        "spec",
        "feature",
        "mig_profile",
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
    return ROCE if _node_of(objects, a) == _node_of(objects, b) else kind


def _node_of(objects: Mapping[str, Obj], o: Obj | None) -> str | None:
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
    objects = inv.objects.values() if keep is None else [o for o in inv.objects.values() if o.id in keep]
    for o in objects:
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
    unmade = inv.unmade_links()
    stamps = _LinkStamps(inv.objects, label_rows, state_rows, link_rows, attr_rows, keep)
    every = inv.links_but(unmade.keys()).values()
    links = (
        every
        if keep is None
        else [lk for lk in every if (lk.a in keep and lk.b in keep) or (lk.origin is not None and lk.origin in unmade)]
    )
    for lk in links:
        if unmade and lk.origin is not None and lk.origin in unmade:
            stamps.add(lk.origin, unmade[lk.origin])
            continue
        lid = lk.id
        add_link((lid, lk.a, lk.b, lk.kind if lk.kind != "ethernet" else link_kind(lk, inv.objects), lk.mbps))
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
    for name in sorted(inv.models):
        m = inv.models[name]
        info_rows.append((name, m.vendor, m.kind))
        for k in sorted(m.specs):
            spec_rows.append((name, k, m.specs[k]))
        for f in sorted(m.features):
            feature_rows.append((name, f))
        for profile, count in m.mig:
            mig_rows.append((name, profile, count, mig_memory_mb(profile) or 0))
    return {
        "object": obj_rows,
        "parent": parent_rows,
        "model": model_rows,
        "model_info": info_rows,
        "spec": spec_rows,
        "feature": feature_rows,
        "mig_profile": mig_rows,
        "link": stamps.with_blocks(link_rows, 0),
        "link_attr": stamps.with_blocks(attr_rows, 1),
        "link_plan": plan_rows,
        "label": label_rows,
        "quantity": qty_rows,
        "node_type": type_rows,
        **_conformance(inv, keep),
        "promise": [(n, w) for n, ws in inv.promises.items() for w in ws if keep is None or n in keep],
        "software": [(n, c, v) for n, sw in inv.software.items() for c, v in sw.items() if keep is None or n in keep],
        "software_version": _software_versions(inv, keep),
        "software_release": _software_versions(inv, keep, release_number),
        # catalogue data (verifier/sources/inventory/software.yaml), the same for every inventory
        **software_table().rows(),
        "state": state_rows,
        "serves": [(m, d) for m, d in inv.serves if keep is None or (m in keep and d in keep)],
    }


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
    then costs one split of its link ids and a comprehension per relation. Without `keep`, the
    link and link_attr rows of a node whose plan has no Ethernet link (whose kind depends on
    its ends) are not made at all: the node's names join its plan's block (`blocks`), which
    `stamped_links` hands on as StampedRows.
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
        self.blocks: dict[tuple[int, int], tuple[StampBlock, StampBlock | None]] = {}
        """Per plan: the link block and the link_attr block (None: no attributes) its nodes join."""

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
        if kept is None and not ethernet:
            blocks = self.blocks.get((id(plan), len(names)))
            if blocks is None:
                blocks = self.blocks[(id(plan), len(names))] = _blocks(len(names), links, attrs)
            # Slots 0..len(names)-1 are the node's names, the next ones its link ids (as _blocks numbers them).
            blocks[0].names.append(names + ids)  # the attribute block holds the same list (see _blocks)
            if labels:
                self.labels += [(ids[k], name, v) for k, name, v in labels]
            if states:
                self.states += [(ids[k], state) for k, state in states]
            return
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

    def with_blocks(self, rows: list[Row], which: int) -> list[Row] | StampedRows:
        """`rows` and the link (`which` 0) or link_attr (1) rows of the blocks."""
        blocks = [b[which] for b in self.blocks.values()]
        kept = [b for b in blocks if b is not None and b.names]
        return StampedRows(rows, kept) if kept else rows


def _blocks(
    width: int, links: list[tuple[int, int, str, int]], attrs: list[tuple[int, str, int]]
) -> tuple[StampBlock, StampBlock | None]:
    """The link and link_attr blocks of a plan whose nodes have `width` names (then their link ids).

    Both hold one list of names per node, the same list: an engine that has looked a node's names
    up for one block need not again for the other (see StampBlock.names).
    """
    names: list[Sequence[str]] = []
    link = StampBlock(
        (
            tuple(width + k for k in range(len(links))),
            tuple(a for a, _b, _kind, _mbps in links),
            tuple(b for _a, b, _kind, _mbps in links),
            None,
            None,
        ),
        (None, None, None, tuple(kind for *_, kind, _mbps in links), tuple(mbps for *_, mbps in links)),
        names,
    )
    if not attrs:
        return link, None
    attr = StampBlock(
        (tuple(width + k for k, _name, _n in attrs), None, None),
        (None, tuple(name for _k, name, _n in attrs), tuple(n for _k, _name, n in attrs)),
        names,
    )
    return link, attr


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


def _software_versions(
    inv: Inventory, keep: AbstractSet[str] | None = None, encode: Callable[[str], int | None] = version_number
) -> list[Row]:
    rows: list[Row] = []
    seen: dict[str, int | None] = {}  # a fleet repeats a few stacks on every node
    for node, sw in inv.software.items():
        if keep is not None and node not in keep:
            continue
        for component, text in sw.items():
            number = seen[text] if text in seen else seen.setdefault(text, encode(text))
            if number is not None:
                rows.append((node, component, number))
    return rows


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
    loose: dict[str, list[str]] = {}
    for o in inv.objects.values():
        if o.kind == "node" and o.template is not None and o.id not in inv.stamped:
            loose.setdefault(o.template, []).append(o.id)
    if not loose:
        return {"node_conformance": [], "template_reference": _ref_rows(reference), "node_slot": []}
    compared = {n for nodes in loose.values() for n in nodes} | {n for n, _ in reference.values()}
    slots: dict[str, list[tuple[str, str]]] = {}
    where: dict[str, str] = {}  # object -> the compared node it is in
    for o in inv.objects.values():  # parents are expanded before their children
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
            objs = inv.objects
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
