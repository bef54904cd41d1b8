"""`topolog reconcile A B`: every disagreement between two descriptions of the same machines.

Each side is an inventory or a tool output (imported first). Devices are matched by id: the
importers name GPUs and NICs in PCI bus order, the order nvidia-smi numbers them, so `gpu3` is
the same GPU in every description. When each side describes exactly one node, the nodes are
matched whatever their names. Compared: GPUs and NICs (always), NVSwitches, CPUs and memories
(when both sides describe some), each device's PCI bus id, the class of the path between every
GPU pair and GPU-NIC pair (NV<count>, PIX, PXB, NODE, SYS: nvidia-smi's classes, with its PHB
counted as NODE because NCCL and hwloc do not tell host bridges apart), the bandwidth of each
device's PCIe uplink and each NIC's port speed. A value labelled `assumed` is not a
measurement and is never compared; bandwidths within 1% agree (PCIe Gen4 x16 is 31504 MB/s in
topolog's table and 31508 in hwloc's arithmetic).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.importers.build import ASSUMED
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.model import Inventory, Obj

ALWAYS = ("gpu", "nic")
IF_BOTH = ("nvswitch", "cpu", "memory")
TOLERANCE = 0.01


@dataclass(frozen=True, order=True)
class Disagreement:
    subject: str
    what: str
    a: str
    b: str
    a_loc: SourceLocation
    b_loc: SourceLocation

    def text(self) -> str:
        return f"{self.subject}: {self.what}: A {self.a} ({self.a_loc}), B {self.b} ({self.b_loc})"

    def to_dict(self) -> dict[str, object]:
        return {
            "subject": self.subject,
            "what": self.what,
            "a": self.a,
            "b": self.b,
            "a_location": str(self.a_loc),
            "b_location": str(self.b_loc),
        }


def detect_kind(path: Path) -> str:
    """What a file is, from its first bytes: a guess the user can override with --a-kind/--b-kind."""
    try:
        head = path.read_bytes()[:4096].decode("utf-8", "replace")
    except OSError as err:
        raise TopologError.at(SourceLocation(str(path)), f"cannot read the file: {err.strerror}") from None
    if "<system" in head:
        return "nccl-xml"
    if "<topology" in head:
        return "hwloc"
    if "apiVersion" in head:
        return "inventory"
    if any(ln.split()[:1] == ["GPU0"] for ln in head.splitlines()):
        return "nvidia-smi"
    if "switchname=" in head.lower() or "blockname=" in head.lower():
        return "slurm"
    raise TopologError.at(
        SourceLocation(str(path), 1),
        "cannot tell what this file is; give --a-kind/--b-kind (inventory, nvidia-smi, nccl-xml, hwloc, slurm)",
    )


def load_side(path: Path, kind: str | None) -> Inventory:
    kind = kind or detect_kind(path)
    if kind == "inventory":
        return load_inventory([path])
    from verifier.sources.importers import import_files

    return import_files(kind, [path]).inventory


def reconcile(a: Inventory, b: Inventory) -> list[Disagreement]:
    nodes_a = sorted(o.id for o in a.of_kind("node"))
    nodes_b = sorted(o.id for o in b.of_kind("node"))
    if len(nodes_a) == 1 and len(nodes_b) == 1:
        pairs = [(nodes_a[0], nodes_b[0])]
    else:
        pairs = [(n, n) for n in sorted(set(nodes_a) | set(nodes_b))]
    out: list[Disagreement] = []
    for na, nb in pairs:
        out.extend(_node(a, b, na, nb))
    return sorted(out)


def _devices(inv: Inventory, node: str) -> dict[str, Obj]:
    prefix = node + "/"
    return {o.id[len(prefix) :]: o for o in inv.objects.values() if o.id.startswith(prefix)}


def _node(a: Inventory, b: Inventory, na: str, nb: str) -> list[Disagreement]:
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
    da, db = _devices(a, na), _devices(b, nb)
    kinds_a = {o.kind for o in da.values()}
    kinds_b = {o.kind for o in db.values()}
    compared = set(ALWAYS) | {k for k in IF_BOTH if k in kinds_a and k in kinds_b}
    for name in sorted(set(da) | set(db)):
        oa, ob = da.get(name), db.get(name)
        subject = f"{na}/{name}"
        if oa is None or ob is None:
            present = oa or ob
            assert present is not None
            if present.kind in compared:
                out.append(
                    Disagreement(
                        subject,
                        f"{present.kind} present on one side only",
                        "present" if oa else "missing",
                        "present" if ob else "missing",
                        oa.loc if oa else fa,
                        ob.loc if ob else fb,
                    )
                )
            continue
        if oa.kind not in compared and ob.kind not in compared:
            continue
        if oa.kind != ob.kind:
            out.append(Disagreement(subject, "kind", oa.kind, ob.kind, oa.loc, ob.loc))
            continue
        bus_a, bus_b = oa.labels.get("pci_busid"), ob.labels.get("pci_busid")
        if bus_a and bus_b and bus_a.lower() != bus_b.lower():
            out.append(Disagreement(subject, "PCI bus id", bus_a, bus_b, oa.loc, ob.loc))
        ua, ub = _uplink(a, oa), _uplink(b, ob)
        if ua is not None and ub is not None and _differ(ua, ub):
            out.append(Disagreement(subject, "PCIe uplink bandwidth (MB/s)", str(ua), str(ub), oa.loc, ob.loc))
        pa, pb = oa.quantities.get("bandwidth_mbps"), ob.quantities.get("bandwidth_mbps")
        if oa.kind == "nic" and pa is not None and pb is not None and _differ(pa, pb):
            out.append(Disagreement(subject, "port speed (MB/s)", str(pa), str(pb), oa.loc, ob.loc))
    gpus = sorted(n for n in set(da) & set(db) if da[n].kind == "gpu" and db[n].kind == "gpu")
    nics = sorted(n for n in set(da) & set(db) if da[n].kind == "nic" and db[n].kind == "nic")
    ca, cb = _Classes(a), _Classes(b)
    for i, g in enumerate(gpus):
        for other in [*gpus[i + 1 :], *nics]:
            xa, xb = ca.cls(da[g].id, da[other].id), cb.cls(db[g].id, db[other].id)
            if xa != xb and "?" not in (xa, xb):
                out.append(Disagreement(f"{na}/{g} - {na}/{other}", "path class", xa, xb, da[g].loc, db[g].loc))
    return out


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
        self.nv: dict[frozenset[str], int | None] = {}
        self.to_switch: dict[str, int | None] = {}
        for lk in inv.links.values():
            if lk.state == "down":
                continue
            count = lk.attrs.get("count")
            if lk.kind == "nvlink":
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
        kind = self.inv.objects[common].kind
        if kind == "pcie_switch":
            return "PIX" if cx[0] == cy[0] == common else "PXB"
        if kind in ("cpu", "socket", "die", "memory"):
            return "NODE"
        return "SYS"


def render(items: list[Disagreement], fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"disagreements": [d.to_dict() for d in items]}, indent=2, sort_keys=True) + "\n"
    if not items:
        return "The two descriptions agree.\n"
    return "".join(d.text() + "\n" for d in items) + f"{len(items)} disagreement(s).\n"
