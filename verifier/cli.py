"""The `topolog` command: a thin click layer over verify, query, explain and rules.

Exit codes never change meaning: 0 no finding at or above --fail-on, 1 findings,
2 bad input or usage (every problem printed as file:line: message).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import ClassVar

import click

from verifier import __version__
from verifier.cli_errors import guard
from verifier.datalog.backend import BACKENDS
from verifier.datalog.checks import check_query
from verifier.datalog.parser import parse_query
from verifier.errors import SourceLocation, TopologError
from verifier.findings import SEVERITIES
from verifier.progress import Progress

ENGINE_OPTION = click.option(
    "--engine",
    type=click.Choice(BACKENDS),
    default="duckdb",
    show_default=True,
    help="Evaluation engine: duckdb (fast) or pydatalog (reference semantics).",
)
RULES_OPTION = click.option(
    "--rules",
    "rules",
    type=click.Path(path_type=Path),
    multiple=True,
    help="Rule file or directory (repeatable). Default: the rules/ shipped with topolog.",
)


def _missing_files(paths: Sequence[Path]) -> None:
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise TopologError.at(SourceLocation(str(missing[0])), "no such file or directory")


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs (or help lists it).

    cedarpy and the importers take ~0.1 s to import; `topolog query` should not pay for them.
    """

    LAZY: ClassVar[dict[str, str]] = {
        "audit": "verifier.authz.commands:audit_cmd",
        "authorize": "verifier.authz.commands:authorize_cmd",
        "import": "verifier.importers.commands:import_cmd",
        "reconcile": "verifier.importers.commands:reconcile_cmd",
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.LAZY:
            module, attr = self.LAZY[cmd_name].split(":")
            command = getattr(importlib.import_module(module), attr)
            assert isinstance(command, click.Command)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="topolog")
def main() -> None:
    """Verify AI infrastructure topology before it is used.

    \b
    Example:
      topolog verify inventories/dgx-h100-pod.yaml
    """


IMPORT_KINDS = ("nvidia-smi", "nccl-xml", "hwloc", "slurm")
"""verifier.importers.KINDS, repeated so that `--help` need not import the importers."""

REPORT_FORMATS = ("text", "json", "sarif", "junit", "github")
"""The names in verifier.output.FORMATS, repeated so that `--help` need not import the engines."""
FILE_TYPE = click.Path(path_type=Path, dir_okay=False)


