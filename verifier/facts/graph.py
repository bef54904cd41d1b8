"""Path summaries computed in Python (verifier.facts.small_graph) and fed to the rules as input facts.

Widest paths, max-flows and PCIe trees are closed-form graph work that Datalog engines do
badly (see DESIGN.md, Rules). Everything here stays near-linear in the fleet:

- Inside a node, results depend only on the node's structure. Nodes are grouped into
  structural classes (same local object names, kinds, parents and indexes, same links with
  the same kinds, bandwidths and states); each class is computed once on one representative
  and stamped onto every instance with its node id as prefix. Only pairs inside one node
  are emitted (8 GPUs: 28 GPU pairs, 64 GPU-NIC pairs per node).
- Across the fabric, leaves with the same switch neighbours at the same bandwidths are
  interchangeable, so widest paths are computed per pair of such leaf classes, never per
  pair of leaves or nodes. Rules compose node-to-leaf and leaf-class summaries on demand.

Relations and their columns are declared and documented in rules/schema.dl. Bandwidths
are MB/s per direction; parallel links between the same two objects add up.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from itertools import chain

from verifier.core.frozen import Record
from verifier.core.gc_pause import collector_paused
from verifier.core.stamped_rows import StampBlock, names_at, with_blocks
from verifier.facts.class_cache import ClassRows, ShapeKey, cached_classes, classes_key, remember_classes
from verifier.facts.fabric_islands import (
    carries,
    down_devices,
    fabric_islands,
    grouped,
    node_fabric_islands,
    switch_islands,
    switches_of,
    working,
)
from verifier.facts.inventory import ROCE, Row, link_kind, node_of
from verifier.facts.nic_share import CLASS_RANK, fabric_shares
from verifier.facts.relation_sources import GRAPH_RELATIONS
from verifier.facts.small_graph import Graph, max_flow
from verifier.facts.switch_ports import switch_ports_taken
from verifier.facts.whole_nodes import objects_without, plan_groups, plan_names, whole_nodes
from verifier.sources.inventory.model import (
    CABLES_UNMADE,
    FABRIC_LINK_KINDS,
    CableColumns,
    Inventory,
    Link,
    Unmade,
    cables_of,
    links_of,
)
from verifier.sources.inventory.specs import ACCESS_LINK_FAILURE_MODE, NVSWITCH_FAILURE_MODE

NODE_RELATIONS = frozenset(
    {"pcie_path", "pcie_switch_load", "gpu_pair_bottleneck", "gpu_nic_path", "nearest_nic", "gpu_fabric_bottleneck"}
)
FABRIC_KINDS = FABRIC_LINK_KINDS
SCALEUP_KINDS = frozenset({"nvlink", "nvswitch", "xgmi", ROCE})  # link kinds as the facts give them (link_kind)
ROOT_LINK_KINDS = frozenset({"pcie", "c2c"})  # how a device reaches its root complex (c2c: Grace-Blackwell)
HOST_KINDS = frozenset({"pcie", "c2c", "upi", "xgmi", "d2d", "soc"})
EXT = "//"  # prefix of an object outside the node in a node's local naming

LocalObj = tuple[str, str, str | None, int | None]  # local name, kind, parent's local name, index
LocalLink = tuple[str, str, str, int]  # a, b, kind, mbps (links that are down are left out)


@dataclass(repr=False, eq=False)
class _NodeShape(Record):
    objs: list[LocalObj] = field(default_factory=list)
    links: list[LocalLink] = field(default_factory=list)

    def key(self) -> ShapeKey:
        return tuple(self.objs), tuple(self.links)


def widest_from(g: Graph, src: str) -> dict[str, int]:
    """Max-min (widest path) bandwidth from `src` to every vertex it reaches."""
    best: dict[str, int] = {}
    heap: list[tuple[int, str]] = [(-(1 << 62), src)]
    while heap:
        neg, v = heapq.heappop(heap)
        if v in best:
            continue
        best[v] = -neg
        for u, mbps in g[v].items():
            if u not in best:
                heapq.heappush(heap, (-min(-neg, mbps), u))
    best.pop(src, None)
    return best


class _NodeClass:
    """Everything computed once for one structural class, in local names."""

    def __init__(self, shape: _NodeShape) -> None:
        self.kind = {name: kind for name, kind, _p, _i in shape.objs}
        self.parent = {name: p for name, _k, p, _i in shape.objs}
        self.index = {name: i for name, _k, _p, i in shape.objs}
        self.host, self.pcie, self.scale = Graph(), Graph(), Graph()
        for a, b, kind, mbps in shape.links:
            ka, kb = self._kind(a), self._kind(b)
            if kind in SCALEUP_KINDS and {ka, kb} <= {"gpu", "nvswitch"}:
                self.scale.add(a, b, mbps)
            elif kind in HOST_KINDS:
                self.host.add(a, b, mbps)
                if kind in ROOT_LINK_KINDS:
                    self.pcie.add(a, b, mbps)
        names = [o[0] for o in shape.objs]
        self.gpus = sorted(n for n in names if self.kind[n] == "gpu")
        self.nics = sorted(n for n in names if self.kind[n] == "nic")
        self.roots = {n: self._roots(n) for n in names if self.kind[n] != "cpu"}
        self.wide = {g: widest_from(self.host, g) if g in self.host else {} for g in self.gpus}

    def _kind(self, name: str) -> str:
        return self.kind.get(name, "nvswitch" if name.startswith(EXT) else "")

    def _roots(self, x: str) -> list[tuple[str, int, int]]:
        """The CPUs (root complexes) `x` reaches over PCIe/C2C through PCIe switches only,
        each with the number of switches on the way and the path's bottleneck, nearest first.
        """
        if x not in self.pcie:
            return []
        seen = {x: (0, 1 << 62)}
        found: list[tuple[str, int, int]] = []
        queue = deque([x])
        while queue:
            v = queue.popleft()
            hops, width = seen[v]
            for u, mbps in sorted(self.pcie[v].items()):
                if u in seen:
                    continue
                w = min(width, mbps)
                k = self._kind(u)
                if k == "cpu":
                    seen[u] = (hops, w)
                    found.append((u, hops, w))
                elif k == "pcie_switch":
                    seen[u] = (hops + 1, w)
                    queue.append(u)
        return sorted(found, key=lambda r: (r[1], -r[2], r[0]))

    def _switches_between(self, x: str, y: str) -> int | None:
        """PCIe switches on the shortest PCIe path from x to y that avoids CPUs, or None."""
        if x not in self.pcie or y not in self.pcie:
            return None
        dist = {x: 0}
        queue = deque([x])
        while queue:
            v = queue.popleft()
            for u in self.pcie[v]:
                if u == y:
                    return dist[v]
                if u not in dist and self._kind(u) == "pcie_switch":
                    dist[u] = dist[v] + 1
                    queue.append(u)
        return None

    def _socket(self, cpu: str) -> str:
        p = self.parent.get(cpu)
        return p if p is not None and self.kind.get(p) == "socket" else cpu

    def pcie_class(self, x: str, y: str) -> str | None:
        """nvidia-smi's connection class of two devices over the host: PIX, PXB, PHB, NODE or SYS."""
        between = self._switches_between(x, y)
        if between is not None:
            return "PIX" if between <= 1 else "PXB"
        rx = {r for r, _h, _w in self.roots.get(x, [])}
        ry = {r for r, _h, _w in self.roots.get(y, [])}
        if not rx or not ry:
            return None
        if rx & ry:
            return "PHB"
        if {self._socket(r) for r in rx} & {self._socket(r) for r in ry}:
            return "NODE"
        return "SYS"

    def scaleup_mbps(self, a: str, b: str) -> int | None:
        """Max-flow between two GPUs over scale-up links, forwarded only by switches (GPUs do not relay)."""
        if a not in self.scale or b not in self.scale:
            return None
        return max_flow(self.scale, a, b, (n for n in self.scale.adj if self._kind(n) != "gpu"))

    def scaleup_totals(self) -> list[tuple[str, int]]:
        """Each GPU's scale-up links together (MB/s per direction): what it can send to all its peers at once."""
        return [(g, sum(self.scale[g].values())) for g in self.gpus if g in self.scale]

    def gpu_pairs(self) -> list[tuple[str, str, str, int]]:
        rows = []
        for i, a in enumerate(self.gpus):
            for b in self.gpus[i + 1 :]:
                nv = self.scaleup_mbps(a, b)
                if nv:
                    rows.append((a, b, "NV", nv))
                    continue
                cls, width = self.pcie_class(a, b), self.wide[a].get(b)
                if cls is not None and width:
                    rows.append((a, b, cls, width))
        return rows

    def gpu_nics(self) -> list[tuple[str, str, str, int]]:
        rows = []
        for g in self.gpus:
            for n in self.nics:
                cls, width = self.pcie_class(g, n), self.wide[g].get(n)
                if cls is not None and width:
                    rows.append((g, n, cls, width))
        return rows

    def nearest(self, paths: list[tuple[str, str, str, int]]) -> list[tuple[str, str, str, int]]:
        """Per GPU the NIC of the best class; ties: the wider path, then the NIC with the GPU's index, then the id."""
        best: dict[str, tuple[tuple[int, int, int, str], tuple[str, str, str, int]]] = {}
        for row in paths:
            g, n, cls, width = row
            same = self.index.get(n) is not None and self.index.get(n) == self.index.get(g)
            key = (CLASS_RANK[cls], -width, 0 if same else 1, n)
            if g not in best or key < best[g][0]:
                best[g] = (key, row)
        return [best[g][1] for g in sorted(best)]

    def pcie_paths(self) -> list[tuple[str, str, int, int]]:
        return [
            (d, self.roots[d][0][0], self.roots[d][0][1], self.roots[d][0][2])
            for d in sorted(self.roots)
            if self.kind[d] in ("gpu", "nic", "fpga") and self.roots[d]
        ]

    def switch_loads(self) -> list[tuple[str, int, int]]:
        rows = []
        for s in sorted(n for n, k in self.kind.items() if k == "pcie_switch"):
            roots = self.roots.get(s)
            if not roots or s not in self.pcie:
                continue
            up = self._first_hop(s, roots[0][0])
            if up is None:
                continue
            up_mbps = self.pcie[s][up]
            down = sum(mbps for u, mbps in self.pcie[s].items() if u != up)
            rows.append((s, up_mbps, down))
        return rows

    def _first_hop(self, s: str, root: str) -> str | None:
        """The neighbour of switch `s` on its shortest switch-only path to `root`."""
        prev: dict[str, str | None] = {s: None}
        queue = deque([s])
        while queue:
            v = queue.popleft()
            for u in sorted(self.pcie[v]):
                if u in prev:
                    continue
                prev[u] = v
                if u == root:
                    hop: str = u
                    while (back := prev[hop]) is not None and back != s:
                        hop = back
                    return hop
                if self._kind(u) == "pcie_switch":
                    queue.append(u)
        return None


