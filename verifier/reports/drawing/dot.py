"""A drawing as Graphviz DOT, and Graphviz's layout of it (`dot`, run as a program).

Graphviz lays out the hierarchy: every drawn object with contents is a cluster (fleet, pod,
rack, node, NVLink domain), everything else a node. Edges are written downwards along
the PCIe tree and out to the fabric (CPU, PCIe switch, GPU and NIC, NVSwitch, leaf, spine),
so that `dot` ranks a node's PCIe tree top to bottom with the fabric below the nodes.
Links between peers (NVLink between GPUs, UPI between CPUs) do not constrain the ranks.
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from verifier.core.errors import SourceLocation, TopologError
from verifier.reports.drawing.model import Box, Drawing, Wire

KIND_COLOURS: Mapping[str, str] = {
    "nvlink": "#76b900",
    "nvswitch": "#76b900",
    "xgmi": "#c0392b",
    "c2c": "#8e44ad",
    "d2d": "#8e44ad",
    "pcie": "#0969da",
    "upi": "#57606a",
    "infiniband": "#d4a000",
    "ethernet": "#e67e22",
    "soc": "#16a085",
}
NODE_COLOURS: Mapping[str, str] = {
    "gpu": "#b7e07a",
    "nvswitch": "#d7ecb4",
    "nic": "#f6d58e",
    "pcie_switch": "#a8c8f0",
    "cpu": "#c9ced6",
    "memory": "#e6e8eb",
    "switch": "#f2c38b",
    "cache": "#eef0f2",
    "core": "#dfe3e8",
    "fpga": "#f3b6c6",
}
_RANK = {"memory": 0, "cache": 0, "core": 0, "cpu": 1, "socket": 1, "die": 1, "pcie_switch": 2}
_RANK.update({"gpu": 3, "nic": 3, "fpga": 3, "nvswitch": 4, "switch": 5})
TIMEOUT_S = 120

INSTALL_HINT = "install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz)"


@dataclass(frozen=True)
class View:
    """What part of a drawing to write: everything, one node's inside, or the fabric between nodes."""

    only: str | None = None
    """A box id: only it and what it holds (e.g. one node)."""
    fabric: bool = False
    """Nodes as single boxes (their devices folded), with the links between them."""
    marks: bool = True
    """Outline in red what findings name (the boxes built as `focus`)."""


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _rank(box: Box) -> int:
    rank = _RANK.get(box.obj.kind, 3)
    if box.obj.kind == "switch" and box.obj.labels.get("role") in ("spine", "core", "super-spine"):
        rank += 1
    return rank


def penwidth(mbps: int) -> float:
    """Line width by bandwidth per direction, on a log scale: 1 GB/s and less is 0.6, 1 TB/s 3.6."""
    return round(max(0.6, min(6.0, math.log10(max(mbps, 1000) / 1000) + 0.6)), 2)


def label_of(box: Box) -> str:
    """A box's label: its last id component, and its count when it stands for alike siblings."""
    short = box.id.rsplit("/", 1)[-1]
    return short if box.count == 1 else f"{short} \u00d7{box.count}"


