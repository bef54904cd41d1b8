"""`nvidia-smi topo -m` matrices to an inventory.

Accepts the tab-separated output as printed, the space-aligned form it takes when copied
from a terminal, and the older form whose NIC columns are named `mlx5_N` with no NIC legend.
Cells: X (self), NV# (a bonded set of # NVLinks), PIX, PXB, PHB, NODE, SYS (SOC in old
drivers). The matrix states how devices relate, not the PCIe tree, so the tree is rebuilt as
the smallest one consistent with it: a `pcie_switch` per group of two or more devices that are
PIX to each other, another per PXB group, a `cpu<N>` per NUMA domain (NUMA Affinity column, or
the NODE groups). Those switches carry `inferred: "true"`; PCIe bandwidths are not in the
output, so their links carry Gen4 x16 labelled `assumed`, as do NVLink bandwidths (25 GB/s per link).
"""

from __future__ import annotations

import re
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.importers.build import (
    ASSUMED,
    DEFAULT_NVLINK_LINK_MBPS,
    DEFAULT_PCIE,
    Builder,
    Imported,
    pcie_mbps,
    safe_name,
)

_TRAILING = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_RANK = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}
_ALIASES = {"SOC": "SYS"}
_NV = re.compile(r"^NV(\d+)$")
_DEVICE = re.compile(r"^(GPU\d+|NIC\d+|mlx5_\d+|[A-Za-z][\w.-]*_\d+)$")


def import_nvidia_smi(paths: list[Path], node: str | None = None) -> Imported:
    b = Builder([str(p) for p in paths])
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise TopologError.at(SourceLocation(str(path)), f"cannot read the file as UTF-8 text: {err}") from None
        name = node if node is not None and len(paths) == 1 else safe_name(path.stem)
        _read(b, text, str(path), name)
    return b.finish()


class _Union:
    def __init__(self, items: list[str]) -> None:
        self.up = {i: i for i in items}

    def find(self, x: str) -> str:
        while self.up[x] != x:
            self.up[x] = self.up[self.up[x]]
            x = self.up[x]
        return x

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.up[max(ra, rb)] = min(ra, rb)

    def groups(self) -> list[list[str]]:
        out: dict[str, list[str]] = {}
        for x in self.up:
            out.setdefault(self.find(x), []).append(x)
        return sorted(out.values())


