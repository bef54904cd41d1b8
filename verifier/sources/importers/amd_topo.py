"""What `rocm-smi --showtopo` and `amd-smi topology` say about one node, and the inventory built from it.

Both tools print GPU-by-GPU tables read from the amdgpu KFD topology (sysfs io_links):

- weight: a cost, not a bandwidth. Each physical xGMI hop adds 15 (a direct xGMI link weighs 15,
  a route through one other GPU 30); a PCIe segment adds 20 (the KFD's io_link weight);
- hops: an abstracted step count, not the number of xGMI links: 1 = reachable over xGMI (however
  many physical links), 2 = over PCIe within one CPU NUMA node, 3 = over PCIe across NUMA nodes;
- link type: XGMI or PCIE;
- amd-smi only: a NUMA BW table of `min-max` MB/s per pair (`0-0` or N/A when the driver does not say);
- rocm-smi only: the NUMA node of each GPU.

So a direct xGMI link is an XGMI pair of weight 15: it becomes an `xgmi` link. A pair of weight
30, 45, ... is reached through other GPUs and gets no link of its own. The GPU's NUMA node (when
stated) becomes its `cpu<N>` parent; without it, GPUs two hops apart over PCIe share a
`cpu-unknown<k>` (the hops table says they share a NUMA node), and others sit under the node
with a note. Bandwidths the tools do not state are documented defaults labelled `assumed`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from verifier.core.errors import SourceLocation
from verifier.core.limits import refuse_matrix
from verifier.sources.importers.build import (
    ASSUMED,
    DEFAULT_PCIE,
    Builder,
    Imported,
    pcie_mbps,
    read_tool_text,
    safe_name,
    whole,
)

XGMI_HOP_WEIGHT = 15
"""The KFD adds 15 to a route's weight for each physical xGMI hop (amdgpu, kfd_topology / amd-smi docs)."""
DEFAULT_XGMI_MBPS = 50000
"""Per direction, per xGMI link (xGMI 3: 25 GT/s x16, as on MI200), when the tool does not state a bandwidth."""

Pair = tuple[str, str]


@dataclass
class Cell:
    value: str
    loc: SourceLocation


@dataclass
class AmdTopo:
    """The tables of one tool output, keyed by the tool's own GPU names (GPU0.. or bus ids)."""

    tool: str
    gpus: list[str]
    header: SourceLocation
    row: dict[str, SourceLocation] = field(default_factory=dict)
    busid: dict[str, str] = field(default_factory=dict)
    weight: dict[Pair, Cell] = field(default_factory=dict)
    hops: dict[Pair, Cell] = field(default_factory=dict)
    link_type: dict[Pair, Cell] = field(default_factory=dict)
    bandwidth: dict[Pair, Cell] = field(default_factory=dict)
    numa: dict[str, Cell] = field(default_factory=dict)
    number: dict[str, int] = field(default_factory=dict)
    """The tool's GPU index (rocm-smi's GPU<N>); GPUs without one are numbered in bus-id order."""


def tokens(line: str) -> list[tuple[str, int]]:
    """Whitespace-separated cells of a table line with their 1-based columns."""
    return [(m.group(0), m.start() + 1) for m in re.finditer(r"\S+", line)]


