"""`topolog import`, `topolog reconcile` and `topolog export`: tools' views of machines, in and out."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from verifier.cli.errors import fail, guard
from verifier.cli.observed_options import observed_options, observed_run_of
from verifier.cli.options import _missing_files, format_option
from verifier.cli.output import emit, refuse_inputs, write_file
from verifier.core.errors import SourceLocation, TopologError
from verifier.reports import formats_for, slurm_topology
from verifier.reports import k8s_labels as k8s_labels_report
from verifier.reports.safe_text import one_line
from verifier.sources.importers import KINDS, import_files
from verifier.sources.importers.reconcile import ReconcileReport, load_side, reconcile
from verifier.sources.importers.yaml_out import to_yaml
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.model import LINK_KINDS, Inventory
from verifier.sources.inventory.units import UnitError, bandwidth_mbps
from verifier.sources.inventory.validate import name_problem


def _check_id(flag: str, value: str) -> None:
    """--node and --name become an id and metadata.name: the rules a written inventory obeys."""
    problem = name_problem(value)
    if problem is None and not value.strip():
        problem = "is empty; expected an id such as gpu-a01"
    if problem is None and flag == "--node" and "/" in value:
        problem = "holds '/', which separates the levels of an id; expected an id such as gpu-a01"
    if problem is not None:
        raise TopologError.at(SourceLocation(flag), f"{value!r} {problem}")


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
    hwloc (`lstopo --of xml`), slurm (topology.conf, topology.yaml, slurm.conf, `scontrol show
    nodes`; a topolog inventory among FILES lays the Slurm view onto its nodes), rocm-smi (`rocm-smi
    --showtopo`), amd-smi (`amd-smi topology`) or k8s-labels (`kubectl get nodes -o json`,
    optionally with inventories). Each file of a host tool is one node. Things the format
    holds that topolog does not model are listed as notes on stderr; input that cannot be
    interpreted fails with file:line (exit 2).

    \b
    Example:
      topolog import nccl-xml topo.xml --node gpu-a01 -o gpu-a01.yaml
      topolog import slurm /etc/slurm/topology.conf --link-speed "400 Gb/s" -o fabric.yaml
      topolog import rocm-smi topo.txt --node mi01 -o mi01.yaml
      topolog import k8s-labels nodes.json cluster.yaml -o checked.yaml
    """
    try:
        for flag, value in (("--node", node), ("--name", name)):
            if value is not None:
                _check_id(flag, value)
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
        click.echo(f"note: {one_line(str(note))}", err=True)
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
@click.argument("b", type=click.Path(path_type=Path), required=False)
@click.option("--a-kind", type=click.Choice(_SIDE_KINDS), help="What A is (default: detected from its content).")
@click.option("--b-kind", type=click.Choice(_SIDE_KINDS), help="What B is (default: detected from its content).")
@observed_options
@format_option(formats_for(ReconcileReport))
def reconcile_cmd(
    a: Path,
    b: Path | None,
    a_kind: str | None,
    b_kind: str | None,
    observed: tuple[Path, ...],
    observed_format: str | None,
    observed_match: str,
    observed_now: str | None,
    fmt: str,
) -> None:
    """Compare two descriptions of the same machines and report every disagreement.

    Missing devices, different PCI bus ids, different path classes between GPUs and NICs
    (NV#, PIX, PXB, NODE, SYS) and different link or port speeds, each with both places.
    With --observed instead of B, A is an inventory and B the hardware's own word
    (docs/observed.md): hosts and GPUs on one side only, and for each GPU paired by
    identity its model, identity labels, the PCIe link it trained and its active
    scale-up links, where they differ from what A declares.
    Exit status: 0 they agree, 1 disagreements, 2 bad input.

    \b
    Example:
      topolog reconcile nvidia-smi-topo.txt inventories/node.yaml
      topolog reconcile nccl-topo.xml lstopo.xml --format json
      topolog reconcile inventories/dgx-h100-pod.yaml --observed inventories/observed/dgx-h100-pod
    """
    try:
        if observed:
            if b is not None or b_kind is not None:
                raise click.UsageError("give B or --observed, not both: --observed compares A with the observations")
            report = _reconcile_observed(a, observed, observed_format, observed_match, observed_now)
            emit(report, fmt)
            sys.exit(report.exit_code)
        if b is None:
            raise click.UsageError("give B, the other description (or --observed DIR, the hardware's own word)")
        for p in (a, b):
            if not p.is_file():
                raise TopologError.at(SourceLocation(str(p)), "no such file")
        report = ReconcileReport(reconcile(load_side(a, a_kind), load_side(b, b_kind)))
    except TopologError as err:
        fail(err)
        return
    emit(report, fmt)
    sys.exit(report.exit_code)


def _reconcile_observed(
    inventory: Path, observed: tuple[Path, ...], fmt: str | None, match: str, now: str | None
) -> ReconcileReport:
    from verifier.sources.observed.reconcile import reconcile_observed  # only this form reads observations

    run = observed_run_of(observed, fmt, match, now)
    assert run is not None  # --observed was given
    _missing_files([inventory])
    return ReconcileReport(reconcile_observed(load_inventory([inventory]), run.read(), run.settings.match))


@click.group("export")
def export_cmd() -> None:
    """Write what schedulers should believe, from the inventory: Slurm topology, Kubernetes labels.

    \b
    Example:
      topolog export slurm-topology cluster.yaml --form yaml -o /etc/slurm/topology.yaml
      topolog export k8s-labels cluster.yaml | sh
    """


def _export(inventory: tuple[Path, ...], output: Path | None, render: Callable[[Inventory], str]) -> None:
    def body() -> None:
        _missing_files(list(inventory))
        if output is not None:
            refuse_inputs([output], inventory)
        text = render(load_inventory(list(inventory)))
        if output is None:
            click.echo(text, nl=False)
        else:
            write_file(output, text)

    guard(body)


OUTPUT_OPTION = click.option(
    "-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="Write here (default: stdout)."
)


@export_cmd.command("slurm-topology")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--form",
    type=click.Choice(slurm_topology.FORMS),
    default="yaml",
    show_default=True,
    help="yaml: topology.yaml (a tree and a block topology); tree or block: topology.conf lines.",
)
@OUTPUT_OPTION
def export_slurm_cmd(inventory: tuple[Path, ...], form: str, output: Path | None) -> None:
    """Write Slurm's topology from the inventory: NVLink domains as blocks, the fabric as a tree.

    \b
    Example:
      topolog export slurm-topology cluster.yaml --form yaml -o /etc/slurm/topology.yaml
      topolog export slurm-topology cluster.yaml --form tree
    """
    _export(inventory, output, lambda inv: slurm_topology.render(inv, form))


@export_cmd.command("k8s-labels")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@OUTPUT_OPTION
def export_k8s_cmd(inventory: tuple[Path, ...], output: Path | None) -> None:
    """Write the topograph / GPU Feature Discovery node labels the inventory implies, as kubectl commands.

    \b
    Example:
      topolog export k8s-labels cluster.yaml | sh
      topolog export k8s-labels cluster.yaml -o labels.sh
    """
    _export(inventory, output, k8s_labels_report.render)