def _local(oid: str, node: str) -> str:
    return oid[len(node) + 1 :] if oid.startswith(node) and oid[len(node) : len(node) + 1] == "/" else EXT + oid


def _global(name: str, node: str) -> str:
    return name[len(EXT) :] if name.startswith(EXT) else f"{node}/{name}"


@dataclass(repr=False, eq=False)
class NodePairs(Record):
    """gpu_pair_bottleneck kept per structural node class instead of stamped onto every node.

    `place` looks up the worst pair of the GPUs it picks in a node; at fleet scale the stamped
    relation is half a million rows that would be built, loaded and read back for that alone.
    """

    class_of: dict[str, int] = field(default_factory=dict)
    """node id -> class number"""
    pairs: list[list[tuple[str, str, int, str]]] = field(default_factory=list)
    """per class: (GPU, GPU, MB/s, class) in local names (the part after "node/")"""
    totals: list[dict[str, int]] = field(default_factory=list)
    """per class: each GPU's scale-up links together (MB/s per direction), in local names"""

    def worst(self, node: str, members: Iterable[str]) -> int | None:
        """The members' (GPU ids of `node`) bandwidth to each other, per GPU; None for fewer than two.

        Like with like on every scale-up design: where every pair of members is joined by scale-up
        links (NV), what the worst member can send to all the others at once, which is the smaller of
        its scale-up links together and the sum of its pairs' figures (an NVSwitch board: each pair's
        max-flow is the GPU's whole NVLink bandwidth, which it shares among its peers, so 450 GB/s on
        an HGX H100; a direct mesh: each pair has its own link, so an MI300X with 7 peers has 7 x 64
        GB/s and with one peer 64 GB/s). Where some pair meets only over PCIe, its host path is shared
        by every transfer over it: the worst pair.
        """
        cls = self.class_of.get(node)
        if cls is None:
            return None
        chosen = {_local(g, node) for g in members}
        found = [(a, b, m, c) for a, b, m, c in self.pairs[cls] if a in chosen and b in chosen]
        if not found:
            return None
        if any(c != "NV" for _a, _b, _m, c in found):
            return min(m for _a, _b, m, _c in found)
        to_rest: dict[str, int] = {}
        for a, b, m, _c in found:
            to_rest[a] = to_rest.get(a, 0) + m
            to_rest[b] = to_rest.get(b, 0) + m
        totals = self.totals[cls]
        return min(min(m, totals.get(g, m)) for g, m in to_rest.items())


def graph_facts(
    inv: Inventory,
    wanted: Iterable[str] | None = None,
    node_pairs: NodePairs | None = None,
) -> dict[str, Sequence[Row]]:
    """Rows of the relations in GRAPH_RELATIONS that are `wanted` (all when None).

    Given `node_pairs`, also fills it with the GPU pair bottlenecks of every node class. The
    per-node relations come as StampedRows: each node class's rows, and the names of its nodes.
    """
    # Rows, sets and dicts of a fleet's links and objects, and no reference cycle: the cyclic GC is
    # paused meanwhile, as for inventory_facts (for a caller that has it on, unlike the console script:
    # at 131,072 GPUs it walked the heap twice in _rails).
    with collector_paused():
        return _graph_facts(inv, wanted, node_pairs)