def _parse_today(_ctx: click.Context, _param: click.Parameter, value: str | None) -> date | None:
    from verifier.waivers import parse_date

    if value is None:
        return None
    try:
        return parse_date(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None


@main.command()
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@RULES_OPTION
@click.option(
    "--format", "fmts", type=click.Choice(REPORT_FORMATS), multiple=True,
    help="Report format, repeatable: text (default), json, sarif, junit or github (workflow annotations).",
)
@click.option(
    "--output", "outputs", type=FILE_TYPE, multiple=True,
    help="Write the report of the --format given in the same position to FILE (repeatable); "
    "the summary still goes to the terminal.",
)
@click.option(
    "--fail-on", type=click.Choice(SEVERITIES), default="error", show_default=True,
    help="Exit 1 when a finding is at least this severe.",
)
@click.option("--proofs/--no-proofs", default=None, help="Attach a derivation to each finding (default: json only).")
@click.option(
    "--waivers", "waivers_path", type=FILE_TYPE, default=None,
    help="Waivers file (rule, subject glob, reason, expiry). Default: topolog.waivers.yaml if it exists.",
)
@click.option(
    "--today", type=str, default=None, envvar="TOPOLOG_TODAY", show_envvar=True, callback=_parse_today,
    help="The date waivers expire against, YYYY-MM-DD. Default: today.",
)
@click.option("--baseline", "baseline_path", type=FILE_TYPE, default=None,
              help="Report only findings whose fingerprint is not in this baseline file.")
@click.option("--write-baseline", type=FILE_TYPE, default=None,
              help="Write the findings of this run (waived ones excepted) to FILE as a baseline.")
@click.option(
    "--from", "from_kind", type=click.Choice(IMPORT_KINDS), default=None,
    help="Read INVENTORY as this tool's output instead of a topolog YAML inventory.",
)
@click.option(
    "--thresholds", "thresholds_path", type=FILE_TYPE, default=None,
    help="Thresholds overriding rules/thresholds.yaml. Default: topolog.thresholds.yaml next to the first inventory.",
)
@click.option(
    "--jobs", "jobs_paths", type=click.Path(path_type=Path), multiple=True,
    help="Job file or directory (repeatable): every job must have a valid placement (check PLACE001).",
)
@ENGINE_OPTION
def verify(
    inventory: tuple[Path, ...], rules: tuple[Path, ...], fmts: tuple[str, ...], outputs: tuple[Path, ...],
    fail_on: str, proofs: bool | None, waivers_path: Path | None, today: date | None, baseline_path: Path | None,
    write_baseline: Path | None, from_kind: str | None, thresholds_path: Path | None, jobs_paths: tuple[Path, ...],
    engine: str,
) -> None:
    """Run every check on an inventory and report the findings.

    Exit status: 0 no finding at or above --fail-on, 1 findings, 2 bad input.
    Each --output pairs with the --format in the same position; one --format
    without an --output is printed on stdout.

    \b
    Example:
      topolog verify inventories/dgx-h100-pod.yaml --format json --fail-on warning
      topolog verify inv.yaml --format sarif --output topolog.sarif \\
          --format junit --output topolog.xml --baseline .topolog-baseline.json
      topolog verify --from nccl-xml /var/log/nccl-topo.xml
      topolog verify inventories/mixed-fleet.yaml --jobs inventories/jobs/
    """
    from verifier.baseline import baseline_text, load_baseline
    from verifier.output import render
    from verifier.output.text_report import summary
    from verifier.verify import baseline_entries
    from verifier.verify import verify as run_verify
    from verifier.waivers import DEFAULT_WAIVERS, load_waivers

    formats = fmts or ("text",)
    if len(outputs) > len(fmts) or len(fmts) - len(outputs) > 1:
        raise click.UsageError(
            "give one --format for each --output, in the same order; at most one --format may go to stdout"
        )

    def body() -> int:
        extra = (waivers_path, baseline_path, thresholds_path)
        _missing_files([*inventory, *rules, *jobs_paths, *(p for p in extra if p is not None)])
        default_waivers = Path(DEFAULT_WAIVERS)
        waivers_file = waivers_path or (default_waivers if default_waivers.is_file() else None)
        waivers = load_waivers(waivers_file) if waivers_file is not None else None
        baseline = load_baseline(baseline_path) if baseline_path is not None else None
        with Progress() as progress:
            report = run_verify(
                list(inventory),
                list(rules) or None,
                engine=engine,
                fail_on=fail_on,  # type: ignore[arg-type]
                with_proofs=proofs if proofs is not None else "json" in formats,
                progress=progress,
                waivers=waivers,
                today=today,
                baseline=baseline,
                from_kind=from_kind,
                thresholds=thresholds_path,
                jobs=list(jobs_paths) or None,
            )
        for fmt, path in zip(formats, outputs, strict=False):
            _write(path, render(report, fmt))
        if write_baseline is not None:
            entries = baseline_entries(report)
            _write(write_baseline, baseline_text(entries))
            click.echo(f"topolog: wrote {len(entries)} findings to baseline {write_baseline}", err=True)
        if len(formats) > len(outputs):
            click.echo(render(report, formats[-1]), nl=False)
            if outputs and formats[-1] not in ("text", "github"):  # those end with the summary already
                click.echo("\n".join(summary(report)), err=True)
        else:
            click.echo("\n".join(summary(report)))
        return report.exit_code

    sys.exit(guard(body))


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise TopologError.at(SourceLocation(str(path)), f"cannot write report: {err.strerror or err}") from None


@main.command("diff")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--rev", default=None,
              help="Compare INVENTORY as committed at this git revision (old) with the working tree (new).")
