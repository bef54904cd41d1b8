"""`nvidia-smi topo -m` matrices to an inventory.

Accepts the tab-separated output as printed, the space-aligned form it takes when copied from
a terminal (tabs expanded to 8-column stops), headers with or without their leading whitespace,
and the older form whose NIC columns are named `mlx5_N` with no NIC legend. Cells: X (self),
NV# (a bonded set of # NVLinks), PIX, PXB, PHB, NODE, SYS (SOC in old drivers).

The matrix states how devices relate, not the PCIe tree, so the tree is rebuilt as the smallest
one that reproduces every PCIe cell: devices NODE-or-closer share a NUMA domain (`cpu<N>`, kind
`socket`, N from the NUMA Affinity column), devices PHB-or-closer share a host bridge (`hb<k>`,
kind `cpu`: a root complex, which is how the path rules tell PHB from NODE), devices PXB-or-closer
share a PCIe switch and PIX-or-closer a switch of their own. Devices of one stated NUMA node share
its domain even where the matrix puts them SYS apart (they then get host bridges of their own).
NUMA domains are linked across the CPU interconnect (SYS). Everything rebuilt carries
`inferred: "true"`; the output gives no speeds, so links carry documented defaults labelled `assumed`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from verifier.core.errors import SourceLocation
from verifier.core.limits import refuse_matrix
from verifier.sources.importers import nvlink_fabric
from verifier.sources.importers.build import (
    ASSUMED,
    DEFAULT_NVLINK_LINK_MBPS,
    DEFAULT_PCIE,
    Builder,
    Imported,
    pcie_mbps,
    read_tool_text,
    safe_name,
)
from verifier.sources.importers.sockets import link_sockets

_TRAILING = ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID")
_RANK = {"PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}
_ALIASES = {"SOC": "SYS"}
_NV = re.compile(r"^NV(\d{1,9})$")
_DEVICE = re.compile(r"^(GPU\d+|NIC\d+|mlx5_\d+|[A-Za-z][\w.-]*_\d+)$")
_NUMA_LIST = re.compile(r"^\d{1,9}(-\d{1,9})?(,\d{1,9}(-\d{1,9})?)*$")
_HEX_MASK = re.compile(r"^0x[0-9a-fA-F]{1,64}(,0x[0-9a-fA-F]{1,64})*$")


def _list_in_order(text: str) -> bool:
    """`text` is a list of numbers and ranges (`0,3-9,11-17`) with every range written low to high."""
    if not _NUMA_LIST.match(text):
        return False
    return all(int(lo) <= int(hi) for lo, _, hi in (r.partition("-") for r in text.split(",")) if hi)


_TABS = (8, 4)  # terminals expand tabs to 8-column stops; some editors and pastes to 4


def import_nvidia_smi(paths: list[Path], node: str | None = None) -> Imported:
    b = Builder([str(p) for p in paths])
    for path in paths:
        text = read_tool_text(path)
        name = node if node is not None and len(paths) == 1 else safe_name(path.stem)
        _read(b, text, str(path), name)
    return b.finish()


# ---------------------------------------------------------------------------- reading cells


_WORD = re.compile(r"\S+")


def _tokens(line: str) -> list[tuple[int, int, str]]:
    return [(*m.span(), m.group()) for m in _WORD.finditer(line)]


def _join_names(fields: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Header tokens with the multi-word column names (CPU Affinity, ...) put back together."""
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(fields):
        for name in _TRAILING:
            words = name.split()
            if [t for _p, t in fields[i : i + len(words)]] == words:
                out.append((fields[i][0], name))
                i += len(words)
                break
        else:
            out.append(fields[i])
            i += 1
    return out


