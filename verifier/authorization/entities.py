"""Cedar entities, built by topolog from the inventory, the derived NVLink domains and the principals.

Hardware: `Gpu in Node in Rack in Pod`, each level to the nearest existing ancestor of that
kind (a GPU outside any node hangs from its rack or pod), and every Gpu also in its
`NvlinkDomain`, named like the rules name it (the smallest GPU id of the domain, from
verifier.facts.graph.scaleup_domains, which a test holds equal to the rules' `nvlink_domain`).
Attributes are described in policies/schema.cedarschema.

Entity ids are inventory ids, so they are deterministic. The graph is checked here: cedarpy
accepts a parent that does not exist (and then `in` silently never matches it), so every
parent must be an entity of the graph, or the graph is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.sources.inventory.model import Inventory, Obj
from verifier.sources.principals import Principals

HARDWARE_TYPES: dict[str, str] = {"gpu": "Gpu", "node": "Node", "rack": "Rack", "pod": "Pod"}
PRINCIPAL_TYPES = ("Team", "User", "ServiceAccount")
RESOURCE_TYPES = ("Gpu", "Node", "Rack", "Pod", "NvlinkDomain")
_PARENT_KINDS: dict[str, tuple[str, ...]] = {
    "gpu": ("node", "rack", "pod"),
    "node": ("rack", "pod"),
    "rack": ("pod",),
    "pod": (),
}

AttrValue = str | bool | int | tuple[str, ...]

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
    """Cedar's surface syntax for an entity uid, e.g. Gpu::"dgx00/gpu3" (ids escaped as JSON strings)."""
    return f"{etype}::{json.dumps(eid, ensure_ascii=False)}"


@dataclass(frozen=True)
class Entity:
    type: str
    id: str
    attrs: Mapping[str, AttrValue]
    parents: tuple[str, ...]  # uids
    loc: SourceLocation

    @property
    def uid(self) -> str:
        return uid(self.type, self.id)

    def to_json(self) -> dict[str, object]:
        attrs = {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(self.attrs.items())}
        parents = [_split(p) for p in self.parents]
        return {
            "uid": {"type": self.type, "id": self.id},
            "attrs": attrs,
            "parents": [{"type": t, "id": i} for t, i in parents],
        }


def _split(entity_uid: str) -> tuple[str, str]:
    etype, _, quoted = entity_uid.partition("::")
    return etype, str(json.loads(quoted))


@dataclass
class EntityGraph:
    """Every entity by uid, with memoised ancestors (transitive parents)."""

    entities: dict[str, Entity]
    gpu_group: dict[str, str] = field(default_factory=dict)  # Gpu uid -> its hardware group (rack, else node/pod)
    _ancestors: dict[str, frozenset[str]] = field(default_factory=dict)

    def ancestors(self, entity_uid: str) -> frozenset[str]:
        """Strict ancestors. The graph is acyclic by construction (containment is a forest)."""
        done = self._ancestors.get(entity_uid)
        if done is not None:
            return done
        out: set[str] = set()
        for p in self.entities[entity_uid].parents:
            out.add(p)
            out |= self.ancestors(p)
        frozen = frozenset(out)
        self._ancestors[entity_uid] = frozen
        return frozen

    def of_type(self, *types: str) -> list[Entity]:
        return sorted((e for e in self.entities.values() if e.type in types), key=lambda e: (e.type, e.id))

    def to_json(self) -> str:
        return json.dumps([self.entities[k].to_json() for k in sorted(self.entities)], separators=(",", ":"))


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
    # One error per place and value, however many template instances repeat it.
    found: dict[tuple[SourceLocation, str, str], list[str]] = {}
    for o in inv.objects.values():
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


