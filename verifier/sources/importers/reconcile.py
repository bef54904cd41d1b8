"""`topolog reconcile A B`: every disagreement between two descriptions of the same machines.

Each side is an inventory or a tool output (imported first). Nodes are matched by id, or as the
one node of each side. Devices are paired by identity, never by position nor by the names an
importer gives them: a NIC first by the names the OS knows it by (`mlx5_0`: nvidia-smi's NIC
legend, NCCL's `<net name>`, hwloc's OS devices), then any device by PCI bus id (domain width
normalised: nvidia-smi's `00000000:07:00.0` is `0000:07:00.0`), then serial or UUID. A GPU that
one side knows only by nvidia-smi's (or rocm-smi's) index is paired with the GPU of that rank in
the other side's PCI bus order (both tools number GPUs in PCI bus order); two captures of one tool
pair by the index it prints. Only devices that neither side identifies are paired by name, and
only when a side is an inventory (an importer's `gpu0` is its own invention).

What is left over is present on one side only, reported once, and takes part in no other
comparison, except what the other tool never lists: objects an importer inferred (host bridges,
sockets, switches drawn from nvidia-smi's classes); CPUs and NUMA nodes, which each tool cuts its
own way (compared between inventories only); NICs against a tool that describes none (rocm-smi,
amd-smi); and a NIC without an RDMA device against nvidia-smi (whose matrix lists RDMA devices
only) or an NCCL dump whose NICs are all RDMA devices.

Compared, for each pair: PCI bus id (when paired by something else), the class of the path between
every GPU pair and GPU-NIC pair, the PCIe uplink bandwidth, a NIC's port speed and a GPU's NUMA node
(by number, where each side states exactly one). Path classes are what each tool said: for an
nvidia-smi side, the matrix cell as printed; for others, the class of the path in the described
tree (NV<count>, XGMI for a direct xGMI link, PIX, PXB, PHB, NODE, SYS). PHB (one host bridge) is
told from NODE only when both sides know host bridges (nvidia-smi, and an hwloc import, which reads
them); otherwise PHB counts as NODE (NCCL and inventories do not model them). A device a dump lists
under several CPUs (`also_under`) has no stated class beyond its PCIe switches. A value labelled
`assumed` is not a measurement and is never compared; bandwidths within 1% agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.escape import one_line
from verifier.core.limits import read_limited
from verifier.sources.importers.build import ASSUMED
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.model import Inventory, Obj

ALWAYS = ("gpu", "nic")
IF_BOTH = ("nvswitch", "cpu", "memory")
INVENTORY_ONLY = ("cpu", "memory")  # each importer cuts CPUs differently (package, NUMA node, socket)
_ID_LABELS = ("name", "os_devices", "rdma_devices")  # the OS's names of a NIC, as each tool writes them
_TOOL_INDEX = ("nvidia_smi", "rocm_smi", "amd_smi")  # the column a tool prints a device under
TOLERANCE = 0.01
_BUSID = re.compile(r"^(?:([0-9a-f]{1,8}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$")
_CELL_DEVICE = re.compile(r"^(GPU\d+|NIC\d+|mlx5_\d+|[A-Za-z][\w.-]*_\d+)$")


@dataclass(frozen=True)
class ReconcileReport:
    """Every disagreement between two descriptions of the same machines, sorted."""

    items: list[Disagreement]

    @property
    def exit_code(self) -> int:
        return 1 if self.items else 0


@dataclass(frozen=True, order=True)
class Disagreement:
    subject: str
    what: str
    a: str
    b: str
    a_loc: SourceLocation
    b_loc: SourceLocation

    def text(self) -> str:
        """One line of the text report: the values and both places, escaped (a path may hold a newline)."""
        return one_line(f"{self.subject}: {self.what}: A {self.a} ({self.a_loc}), B {self.b} ({self.b_loc})")

    def to_dict(self) -> dict[str, object]:
        return {
            "subject": self.subject,
            "what": self.what,
            "a": self.a,
            "b": self.b,
            "a_location": str(self.a_loc),
            "b_location": str(self.b_loc),
        }


@dataclass
class Side:
    """One description: its inventory, and the path classes its tool printed (nvidia-smi), by object pair."""

    inventory: Inventory
    said: dict[frozenset[str], tuple[str, SourceLocation]] = field(default_factory=dict)


def detect_kind(path: Path) -> str:
    """What a file is, from its first bytes: a guess the user can override with --a-kind/--b-kind."""
    try:
        head = read_limited(path)[:4096].decode("utf-8", "replace")
    except OSError as err:
        raise TopologError.at(SourceLocation(str(path)), f"cannot read the file: {err.strerror}") from None
    from verifier.sources.importers.sniff import amd_kind

    if "<system" in head:
        return "nccl-xml"
    if "<topology" in head:
        return "hwloc"
    if "apiVersion" in head:
        return "inventory"
    if (amd := amd_kind(head)) is not None:
        return amd
    if any(ln.split()[:1] == ["GPU0"] for ln in head.splitlines()):
        return "nvidia-smi"
    if "switchname=" in head.lower() or "blockname=" in head.lower():
        return "slurm"
    raise TopologError.at(
        SourceLocation(str(path), 1),
        "cannot tell what this file is; give --a-kind/--b-kind "
        "(inventory, nvidia-smi, nccl-xml, hwloc, slurm, rocm-smi, amd-smi)",
    )


def load_side(path: Path, kind: str | None) -> Side:
    kind = kind or detect_kind(path)
    if kind == "inventory":
        return Side(load_inventory([path]))
    from verifier.sources.importers import import_files

    inv = import_files(kind, [path]).inventory
    side = Side(inv)
    if kind == "nvidia-smi":
        side.said = _nvidia_smi_cells(path, inv)
    return side


def _nvidia_smi_cells(path: Path, inv: Inventory) -> dict[frozenset[str], tuple[str, SourceLocation]]:
    """The matrix cells as nvidia-smi printed them, keyed by the imported objects (their `nvidia_smi` label).

    The import has already checked the matrix (square, symmetric, known classes), so this only reads it.
    """
    by_col = {o.labels["nvidia_smi"]: o.id for o in inv.objects.values() if "nvidia_smi" in o.labels}
    lines = read_limited(path).decode("utf-8", "replace").splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.split()[:1] == ["GPU0"] and ln.split()[1:2] != ["X"]), None)
    if start is None:
        return {}
    cols: list[str] = []
    for tok in lines[start].split():
        if not _CELL_DEVICE.match(tok):
            break
        cols.append(tok)
    out: dict[frozenset[str], tuple[str, SourceLocation]] = {}
    for i in range(start + 1, len(lines)):
        toks = lines[i].split()
        if not toks or toks[0] not in cols:
            break
        for col, cell in zip(cols, toks[1 : 1 + len(cols)], strict=False):
            a, b = by_col.get(toks[0]), by_col.get(col)
            if a is not None and b is not None and a != b:
                out.setdefault(frozenset((a, b)), ("SYS" if cell == "SOC" else cell, SourceLocation(str(path), i + 1)))
    return out


def reconcile(a: Inventory | Side, b: Inventory | Side) -> list[Disagreement]:
    sa = a if isinstance(a, Side) else Side(a)
    sb = b if isinstance(b, Side) else Side(b)
    nodes_a = sorted(o.id for o in sa.inventory.of_kind("node"))
    nodes_b = sorted(o.id for o in sb.inventory.of_kind("node"))
    if len(nodes_a) == 1 and len(nodes_b) == 1:
        pairs = [(nodes_a[0], nodes_b[0])]
    else:
        pairs = [(n, n) for n in sorted(set(nodes_a) | set(nodes_b))]
    out: list[Disagreement] = []
    for na, nb in pairs:
        out.extend(_node(sa, sb, na, nb))
    return sorted(out)


def _devices(inv: Inventory, node: str) -> dict[str, Obj]:
    prefix = node + "/"
    return {o.id[len(prefix) :]: o for o in inv.objects.values() if o.id.startswith(prefix)}


def busid(obj: Obj) -> str | None:
    """The PCI bus id with a 4-digit domain, lower case; None when absent or unreadable."""
    m = _BUSID.match((obj.labels.get("pci_busid") or "").strip().lower())
    if m is None:
        return None
    return f"{int(m.group(1) or '0', 16):04x}:{m.group(2)}:{m.group(3)}.{m.group(4)}"


def _serial(obj: Obj) -> str | None:
    for k in sorted(obj.labels):
        if k.lower().endswith(("serial", "uuid")) and obj.labels[k].strip():
            return obj.labels[k].strip().lower()
    return None


def _smi_index(obj: Obj) -> int | None:
    """GPU<k> of nvidia-smi or rocm-smi: both number GPUs in PCI bus order (rocm-smi sorts its devices
    by bus address, as seen on quad-GPU servers whose HIP order is the reverse: tmac1973/llama-toolchest#121).
    """
    col = obj.labels.get("nvidia_smi") or obj.labels.get("rocm_smi") or ""
    return int(col[3:]) if col.startswith("GPU") and col[3:].isascii() and col[3:].isdigit() else None


def _names(obj: Obj) -> set[str]:
    """The names the OS knows a NIC by (`mlx5_0`, `ib0`): nvidia-smi's legend, NCCL's net, hwloc's OS devices."""
    if obj.kind != "nic":
        return set()
    out: set[str] = set()
    for key in _ID_LABELS:
        out.update(n.strip() for n in obj.labels.get(key, "").split(",") if n.strip())
    return out


def _one(key: Callable[[Obj], str | None]) -> Callable[[Obj], set[str]]:
    def keys(obj: Obj) -> set[str]:
        k = key(obj)
        return {k} if k is not None else set()

    return keys


def _tool_index(obj: Obj) -> str | None:
    """The index a tool prints (nvidia-smi's `GPU3`, amd-smi's bus id): one tool's two captures pair by it."""
    for key in _TOOL_INDEX:
        if obj.labels.get(key):
            return f"{key}={obj.labels[key]}"
    return None


def pair_devices(xs: list[Obj], ys: list[Obj], by_name: bool = True) -> list[tuple[Obj | None, Obj | None]]:
    """Pairs of one kind by identity (OS name, bus id, serial/UUID, a tool's index, nvidia-smi's bus-order
    rank), then, with `by_name` (a side is an inventory, whose names are its author's), the rest by name.
    """
    pairs: list[tuple[Obj | None, Obj | None]] = []
    left, right = list(xs), list(ys)
    for key in (_names, _one(busid), _one(_serial), _one(_tool_index)):
        rmap: dict[str, Obj] = {}
        for o in right:
            for k in sorted(key(o)):
                rmap.setdefault(k, o)
        keep: list[Obj] = []
        for o in left:
            twin = next((rmap[k] for k in sorted(key(o)) if k in rmap and rmap[k] in right), None)
            if twin is not None:
                pairs.append((o, twin))
                right.remove(twin)
            else:
                keep.append(o)
        left = keep
    for one, other, flip in ((left, right, False), (right, left, True)):
        # nvidia-smi's GPU<k> is the k-th GPU in PCI bus order: rank the other side's GPUs by bus id.
        ranked = sorted(
            (o for o in (ys if not flip else xs) if busid(o) is not None and o.kind == "gpu"),
            key=lambda o: busid(o) or "",
        )
        for o in list(one):
            rank = _smi_index(o)
            if rank is None or busid(o) is not None or rank >= len(ranked) or ranked[rank] not in other:
                continue
            pairs.append((ranked[rank], o) if flip else (o, ranked[rank]))
            one.remove(o)
            other.remove(ranked[rank])
    unidentified = {o.id.rsplit("/", 1)[-1]: o for o in right if not _identified(o)} if by_name else {}
    for o in left:
        twin = unidentified.get(o.id.rsplit("/", 1)[-1])
        if twin is not None and not _identified(o):
            pairs.append((o, twin))
            right.remove(twin)
            del unidentified[o.id.rsplit("/", 1)[-1]]
        else:
            pairs.append((o, None))
    pairs.extend((None, o) for o in right)
    return pairs


def _identified(obj: Obj) -> bool:
    return busid(obj) is not None or _serial(obj) is not None or bool(_names(obj))


def _imported_from(inv: Inventory, node: str) -> str | None:
    return inv.objects[node].labels.get("imported_from")


def _rdma(inv: Inventory, node: str, nic: Obj) -> bool | None:
    """Whether a NIC has an RDMA device, where its tool says; None where it does not."""
    tool = _imported_from(inv, node)
    if tool == "nvidia-smi":
        return True  # its matrix lists RDMA devices only
    if tool == "hwloc":
        return "rdma_devices" in nic.labels  # hwloc lists every OS device: no OpenFabrics one, no RDMA
    if tool == "nccl-xml" and "name" in nic.labels:
        guid = nic.labels.get("guid", "").strip().lower()
        return guid not in ("", "0x0", "0")  # the IB plugin writes the port GUID; the socket transport 0x0
    return None


def _lists_rdma_only(inv: Inventory, node: str, nics: list[Obj]) -> bool:
    """nvidia-smi lists RDMA NICs only; an NCCL dump whose NICs are all RDMA devices uses the IB transport."""
    tool = _imported_from(inv, node)
    if tool == "nvidia-smi":
        return True
    return tool == "nccl-xml" and bool(nics) and all(_rdma(inv, node, o) for o in nics)


def _stated(obj: Obj) -> bool:
    """An object the tool states, not one its importer inferred (host bridges, sockets, switches from classes)."""
    return obj.labels.get("inferred") != "true"


def _node(sa: Side, sb: Side, na: str, nb: str) -> list[Disagreement]:
    a, b = sa.inventory, sb.inventory
    out: list[Disagreement] = []
    fa, fb = SourceLocation(a.files[0] if a.files else "A"), SourceLocation(b.files[0] if b.files else "B")
    if na not in a.objects or nb not in b.objects:
        missing_a = na not in a.objects
        loc = (b if missing_a else a).objects[nb if missing_a else na].loc
        return [
            Disagreement(
                na,
                "node",
                "missing" if missing_a else "present",
                "present" if missing_a else "missing",
                fa if missing_a else loc,
                loc if missing_a else fb,
            )
        ]
    da = {k: o for k, o in _devices(a, na).items() if _stated(o)}
    db = {k: o for k, o in _devices(b, nb).items() if _stated(o)}
    kinds_a = {o.kind for o in da.values()}
    kinds_b = {o.kind for o in db.values()}
    imported = _imported_from(a, na) is not None or _imported_from(b, nb) is not None
    compared = [
        k
        for k in (*ALWAYS, *IF_BOTH)
        if k in ALWAYS or (k in kinds_a and k in kinds_b and not (imported and k in INVENTORY_ONLY))
    ]
    matched: list[tuple[Obj, Obj]] = []
    numa = (numa_inside(a), numa_inside(b))
    for kind in compared:
        xs = sorted((o for o in da.values() if o.kind == kind), key=lambda o: o.id)
        ys = sorted((o for o in db.values() if o.kind == kind), key=lambda o: o.id)
        # A NIC without an RDMA device is not one that nvidia-smi (or an NCCL dump on the IB transport) lists.
        skip_a = kind == "nic" and _lists_rdma_only(b, nb, ys)
        skip_b = kind == "nic" and _lists_rdma_only(a, na, xs)
        if kind == "nic" and any(
            inv.objects[n].labels.get("nics_described") == "false" and _imported_from(inv, n) != "nvidia-smi"
            for inv, n in ((a, na), (b, nb))
        ):
            continue  # rocm-smi and amd-smi say nothing about NICs: neither side lacks one
        # nvidia-smi without NIC columns (nics_described "false" too) still says the host shows no RDMA
        # device: a NIC the other side gives one (or may) is missing there, one it says has none is
        # skipped below, as with any nvidia-smi file.
        # Importers invent their ids (gpu0, nic1): only an inventory's author names devices.
        for oa, ob in pair_devices(xs, ys, by_name=not (_imported_from(a, na) and _imported_from(b, nb))):
            if oa is None or ob is None:
                present = oa or ob
                assert present is not None
                if (oa is not None and skip_a and _rdma(a, na, oa) is False) or (
                    ob is not None and skip_b and _rdma(b, nb, ob) is False
                ):
                    continue
                out.append(
                    Disagreement(
                        _subject(na, oa, ob),
                        f"{kind} present on one side only",
                        "present" if oa else "missing",
                        "present" if ob else "missing",
                        oa.loc if oa else fa,
                        ob.loc if ob else fb,
                    )
                )
                continue
            matched.append((oa, ob))
            out.extend(_compare(a, b, na, oa, ob, numa))
    gpus = [(x, y) for x, y in matched if x.kind == "gpu"]
    nics = [(x, y) for x, y in matched if x.kind == "nic"]
    ca, cb = _Classes(a), _Classes(b)
    phb = (bool(sa.said) or ca.host_bridges) and (bool(sb.said) or cb.host_bridges)
    # A hand-written NCCL_TOPO_FILE lists no NVLink (nvlinks_described "false"): the other side's NV#
    # between two GPUs is not contradicted by it, and the PCIe class NV# hides cannot be compared.
    blind = (_nvlinks_unknown(a, na), _nvlinks_unknown(b, nb))
    for i, (ga, gb) in enumerate(gpus):
        for oa, ob in [*gpus[i + 1 :], *nics]:
            xa, la = _class(sa, ca, ga.id, oa.id, ga.loc)
            xb, lb = _class(sb, cb, gb.id, ob.id, gb.loc)
            if oa.kind == "gpu" and ((blind[0] and xb.startswith("NV")) or (blind[1] and xa.startswith("NV"))):
                continue
            if not phb:
                xa, xb = ("NODE" if x == "PHB" else x for x in (xa, xb))
            if xa != xb and "?" not in (xa, xb):
                subject = f"{_subject(na, ga, gb)} - {_subject(na, oa, ob)}"
                out.append(Disagreement(subject, "path class", xa, xb, la, lb))
    return out


def _nvlinks_unknown(inv: Inventory, node: str) -> bool:
    return inv.objects[node].labels.get("nvlinks_described") == "false"


def _subject(node: str, oa: Obj | None, ob: Obj | None) -> str:
    ra = oa.id.rsplit("/", 1)[-1] if oa is not None else None
    rb = ob.id.rsplit("/", 1)[-1] if ob is not None else None
    if ra is not None and rb is not None and ra != rb:
        return f"{node}/{ra} (B: {rb})"
    return f"{node}/{ra or rb}"


def _compare(
    a: Inventory, b: Inventory, node: str, oa: Obj, ob: Obj, numa: tuple[dict[str, set[str]], dict[str, set[str]]]
) -> list[Disagreement]:
    out: list[Disagreement] = []
    subject = _subject(node, oa, ob)
    bus_a, bus_b = busid(oa), busid(ob)
    if bus_a and bus_b and bus_a != bus_b:
        out.append(Disagreement(subject, "PCI bus id", bus_a, bus_b, oa.loc, ob.loc))
    ua, ub = _uplink(a, oa), _uplink(b, ob)
    if ua is not None and ub is not None and _differ(ua, ub):
        out.append(Disagreement(subject, "PCIe uplink bandwidth (MB/s)", str(ua), str(ub), oa.loc, ob.loc))
    pa, pb = oa.quantities.get("bandwidth_mbps"), ob.quantities.get("bandwidth_mbps")
    if oa.kind == "nic" and pa is not None and pb is not None and _differ(pa, pb):
        out.append(Disagreement(subject, "port speed (MB/s)", str(pa), str(pb), oa.loc, ob.loc))
    if oa.kind == "gpu":
        xa, xb = numa_of(a, oa, numa[0]), numa_of(b, ob, numa[1])
        if xa is not None and xb is not None and xa != xb:
            out.append(Disagreement(subject, "NUMA node", xa, xb, oa.loc, ob.loc))
    return out


def numa_of(inv: Inventory, obj: Obj, inside: dict[str, set[str]]) -> str | None:
    """The one NUMA node a device's description puts it on, or None where it states none or several.

    nvidia-smi's NUMA Affinity of the GPU; else the nearest enclosing object that says: a `numa` label
    (NCCL's `<cpu numaid>`, the sockets and CPUs importers draw from a NUMA column), or the NUMA nodes
    (memory objects labelled `numa`, as hwloc's NUMANodes: `inside`, from numa_inside) inside it, when
    there is exactly one.
    """
    own = obj.labels.get("numa_affinity", "").strip()
    if own:
        return own if own.isascii() and own.isdigit() else None
    cur = obj.parent
    while cur is not None:
        here = inv.objects[cur]
        if "also_under" in here.labels:
            return None  # a dump that lists it under several CPUs states no one NUMA node
        stated = here.labels.get("numa", "").strip()
        if stated:
            return stated if stated.isascii() and stated.isdigit() else None
        nodes = inside.get(cur)
        if nodes:
            return next(iter(nodes)) if len(nodes) == 1 else None
        cur = here.parent
    return None


def numa_inside(inv: Inventory) -> dict[str, set[str]]:
    """For each object, the NUMA nodes (memory objects labelled `numa`) inside it."""
    out: dict[str, set[str]] = {}
    for o in inv.objects.values():
        numa = o.labels.get("numa", "").strip() if o.kind == "memory" else ""
        cur = o.parent
        while numa and cur is not None:
            out.setdefault(cur, set()).add(numa)
            cur = inv.objects[cur].parent
    return out


def _class(side: Side, computed: _Classes, x: str, y: str, loc: SourceLocation) -> tuple[str, SourceLocation]:
    said = side.said.get(frozenset((x, y)))
    if said is not None:
        return said
    if side.said:
        return "?", loc  # an nvidia-smi side said nothing about this pair: nothing to compare
    return computed.cls(x, y), loc


def _differ(x: int, y: int) -> bool:
    return abs(x - y) > TOLERANCE * max(x, y)


def _uplink(inv: Inventory, obj: Obj) -> int | None:
    for lk in inv.links.values():
        if lk.kind == "pcie" and {lk.a, lk.b} == {obj.id, obj.parent} and ASSUMED not in lk.labels:
            return lk.mbps
    return None


class _Classes:
    """nvidia-smi's path classes computed from an inventory's links and containment."""

    def __init__(self, inv: Inventory) -> None:
        self.inv = inv
        # Host bridges the description states (hwloc reads them; nvidia-smi's are inferred from PHB).
        self.host_bridges = any(
            o.labels.get("role") == "host_bridge" and o.labels.get("inferred") != "true" for o in inv.objects.values()
        )
        self.nv: dict[frozenset[str], int | None] = {}
        self.to_switch: dict[str, int | None] = {}
        self.xgmi: set[frozenset[str]] = set()
        # xGMI links an importer could not tell from routed paths (hwloc's ROCm SMI backend): not stated.
        self.xgmi_unsure: set[frozenset[str]] = set()
        for lk in inv.links.values():
            if lk.state == "down":
                continue
            count = lk.attrs.get("count")
            if lk.kind == "xgmi" and {inv.objects[lk.a].kind, inv.objects[lk.b].kind} == {"gpu"}:
                unsure = lk.labels.get("inferred") == "true"
                (self.xgmi_unsure if unsure else self.xgmi).add(frozenset((lk.a, lk.b)))
            elif lk.kind == "nvlink":
                pair = frozenset((lk.a, lk.b))
                prev = self.nv.get(pair, 0)
                self.nv[pair] = None if count is None or prev is None else prev + count
            elif lk.kind == "nvswitch":
                gpu = lk.a if inv.objects[lk.a].kind == "gpu" else lk.b if inv.objects[lk.b].kind == "gpu" else None
                if gpu is not None:
                    prev = self.to_switch.get(gpu, 0)
                    self.to_switch[gpu] = None if count is None or prev is None else prev + count

    def chain(self, oid: str) -> list[str]:
        out: list[str] = []
        cur = self.inv.objects[oid].parent
        while cur is not None and len(out) < 1000:
            out.append(cur)
            cur = self.inv.objects[cur].parent
        return out

    def cls(self, x: str, y: str) -> str:
        pair = frozenset((x, y))
        if pair in self.xgmi:
            return "XGMI"  # a direct xGMI link (AMD's tools give no link count)
        if pair in self.xgmi_unsure:
            return "?"
        if pair in self.nv:
            n = self.nv[pair]
            return f"NV{n}" if n is not None else "?"
        if x in self.to_switch and y in self.to_switch:
            nx, ny = self.to_switch[x], self.to_switch[y]
            return f"NV{min(nx, ny)}" if nx is not None and ny is not None else "?"
        cx, cy = self.chain(x), self.chain(y)
        common = next((c for c in cx if c in cy), None)
        if common is None:
            return "?"
        obj = self.inv.objects[common]
        kind = obj.kind
        if kind == "pcie_switch":
            return "PIX" if cx[0] == cy[0] == common else "PXB"
        if self.unplaced(x, cx) or self.unplaced(y, cy):
            # A dump that lists a device under several CPUs does not say which one it hangs on: its
            # class to anything beyond its own PCIe switches is not stated, so not compared.
            return "?"
        if kind == "cpu" and obj.labels.get("role") == "host_bridge":
            return "PHB"
        if kind in ("cpu", "socket", "die", "memory"):
            return "NODE"
        return "SYS"

    def unplaced(self, oid: str, chain: list[str]) -> bool:
        return any("also_under" in self.inv.objects[c].labels for c in (oid, *chain))