def _stop_fields(line: str, tab: int = 8) -> list[str] | None:
    """The tab-separated fields of a line whose tabs were expanded to `tab`-column stops (8 on a terminal).

    A field starts on a stop (the self cell " X " one column after it); the next starts at the
    first stop after the field's end, so every further `tab` columns of blanks is an empty field.
    None when the line does not follow the stops (spaces typed by hand).
    """
    # Runs once per token (2 M in a 1,450-GPU terminal copy): the match read once, names joined
    # only where two tokens are one blank apart.
    fields: list[str] = []
    next_start, last_end = 0, -2
    for m in _WORD.finditer(line):
        start, end = m.span()
        text = m.group()
        if fields and start == last_end + 1:
            joined = f"{fields[-1]} {text}"
            if any(n.startswith(joined) for n in _TRAILING):
                fields[-1] = joined  # a multi-word column name such as "CPU Affinity"
                last_end, next_start = end, (end // tab + 1) * tab
                continue
        stop = start - start % tab
        if start - stop > 1 or stop < next_start:
            return None
        if stop != next_start:
            fields.extend([""] * ((stop - next_start) // tab))
        fields.append(text)
        last_end, next_start = end, (end // tab + 1) * tab
    return fields


@dataclass
class _Layout:
    mode: str  # "tab" | "stops" | "spaces"
    devices: list[str]
    trailing: list[str]
    trailing_starts: list[int] = field(default_factory=list)
    tab: int = 8


def _header(line: str) -> tuple[_Layout | None, str]:
    if "\t" in line:
        raw = [f.strip() for f in line.split("\t")]
        while raw and raw[0] == "":
            raw.pop(0)
        names, mode, starts = raw, "tab", [0] * len(raw)
    else:
        joined = _join_names([(s, t) for s, _e, t in _tokens(line)])
        names, mode, tab = [t for _s, t in joined], "spaces", 8
        for width in _TABS:
            stops = _stop_fields(line, width)
            while stops and stops[0] == "":
                stops.pop(0)
            if stops is not None and stops == names:
                mode, tab = "stops", width
                break
        starts = [s for s, _t in joined]
    if "" in names:
        return None, "an empty column name in the header"
    devices = [c for c in names if c not in _TRAILING]
    trailing = [c for c in names if c in _TRAILING]
    if names[: len(devices)] != devices:
        return None, "device columns must come before CPU Affinity / NUMA Affinity / GPU NUMA ID"
    bad = [c for c in devices if not _DEVICE.match(c)]
    if bad:
        return None, (
            f"column {bad[0]!r}; expected device columns (GPU0, NIC0, mlx5_0) then "
            f"{', '.join(repr(t) for t in _TRAILING)}"
        )
    return _Layout(mode, devices, trailing, starts[len(devices) :], tab if mode == "stops" else 8), ""


def _row(layout: _Layout, line: str) -> tuple[list[str], list[str]] | None:
    """The row's label and device cells, and its trailing cells (one per trailing column, "" if empty)."""
    n = len(layout.devices)
    if "\t" in line:
        fields = list(map(str.strip, line.split("\t")))  # map: no Python frame per cell
        return fields[: 1 + n], _trailing(layout, fields[1 + n :])
    if layout.mode == "stops" and (got := _stop_fields(line, layout.tab)) is not None:
        trailing = _trailing(layout, got[1 + n :])
        # More values than columns, or two where nvidia-smi writes one: the blanks were not tabs.
        if len(trailing) == len(layout.trailing) and all(" " not in v for v in trailing):
            return got[: 1 + n], trailing
    # Spaces typed or reflowed by hand: cells by count, or by the column they stand under.
    toks = _tokens(line)
    head = [t for _s, _e, t in toks[: 1 + n]]
    rest = toks[1 + n :]
    if len(rest) >= len(layout.trailing):
        return head, _trailing(layout, [t for _s, _e, t in rest])
    cells = [""] * len(layout.trailing)
    for s, _e, t in rest:  # fewer cells than columns: each goes to the column it is written under
        k = min(range(len(layout.trailing_starts)), key=lambda j: abs(layout.trailing_starts[j] - s))
        if cells[k]:
            return None
        cells[k] = t
    return head, cells


def _trailing(layout: _Layout, values: list[str]) -> list[str]:
    """Trailing fields by position; nvidia-smi pads GPU NUMA ID with an extra empty field."""
    out = [""] * len(layout.trailing)
    k = 0
    for j, name in enumerate(layout.trailing):
        if name == "GPU NUMA ID" and j == len(layout.trailing) - 1:
            rest = [v for v in values[k:] if v]
            out[j] = rest[0] if len(rest) == 1 else " ".join(rest)
            return out
        out[j] = values[k] if k < len(values) else ""
        k += 1
    extra = [v for v in values[k:] if v]
    if extra:
        out.append(" ".join(extra))
    return out


_ANSI = re.compile(r"\x1b?\[[0-9;]*m")  # nvidia-smi underlines the header on a terminal; pastes keep "[4m"

# Two or more column names, or two or more cells, with the tab between them lost in a copy ("NIC8NIC9",
# "NODENODE", "SYSSYS": seen in pastes of vLLM's collect_env report). Each name and class ends where the
# next begins with a letter, so the split is the only one there is; nothing else is ever split.
_JOINED_NAMES = re.compile(r"(?<!\S)(?:(?:GPU|NIC)\d+){2,}(?!\S)")
_JOINED_CELLS = re.compile(r"(?<!\S)(?:X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC){2,}(?!\S)")
_ONE_NAME = re.compile(r"(?:GPU|NIC)\d+")
_ONE_CELL = re.compile(r"X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC")
_LABEL = re.compile(r"\s*\S+")
_PLAIN_CELLS = frozenset(("X", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC"))


def _has_odd_cell(values: list[str]) -> bool:
    """Whether a row's device cells hold one that is neither a class nor NV<count>."""
    return any(not _NV.match(v) for v in set(values) - _PLAIN_CELLS)


def _split_joined(line: str, header: bool) -> str | None:
    """`line` with each token that is several names (header) or classes (row) written apart; None if none is.

    Whole tokens only, and never a row's label: a cell such as "0-23,48-71" or "N/A" is left alone. With
    tabs, a field is a token: "PIX X " (a cell and the self cell " X " whose tab was lost) is two cells.
    """
    whole, one = (_JOINED_NAMES, _ONE_NAME) if header else (_JOINED_CELLS, _ONE_CELL)
    label = "" if header else ((m := _LABEL.match(line)) and m.group()) or ""
    rest = line[len(label) :]
    if "\t" in line:
        fields = rest.split("\t")
        for k, f in enumerate(fields):
            words = f.split()
            if len(words) > 1 and all(whole.fullmatch(w) or one.fullmatch(w) for w in words):
                fields[k] = "\t".join(t for w in words for t in one.findall(w))
        split = "\t".join(fields)
        split = whole.sub(lambda m: "\t".join(one.findall(m.group())), split)
    else:
        split = whole.sub(lambda m: " ".join(one.findall(m.group())), rest)
    return None if split == rest else label + split


def _dedent(lines: list[str]) -> list[str]:
    """Lines of a pasted matrix indented as a whole (a Markdown code block) lose that indentation.

    The rows tell how much: each starts with its device name, so their common leading blanks are
    the paste's, not nvidia-smi's (whose header alone starts with a tab or blanks).
    """
    # maxsplit 1: only the first word is wanted, and a row of a large matrix holds thousands
    heads = [(ln, ln.split(None, 1)[:1]) for ln in lines]
    rows = [ln for ln, h in heads if _DEVICE.match(h[0] if h else "") and "\t" not in ln[:1]]
    indent = min((len(ln) - len(ln.lstrip(" ")) for ln in rows), default=0)
    if indent == 0:
        return lines
    return [ln[indent:] if ln[:indent].strip() == "" else ln for ln in lines]


def _read(b: Builder, text: str, file: str, node: str) -> None:
    from verifier.sources.importers.sniff import wrong_importer

    if (other := wrong_importer(text, "nvidia-smi")) is not None:
        b.error(SourceLocation(file, 1), other)
        return
    # An escape code needs a "["; most files hold none, and a large one is millions of characters.
    lines = _dedent([_ANSI.sub("", ln) if "[" in ln else ln for ln in text.splitlines()])
    # The header names the columns; a row starts with its device and then its self cell X.
    start = next(
        (i for i, ln in enumerate(lines) if (w := ln.split(None, 2))[:1] == ["GPU0"] and w[1:2] != ["X"]),
        None,
    )
    if start is None:
        b.error(
            SourceLocation(file, 1),
            "no `nvidia-smi topo -m` header found; expected a line of column names GPU0 GPU1 ... "
            "(then NIC0 ..., CPU Affinity, NUMA Affinity)",
        )
        return
    hloc = SourceLocation(file, start + 1)
    split_lines: list[int] = []
    if (fixed := _split_joined(lines[start], header=True)) is not None:
        lines[start] = fixed
        split_lines.append(start + 1)
    layout, why = _header(lines[start])
    if layout is None:
        b.error(hloc, why)
        return
    devices = layout.devices
    refuse_matrix(len(devices), hloc, "`nvidia-smi topo -m`")
    if len(set(devices)) != len(devices):
        twice = next(d for k, d in enumerate(devices) if d in devices[:k])
        b.error(hloc, f"column {twice!r} appears twice in the header; each device has one column")
        return
    cells: dict[str, list[str]] = {}  # a row's device cells, in column order
    extra: dict[str, dict[str, str]] = {}
    rowloc: dict[str, SourceLocation] = {}
    legend: dict[str, str] = {}
    i = start + 1
    while i < len(lines) and lines[i].strip() and not lines[i].strip().startswith("Legend"):
        loc = SourceLocation(file, i + 1)
        parsed = _row(layout, lines[i])
        # Only a row with a cell that is no class is searched for joined cells: the rows nvidia-smi
        # writes (a million cells in a large matrix) are looked at once, as a set.
        if (parsed is None or _has_odd_cell(parsed[0][1:])) and (
            fixed := _split_joined(lines[i], header=False)
        ) is not None:
            lines[i] = fixed
            split_lines.append(i + 1)
            parsed = _row(layout, fixed)
        label = lines[i].split(None, 1)[0]
        if label not in devices:
            b.error(loc, f"row {label!r} is not one of the columns ({', '.join(devices)})")
        elif label in rowloc:
            b.error(loc, f"row {label!r} appears twice (first on line {rowloc[label].line})")
        elif parsed is None:
            b.error(
                loc,
                f"row {label}: cannot tell which column each cell belongs to; expected the cells "
                "separated by tabs (as nvidia-smi prints them) or aligned to 8-column tab stops",
            )
        else:
            rowloc[label] = loc
            head, trailing = parsed
            values = head[1:]
            if len(values) < len(devices) or "" in values:
                b.error(
                    loc,
                    f"row {label} has {len([v for v in values if v])} device cells; expected {len(devices)}, "
                    "one per device column",
                )
            # One list per row, not one dict entry per cell: a 1,450-GPU matrix holds 2.1 M cells.
            if any(a in values for a in _ALIASES):
                values = [_ALIASES.get(v, v) for v in values]
            cells[label] = values
            if len(trailing) > len(layout.trailing):
                b.error(loc, f"row {label} has an extra cell {trailing[-1]!r} after the last column")
            extra[label] = {n: v for n, v in zip(layout.trailing, trailing, strict=False) if v}
        i += 1
    for j in range(i, len(lines)):
        m = re.match(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$", lines[j])
        if m:
            legend[m.group(1)] = m.group(2)
    if split_lines:
        b.note(
            SourceLocation(file, split_lines[0]),
            f"line(s) {', '.join(map(str, split_lines))} hold column names or cells written together without "
            "the tab between them (a copy that lost it, e.g. NODENODE): read as the names and classes they spell",
        )
    missing = [d for d in devices if d not in rowloc]
    if missing:
        b.error(hloc, f"no row for {', '.join(missing)}; the matrix must be square")
    if b.errors:
        return
    _Build(b, node, devices, [cells[d] for d in devices], extra, rowloc, legend, hloc).run()


# ---------------------------------------------------------------------------- rebuilding the tree


class _Build:
    """The tree rebuilt from the cells.

    A large matrix is a million pairs, so pairs are not objects: each row becomes a string of
    one code per cell (`_code`; only a valid, symmetric PCIe cell keeps its digit), and for each
    level every row a bitmask of the columns that class or closer (`near`), so a group is found by
    OR-ing whole rows and a tree check is one AND per member.
    """

    def __init__(
        self,
        b: Builder,
        node: str,
        devices: list[str],
        rows: list[list[str]],
        extra: dict[str, dict[str, str]],
        rowloc: dict[str, SourceLocation],
        legend: dict[str, str],
        hloc: SourceLocation,
    ) -> None:
        self.b, self.node, self.devices, self.rows = b, node, devices, rows
        self.extra, self.rowloc, self.legend, self.hloc = extra, rowloc, legend, hloc
        self.pos = {d: i for i, d in enumerate(devices)}
        self.nv: dict[tuple[int, int], int] = {}  # (i, j), i < j: the NVLink count between devices i and j
        self.codes: list[str] = []
        self.pcie: list[int] = []  # per row: the columns of a PCIe cell
        self.near: dict[int, list[int]] = {}  # per level, per row: the columns of that class or closer

    def run(self) -> None:
        self.classify()
        if self.b.errors:
            return
        gpus = [d for d in self.devices if d.startswith("GPU")]
        nics = [d for d in self.devices if not d.startswith("GPU")]
        ids = {d: f"{self.node}/gpu{d[3:]}" for d in gpus}
        for k, d in enumerate(nics):
            ids[d] = f"{self.node}/nic{k}"
        labels = {"source": str(self.hloc), "imported_from": "nvidia-smi"}
        if not nics:
            # The matrix lists RDMA devices only (mlx5_N, with the RDMA stack loaded): a host whose NICs
            # are plain Ethernet, or whose RDMA driver is not loaded, prints no NIC column. That says
            # nothing about the NICs it has, so TOPO001 must not read it as none (as for rocm-smi).
            labels["nics_described"] = "false"
            self.b.note(
                self.hloc,
                f"nvidia-smi lists no NIC (RDMA devices only): node {self.node}'s NICs are unknown, not absent",
            )
        self.b.obj(self.node, "node", None, self.hloc, labels=labels)
        numa = self.numa_values()
        if self.b.errors:
            return
        domains = self.domains(numa)
        parent: dict[str, str] = {}
        sockets: list[tuple[str, str | None]] = []
        hb = 0
        for sid, members in domains:
            sockets.append((sid, None))
            bridges = self.merge_unknown(self.groups(members, 3))
            for group in bridges:
                bid = f"{self.node}/hb{hb}"
                hb += 1
                first = self.rowloc[group[0]]
                self.b.obj(
                    bid,
                    "cpu",
                    sid,
                    first,
                    labels={
                        "source": str(first),
                        "inferred": "true",
                        "role": "host_bridge",
                        "members": ",".join(group),
                    },
                )
                # A host bridge's way into the socket: never narrower than the (assumed) device links.
                self.b.link(bid, sid, "soc", pcie_mbps(*DEFAULT_PCIE), first, labels={ASSUMED: "bandwidth"})
                for d in group:
                    parent[d] = bid
                self.switches(group, parent)
        link_sockets(self.b, sockets, self.hloc, "nvidia-smi topo -m")
        for d in self.devices:
            labels = {"source": str(self.rowloc[d]), "nvidia_smi": d}
            if d in self.legend:
                labels["name"] = self.legend[d]
            elif not d.startswith(("GPU", "NIC")):
                labels["name"] = d
            aff = self.extra.get(d, {}).get("CPU Affinity")
            if aff and aff != "N/A":
                # Kept as the tool wrote it, and compared as text (one affinity is one socket):
                # only a CPU list, ranges low to high, or a hex mask is an affinity at all.
                if not (_list_in_order(aff) or _HEX_MASK.match(aff)):
                    self.b.error(
                        self.rowloc[d],
                        f"CPU Affinity of {d} is {aff!r}; expected a CPU list such as 0-51,104-155 "
                        "(each range low to high), a hex mask, or N/A",
                    )
                labels["cpu_affinity"] = aff
            gnuma = self.extra.get(d, {}).get("GPU NUMA ID")
            if gnuma and gnuma != "N/A":
                if not (gnuma.isascii() and gnuma.isdigit() and len(gnuma) <= 9):
                    self.b.error(
                        self.rowloc[d], f"GPU NUMA ID of {d} is {gnuma!r}; expected a NUMA node number, or N/A"
                    )
                labels["gpu_numa_id"] = gnuma
            if d in numa:
                labels["numa_affinity"] = numa[d]
            self.b.obj(ids[d], "gpu" if d in gpus else "nic", parent[d], self.rowloc[d], labels=labels)
            self.b.link(
                ids[d], parent[d], "pcie", pcie_mbps(*DEFAULT_PCIE), self.rowloc[d], labels={ASSUMED: "bandwidth"}
            )
        self.nvlinks(gpus, ids)

    def nvlinks(self, gpus: list[str], ids: dict[str, str]) -> None:
        """NV# cells as an NVSwitch fabric per group of GPUs where they can only be one, else as direct links."""
        dev = self.devices
        fabric: set[str] = set()
        c2c = frozenset(g for g in gpus if (self.extra.get(g, {}).get("GPU NUMA ID") or "N/A") != "N/A")
        found = nvlink_fabric.groups(gpus, self.nv_pairs(), c2c)
        for k, group in enumerate(g for g in found if g.fabric):
            # One object stands for the group's switches: the cells do not say how many chips there are.
            first = self.rowloc[group.gpus[0]]
            sw = f"{self.node}/nvsw{k}"
            labels = {"source": str(first), "inferred": "true"}
            self.b.obj(
                sw,
                "nvswitch",
                self.node,
                first,
                labels={**labels, "role": "nvswitch_fabric", "members": ",".join(group.gpus)},
            )
            labels[ASSUMED] = "bandwidth"
            for g in group.gpus:
                n = group.links[g]
                self.b.link(
                    ids[g], sw, "nvswitch", n * group.link_mbps, self.rowloc[g], attrs={"count": n}, labels=labels
                )
            fabric.update(group.gpus)
        for group in found:
            self.b.note(self.rowloc[group.gpus[0]], group.note)
        for (i, j), count in sorted(self.nv.items(), key=lambda kv: sorted((dev[kv[0][0]], dev[kv[0][1]]))):
            a, c = dev[i], dev[j]
            if a in fabric:
                continue
            self.b.link(
                ids[a],
                ids[c],
                "nvlink",
                count * DEFAULT_NVLINK_LINK_MBPS,
                self.rowloc[a],
                attrs={"count": count},
                labels={ASSUMED: "bandwidth"},
            )

    def nv_pairs(self) -> dict[tuple[str, str], int]:
        return {(self.devices[i], self.devices[j]): n for (i, j), n in self.nv.items()}

    def classify(self) -> None:
        """Each cell valid and equal to its mirror; one pass of C-level work per row when it is.

        Symmetry is checked on the code strings, transposed as strings (a tenth of the cost of
        transposing the cell lists): with no ? in a row, equal codes mean equal cells except for
        NV#, whose few cells are compared one by one.
        """
        dev, rows = self.devices, self.rows
        known: dict[str, str] = {}
        codes: list[str] = []
        for row in rows:
            for v in set(row).difference(known):
                known[v] = _code(v)
            codes.append("".join(map(known.__getitem__, row)))
        mirror = list(map("".join, zip(*codes, strict=True)))
        others = [j for j, d in enumerate(dev) if not d.startswith("GPU")]
        for i, (row, code) in enumerate(zip(rows, codes, strict=True)):
            links = _found(code, "N")
            if (
                code[i] == "X"
                and code.count("X") == 1
                and "?" not in code
                and code == mirror[i]
                and all(row[j] == rows[j][i] for j in links)
                and (not links if not dev[i].startswith("GPU") else all(code[j] != "N" for j in others))
            ):
                for j in links:
                    self.nv[(i, j) if i < j else (j, i)] = _nv_count(row[j])
                self.codes.append(code)
            else:
                self.codes.append(self.classify_row(i))
        self.pcie = [_mask(code, _PCIE) for code in self.codes]
        self.near = {level: [_mask(code, _NEAR[level]) for code in self.codes] for level in (1, 2, 3, 4)}
        self.check_tree()

    def classify_row(self, i: int) -> str:
        """A row that failed the fast checks, cell by cell: its errors and its codes.

        Only a valid, symmetric PCIe cell keeps its digit; the others relate nothing.
        """
        dev, rows = self.devices, self.rows
        r, loc = dev[i], self.rowloc[dev[i]]
        out: list[str] = []
        for j, value in enumerate(rows[i]):
            c, back = dev[j], rows[j][i]
            code = _code(value)
            if i == j:
                if value != "X":
                    self.b.error(loc, f"{r} to itself is {value!r}; expected X")
                out.append("X")
                continue
            if code in "X?":
                self.b.error(loc, f"{r} to {c} is {value!r}; expected X, NV<count>, PIX, PXB, PHB, NODE or SYS")
                out.append("?")
                continue
            if value != back:
                self.b.error(loc, f"{r} to {c} is {value} but {c} to {r} is {back}; the matrix must be symmetric")
                out.append("?")
                continue
            if code == "N":
                if not (r.startswith("GPU") and c.startswith("GPU")):
                    self.b.error(loc, f"{r} to {c} is {value}, but only GPUs have NVLinks")
                self.nv[(i, j) if i < j else (j, i)] = _nv_count(value)
            out.append(code)
        return "".join(out)

    def check_tree(self) -> None:
        """PCIe classes are a tree distance: a 'closer' pair cannot sit across a 'farther' split.

        Per level, a group's members may be farther apart only where no PCIe cell relates them:
        one AND of the member's PCIe columns, less its near ones, with the group. The pair
        reported is the first offending one, by its two names, of the first group that has one.
        """
        dev, pos = self.devices, self.pos
        for level in (1, 2, 3, 4):
            near = self.near[level]
            for group in self.groups(dev, level):
                inside = _bits_of(pos[d] for d in group)
                bad = [
                    (i, j)
                    for i in (pos[d] for d in group)
                    if (far := self.pcie[i] & ~near[i] & inside)
                    for j in _members(far)
                ]
                if not bad:
                    continue
                i, j = min(bad, key=lambda ij: sorted((dev[ij[0]], dev[ij[1]])))
                a, c = dev[min(i, j)], dev[max(i, j)]
                rest = [d for d in group if d not in (a, c)]
                self.b.error(
                    self.rowloc[a],
                    f"{a} to {c} is {_name(int(self.codes[i][j]))}, but both are {_name(level)} or closer to "
                    f"{', '.join(rest) or 'each other'}: "
                    "the cells cannot come from one PCIe tree",
                )
                return

    def groups(self, devices: list[str], level: int) -> list[list[str]]:
        """Devices joined by pairs of class `level` or closer, in device order."""
        pos, near = self.pos, self.near[level]
        inside = _bits_of(pos[d] for d in devices)
        component: dict[int, int] = {}
        for d in devices:
            first = pos[d]
            if first in component:
                continue
            members, todo = 1 << first, [first]
            while todo:  # every member's near columns inside the set, until none is new
                new = near[todo.pop()] & inside & ~members
                members |= new
                todo.extend(_members(new))
            for k in _members(members):
                component[k] = first
        out: dict[int, list[str]] = {}
        for d in devices:
            out.setdefault(component[pos[d]], []).append(d)
        return sorted(out.values(), key=lambda g: pos[g[0]])

    def unknown_between(self, a: list[str], c: list[str]) -> bool:
        """No PCIe cell relates the two groups: every pair between them is NV# (which hides it)."""
        other = _bits_of(self.pos[y] for y in c)
        return all(not self.pcie[self.pos[x]] & other for x in a)

    def merge_unknown(self, groups: list[list[str]]) -> list[list[str]]:
        """Groups that no PCIe cell separates share one host bridge (the smallest tree)."""
        out: list[list[str]] = []
        for g in groups:
            for o in out:
                if self.unknown_between(o, g):
                    o.extend(g)
                    break
            else:
                out.append(list(g))
        for g in out:
            if len(g) > 1 and self.unknown_between(g, g):  # no PCIe cell inside (the diagonal is X)
                self.b.note(
                    self.rowloc[g[0]],
                    f"the PCIe relation of {', '.join(g)} is hidden by their NV# cells: they are put under one "
                    "host bridge (inferred), so their PCIe class reads PHB",
                )
        return [sorted(g, key=self.pos.__getitem__) for g in out]

    def numa_values(self) -> dict[str, str]:
        numa: dict[str, str] = {}
        for d in self.devices:
            given = self.extra.get(d, {}).get("NUMA Affinity")
            if given is None or given == "N/A":
                continue
            if _list_in_order(given):
                numa[d] = given
            else:
                self.b.error(
                    self.rowloc[d],
                    f"NUMA Affinity of {d} is {given!r}; expected a NUMA node number, a list such as "
                    "0,3-9,11-17, or N/A",
                )
        return numa

    def domains(self, numa: dict[str, str]) -> list[tuple[str, list[str]]]:
        """NUMA domains: the NODE groups of the matrix, joined where only the NUMA column relates them.

        Without a NUMA value (an older nvidia-smi prints no NUMA Affinity column), groups that no
        PCIe cell separates are joined when their CPU Affinity is the same: the CPUs a device is
        near are its socket's, so one affinity is one socket, never one socket per GPU.
        """
        groups = self.groups(self.devices, 4)
        merged: list[list[str]] = []
        by_affinity: list[list[str]] = []
        for g in groups:
            stated = self.stated(g, numa)
            for o in merged:
                if self.unknown_between(o, g) and stated and stated == self.stated(o, numa):
                    o.extend(g)
                    if next(iter(stated))[0] == "cpus" and o not in by_affinity:
                        by_affinity.append(o)
                    break
            else:
                merged.append(list(g))
        for o in by_affinity:
            o.sort(key=self.pos.__getitem__)
            self.b.note(
                self.rowloc[o[0]],
                f"{', '.join(o)} state no NUMA Affinity; they share CPU Affinity "
                f"{' and '.join(sorted(v for _k, v in self.stated(o, numa)))} and no PCIe cell separates them: "
                "one CPU domain (inferred)",
            )
        seen: dict[frozenset[tuple[str, str]], list[str]] = {}
        for g in merged:
            key = frozenset(self.stated(g, numa))
            if key and next(iter(key))[0] == "cpus":
                if key in seen:
                    self.b.note(
                        self.rowloc[min(g, key=self.pos.__getitem__)],
                        f"{', '.join(sorted(g, key=self.pos.__getitem__))} have the CPU Affinity of "
                        f"{', '.join(sorted(seen[key], key=self.pos.__getitem__))}, but the matrix puts them across "
                        "the CPU interconnect (SYS); the matrix cells are kept",
                    )
                seen.setdefault(key, g)
        # A NUMA node is one CPU domain however the matrix classes its devices: NVML prints SYS between
        # devices of one NUMA node on some boards (an 8x RTX 4090 server, NVIDIA/go-gpuallocator issue
        # 17, shows SYS between every GPU pair although four GPUs share each NUMA node), and a socket
        # per group would give that machine 8 sockets where hwloc and the OS see 2 NUMA nodes. Groups
        # of one NUMA value share its domain, each under host bridges of its own (their cells read NODE).
        order: list[str] = []
        members: dict[str, list[str]] = {}
        stated_numa: dict[str, list[str]] = {}
        first_group: dict[str, list[str]] = {}  # the group a domain was first drawn for, named in notes
        # One domain per stated NUMA value: "0" and "0-1" share a first number, not a NUMA node.
        sid_of: dict[frozenset[str], str] = {}
        unknown = 0
        for g in merged:
            g.sort(key=self.pos.__getitem__)
            values = sorted({numa[d] for d in g if d in numa}, key=_first_number)
            first = self.rowloc[g[0]]
            if not values:
                sid = f"{self.node}/cpu-unknown{unknown}"
                unknown += 1
            else:
                base = sid = f"{self.node}/cpu{_first_number(values[0])}"
                k = 1
                while sid in members and frozenset(values) not in sid_of:
                    sid = f"{base}.{k}"
                    k += 1
                sid = sid_of.setdefault(frozenset(values), sid)
                if len(values) > 1:
                    self.b.note(
                        first,
                        f"{', '.join(g)} are NODE or closer to each other (one NUMA domain) but their NUMA "
                        f"Affinity column says {' and '.join(values)}; the matrix cells are kept",
                    )
                if sid in members:
                    one = len(g) == 1
                    self.b.note(
                        first,
                        f"{', '.join(g)} {'has' if one else 'have'} NUMA Affinity {values[0]} like "
                        f"{', '.join(first_group[sid])}, but the matrix puts {'it' if one else 'them'} across the "
                        f"CPU interconnect (SYS): one NUMA node is one CPU domain, so {'it is' if one else 'they are'} "
                        f"put in that domain under a host bridge of {'its' if one else 'their'} own, and those SYS "
                        "cells read NODE",
                    )
            if sid not in members:
                order.append(sid)
                members[sid], stated_numa[sid], first_group[sid] = [], [], list(g)
            members[sid].extend(g)
            stated_numa[sid].extend(v for v in values if v not in stated_numa[sid])
        out: list[tuple[str, list[str]]] = []
        for sid in order:
            g = sorted(members[sid], key=self.pos.__getitem__)
            first = self.rowloc[g[0]]
            labels = {"source": str(first), "inferred": "true", "members": ",".join(g)}
            if stated_numa[sid]:
                labels["numa"] = ";".join(sorted(stated_numa[sid], key=_first_number))
            affs = sorted({self.extra[d]["CPU Affinity"] for d in g if self.extra.get(d, {}).get("CPU Affinity")})
            affs = [a for a in affs if a != "N/A"]
            if affs:
                labels["cpu_affinity"] = ";".join(affs)
            self.b.obj(sid, "socket", self.node, first, labels=labels)
            out.append((sid, g))
        return out

    def stated(self, group: list[str], numa: dict[str, str]) -> set[tuple[str, str]]:
        """What the trailing columns say of a group's CPU domain: its NUMA values, else its CPU Affinity values."""
        values = {("numa", numa[d]) for d in group if d in numa}
        if values:
            return values
        affinity = (self.extra.get(d, {}).get("CPU Affinity", "") for d in group)
        return {("cpus", a) for a in affinity if a and a != "N/A"}

    def switches(self, bridge: list[str], parent: dict[str, str]) -> None:
        """PCIe switches below one host bridge: one per PXB group of 2+, inside it one per PIX group.

        Inside a PXB switch, a device that is PIX to none of the others hangs on the switch itself,
        unless a device already there is PXB to it (the two would read PIX): then it gets its own.
        """
        for pxb in self.groups(bridge, 2):
            if len(pxb) < 2:
                continue
            pix = self.groups(pxb, 1)
            top = self.switch(pxb, parent[pxb[0]], "PXB" if len(pix) > 1 else "PIX")
            for d in pxb:
                parent[d] = top
            if len(pix) == 1:
                continue
            on_top: list[str] = []
            for g in pix:
                if len(g) == 1 and all(self.codes[self.pos[g[0]]][self.pos[o]] != "2" for o in on_top):
                    on_top.append(g[0])
                    continue
                sw = self.switch(g, top, "PIX")
                for d in g:
                    parent[d] = sw

    def switch(self, members: list[str], up: str, cls: str) -> str:
        k = sum(1 for o in self.b.inv.objects.values() if o.kind == "pcie_switch")
        sid = f"{self.node}/pcisw{k}"
        loc = self.rowloc[members[0]]
        labels = {"inferred": "true", "source": str(loc), "members": ",".join(members), "class": cls}
        self.b.obj(sid, "pcie_switch", up, loc, labels=labels)
        self.b.link(sid, up, "pcie", pcie_mbps(*DEFAULT_PCIE), loc, labels={ASSUMED: "bandwidth"})
        return sid


_NV_COUNT: dict[str, int] = {}


def _code(value: str) -> str:
    """A cell's one-character class: X, N (NV#), the PCIe rank 1-5, or ? (not a cell value)."""
    if value == "X":
        return "X"
    if (m := _NV.match(value)) is not None:
        _NV_COUNT[value] = int(m.group(1))
        return "N"
    return str(_RANK[value]) if value in _RANK else "?"


def _nv_count(value: str) -> int:
    if value not in _NV_COUNT:
        _code(value)
    return _NV_COUNT[value]


# str.translate tables: a row's codes as 0/1 per column, read as a binary number (`_mask`).
_PCIE = str.maketrans({ch: "1" if ch in "12345" else "0" for ch in "XN?12345"})
_NEAR = {
    level: str.maketrans({ch: "1" if ch in "12345"[:level] else "0" for ch in "XN?12345"}) for level in range(1, 5)
}


def _mask(code: str, table: dict[int, str]) -> int:
    """Bit j set where code[j] translates to 1 (reversed: int() reads the first character as the highest bit)."""
    return int(code.translate(table)[::-1], 2)


def _found(text: str, ch: str) -> list[int]:
    """Where `ch` stands in `text`: str.find skips the rest in C (a row has a few NV# among thousands)."""
    out: list[int] = []
    j = text.find(ch)
    while j >= 0:
        out.append(j)
        j = text.find(ch, j + 1)
    return out


def _bits_of(indices: Iterable[int]) -> int:
    out = 0
    for i in indices:
        out |= 1 << i
    return out


def _members(bits: int) -> list[int]:
    """The set bits' positions, lowest first."""
    out: list[int] = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def _name(rank: int) -> str:
    return next(k for k, v in _RANK.items() if v == rank)


def _first_number(text: str) -> int:
    return int(re.split(r"[,;-]", text, maxsplit=1)[0])