@RULES_OPTION
@click.option("--relation", "relations", multiple=True,
              help="Also compare this relation (repeatable). Always compared, where declared: "
              "nvlink_domain, node_domain_count, permitted.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--fail-on", type=click.Choice(SEVERITIES), default="error", show_default=True,
    help="Exit 1 when the change adds a finding at least this severe.",
)
@ENGINE_OPTION
def diff(
    inventory: tuple[Path, ...], rev: str | None, rules: tuple[Path, ...], relations: tuple[str, ...], fmt: str,
    fail_on: str, engine: str,
) -> None:
    """Show what a change does: findings added and resolved, derived facts that changed.

    Give OLD NEW (two inventory files), or inventory files and --rev to compare them
    with themselves at a git revision. Exit status: 0 the change adds no finding at or
    above --fail-on, 1 it does, 2 bad input.

    \b
    Example:
      topolog diff old.yaml new.yaml --format json
      topolog diff inventories/dgx-h100-pod.yaml --rev main --relation node_of
    """
    from verifier.diff import diff as run_diff
    from verifier.diff import files_at_revision, render_json, render_text

    if rev is None and len(inventory) != 2:
        raise click.UsageError("give two inventories (OLD NEW), or inventory files and --rev REV")

    def body() -> int:
        _missing_files([*inventory, *rules])

        def compare(old: list[Path], new: list[Path], labels: dict[str, str]) -> int:
            with Progress() as progress:
                report = run_diff(old, new, list(rules) or None, engine, relations,
                                  fail_on, labels, progress)  # type: ignore[arg-type]
            click.echo(render_json(report) if fmt == "json" else render_text(report), nl=False)
            return report.exit_code

        if rev is None:
            return compare([inventory[0]], [inventory[1]], {})
        with files_at_revision(list(inventory), rev) as (copies, labels):
            return compare(copies, list(inventory), labels)

    sys.exit(guard(body))


@main.command()
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.argument("query")
@RULES_OPTION
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@ENGINE_OPTION
def query(inventory: tuple[Path, ...], query: str, rules: tuple[Path, ...], fmt: str, engine: str) -> None:
    """Answer a Datalog query (a rule body) on an inventory; rows are sorted.

    \b
    Example:
      topolog query inventories/dgx-h100-pod.yaml 'link(L, A, B, "nvlink", M), M < 400000'
    """
    from verifier.model import load_model, load_rules
    from verifier.query_output import program_for, query_relations, render_rows

    def body() -> None:
        _missing_files([*inventory, *rules])
        parsed = parse_query(query)
        # A mistyped query is refused before the (possibly large) inventory is loaded.
        program = load_rules(list(rules) or None)
        check_query(parsed, program)
        read = query_relations(parsed)
        with Progress() as progress:
            # Only the rules the query depends on are evaluated (the same rows, less work).
            model = load_model(
                list(inventory), None, engine, progress, program=program_for(program, read), also_read=read
            )
        try:
            rows = model.engine.answer(parsed)
        finally:
            model.engine.close()
        click.echo(render_rows(parsed.variables, rows, fmt), nl=False)

    guard(body)


@main.command()
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.argument("what", metavar="FACT|FINDING")
@RULES_OPTION
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain(inventory: tuple[Path, ...], what: str, rules: tuple[Path, ...], fmt: str) -> None:
    """Show how a fact or a finding follows from the inventory: rules and facts, down to inputs.

    FACT|FINDING is a ground fact, a finding's fingerprint (field `fingerprint` of
    `topolog verify --format json`; a unique prefix of 8 or more hex digits will do), or
    RULE:SUBJECT[,SUBJECT...] (every finding of RULE with those subjects). Every input
    fact of the proof is followed by the inventory file:line:col it came from.

    \b
    Example:
      topolog explain inventories/dgx-h100-pod.yaml 'within("dgx00/gpu0", "pod0")'
      topolog explain inventories/mixed-fleet.yaml PCIE001:rtx-n3/gpu1 --format json
      topolog explain inventories/mixed-fleet.yaml 3f1c9a2b
    """
    from verifier.explain import explain as run_explain
    from verifier.explain import fact_relation, principals_near, render_json, render_text
    from verifier.model import load_model

    def body() -> None:
        _missing_files([*inventory, *rules])
        relation = fact_relation(what)
        with Progress() as progress:
            model = load_model(
                list(inventory), list(rules) or None, "duckdb", progress, also_read={relation} if relation else ()
            )
        try:
            items = run_explain(model, what)
        finally:
            model.engine.close()
        principals = principals_near(list(inventory))
        click.echo((render_json if fmt == "json" else render_text)(items, model.inventory, principals), nl=False)

    guard(body)


