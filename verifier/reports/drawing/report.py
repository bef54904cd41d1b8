"""The formats of `topolog draw` (verifier.session.draw_run.DrawReport): html, svg and dot."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from verifier.reports.drawing.dot import View, dot_text, svg
from verifier.reports.drawing.model import Drawing, build
from verifier.reports.html_report import page

if TYPE_CHECKING:  # the type only: rendering must not load the session layer (and the engine below it)
    from verifier.session.draw_run import DrawReport


def _drawing(report: DrawReport) -> tuple[Drawing, View]:
    # The node asked for is drawn as itself, not as an alike sibling's representative.
    drawing = build(report.inventory, [report.node] if report.node else [])
    # No findings here: the node asked for is `focus` only to be drawn as itself, not marked.
    return drawing, View(only=report.node, fabric=report.fabric, marks=False)


def render_html(report: DrawReport) -> str:
    """The topology alone as the html report's page (the whole inventory; --node and --fabric are for svg/dot)."""
    drawing, _view = _drawing(report)
    return page("topolog draw: " + ", ".join(report.inventories), [drawing])


def render_svg(report: DrawReport) -> str:
    """The topology (or one node, or the fabric) as a standalone SVG image, laid out by Graphviz."""
    drawing, view = _drawing(report)
    return svg(drawing, view)


def render_dot(report: DrawReport) -> str:
    """The DOT text that render_svg hands to Graphviz."""
    drawing, view = _drawing(report)
    return dot_text(drawing, view)


FORMATS: Mapping[str, Callable[[DrawReport], str]] = {"html": render_html, "svg": render_svg, "dot": render_dot}