def _graph_facts(
    inv: Inventory, wanted: Iterable[str] | None, node_pairs: NodePairs | None
) -> dict[str, Sequence[Row]]:
    want = set(GRAPH_RELATIONS) if wanted is None else set(wanted) & set(GRAPH_RELATIONS)
    out: dict[str, list[Row]] = {r: [] for r in sorted(GRAPH_RELATIONS)}
    per_node: dict[str, Sequence[Row]] = {}  # what _nodes stamps, in place of out's lists
    if not want and node_pairs is None:
        return {**out, **per_node}
    view = _LinkView.of(inv)
    ancestry = _Ancestry(inv)  # the per-node relations and the NVLink domains walk up the same objects
    # A device marked down carries nothing: no fabric cable at it is working (fabric_islands.working).
    down = down_devices(inv)
    uplinks: dict[str, int] | None = None
    island: dict[str, str] | None = None  # every switch's island, found with the nodes' when both are wanted
    if "node_fabric_island" in want:
        # The per-node relations read each NIC's working fabric cables, which this goes through
        # anyway: added up on the same pass (a fleet's 131,072 NIC cables once, not twice).
        fused = node_pairs is not None or bool(want & NODE_RELATIONS)
        uplinks = {} if fused else None
        out["node_fabric_island"], island = node_fabric_islands(
            inv, view.parts, ancestry.node, uplinks, down, view.cables
        )
        want.discard("node_fabric_island")
    if node_pairs is not None:
        _nodes(inv, out, per_node, want, node_pairs, view, ancestry, uplinks, down)
        want -= NODE_RELATIONS
    if not want:
        return {**out, **per_node}
    if "rail" in want:
        per_node["rail"] = _rails(inv)
    if want & {"leaf_class", "leaf_class_bottleneck"}:
        _fabric(inv, out, view, down)
    if "switch_ports_taken" in want:
        # From the runs' columns (view.parts): the fabric cables are never made for it.
        out["switch_ports_taken"] = switch_ports_taken(inv, view.parts, view.cables)
    if "fabric_island" in want:
        if island is None:
            # From the runs' columns (view.parts): the fabric cables are never made for it.
            island = switch_islands(inv.found, view.parts, switches_of(inv), down, view.cables)
        out["fabric_island"] = fabric_islands(inv.found, (), island)
    if want & NODE_RELATIONS:
        _nodes(inv, out, per_node, want, None, view, ancestry, uplinks, down)
    if "die_pair_bottleneck" in want:
        _dies(inv, out, view, down)
    if "scaleup_domain" in want:
        per_node["scaleup_domain"] = _scaleup_rows(inv, view, ancestry, down)
    return {**out, **per_node}


def _rails(inv: Inventory) -> Sequence[Row]:
    """`rail(object, number)` for every object with a numeric `rail` label, as StampedRows: the
    objects a node stamped whole from its plan holds (Inventory.stamped, links not made yet: its
    names at hand) come as one block per plan (its rows by slot, each node's names), not as a row
    made per NIC (131,072 at fleet scale); the others' rows are made one by one.
    """
    # The whole nodes by plan, in stamping order (whole_nodes.plan_groups): no pass over the nodes here.
    # A whole node's objects are its plan's, unchanged: their labels are the plan's rows'.
    by_plan = [
        ([(row[0], row[5]["rail"]) for row in plan.object_rows if "rail" in row[5]], of_nodes)
        for plan, _nodes, of_nodes in plan_groups(inv)
    ]
    rails = [(o.id, o.labels["rail"]) for o in objects_without(inv, whole_nodes(inv)) if "rail" in o.labels]
    # A fleet writes a few rail numbers on a hundred thousand NICs: each text read as a number once.
    texts = {rail for _oid, rail in rails} | {rail for slots, _ in by_plan for _slot, rail in slots}
    number = {rail: int(rail) for rail in texts if rail.isascii() and rail.isdigit()}
    blocks = []
    for slots, of_nodes in by_plan:
        rows = [(slot, number[rail]) for slot, rail in slots if rail in number]
        if rows:
            blocks.append(StampBlock.of(rows, 2, 1, of_nodes))
    return with_blocks([(oid, number[rail]) for oid, rail in rails if rail in number], blocks)


_ALWAYS_READ = FABRIC_KINDS | {"d2d"}
"""Link kinds read on every node: fabric cables (Ethernet maybe, see link_kind) and die-to-die links."""
_CABLE_KINDS = FABRIC_KINDS - {"ethernet"}
"""The fabric kinds that are fabric cables only (Ethernet may be RoCE, see link_kind)."""


def _nonfabric(links: Iterable[Link]) -> list[Link]:
    """`links` but the fabric cables (Ethernet kept), in order, in one comprehension."""
    return [lk for lk in links if lk.kind not in _CABLE_KINDS]


@dataclass(repr=False, eq=False)
class _LinkView(Record):
    """The links graph work reads, in inventory order, found in one pass for all of it.

    A stamped node's plan links (`origin`) are read only on its template's representative
    (the first node stamped from it, see _representatives) or when they are fabric cables or
    die-to-die links: at fleet scale that leaves out a million links once rather than once
    per summary. `covered` are the stamped nodes whose plan links are all in `links`; a
    summary that needs another node's goes through the inventory again (`reading`).

    Links not made yet (Inventory.unmade_links) are made here only where they are read, and
    only for this view: the inventory's million are never made for graph work.
    """

    parts: list[Link]
    """`links`, where a run of fabric cables not made yet (Inventory.unmade_cables, not Ethernet)
    is its placeholder (loc CABLES_UNMADE, id its key in `cables`)."""
    covered: frozenset[str]
    inv: Inventory
    unmade: Mapping[str, Unmade]
    so_far: Iterable[Link]
    """The inventory's links as `links_but` gives them: placeholders stand for the `unmade` nodes'
    links and for the runs of `cables`."""
    cables: Mapping[str, CableColumns] = field(default_factory=dict)
    nonfabric: list[Link] = field(default_factory=list)
    """`links` but the fabric cables (Ethernet kept: it may be RoCE, see link_kind), in order: what
    the per-node shapes, the scale-up links and die-to-die read (a fleet's links are mostly cables)."""
    _links: list[Link] | None = None

    @property
    def links(self) -> list[Link]:
        """The links graph work reads, in inventory order: `parts` with each run of cables made (for
        this view only) in its place, on first read. node_fabric_islands reads `parts` instead.
        """
        if self._links is None:
            if not self.cables:
                self._links = self.parts
            else:
                made: list[Link] = []
                for lk in self.parts:
                    if lk.loc is CABLES_UNMADE:
                        made += cables_of(self.cables[lk.id])
                    else:
                        made.append(lk)
                self._links = made
        return self._links

    @classmethod
    def of(cls, inv: Inventory) -> _LinkView:
        stamped = inv.stamped
        covered = frozenset(_representatives(stamped, set()).values())
        unread = {n for n in stamped if n not in covered}
        unmade = inv.unmade_links()
        # The runs first: should another thread make the links meanwhile, `so_far` holds no placeholder.
        cables = inv.unmade_cables()
        so_far = inv.links_but(unmade.keys(), cables=True).values()
        # A placeholder (a node whose links are not made) is replaced by the links read of its node:
        # all of them on a representative, else only its fabric and d2d links (most plans have none).
        always: dict[int, list[int]] = {}  # plan -> positions of its links of the kinds read on every node
        links: list[Link] = []
        for lk in so_far:
            origin = lk.origin
            if lk.loc is CABLES_UNMADE:
                # A run of cables stays a placeholder (`parts`), but an Ethernet one (nonfabric reads it).
                if lk.kind in _CABLE_KINDS:
                    links.append(lk)
                else:
                    links += cables_of(cables[lk.id])
            elif origin is not None and origin in unmade:
                found = unmade[origin]
                if origin not in unread:
                    links += links_of(origin, found)
                    continue
                only = always.get(id(found[0]))
                if only is None:
                    only = always[id(found[0])] = [
                        j for j, row in enumerate(found[0].link_rows) if row[2] in _ALWAYS_READ
                    ]
                if only:
                    links += links_of(origin, found, only)
            elif origin not in unread or lk.kind in _ALWAYS_READ:
                links.append(lk)
        return cls(links, covered, inv, unmade, so_far, cables, _nonfabric(links))

    def reading_nonfabric(self, nodes: AbstractSet[str]) -> Iterable[Link]:
        """`reading(nodes)` but the fabric cables (Ethernet kept), in order."""
        if nodes <= self.covered:
            return self.nonfabric
        return _nonfabric(self.reading(nodes))

    def reading(self, nodes: AbstractSet[str]) -> Iterable[Link]:
        """The links to go through when the plan links of the stamped `nodes` are wanted too: every
        link but (maybe) the plan links of other stamped nodes, which the caller passes over.
        """
        if nodes <= self.covered:
            return self.links
        unmade = self.unmade
        if not unmade:
            return self.inv.links.values()
        stamped = self.inv.stamped
        out: list[Link] = []
        for lk in self.so_far:
            origin = lk.origin
            if lk.loc is CABLES_UNMADE:
                out += cables_of(self.cables[lk.id])
            elif origin is None or origin not in unmade:
                out.append(lk)
            elif origin in nodes or origin not in stamped:
                out += links_of(origin, unmade[origin])
        return out