def build_graph(
    inv: Inventory,
    nvlink_domains: Iterable[tuple[str, str]] | None,
    principals: Principals,
) -> EntityGraph:
    """The full entity graph. `nvlink_domains` are (gpu, domain) rows; None when the rules derive none."""
    check_label_types(inv)
    entities: dict[str, Entity] = {}
    for p in principals.principals.values():
        attrs: dict[str, AttrValue] = {"tenant": p.tenant, "role": p.role, "on_call": p.on_call, "teams": p.all_teams}
        entities[p.uid] = Entity(p.type, p.id, attrs, tuple(uid("Team", t) for t in p.teams), p.loc)
    hw = _Hardware(inv)
    domain_of = dict(nvlink_domains or ())
    gpus_in: dict[str, list[Obj]] = {}
    groups: dict[str, str] = {}
    for o in inv.objects.values():
        if o.kind not in HARDWARE_TYPES:
            continue
        parents: list[str] = []
        for kind in _PARENT_KINDS[o.kind]:
            anc = hw.nearest(o, kind)
            if anc is not None:
                parents.append(uid(HARDWARE_TYPES[kind], anc.id))
                break
        if o.kind == "gpu":
            gpus_in.setdefault(uid("Gpu", o.id), []).append(o)
            for anc in hw.chain(o)[1:]:
                if anc.kind in HARDWARE_TYPES:
                    gpus_in.setdefault(uid(HARDWARE_TYPES[anc.kind], anc.id), []).append(o)
            domain = domain_of.get(o.id)
            if domain is not None:
                parents.append(uid("NvlinkDomain", domain))
                gpus_in.setdefault(uid("NvlinkDomain", domain), []).append(o)
            group = hw.nearest(o, "rack") or hw.nearest(o, "node") or hw.nearest(o, "pod")
            groups[uid("Gpu", o.id)] = group.id if group is not None else o.id
        e_uid = uid(HARDWARE_TYPES[o.kind], o.id)
        entities[e_uid] = Entity(HARDWARE_TYPES[o.kind], o.id, {}, tuple(parents), o.loc)
    for domain in sorted(set(domain_of.values())):
        entities[uid("NvlinkDomain", domain)] = Entity("NvlinkDomain", domain, {}, (), inv.location(domain))
    for e_uid, e in list(entities.items()):
        if e.type in PRINCIPAL_TYPES:
            continue
        obj = inv.objects.get(e.id) if e.type != "NvlinkDomain" else None
        attrs = hw.attrs(obj, gpus_in.get(e_uid, []))
        entities[e_uid] = Entity(e.type, e.id, attrs, e.parents, e.loc)
    check_parents(entities)
    return EntityGraph(entities, groups)


class _Hardware:
    """Ancestor chains and inherited labels, memoised: a 100k-GPU fleet walks each chain once."""

    def __init__(self, inv: Inventory) -> None:
        self.inv = inv
        self._chains: dict[str, list[Obj]] = {}

    def chain(self, o: Obj) -> list[Obj]:
        """The object and its ancestors, nearest first."""
        done = self._chains.get(o.id)
        if done is not None:
            return done
        parent = self.inv.objects.get(o.parent) if o.parent is not None else None
        out = [o, *(self.chain(parent) if parent is not None else [])]
        self._chains[o.id] = out
        return out

    def nearest(self, o: Obj, kind: str) -> Obj | None:
        return next((a for a in self.chain(o)[1:] if a.kind == kind), None)

    def label(self, o: Obj, key: str) -> str:
        return next((a.labels[key] for a in self.chain(o) if key in a.labels), "")

    def quarantined(self, o: Obj) -> bool:
        # Values are checked by check_label_types: anything but "true" here is "false".
        return any(a.labels.get("quarantine") == "true" for a in self.chain(o))

    def attrs(self, obj: Obj | None, gpus: list[Obj]) -> dict[str, AttrValue]:
        """Attributes of a hardware entity: its own labels (inherited) or, for a domain, its GPUs' agreed ones."""
        models = sorted({g.model or "" for g in gpus})
        specs = [self.inv.models.get(g.model) if g.model else None for g in gpus]
        out: dict[str, AttrValue] = {
            "model": "" if not gpus else models[0] if len(models) == 1 else "mixed",
            "fp64": bool(gpus) and all(m is not None and "fp64" in m.features for m in specs),
            "fp64_tflops": min((m.specs.get("fp64_gflops", 0) // 1000 if m else 0) for m in specs) if specs else 0,
            "consumer": bool(gpus) and all(m is not None and "ecc" not in m.features for m in specs),
            "gpus": len(gpus),
        }
        if obj is not None:
            for key in ("tenant", "zone", "owner"):
                out[key] = self.label(obj, key)
            out["quarantined"] = self.quarantined(obj)
            out["state"] = obj.state or "ok"
        else:  # an NVLink domain: what all its GPUs agree on
            for key in ("tenant", "zone", "owner"):
                values = {self.label(g, key) for g in gpus}
                out[key] = values.pop() if len(values) == 1 else ""
            out["quarantined"] = any(self.quarantined(g) for g in gpus)
            out["state"] = "ok"
        return out
