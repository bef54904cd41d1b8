"""The inventory as authorization reads it (GPUs, nodes, racks, pods), kept in the cache between runs.

`authorize` and `audit` build Cedar entities from the hardware objects alone: their kind,
model, state, location, the nearest hardware object above them and the labels they inherit.
At 131,072 GPUs, reading those back from the cache takes a tenth of the time that expanding
the inventory's templates again does, so a repeated question about an unchanged inventory
skips YAML, templates and validation altogether.

The view is itself an `Inventory` that holds only those objects, each hung from its nearest
hardware ancestor. The labels of the objects it leaves out between them (a PCIe switch, a
socket, a fleet object) move down onto the hardware object below, so that reading labels down
the view's chain gives what reading them down the whole chain did: the entities, their ancestors
and their attributes are the same (tests/authorization/test_hardware_view.py holds both graphs
equal).
Scale-up links are not in it: NVLink domains are worked out from the whole inventory, loaded
when a request first needs one.

An entry is named by every inventory file's name and bytes, the input limits and the code
that loads and reduces an inventory (verifier.core.cache); it is written only after the
whole inventory loaded and passed validation, so a hit is an inventory that would pass again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from verifier.authorization.entities import HARDWARE_TYPES
from verifier.core.cache import code_digest, enabled, entry_key, package_digest, read_pickled, write_pickled
from verifier.core.errors import SourceLocation
from verifier.sources.inventory.model import EMPTY_STR, CatalogModel, Inventory, Obj

KIND = "hardware"
KEEP = 8
"""Entries kept: a 131,072-GPU fleet's is about 7 MB."""
_FORMAT = 1
Written = tuple[str | None, str | None, str | None, bool]
"""tenant, zone, owner (None: not written) and whether quarantine is written true."""
_NONE_WRITTEN: Written = (None, None, None, False)

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
    tuple[list[int], list[Written]],  # the labels written on each object (-1: none), and each such set
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
        package_digest("verifier.sources.inventory")
        + package_digest("verifier.core")
        + code_digest("verifier.authorization", ("hardware.py", "entities.py"))
    )


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


def _pack(inv: Inventory) -> Packed:
    """Columns, so that a fleet's 150,000 objects are read back without a pickled object each."""
    objects = inv.objects
    kept = [o for o in objects.values() if o.kind in HARDWARE_TYPES]
    position = {o.id: n for n, o in enumerate(kept)}
    parents: list[int] = []
    labels: list[int] = []
    label_sets: dict[Written, int] = {}
    for o in kept:
        # The objects the view leaves out between o and its nearest hardware ancestor: their
        # labels move down onto o, which then inherits through the view what it did before.
        skipped = [o]
        above = o.parent
        while above is not None and above not in position:
            left_out = objects.get(above)
            if left_out is None:  # a dangling parent ends the chain, as in EntityGraph._up_of
                above = None
                break
            skipped.append(left_out)
            above = left_out.parent
        parents.append(position[above] if above is not None else -1)
        written = _moved_down(skipped)
        labels.append(-1 if written == _NONE_WRITTEN else label_sets.setdefault(written, len(label_sets)))
    models = [o.model for o in kept]
    used = {m for m in models if m is not None}
    catalogue: list[ModelRow] = [
        (m.name, m.vendor, m.kind, dict(m.specs), m.features, m.source, m.loc, m.mig)
        for name, m in inv.models.items()
        if name in used
    ]
    return (
        _FORMAT,
        inv.files,
        [o.id for o in kept],
        [o.kind for o in kept],
        parents,
        [o.loc for o in kept],
        models,
        [o.state for o in kept],
        (labels, list(label_sets)),
        catalogue,
    )


def _moved_down(chain: list[Obj]) -> Written:
    """The labels of entities.LABEL_ATTRS that `chain` (an object, then its ancestors up to one that is
    kept) writes, as EntityGraph._up_of reads them down the chain: the lowest value of each
    label wins, and quarantine once true stays true. None: not written.
    """
    tenant = zone = owner = None
    quarantined = False
    for o in reversed(chain):
        found = o.labels
        if found:
            tenant = found.get("tenant", tenant)
            zone = found.get("zone", zone)
            owner = found.get("owner", owner)
            # Values are checked by check_label_types before a view is kept: only "true" counts.
            quarantined = quarantined or found.get("quarantine") == "true"
    return tenant, zone, owner, quarantined


def _unpack(stored: Packed) -> Inventory:
    _, files, ids, kinds, parents, locs, models, states, (labels, label_sets), catalogue = stored
    written = [
        {
            **{name: value for name, value in (("tenant", t), ("zone", z), ("owner", ow)) if value is not None},
            **({"quarantine": "true"} if q else {}),
        }
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