def read_matrix(
    b: Builder,
    lines: list[str],
    start: int,
    file: str,
    title: str,
    table: dict[Pair, Cell],
    topo_rows: dict[str, SourceLocation] | None = None,
) -> tuple[list[str], int]:
    """Read the table whose column header is `lines[start]`; return its columns and the next line index."""
    columns = [t for t, _ in tokens(lines[start])]
    hloc = SourceLocation(file, start + 1)
    refuse_matrix(len(columns), hloc, title)
    seen: dict[str, SourceLocation] = {}
    i = start + 1
    while i < len(lines) and lines[i].strip() and tokens(lines[i])[0][0] in columns:
        toks = tokens(lines[i])
        loc = SourceLocation(file, i + 1)
        name = toks[0][0]
        if name in seen:
            b.error(loc, f"{title}: row {name} appears twice (first on line {seen[name].line})")
        seen[name] = loc
        if topo_rows is not None:
            topo_rows.setdefault(name, loc)
        cells = toks[1:]
        if len(cells) != len(columns):
            b.error(loc, f"{title}: row {name} has {len(cells)} cells; expected {len(columns)}, one per column")
        for col, (value, c) in zip(columns, cells, strict=False):
            table[(name, col)] = Cell(value, SourceLocation(file, i + 1, c))
        i += 1
    missing = [c for c in columns if c not in seen]
    if missing:
        b.error(hloc, f"{title}: no row for {', '.join(missing)}; the table must be square")
    return columns, i


def _int(b: Builder, cell: Cell, what: str) -> int | None:
    if cell.value.upper() == "N/A":
        return None
    if re.fullmatch(r"[A-Z][A-Z_]*", cell.value):
        # amd-smi prints the library's status (UNKNOWN, NOT_SUPPORTED) where it could not read a value.
        b.note(cell.loc, f"{what} is {cell.value}: the tool could not read it, so it stays unknown")
        return None
    number = whole(cell.value)
    if number is None:
        b.error(cell.loc, f"{what} {cell.value!r}; expected a whole number or N/A")
    return number


def _pairs(topo: AmdTopo) -> list[Pair]:
    g = topo.gpus
    return [(g[i], g[j]) for i in range(len(g)) for j in range(i + 1, len(g))]


def check(b: Builder, topo: AmdTopo) -> None:
    """Diagonals and symmetry of every table: errors with the cell's place."""
    tables = {"weight": topo.weight, "hops": topo.hops, "link type": topo.link_type, "bandwidth": topo.bandwidth}
    for what, table in tables.items():
        for (r, c), cell in sorted(table.items(), key=lambda kv: kv[1].loc):
            if r not in topo.gpus or c not in topo.gpus:
                b.error(cell.loc, f"{what} table names {r if r not in topo.gpus else c}, which the other tables do not")
                continue
            if r == c:
                if cell.value.upper() not in ("0", "SELF", "N/A"):
                    b.error(cell.loc, f"{what} of {r} to itself is {cell.value!r}; expected 0, SELF or N/A")
                continue
            back = table.get((c, r))
            # The route between two GPUs is one route: its type, weight and hops read the same both
            # ways. A table that differs is damaged; the pair is read once (row before column), so
            # the other cell would be dropped without a word. Said once, at the cell read first; a
            # cell that is no number is the number check's to report.
            if (
                back is not None
                and back.value.upper() != cell.value.upper()
                and (what == "link type" or (what != "bandwidth" and back.loc > cell.loc and _both_whole(cell, back)))
            ):
                b.error(
                    cell.loc,
                    f"{what} of {r} to {c} is {cell.value} but {c} to {r} is {back.value}; the table must be symmetric",
                )
    for cell in topo.link_type.values():
        if cell.value.upper() not in ("XGMI", "PCIE", "0", "SELF", "N/A", "UNKNOWN"):
            b.error(
                cell.loc, f"link type {cell.value!r}; expected XGMI, PCIE, UNKNOWN, N/A (or 0/SELF on the diagonal)"
            )


def _both_whole(one: Cell, other: Cell) -> bool:
    return one.value.isascii() and one.value.isdigit() and other.value.isascii() and other.value.isdigit()


