"""Ports taken at each network switch: its fabric cables counted against its model's ports.

A switch has as many ports as its catalogue model says (`ports: {count, speed}`): a spine written
with more cables than that cannot have them all plugged in. Counting the cables in the rules
would read every fabric link, and so build the rows of the runs of cables the loader keeps as
columns (Inventory.unmade_cables: a fleet's 196,608); they are counted here instead, from those
columns, and given as `switch_ports_taken(switch, model, cables, taken, ports)`, a row per switch
whose model has a port count (LINK014 reads it; the model is in the row so that the check joins
nothing to a fleet's `model` rows).

What a cable takes is a lower bound, so that only a switch certainly over is found. A cable as
fast as a port or faster takes a whole port (a faster one may take more, a twin-port OSFP, but a
bandwidth written too high is LINK001's, not the switch's). A slower one may be one leg of a port
split into breakout cables (a 400 Gb/s port as two 200 Gb/s or four 100 Gb/s cables), so it is
counted as the share of a port its speed is; but no less than the share of the model's ports its
most breakout cables give one (catalogue spec `breakout_ports`: a QM9700's 64 NDR ports take 128
NDR200 cables at most, so 160 cables of any speed are over). Added up per switch and read as
ports rounded up. Every link counts whatever its state, and a switch marked down too: a down
cable still fills its port.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from verifier.facts.inventory import Row
from verifier.facts.whole_nodes import objects_without, plan_groups, whole_nodes
from verifier.sources.inventory.model import CABLES_UNMADE, FABRIC_LINK_KINDS, CableColumns, Inventory, Link


def switch_ports_taken(inv: Inventory, links: Iterable[Link], cables: Mapping[str, CableColumns]) -> list[Row]:
    """(switch, model, cables, ports taken, ports) for each switch whose model has a port count, sorted.

    `links`: the links in which each run of cables not made yet is its placeholder (loc
    CABLES_UNMADE, id its key in `cables`); every fabric link at a switch must be among them.
    """
    ports = _switch_ports(inv)
    if not ports:
        return []
    # A switch of N ports of P MB/s whose ports take B cables at most split (`breakout_ports`) gives
    # each cable at least N/B of a port. Per link of n cables and bandwidth m, the ports it takes at
    # the least are max(min(n x P, m) / P, n x N / B), added up as that times P x B (whole numbers):
    # max(min(n x P, m) x B, n x N x P). Without B, only the first, with B read as N.
    port_mbps = {s: p for s, (_m, _n, p, _b) in ports.items()}
    scale = {s: (b or n, p * n if b else 0) for s, (_m, n, p, b) in ports.items()}
    speed = port_mbps.get
    counted: dict[str, int] = dict.fromkeys(port_mbps, 0)  # cables, `count` included
    taken: dict[str, int] = dict.fromkeys(port_mbps, 0)  # ports x P x B, as said above
    fabric = FABRIC_LINK_KINDS
    for lk in links:
        if lk.loc is CABLES_UNMADE:
            _run(cables[lk.id], port_mbps, scale, counted, taken)
            continue
        if lk.kind not in fabric:
            continue
        n = lk.attrs.get("count", 1)
        for end in (lk.a, lk.b):
            p = speed(end)
            if p is not None:
                split, whole = scale[end]
                counted[end] += n
                taken[end] += max(min(n * p, lk.mbps) * split, n * whole)
    # Rounded up: more MB/s of ports than `ports` whole ones carry is more than `ports` ports. Each
    # link's count fits the engine's 64-bit numbers (the loader holds its bandwidth to them), but a
    # sum over many may not: held to the largest, still far more than any switch has ports.
    return [
        (s, m, min(counted[s], _MOST), min(-(-taken[s] // (p * scale[s][0])), _MOST), n)
        for s, (m, n, p, _b) in sorted(ports.items())
    ]


_MOST = 2**63 - 1
"""The largest number the engines hold (a 64-bit integer)."""


def _switch_ports(inv: Inventory) -> dict[str, tuple[str, int, int, int]]:
    """(model, ports, MB/s a port, most cables its ports take split, else 0) of each switch whose
    model has a port count and speed. The switches outside the
    nodes stamped whole are few (a fleet's few thousand); a node's plan is read once for all of
    its nodes, and one that makes no switch (most) costs nothing more.
    """
    figures: dict[str, tuple[str, int, int, int] | None] = {}

    def of(model: str | None) -> tuple[str, int, int, int] | None:
        if model is None:
            return None
        if model not in figures:
            m = inv.models.get(model)
            n = m.specs.get("ports") if m is not None else None
            p = m.specs.get("port_mbps") if m is not None else None
            b = m.specs.get("breakout_ports", 0) if m is not None else 0
            figures[model] = (model, n, p, b if n and b >= n else 0) if n and p else None
        return figures[model]

    out: dict[str, tuple[str, int, int, int]] = {}
    for o in objects_without(inv, whole_nodes(inv)):
        if o.kind == "switch":
            f = of(o.model)
            if f is not None:
                out[o.id] = f
    for plan, _nodes, names in plan_groups(inv):
        at = [(row[0], of(row[4])) for row in plan.object_rows if row[2] == "switch"]
        for slot, f in at:
            if f is not None:
                out.update(dict.fromkeys([of_node[slot] for of_node in names], f))
    return out


def _run(
    run: CableColumns,
    port_mbps: Mapping[str, int],
    scale: Mapping[str, tuple[int, int]],
    counted: dict[str, int],
    taken: dict[str, int],
) -> None:
    """Adds a run's cables at switches: the ends at one side counted in C (a fleet's runs are 256 NIC
    cables to 8 leaves, or 65,536 leaf cables to 16 spines; a side with no switch is passed over),
    then each switch once, as all of a run's cables have one count and one bandwidth.
    """
    _ids, ends_a, ends_b, kind, mbps, _loc, attrs, _labels, _state = run
    if kind not in FABRIC_LINK_KINDS:
        return
    n = attrs.get("count", 1)
    switches = port_mbps.keys()
    for ends in (ends_a, ends_b):
        if switches.isdisjoint(ends):  # a run's NIC side, mostly: one pass in C, nothing made
            continue
        for end, k in Counter(ends).items():
            p = port_mbps.get(end)
            if p is not None:
                split, whole = scale[end]
                counted[end] += k * n
                taken[end] += k * max(min(n * p, mbps) * split, n * whole)