def dot_text(
    drawing: Drawing,
    view: View | None = None,
    *,
    detailed: bool = True,
    font: float = 8.0,
    folded_font: float | None = None,
    merge_parallel: bool = False,
) -> str:
    """DOT text of `drawing`; `detailed` adds colours, tooltips and bottleneck labels (for SVG).

    `font` is the boxes' label size in points and `folded_font` that of a node folded into one
    box (fabric view): Graphviz sizes each box to hold its label, so the html page, which draws
    its labels at these sizes, passes them to get boxes that hold its text and never overlap.
    """
    view = view or View()
    boxes = {b.id: b for b in drawing.boxes}
    domain_host = {d.id: d.host for d in drawing.domains if d.host is not None}

    def up(pid: str | None) -> str | None:
        """The drawn box above a parent id (a domain group is inside its node)."""
        return domain_host.get(pid, pid) if pid is not None else None

    folded = {b.id for b in drawing.boxes if b.obj.kind == "node"} if view.fabric else set()

    def shown_as(bid: str) -> str | None:
        """The box `bid` is drawn as in this view: itself, a folded node above it, or None (outside)."""
        chain = []
        cur: str | None = bid
        while cur is not None:
            chain.append(cur)
            cur = up(boxes[cur].parent) if cur in boxes else None
        if view.only is not None and view.only not in chain:
            return None
        for c in reversed(chain):
            if c in folded:
                return c
        return bid

    members = [b for b in drawing.boxes if shown_as(b.id) == b.id]
    kids: dict[str | None, list[Box]] = {}
    for b in members:
        parent = b.parent if b.id != view.only else None
        kids.setdefault(parent, []).append(b)
    groups = {d.id: d for d in drawing.domains if d.host is not None}
    wired = {w.a for w in drawing.wires} | {w.b for w in drawing.wires}
    lines = [
        "graph topology {",
        '  graph [rankdir=TB, newrank=true, fontname="Helvetica", fontsize=10, nodesep=0.12, ranksep=0.35,'
        " pad=0.1, outputorder=edgesfirst];",
        f'  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize={font:g}, height=0.24,'
        ' width=0.62, margin="0.04,0.02", fillcolor="#eef0f2", color="#8c959f"];',
        '  edge [color="#8c959f"];',
    ]

    def node_line(b: Box, indent: str) -> str:
        attrs = [f"label={_q(label_of(b))}", f"id={_q(b.id)}"]
        if folded_font is not None and b.id in folded:
            attrs.append(f'fontsize={folded_font:g}, margin="0.12,0.06"')
        if detailed:
            attrs.append(f"fillcolor={_q(NODE_COLOURS.get(b.obj.kind, '#eef0f2'))}")
            tip = f"{b.obj.kind} {b.id}" + (f" ({b.obj.model})" if b.obj.model else "")
            attrs.append(f"tooltip={_q(tip)}")
            if b.focus and view.marks:
                attrs.append('color="#cf222e", penwidth=2')
        return f"{indent}{_q(b.id)} [{', '.join(attrs)}];"

    def emit(parent: str | None, indent: str) -> None:
        inner = sorted(kids.get(parent, []), key=lambda b: b.id)
        domains_here = sorted(d for d in groups if groups[d].host == parent and (d in kids))
        for d in domains_here:
            lines.append(f"{indent}subgraph {_q('cluster_' + d)} {{")
            lines.append(f"{indent}  label={_q(f'NVLink domain, {groups[d].gpus} GPUs')}; id={_q(d)};")
            if detailed:
                lines.append(f'{indent}  style="dashed,rounded"; color="#76b900"; fontsize=8;')
            emit(d, indent + "  ")
            lines.append(f"{indent}}}")
        for b in inner:
            inside = b.id in kids or any(groups[d].host == b.id and d in kids for d in groups)
            if inside and b.id not in folded:
                lines.append(f"{indent}subgraph {_q('cluster_' + b.id)} {{")
                title = label_of(b) + (f" ({b.obj.model})" if b.obj.model and b.obj.kind in ("node", "system") else "")
                lines.append(f"{indent}  label={_q(title)}; id={_q('cluster_' + b.id)};")
                if detailed:
                    red = b.focus and view.marks
                    style = 'style="rounded"; color="#cf222e"' if red else 'style="rounded"; color="#8c959f"'
                    lines.append(f'{indent}  {style}; fontsize=9; bgcolor="#ffffff";')
                if b.id in wired:  # a container with links of its own: they attach to its anchor
                    lines.append(node_line(b, indent + "  "))
                emit(b.id, indent + "  ")
                lines.append(f"{indent}}}")
            else:
                lines.append(node_line(b, indent))

    emit(None, "  ")
    # An edge per endpoint pair, kind, bandwidth and state; with `merge_parallel`, one per
    # unordered endpoint pair (what run_dot_merging retries with when dot fails on the former).
    edges: dict[tuple[str, ...], list[Wire]] = {}
    for w in drawing.wires:
        a, z = shown_as(w.a) if w.a in boxes else None, shown_as(w.b) if w.b in boxes else None
        if a is None or z is None or a == z:
            continue
        key: tuple[str, ...] = (min(a, z), max(a, z))
        if not merge_parallel:
            key = (a, z, w.kind, str(w.mbps).zfill(20), w.state or "")
        edges.setdefault(key, []).append(w)
    for key, ws in sorted(edges.items()):
        a, z = key[0], key[1]
        ra, rz = _rank(boxes[a]), _rank(boxes[z])
        if (ra, a) > (rz, z):
            a, z = z, a
        mbps = max(w.mbps for w in ws)
        kinds = {w.kind for w in ws}
        states = {w.state or "" for w in ws}
        state = states.pop() if len(states) == 1 else ""
        attrs = [f"id={_q(ws[0].id)}", f"penwidth={penwidth(mbps)}"]
        if ra == rz:
            attrs.append("constraint=false")
        if detailed:
            kind = next(iter(kinds)) if len(kinds) == 1 else ""
            colour = "#cf222e" if state == "down" else KIND_COLOURS.get(kind, "#8c959f")
            attrs.append(f"color={_q(colour)}")
            tips: dict[tuple[str, int, str], int] = {}
            for w in ws:
                tips[(w.kind, w.mbps, w.state or "")] = tips.get((w.kind, w.mbps, w.state or ""), 0) + w.count
            tip = "; ".join(
                f"{k} {m / 1000:g} GB/s per direction"
                + (f" x{n}" if n > 1 else "")
                + (f" ({st})" if merge_parallel and st else "")
                for (k, m, st), n in sorted(tips.items())
            )
            attrs.append(f"tooltip={_q(tip)}")
            if state in ("down", "degraded"):
                attrs.append('style="dashed"' if state == "degraded" else 'style="dotted"')
            narrow = sorted({w.mbps for w in ws if w.bottleneck})
            if narrow:
                figures = ", ".join(f"{m / 1000:g}" for m in narrow)
                attrs.append(f'label={_q(f"{figures} GB/s")}, fontsize=7, fontcolor="#bc4c00"')
        lines.append(f"  {_q(a)} -- {_q(z)} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def dot_path() -> str | None:
    """The `dot` program, when Graphviz is installed."""
    return shutil.which("dot")


class DotFailed(TopologError):
    """Graphviz's dot was there but did not lay the drawing out (crashed, failed or timed out)."""


class DotTimedOut(DotFailed):
    """dot ran past TIMEOUT_S (not retried: a merged drawing is hardly smaller)."""


def run_dot(text: str, fmt: str) -> str:
    """`dot -T<fmt>` on `text` (TopologError, exit 2 at the CLI, when Graphviz is missing; DotFailed when it fails)."""
    program = dot_path()
    if program is None:
        raise TopologError.at(SourceLocation("dot"), f"Graphviz's dot program is not on PATH; {INSTALL_HINT}")
    try:
        done = subprocess.run(
            [program, f"-T{fmt}"], input=text, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as err:
        raise DotTimedOut.at(SourceLocation(program), f"Graphviz's dot failed: {err}") from None
    except OSError as err:
        raise DotFailed.at(SourceLocation(program), f"Graphviz's dot failed: {err}") from None
    if done.returncode != 0:
        raise DotFailed.at(SourceLocation(program), f"Graphviz's dot failed: {done.stderr.strip()[:500]}")
    return done.stdout


def run_dot_merging(text_of: Callable[[bool], str], fmt: str) -> str:
    """`dot -T<fmt>` on `text_of(False)`; when dot fails on it, again on `text_of(True)` (parallel edges merged).

    Some Graphviz releases (2.43 among them) abort in merge_chain (class2.c, "ED_to_virt(e) ==
    NULL") on two or more edges between the same pair of boxes in different clusters next to
    another flat edge: GPUs of two nodes joined by two cables, say (Graphviz issue 121, Mantis
    2456, github.com/ellson/MOTHBALLED-graphviz/issues/121: two constraint=none edges between
    nodes of two clusters, reported on 2.26 and 2.38). One edge per endpoint
    pair lays out the same boxes, so the retry loses only the drawing's parallel wires.
    """
    try:
        return run_dot(text_of(False), fmt)
    except DotTimedOut:
        raise
    except DotFailed as first:
        try:
            return run_dot(text_of(True), fmt)
        except DotFailed:
            raise first from None


_GENERATOR = re.compile(r"<!-- Generated by graphviz[^>]*-->\n")


def svg(drawing: Drawing, view: View | None = None) -> str:
    """The drawing as a standalone SVG, with the Graphviz version comment taken out."""
    try:
        text = run_dot_merging(lambda merged: dot_text(drawing, view, merge_parallel=merged), "svg")
    except DotFailed as err:
        # An SVG is Graphviz's drawing: none without it. The html page and the DOT text need no dot.
        where = err.diagnostics[0].location
        reason = err.diagnostics[0].message
        raise DotFailed.at(
            where, f"{reason}; no SVG without it: write html (-o x.html) or the DOT text (-o x.dot)"
        ) from None
    return _GENERATOR.sub("", text)


Placed = tuple[float, float, float, float]
"""A box as Graphviz placed it: centre x, centre y (points, y downwards), width, height (points)."""


def layout(
    drawing: Drawing, view: View | None = None, *, font: float = 8.0, folded_font: float | None = None
) -> dict[str, Placed] | None:
    """Graphviz's place and size of every box drawn as a box in `view`; None without Graphviz.

    DotFailed when dot fails on the drawing even with its parallel edges merged.
    """
    if dot_path() is None:
        return None
    placed = json.loads(
        run_dot_merging(
            lambda merged: dot_text(
                drawing, view, detailed=False, font=font, folded_font=folded_font, merge_parallel=merged
            ),
            "json0",
        )
    )
    height = float(str(placed.get("bb", "0,0,0,0")).split(",")[3])
    out: dict[str, Placed] = {}
    boxes = {b.id for b in drawing.boxes}
    objects: Iterable[dict[str, object]] = placed.get("objects", [])
    for obj in objects:
        name = str(obj.get("name", ""))
        pos = obj.get("pos")
        if name in boxes and isinstance(pos, str):
            x, y = (float(v) for v in pos.split(","))
            # json0 gives sizes in inches; 72 points to the inch, the unit of `pos`.
            w = float(str(obj.get("width", "0"))) * 72
            h = float(str(obj.get("height", "0"))) * 72
            out[name] = (round(x, 1), round(height - y, 1), round(w, 1), round(h, 1))
    return out


def positions(drawing: Drawing, view: View | None = None) -> dict[str, tuple[float, float]] | None:
    """Graphviz's position (points, y downwards) of every box drawn as a box in `view`; None without Graphviz."""
    placed = layout(drawing, view)
    return None if placed is None else {k: (x, y) for k, (x, y, _w, _h) in placed.items()}