def scaleup_domains(inv: Inventory, view: _LinkView | None = None, ancestry: _Ancestry | None = None) -> list[Row]:
    """(GPU, domain) for every GPU, sorted: the smallest GPU id joined to it by working scale-up links.

    The same answer as the rules' nvlink_domain (rules/topology/TOPO004_split_nvlink_node.dl; a test
    holds them equal), found by union-find over the links: placement reads it instead, so
    at fleet scale it need not load a million links and close scale-up reachability over them.
    A node that is exactly its template's plan (Inventory.stamped) is worked out once per
    template, on one representative; only nodes that other links reach into are read whole.
    """
    rows, _blocks = _scaleup_domains(inv, view, ancestry, down_devices(inv), stamp=False)
    return rows


def _scaleup_rows(inv: Inventory, view: _LinkView, ancestry: _Ancestry, down: AbstractSet[str]) -> Sequence[Row]:
    """scaleup_domains' rows in no particular order, as StampedRows: the GPUs of the nodes a template's
    representative answers for come as one block per template (its GPUs and their domains by slot)
    and each node's names, not as a row made per GPU (131,072 at fleet scale).
    """
    rows, blocks = _scaleup_domains(inv, view, ancestry, down, stamp=True)
    return with_blocks(rows, blocks)


def _scaleup_domains(
    inv: Inventory, view: _LinkView | None, ancestry: _Ancestry | None, down: AbstractSet[str], stamp: bool
) -> tuple[list[Row], list[StampBlock]]:
    """scaleup_domains' rows (sorted), but with `stamp` those of the GPUs that the plain nodes' plans
    made (the nodes a representative answers for), which come as one StampBlock per template.
    `down`: the devices marked down (down_devices), whose links join nothing.
    """
    stamped = inv.stamped
    view = view or _LinkView.of(inv)
    rep_of = _representatives(stamped, set())
    ancestry = ancestry or _Ancestry(inv)
    plan_links, foreign = _scaleup_links(inv, rep_of, set(), view, ancestry, down)
    touched = {n for a, b in foreign for n in (ancestry.node(a), ancestry.node(b)) if n in stamped}
    if touched:  # nodes reached from outside are read whole, and never stand for their template
        rep_of = _representatives(stamped, touched)
        plan_links, foreign = _scaleup_links(inv, rep_of, touched, view, ancestry, down)
    up: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while (nxt := up.get(root, root)) != root:
            root = nxt
        while x != root:
            up[x], x = root, up[x]
        return root

    def union(pairs: list[tuple[str, str]]) -> None:
        for a, b in pairs:
            ra, rb = find(a), find(b)
            if ra != rb:
                up[max(ra, rb)] = min(ra, rb)

    union(foreign)
    for pairs in plan_links.values():
        union(pairs)
    local_min: dict[str, dict[str, str]] = {}  # template -> local GPU -> local name of its domain
    # Stamped nodes answered for by their template's representative: their GPUs were in no union
    # (each is its own component) and take the representative's answer, in their own names.
    plain = {n: t for n, t in stamped.items() if n not in touched and rep_of.get(t) not in (None, n)}
    # A GPU a plan stamped is in the node that plan was stamped for (`origin`): no walk up its parents.
    # With `stamp`, those of plain nodes are left to their template's block (below).
    skip = plain if stamp else {}
    node_of = {
        o.id: o.origin if o.origin in stamped else ancestry.node(o.id)
        for o in objects_without(inv, skip.keys())
        if o.kind == "gpu"
    }
    gpus = sorted(node_of)
    nodes = [node_of[g] for g in gpus]  # each GPU's node, looked up once for both passes
    smallest: dict[str, str] = {}
    # Sorted: the first GPU met in a component is its smallest.
    for g in [g for g, node in zip(gpus, nodes, strict=True) if node not in plain]:
        smallest.setdefault(find(g), g)
    rows: list[Row] = []
    domain_of: dict[str, str] = {}  # local domain -> its global name, in the node met last
    last: str | None = None
    template: str | None = None
    rep, local, cut = "", {}, 0
    for g, node in zip(gpus, nodes, strict=True):
        if node != last:  # sorted: a node's GPUs come together, and share what is looked up per node
            last = node
            template = plain.get(node) if node is not None else None
            if template is not None and node is not None:
                rep, local, cut = rep_of[template], local_min.setdefault(template, {}), len(node) + 1
                domain_of = {}
        if template is None:
            rows.append((g, smallest[find(g)]))
            continue
        name = g[cut:]
        mine = local.get(name)
        if mine is None:
            theirs = smallest[find(f"{rep}/{name}")]
            mine = local[name] = theirs[len(rep) + 1 :]
        domain = domain_of.get(mine)
        if domain is None:
            domain = f"{node}/{mine}"
            domain = domain_of[mine] = g if domain == g else domain  # the GPU's own id: one string, not two
        rows.append((g, domain))
    if not (stamp and plain):
        return rows, []
    return rows, _plain_blocks(inv, plain, rep_of, gpus, nodes, find, smallest, rows, _StampedNames(inv))


def _plain_blocks(
    inv: Inventory,
    plain: Mapping[str, str],
    rep_of: Mapping[str, str],
    gpus: Sequence[str],
    nodes: Sequence[str | None],
    find: Callable[[str], str],
    smallest: Mapping[str, str],
    rows: list[Row],
    namer: _StampedNames,
) -> list[StampBlock]:
    """One block per template of the plain nodes' plan GPUs (as _scaleup_domains finds them): the
    representative's GPUs and the domain of each, in its local names, stamped with each node's names.

    A plain node is its template's plan, stamped whole, and no link from outside reaches into it
    or into its representative (those are `touched`, read whole): its plan GPUs are the
    representative's, renamed, and so are their domains, each one of those GPUs. Rows that cannot be
    stamped so go to `rows`.
    """
    nodes_of: dict[str, list[str]] = {}  # template -> its plain nodes, in stamping order
    for n, t in plain.items():
        nodes_of.setdefault(t, []).append(n)
    reps = {rep_of[t]: t for t in nodes_of}
    of_rep: dict[str, list[str]] = {}  # a representative's GPUs, sorted (as `gpus` is)
    for g, node in zip(gpus, nodes, strict=True):
        if node in reps:
            of_rep.setdefault(node, []).append(g)
    blocks: list[StampBlock] = []
    for rep, template in reps.items():
        mine = [g for g in of_rep.get(rep, ()) if g.startswith(rep + "/")]
        if not mine:
            continue
        slot = {g: i for i, g in enumerate(mine)}
        suffixes = [g[len(rep) :] for g in mine]
        theirs = [smallest[find(g)] for g in mine]
        if not all(d in slot for d in theirs):  # never met: a domain beyond the plan, named per GPU as before
            cut = len(rep) + 1
            rows += [
                (n + s, f"{n}/{d[cut:]}") for n in nodes_of[template] for s, d in zip(suffixes, theirs, strict=True)
            ]
            continue
        # The loader's lists of the nodes' names where it keeps them (nothing picked per node), else
        # each node's GPU names picked.
        planned = plan_names(inv, nodes_of[template], suffixes)
        if planned is not None:
            at, names = planned
        else:
            at, names = list(range(len(mine))), [namer.of(n, suffixes) for n in nodes_of[template]]
        blocks.append(StampBlock((tuple(at), tuple(at[slot[d]] for d in theirs)), (None, None), names))
    return blocks


