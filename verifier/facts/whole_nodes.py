"""The objects outside the nodes stamped whole from their plan, found in one pass per inventory.

The inventory's facts, its graph summaries and its authorization classes each read the objects
that are not some node's plan objects, unchanged (a fleet's 16,384 nodes hold 450,000 such
objects; a few thousand are left: racks, pods, switches, the nodes themselves). Each of them
used to pass over every object for it: here the pass is made once per inventory
(`Inventory.objects_but` of the whole nodes) and kept while the inventory lives. A reader that
keeps a few whole nodes after all (a template's representative, read object by object) gets
their objects put back in place: right after their node, in their plan's order, where the
loader stamped them.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import islice

from verifier.core.frozen import Frozen
from verifier.sources.inventory.model import Inventory, LinkPlan, Obj, Unmade

PlanGroup = tuple[LinkPlan, list[str], list[Sequence[str]]]
"""A plan, the whole nodes stamped from it (in stamping order), and each one's names by slot."""


@dataclass(frozen=True, repr=False, eq=False)
class _Outside(Frozen):
    unmade: Mapping[str, Unmade]
    stamped: Mapping[str, str]
    """The inventory's unmade_links() and stamped when the pass was made (held: their ids stay theirs)."""
    sizes: tuple[int, int, int]
    """How many entries they and the inventory's objects held then."""
    whole: frozenset[str]
    """The nodes stamped whole whose links are not made yet (Inventory.stamped and unmade_links)."""
    objects: list[Obj] | None
    """`Inventory.objects_but(whole)`; None when a whole node's plan objects are not the run right
    after it (then each reader passes on its own)."""
    at: dict[str, int]
    """Each whole node's position in `objects` (its own object is kept)."""
    groups: list[PlanGroup] = field(default_factory=list)
    """plan_groups' answer, made the first time it is asked for (empty until then)."""


_KEPT: dict[int, _Outside] = {}
"""Per live inventory (by id; dropped when it is collected)."""


def whole_nodes(inv: Inventory) -> frozenset[str]:
    """The nodes stamped whole whose links are not made yet: their plan's objects, unchanged, follow them."""
    return _outside(inv).whole


def plan_groups(inv: Inventory) -> list[PlanGroup]:
    """The whole nodes (`whole_nodes`) by the plan they were stamped from, plans in the order first
    met: a reader that asks the same of every node of a plan asks it once per group and reads the
    nodes' names in C (a fleet's 16,384 nodes are one group), with no pass of its own over the nodes.
    """
    outside = _outside(inv)
    if not outside.groups and outside.whole:
        by_plan: dict[int, PlanGroup] = {}
        whole = outside.whole
        for n, (plan, names) in outside.unmade.items():
            if n in whole:
                group = by_plan.get(id(plan))
                if group is None:
                    group = by_plan[id(plan)] = (plan, [], [])
                group[1].append(n)
                group[2].append(names)
        outside.groups.extend(by_plan.values())
    return outside.groups


def objects_without(inv: Inventory, skip: AbstractSet[str]) -> list[Obj]:
    """`inv.objects_but(skip)`: the objects in order, without those stamped for the nodes of `skip`.

    When every node of `skip` is whole (`whole_nodes`), from the one pass kept for the inventory,
    with the plan objects of the whole nodes not in `skip` put back after their node; otherwise
    (or when a plan's objects are not where the loader put them) a pass of its own.
    """
    if not skip:
        return list(inv.objects.values())
    outside = _outside(inv)
    if outside.objects is None or not skip <= outside.whole:
        return inv.objects_but(skip)
    back = sorted((outside.at[n], n) for n in outside.whole if n not in skip)
    if not back:
        return list(outside.objects)
    if 4 * len(back) > len(outside.whole):  # most of them put back: a pass of its own is quicker
        return inv.objects_but(skip)
    unmade, objects = inv.unmade_links(), inv.found
    out: list[Obj] = []
    start = 0
    for position, node in back:
        plan, names = unmade[node]
        run = [objects.get(names[row[0]]) for row in plan.object_rows]
        if any(o is None or o.origin != node for o in run):
            return inv.objects_but(skip)
        out += outside.objects[start : position + 1]
        out += run  # type: ignore[arg-type]  # none is None (checked above)
        start = position + 1
    out += outside.objects[start:]
    return out


