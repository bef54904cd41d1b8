"""`topolog import` and `topolog reconcile`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.cli.errors import fail
from verifier.cli.options import format_option
from verifier.cli.output import refuse_inputs, write_file
from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.importers import KINDS, import_files
from verifier.sources.importers.reconcile import load_side, reconcile, render
from verifier.sources.importers.yaml_out import to_yaml
from verifier.sources.inventory.model import LINK_KINDS
from verifier.sources.inventory.units import UnitError, bandwidth_mbps


@click.command("import")
@click.argument("kind", type=click.Choice(KINDS))
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Write the inventory here (default: stdout).")
@click.option("--node", help="Node id for a single machine (default: the file name without extension).")
@click.option("--name", help="metadata.name of the inventory (default: the first file's stem).")
@click.option(
    "--link-kind",
    type=click.Choice([k for k in LINK_KINDS if k in ("infiniband", "ethernet")]),
    default="infiniband",
    show_default=True,
    help="slurm: the fabric's link kind (topology.conf does not say).",
)
@click.option(
    "--link-speed",
    default="400 Gb/s",
    show_default=True,
    help="slurm: per-direction speed of each fabric link (topology.conf does not say).",
)
def import_cmd(
    kind: str,
    files: tuple[Path, ...],
    output: Path | None,
    node: str | None,
    name: str | None,
    link_kind: str,
    link_speed: str,
) -> None:
    """Turn the output of a tool that describes machines into a topolog inventory (YAML).

    KIND is nvidia-smi (`nvidia-smi topo -m`), nccl-xml (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE),
    hwloc (`lstopo --of xml`) or slurm (topology.conf). Each file of a host tool is one node.
    Things the format holds that topolog does not model are listed as notes on stderr;
    input that cannot be interpreted fails with file:line (exit 2).

    \b
    Example:
      topolog import nccl-xml topo.xml --node gpu-a01 -o gpu-a01.yaml
      topolog import slurm /etc/slurm/topology.conf --link-speed "400 Gb/s" -o fabric.yaml
    """
    try:
        if output is not None:
            refuse_inputs([output], files)
        try:
            mbps = bandwidth_mbps(link_speed)
        except UnitError as err:
            raise TopologError.at(SourceLocation("--link-speed"), str(err)) from None
        result = import_files(kind, list(files), node=node, link_kind=link_kind, link_mbps=mbps)
    except TopologError as err:
        fail(err)
        return
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    text = to_yaml(result.inventory, name or files[0].stem, f"{kind}: {', '.join(str(f) for f in files)}")
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        write_file(output, text)
    except TopologError as err:
        fail(err)


_SIDE_KINDS = ("inventory", *KINDS)


@click.command("reconcile")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--a-kind", type=click.Choice(_SIDE_KINDS), help="What A is (default: detected from its content).")
@click.option("--b-kind", type=click.Choice(_SIDE_KINDS), help="What B is (default: detected from its content).")
@format_option(("text", "json"))
def reconcile_cmd(a: Path, b: Path, a_kind: str | None, b_kind: str | None, fmt: str) -> None:
    """Compare two descriptions of the same machines and report every disagreement.

    Missing devices, different PCI bus ids, different path classes between GPUs and NICs
    (NV#, PIX, PXB, NODE, SYS) and different link or port speeds, each with both places.
    Exit status: 0 they agree, 1 disagreements, 2 bad input.

    \b
    Example:
      topolog reconcile nvidia-smi-topo.txt inventories/node.yaml
      topolog reconcile nccl-topo.xml lstopo.xml --format json
    """
    try:
        for p in (a, b):
            if not p.is_file():
                raise TopologError.at(SourceLocation(str(p)), "no such file")
        items = reconcile(load_side(a, a_kind), load_side(b, b_kind))
    except TopologError as err:
        fail(err)
        return
    click.echo(render(items, fmt), nl=False)
    sys.exit(1 if items else 0)