def fm_isolated_gpus(inv: Inventory, links: Iterable[Link], ancestry: _Ancestry) -> frozenset[str]:
    """GPUs of an NVSwitch board that its fabric manager takes out of NVLink peer-to-peer: one with
    a GPU-NVSwitch (access) link of its node down or degraded, or linked to a chip of its node that
    is down, unless the node declares the other mode (1) for that failure, or the catalogue gives it
    for the chip's model and the node declares none. NVIDIA's Fabric Manager
    user guide, "Supported High Availability Modes": ACCESS_LINK_FAILURE_MODE=0 (the default)
    removes the GPU from NVSwitch routing; NVSWITCH_FAILURE_MODE=0 leaves the fabric uninitialized.
    The rules' fm_isolated_gpu (rules/topology/lib/platform.dl) draws the same line; a test holds them equal.
    """
    objects = inv.found
    out: set[str] = set()
    # The NVLink kinds picked out first, in one comprehension: a fleet's links are mostly its cables.
    for lk in [lk for lk in links if lk.kind in ("nvswitch", "nvlink")]:
        a, b = objects.get(lk.a), objects.get(lk.b)
        if a is None or b is None:
            continue
        if a.kind == "nvswitch":
            a, b = b, a
        if a.kind != "gpu" or b.kind != "nvswitch":
            continue
        failed_link = lk.state in ("down", "degraded")
        if not failed_link and b.state != "down":
            continue
        node = ancestry.node(a.id)
        if node is None or node != ancestry.node(b.id):
            continue  # a rack-scale (NVL72) access link: not the single-board fabric manager's case
        declared = objects[node].quantities
        chip = inv.models.get(b.model) if b.model is not None else None
        defaults = chip.specs if chip is not None else {}
        access = declared.get(ACCESS_LINK_FAILURE_MODE, defaults.get(ACCESS_LINK_FAILURE_MODE))
        switch = declared.get(NVSWITCH_FAILURE_MODE, defaults.get(NVSWITCH_FAILURE_MODE))
        if (failed_link and access != 1) or (b.state == "down" and switch != 1):
            out.add(a.id)
    return frozenset(out)


def _representatives(stamped: Mapping[str, str], skip: AbstractSet[str]) -> dict[str, str]:
    """Per template, the first node stamped from it that is not in `skip`: the one read whole
    on behalf of the others (none when every instance is skipped).
    """
    rep: dict[str, str] = {}
    for node, template in stamped.items():
        if node not in skip:
            rep.setdefault(template, node)
    return rep


def _scaleup_links(
    inv: Inventory,
    rep_of: Mapping[str, str],
    touched: AbstractSet[str],
    view: _LinkView,
    ancestry: _Ancestry,
    down: AbstractSet[str],
) -> tuple[dict[str, list[tuple[str, str]]], list[tuple[str, str]]]:
    """Working scale-up links split into each template representative's own (by template) and
    the ones to join globally: links from outside any plan and the links of `touched` nodes.
    Working: fabric_islands.carries, a link at a device marked down (`down`) joins nothing.
    The links of other stamped nodes are left out: their representative answers for them.
    """
    stamped = inv.stamped
    plan_links: dict[str, list[tuple[str, str]]] = {}
    foreign: list[tuple[str, str]] = []
    objects = inv.found
    # The links of stamped nodes that neither stand for their template nor are read whole are
    # answered for by their representative: left out first, in one pass (a million at fleet scale).
    skip = {n for n, t in stamped.items() if n not in touched and rep_of.get(t) != n}
    read = {n for n in stamped if n not in skip}  # stamped nodes whose plan links are read
    # Scale-up kinds only are joined below, and fabric cables are none (Ethernet may be: link_kind).
    links = [lk for lk in view.reading_nonfabric(read) if lk.origin not in skip]
    isolated = fm_isolated_gpus(inv, links, ancestry)
    for lk in links:
        kind = lk.kind
        if kind == "ethernet":
            kind = link_kind(lk, objects)
        if kind not in SCALEUP_KINDS or not carries(lk, down):
            continue
        if isolated and (lk.a in isolated or lk.b in isolated):
            continue  # its fabric manager took the GPU out of NVLink peer-to-peer
        origin = lk.origin
        template = stamped.get(origin) if origin is not None else None
        if template is None or origin in touched:
            if not ancestry.joins_domain(lk.a, lk.b):
                continue  # between nodes that nothing declares one domain (SCALE005)
            foreign.append((lk.a, lk.b))
        elif rep_of.get(template) == origin:
            plan_links.setdefault(template, []).append((lk.a, lk.b))
    return plan_links, foreign


class _Ancestry:
    """Per object, the node it is in and the objects above it, each walked up once: an NVL72
    rack's 2,592 scale-up links between trays end on 216 objects.
    """

    def __init__(self, inv: Inventory) -> None:
        self.inv = inv
        self._node: dict[str, str | None] = {}
        self._above: dict[str, frozenset[str]] = {}

    def node(self, oid: str) -> str | None:
        """The node `oid` is in (itself when it is one); None outside nodes or for unknown ids."""
        if oid not in self._node:
            objects = self.inv.found
            self._node[oid] = node_of(objects, objects.get(oid))
        return self._node[oid]

    def above(self, oid: str) -> frozenset[str]:
        """The parents of `oid`, its parents' parents and so on (up to an id a broken inventory lacks)."""
        found = self._above.get(oid)
        if found is None:
            objects, chain = self.inv.found, []
            o = objects.get(oid)
            while o is not None and o.parent is not None:
                chain.append(o.parent)
                o = objects.get(o.parent)
            found = self._above[oid] = frozenset(chain)
        return found

    def joins_domain(self, a: str, b: str) -> bool:
        """Whether a working scale-up link joins its ends' domains: always inside one node (or
        between two objects outside every node); between nodes only where an object above nodes
        that holds both ends promises one NVLink domain (as an NVL72 rack does). The rules'
        stray_scaleup_link (rules/topology/lib/cross_node_scaleup.dl) draws the same line.
        """
        if self.node(a) == self.node(b):
            return True
        objects, promises, above_a = self.inv.found, self.inv.promises, self.above(a)
        return any(
            p in above_a and "nvlink_domain" in promises.get(p, ()) and objects[p].kind != "node" for p in self.above(b)
        )


def _dies(inv: Inventory, out: dict[str, list[Row]], view: _LinkView, down: AbstractSet[str]) -> None:
    """Widest die-to-die path between every two dies of one package (one d2d component).

    A package holds a handful of dies (an MI300X: 8 compute dies on 4 I/O dies), so all
    pairs per component stay small; nothing crosses packages because d2d links do not.
    """
    # Plain adjacency dicts (neighbour -> MB/s, parallel links added up): a widest-path walk from a
    # die reaches exactly its component, so no graph library is needed (nor imported) here.
    adj: dict[str, dict[str, int]] = {}
    # Working links only (fabric_islands.working): a die marked down carries nothing, as `--fail` writes it.
    for lk in working([lk for lk in view.nonfabric if lk.kind == "d2d"], down):
        na, nb = adj.setdefault(lk.a, {}), adj.setdefault(lk.b, {})
        mbps = na.get(lk.b, 0) + lk.mbps
        na[lk.b] = mbps
        nb[lk.a] = mbps
    widest = {die: _widest(adj, die) for die in adj}
    components = {tuple(sorted({die, *wide})) for die, wide in widest.items()}
    for component in sorted(components):
        for a in component:
            wide = widest[a]
            out["die_pair_bottleneck"].extend((a, b, wide[b]) for b in component if a < b and b in wide)


