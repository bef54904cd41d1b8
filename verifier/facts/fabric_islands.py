"""Fabric islands: which network switches reach each other over working fabric links.

A leaf/spine fabric is one island when every leaf reaches every other through the spines; two
leaves with no common spine (nor any other path of switches) are islands that cannot reach each
other, and a job with ranks below both cannot run. Closing switch-to-switch reachability in the
rules would be a row per pair of switches; the components are found here instead, once, and fed to
the rules as `fabric_island(switch, island)`, a row per switch (LINK011 reads it), and as
`node_fabric_island(node, island)`, the islands each node's cables reach (placement reads it).

Only links between two switches join islands: a host does not route between its NICs, so a node
cabled to two islands does not make them one.

A link is working when it is not down and neither end is a device marked down (`working`): a failed
NIC or switch carries nothing, its cables left as they are, as `place --fail ID` has it
(verifier/sources/scenario.py writes the device's links down too).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain, compress, repeat
from operator import attrgetter, is_
from typing import TypeVar

from verifier.core.stamped_rows import names_at
from verifier.facts.inventory import Row, link_kind
from verifier.facts.whole_nodes import objects_without, plan_groups, whole_nodes
from verifier.sources.inventory.model import (
    CABLES_UNMADE,
    FABRIC_LINK_KINDS,
    CableColumns,
    Inventory,
    Link,
    Obj,
    ObjectRow,
)


def fabric_islands(
    objects: Mapping[str, Obj], links: Iterable[Link], island: Mapping[str, str] | None = None
) -> list[Row]:
    """(switch, island) for every object of kind switch, sorted; the island is named by the
    smallest switch id in it (a switch with no working link to another switch is its own).
    `island`: switch_islands of the same objects and links, when worked out already.
    """
    if island is None:
        island = switch_islands(objects, links)
    return [(s, island[s]) for s in sorted(island)]


def node_fabric_islands(
    inv: Inventory,
    links: Iterable[Link],
    node_of: Callable[[str], str | None],
    uplinks: dict[str, int] | None = None,
    down: AbstractSet[str] | None = None,
    cables: Mapping[str, CableColumns] | None = None,
) -> tuple[list[Row], dict[str, str]]:
    """(node, island) for each island a node reaches over a working fabric link from one of its
    devices to a switch, and (node, "") for a node with a NIC that reaches none: what placement
    needs to keep a job's ranks on one island (rules/placement/lib/candidates.dl), a row per node
    in a whole fabric, whatever its rails. A cable between two nodes joins no island. Returned
    with every switch's island (switch_islands' answer, found on the same pass).

    An object a node's plan made (`origin`, a node of Inventory.stamped) is in that node, with no
    walk up its parents: at 131,072 GPUs that walk, per NIC and cable end, was most of the time.

    Given `uplinks`, each end's MB/s of working fabric cables are added up into it on the same pass
    (what verifier/facts/graph.py's per-node pass reads of a NIC; an Ethernet link that link_kind
    makes an accelerator's RoCE port counts for neither), but a switch's: only a node's NICs are
    ever read from it. A fleet's cables are gone through once for all three.

    `down`: the devices marked down (down_devices), when found already.

    `cables`: the runs of cables not made yet (Inventory.unmade_cables) whose placeholders (loc
    CABLES_UNMADE) `links` holds, none of them Ethernet: each read from its columns in its place.
    """
    stamped = inv.stamped
    count = uplinks is not None
    ups: dict[str, int] = uplinks if uplinks is not None else {}
    ups_get = ups.get
    switches = sorted(switches_of(inv))
    up: dict[str, str] = {}
    find = _finder(up)
    if down is None:
        down = down_devices(inv)
    # Per end, what the pass asks of it in one lookup: 1 a switch, 2 a device marked down (3 both).
    role = dict.fromkeys(switches, _SWITCH)
    for d in down:
        role[d] = role.get(d, 0) | _DOWN
    role_get = role.get
    down_bit = _DOWN
    plain = set(switches).difference(down)  # the ends of role 1: a switch not marked down
    # A device's working cable to a switch: the device end and the switch. Their nodes and islands are
    # looked up after the pass, in C (a fleet's 131,072 NIC cables land on a few thousand leaves).
    ends: list[str] = []
    sides: list[str] = []
    end_add, side_add = ends.append, sides.append
    between: tuple[list[str], list[str]] = ([], [])  # the ends of the cables between two switches
    joins_a, joins_b = between[0].append, between[1].append
    # One pass over the links (a fleet's few hundred thousand cables, each read where it lies once):
    # a fabric cable that is working (`carries`), the switch end looked at first (a NIC's cable to a
    # leaf is written NIC first, mostly).
    fabric = FABRIC_LINK_KINDS
    run_loc = CABLES_UNMADE
    for lk in links:
        if lk.loc is run_loc and cables is not None:
            _run_ends(cables[lk.id], role, plain, ends, sides, between, ups if count else None)
            continue
        kind = lk.kind
        if kind not in fabric or lk.state == "down":
            continue
        a, b = lk.a, lk.b
        ra, rb = role_get(a, 0), role_get(b, 0)
        if (ra | rb) & down_bit:
            continue
        if rb:
            if ra:  # between two switches: joined after the pass
                # Ethernet kept as such here: between two switches it is never an accelerator's RoCE port.
                joins_a(a)
                joins_b(b)
                continue
            end = a
            side_add(b)
        elif ra:
            end = b
            side_add(a)
        else:  # between two devices: no island
            if count and (kind != "ethernet" or link_kind(lk, inv.found) in fabric):
                mbps = lk.mbps
                ups[a] = ups_get(a, 0) + mbps
                ups[b] = ups_get(b, 0) + mbps
            continue
        end_add(end)
        if count and (kind != "ethernet" or link_kind(lk, inv.found) in fabric):
            ups[end] = ups_get(end, 0) + lk.mbps
    _join_all(up, find, zip(*between, strict=True))
    island = {s: find(s) for s in switches}
    cabled: set[str] = set()
    # One island (a fleet's, mostly): its nodes told per plan (_one_island); else each end's node and island.
    by_island: Mapping[str, Collection[str | None]] | None = _one_island(inv, ends, sides, island, node_of, cabled)
    if by_island is None:
        # The node of each end: a NIC of a node stamped whole, from its plan and the loader's names (a C
        # call per node); any other end in the objects. Those devices are `cabled`: their cable puts
        # their node on an island, which is all the check for nodes off the fabric below reads of them.
        nodes: list[str | None] = list(map(_whole_nodes_nics(inv).get, ends))
        if None in nodes:
            found = inv.found
            # The few such ends found in C (those of nodes not stamped whole: overridden, hand-written).
            for k in list(compress(range(len(nodes)), map(is_, nodes, repeat(None)))):
                end = ends[k]
                cabled.add(end)
                o = found.get(end)
                nodes[k] = o.origin if o is not None and o.origin in stamped else node_of(end)
        # Per island the nodes cabled to it: a fleet's 131,072 NIC cables land on a few islands (one,
        # mostly), each picked out in C; only a fabric of many islands is gone through cable by cable.
        islands = list(map(island.__getitem__, sides))
        by_island = {i: set(reached) for i, reached in grouped(islands, nodes).items()}
    on_fabric: set[str | None] = set().union(*by_island.values())  # None: an end in no node (no row below)
    # Only a NIC with no working cable to a switch can leave its node off the fabric, and only a
    # node that reaches no island gets the row. The objects outside the nodes stamped whole are gone
    # through (a few thousand in a fleet); of those nodes, only the NICs of one that reaches no island
    # are looked at, in its plan (none of its objects is read, or made: Inventory.defer_objects).
    whole = whole_nodes(inv)
    off = set()
    for o in objects_without(inv, whole):
        if o.kind == "nic" and o.id not in cabled:
            origin = o.origin
            n = origin if origin is not None and origin in stamped else node_of(o.id)
            if n is not None and n not in on_fabric:
                off.add(n)
    unmade = inv.unmade_links()
    has_nic: dict[int, bool] = {}  # per plan (by id): whether it makes a NIC
    for n in whole - on_fabric:  # none of its NICs is cabled to a switch: it is off if it has one
        plan = unmade[n][0]
        has = has_nic.get(id(plan))
        if has is None:
            has = has_nic[id(plan)] = any(row[2] == "nic" for row in plan.object_rows)
        if has:
            off.add(n)
    if len(by_island) == 1:
        # One island (a fleet's, mostly): a node is on it or off the fabric, never both, so the rows
        # sort by node alone, in the order _one_island met the nodes (its plans', mostly in order
        # already: a sort of a few runs, not of 16,384 nodes in a set's order).
        [(i, reached)] = by_island.items()
        tag = {n: i for n in reached if n is not None}
        tag.update(dict.fromkeys(off, ""))
        return sorted(tag.items()), island
    rows: list[Row] = [(n, i) for i, reached in by_island.items() for n in reached if n is not None]
    rows += [(n, "") for n in off]
    return sorted(rows), island


def _run_ends(
    run: CableColumns,
    role: Mapping[str, int],
    plain: set[str],
    ends: list[str],
    sides: list[str],
    between: tuple[list[str], list[str]],
    ups: dict[str, int] | None,
) -> None:
    """node_fabric_islands' pass over the cables of a run not made yet (never Ethernet: link_kind
    keeps their kind), in their order, from its columns. A run of NIC-to-leaf cables (every b in
    `plain`, the switches not marked down, and no a with a `role`) or of leaf-to-spine cables (both
    ends in `plain`) is taken whole, told by set operations in C; any other, cable by cable, as the
    pass takes a Link, each end's role looked up in C.
    """
    _ids, ends_a, ends_b, kind, mbps, _loc, _attrs, _labels, state = run
    if kind not in FABRIC_LINK_KINDS or state == "down":
        return
    if plain.issuperset(ends_b) and role.keys().isdisjoint(ends_a):
        ends += ends_a
        sides += ends_b
        if ups is not None:
            _add_up(ups, ends_a, mbps)
        return
    if plain.issuperset(ends_a) and plain.issuperset(ends_b):
        between[0].extend(ends_a)
        between[1].extend(ends_b)
        return
    role_get = role.get
    ra = list(map(role_get, ends_a, repeat(0)))
    rb = list(map(role_get, ends_b, repeat(0)))
    for a, b, rola, rolb in zip(ends_a, ends_b, ra, rb, strict=True):
        if (rola | rolb) & _DOWN:
            continue
        if rolb:
            if rola:
                between[0].append(a)
                between[1].append(b)
                continue
            end = a
            sides.append(b)
        elif rola:
            end = b
            sides.append(a)
        else:  # between two devices: no island
            if ups is not None:
                ups[a] = ups.get(a, 0) + mbps
                ups[b] = ups.get(b, 0) + mbps
            continue
        ends.append(end)
        if ups is not None:
            ups[end] = ups.get(end, 0) + mbps


def _add_up(ups: dict[str, int], ends: list[str], mbps: int) -> None:
    """`mbps` added into `ups` for each of `ends` (once per time it is there). Ends none of which
    has a count yet (a run of NIC cables: 256 NICs, each its one cable) are put in by one C call; a
    NIC met twice is then counted by hand, a cable each. Any other case, end by end.
    """
    before = len(ups)
    if ups.keys().isdisjoint(ends):
        ups.update(zip(ends, repeat(mbps)))
        if len(ups) - before != len(ends):  # an end twice in the run: each of its cables counts
            for end, times in Counter(ends).items():
                if times > 1:
                    ups[end] = times * mbps
        return
    ups_get = ups.get
    for end in ends:
        ups[end] = ups_get(end, 0) + mbps


def _one_island(
    inv: Inventory,
    ends: list[str],
    sides: list[str],
    island: Mapping[str, str],
    node_of: Callable[[str], str | None],
    cabled: set[str],
) -> dict[str, list[str | None]] | None:
    """node_fabric_islands' nodes per island when every cable's switch end (`sides`) is on one
    island: that island and the nodes with an end (`ends`) in them. A NIC of a node stamped whole
    (whole_nodes) is told per plan in C, a lookup per NIC in the set of ends, with no map of every
    NIC to its node made and looked up again (at 131,072 GPUs 131,072 of each); the few other ends
    (of nodes not stamped whole: overridden, hand-written) are found as the caller finds them, and
    put in `cabled`. None when there is no cable or more than one island, for the caller's way.
    The nodes come each once, in the order met: the plans' groups' nodes, then the others'.
    """
    if not ends:
        return None
    reached = {island[s] for s in set(sides)}
    if len(reached) != 1:
        return None
    left = set(ends)  # the ends not told yet
    cabled_ends: set[str] | None = None  # every end, made only for a plan with a NIC not cabled
    on: list[str | None] = []
    for plan, nodes, names in plan_groups(inv):
        nics = [row[0] for row in plan.object_rows if row[2] == "nic"]
        if not nics:
            continue
        every = list(chain.from_iterable(map(names_at(nics), names)))
        before = len(left)
        left.difference_update(every)
        if before - len(left) == len(every):
            # Every NIC of these nodes was an end (a healthy fleet; no name is twice in `every`): each
            # node is on, told in two C calls.
            on += nodes
            continue
        # Some NIC is not cabled: which are, asked of every end (a plan's NICs are no other plan's,
        # so what earlier plans took out of `left` does not change the answer).
        if cabled_ends is None:
            cabled_ends = set(ends)
        hits = list(map(cabled_ends.__contains__, every))
        # A node's NICs are `len(nics)` hits in a row: zip of one iterator that many times over.
        on += compress(nodes, map(any, zip(*[iter(hits)] * len(nics), strict=True)))
    found, stamped = inv.found, inv.stamped
    for end in left:
        cabled.add(end)
        o = found.get(end)
        on.append(o.origin if o is not None and o.origin in stamped else node_of(end))
    return {reached.pop(): list(dict.fromkeys(on))}


def _whole_nodes_nics(inv: Inventory) -> dict[str, str]:
    """Each NIC a plan made for a node stamped whole (whole_nodes) -> that node (its `origin`): per
    plan, its nodes' NIC names picked and each node repeated as often, in C.
    """
    out: dict[str, str] = {}
    for plan, nodes, names in plan_groups(inv):
        pick = names_at([row[0] for row in plan.object_rows if row[2] == "nic"])
        k = len(pick(names[0]))
        owners = chain.from_iterable(map(repeat, nodes, repeat(k)))
        out.update(zip(chain.from_iterable(map(pick, names)), owners, strict=True))
    return out


def switches_of(inv: Inventory) -> list[str]:
    """The ids of every object of kind switch (_ids_where says how plans are read)."""
    return _ids_where(inv, lambda o: o.kind == "switch", lambda row: row[2] == "switch")


def _ids_where(inv: Inventory, holds: Callable[[Obj], bool], row_holds: Callable[[ObjectRow], bool]) -> list[str]:
    """The ids of the objects `holds` accepts. The plan objects of the nodes stamped whole
    (whole_nodes) are judged by `row_holds` on their plan rows, once per plan, not once per node: a
    fleet's 16,384 nodes from one plan leave the few thousand objects outside them to look at, and
    a plan that makes none that holds (no switch, no device down) is not gone through at all.
    """
    found = [o.id for o in objects_without(inv, whole_nodes(inv)) if holds(o)]
    for plan, _nodes, names in plan_groups(inv):
        at = [row[0] for row in plan.object_rows if row_holds(row)]
        if at:
            found += chain.from_iterable(map(names_at(at), names))
    return found


def switch_islands(
    objects: Mapping[str, Obj],
    links: Iterable[Link],
    found: Iterable[str] | None = None,
    down: AbstractSet[str] | None = None,
    cables: Mapping[str, CableColumns] | None = None,
) -> dict[str, str]:
    """Every switch's island: the smallest switch id it reaches over working switch-to-switch links.
    `found`: the ids of the objects of kind switch (switches_of), when known; `down`: the devices
    marked down (down_devices), when known; `cables`: the runs of cables not made yet whose
    placeholders (loc CABLES_UNMADE) `links` holds (as node_fabric_islands takes them), each read
    from its columns: made as Link objects only to be passed over here, a fleet's 196,352 NIC and
    leaf-spine cables cost 0.1-0.2 s of CPU and their memory.
    """
    if found is None:
        found = [oid for oid, o in objects.items() if o.kind == "switch"]
    if down is None:
        down = frozenset(oid for oid, o in objects.items() if o.state == "down")
    switches = sorted(found)
    up: dict[str, str] = {}
    find = _finder(up)
    is_switch = set(switches).__contains__
    fabric = FABRIC_LINK_KINDS
    every = links if isinstance(links, list | tuple) else list(links)
    runs: list[CableColumns] = []
    if cables:
        runs = [cables[lk.id] for lk in every if lk.loc is CABLES_UNMADE]
        every = [lk for lk in every if lk.loc is not CABLES_UNMADE]
    # Only a cable between two switches joins islands: the links whose end `a` is a switch are picked
    # in C (a fleet's NIC cables, NIC first, and its million in-node links never reach the loop), with
    # no copy of the links made first; the rest of what `working` and a switch-to-switch fabric cable
    # ask is checked on the few thousand left. The islands do not depend on the links' order.
    # Ethernet kept as such here: between two switches it is never an accelerator's RoCE port.
    _join_all(
        up,
        find,
        (
            (lk.a, lk.b)
            for lk in compress(every, map(is_switch, map(_END_A, every)))
            if is_switch(lk.b)
            and lk.kind in fabric
            and lk.state != "down"
            and not (down and (lk.a in down or lk.b in down))
        ),
    )
    # A run's cables share their kind and state: the same test, its ends picked from its columns.
    for _ids, ends_a, ends_b, kind, _mbps, _loc, _attrs, _labels, state in runs:
        if kind in fabric and state != "down":
            _join_all(
                up,
                find,
                (
                    (a, b)
                    for a, b in compress(zip(ends_a, ends_b, strict=True), map(is_switch, ends_a))
                    if is_switch(b) and not (down and (a in down or b in down))
                ),
            )
    return {s: find(s) for s in switches}


_END_A = attrgetter("a")
_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")
_FEW_KEYS = 8
"""Up to this many distinct keys, grouped() picks out each key's values in a pass of its own."""
_SWITCH, _DOWN = 1, 2
"""node_fabric_islands' roles of a cable's end, as bits."""


