"""Cedar entities, built by topolog from the inventory, the derived NVLink domains and the principals.

Hardware: `Gpu in Node in Rack in Pod`, each level to the nearest existing ancestor of that
kind (a GPU outside any node hangs from its rack or pod), and every Gpu also in its
`NvlinkDomain`, named like the rules name it (the smallest GPU id of the domain, from
verifier.facts.graph.scaleup_domains, which a test holds equal to the rules' `nvlink_domain`).
Attributes are described in policies/schema.cedarschema.

Entity ids are inventory ids, so they are deterministic. The graph is checked here: cedarpy
accepts a parent that does not exist (and then `in` silently never matches it), so every
parent must be an entity of the graph, or the graph is refused. The principals' memberships
are checked when the graph is built; a hardware parent is the nearest inventory object of its
kind, so it exists, and every entity handed to Cedar has its parents checked again.

The graph is built on demand. A 131,072-GPU fleet has some 170,000 entities, and one request
reads a handful of them: each entity (its parents, attributes, ancestors) is worked out the
first time it is asked for and kept. What needs every entity stays whole: the label check
below reads every object, and `Authorizer` validates the entities against the schema
(verifier/authorization/evaluate.py says how without building them all). The NVLink domains,
a union-find over every scale-up link, are found only when a domain is asked for or an
entity is asked for whole (`entities[...]`); `closure` leaves them out when nothing can see them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from json.encoder import encode_basestring
from operator import attrgetter
from typing import NamedTuple

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.gc_pause import collector_paused
from verifier.facts.whole_nodes import objects_without, whole_nodes
from verifier.sources.inventory.model import Inventory, LinkPlan, Obj
from verifier.sources.principals import Principals

HARDWARE_TYPES: dict[str, str] = {"gpu": "Gpu", "node": "Node", "rack": "Rack", "pod": "Pod"}
PRINCIPAL_TYPES = ("Team", "User", "ServiceAccount")
RESOURCE_TYPES = ("Gpu", "Node", "Rack", "Pod", "NvlinkDomain")
DOMAIN_TYPE = "NvlinkDomain"
PARENT_KINDS: dict[str, tuple[str, ...]] = {
    "gpu": ("node", "rack", "pod"),
    "node": ("rack", "pod"),
    "rack": ("pod",),
    "pod": (),
}
_KIND_OF_TYPE = {t: k for k, t in HARDWARE_TYPES.items()}
_SLOT = {"node": 0, "rack": 1, "pod": 2}  # positions in _Up.near

AttrValue = str | bool | int | tuple[str, ...]
DomainRows = Iterable[tuple[str, str]]
DomainSource = DomainRows | Callable[[], DomainRows] | None
"""(gpu, domain) rows, a function that finds them when first needed, or None when there are none."""

LABEL_ATTRS: dict[str, tuple[str, str]] = {
    "tenant": ("tenant", "String"),
    "zone": ("zone", "String"),
    "owner": ("owner", "String"),
    "quarantine": ("quarantined", "Bool"),
}
"""Inventory labels that become attributes of hardware entities: label -> (attribute, Cedar type
in policies/schema.cedarschema). Every label value is text; a Bool label must read exactly
`true` or `false` (YAML `quarantine: true` arrives as "true")."""
_BOOL_TEXT = {"true": True, "false": False}


def uid(etype: str, eid: str) -> str:
    """Cedar's surface syntax for an entity uid, e.g. Gpu::"dgx00/gpu3" (ids escaped as JSON strings).

    `encode_basestring` is what `json.dumps(eid, ensure_ascii=False)` returns for a string,
    without building an encoder per call (a fleet makes hundreds of thousands of uids).
    """
    return f"{etype}::{encode_basestring(eid)}"


def parse_uid(text: str) -> tuple[str, str] | None:
    """(type, id) of a uid exactly as `uid` writes it; None for any other text (it names no entity)."""
    quote = text.find('"')
    if quote < 3 or text[quote - 2 : quote] != "::":
        return None
    etype, quoted = text[: quote - 2], text[quote:]
    if "\\" in quoted:
        try:
            eid = json.loads(quoted)
        except ValueError:
            return None
        if not isinstance(eid, str):
            return None
    elif len(quoted) >= 2 and quoted[-1] == '"':
        eid = quoted[1:-1]
    else:
        return None
    # The same id written another way (`"a\u0062"` for `"ab"`) is not the entity's uid.
    return (etype, eid) if uid(etype, eid) == text else None


@dataclass(frozen=True, repr=False, eq=False)
class Entity(Frozen):
    type: str
    id: str
    attrs: Mapping[str, AttrValue]
    parents: tuple[str, ...]  # uids
    loc: SourceLocation

    @property
    def uid(self) -> str:
        return uid(self.type, self.id)

    def to_json(self) -> dict[str, object]:
        return _entity_json(self.type, self.id, self.attrs, self.parents)


def _entity_json(etype: str, eid: str, attrs: Mapping[str, AttrValue], parents: Iterable[str]) -> dict[str, object]:
    """Cedar's JSON form of one entity (attributes sorted, sets as lists)."""
    parts = [_split(p) for p in parents]
    return {
        "uid": {"type": etype, "id": eid},
        "attrs": {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(attrs.items())},
        "parents": [{"type": t, "id": i} for t, i in parts],
    }