def _fabric(inv: Inventory, out: dict[str, list[Row]], view: _LinkView, down: AbstractSet[str]) -> None:
    switches = set(switches_of(inv))  # the stamped nodes' objects read off their plans
    # The switch fabric as plain dicts (neighbour -> MB/s, parallel cables added up, neighbours
    # in the order first met): thousands of leaf-spine cables, walked once per leaf class.
    adj: dict[str, dict[str, int]] = {}
    for lk in working([lk for lk in view.links if lk.kind in FABRIC_KINDS], down):
        if lk.a in switches and lk.b in switches:
            a, b = lk.a, lk.b
            na, nb = adj.setdefault(a, {}), adj.setdefault(b, {})
            mbps = na.get(b, 0) + lk.mbps
            na[b] = mbps
            nb[a] = mbps
    leaves = sorted(s for s in switches if inv.found[s].labels.get("role") == "leaf")
    members: dict[tuple[tuple[str, int], ...], list[str]] = {}
    for leaf in leaves:
        key = tuple(sorted(adj[leaf].items())) if leaf in adj else ()
        members.setdefault(key, []).append(leaf)
    classes = sorted(members.values())
    for ms in classes:
        out["leaf_class"].extend((leaf, ms[0]) for leaf in ms)
    for ms in classes:
        if ms[0] not in adj:
            continue
        wide = _widest(adj, ms[0])
        for other in classes:
            target = other[0] if other is not ms else (ms[1] if len(ms) > 1 else None)
            if target is not None and target in wide:
                out["leaf_class_bottleneck"].append((ms[0], other[0], wide[target]))


def _widest(adj: Mapping[str, Mapping[str, int]], src: str) -> dict[str, int]:
    """widest_from on plain adjacency dicts (neighbour -> MB/s): the same walk, the same answer."""
    best: dict[str, int] = {}
    heap: list[tuple[int, str]] = [(-(1 << 62), src)]
    push, pop = heapq.heappush, heapq.heappop
    while heap:
        neg, v = pop(heap)
        if v in best:
            continue
        width = best[v] = -neg
        for u, mbps in adj[v].items():
            if u not in best:
                push(heap, (-min(width, mbps), u))
    best.pop(src, None)
    return best


def _nodes(
    inv: Inventory,
    out: dict[str, list[Row]],
    per_node: dict[str, Sequence[Row]],
    want: set[str],
    node_pairs: NodePairs | None,
    view: _LinkView,
    ancestry: _Ancestry,
    uplinks: dict[str, int] | None = None,
    down: AbstractSet[str] = frozenset(),
) -> None:
    """The per-node relations (NODE_RELATIONS) into `per_node`, as StampedRows; `out` gets nothing.

    `uplinks`: each end's MB/s of working fabric cables, added up already (node_fabric_islands);
    None: added up here, a cable at a device marked down (`down`) counting for nothing.
    """
    objects = inv.found
    node_above = ancestry.node

    # Nodes that are exactly their template's plan (Inventory.stamped) share its shape: only one
    # of them per template (its representative) is read object by object and link by link. A
    # link from outside the plan that reaches into such a node makes it "custom" (read in full).
    stamped = inv.stamped
    # Only gpu_fabric_bottleneck reads each NIC's fabric cables (stamp_fabric): without it, or with
    # them added up already, they need not be (a fleet's 262,144 cable ends).
    counted = uplinks is not None or "gpu_fabric_bottleneck" not in want
    nic_fabric: dict[str, int] = uplinks if uplinks is not None else {}  # MB/s of working fabric cables per end
    nic_fabric_get = nic_fabric.get
    foreign: list[tuple[str, str, str, int, str | None, str | None]] = []
    custom: set[str] = set()
    # A link of a stamped node's plan is part of its node's shape (a million links at fleet scale:
    # left out first, in one pass); only a fabric cable (Ethernet: maybe, see link_kind) is not.
    # With the cables counted already (or not wanted), only an Ethernet link can still be something else.
    if counted:
        todo = [lk for lk in view.nonfabric if lk.origin not in stamped]
    else:
        todo = [lk for lk in view.links if lk.kind in FABRIC_KINDS or lk.origin not in stamped]
    for lk in todo:
        kind = lk.kind
        if kind == "ethernet":  # the one kind link_kind may change: a call per link costs at fleet scale
            kind = link_kind(lk, objects)
        if kind in FABRIC_KINDS:
            if not counted and carries(lk, down):
                # Both ends, whatever they are, written out (a cable per NIC: a fleet's 131,072 NICs):
                # only a node class's NICs are ever asked for (stamp_fabric), so a switch's or an
                # outside NIC's count is never read, and no end is looked up to learn its kind.
                a, b, mbps = lk.a, lk.b, lk.mbps
                nic_fabric[a] = nic_fabric_get(a, 0) + mbps
                nic_fabric[b] = nic_fabric_get(b, 0) + mbps
            continue
        if lk.origin in stamped or not carries(lk, down):
            continue  # a link at a device marked down carries nothing, as `--fail` writes it down
        a, b = lk.a, lk.b
        na, nb = node_above(a), node_above(b)
        if (na is None and nb is None) or (na != nb and kind not in SCALEUP_KINDS):
            continue
        foreign.append((a, b, kind, lk.mbps, na, nb))
        for n in (na, nb):
            if n is not None and n in stamped:
                custom.add(n)
    read = custom | set(_representatives(stamped, custom).values())  # stamped nodes read in full
    # Fabric cables are no part of a node's shape (read_links' are passed over below).
    read_links = [lk for lk in view.reading_nonfabric(read & stamped.keys()) if lk.origin in read] if read else []
    # GPUs their fabric manager took out of NVLink peer-to-peer have no scale-up path to a peer.
    isolated = fm_isolated_gpus(inv, [*view.nonfabric, *read_links], ancestry)
    if isolated:
        foreign = [f for f in foreign if f[2] not in SCALEUP_KINDS or (f[0] not in isolated and f[1] not in isolated)]
    shapes: dict[str, _NodeShape] = {}
    local_name: dict[str, str] = {}
    node_of: dict[str, str] = {}  # filled as objects come (a parent usually comes before its children)
    # What a stamped node's plan made (`origin`) is its shape, read on its representative only:
    # left out in one pass. An object put into such a node from outside is still met below.
    unread = {n for n in stamped if n not in read}
    for o in objects_without(inv, unread):
        oid = o.id
        if o.kind == "node":
            node_of[oid] = oid
            if oid not in stamped or oid in read:
                shapes.setdefault(oid, _NodeShape())
            continue
        p = o.parent
        if p is None:
            continue
        n = node_of.get(p)
        if n is None:
            n = node_above(p)
            if n is None:
                continue
        node_of[oid] = n
        if n in stamped and n not in read:
            continue
        idx = o.index if o.index is not None else o.quantities.get("index")
        parent = _local(o.parent, n) if o.parent is not None and o.parent != n else None
        name = local_name[oid] = _local(oid, n)
        shapes.setdefault(n, _NodeShape()).objs.append((name, o.kind, parent, idx))
    if read:
        for lk in read_links:
            origin = lk.origin
            if origin is None or not carries(lk, down):
                continue
            if isolated and (lk.a in isolated or lk.b in isolated) and lk.kind in SCALEUP_KINDS:
                continue
            kind = lk.kind
            if kind == "ethernet":
                kind = link_kind(lk, objects)
                if kind in FABRIC_KINDS:
                    continue
            elif kind in FABRIC_KINDS:
                continue
            shapes[origin].links.append((local_name[lk.a], local_name[lk.b], kind, lk.mbps))
    for a, b, kind, mbps, na, nb in foreign:
        if na is not None and na == nb:
            la, lb = local_name.get(a) or _local(a, na), local_name.get(b) or _local(b, na)
            shapes[na].links.append((la, lb, kind, mbps))
            continue
        n = na or nb
        assert n is not None
        shapes[n].links.append((_local(a, n), _local(b, n), kind, mbps))
        if na is not None and nb is not None:
            shapes[nb].links.append((_local(a, nb), _local(b, nb), kind, mbps))
    cache: dict[object, _Hit] = {}
    key_of = {n: shape.key() for n, shape in shapes.items()}
    summaries = _class_summaries(list(dict.fromkeys(key_of.values())), want, node_pairs is not None)
    fabric_cache: _FabricCache = {}
    namer = _StampedNames(inv)
    by_template: dict[str, _Hit] = {}
    fabric: list[Row] | None = [] if "gpu_fabric_bottleneck" in want else None
    # The nodes a template's representative answers for, by template: stamped per group below.
    plain: dict[str, list[str]] = {}
    for n in _node_order(shapes, stamped):
        template = stamped.get(n)
        if template is not None and n not in read:
            plain.setdefault(template, []).append(n)
            continue
        key = key_of[n]
        known = cache.get(key)
        if known is not None:
            hit = known
        else:
            local = summaries[key]
            hit = cache[key] = _Hit(len(cache), local)
            if node_pairs is not None:
                pair_rows = local["gpu_pair_bottleneck"]
                node_pairs.pairs.append([(str(a), str(b), int(m), str(c)) for a, b, c, m in pair_rows])
                node_pairs.totals.append({str(g): int(m) for g, m in local["scaleup_total"]})
        if template is not None:
            by_template.setdefault(template, hit)
        if node_pairs is not None:
            node_pairs.class_of[n] = hit.number
        names = hit.stamp(n, namer)
        if fabric is not None:
            hit.stamp_fabric(n, names, fabric, nic_fabric, fabric_cache)
    for template, nodes in plain.items():
        hit = by_template[template]
        if node_pairs is not None:
            node_pairs.class_of.update(dict.fromkeys(nodes, hit.number))
        # The nodes of one plan keep the loader's lists of their names: no name picked per node.
        if hit.stamp_planned(inv, nodes):
            if fabric is not None:
                hit.stamp_fabric_planned(fabric, nic_fabric, fabric_cache)
            continue
        for n in nodes:
            names = hit.stamp(n, namer)
            if fabric is not None:
                hit.stamp_fabric(n, names, fabric, nic_fabric, fabric_cache)
    # Every node's rows are its class's rows with its names (StampedRows): none is made here.
    hits = [hit for hit in cache.values() if hit.names or hit.planned]
    for rel in _STAMPED:
        if rel in want:
            per_node[rel] = with_blocks(out[rel], [b for hit in hits for b in hit.blocks(rel)])
    if fabric is not None:
        per_node["gpu_fabric_bottleneck"] = with_blocks(fabric, [b for hit in hits for b in hit.fabric.values()])


