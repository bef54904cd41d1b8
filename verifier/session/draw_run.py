"""`draw`: the topology of one inventory alone, for verifier.reports.drawing.report to render.

Rendering (html, svg, dot) is the reports layer's; this reads the inventory once and checks
what was asked for against it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.suggest import closest
from verifier.session.inputs import read_inventory
from verifier.session.side_files import discover
from verifier.sources.inventory.model import Inventory

DRAW_FORMATS: tuple[str, ...] = ("html", "svg", "dot")
SUFFIXES = {".html": "html", ".htm": "html", ".svg": "svg", ".dot": "dot", ".gv": "dot"}
CONTAINERS = ("node", "rack", "pod", "fleet")
"""What --node may name: an object with a part of the topology inside it."""


@dataclass(frozen=True)
class DrawRun:
    """What to draw: the whole inventory, one node's (or rack's) inside, or the fabric between nodes."""

    node: str | None = None
    fabric: bool = False
    from_kind: str | None = None


@dataclass
class DrawReport:
    """An inventory to draw, and which part of it."""

    inventories: tuple[str, ...]
    inventory: Inventory
    node: str | None = None
    fabric: bool = False


def draw(inventory_paths: Sequence[Path], run: DrawRun | None = None) -> DrawReport:
    """The inventory in `inventory_paths`, ready to draw (TopologError on bad input or an unknown --node)."""
    run = run or DrawRun()
    paths = list(inventory_paths)
    inputs = read_inventory(paths, discover(paths), run.from_kind, principals=False)
    inv = inputs.inventory
    if run.node is not None:
        obj = inv.objects.get(run.node)
        if obj is None or obj.kind not in CONTAINERS:
            names = sorted(o.id for o in inv.objects.values() if o.kind in CONTAINERS)
            near = closest(run.node, names)
            hint = f"did you mean {near}? " if near else ""
            where = SourceLocation(inv.files[0] if inv.files else str(paths[0]))
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            what = "not a node, rack, pod or fleet" if obj is not None else "no such object"
            raise TopologError.at(where, f"--node {run.node}: {what}; {hint}choose one of: {shown or 'none'}")
    return DrawReport(tuple(str(p) for p in paths), inv, run.node, run.fabric)


def format_for(output: Path | None, fmt: str | None) -> str:
    """The format asked for, else the one the output file's suffix names, else html."""
    if fmt is not None:
        return fmt
    if output is not None:
        return SUFFIXES.get(output.suffix.lower(), "html")
    return "html"
