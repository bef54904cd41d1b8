"""`--output html=PATH`: one self-contained page with the topology drawn and the findings on it.

The page carries everything it needs: cytoscape.js (MIT, vendored in verifier/reports/assets
with its licence), the page's own script and style, and the drawing as JSON in a
`<script type="application/json">` element. A Content-Security-Policy forbids every fetch,
so the page works the same from disk, from a CI artifact or behind a proxy. Inventory text
is data only: the JSON escapes `<`, `>` and `&`, and the script builds the DOM with
textContent, never markup. Nothing varies between runs (no time, no random layout seed,
keys sorted), so the same inputs give a byte-identical file.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from verifier.checks.findings import Finding
from verifier.checks.verify import VerifyReport
from verifier.core.resources import package_dir
from verifier.reports.drawing.dot import DotFailed, View, layout, penwidth
from verifier.reports.drawing.model import MAX_LISTED, Drawing, Wire, build
from verifier.reports.text_report import settings_lines

ASSETS = ("reports", "assets")
OVERVIEW_ABOVE = 1
"""Past this many nodes drawn, the page opens on the overview: nodes folded, laid out with the fabric.

Two nodes drawn in full are already wider than a screen at a zoom where their labels can be read."""
FONT = 10.0
"""Label size of a box on the page (model units; px at zoom 1); Graphviz sizes the boxes for it."""
FOLDED_FONT = 14.0
"""Label size of a node folded into one box on the overview."""
READABLE_PX = 9.0
"""The smallest label text, in screen px, that the page opens at or frames a finding at."""


@dataclass(frozen=True)
class Marked:
    """A finding as the page shows it."""

    finding: Finding
    waived: bool = False


def asset(name: str) -> str:
    """The text of a shipped asset (verifier/reports/assets/NAME)."""
    return package_dir("verifier").joinpath(*ASSETS, name).read_text(encoding="utf-8")


def render(report: VerifyReport) -> str:
    """The html report of a verify run: every cluster drawn, every finding (waived ones marked) on it."""
    marked = [Marked(r.finding, r.waiver is not None) for r in report.results]
    title = "topolog verify: " + ", ".join(report.inventories)
    subjects = [s for m in marked for s in m.finding.subjects]
    drawings = [build(inv, subjects) for inv in report.topology]
    counts = {str(s): n for s, n in report.counts.items()}
    return page(title, drawings, marked, counts, notes=settings_lines(report))


def page(
    title: str,
    drawings: Sequence[Drawing],
    marked: Sequence[Marked] = (),
    counts: Mapping[str, int] | None = None,
    notes: Sequence[str] = (),
) -> str:
    """The page: `drawings` (one per cluster) with `marked` findings placed on them; `notes`, lines
    under the title (what configuration shaped the run), escaped as HTML text.
    """
    data = page_data(title, drawings, marked, counts)
    if data.get("layout_failed"):
        reason = str(data["layout_failed"])
        notes = [*notes, f"Layout: {reason}; the browser lays this page out instead (less orderly, boxes may overlap)."]
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    # Inside <script> only "</" could end the element; escaping every <, > and & keeps any
    # inventory text inert without changing the JSON's meaning.
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    library = asset("cytoscape.min.js")
    if "</script" in library.lower():  # pragma: no cover - a vendored update that needs escaping
        raise ValueError("the vendored cytoscape.min.js contains </script")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: blob:\">\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)}</title>\n"
        f"<style>\n{asset('topology.css')}</style>\n"
        "</head>\n<body>\n"
        '<header><h1 id="title"></h1><span id="summary"></span>'
        + "".join(f'<p class="settings">{html.escape(note)}</p>' for note in notes)
        + "</header>\n"
        '<main>\n<nav id="side">\n'
        '<section><h2>Filters</h2><div id="severities"></div>'
        '<label>Rule <select id="rule"></select></label></section>\n'
        '<section><h2>Findings</h2><ol id="findings"></ol></section>\n'
        '<section><h2>Bottlenecks</h2><p class="hint">narrowest link per direction of each path class'
        '</p><ul id="classes"></ul></section>\n'
        '<section><h2>NVLink domains</h2><ul id="domains"></ul></section>\n'
        '<section><h2>Drill-down</h2><button id="overview">Overview</button> '
        '<button id="fold-nodes">Fold every node</button> '
        '<button id="fold-racks">Fold every rack</button> <button id="open-all">Open all</button>'
        '<p class="hint">Overview: nodes as boxes with the fabric; double-click a node there to see '
        "inside it. Double-click a node or rack in the full drawing to fold or open it.</p></section>\n"
        '<section><h2>Legend</h2><div id="legend"></div></section>\n'
        '</nav>\n<div id="cy"></div>\n<aside id="details"><p class="hint">Click a finding, a device '
        "or a link to see it here.</p></aside>\n</main>\n"
        f'<script type="application/json" id="topolog-data">{text}</script>\n'
        f"<script>\n{library}\n</script>\n"
        f"<script>\n{asset('topology.js')}</script>\n"
        "</body>\n</html>\n"
    )


def page_data(
    title: str,
    drawings: Sequence[Drawing],
    marked: Sequence[Marked] = (),
    counts: Mapping[str, int] | None = None,
) -> dict[str, object]:
    """Everything the page shows, as JSON-ready data (the structure tests read this).

    A Graphviz that fails on a drawing even after the merged retry (verifier.reports.drawing.dot)
    costs the page its precomputed layout, not the report: the page is then written as without
    Graphviz (the browser lays it out), with `layout_failed` saying why.
    """
    try:
        return _page_data(title, drawings, marked, counts, graphviz=True)
    except DotFailed as err:
        data = _page_data(title, drawings, marked, counts, graphviz=False)
        data["layout_failed"] = str(err)
        return data


def _page_data(
    title: str,
    drawings: Sequence[Drawing],
    marked: Sequence[Marked],
    counts: Mapping[str, int] | None,
    *,
    graphviz: bool,
) -> dict[str, object]:
    several = len(drawings) > 1
    nodes: list[dict[str, object]] = []
    edges: list[dict[str, object]] = []
    info: dict[str, dict[str, object]] = {}
    models: dict[str, dict[str, object]] = {}
    domains: list[dict[str, object]] = []
    classes: list[dict[str, object]] = []
    laid_out = True
    shift = shift_o = 0.0  # clusters side by side, each as Graphviz laid it out
    overview: dict[str, list[float]] = {}
    aerial_of: dict[str, str] = {}  # drawn element -> the element that shows it on the overview
    for k, drawing in enumerate(drawings):
        inv = drawing.inventory
        prefix = f"c{k}:" if several else ""
        where = layout(drawing, font=FONT) if graphviz else None
        if where is None:
            laid_out = False
            where = {}
        # The overview: nodes as single boxes with the fabric between them (the page starts
        # there when there are more than OVERVIEW_ABOVE nodes to draw).
        nodes_drawn = sum(1 for b in drawing.boxes if b.obj.kind == "node")
        if laid_out and nodes_drawn > OVERVIEW_ABOVE:
            aerial = layout(drawing, View(fabric=True), font=FONT, folded_font=FOLDED_FONT) or {}
            right_o = max((x + w / 2 for x, _, w, _ in aerial.values()), default=0.0)
            overview.update((prefix + bid, [round(x + shift_o, 1), y, w, h]) for bid, (x, y, w, h) in aerial.items())
            shift_o += right_o + 200.0
            shown = _shown_on_overview(drawing)
            aerial_of.update((prefix + b, prefix + s) for b, s in shown.items())
            for oid, folded_edge, about in _overview_edges(drawing, shown, prefix, aerial_of):
                edges.append(folded_edge)
                info[oid] = about
        right = max((x + w / 2 for x, _, w, _ in where.values()), default=0.0)
        top: str | None = None
        name = inv.names.get(inv.files[0], inv.files[0]) if inv.files else f"cluster {k}"
        cluster = f"{name}: " if several else ""  # lists name the cluster when there are several
        if several:
            top = f"cluster:{k}"
            nodes.append({"data": {"id": top, "label": name, "kind": "cluster"}})
            info[top] = {"kind": "cluster", "files": list(inv.files)}
        for dom in drawing.domains:
            did = prefix + dom.id
            if dom.host is not None:
                host = prefix + drawing.drawn[dom.host]
                nodes.append(
                    {"data": {"id": did, "label": f"NVLink domain, {dom.gpus} GPUs", "kind": "domain", "parent": host}}
                )
            where_is = f"in {dom.host}" if dom.host is not None else "across nodes"
            domains.append(
                {
                    "id": did,
                    "gpus": dom.gpus,
                    "label": f"{cluster}{dom.gpus} GPUs {where_is}",
                    "members": [prefix + m for m in dom.members],
                    "grouped": dom.host is not None,
                }
            )
            info[did] = {"kind": "NVLink domain", "gpus": dom.gpus, "members": [prefix + m for m in dom.members]}
        for box in drawing.boxes:
            o = box.obj
            bid = prefix + box.id
            short = box.id.rsplit("/", 1)[-1]
            label = short if box.count == 1 else f"{short} \u00d7{box.count}"
            parent = prefix + box.parent if box.parent is not None else top
            entry: dict[str, object] = {"id": bid, "label": label, "kind": o.kind}
            if parent is not None:
                entry["parent"] = parent
            if box.focus:
                entry["focus"] = 1
            element: dict[str, object] = {"data": entry}
            if box.id in where:
                x, y, w, h = where[box.id]
                element["position"] = {"x": round(x + shift, 1), "y": y}
                entry["w"], entry["h"] = w, h
            nodes.append(element)
            details: dict[str, object] = {
                "id": box.id,
                "kind": o.kind,
                "location": f"{o.loc.file}:{o.loc.line}" if o.loc.line else o.loc.file,
                "stands_for": drawing.weight.get(box.id, 1),
            }
            if box.count > 1:
                details["alike"] = {"count": box.count, "members": list(box.members)}
            for key, value in (("model", o.model), ("state", o.state), ("template", o.template)):
                if value:
                    details[key] = value
            if o.labels:
                details["labels"] = dict(sorted(o.labels.items()))
            if o.quantities:
                details["quantities"] = dict(sorted(o.quantities.items()))
            if o.model and o.model in inv.models:
                m = inv.models[o.model]
                models[o.model] = {
                    "vendor": m.vendor,
                    "kind": m.kind,
                    "specs": dict(sorted(m.specs.items())),
                    "features": sorted(m.features),
                    "source": m.source,
                }
            info[bid] = details
        for wire in drawing.wires:
            wid = prefix + wire.id
            edge: dict[str, object] = {
                "id": wid,
                "source": prefix + wire.a,
                "target": prefix + wire.b,
                "kind": wire.kind,
                "mbps": wire.mbps,
                "label": _rate(wire.mbps) + (f" \u00d7{wire.count}" if wire.count > 1 else ""),
                "width": penwidth(wire.mbps),
            }
            classes_of = [f"k-{wire.kind}"]
            if wire.state:
                classes_of.append(f"s-{wire.state}")
            if wire.bottleneck:
                classes_of.append("bottleneck")
            edges.append({"data": edge, "classes": " ".join(classes_of)})
            first = wire.first
            details = {
                "kind": wire.kind,
                "per_direction": _rate(wire.mbps),
                "mbps": wire.mbps,
                "path_class": wire.path_class,
                "links": list(wire.links),
                "count": wire.count,
                "location": f"{first.loc.file}:{first.loc.line}" if first.loc.line else first.loc.file,
                "ends": [prefix + wire.a, prefix + wire.b],
            }
            if wire.state:
                details["state"] = wire.state
            if first.attrs:
                details["attrs"] = dict(sorted(first.attrs.items()))
            if wire.bottleneck:
                details["bottleneck"] = True
            info[wid] = details
        for pc in drawing.classes:
            classes.append(
                {
                    "id": prefix + pc.id,
                    "what": cluster + pc.what,
                    "mbps": pc.mbps,
                    "rate": _rate(pc.mbps),
                    "widest": _rate(pc.widest),
                    "wires": [prefix + w for w in pc.wires],
                }
            )
        shift += right + 200.0
    findings = [_finding(i, m, drawings, several, aerial_of) for i, m in enumerate(marked)]
    return {
        "title": title,
        "fonts": {"box": FONT, "folded": FOLDED_FONT, "readable_px": READABLE_PX},
        "counts": dict(counts or {}),
        "nodes": nodes,
        "edges": edges,
        "info": info,
        "models": dict(sorted(models.items())),
        "findings": findings,
        "domains": domains,
        "classes": classes,
        "laid_out": laid_out,
        "overview": overview,
    }


def _shown_on_overview(drawing: Drawing) -> dict[str, str]:
    """Each box -> the box it is seen as on the overview: the node folded around it, or itself."""
    parent = {b.id: b.parent for b in drawing.boxes}
    parent.update((d.id, d.host) for d in drawing.domains if d.host is not None)
    kind = {b.id: b.obj.kind for b in drawing.boxes}
    shown: dict[str, str] = {}
    for box in drawing.boxes:
        seen, cur = box.id, box.parent
        while cur is not None:  # the outermost node above the box folds it
            if kind.get(cur) == "node":
                seen = cur
            cur = parent.get(cur)
        shown[box.id] = seen
    return shown


def _overview_edges(
    drawing: Drawing, shown: Mapping[str, str], prefix: str, aerial_of: dict[str, str]
) -> Iterable[tuple[str, dict[str, object], dict[str, object]]]:
    """The overview's edges: the drawing's wires between what the overview shows (a node's NICs
    fold into one edge per leaf, kind, bandwidth and state, as Graphviz's fabric view draws them).
    A wire inside one folded node is seen as that node; one between two boxes the overview shows
    as themselves (leaf to spine) as itself. Records each folded wire in `aerial_of`.
    """
    groups: dict[tuple[str, str, str, int, str], list[Wire]] = {}
    for wire in drawing.wires:
        a, z = shown.get(wire.a, wire.a), shown.get(wire.b, wire.b)
        if a == z:
            aerial_of[prefix + wire.id] = prefix + a
            continue
        if (a, z) == (wire.a, wire.b):
            continue  # between boxes the overview shows as themselves: the wire itself is drawn there
        a, z = min(a, z), max(a, z)
        groups.setdefault((a, z, wire.kind, wire.mbps, wire.state or ""), []).append(wire)
    for i, key in enumerate(sorted(groups)):
        a, z, kind, mbps, state = key
        wires = groups[key]
        oid = f"{prefix}o{i}"
        count = sum(w.count for w in wires)
        edge: dict[str, object] = {
            "id": oid,
            "source": prefix + a,
            "target": prefix + z,
            "kind": kind,
            "mbps": mbps,
            "label": _rate(mbps) + (f" \u00d7{count}" if count > 1 else ""),
            "width": penwidth(mbps),
            "overview": 1,
        }
        classes_of = ["ov", f"k-{kind}"] + ([f"s-{state}"] if state else [])
        details: dict[str, object] = {
            "kind": kind,
            "per_direction": _rate(mbps),
            "mbps": mbps,
            "count": count,
            "links": sorted(link for w in wires for link in w.links)[:MAX_LISTED],
            "ends": [prefix + a, prefix + z],
        }
        if state:
            details["state"] = state
        for w in wires:
            aerial_of[prefix + w.id] = oid
        yield oid, {"data": edge, "classes": " ".join(classes_of)}, details


def _finding(
    i: int, m: Marked, drawings: Sequence[Drawing], several: bool, aerial_of: Mapping[str, str]
) -> dict[str, object]:
    f = m.finding
    targets = sorted(set(_targets(f.subjects, drawings, several)))
    out: dict[str, object] = {
        "id": f"f{i}",
        "rule": f.rule,
        "severity": f.severity,
        "message": f.message,
        "subjects": list(f.subjects),
        "location": None if f.location is None else _where(f.location.file, f.location.line),
        "targets": targets,
        # What marks it on the overview: the node folded around a device, the fabric edge a cable is in.
        "overview_targets": sorted({aerial_of.get(t, t) for t in targets}),
        "waived": m.waived,
        "proof": None if f.proof is None else f.proof.to_dict(),
    }
    return out


def _targets(subjects: Iterable[str], drawings: Sequence[Drawing], several: bool) -> Iterable[str]:
    """The drawn elements of a finding's subjects: objects and links (teams and jobs are not drawn)."""
    for subject in subjects:
        for k, drawing in enumerate(drawings):
            prefix = f"c{k}:" if several else ""
            if subject in drawing.drawn:
                yield prefix + drawing.drawn[subject]
                break
            if subject in drawing.wire_of:
                yield prefix + drawing.wire_of[subject]
                break


def _where(file: str, line: int) -> str:
    return f"{file}:{line}" if line else file


def _rate(mbps: int) -> str:
    """Bandwidth per direction, as people write it: GB/s (1 GB/s = 1,000 MB/s)."""
    gbps = mbps / 1000
    text = f"{gbps:.1f}".rstrip("0").rstrip(".") if gbps < 10 else f"{gbps:,.0f}"
    return f"{text} GB/s"