def _outside(inv: Inventory) -> _Outside:
    """The pass kept for `inv`, made again if its links were made or its objects or stamped nodes
    changed since (the loader makes them once: in practice, made once per inventory).
    """
    unmade, stamped = inv.unmade_links(), inv.stamped
    sizes = (len(unmade), len(stamped), inv.objects_so_far())
    kept = _KEPT.get(id(inv))
    # No links left unmade: unmade_links() gives a new empty mapping each time.
    if kept is not None and (kept.unmade is unmade or not unmade) and kept.stamped is stamped and kept.sizes == sizes:
        return kept
    whole = frozenset([n for n in unmade if n in stamped])
    # No whole node: nothing to pass over, and each reader's own pass is the pass.
    kept = _Outside(unmade, stamped, sizes, whole, *(_pass(inv, whole) if whole else (None, {})))
    if id(inv) not in _KEPT:
        weakref.finalize(inv, _KEPT.pop, id(inv), None)
    _KEPT[id(inv)] = kept
    return kept


def _pass(inv: Inventory, whole: frozenset[str]) -> tuple[list[Obj] | None, dict[str, int]]:
    """`inv.objects_but(whole)` and each whole node's position in it, passing over each whole
    node's run of plan objects in C; (None, {}) when a run is not where the loader puts it.
    """
    unmade = inv.unmade_links()
    # The whole nodes whose objects are not made yet (Inventory.defer_objects) have no run to pass over.
    unmade_objects = inv.unmade_objects()
    made = unmade_objects.keys() <= whole
    objects: list[Obj] = []
    at: dict[str, int] = {}
    add = objects.append
    it = iter(inv.objects_but(unmade_objects.keys()) if unmade_objects and made else inv.objects.values())
    for o in it:
        origin = o.origin
        if origin is not None and origin in whole:
            return None, {}  # a plan object not in its node's run
        add(o)
        if o.kind != "node" or o.id not in whole:
            continue
        at[o.id] = len(objects) - 1
        if made and o.id in unmade_objects:
            continue
        plan, names = unmade[o.id]
        rows = plan.object_rows
        if not rows:
            continue
        # The loader stamps a node's plan objects in one update, right after the node (templates.py _stamp).
        last = next(islice(it, len(rows) - 1, None), None)
        if last is None or last.origin != o.id or last.id != names[rows[-1][0]]:
            return None, {}
    return objects, at


def plan_names(
    inv: Inventory, nodes: Sequence[str], suffixes: Sequence[str], outside: Sequence[str] = ()
) -> tuple[list[int], list[Sequence[str]]] | None:
    """Where the names `suffixes` ("/gpu0": a node's id and it) and then `outside` (names outside the
    node) stand in the names of `nodes`, stamped from one plan whose links are not made yet
    (Inventory.unmade_links), and those names, one list per node: the loader's own lists, nothing
    picked or joined per node. None when some node is not so, or a name is not there.
    """
    unmade = inv.unmade_links()
    found = [unmade.get(n) for n in nodes]
    first = found[0] if found else None
    if first is None or any(f is None or f[0] is not first[0] for f in found):
        return None
    plan, names = first
    inside = {name: k + 1 for k, name in enumerate(plan.names)}
    # After the node's own names, the plan's names outside the node: the same on every node.
    beyond: dict[str, int] = {}
    for k in range(len(plan.names) + 1, len(names)):
        beyond.setdefault(names[k], k)
    slots = [inside.get(name) for name in suffixes] + [beyond.get(name) for name in outside]
    if None in slots:
        return None
    return [s for s in slots if s is not None], [f[1] for f in found if f is not None]
