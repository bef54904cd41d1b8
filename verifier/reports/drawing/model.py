"""What a drawing of an inventory shows: boxes (objects), wires (links), NVLink domains, path classes.

Structural classes: two sibling objects outside a node (nodes, racks, pods, fabric
switches) are alike when their kind, model, state, labels, template and links (kind,
bandwidth, state, and what is at the other end) are the same and their contents are alike,
recursively. Alike siblings are drawn once, as the first by id, with a count; the links of
the others are drawn on that representative (one wire per distinct endpoint pair, kind,
bandwidth and state, counting the links it stands for). Inside a node every device is drawn.
An object named by a finding (`focus`), and every object above it, is its own class, so a
finding's subjects are always drawn as themselves.

Everything is sorted by id, so the same inventory gives the same drawing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from verifier.sources.inventory.model import FABRIC_LINK_KINDS, Inventory, Link, Obj

SCALE_UP_KINDS = frozenset({"nvlink", "nvswitch", "xgmi", "c2c", "d2d"})
"""Link kinds of a scale-up (NVLink-class) domain."""

PATH_CLASSES: tuple[tuple[str, str], ...] = (
    ("scale-up", "GPU to GPU over NVLink, NVSwitch, xGMI or C2C"),
    ("host", "GPU or NIC to its PCIe switch and CPU"),
    ("cpu", "CPU to CPU (UPI and other socket links)"),
    ("node-fabric", "NIC to its leaf switch"),
    ("fabric", "switch to switch across the fabric"),
    ("soc", "on-chip SoC links"),
)
"""Path classes (id, what): each link belongs to one; each class's narrowest links are its bottleneck."""

MAX_LISTED = 50
"""Members of a class and links of a wire listed by id; the rest are only counted."""


@dataclass(frozen=True)
class Box:
    """One drawn object: itself, or the representative of `count` alike siblings."""

    id: str
    obj: Obj
    parent: str | None
    """The drawn box (or NVLink-domain group) it is drawn inside."""
    count: int
    """Alike siblings this box stands for, itself included (1: drawn as itself only)."""
    members: tuple[str, ...]
    """Their ids, sorted, at most MAX_LISTED."""
    focus: bool
    """Named by a finding (or holding something a finding names)."""


@dataclass(frozen=True)
class Wire:
    """One drawn link, or several between the same two boxes with the same kind, bandwidth and state."""

    id: str
    a: str
    b: str
    kind: str
    mbps: int
    """Per direction, of each link it stands for."""
    state: str | None
    path_class: str
    count: int
    links: tuple[str, ...]
    """Ids of the links it stands for, sorted, at most MAX_LISTED."""
    first: Link
    bottleneck: bool = False


@dataclass(frozen=True)
class Domain:
    """An NVLink-class domain of the drawing: GPUs (and switch chips) joined by working scale-up links."""

    id: str
    gpus: int
    """Its GPUs: inside one node, that node's; across nodes, every GPU its representatives stand for."""
    members: tuple[str, ...]
    host: str | None
    """The node holding all of it (drawn as a group inside that node), or None when it spans nodes."""


@dataclass(frozen=True)
class PathClass:
    """A path class's narrowest link: its bandwidth per direction and the wires that have it.

    The wires are marked as the bottleneck only when some wire of the class is wider.
    """

    id: str
    what: str
    mbps: int
    widest: int
    wires: tuple[str, ...]


@dataclass
class Drawing:
    """A drawing of one inventory."""

    inventory: Inventory
    boxes: list[Box] = field(default_factory=list)
    wires: list[Wire] = field(default_factory=list)
    domains: list[Domain] = field(default_factory=list)
    classes: list[PathClass] = field(default_factory=list)
    drawn: dict[str, str] = field(default_factory=dict)
    """Object id -> the box it is drawn as (itself, or its class's representative's counterpart)."""
    wire_of: dict[str, str] = field(default_factory=dict)
    """Link id -> the wire it is drawn as."""
    weight: dict[str, int] = field(default_factory=dict)
    """Box id -> the objects of the inventory it stands for (itself and its alike siblings' counterparts)."""


def path_class(link: Link, host: Mapping[str, str | None]) -> str:
    """The path class of `link` (see PATH_CLASSES); `host` maps an object to the node holding it."""
    if link.kind in SCALE_UP_KINDS:
        return "scale-up"
    if link.kind == "pcie":
        return "host"
    if link.kind in FABRIC_LINK_KINDS:
        inside = host.get(link.a) is not None or host.get(link.b) is not None
        return "node-fabric" if inside else "fabric"
    if link.kind == "soc":
        return "soc"
    return "cpu"