@main.command()
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@RULES_OPTION
@ENGINE_OPTION
def repl(inventory: tuple[Path, ...], rules: tuple[Path, ...], engine: str) -> None:
    """Load an inventory once and answer queries at a prompt (history, TAB completes relations).

    Type a query body, or .relations, .schema NAME, .explain FACT|FINDING, .timer on|off,
    .help, .quit. With stdin not a terminal, each input line gets one answer and the exit
    status is 2 when some line was in error. History is kept in ~/.topolog_history
    (or $TOPOLOG_HISTORY).

    \b
    Example:
      topolog repl inventories/dgx-h100-pod.yaml
      echo 'nvlink_domain(G, D)' | topolog repl inventories/dgx-h100-pod.yaml
    """
    from verifier.model import load_model, load_rules
    from verifier.repl import Session, run_repl

    def body() -> int:
        _missing_files([*inventory, *rules])
        program = load_rules(list(rules) or None)
        inputs = {d.name for d in program.declarations if d.is_input}  # any query may read any of them
        with Progress() as progress:
            model = load_model(list(inventory), None, engine, progress, program=program, also_read=inputs)
        try:
            return run_repl(Session(model))
        finally:
            model.engine.close()

    sys.exit(guard(body))


@main.command("place")
@click.argument("inventory", type=click.Path(path_type=Path))
@click.argument("jobs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--rank", type=click.Choice(["bandwidth", "cost"]), default="bandwidth", show_default=True,
              help="bandwidth: best bottleneck first, then fewest nodes, then name; "
              "cost: price per hour, then bandwidth.")
@click.option("--why-not", "why_not", is_flag=True,
              help="For each candidate domain that fails, the first requirement it misses.")
@click.option("--limit", type=int, default=0, show_default=True,
              help="Show at most this many placements per job (0: all).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@ENGINE_OPTION
def place_cmd(
    inventory: Path, jobs: tuple[Path, ...], rank: str, why_not: bool, limit: int, fmt: str, engine: str,
) -> None:
    """List, per job, the valid placements ranked, with bottleneck bandwidth and hourly cost.

    JOBS are job files or directories (kind: Jobs). Exit status: 0 every job has a
    placement, 1 some job fits nowhere (PLACE001), 2 bad input.

    \b
    Example:
      topolog place inventories/mixed-fleet.yaml inventories/jobs/portable.yaml
      topolog place inventories/mixed-fleet.yaml inventories/jobs/ --why-not --rank cost --format json
    """
    from verifier.placement import place, render_json, render_text

    def body() -> int:
        _missing_files([inventory, *jobs])
        with Progress() as progress:
            report = place([inventory], list(jobs), rank=rank, why_not=why_not, engine=engine,
                           progress=progress, limit=limit)
        click.echo(render_json(report) if fmt == "json" else render_text(report), nl=False)
        return report.exit_code

    sys.exit(guard(body))


@main.command("rules")
@RULES_OPTION
def rules_cmd(rules: tuple[Path, ...]) -> None:
    """Print the documentation of every check, generated from its metadata (Markdown).

    \b
    Example:
      topolog rules > docs/rules.md
    """
    from verifier.checks import checks_from_program
    from verifier.model import load_rules
    from verifier.rule_docs import render_rule_docs

    def body() -> None:
        _missing_files(list(rules))
        program = load_rules(list(rules) or None)
        click.echo(render_rule_docs(checks_from_program(program)), nl=False)

    guard(body)


if __name__ == "__main__":  # pragma: no cover
    main()
