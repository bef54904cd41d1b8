"""The inventory as authorization reads it (GPUs, nodes, racks, pods), kept in the cache between runs.

`authorize` and `audit` build Cedar entities from the hardware objects alone: their kind,
model, state, location, the nearest hardware object above them and the labels they inherit.
At 131,072 GPUs, reading those back from the cache takes a tenth of the time that expanding
the inventory's templates again does, so a repeated question about an unchanged inventory
skips YAML, templates and validation altogether.

The view is itself an `Inventory` that holds only those objects, each hung from its nearest
hardware ancestor, and that says on each object exactly what `EntityGraph` would have worked
out for it from the whole inventory: a label is written where the inherited values change
(tenant, zone, owner, quarantine), with all four, so the entities, their ancestors and their
attributes are the same (tests/authorization/test_hardware_view.py holds both graphs equal).
Scale-up links are not in it: NVLink domains are worked out from the whole inventory, loaded
when a request first needs one.

An entry is named by every inventory file's name and bytes, the input limits and the code
that loads and reduces an inventory (verifier.core.cache); it is written only after the
whole inventory loaded and passed validation, so a hit is an inventory that would pass again.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from typing import cast

from verifier.authorization.entities import HARDWARE_TYPES, LABEL_ATTRS
from verifier.core.cache import code_digest, enabled, entry_key, read_pickled, write_pickled
from verifier.core.errors import SourceLocation
from verifier.sources.inventory.model import EMPTY_STR, CatalogModel, Inventory, Obj

KIND = "hardware"
KEEP = 8
"""Entries kept: a 131,072-GPU fleet's is about 7 MB."""
_FORMAT = 1
_LABELS = tuple(LABEL_ATTRS)  # tenant, zone, owner, quarantine
_UNLABELLED = ("", "", "", False)  # what an object with no labelled ancestor inherits (entities._ROOT)

Inherited = tuple[str, str, str, bool]
ModelRow = tuple[str, str, str, dict[str, int], frozenset[str], str, SourceLocation, tuple[tuple[str, int], ...]]
Packed = tuple[
    int,  # _FORMAT
    tuple[str, ...],  # files
    list[str],  # ids
    list[str],  # kinds
    list[int],  # position of the nearest hardware ancestor, -1 for none
    list[SourceLocation],
    list[str | None],  # models
    list[str | None],  # states
    tuple[list[int], list[Inherited]],  # the labels written on each object (-1: none), and each such set
    list[ModelRow],  # the catalogue models the objects name
]


def view_key(parts: Sequence[str | bytes] | None) -> str | None:
    """The entry name for an inventory read as `parts` (raw_files.read_digest_parts); None: no cache."""
    if parts is None or not enabled():
        return None
    return entry_key(_code(), ["hardware view", *parts])


def _code() -> bytes:
    """The digest of everything that turns inventory bytes into a view: the loader's package, the
    core it builds on, and this code.
    """
    return (
        _package_digest("verifier.sources.inventory")
        + _package_digest("verifier.core")
        + code_digest("verifier.authorization", ("hardware.py", "entities.py"))
    )


def _package_digest(package: str) -> bytes:
    names = resources.files(package).iterdir()
    return code_digest(package, tuple(sorted(p.name for p in names if p.name.endswith((".py", ".yaml", ".json")))))


def cached_view(key: str) -> Inventory | None:
    """The view stored under `key`, or None."""
    stored = read_pickled(KIND, key)
    if not isinstance(stored, tuple) or len(stored) != 10 or stored[0] != _FORMAT:
        return None
    try:
        return _unpack(cast(Packed, stored))
    except (TypeError, ValueError, IndexError):  # not what this code writes: a miss, never a crash
        return None


def remember_view(key: str, inv: Inventory) -> None:
    """Store the view of `inv` (a whole inventory that loaded and passed validation)."""
    write_pickled(KIND, key, _pack(inv), KEEP)


def hardware_view(inv: Inventory) -> Inventory:
    """The view of `inv`, as a cache hit reads it back."""
    return _unpack(_pack(inv))