class _Builder:
    """The drawing's computation, one pass per step, each linear in the inventory."""

    def __init__(self, inv: Inventory, focus: Iterable[str]) -> None:
        self.inv = inv
        self.children: dict[str | None, list[str]] = {}
        for o in sorted(inv.objects.values(), key=lambda o: o.id):
            parent = o.parent if o.parent in inv.objects else None
            self.children.setdefault(parent, []).append(o.id)
        self.touching: dict[str, list[Link]] = {}
        for link in sorted(inv.links.values(), key=lambda k: k.id):
            self.touching.setdefault(link.a, []).append(link)
            self.touching.setdefault(link.b, []).append(link)
        self.host: dict[str, str | None] = {}
        self.rel: dict[str, str] = {}
        """Object id -> its name inside its node (computed once: signatures ask for it per link end)."""
        self._hosts(None, None)
        self.pinned = self._pinned(focus)
        self.sig: dict[str, int] = {}
        self._interned: dict[tuple[object, ...], int] = {}
        for root in self.children.get(None, []):
            self._signature(root)

    def _hosts(self, parent: str | None, host: str | None) -> None:
        stack = [(c, host) for c in self.children.get(parent, [])]
        while stack:
            oid, above = stack.pop()
            here = above if above is not None else (oid if self.inv.objects[oid].kind == "node" else None)
            self.host[oid] = here
            self.rel[oid] = self._rel(oid)
            stack.extend((c, here) for c in self.children.get(oid, []))

    def _pinned(self, focus: Iterable[str]) -> set[str]:
        named: set[str] = set()
        for subject in focus:
            if subject in self.inv.objects:
                named.add(subject)
            elif subject in self.inv.links:
                link = self.inv.links[subject]
                named.update((link.a, link.b))
        pinned: set[str] = set()
        for oid in named:
            cur: str | None = oid
            while cur is not None and cur not in pinned:
                pinned.add(cur)
                parent = self.inv.objects[cur].parent
                cur = parent if parent in self.inv.objects else None
        return pinned

    def _rel(self, oid: str) -> str:
        host = self.host.get(oid)
        if host is not None and oid.startswith(host + "/"):
            return oid[len(host) + 1 :]
        return oid if host == oid else oid.rsplit("/", 1)[-1]

    def _signature(self, root: str) -> int:
        """Post-order, without recursion: fleets can be deep enough to matter, never wide enough."""
        order: list[str] = []
        stack = [root]
        while stack:
            oid = stack.pop()
            order.append(oid)
            stack.extend(self.children.get(oid, []))
        for oid in reversed(order):
            o = self.inv.objects[oid]
            host = self.host.get(oid)
            inside_parent = o.parent is not None and self.host.get(o.parent) is not None
            links = []
            for link in self.touching.get(oid, []):
                other = link.b if link.a == oid else link.a
                if host is not None and self.host.get(other) == host:
                    far: tuple[str, ...] = ("in", self.rel[other])
                else:
                    far = ("out", self.inv.objects[other].kind if other in self.inv.objects else "")
                links.append((link.kind, link.mbps, link.state or "", far))
            # Inside a node a part's place matters (gpu3 is not gpu5); above nodes only its class.
            kids = sorted((self.rel[c] if host is not None else "", self.sig[c]) for c in self.children.get(oid, []))
            key = (
                o.kind,
                o.model or "",
                o.state or "",
                o.template or "",
                tuple(sorted(o.labels.items())),
                tuple(sorted(o.quantities.items())),
                self.rel[oid] if inside_parent else "",
                oid if oid in self.pinned else "",
                tuple(sorted(links)),
                tuple(kids),
            )
            self.sig[oid] = self._interned.setdefault(key, len(self._interned))
        return self.sig[root]


def build(inv: Inventory, focus: Iterable[str] = ()) -> Drawing:
    """The drawing of `inv`, with every object or link in `focus` (finding subjects) drawn as itself."""
    b = _Builder(inv, focus)
    drawing = Drawing(inv)
    alias: dict[str, str] = {}  # object of a non-drawn sibling -> its counterpart in the representative
    boxes: list[Box] = []
    stack: list[str | None] = [None]
    while stack:
        parent = stack.pop()
        kids = b.children.get(parent, [])
        collapse = parent is None or b.host.get(parent) is None
        groups: dict[int, list[str]] = {}
        for kid in kids:
            key = b.sig[kid] if collapse else -1 - len(groups)
            groups.setdefault(key, []).append(kid)
        for members in groups.values():
            rep = members[0]
            o = inv.objects[rep]
            boxes.append(Box(rep, o, parent, len(members), tuple(members[:MAX_LISTED]), rep in b.pinned))
            for other in members[1:]:
                _pair(b, other, rep, alias)
            stack.append(rep)
    drawn_ids = {box.id for box in boxes}
    for oid in inv.objects:
        cur = oid
        while cur not in drawn_ids:
            cur = alias[cur]
        drawing.drawn[oid] = cur
        drawing.weight[cur] = drawing.weight.get(cur, 0) + 1
    drawing.boxes = sorted(boxes, key=lambda x: x.id)
    _wires(drawing, b)
    _domains(drawing, b)
    _classes(drawing)
    return drawing


