"""`topolog draw`: the topology alone, as an html page or an SVG image (registered in verifier/cli/main.py)."""

from __future__ import annotations

from pathlib import Path

import click

from verifier.cli.errors import guard
from verifier.cli.options import FROM_OPTION, _missing_files
from verifier.cli.output import refuse_inputs, write_file
from verifier.reports import render
from verifier.session.draw_run import DRAW_FORMATS, DrawRun, draw, format_for


@click.command("draw")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the drawing to FILE (its suffix, .html or .svg, chooses the format) instead of stdout.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(DRAW_FORMATS),
    default=None,
    help="html: the interactive page (the default); svg: an image laid out by Graphviz; dot: Graphviz's input.",
)
@click.option("--node", default=None, metavar="ID", help="svg/dot: only this node (or rack or pod) and what it holds.")
@click.option("--fabric", is_flag=True, help="svg/dot: nodes as single boxes, with the fabric links between them.")
@FROM_OPTION
def draw_cmd(
    inventory: tuple[Path, ...],
    output: Path | None,
    fmt: str | None,
    node: str | None,
    fabric: bool,
    from_kind: str | None,
) -> None:
    """Draw an inventory's topology: containment, NVLink domains, PCIe trees and the fabric.

    Alike nodes, racks and pods are drawn once with a count (a 131,072-GPU fleet gives a
    small file); link width shows bandwidth per direction and each path class's narrowest
    links are marked. The html page works offline (nothing is fetched); svg needs
    Graphviz's `dot`. `topolog verify --output html=PATH` draws the findings on it too.

    \b
    Example:
      topolog draw inventories/dgx-h100-pod.yaml -o topo.html
      topolog draw inventories/dgx-h100-pod.yaml -o dgx00.svg --node dgx00
      topolog draw inventories/dgx-h100-pod.yaml -o fabric.svg --fabric
    """
    chosen = format_for(output, fmt)

    def body() -> None:
        _missing_files(list(inventory))
        if output is not None:
            refuse_inputs([output], inventory)
        report = draw(list(inventory), DrawRun(node=node, fabric=fabric, from_kind=from_kind))
        text = render(report, chosen)
        if output is None:
            click.echo(text, nl=False)
        else:
            write_file(output, text)

    guard(body, nothing="nothing is drawn")