def grouped(keys: Sequence[_K], values: Sequence[_V]) -> dict[_K, list[_V]]:
    """`values` by their `keys` (one each), keys in the order first met, each group in the values'
    order. A fleet's values mostly share a key or a handful (its NIC cables one island, its nodes a
    few uplinks): each group is then picked out in C, a pass per key; only many keys cost a Python
    step per value.
    """
    distinct = list(dict.fromkeys(keys))
    if len(distinct) == 1:
        return {distinct[0]: list(values)}
    if len(distinct) <= _FEW_KEYS:
        return {k: list(compress(values, map(k.__eq__, keys))) for k in distinct}
    out: dict[_K, list[_V]] = {}
    for k, v in zip(keys, values, strict=True):
        group = out.get(k)
        if group is None:
            group = out[k] = []
        group.append(v)
    return out


def down_devices(inv: Inventory) -> frozenset[str]:
    """The ids of every object whose state is down (_ids_where says how plans are read): a node
    with a device marked down by an override is no longer stamped whole, and is read as it is.
    """
    return frozenset(_ids_where(inv, lambda o: o.state == "down", lambda row: row[7] == "down"))


def carries(lk: Link, down: AbstractSet[str]) -> bool:
    """Whether `lk` is working: not down itself, and neither end a device marked down (`down`). A
    device marked down carries nothing, whatever its cables say: `place --fail ID` writes the
    device's links down as well (verifier/sources/scenario.py), and the inventory means the same.
    """
    return lk.state != "down" and lk.a not in down and lk.b not in down