class _Walk:
    """Per object: the labels it inherits (as EntityGraph._up_of reads them) and the nearest
    hardware object at or above it, memoised, walked upwards without recursion.
    """

    def __init__(self, inv: Inventory) -> None:
        self.objects = inv.objects
        self.seen: dict[str, tuple[Inherited, str | None]] = {}

    def at(self, oid: str) -> tuple[Inherited, str | None]:
        seen = self.seen
        known = seen.get(oid)
        if known is not None:
            return known
        path: list[Obj] = []
        base: tuple[Inherited, str | None] = (_UNLABELLED, None)
        cur: str | None = oid
        while cur is not None:
            known = seen.get(cur)
            if known is not None:
                base = known
                break
            o = self.objects.get(cur)
            if o is None:  # a dangling parent ends the chain, as in EntityGraph._up_of
                break
            path.append(o)
            cur = o.parent
        for o in reversed(path):
            inherited, hardware = base
            labels = o.labels
            if labels:
                t, z, owner, quarantined = inherited
                inherited = (
                    labels.get("tenant", t),
                    labels.get("zone", z),
                    labels.get("owner", owner),
                    quarantined or labels.get("quarantine") == "true",
                )
            base = (inherited, o.id if o.kind in HARDWARE_TYPES else hardware)
            seen[o.id] = base
        return seen.get(oid, base)


def _pack(inv: Inventory) -> Packed:
    """Columns, so that a fleet's 150,000 objects are read back without a pickled object each."""
    ids: list[str] = []
    kinds: list[str] = []
    parents: list[int] = []
    locs: list[SourceLocation] = []
    models: list[str | None] = []
    states: list[str | None] = []
    labels: list[int] = []
    label_sets: dict[Inherited, int] = {}
    kept = [o for o in inv.objects.values() if o.kind in HARDWARE_TYPES]
    position = {o.id: n for n, o in enumerate(kept)}
    walk = _Walk(inv)
    at, seen = walk.at, walk.seen
    for o in kept:
        parent = o.parent
        # What the parent inherits is the GPU's too unless it has labels of its own; the view
        # writes labels where that differs from what its nearest hardware ancestor inherits.
        from_parent, above = (seen.get(parent) or at(parent)) if parent is not None else (_UNLABELLED, None)
        mine = at(o.id)[0] if o.labels else from_parent
        below = (seen.get(above) or at(above))[0] if above is not None else _UNLABELLED
        ids.append(o.id)
        kinds.append(o.kind)
        parents.append(position[above] if above is not None else -1)
        locs.append(o.loc)
        models.append(o.model)
        states.append(o.state)
        labels.append(-1 if mine == below else label_sets.setdefault(mine, len(label_sets)))
    used = {m for m in models if m is not None}
    catalogue: list[ModelRow] = [
        (m.name, m.vendor, m.kind, dict(m.specs), m.features, m.source, m.loc, m.mig)
        for name, m in inv.models.items()
        if name in used
    ]
    return (_FORMAT, inv.files, ids, kinds, parents, locs, models, states, (labels, list(label_sets)), catalogue)


def _unpack(stored: Packed) -> Inventory:
    _, files, ids, kinds, parents, locs, models, states, (labels, label_sets), catalogue = stored
    written = [
        {_LABELS[0]: t, _LABELS[1]: z, _LABELS[2]: ow, _LABELS[3]: "true" if q else "false"}
        for t, z, ow, q in label_sets
    ]
    view = Inventory(files=files)
    objects = view.objects
    rows = zip(ids, kinds, parents, locs, models, states, labels, strict=True)
    for oid, kind, parent, loc, model, state, label in rows:
        objects[oid] = Obj(
            oid,
            kind,
            ids[parent] if parent >= 0 else None,
            loc,
            model,
            written[label] if label >= 0 else EMPTY_STR,
            state=state,
        )
    for name, vendor, kind, specs, features, source, loc, mig in catalogue:
        view.models[name] = CatalogModel(name, vendor, kind, specs, features, source, loc, mig)
    return view