def _split(entity_uid: str) -> tuple[str, str]:
    etype, _, quoted = entity_uid.partition("::")
    if "\\" not in quoted:  # nothing escaped: the JSON string's text is the id
        return etype, quoted[1:-1]
    return etype, str(json.loads(quoted))


class _Up(NamedTuple):
    """What an object inherits, counting itself: its nearest node, rack and pod (own kind
    included) and the labels of LABEL_ATTRS as its nearest labelled ancestor (or itself) has them.

    A named tuple, not a frozen dataclass: an audit makes one per node of a fleet (16,384 at
    131,072 GPUs), and a tuple is made in a third of the time.
    """

    near: tuple[str | None, str | None, str | None]
    hardware: tuple[str, ...]  # every GPU, node, rack and pod on the way up, itself included
    tenant: str
    zone: str
    owner: str
    quarantined: bool


_ROOT = _Up((None, None, None), (), "", "", "", False)
_obj_id = attrgetter("id")
_obj_parent = attrgetter("parent")
_obj_labels = attrgetter("labels")
_obj_model_state = attrgetter("model", "state")
_NodeLabels = dict[tuple[int, int], tuple[str, str, str, bool]]
"""What a node passes down to its GPUs, by (its labels, its parent's `_Up`) (EntityGraph._passed_down)."""


class GpuBlock(NamedTuple):
    """The GPUs of nodes stamped whole from one plan that pass down the same labels (EntityGraph.gpu_blocks)."""

    slots: tuple[int, ...]
    """The plan's GPUs, by slot of a node's names."""
    attrs: tuple[Mapping[str, AttrValue], ...]
    """The `attrs` of the GPU at each of `slots`, on every node of the block."""
    suffixes: tuple[str, ...]
    """The GPU at each of `slots` is its node's id followed by this text."""
    names: list[Sequence[str]]
    """Each node's names by slot (Inventory.unmade_links): slot 0 is its id."""


def _plan_gpus(plan: LinkPlan) -> tuple[tuple[int, ...], tuple[tuple[str | None, str | None], ...]] | None:
    """The slots of a plan's GPUs and the (model, state) of each; None when it has none, or one is
    labelled or hangs from something else than the node (its attributes then depend on more than
    the node).
    """
    rows = [row for row in plan.object_rows if row[2] == "gpu"]
    if not rows or any(row[1] != 0 or row[5] for row in rows):
        return None
    return tuple(row[0] for row in rows), tuple((row[4], row[7]) for row in rows)


class _Domains:
    """The NVLink domains: each GPU's, and each domain's GPUs (in inventory order)."""

    def __init__(self, rows: DomainRows, gpus: Iterable[Obj]) -> None:
        self.of: dict[str, str] = dict(rows)
        self.members: dict[str, list[Obj]] = {d: [] for d in sorted(set(self.of.values()))}
        for g in gpus:
            d = self.of.get(g.id)
            if d is not None:
                self.members[d].append(g)


