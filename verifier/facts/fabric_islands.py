"""Fabric islands: which network switches reach each other over working fabric links.

A leaf/spine fabric is one island when every leaf reaches every other through the spines; two
leaves with no common spine (nor any other path of switches) are islands that cannot reach each
other, and a job with ranks below both cannot run. Closing switch-to-switch reachability in the
rules would be a row per pair of switches; the components are found here instead, once, and fed to
the rules as `fabric_island(switch, island)`, a row per switch (LINK011 reads it), and as
`node_fabric_island(node, island)`, the islands each node's cables reach (placement reads it).

Only links between two switches join islands: a host does not route between its NICs, so a node
cabled to two islands does not make them one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from verifier.facts.inventory import Row, link_kind
from verifier.sources.inventory.model import FABRIC_LINK_KINDS, Link, Obj


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
    objects: Mapping[str, Obj],
    links: Iterable[Link],
    node_of: Callable[[str], str | None],
    stamped: Mapping[str, str],
    uplinks: dict[str, int] | None = None,
    island: Mapping[str, str] | None = None,
) -> list[Row]:
    """(node, island) for each island a node reaches over a working fabric link from one of its
    devices to a switch, and (node, "") for a node with a NIC that reaches none: what placement
    needs to keep a job's ranks on one island (rules/placement/lib/candidates.dl), a row per node
    in a whole fabric, whatever its rails. A cable between two nodes joins no island.

    `stamped` (Inventory.stamped): an object a node's plan made is in that node (`origin`), with no
    walk up its parents: at 131,072 GPUs that walk, per NIC and cable end, was most of the time.

    Given `uplinks`, each end's MB/s of working fabric cables are added up into it on the same pass
    (what verifier/facts/graph.py's per-node pass reads of a NIC; an Ethernet link that link_kind
    makes an accelerator's RoCE port counts for neither): a fleet's cables are gone through once.
    `island`: switch_islands of the same objects and links, when worked out already (graph_facts
    asks for both relations: a fleet's objects and cables gone through once for them, not twice).
    """
    get = objects.get
    count = uplinks is not None
    ups: dict[str, int] = uplinks if uplinks is not None else {}
    up_get = ups.get

    fabric = [lk for lk in links if lk.kind in FABRIC_LINK_KINDS]
    island_of = (island if island is not None else switch_islands(objects, fabric)).get
    reached: set[tuple[str, str]] = set()
    cabled: set[str] = set()  # devices with a working cable to a switch
    # One look at each end per cable (a fleet's 131,072 NIC cables): a cable between two switches
    # or between two devices reaches no island from a node.
    for lk in fabric:
        if lk.state == "down":
            continue
        a, b = lk.a, lk.b
        if count and (lk.kind != "ethernet" or link_kind(lk, objects) in FABRIC_LINK_KINDS):
            mbps = lk.mbps
            ups[a] = up_get(a, 0) + mbps
            ups[b] = up_get(b, 0) + mbps
        ia, ib = island_of(a), island_of(b)
        if ia is None:
            if ib is None:
                continue
            end, to = a, ib
        elif ib is None:
            end, to = b, ia
        else:
            continue
        cabled.add(end)
        o = get(end)
        n = o.origin if o is not None and o.origin in stamped else node_of(end)
        if n is not None:
            reached.add((n, to))
    on_fabric = {n for n, _i in reached}
    # Only a NIC with no working cable to a switch can leave its node off the fabric: the others are not asked.
    loose = [(oid, o.origin) for oid, o in objects.items() if o.kind == "nic" and oid not in cabled]
    off = {n for oid, origin in loose if (n := origin if origin in stamped else node_of(oid)) is not None}
    rows: list[Row] = [(n, i) for n, i in reached]
    rows += [(n, "") for n in off - on_fabric]
    return sorted(rows)


def switch_islands(objects: Mapping[str, Obj], links: Iterable[Link]) -> dict[str, str]:
    """Every switch's island: the smallest switch id it reaches over working switch-to-switch links."""
    switches = sorted(oid for oid, o in objects.items() if o.kind == "switch")
    up: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while (nxt := up.get(root, root)) != root:
            root = nxt
        while x != root:  # path compression: every switch on the way points at the root
            up[x], x = root, up[x]
        return root

    switch_set = set(switches)
    for lk in links:
        # Ethernet kept as such here: between two switches it is never an accelerator's RoCE port.
        if lk.a in switch_set and lk.b in switch_set and lk.kind in FABRIC_LINK_KINDS and lk.state != "down":
            ra, rb = find(lk.a), find(lk.b)
            if ra != rb:
                up[max(ra, rb)] = min(ra, rb)  # the smaller id stays the root: it names the island
    return {s: find(s) for s in switches}