def _read(b: Builder, text: str, file: str, node: str) -> None:
    lines = text.splitlines()
    # The header is the only line that starts with whitespace and then the first column name.
    start = next((i for i, ln in enumerate(lines) if ln[:1] in (" ", "\t") and ln.split()[:1] == ["GPU0"]), None)
    if start is None:
        b.error(
            SourceLocation(file, 1),
            "no `nvidia-smi topo -m` header found; expected a line starting with "
            "whitespace and then GPU0 GPU1 ... (the column names)",
        )
        return
    header = lines[start]
    for col in _TRAILING:
        header = header.replace(col, col.replace(" ", "\x00"))
    columns = header.split()
    devices = [c for c in columns if "\x00" not in c]
    trailing = [c.replace("\x00", " ") for c in columns if "\x00" in c]
    hloc = SourceLocation(file, start + 1)
    for c in devices:
        if not _DEVICE.match(c):
            b.error(
                hloc,
                f"column {c!r}; expected device columns (GPU0, NIC0, mlx5_0) then "
                f"{', '.join(repr(t) for t in _TRAILING)}",
            )
    if columns[: len(devices)] != devices:
        b.error(hloc, "device columns must come before CPU Affinity / NUMA Affinity")
    cells: dict[tuple[str, str], tuple[str, SourceLocation]] = {}
    extra: dict[str, dict[str, str]] = {}
    rowloc: dict[str, SourceLocation] = {}
    legend: dict[str, str] = {}
    i = start + 1
    while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith("Legend"):
        loc = SourceLocation(file, i + 1)
        tokens = lines[i].split()
        label = tokens[0]
        if label not in devices:
            b.error(loc, f"row {label!r} is not one of the columns ({', '.join(devices)})")
        elif label in rowloc:
            b.error(loc, f"row {label!r} appears twice (first on line {rowloc[label].line})")
        else:
            rowloc[label] = loc
            values = tokens[1 : 1 + len(devices)]
            if len(values) < len(devices):
                b.error(loc, f"row {label} has {len(values)} cells; expected {len(devices)}, one per device column")
            for col, value in zip(devices, values, strict=False):
                cells[(label, col)] = (_ALIASES.get(value, value), loc)
            extra[label] = dict(zip(trailing, tokens[1 + len(devices) :], strict=False))
        i += 1
    for j in range(i, len(lines)):
        m = re.match(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$", lines[j])
        if m:
            legend[m.group(1)] = m.group(2)
    missing = [d for d in devices if d not in rowloc]
    if missing:
        b.error(hloc, f"no row for {', '.join(missing)}; the matrix must be square")
    if b.errors:
        return
    _build(b, node, devices, cells, extra, rowloc, legend, hloc)


def _build(
    b: Builder,
    node: str,
    devices: list[str],
    cells: dict[tuple[str, str], tuple[str, SourceLocation]],
    extra: dict[str, dict[str, str]],
    rowloc: dict[str, SourceLocation],
    legend: dict[str, str],
    hloc: SourceLocation,
) -> None:
    nv: dict[frozenset[str], int] = {}
    rank: dict[frozenset[str], int] = {}
    for (r, c), (value, loc) in sorted(cells.items()):
        back = cells[(c, r)][0]
        if r == c:
            if value != "X":
                b.error(loc, f"{r} to itself is {value!r}; expected X")
            continue
        m = _NV.match(value)
        if m is None and value not in _RANK:
            b.error(loc, f"{r} to {c} is {value!r}; expected X, NV<count>, PIX, PXB, PHB, NODE or SYS")
            continue
        if value != back:
            b.error(loc, f"{r} to {c} is {value} but {c} to {r} is {back}; the matrix must be symmetric")
            continue
        pair = frozenset((r, c))
        if m is not None:
            if not (r.startswith("GPU") and c.startswith("GPU")):
                b.error(loc, f"{r} to {c} is {value}, but only GPUs have NVLinks")
            nv[pair] = int(m.group(1))
        else:
            rank[pair] = _RANK[value]
    if b.errors:
        return
    gpus = [d for d in devices if d.startswith("GPU")]
    nics = [d for d in devices if not d.startswith("GPU")]
    ids = {d: f"{node}/gpu{d[3:]}" for d in gpus}
    for k, d in enumerate(nics):
        ids[d] = f"{node}/nic{k}"
    b.obj(node, "node", None, hloc, labels={"source": str(hloc), "imported_from": "nvidia-smi"})
    # NUMA domains: the NUMA Affinity column where it is given, else the NODE groups.
    numa: dict[str, str] = {}
    for d in devices:
        given = extra.get(d, {}).get("NUMA Affinity")
        if given is not None and given.isdigit():
            numa[d] = given
        elif given not in (None, "N/A"):
            b.error(rowloc[d], f"NUMA Affinity of {d} is {given!r}; expected a NUMA node number or N/A")
    groups = {t: _groups(devices, rank, t) for t in (1, 2, 4)}
    for group in groups[4]:
        known = sorted({numa[d] for d in group if d in numa})
        if len(known) > 1:
            b.error(hloc, f"{', '.join(group)} are NODE or closer to each other but in NUMA nodes {', '.join(known)}")
        for d in group:
            if d not in numa and known:
                numa[d] = known[0]
    unknown = 0
    for group in groups[4]:
        if not any(d in numa for d in group):
            for d in group:
                numa[d] = f"x{unknown}"
            unknown += 1
    cpus: dict[str, str] = {}
    for d in devices:
        cpu = f"{node}/cpu{numa[d]}" if not numa[d].startswith("x") else f"{node}/cpu-unknown{numa[d][1:]}"
        if cpu not in cpus.values():
            labels = {"source": str(rowloc[d]), "inferred": "true"}
            if not numa[d].startswith("x"):
                labels["numa"] = numa[d]
            aff = extra.get(d, {}).get("CPU Affinity")
            if aff and aff != "N/A":
                labels["affinity"] = aff
            b.obj(cpu, "cpu", node, rowloc[d], labels=labels)
        cpus[d] = cpu
    # Switches: one per PXB group of 2+ devices, inside it one per PIX group of 2+ devices.
    parent = dict(cpus)
    members: dict[str, set[str]] = {}
    pix_sets = [set(g) for g in groups[1]]
    k = 0
    for level in (2, 1):
        for group in groups[level]:
            if len(group) < 2 or members.get(parent[group[0]]) == set(group):
                continue  # a PIX group that is its whole PXB group is that same switch
            up = parent[group[0]]
            sid = f"{node}/pcisw{k}"
            k += 1
            b.obj(
                sid,
                "pcie_switch",
                up,
                rowloc[group[0]],
                labels={
                    "inferred": "true",
                    "source": str(rowloc[group[0]]),
                    "members": ",".join(group),
                    "class": "PIX" if set(group) in pix_sets else "PXB",
                },
            )
            b.link(sid, up, "pcie", pcie_mbps(*DEFAULT_PCIE), rowloc[group[0]], labels={ASSUMED: "bandwidth"})
            members[sid] = set(group)
            for d in group:
                parent[d] = sid
    for d in devices:
        labels = {"source": str(rowloc[d]), "nvidia_smi": d}
        if d in legend:
            labels["name"] = legend[d]
        elif not d.startswith(("GPU", "NIC")):
            labels["name"] = d
        aff = extra.get(d, {}).get("CPU Affinity")
        if aff and aff != "N/A":
            labels["cpu_affinity"] = aff
        b.obj(ids[d], "gpu" if d in gpus else "nic", parent[d], rowloc[d], labels=labels)
        b.link(ids[d], parent[d], "pcie", pcie_mbps(*DEFAULT_PCIE), rowloc[d], labels={ASSUMED: "bandwidth"})
    for pair, count in sorted(nv.items(), key=lambda kv: sorted(kv[0])):
        a, c = sorted(pair, key=devices.index)
        b.link(
            ids[a],
            ids[c],
            "nvlink",
            count * DEFAULT_NVLINK_LINK_MBPS,
            cells[(a, c)][1],
            attrs={"count": count},
            labels={ASSUMED: "bandwidth"},
        )


def _groups(devices: list[str], rank: dict[frozenset[str], int], level: int) -> list[list[str]]:
    u = _Union(devices)
    for pair, r in rank.items():
        if r <= level:
            a, c = sorted(pair)
            u.join(a, c)
    return [sorted(g, key=devices.index) for g in u.groups()]