def build(b: Builder, node: str, topo: AmdTopo) -> None:
    """Objects and links of one node from checked tables."""
    # Neither tool lists NICs: say so, so that "no NIC" reads as unknown (TOPO001), not as missing.
    source = {"source": str(topo.header), "imported_from": topo.tool, "nics_described": "false"}
    b.obj(node, "node", None, topo.header, labels=source)
    order = sorted(topo.gpus, key=lambda g: (topo.busid.get(g, ""), topo.gpus.index(g)))
    ids = {g: f"{node}/gpu{topo.number.get(g, k)}" for k, g in enumerate(order)}
    numa: dict[str, int] = {}
    for g in topo.gpus:
        cell = topo.numa.get(g)
        if cell is None:
            continue
        v = cell.value
        if re.fullmatch(r"-?\d{1,9}", v) is None and v.upper() != "N/A":
            b.error(cell.loc, f"NUMA node of {g} is {v!r}; expected a number (or -1 / N/A when there is none)")
        elif v.upper() != "N/A" and int(v) >= 0:
            numa[g] = int(v)
    weight = {p: _int(b, c, "weight") for p, c in topo.weight.items()}
    hops = {p: _int(b, c, "hops") for p, c in topo.hops.items()}
    if b.errors:
        return
    # GPUs over PCIe two hops apart share a NUMA node (the hops table's own definition).
    group: dict[str, str] = {g: g for g in topo.gpus}

    def find(x: str) -> str:
        while group[x] != x:
            x = group[x]
        return x

    for r, c in _pairs(topo):
        if hops.get((r, c)) == 2 and _type(topo, r, c) == "PCIE":
            ra, rb = find(r), find(c)
            if ra != rb:
                group[max(ra, rb, key=topo.gpus.index)] = min(ra, rb, key=topo.gpus.index)
        h = hops.get((r, c))
        if r in numa and c in numa and _type(topo, r, c) == "PCIE" and h in (2, 3):
            same = numa[r] == numa[c]
            if same != (h == 2):
                b.note(
                    topo.hops[(r, c)].loc,
                    f"{r} and {c} are {h} hops apart over PCIe (2 = one NUMA node, 3 = across NUMA nodes) "
                    f"but the NUMA table puts them in nodes {numa[r]} and {numa[c]}; the NUMA table is kept",
                )
    parent: dict[str, str] = {}
    unknown: dict[str, str] = {}
    unplaced: list[str] = []
    for g in topo.gpus:
        loc = topo.row.get(g, topo.header)
        if g in numa:
            cpu = f"{node}/cpu{numa[g]}"
            if not b.has(cpu):
                b.obj(cpu, "cpu", node, loc, labels={"source": str(loc), "inferred": "true", "numa": str(numa[g])})
            parent[g] = cpu
            continue
        root = find(g)
        members = [x for x in topo.gpus if find(x) == root]
        if len(members) < 2 or any(x in numa for x in members):
            # Two hops from a GPU of a known NUMA node is that node; from GPUs of several, it is unknown.
            known = sorted({numa[x] for x in members if x in numa})
            if len(known) == 1:
                parent[g] = f"{node}/cpu{known[0]}"
                continue
            unplaced.append(g)
            parent[g] = node
            continue
        if root not in unknown:
            unknown[root] = f"{node}/cpu-unknown{len(unknown)}"
            b.obj(unknown[root], "cpu", node, loc, labels={"source": str(loc), "inferred": "true"})
        parent[g] = unknown[root]
    if unplaced:
        b.note(
            topo.header,
            f"{topo.tool} does not state the NUMA node of {', '.join(unplaced)}: placed directly under node {node}",
        )
    b.note(topo.header, f"{topo.tool} lists no NICs: node {node}'s NICs are unknown, not absent")
    for g in topo.gpus:
        loc = topo.row.get(g, topo.header)
        labels = {"source": str(loc), topo.tool.replace("-", "_"): g}
        if g in topo.busid:
            labels["pci_busid"] = topo.busid[g]
        b.obj(ids[g], "gpu", parent[g], loc, labels=labels)
        if parent[g] != node:
            b.link(ids[g], parent[g], "pcie", pcie_mbps(*DEFAULT_PCIE), loc, labels={ASSUMED: "bandwidth"})
    # A weight table of zeros is one the driver did not fill (amd-smi on MI300X/MI355X hosts prints
    # it so): a 0 is no cost, not a route. The hops table still says which pairs are one xGMI hop.
    unfilled = bool(weight) and all(v == 0 for (r, c), v in weight.items() if r != c)
    taken: list[str] = []
    for r, c in _pairs(topo):
        if _type(topo, r, c) != "XGMI":
            continue
        cell = topo.link_type[(r, c)]
        w = weight.get((r, c))
        if unfilled and hops.get((r, c)) == 1:
            w = XGMI_HOP_WEIGHT
            taken.append(f"{r}-{c}")
        if w is None:
            b.note(
                cell.loc, f"{r} and {c} are joined over xGMI but the weight is not stated: no direct link is assumed"
            )
            continue
        if w == 0:
            # Where other pairs have weights, a 0 is no route (a route costs 15 per xGMI hop): it was
            # not filled in. Read as a multiple of 15, it dropped the pair's link without a note.
            b.note(
                topo.weight[(r, c)].loc,
                f"xGMI weight 0 between {r} and {c}, two GPUs (a route weighs {XGMI_HOP_WEIGHT} per xGMI hop): "
                "not filled in, so the number of hops is unknown and no direct link is recorded",
            )
            continue
        if w % XGMI_HOP_WEIGHT:
            b.note(
                topo.weight[(r, c)].loc,
                f"xGMI weight {w} between {r} and {c} is not a multiple of {XGMI_HOP_WEIGHT}: the number of xGMI "
                "hops is unknown, so no direct link is recorded",
            )
            continue
        if w != XGMI_HOP_WEIGHT:
            continue  # routed through other GPUs: their direct links carry it
        labels = {"source": str(cell.loc), "amd_weight": str(weight.get((r, c)))}
        mbps = _bandwidth(b, topo, r, c)
        if mbps is None:
            mbps = DEFAULT_XGMI_MBPS
            labels[ASSUMED] = "bandwidth"
        b.link(ids[r], ids[c], "xgmi", mbps, cell.loc, labels=labels)
    if taken:
        b.note(
            topo.header,
            f"{topo.tool}: every weight is 0 (not filled in by the driver), so each XGMI pair one hop apart "
            f"is taken as a direct xGMI link ({len(taken)} pairs; a full mesh on MI300X-class 8-GPU boards). "
            "Hops 1 also reads 1 where GPUs route through another (MI250X): those links may be fewer",
        )
    elif unfilled:
        b.note(topo.header, f"{topo.tool}: every weight is 0 (not filled in by the driver) and no XGMI pair is one hop")