def working(links: Iterable[Link], down: AbstractSet[str]) -> list[Link]:
    """The links of `links` that are working (`carries`), in order, in one comprehension."""
    if not down:  # the usual case: no device is down, the links' own states decide
        return [lk for lk in links if lk.state != "down"]
    return [lk for lk in links if carries(lk, down)]


def _finder(up: dict[str, str]) -> Callable[[str], str]:
    """Union-find's find over `up` (a switch -> the one it was joined under; a root is absent)."""

    def find(x: str) -> str:
        root = x
        while (nxt := up.get(root, root)) != root:
            root = nxt
        while x != root:  # path compression: every switch on the way points at the root
            up[x], x = root, up[x]
        return root

    return find


def _join_all(up: dict[str, str], find: Callable[[str], str], pairs: Iterable[tuple[str, str]]) -> None:
    """Union-find's union over `up` of each two switches of `pairs`: joins their islands, the smaller
    root naming both. Written out in the loop, with no call per pair: a fleet's 65,536 leaf-spine
    cables mostly cost two lookups each (a switch joined already points at its root).
    """
    up_get = up.get
    for a, b in pairs:
        ra, rb = up_get(a, a), up_get(b, b)
        if ra == rb:  # one island already (both under one switch): a leaf-spine cable, mostly
            continue
        if ra != a and up_get(ra, ra) != ra:
            ra = find(a)
        if rb != b and up_get(rb, rb) != rb:
            rb = find(b)
        if ra != rb:
            if ra < rb:
                up[rb] = ra
            else:
                up[ra] = rb