class EntityGraph:
    """Every entity by uid, worked out when first asked for, with memoised ancestors.

    `entities` reads like the dict of every entity (membership, lookup, iteration in a fixed
    order); lookups and `in` build nothing they do not return.
    """

    def __init__(self, inv: Inventory, principals: Principals, domains: DomainSource) -> None:
        self.inv = inv
        self._principals: dict[str, Entity] = {}
        for p in principals.principals.values():
            attrs: dict[str, AttrValue] = {
                "tenant": p.tenant,
                "role": p.role,
                "on_call": p.on_call,
                "teams": p.all_teams,
            }
            # uid() is Principal.uid (same quoting), without an encoder per principal.
            self._principals[uid(p.type, p.id)] = Entity(
                p.type, p.id, attrs, tuple(uid("Team", t) for t in p.teams), p.loc
            )
        check_parents(self._principals)  # hardware parents are found among existing objects
        self._attrs: dict[str, Mapping[str, AttrValue]] = {u: e.attrs for u, e in self._principals.items()}
        self._domain_source = domains
        self._domains: _Domains | None = None
        self._by_kind: dict[str, list[Obj]] = {}  # hardware kind -> its objects (_objects_of)
        self._gpus_in: dict[str, list[Obj]] | None = None
        self._holding_gpus: frozenset[str] | None = None
        self._up: dict[str, _Up] = {}
        self._idents: dict[str, tuple[str, str]] = {}  # uid -> (type, id), of entities only
        self._built: dict[str, Entity] = {}
        self._gpu_attrs: dict[tuple[object, ...], Mapping[str, AttrValue]] = {}
        self._ancestors: dict[str, frozenset[str]] = {}
        self._hw_ancestors: dict[str, frozenset[str]] = {}
        self.entities: Mapping[str, Entity] = _EntityView(self)

    # -- what exists -------------------------------------------------------------

    def ident(self, entity_uid: str) -> tuple[str, str] | None:
        """(type, id) of an entity of the graph; None when there is no such entity."""
        known = self._idents.get(entity_uid)
        if known is not None:
            return known
        found = self._ident(entity_uid)
        if found is not None:
            self._idents[entity_uid] = found
        return found

    def existing(self, entity_uid: str) -> tuple[str, str]:
        """(type, id) of an entity of the graph; KeyError when there is no such entity."""
        found = self.ident(entity_uid)
        if found is None:
            raise KeyError(entity_uid)
        return found

    def _ident(self, entity_uid: str) -> tuple[str, str] | None:
        p = self._principals.get(entity_uid)
        if p is not None:
            return p.type, p.id
        parsed = parse_uid(entity_uid)
        if parsed is None:
            return None
        etype, eid = parsed
        kind = _KIND_OF_TYPE.get(etype)
        if kind is not None:
            o = self.inv.found.get(eid)
            return parsed if o is not None and o.kind == kind else None
        if etype == DOMAIN_TYPE and eid in self.domains().members:
            return parsed
        return None

    def domains(self) -> _Domains:
        if self._domains is None:
            source = self._domain_source
            rows = source() if callable(source) else source
            self._domains = _Domains(rows or (), self._objects_of("gpu"))
        return self._domains

    def _objects_of(self, kind: str) -> list[Obj]:
        """The objects of one hardware kind, in inventory order. Listed per kind when first asked
        for: one comprehension over a fleet's objects is a third of the time of sorting every
        object into buckets, and an audit of GPUs never asks for the other kinds.
        """
        found = self._by_kind.get(kind)
        if found is None:
            if kind not in HARDWARE_TYPES:
                raise KeyError(kind)
            with collector_paused():
                found = self._by_kind[kind] = [o for o in self.inv.objects.values() if o.kind == kind]
        return found

    def all_uids(self) -> Iterator[str]:
        """Principals (file order), hardware (inventory order), domains (sorted)."""
        yield from self._principals
        for o in self.inv.objects.values():
            etype = HARDWARE_TYPES.get(o.kind)
            if etype is not None:
                yield uid(etype, o.id)
        for d in self.domains().members:
            yield uid(DOMAIN_TYPE, d)

    def uids_of_type(self, *types: str) -> list[str]:
        """Uids of every entity of these types, sorted by (type, id)."""
        out: list[str] = []
        for etype in sorted(set(types)):  # by type, then by id within each
            kind = _KIND_OF_TYPE.get(etype)
            if kind is not None:
                ids = sorted(o.id for o in self._objects_of(kind))
                made = [f"{etype}::{encode_basestring(i)}" for i in ids]  # uid(), without a call per id
                # Remembered as they are written: reading a fleet's uids back (ident) would parse each.
                self._idents.update(zip(made, [(etype, i) for i in ids], strict=True))
                out.extend(made)
                continue
            elif etype == DOMAIN_TYPE:
                ids = list(self.domains().members)  # sorted already
            else:
                ids = sorted(e.id for e in self._principals.values() if e.type == etype)
            out.extend(uid(etype, i) for i in ids)
        return out

    def of_type(self, *types: str) -> list[Entity]:
        return [self.entity(u) for u in self.uids_of_type(*types)]

    # -- one entity ----------------------------------------------------------------

    def entity(self, entity_uid: str) -> Entity:
        """The entity, whole (a Gpu's parents include its domain); KeyError when there is none."""
        done = self._built.get(entity_uid) or self._principals.get(entity_uid)
        if done is not None:
            return done
        etype, eid = self.existing(entity_uid)
        loc = self.inv.location(eid)
        e = Entity(etype, eid, self.attrs(entity_uid), self.parents(entity_uid), loc)
        self._built[entity_uid] = e
        return e

    def parents(self, entity_uid: str, domains: bool = True) -> tuple[str, ...]:
        """Parent uids; without a Gpu's NvlinkDomain when `domains` is false."""
        p = self._principals.get(entity_uid)
        if p is not None:
            return p.parents
        etype, eid = self.existing(entity_uid)
        kind = _KIND_OF_TYPE.get(etype)
        if kind is None:  # a domain: no parents
            return ()
        o = self.inv.found[eid]
        near = self._up_of(o.parent).near if o.parent is not None else _ROOT.near
        out: list[str] = []
        for k in PARENT_KINDS[kind]:
            anc = near[_SLOT[k]]
            if anc is not None:
                out.append(uid(HARDWARE_TYPES[k], anc))
                break
        if kind == "gpu" and domains:
            d = self.domains().of.get(eid)
            if d is not None:
                out.append(uid(DOMAIN_TYPE, d))
        return tuple(out)

    def attrs(self, entity_uid: str) -> Mapping[str, AttrValue]:
        """The entity's attributes (read-only: GPUs that look alike share one mapping)."""
        done = self._attrs.get(entity_uid)
        if done is not None:
            return done
        etype, eid = self.existing(entity_uid)
        out: Mapping[str, AttrValue]
        if etype == DOMAIN_TYPE:
            out = self._domain_attrs(self.domains().members[eid])
        else:
            o = self.inv.found[eid]
            gpus = self._gpus_under(o)
            # An object without labels inherits all of them: its parent's `_Up` says the same.
            up = self._up_of(o.id) if o.labels or o.parent is None else self._up_of(o.parent)
            if len(gpus) == 1 and gpus[0] is o:
                # A GPU's attributes depend on these alone: thousands of GPUs share one mapping.
                key = (o.model, up.tenant, up.zone, up.owner, up.quarantined, o.state)
                shared = self._gpu_attrs.get(key)
                if shared is None:
                    shared = self._gpu_attrs[key] = self._object_attrs(o, up, gpus)
                out = shared
            else:
                out = self._object_attrs(o, up, gpus)
        self._attrs[entity_uid] = out
        return out

    def attrs_many(self, uids: Iterable[str]) -> list[Mapping[str, AttrValue]]:
        """`attrs` of each uid. Class keys and the policy questions ask it of many GPUs (an audit
        of GPUs reads `gpu_rows` instead): the common GPU (no label of its own, no GPU below it)
        is read here without a call per GPU.
        """
        memo, shared, ups, idents = self._attrs, self._gpu_attrs, self._up, self._idents
        objects = self.inv.found
        below: frozenset[str] | None = None  # found at the first uid not read yet: principals never need it
        # GPUs of one parent with one model and state (the 8 of a node) share one mapping: the
        # parent's `_Up` and the shared mapping are looked up once for them, not once per GPU.
        siblings: tuple[str | None, str | None, str | None, Mapping[str, AttrValue] | None] = (None, None, None, None)
        out: list[Mapping[str, AttrValue]] = []
        for u in uids:
            a = memo.get(u)
            if a is None:
                if below is None:
                    below = self.gpus_holding_gpus()
                known = idents.get(u)
                o = objects[known[1]] if known is not None and known[0] == "Gpu" else self._gpu_at(u, objects)
                if o is not None and o.parent is not None and not o.labels and o.id not in below:
                    parent, model, state = o.parent, o.model, o.state
                    if siblings[0] == parent and siblings[1] == model and siblings[2] == state:
                        a = siblings[3]
                    else:
                        up = ups.get(parent) or self._up_of(parent)
                        a = shared.get((model, up.tenant, up.zone, up.owner, up.quarantined, state))
                        siblings = (parent, model, state, a)
                if a is None:
                    a = self.attrs(u)
                memo[u] = a
            out.append(a)
        return out

    def gpu_rows(self) -> tuple[list[str], list[Mapping[str, AttrValue]], list[str]]:
        """Every GPU's uid (in `uids_of_type("Gpu")`'s order), `attrs` and `group`, in one pass over
        the GPU objects: what an audit reads of every GPU of a fleet, without finding each object
        again from its uid (`attrs_many`, `groups_many`). Nothing is remembered per GPU.
        """
        ordered, attrs, groups = self._gpu_pass(with_groups=True)
        uids = [f"Gpu::{encode_basestring(o.id)}" for o in ordered]  # uid(), without a call per GPU
        return uids, attrs, groups

    def gpu_ids_attrs(self) -> tuple[list[str], list[Mapping[str, AttrValue]]]:
        """Every GPU's id, sorted, and its `attrs`: `gpu_rows` without the uids and the groups, which
        the authorization facts do not read (a GPU's class key is its shared attribute mapping's).
        """
        ordered, attrs, _groups = self._gpu_pass(with_groups=False)
        return [o.id for o in ordered], attrs

    def _gpu_pass(
        self, with_groups: bool, gpus: list[Obj] | None = None
    ) -> tuple[list[Obj], list[Mapping[str, AttrValue]], list[str]]:
        """The GPU objects (`gpus`, else every one) sorted by id, the `attrs` of each and
        (`with_groups`) the `group` of each.

        Sorted by id, the GPUs of one parent (a node's 8) come together: they are read as one run,
        whose parent is looked at once; a run whose GPUs have no labels of their own, hold no GPU
        and share their model and state shares one mapping (a fleet's 16,384 nodes: one step each,
        not eight). Any other run is read GPU by GPU (`_gpu_run`), with the same answer.
        """
        shared = self._gpu_attrs
        ordered = sorted(self._objects_of("gpu") if gpus is None else gpus, key=_obj_id)
        held = self._holding_gpus
        below = held if held is not None else self._holding_among(self._objects_of("gpu"))
        attrs: list[Mapping[str, AttrValue]] = []
        groups: list[str] = []
        node_labels: _NodeLabels = {}
        for parent, grouped in groupby(ordered, _obj_parent):
            run = list(grouped)
            if parent is None:
                for o in run:
                    if with_groups:
                        groups.append(o.id)  # nothing above it: its own group (_ROOT.near is all None)
                    attrs.append(self.attrs(uid("Gpu", o.id)))
                continue
            group, inherited = self._passed_down(parent, node_labels)
            if with_groups:
                groups += [group] * len(run) if group else [o.id for o in run]
            first = run[0]
            if (
                not any(map(_obj_labels, run))
                and (not below or below.isdisjoint(map(_obj_id, run)))
                and len(set(map(_obj_model_state, run))) == 1
            ):
                a = shared.get((first.model, *inherited, first.state))
                if a is not None:
                    attrs += [a] * len(run)
                    continue
            attrs += self._gpu_run(run, inherited, below)
        return ordered, attrs, groups

    def _passed_down(self, parent: str, node_labels: _NodeLabels) -> tuple[str, tuple[str, str, str, bool]]:
        """What `parent` passes down to a GPU below it: the GPU's group ("": none, each GPU is its
        own) and (tenant, zone, owner, quarantined). `node_labels` keeps what a node passes down
        by (its labels, its parent's `_Up`), both shared and alive throughout.
        """
        ups = self._up
        up = ups.get(parent)
        p = self.inv.found.get(parent) if up is None else None
        if p is not None and p.kind == "node":
            # A node's `_Up` is its parent's with itself as the nearest node and its own
            # labels over the inherited ones (_up_of): read so, without one made per node.
            above = _ROOT if p.parent is None else ups.get(p.parent) or self._up_of(p.parent)
            near, labels = above.near, p.labels
            # "": no node, rack or pod above it, and then each GPU is its own group.
            group = near[1] or p.id or near[2] or ""
            key = (id(labels), id(above))
            inherited = node_labels.get(key)
            if inherited is None:
                inherited = node_labels[key] = (
                    labels.get("tenant", above.tenant),
                    labels.get("zone", above.zone),
                    labels.get("owner", above.owner),
                    above.quarantined or labels.get("quarantine") == "true",
                )
            return group, inherited
        up = up or self._up_of(parent)
        near = up.near
        return near[1] or near[0] or near[2] or "", (up.tenant, up.zone, up.owner, up.quarantined)

    def _gpu_run(
        self, run: list[Obj], inherited: tuple[str, str, str, bool], below: frozenset[str]
    ) -> list[Mapping[str, AttrValue]]:
        """The `attrs` of GPUs of one parent, GPU by GPU: `inherited` (tenant, zone, owner, quarantined)
        is what the parent passes down. A GPU with no label, holding no GPU, takes the mapping shared
        by its model, state and `inherited` (made by the first `attrs` of such a GPU).
        """
        shared = self._gpu_attrs
        out: list[Mapping[str, AttrValue]] = []
        siblings: tuple[str | None, str | None, Mapping[str, AttrValue] | None] = (None, None, None)
        for o in run:
            a: Mapping[str, AttrValue] | None = None
            if not o.labels and o.id not in below:
                model, state = o.model, o.state
                if siblings[0] == model and siblings[1] == state and siblings[2] is not None:
                    a = siblings[2]
                else:
                    a = shared.get((model, *inherited, state))
                    siblings = (model, state, a)
            out.append(a if a is not None else self.attrs(uid("Gpu", o.id)))
        return out

    def gpu_blocks(self) -> tuple[list[str], list[Mapping[str, AttrValue]], list[GpuBlock]]:
        """Every GPU's `attrs`, the GPUs of nodes stamped whole from their plan by node group.

        A node stamped whole (Inventory.stamped, its links not made yet: its plan and names at
        hand) holds its plan's objects unchanged, so its GPUs' attributes follow from the plan's
        rows and what the node passes down (`_passed_down`): nodes of one plan passing down the
        same labels give the GPU at each slot one shared mapping. Those nodes come as one
        `GpuBlock` each (no GPU object read), when no GPU holds another and the plan's GPUs hang
        from the node itself with no labels of their own. Every other GPU comes one by one: its
        id and its `attrs` (`_gpu_pass`), sorted by id.
        """
        inv, shared = self.inv, self._gpu_attrs
        unmade, stamped, objects = inv.unmade_links(), inv.stamped, inv.found
        whole = whole_nodes(inv)
        if self._holding_gpus is None and whole and not self._gpu_parent_among(whole):
            self._holding_gpus = frozenset()  # no GPU holds another
        below = self.gpus_holding_gpus()
        plans: dict[int, tuple[tuple[int, ...], tuple[tuple[str | None, str | None], ...]] | None] = {}
        node_labels: _NodeLabels = {}
        ups = self._up
        by_place: dict[tuple[str | None, int] | None, tuple[str, str, str, bool]] = {}
        grouped: dict[tuple[int, tuple[str, str, str, bool]], tuple[LinkPlan, list[Sequence[str]]]] = {}
        for node, (plan, names) in unmade.items() if not below else ():
            if node not in stamped:
                continue
            gpu_rows = plans.get(id(plan), ())
            if gpu_rows == ():
                gpu_rows = plans[id(plan)] = _plan_gpus(plan)
            if gpu_rows is None:
                continue
            p = objects.get(node)
            if p is None or p.kind != "node":
                continue
            # A node whose `_Up` is not made yet passes down what its parent and its labels give
            # (_passed_down): the nodes of one rack with one labels mapping, read once for them all.
            place = (p.parent, id(p.labels)) if node not in ups else None
            inherited = by_place.get(place) if place is not None else None
            if inherited is None:
                _group, inherited = self._passed_down(node, node_labels)
                if place is not None:
                    by_place[place] = inherited
            key = (id(plan), inherited)
            group = grouped.get(key)
            if group is None:
                group = grouped[key] = (plan, [])
            group[1].append(names)
        blocks: list[GpuBlock] = []
        read: set[str] = set()
        for (plan_id, inherited), (plan, lists) in grouped.items():
            found = plans[plan_id]
            assert found is not None
            slots, kinds = found
            mappings: list[Mapping[str, AttrValue]] = []
            for slot, (model, state) in zip(slots, kinds, strict=True):
                kept = (model, *inherited, state)
                a = shared.get(kept)
                if a is None:
                    self.attrs(uid("Gpu", lists[0][slot]))  # makes the shared mapping, as for any such GPU
                    a = shared.get(kept)
                    if a is None:  # not what the node passes down after all: read one by one
                        break
                mappings.append(a)
            if len(mappings) == len(slots):
                suffixes = tuple(plan.names[slot - 1] for slot in slots)
                blocks.append(GpuBlock(slots, tuple(mappings), suffixes, lists))
                read.update(names[0] for names in lists)
        rest = [o for o in objects_without(inv, read) if o.kind == "gpu"] if read else None
        ordered, attrs, _groups = self._gpu_pass(False, rest)
        return [o.id for o in ordered], attrs, blocks

    @staticmethod
    def _gpu_at(gpu_uid: str, objects: Mapping[str, Obj]) -> Obj | None:
        """The GPU a uid names, read off the uid without parsing it (None: ask `ident`)."""
        if not gpu_uid.startswith('Gpu::"'):
            return None
        eid = gpu_uid[6:-1]
        o = objects.get(eid)
        # Written exactly as uid() writes it (else it names no entity, as ident says).
        return o if o is not None and o.kind == "gpu" and uid("Gpu", eid) == gpu_uid else None

    def group(self, gpu_uid: str) -> str:
        """A GPU's hardware group for audits: its rack, else its node or pod, else itself."""
        return self.groups_many([gpu_uid])[0]

    def groups_many(self, gpu_uids: Iterable[str]) -> list[str]:
        """`group` of each GPU uid, in one loop."""
        objects, ups, idents = self.inv.found, self._up, self._idents
        out: list[str] = []
        # GPUs of one parent (listed together, as an audit's sorted GPUs of a node are) share
        # their group: the parent's `_Up` is read once for them.
        last_parent: str | None = None
        last_group = ""
        for u in gpu_uids:
            known = idents.get(u)  # an audit's GPUs, listed by uids_of_type: not read off the uid again
            o = objects[known[1]] if known is not None and known[0] == "Gpu" else self._gpu_at(u, objects)
            if o is None:
                ident = self.ident(u)
                if ident is None or ident[0] != "Gpu":
                    raise KeyError(u)
                o = objects[ident[1]]
            parent = o.parent
            if parent is None:
                out.append(o.id)  # nothing above it: its own group (_ROOT.near is all None)
                continue
            if parent != last_parent:
                near = (ups.get(parent) or self._up_of(parent)).near
                # "": no node, rack or pod above it, and then each GPU is its own group.
                last_parent, last_group = parent, near[1] or near[0] or near[2] or ""
            out.append(last_group or o.id)
        return out

    def ancestors(self, entity_uid: str) -> frozenset[str]:
        """Strict ancestors. The graph is acyclic by construction (containment is a forest)."""
        done = self._ancestors.get(entity_uid)
        if done is not None:
            return done
        out: set[str] = set()
        for p in self.entity(entity_uid).parents:
            out.add(p)
            out |= self.ancestors(p)
        frozen = frozenset(out)
        self._ancestors[entity_uid] = frozen
        return frozen

    def named_ancestors(self, entity_uid: str, named: frozenset[str]) -> frozenset[str]:
        """`ancestors(entity_uid) & named`, finding the NVLink domains only if `named` holds one."""
        if not named:
            return frozenset()
        if any(u.startswith(DOMAIN_TYPE + "::") for u in named):
            return self.ancestors(entity_uid) & named
        return self._ancestors_without_domains(entity_uid) & named

    def _ancestors_without_domains(self, entity_uid: str) -> frozenset[str]:
        # A domain has no parents, so leaving it out removes only itself.
        done = self._hw_ancestors.get(entity_uid)
        if done is not None:
            return done
        out: set[str] = set()
        for p in self.parents(entity_uid, domains=False):
            out.add(p)
            out |= self._ancestors_without_domains(p)
        frozen = frozenset(out)
        self._hw_ancestors[entity_uid] = frozen
        return frozen

    # -- what Cedar is given -----------------------------------------------------

    def closure(
        self, roots: Iterable[str], ancestor_attrs: Mapping[str, AttrValue] | None = None
    ) -> list[dict[str, object]]:
        """Cedar JSON of the `roots` that are entities and of all their ancestors, sorted by uid.

        A Gpu's NvlinkDomain parent is given only when a root is a domain: Cedar sees an
        ancestor only through `in` against an entity of the request (principal, resource, a
        literal of a policy, an entity in the context), and a domain has no parents, so with no
        domain among the roots no `in` can reach one. The decisions are those of the whole graph.

        For the same reason an ancestor's attributes are never read: a policy reads attributes
        of the principal, the resource, the context's entities and the entities it names (all
        roots), and no attribute topolog builds refers to an entity. `ancestor_attrs`, when
        given, stands in for the attributes of a hardware entity that is only an ancestor of a
        root (values of the schema's types, checked by the caller): a node's, rack's or pod's
        own attributes count every GPU below it, which one request on a fleet need not work out.
        """
        asked = {r for r in set(roots) if self.ident(r) is not None}
        todo = list(asked)
        with_domains = any(r.startswith(DOMAIN_TYPE + "::") for r in todo)
        seen: dict[str, tuple[str, ...]] = {}
        while todo:
            u = todo.pop()
            if u in seen:
                continue
            parents = self.parents(u, domains=with_domains)
            seen[u] = parents
            for p in parents:
                if self.ident(p) is None:  # never, by construction; cedarpy would accept it silently
                    raise TopologError.at(self._loc(u), f"entity {u} has parent {p}, which does not exist")
                todo.append(p)
        out: list[dict[str, object]] = []
        for u in sorted(seen):
            ident = self.ident(u)
            assert ident is not None
            stand_in = u not in asked and u not in self._principals
            attrs = ancestor_attrs if ancestor_attrs is not None and stand_in else self.attrs(u)
            out.append(_entity_json(ident[0], ident[1], attrs, seen[u]))
        return out

    def _loc(self, entity_uid: str) -> SourceLocation:
        p = self._principals.get(entity_uid)
        if p is not None:
            return p.loc
        ident = self.ident(entity_uid)
        return self.inv.location(ident[1] if ident is not None else "")

    def to_json(self) -> str:
        """Every entity, as the Cedar JSON document (sorted by uid)."""
        return json.dumps([self.entity(k).to_json() for k in sorted(self.all_uids())], separators=(",", ":"))

    # -- the inventory, read on demand --------------------------------------------

    def _up_of(self, oid: str) -> _Up:
        """`_Up` of an object, memoised; walked upwards without recursion (chains may be deep)."""
        done = self._up.get(oid)
        if done is not None:
            return done
        objects, ups = self.inv.found, self._up
        path: list[Obj] = []
        base = _ROOT
        cur: str | None = oid
        while cur is not None:
            known = ups.get(cur)
            if known is not None:
                base = known
                break
            o = objects.get(cur)
            if o is None:  # a dangling parent ends the chain, as an absent one does
                break
            path.append(o)
            cur = o.parent
        for o in reversed(path):
            labels, kind = o.labels, o.kind
            hardware_kind = kind in HARDWARE_TYPES
            if hardware_kind or labels:  # else it inherits all: share its parent's
                near = base.near
                slot = _SLOT.get(kind)
                if slot is not None:
                    nearest = list(near)
                    nearest[slot] = o.id
                    near = (nearest[0], nearest[1], nearest[2])
                hardware = (o.id, *base.hardware) if hardware_kind else base.hardware
                if labels:
                    base = _Up(
                        near,
                        hardware,
                        labels.get("tenant", base.tenant),
                        labels.get("zone", base.zone),
                        labels.get("owner", base.owner),
                        # Values are checked by check_label_types: anything but "true" here is "false".
                        base.quarantined or labels.get("quarantine") == "true",
                    )
                else:  # the labels of its parent's (most GPUs and racks have none of their own)
                    base = _Up(near, hardware, base.tenant, base.zone, base.owner, base.quarantined)
            ups[o.id] = base
        return ups.get(oid, base)

    def gpus_holding_gpus(self) -> frozenset[str]:
        """The GPUs with another GPU below them (mostly none): only their attributes count more GPUs
        than themselves. Found from each GPU's parent up, without the index of every GPU below every
        object that `_gpu_index` builds.
        """
        if self._holding_gpus is None:
            holding: set[str] = set()
            parents: set[str] = set()
            objects = self.inv.found
            # One request: no GPU has anything below it, found in one pass. An audit (the GPUs
            # listed already) walks up from every GPU's parent, which its attributes need anyway.
            if "gpu" not in self._by_kind and not self._gpu_is_a_parent():
                self._holding_gpus = frozenset()  # a GPU with nothing below it holds no GPU
                return self._holding_gpus
            for g in self._objects_of("gpu"):
                p = g.parent
                if p is None or p in parents:
                    continue
                parents.add(p)
                holding.update(h for h in self._up_of(p).hardware if objects[h].kind == "gpu")
            self._holding_gpus = frozenset(holding)
        return self._holding_gpus

    def _holding_among(self, gpus: list[Obj]) -> frozenset[str]:
        """`gpus_holding_gpus`, given every GPU object: no GPU holds another when no object's parent
        is one of them (one pass over the objects), without walking up from every GPU's parent.
        """
        if self._holding_gpus is None:
            parents = {o.parent for o in self.inv.objects.values()}
            if parents.isdisjoint([g.id for g in gpus]):
                self._holding_gpus = frozenset()
        return self.gpus_holding_gpus()

    def _gpu_parent_among(self, whole: frozenset[str]) -> bool:
        """Whether any object's parent is a GPU, read per plan for the `whole` nodes' objects (their
        plan's, unchanged: whole_nodes.py) and object by object for the others (a fleet's few thousand).
        """
        unmade, objects = self.inv.unmade_links(), self.inv.found
        # Every plan of a node whose links are not made (those of the whole nodes among them): one
        # holding a GPU in a GPU sends every GPU the long way, exact either way.
        plans = {id(plan): plan for plan, _names in unmade.values()}
        for plan in plans.values():
            gpu_slots = {row[0] for row in plan.object_rows if row[2] == "gpu"}
            if any(row[1] in gpu_slots for row in plan.object_rows):
                return True
        parents = {o.parent for o in objects_without(self.inv, whole)}
        return any((p := objects.get(par)) is not None and p.kind == "gpu" for par in parents if par is not None)

    def _gpu_is_a_parent(self) -> bool:
        """Whether any object's parent is a GPU: two passes over the objects in comprehensions, a
        third of the time of walking up from every GPU (a fleet's GPUs are leaves, as on every
        shipped example, and then none holds another).
        """
        objects = self.inv.objects
        parents = {o.parent for o in objects.values()}
        return not parents.isdisjoint([oid for oid, o in objects.items() if o.kind == "gpu"])

    def _gpu_index(self) -> dict[str, list[Obj]]:
        """Hardware object id -> the GPUs below it. Built once, from the GPUs up: grouped by
        parent, each group joins every GPU, node, rack and pod above it (a few per group).
        """
        if self._gpus_in is None:
            with collector_paused():
                by_parent: dict[str, list[Obj]] = {}
                for g in self._objects_of("gpu"):
                    if g.parent is not None:
                        by_parent.setdefault(g.parent, []).append(g)
                index: dict[str, list[Obj]] = {}
                for parent, gpus in by_parent.items():
                    for above in self._up_of(parent).hardware:
                        index.setdefault(above, []).extend(gpus)
                self._gpus_in = index
        return self._gpus_in

    def _gpus_under(self, o: Obj) -> list[Obj]:
        """The object if it is a GPU, and every GPU below it."""
        if o.kind == "gpu" and o.id not in self.gpus_holding_gpus():
            return [o]  # the common GPU: no index of a fleet's GPUs is needed to say so
        below = self._gpu_index().get(o.id, [])
        return [o, *below] if o.kind == "gpu" else below

    def _figures(self, gpus: list[Obj]) -> dict[str, AttrValue]:
        models = sorted({g.model or "" for g in gpus})
        specs = [self.inv.models.get(g.model) if g.model else None for g in gpus]
        return {
            "model": "" if not gpus else models[0] if len(models) == 1 else "mixed",
            "fp64": bool(gpus) and all(m is not None and "fp64" in m.features for m in specs),
            "fp64_tflops": min((m.specs.get("fp64_gflops", 0) // 1000 if m else 0) for m in specs) if specs else 0,
            "consumer": bool(gpus) and all(m is not None and "ecc" not in m.features for m in specs),
            "gpus": len(gpus),
        }

    def _object_attrs(self, o: Obj, up: _Up, gpus: list[Obj]) -> dict[str, AttrValue]:
        """A GPU, node, rack or pod: the figures of its GPUs, its own labels (inherited) and state."""
        out = self._figures(gpus)
        out["tenant"], out["zone"], out["owner"] = up.tenant, up.zone, up.owner
        out["quarantined"] = up.quarantined
        out["state"] = o.state or "ok"
        return out

    def _domain_attrs(self, gpus: list[Obj]) -> dict[str, AttrValue]:
        """An NVLink domain: what all its GPUs agree on."""
        out = self._figures(gpus)
        ups = [self._up_of(g.id) if g.labels or g.parent is None else self._up_of(g.parent) for g in gpus]
        for key in ("tenant", "zone", "owner"):
            values = {getattr(u, key) for u in ups}
            out[key] = values.pop() if len(values) == 1 else ""
        out["quarantined"] = any(u.quarantined for u in ups)
        out["state"] = "ok"
        return out

    def probe_attrs(self) -> dict[str, AttrValue]:
        """Hardware attributes with no GPU and no label: every key, each value of its one type."""
        return self._domain_attrs([])


class _EntityView(Mapping[str, Entity]):
    """The graph's entities as a read-only mapping: `in` and lookups build only what they return."""

    def __init__(self, graph: EntityGraph) -> None:
        self._graph = graph

    def __getitem__(self, key: str) -> Entity:
        return self._graph.entity(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._graph.ident(key) is not None

    def __iter__(self) -> Iterator[str]:
        return self._graph.all_uids()

    def __len__(self) -> int:
        return sum(1 for _ in self._graph.all_uids())


def check_parents(entities: Mapping[str, Entity]) -> None:
    """Refuse a graph with a parent that is not an entity of it (cedarpy would accept it)."""
    problems = [
        Diagnostic(e.loc, f"entity {e.uid} has parent {p}, which does not exist")
        for e in entities.values()
        for p in e.parents
        if p not in entities
    ]
    if problems:
        raise TopologError(problems)


def check_label_types(inv: Inventory) -> None:
    """Refuse a label that a policy reads as a Bool but that is not `true` or `false`.

    `quarantine: "yes"` would otherwise make `quarantined` false and leave the node open
    to every policy that forbids quarantined hardware: fail closed, at the label's object.
    """
    bools = [label for label, (_attr, ctype) in LABEL_ATTRS.items() if ctype == "Bool"]
    # The objects not made yet (Inventory.defer_objects) carry their plan's labels: with every
    # plan's right, only the other objects are read; else every object, made, in order.
    unmade = inv.unmade_objects()
    plans = {id(plan): plan for plan, _names in unmade.values()}.values()
    rows = [row for plan in plans for row in plan.object_rows]
    plans_right = not any(label in row[5] and row[5][label] not in _BOOL_TEXT for row in rows for label in bools)
    objects = inv.objects_but(unmade.keys()) if unmade and plans_right else inv.objects.values()
    # Found first with one comprehension per label (a fleet's half a million objects, most of them
    # labelled: a NIC's rail): the loop below, which names each place, only runs when one is wrong.
    if not any([o for o in objects if label in o.labels and o.labels[label] not in _BOOL_TEXT] for label in bools):
        return
    # One error per place and value, however many template instances repeat it.
    found: dict[tuple[SourceLocation, str, str], list[str]] = {}
    for o in objects:
        labels = o.labels
        if not labels:
            continue
        for label in bools:
            value = labels.get(label)
            if value is not None and value not in _BOOL_TEXT:
                found.setdefault((o.loc, label, value), []).append(o.id)
    problems: list[Diagnostic] = []
    for (loc, label, value), ids in found.items():
        more = f" (and {len(ids) - 1} more objects)" if len(ids) > 1 else ""
        problems.append(
            Diagnostic(
                loc,
                f"label {label!r} of {ids[0]!r}{more} is {value!r}; the authorization policies read it as the "
                f"boolean {LABEL_ATTRS[label][0]!r}, so expected true or false",
            )
        )
    if problems:
        raise TopologError(problems)


def build_graph(inv: Inventory, nvlink_domains: DomainSource, principals: Principals) -> EntityGraph:
    """The entity graph. `nvlink_domains` are (gpu, domain) rows, or a function returning them
    (called when a domain is first needed); None when the rules derive none.
    """
    check_label_types(inv)
    return EntityGraph(inv, principals, nvlink_domains)