def _type(topo: AmdTopo, r: str, c: str) -> str:
    cell = topo.link_type.get((r, c))
    return cell.value.upper() if cell is not None else "N/A"


def _bandwidth(b: Builder, topo: AmdTopo, r: str, c: str) -> int | None:
    """The max of amd-smi's `min-max` MB/s; None when not stated (`N/A`, `0-0`)."""
    cell = topo.bandwidth.get((r, c))
    if cell is None or cell.value.upper() == "N/A":
        return None
    m = re.fullmatch(r"(\d{1,40})-(\d{1,40})", cell.value)
    if m is None:
        b.error(cell.loc, f"bandwidth {cell.value!r}; expected <min>-<max> in MB/s (e.g. 50000-50000) or N/A")
        return None
    top = int(m.group(2))
    return top or None


def import_files(paths: list[Path], node: str | None, read: Callable[[Builder, str, str], AmdTopo | None]) -> Imported:
    """Each file one node, read by `read` (rocm-smi's or amd-smi's form), checked, then built."""
    b = Builder([str(p) for p in paths])
    for path in paths:
        text = read_tool_text(path)
        name = node if node is not None and len(paths) == 1 else safe_name(path.stem)
        topo = read(b, text, str(path))
        if topo is not None and not b.errors:
            check(b, topo)
            if not b.errors:
                build(b, name, topo)
    return b.finish()