def _class_summaries(keys: list[ShapeKey], want: set[str], pairs_too: bool) -> dict[ShapeKey, ClassRows]:
    """Each distinct shape's rows (`keys`, in the order met) in local names: from the on-disk cache
    when this run's shapes were met before, else worked out (verifier.facts.small_graph) and stored.
    """
    if not keys:
        return {}
    relations = {"gpu_nic_path", "nearest_nic"} | (want & {"pcie_path", "pcie_switch_load"})
    if "gpu_pair_bottleneck" in want or pairs_too:
        relations.add("gpu_pair_bottleneck")
    if pairs_too:
        relations.add("scaleup_total")  # NodePairs.worst's per-GPU figure; no relation of the rules
    entry = classes_key(keys, relations)
    rows = cached_classes(entry, keys) if entry is not None else None
    if rows is None:
        rows = []
        for key in keys:
            cls = _NodeClass(_NodeShape(list(key[0]), list(key[1])))
            nics = cls.gpu_nics()
            rows.append(
                {
                    "pcie_path": list(cls.pcie_paths()) if "pcie_path" in relations else [],
                    "pcie_switch_load": list(cls.switch_loads()) if "pcie_switch_load" in relations else [],
                    "gpu_pair_bottleneck": list(cls.gpu_pairs()) if "gpu_pair_bottleneck" in relations else [],
                    "scaleup_total": list(cls.scaleup_totals()) if "scaleup_total" in relations else [],
                    "gpu_nic_path": list(nics),
                    "nearest_nic": list(cls.nearest(nics)),
                }
            )
        if entry is not None:
            remember_classes(entry, keys, rows)
    return dict(zip(keys, rows, strict=True))


def _node_order(shapes: dict[str, _NodeShape], stamped: dict[str, str]) -> list[str]:
    """Every node, each template's representative before the other nodes stamped from it."""
    first = list(shapes)
    seen = set(first)
    return first + [n for n in stamped if n not in seen]


_STAMPED = ("pcie_path", "pcie_switch_load", "gpu_pair_bottleneck", "gpu_nic_path", "nearest_nic")
"""The per-node relations, each stamped from its class's rows."""


