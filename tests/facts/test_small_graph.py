"""verifier.facts.small_graph: the node classes' graphs and max-flow, held to networkx (which it replaced)."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from verifier.facts.small_graph import Graph, max_flow


def _nx_answer(edges: list[tuple[str, str, int]], a: str, b: str, through: set[str]) -> int | None:
    """What verifier.facts.graph asked networkx before: the subgraph's max-flow, None without a path."""
    g = nx.Graph()
    for u, v, c in edges:
        if g.has_edge(u, v):
            g[u][v]["mbps"] += c
        else:
            g.add_edge(u, v, mbps=c)
    if a not in g or b not in g:
        return None
    sub = g.subgraph(n for n in g if n in (a, b) or n in through)
    if not nx.has_path(sub, a, b):
        return None
    return int(nx.maximum_flow_value(sub, a, b, capacity="mbps"))


def _ours(edges: list[tuple[str, str, int]], a: str, b: str, through: set[str]) -> int | None:
    g = Graph()
    for u, v, c in edges:
        g.add(u, v, c)
    if a not in g or b not in g:
        return None
    return max_flow(g, a, b, (n for n in g.adj if n in through))


def test_dgx_like_pair_sums_its_switch_links() -> None:
    # Two GPUs, each with 4 links to 4 switches: 2 links of 25 to sw0, 1 of 50 to sw1..sw3
    # (parallel links add up: 50 to each switch). The pair's flow is 4 switches x 50 = 200;
    # the third GPU g2 (also on sw0) relays nothing, and neither does a path through it.
    edges = [("g0", "sw0", 25), ("g0", "sw0", 25), ("g1", "sw0", 50), ("g2", "sw0", 50)]
    edges += [(g, f"sw{i}", 50) for g in ("g0", "g1") for i in (1, 2, 3)]
    switches = {"sw0", "sw1", "sw2", "sw3"}
    assert _ours(edges, "g0", "g1", switches) == 200
    # g0 and g1 joined only through GPU g2 (not in `through`): no path at all.
    assert _ours([("g0", "g2", 100), ("g2", "g1", 100)], "g0", "g1", set()) is None
    # The same through a switch: its narrower side, 40.
    assert _ours([("g0", "s", 100), ("s", "g1", 40)], "g0", "g1", {"s"}) == 40


def test_capacity_zero_is_a_path_without_flow() -> None:
    # An edge of 0 MB/s still joins the two (networkx: has_path true, flow 0); the caller
    # reads 0 as "no scale-up bandwidth" and falls back to PCIe, as it did.
    assert _ours([("a", "s", 0), ("s", "b", 10)], "a", "b", {"s"}) == 0
    # A self-loop carries nothing: a-b's flow is the one edge, 7.
    assert _ours([("a", "a", 99), ("a", "b", 7)], "a", "b", set()) == 7


def test_neighbour_order_and_sums_are_networkx_graph_s() -> None:
    # Vertices and neighbours keep the order first added; parallel links add up once each,
    # a self-loop counted once (networkx stores one edge dict for both directions).
    g, ref = Graph(), nx.Graph()
    for u, v, c in [("b", "a", 3), ("a", "c", 4), ("a", "b", 5), ("c", "c", 6), ("d", "a", 1)]:
        g.add(u, v, c)
        if ref.has_edge(u, v):
            ref[u][v]["mbps"] += c
        else:
            ref.add_edge(u, v, mbps=c)
    assert list(g.adj) == list(ref)
    for v in ref:
        assert list(g[v].items()) == [(u, d["mbps"]) for u, d in ref[v].items()]
    assert g["a"] == {"b": 8, "c": 4, "d": 1}


@pytest.mark.parametrize("seed", range(40))
def test_random_graphs_agree_with_networkx(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"v{i}" for i in range(rng.randint(2, 14))]
    edges = [
        (rng.choice(names), rng.choice(names), rng.choice([0, 1, 5, 25, 50, 100, 450_000]))
        for _ in range(rng.randint(0, 40))
    ]
    through = {n for n in names if rng.random() < 0.6}
    for a in names:
        for b in names:
            if a != b:
                assert _ours(edges, a, b, through) == _nx_answer(edges, a, b, through), (a, b)
