"""Undirected graphs of one node's links, and the max-flow between two of their vertices.

A node class has a few dozen objects (a GB200 compute tray, a DGX with its NVSwitches), and
each summary of it asks a few questions of three such graphs. networkx answered them, but
importing it costs a cold `verify` of a shipped example more CPU (0.13 s on the 2-core
benchmark host) than everything the graph summaries compute; a run that meets a shape for the
first time (every fresh CI runner) paid it. The graphs here are plain dictionaries with
networkx.Graph's orders (vertices and neighbours as first added), and the max-flow is
Edmonds-Karp, whose value is unique whatever augmenting paths it takes:
tests/facts/test_small_graph.py holds both to networkx on random graphs and on the shipped
examples' node classes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable


class Graph:
    """An undirected graph with an integer capacity (MB/s) per edge; parallel links add up.

    `adj[v][u]` is the capacity between v and u; vertices and neighbours iterate in the order
    they were first added, as networkx.Graph's do.
    """

    __slots__ = ("adj",)

    def __init__(self) -> None:
        self.adj: dict[str, dict[str, int]] = {}

    def add(self, a: str, b: str, mbps: int) -> None:
        """Add a link of `mbps` between `a` and `b` (to the capacity of an edge already there)."""
        total = self.adj.get(a, {}).get(b, 0) + mbps
        self.adj.setdefault(a, {})[b] = total
        self.adj.setdefault(b, {})[a] = total  # a self-loop is one entry, counted once

    def __contains__(self, v: object) -> bool:
        return v in self.adj

    def __getitem__(self, v: str) -> dict[str, int]:
        return self.adj[v]


def max_flow(g: Graph, a: str, b: str, through: Iterable[str]) -> int | None:
    """The max-flow from `a` to `b` using only `a`, `b` and the vertices of `through` (None: no path).

    Each edge carries its capacity in either direction (an undirected network, as networkx's
    maximum_flow_value reads an undirected graph); self-loops carry nothing.
    """
    allowed = set(through) | {a, b}
    residual: dict[str, dict[str, int]] = {
        v: {u: c for u, c in g.adj[v].items() if u in allowed and u != v} for v in g.adj if v in allowed
    }
    if a not in residual or b not in residual:
        return None
    total = 0
    reached = False
    while True:
        parent = _augmenting_path(residual, a, b)
        if parent is None:
            break
        reached = True
        path = []
        v = b
        while v != a:
            u = parent[v]
            path.append((u, v))
            v = u
        push = min(residual[u][v] for u, v in path)  # > 0: the search crosses only edges with capacity left
        for u, v in path:
            residual[u][v] -= push
            residual[v][u] = residual[v].get(u, 0) + push
        total += push
    if not reached and not _connected(residual, a, b):  # no flow: still a path if edges of capacity 0 join them
        return None
    return total


def _augmenting_path(residual: dict[str, dict[str, int]], a: str, b: str) -> dict[str, str] | None:
    """Breadth first over edges with capacity left: each vertex's predecessor on a shortest path to `b`."""
    parent: dict[str, str] = {}
    seen = {a}
    queue = deque([a])
    while queue:
        v = queue.popleft()
        for u, c in residual[v].items():
            if c > 0 and u not in seen:
                seen.add(u)
                parent[u] = v
                if u == b:
                    return parent
                queue.append(u)
    return None


def _connected(residual: dict[str, dict[str, int]], a: str, b: str) -> bool:
    """Whether an edge path (of any capacity, 0 included) joins `a` and `b`."""
    seen = {a}
    queue = deque([a])
    while queue:
        v = queue.popleft()
        if v == b:
            return True
        for u in residual[v]:
            if u not in seen:
                seen.add(u)
                queue.append(u)
    return False