class _Hit:
    """One structural class's rows, ready to stamp onto each node of the class.

    Every object name in the rows is replaced by its position in the list of the node's
    global names (`stamp` builds that list): each global name is one concatenation per node,
    not one per cell (a 131,072-GPU fleet stamps two million rows), and the rows of a node
    share those strings instead of each holding its own copy.
    """

    def __init__(self, number: int, local: dict[str, list[tuple[str | int, ...]]]) -> None:
        self.number = number
        self.local = local
        seen: dict[str, None] = {}
        for rel in _STAMPED:
            cols = _NAME_COLUMNS[rel]
            for row in local[rel]:
                for v in row[:cols]:
                    seen.setdefault(str(v), None)
        inside = [name for name in seen if not name.startswith(EXT)]
        outside = [name for name in seen if name.startswith(EXT)]
        # Names in the node are the node id plus "/name"; names outside it are the same for every node.
        self.suffixes = ["/" + name for name in inside]
        self.outside = [name[len(EXT) :] for name in outside]
        self.slot = {name: i for i, name in enumerate(inside + outside)}
        slot = self.slot
        self.rows: dict[str, list[tuple[int, int, str | int, str | int]]] = {}
        for rel in _STAMPED:
            if _NAME_COLUMNS[rel] == 2:
                self.rows[rel] = [(slot[str(r[0])], slot[str(r[1])], r[2], r[3]) for r in local[rel]]
        self.loads = [(slot[str(s)], up, down) for s, up, down in local["pcie_switch_load"]]
        paths = local["gpu_nic_path"]
        self.nics = sorted({str(nic) for _g, nic, _c, _w in paths})
        self.nic_slots = [slot[nic] for nic in self.nics]
        self.nic_names = names_at(self.nic_slots)
        """A node's NIC names (by slot) in the order of `nics`: one C call per node, not a loop."""
        self.names: list[Sequence[str]] = []
        """The global names by slot of every node stamped from this class, in stamping order."""
        self.planned: list[tuple[list[int], list[Sequence[str]]]] = []
        """Groups of nodes stamped whole from one plan (stamp_planned): where each slot's name is in
        the names the loader keeps for them, and those names, one list per node."""
        self.fabric: dict[tuple[int, tuple[int | None, ...]], StampBlock] = {}
        """gpu_fabric_bottleneck per (slots of the names: id of a `planned` group's, or of None for
        `names`; uplink bandwidths of the NICs), of the nodes that have them."""

    def stamp(self, n: str, namer: _StampedNames) -> Sequence[str]:
        """Add node `n` to the class's nodes (its rows are the class's blocks); its global names by slot."""
        names = namer.of(n, self.suffixes)
        if self.outside:
            names = [*names, *self.outside]
        self.names.append(names)
        return names

    def stamp_planned(self, inv: Inventory, nodes: Sequence[str]) -> bool:
        """Add `nodes`, stamped whole from one plan, with their names as the loader keeps them (one
        list per node, nothing picked per node: whole_nodes.plan_names); False (nothing added) when
        their names are not all at hand so.
        """
        found = plan_names(inv, nodes, self.suffixes, self.outside)
        if found is None:
            return False
        self.planned.append(found)
        return True

    def blocks(self, rel: str) -> list[StampBlock]:
        """The rows of `rel` of every node stamped from this class, as blocks of its rows: one of the
        nodes `stamp` added, one per group `stamp_planned` added (its slots those of the plan's names).
        """
        out: list[StampBlock] = []
        for at, names in [(None, self.names), *self.planned]:
            if not names:
                continue
            if rel == "pcie_switch_load":
                loads = self.loads if at is None else [(at[s], up, down) for s, up, down in self.loads]
                out.append(StampBlock.of(loads, 3, 1, names))
                continue
            rows = self.rows[rel] if at is None else [(at[a], at[b], c, m) for a, b, c, m in self.rows[rel]]
            out.append(StampBlock.of(rows, 4, 2, names))
        return out

    def stamp_fabric_planned(self, rows: list[Row], nic_fabric: dict[str, int], cache: _FabricCache) -> None:
        """`stamp_fabric` of the nodes `stamp_planned` added last, by the slots of their plan's names."""
        at, lists = self.planned[-1]
        nic_names = names_at([at[s] for s in self.nic_slots])
        # Each node's NICs' uplinks in C calls: every node's NIC names one after the other, their
        # uplinks looked up in one pass and cut back into a tuple per node (zip of one iterator k
        # times over). The nodes are grouped by them: a fleet's nodes mostly share a handful, each
        # worked out and given its block once, its nodes' names added at once.
        k = len(self.nic_slots)
        flat = map(nic_fabric.get, chain.from_iterable(map(nic_names, lists)))
        every: list[tuple[int | None, ...]] = list(zip(*[flat] * k, strict=True)) if k else [()] * len(lists)
        groups = grouped(every, lists)  # in the order first met, as the blocks were made
        if any(self._shares(ups, cache)[1] is None for ups in groups):
            # A GPU outside the node: its rows are made node by node, in the nodes' order.
            for names in lists:
                self.stamp_fabric(names[0], names, rows, nic_fabric, cache, (at, nic_names))
            return
        for ups, group in groups.items():
            self._block(at, ups, cache).names.extend(group)

    def stamp_fabric(
        self,
        n: str,
        names: Sequence[str],
        rows: list[Row],
        nic_fabric: dict[str, int],
        cache: _FabricCache,
        planned: tuple[list[int], Callable[[Sequence[str]], Sequence[str]]] | None = None,
    ) -> None:
        """Each GPU's share of the fabric: the NICs it sends through, divided among their GPUs (nic_share.py).

        Nodes of one class whose NICs have the same uplink bandwidths get the same answer, so it
        is worked out once per (class, uplinks) and only the GPU names are stamped per node.
        `planned`: `names` are the loader's list (stamp_planned), with where each of the class's
        slots is in it and its NICs' picker.
        """
        ups = tuple(map(nic_fabric.get, (self.nic_names if planned is None else planned[1])(names)))
        items, slots = self._shares(ups, cache)
        if slots is None:
            rows.extend(sorted((_global(g, n), m) for g, m in items))
            return
        self._block(None if planned is None else planned[0], ups, cache).names.append(names)

    def _shares(self, ups: tuple[int | None, ...], cache: _FabricCache) -> _FabricShares:
        """The class's GPUs' shares of the fabric given its NICs' uplinks `ups`, once per (class, ups)."""
        key = (self.number, ups)
        known = cache.get(key)
        if known is None:
            up_of = dict(zip(self.nics, ups, strict=True))
            paths = [(str(g), str(nic), str(c), int(w)) for g, nic, c, w in self.local["gpu_nic_path"]]
            items = sorted(fabric_shares(paths, up_of).items())
            # Sorted local names are sorted global names when every GPU is inside the node (one
            # common prefix); a name from outside it sorts by its own id, so those are sorted per node.
            inside = all(not g.startswith(EXT) for g, _m in items)
            known = cache[key] = (items, [(self.slot[g], m) for g, m in items] if inside else None)
        return known

    def _block(self, at: list[int] | None, ups: tuple[int | None, ...], cache: _FabricCache) -> StampBlock:
        """The block of the nodes with uplinks `ups` (their GPUs all inside them) whose names are laid
        out by `at` (a `planned` group's slots; None: `names`'), made the first time it is asked for.
        """
        block = self.fabric.get((id(at), ups))
        if block is None:
            slots = self._shares(ups, cache)[1]
            assert slots is not None  # only asked for nodes whose GPUs are all inside them
            shares = slots if at is None else [(at[s], m) for s, m in slots]
            block = self.fabric[(id(at), ups)] = StampBlock.of(shares, 2, 1, [])  # `at` lives in `planned`
        return block


class _StampedNames:
    """Stamped nodes' names at given suffixes ("/gpu0" for `node + "/gpu0"`), as the loader made them.

    The loader keeps the names of each node whose links are not made yet (Inventory.unmade_links,
    LinkPlan.names): the same text as the node's id joined with a suffix of its plan. Picked from
    there by slot (one C call per node), a fleet's per-node rows hold its objects' own id strings,
    hashed already, instead of a fresh copy of each made per node (about 400,000 at 131,072 GPUs).
    Any other node, or a suffix its plan lacks, has its names joined as before: the same text.
    """

    def __init__(self, inv: Inventory) -> None:
        self.unmade = inv.unmade_links()
        # (plan, suffixes) by their ids -> both (kept alive, so the ids stay theirs) and the picker
        self.pickers: dict[
            tuple[int, int], tuple[object, list[str], Callable[[Sequence[str]], Sequence[str]] | None]
        ] = {}

    def of(self, node: str, suffixes: list[str]) -> Sequence[str]:
        found = self.unmade.get(node)
        if found is not None:
            plan, names = found
            key = (id(plan), id(suffixes))
            known = self.pickers.get(key)
            if known is None:
                slot = {name: k + 1 for k, name in enumerate(plan.names)}
                slots = [slot.get(s) for s in suffixes]
                pick = names_at([s for s in slots if s is not None]) if None not in slots else None
                known = self.pickers[key] = (plan, suffixes, pick)
            if known[2] is not None:
                return list(known[2](names))  # a list, as the joined names are (StampedRows compare equal)
        return [node + s for s in suffixes]


_FabricShares = tuple[list[tuple[str, int]], list[tuple[int, int]] | None]
_FabricCache = dict[tuple[int, tuple[int | None, ...]], _FabricShares]
"""(class, its NICs' uplink bandwidths) -> each GPU's best way into the fabric: local names, and slots."""

_NAME_COLUMNS = {"pcie_path": 2, "pcie_switch_load": 1, "gpu_pair_bottleneck": 2, "gpu_nic_path": 2, "nearest_nic": 2}
"""Leading columns of each stamped relation that are object names."""
