"""Fabric islands: which network switches reach each other over working fabric links.

A leaf/spine fabric is one island when every leaf reaches every other through the spines; two
leaves with no common spine (nor any other path of switches) are islands that cannot reach each
other, and a job with ranks below both cannot run. Closing switch-to-switch reachability in the
rules would be a row per pair of switches; the components are found here instead, once, and fed to
the rules as `fabric_island(switch, island)`, a row per switch (LINK011 and placement read it).

Only links between two switches join islands: a host does not route between its NICs, so a node
cabled to two islands does not make them one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from verifier.facts.inventory import Row
from verifier.sources.inventory.model import FABRIC_LINK_KINDS, Link, Obj


def fabric_islands(objects: Mapping[str, Obj], links: Iterable[Link]) -> list[Row]:
    """(switch, island) for every object of kind switch, sorted; the island is named by the
    smallest switch id in it (a switch with no working link to another switch is its own).
    """
    switches = sorted(oid for oid, o in objects.items() if o.kind == "switch")
    up: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while (nxt := up.get(root, root)) != root:
            root = nxt
        while x != root:  # path compression: every switch on the way points at the root
            up[x], x = root, up[x]
        return root

    for lk in links:
        # Ethernet kept as such here: between two switches it is never an accelerator's RoCE port.
        if lk.kind in FABRIC_LINK_KINDS and lk.state != "down" and lk.a != lk.b:
            a, b = objects.get(lk.a), objects.get(lk.b)
            if a is not None and b is not None and a.kind == "switch" and b.kind == "switch":
                ra, rb = find(lk.a), find(lk.b)
                if ra != rb:
                    up[max(ra, rb)] = min(ra, rb)  # the smaller id stays the root: it names the island
    return [(s, find(s)) for s in switches]