def _pair(b: _Builder, member: str, rep: str, alias: dict[str, str]) -> None:
    """Map `member`'s subtree onto `rep`'s: alike subtrees pair up child by child in (class, id) order."""
    stack = [(member, rep)]
    while stack:
        m, r = stack.pop()
        alias[m] = r
        mk = sorted(b.children.get(m, []), key=lambda c: (b.sig[c], c))
        rk = sorted(b.children.get(r, []), key=lambda c: (b.sig[c], c))
        stack.extend(zip(mk, rk, strict=True))


def _wires(drawing: Drawing, b: _Builder) -> None:
    groups: dict[tuple[str, str, str, int, str], list[Link]] = {}
    for link in drawing.inventory.links.values():
        if link.a not in drawing.drawn or link.b not in drawing.drawn:
            continue  # validation rejects such links; a wire to nothing would break the page
        a, z = drawing.drawn[link.a], drawing.drawn[link.b]
        if a > z:
            a, z = z, a
        groups.setdefault((a, z, link.kind, link.mbps, link.state or ""), []).append(link)
    wires = []
    for i, key in enumerate(sorted(groups)):
        links = sorted(groups[key], key=lambda k: k.id)
        a, z, kind, mbps, state = key
        cls = path_class(links[0], b.host)
        ids = tuple(k.id for k in links[:MAX_LISTED])
        wires.append(Wire(f"w{i}", a, z, kind, mbps, state or None, cls, len(links), ids, links[0]))
        for link in links:
            drawing.wire_of[link.id] = f"w{i}"
    drawing.wires = wires


def _domains(drawing: Drawing, b: _Builder) -> None:
    """Union-find over the drawn scale-up wires that work (down links join nothing)."""
    inv = drawing.inventory
    up: dict[str, str] = {}

    def find(x: str) -> str:
        up.setdefault(x, x)
        while up[x] != x:
            up[x] = up[up[x]]
            x = up[x]
        return x

    for wire in drawing.wires:
        if wire.path_class == "scale-up" and wire.state != "down":
            ra, rz = find(wire.a), find(wire.b)
            if ra != rz:
                up[max(ra, rz)] = min(ra, rz)
    parts: dict[str, list[str]] = {}
    for x in sorted(up):
        parts.setdefault(find(x), []).append(x)
    domains = []
    for members in sorted(parts.values()):
        hosts = {b.host.get(m) for m in members}
        host = hosts.pop() if len(hosts) == 1 else None
        gpu_ids = [m for m in members if m in inv.objects and inv.objects[m].kind == "gpu"]
        # Inside one node a domain is that node's (its alike siblings have their own); across
        # nodes, the representatives stand for every GPU of the domain.
        gpus = len(gpu_ids) if host is not None else sum(drawing.weight.get(m, 0) for m in gpu_ids)
        if len(gpu_ids) < 2 and gpus < 2:
            continue
        domains.append(Domain(f"domain:{members[0]}", gpus, tuple(members), host))
    drawing.domains = domains
    # A domain inside one node is drawn as a group there: its members move into it.
    group_of = {m: d.id for d in domains if d.host is not None for m in d.members}
    drawing.boxes = [
        Box(x.id, x.obj, group_of[x.id], x.count, x.members, x.focus) if x.id in group_of else x for x in drawing.boxes
    ]


def _classes(drawing: Drawing) -> None:
    by_class: dict[str, list[Wire]] = {}
    for wire in drawing.wires:
        if wire.state != "down":
            by_class.setdefault(wire.path_class, []).append(wire)
    classes = []
    narrowest: set[str] = set()
    for cid, what in PATH_CLASSES:
        wires = by_class.get(cid, [])
        if not wires:
            continue
        low = min(w.mbps for w in wires)
        high = max(w.mbps for w in wires)
        ids = tuple(w.id for w in wires if w.mbps == low)
        classes.append(PathClass(cid, what, low, high, ids))
        if low < high:  # a class of one bandwidth has no narrower link to point at
            narrowest.update(ids)
    drawing.classes = classes
    drawing.wires = [
        Wire(w.id, w.a, w.b, w.kind, w.mbps, w.state, w.path_class, w.count, w.links, w.first, True)
        if w.id in narrowest
        else w
        for w in drawing.wires
    ]
