"""The `topolog` command: a thin click layer over verify, query, explain and rules.

Exit codes never change meaning: 0 no finding at or above --fail-on, 1 findings,
2 bad input or usage (every problem printed as file:line: message).
"""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import click

from verifier import __version__
from verifier.checks.check import CheckSelection
from verifier.checks.findings import SEVERITIES
from verifier.cli.errors import guard
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.progress import Progress
from verifier.engine.backend import BACKENDS
from verifier.engine.checks import check_query
from verifier.engine.parser import parse_query

ENGINE_OPTION = click.option(
    "--engine",
    type=click.Choice(BACKENDS),
    default="duckdb",
    show_default=True,
    help="Evaluation engine: duckdb (fast) or pydatalog (reference semantics).",
)
_F = TypeVar("_F", bound=Callable[..., Any])
_NO_SHIPPED = "topolog.no_shipped_rules"
"""ctx.meta key for --no-shipped-rules: the flag is eager, so the --rules callback finds it set."""


def _remember_no_shipped(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    ctx.meta[_NO_SHIPPED] = value
    return value


def _rules_options(
    help_text: str = "Rule file or directory (repeatable), loaded after the rules shipped with topolog.",
    needed: bool = True,
) -> Callable[[_F], _F]:
    """--rules and --no-shipped-rules; the command's `rules` parameter gets the paths to load.

    They are resolved here, once, so every command that takes --rules adds to the shipped
    pack in the same way. `needed`: --no-shipped-rules without --rules is a usage error
    (`topolog test` has rules of its own in its folder).
    """

    def with_shipped(ctx: click.Context, _param: click.Parameter, value: tuple[Path, ...]) -> tuple[Path, ...]:
        from verifier.engine.rule_pack import inside_shipped, shipped_first

        if ctx.meta.get(_NO_SHIPPED):
            if not value and needed:
                raise click.UsageError("--no-shipped-rules leaves no rules to load; name yours with --rules", ctx)
            return value
        try:
            already = [str(p) for p in value if p.exists() and inside_shipped(p)]
            paths = shipped_first(value)
        except TopologError as err:  # a zipped install has no rule pack on disk
            raise click.UsageError(str(err), ctx) from None
        if already:
            click.echo(
                f"note: --rules {', '.join(already)}: part of topolog's shipped rules, which are loaded "
                "anyway; add --no-shipped-rules to load only the rules you name",
                err=True,
            )
        return tuple(paths)

    def decorate(f: _F) -> _F:
        f = click.option(
            "--rules", "rules", type=click.Path(path_type=Path), multiple=True, callback=with_shipped, help=help_text
        )(f)
        return click.option(
            "--no-shipped-rules",
            is_flag=True,
            is_eager=True,
            expose_value=False,
            callback=_remember_no_shipped,
            help="Leave out the rule pack shipped with topolog, its rules/schema.dl too "
            "(`topolog rules --path` prints where it is).",
        )(f)

    return decorate


RULES_OPTION = _rules_options()


def _check_options(f: _F) -> _F:
    """--check ID / --skip ID (repeatable): which checks report, as `check_ids` and `skip_ids`."""
    f = click.option("--skip", "skip_ids", multiple=True, metavar="ID", help="Do not report this check (repeatable).")(
        f
    )
    return click.option(
        "--check",
        "check_ids",
        multiple=True,
        metavar="ID",
        help="Report only this check (repeatable); the rules it reads are still evaluated. "
        "`topolog rules` lists the ids.",
    )(f)


CHECK_OPTIONS = _check_options


def _selection(
    rules: Sequence[Path], check_ids: Sequence[str], skip_ids: Sequence[str], also: Sequence[str] = ()
) -> CheckSelection:
    """--check / --skip checked against the ids the rules define (and `also`), before anything is evaluated."""
    from verifier.checks.check import checks_from_program, select_checks
    from verifier.session.model import load_rules

    if not check_ids and not skip_ids:
        return CheckSelection()
    ids = [c.id for c in checks_from_program(load_rules(list(rules)))]
    return select_checks([*ids, *also], check_ids, skip_ids)


def _missing_files(paths: Sequence[Path]) -> None:
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise TopologError.at(SourceLocation(str(missing[0])), "no such file or directory")


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs (or help lists it).

    cedarpy and the importers take ~0.1 s to import; `topolog query` should not pay for them.
    """

    LAZY: ClassVar[dict[str, str]] = {
        "audit": "verifier.cli.authz_commands:audit_cmd",
        "authorize": "verifier.cli.authz_commands:authorize_cmd",
        "import": "verifier.cli.import_commands:import_cmd",
        "reconcile": "verifier.cli.import_commands:reconcile_cmd",
        "schema": "verifier.cli.schema_command:schema_cmd",
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
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help="Take option defaults from this file (.yaml, or .toml with [tool.topolog]) instead of the nearest "
    ".topolog.yaml or pyproject.toml found from the working directory upwards.",
)
@click.option("--no-config", is_flag=True, help="Read no configuration file: only flags and built-in defaults.")
@click.pass_context
def main(ctx: click.Context, config_path: Path | None, no_config: bool) -> None:
    """Verify AI infrastructure topology before it is used.

    Option defaults come from .topolog.yaml or [tool.topolog] in pyproject.toml, the
    nearest one from the working directory upwards (see docs/configuration.md); flags
    given on the command line win over it.

    \b
    Example:
      topolog verify inventories/dgx-h100-pod.yaml
      topolog --config ci/topolog.yaml verify inventories/*.yaml
      topolog --no-config verify inventories/dgx-h100-pod.yaml
    """
    if no_config and config_path is not None:
        raise click.UsageError("--config FILE and --no-config contradict each other; give one of them")
    if no_config:
        return
    assert isinstance(ctx.command, click.Group)
    group = ctx.command

    def load() -> dict[str, dict[str, Any]] | None:
        from verifier.cli.config import default_map, find_config, read_config

        config = read_config(config_path) if config_path is not None else find_config(Path.cwd())
        return default_map(config, group, ctx, ctx.invoked_subcommand) if config is not None else None

    # Click hands each subcommand's context its entry of the group's default_map.
    ctx.default_map = guard(load)


IMPORT_KINDS = ("nvidia-smi", "nccl-xml", "hwloc", "slurm")
"""verifier.sources.importers.KINDS, repeated so that `--help` need not import the importers."""

REPORT_FORMATS = ("text", "json", "sarif", "junit", "github", "markdown")
"""The names in verifier.reports.FORMATS, repeated so that `--help` need not import the engines."""
FILE_TYPE = click.Path(path_type=Path, dir_okay=False)

SUFFIX_FORMATS = {".sarif": "sarif", ".xml": "junit", ".json": "json", ".md": "markdown", ".txt": "text"}
"""The format a report file's suffix suggests, for the hint when `--output PATH` lacks `FORMAT=`."""


if TYPE_CHECKING:
    _TargetBase = click.ParamType[tuple[str, Path]]
else:  # click before 8.4 has no subscriptable ParamType; pyproject allows click 8.1
    _TargetBase = click.ParamType


class ReportTarget(_TargetBase):
    """`--output FORMAT=PATH`: a report's format and its file, written together.

    Pairing a separate --format with each --output by position let one misplaced flag
    put a report in the wrong file without a word; naming both in one value cannot.
    """

    name = "FORMAT=PATH"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> tuple[str, Path]:
        if isinstance(value, tuple):
            return value  # already converted (a default given as a tuple)
        text = str(value)
        fmt, sep, path = text.partition("=")
        if not sep:
            self.fail(_output_without_format(text), param, ctx)
        if fmt not in REPORT_FORMATS:
            close = difflib.get_close_matches(fmt.lower(), REPORT_FORMATS, n=1)
            hint = f"did you mean {close[0]}={path}? " if close else ""
            self.fail(
                f"unknown report format {fmt!r} in {text!r}; {hint}formats: {', '.join(REPORT_FORMATS)}", param, ctx
            )
        if not path:
            self.fail(f"no file after {fmt}=; expected FORMAT=PATH, e.g. {fmt}={_example_file(fmt)}", param, ctx)
        target = Path(path)
        if target.is_dir():
            self.fail(f"{path} is a directory; name a file in it, e.g. {fmt}={target / _example_file(fmt)}", param, ctx)
        return fmt, target

    def rebase_paths(self, value: str, rebase: Callable[[str], str]) -> str:
        """The same target with its path moved (verifier.cli.config takes paths from the config's folder)."""
        fmt, sep, path = value.partition("=")
        return f"{fmt}={rebase(path)}" if sep and path else value


def _example_file(fmt: str) -> str:
    suffix = next((s for s, f in SUFFIX_FORMATS.items() if f == fmt), ".txt")
    return f"topolog{suffix}"


def _output_without_format(text: str) -> str:
    if text in REPORT_FORMATS:
        return (
            f"--output needs a file as well as a format: --output {text}={_example_file(text)} "
            f"(or --format {text} to print it on stdout)"
        )
    fmt = SUFFIX_FORMATS.get(Path(text).suffix.lower())
    if fmt in REPORT_FORMATS:
        return f"--output takes FORMAT=PATH, so that the file's format is never guessed: --output {fmt}={text}"
    return f"--output takes FORMAT=PATH (FORMAT one of {', '.join(REPORT_FORMATS)}), e.g. --output sarif={text}"


class OnceOption(click.Option):
    """An option that may be given at most once: a repeat is an error, not a silent overwrite.

    click keeps only the last of a repeated single-valued option. The values are collected
    as for a repeatable option, so that the command can refuse a second one by name.
    """

    def __init__(self, *args: Any, once_hint: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.once_hint = once_hint

    def add_to_parser(self, parser: Any, ctx: click.Context) -> None:
        parser.add_option(obj=self, opts=self.opts, dest=self.name, action="append", nargs=self.nargs)

    def type_cast_value(self, ctx: click.Context, value: Any) -> Any:
        if isinstance(value, list):  # from the command line; a default_map or a default is a plain value
            if len(value) > 1:
                given = ", ".join(str(v) for v in value)
                raise click.BadParameter(f"given {len(value)} times ({given}); {self.once_hint}", ctx=ctx, param=self)
            value = value[0] if value else None
        return super().type_cast_value(ctx, value)


def _parse_today(_ctx: click.Context, _param: click.Parameter, value: str | None) -> date | None:
    from verifier.checks.waivers import parse_date

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
    "--format",
    "stdout_fmt",
    cls=OnceOption,
    type=click.Choice(REPORT_FORMATS),
    default=None,
    once_hint="--format chooses the one report printed on stdout; write the others with --output FORMAT=PATH",
    help="The report printed on stdout, at most one: text (the default without --output), json, sarif, "
    "junit, github (workflow annotations) or markdown.",
)
@click.option(
    "--output",
    "outputs",
    type=ReportTarget(),
    multiple=True,
    help="Write a report to a file, as FORMAT=PATH (repeatable), e.g. --output sarif=topolog.sarif; "
    "the summary still goes to the terminal.",
)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    default="error",
    show_default=True,
    help="Exit 1 when a finding is at least this severe.",
)
@click.option(
    "--proofs/--no-proofs", default=None, help="Attach a derivation to each finding (default: json and sarif only)."
)
@click.option(
    "--waivers",
    "waivers_path",
    type=FILE_TYPE,
    default=None,
    help="Waivers file (rule, subject glob, reason, expiry). Default: topolog.waivers.yaml if it exists.",
)
@click.option(
    "--today",
    type=str,
    default=None,
    envvar="TOPOLOG_TODAY",
    show_envvar=True,
    callback=_parse_today,
    help="The date waivers expire against, YYYY-MM-DD. Default: today.",
)
@click.option(
    "--baseline",
    "baseline_path",
    type=FILE_TYPE,
    default=None,
    help="Report only findings whose fingerprint is not in this baseline file.",
)
@click.option(
    "--write-baseline",
    type=FILE_TYPE,
    default=None,
    help="Write the findings of this run (waived ones excepted) to FILE as a baseline.",
)
@click.option(
    "--from",
    "from_kind",
    type=click.Choice(IMPORT_KINDS),
    default=None,
    help="Read INVENTORY as this tool's output instead of a topolog YAML inventory.",
)
@click.option(
    "--thresholds",
    "thresholds_path",
    type=FILE_TYPE,
    default=None,
    help="Thresholds overriding rules/thresholds.yaml. Default: topolog.thresholds.yaml next to the first inventory.",
)
@click.option(
    "--jobs",
    "jobs_paths",
    type=click.Path(path_type=Path),
    multiple=True,
    help="Job file or directory (repeatable): every job must have a valid placement (check PLACE001).",
)
@CHECK_OPTIONS
@ENGINE_OPTION
def verify(
    inventory: tuple[Path, ...],
    rules: tuple[Path, ...],
    stdout_fmt: str | None,
    outputs: tuple[tuple[str, Path], ...],
    fail_on: str,
    proofs: bool | None,
    waivers_path: Path | None,
    today: date | None,
    baseline_path: Path | None,
    write_baseline: Path | None,
    from_kind: str | None,
    thresholds_path: Path | None,
    jobs_paths: tuple[Path, ...],
    check_ids: tuple[str, ...],
    skip_ids: tuple[str, ...],
    engine: str,
) -> None:
    """Run every check on an inventory and report the findings.

    Exit status: 0 no finding at or above --fail-on, 1 findings, 2 bad input.
    Each --output FORMAT=PATH writes one report to a file; --format chooses the one
    printed on stdout (text when neither is given). With GITHUB_STEP_SUMMARY set, the
    github format also appends a Markdown summary of the run there.

    \b
    Example:
      topolog verify inventories/dgx-h100-pod.yaml --format json --fail-on warning
      topolog verify inv.yaml --output sarif=topolog.sarif --output junit=topolog.xml \\
          --format github --baseline .topolog-baseline.json
      topolog verify --from nccl-xml /var/log/nccl-topo.xml
      topolog verify inventories/mixed-fleet.yaml --jobs inventories/jobs/
    """
    from verifier.checks.baseline import baseline_text, load_baseline
    from verifier.checks.verify import baseline_entries, select_report
    from verifier.checks.verify import verify as run_verify
    from verifier.checks.waivers import DEFAULT_WAIVERS, EXPIRED_ID, UNUSED_ID, load_waivers
    from verifier.reports import render
    from verifier.reports.text_report import summary

    # Without any --output the report is the terminal's; with some, only an asked-for one is.
    on_stdout = stdout_fmt or (None if outputs else "text")
    _refuse_shared_files(outputs, write_baseline)
    formats = {fmt for fmt, _ in outputs} | ({on_stdout} if on_stdout else set())

    def body() -> int:
        extra = (waivers_path, baseline_path, thresholds_path)
        _missing_files([*inventory, *rules, *jobs_paths, *(p for p in extra if p is not None)])
        selection = _selection(rules, check_ids, skip_ids, also=(EXPIRED_ID, UNUSED_ID))
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
                with_proofs=proofs if proofs is not None else bool(formats & {"json", "sarif"}),
                progress=progress,
                waivers=waivers,
                today=today,
                baseline=baseline,
                from_kind=from_kind,
                thresholds=thresholds_path,
                jobs=list(jobs_paths) or None,
            )
        report = select_report(report, selection)
        for fmt, path in outputs:
            _write(path, render(report, fmt))
        if "github" in formats and os.environ.get("GITHUB_STEP_SUMMARY"):
            # Annotations mark lines; the job summary page is where a reviewer sees the whole run.
            from verifier.reports.markdown_report import append_step_summary

            append_step_summary(report, os.environ)
        if write_baseline is not None:
            entries = baseline_entries(report)
            _write(write_baseline, baseline_text(entries))
            click.echo(f"topolog: wrote {len(entries)} findings to baseline {write_baseline}", err=True)
        if on_stdout is not None:
            click.echo(render(report, on_stdout), nl=False)
            if outputs and on_stdout not in ("text", "github"):  # those end with the summary already
                click.echo("\n".join(summary(report)), err=True)
        else:
            click.echo("\n".join(summary(report)))
        return report.exit_code

    sys.exit(guard(body))


def _refuse_shared_files(outputs: Sequence[tuple[str, Path]], write_baseline: Path | None) -> None:
    """Two writes to one file would leave only the last: refuse before any work is done."""
    writes = [(f"--output {fmt}={path}", path) for fmt, path in outputs]
    if write_baseline is not None:
        writes.append((f"--write-baseline {write_baseline}", write_baseline))
    seen: dict[Path, str] = {}
    for flag, path in writes:
        key = path.resolve()
        if key in seen:
            raise click.UsageError(
                f"{seen[key]} and {flag} write to the same file {path}; give each report its own file"
            )
        seen[key] = flag


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise TopologError.at(SourceLocation(str(path)), f"cannot write report: {err.strerror or err}") from None


@main.command("diff")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--rev", default=None, help="Compare INVENTORY as committed at this git revision (old) with the working tree (new)."
)
@RULES_OPTION
@click.option(
    "--relation",
    "relations",
    multiple=True,
    help="Also compare this relation (repeatable). Always compared, where declared: "
    "nvlink_domain, node_domain_count, permitted.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    default="error",
    show_default=True,
    help="Exit 1 when the change adds a finding at least this severe.",
)
@ENGINE_OPTION
def diff(
    inventory: tuple[Path, ...],
    rev: str | None,
    rules: tuple[Path, ...],
    relations: tuple[str, ...],
    fmt: str,
    fail_on: str,
    engine: str,
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
    from verifier.checks.diff import diff as run_diff
    from verifier.checks.diff import files_at_revision, render_json, render_text

    if rev is None and len(inventory) != 2:
        raise click.UsageError("give two inventories (OLD NEW), or inventory files and --rev REV")

    def body() -> int:
        _missing_files([*inventory, *rules])

        def compare(old: list[Path], new: list[Path], labels: dict[str, str]) -> int:
            with Progress() as progress:
                report = run_diff(old, new, list(rules) or None, engine, relations, fail_on, labels, progress)  # type: ignore[arg-type]
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
    from verifier.reports.query_report import program_for, query_relations, render_rows
    from verifier.session.model import load_model, load_rules

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
    from verifier.checks.explain import explain as run_explain
    from verifier.checks.explain import fact_relation, principals_near, render_json, render_text
    from verifier.session.model import load_model

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
    from verifier.cli.repl import Session, run_repl
    from verifier.session.model import load_model, load_rules

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
@click.option(
    "--rank",
    type=click.Choice(["bandwidth", "cost"]),
    default="bandwidth",
    show_default=True,
    help="bandwidth: best bottleneck first, then fewest nodes, then name; cost: price per hour, then bandwidth.",
)
@click.option(
    "--why-not", "why_not", is_flag=True, help="For each candidate domain that fails, the first requirement it misses."
)
@click.option(
    "--limit", type=int, default=0, show_default=True, help="Show at most this many placements per job (0: all)."
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@ENGINE_OPTION
def place_cmd(
    inventory: Path,
    jobs: tuple[Path, ...],
    rank: str,
    why_not: bool,
    limit: int,
    fmt: str,
    engine: str,
) -> None:
    """List, per job, the valid placements ranked, with bottleneck bandwidth and hourly cost.

    JOBS are job files or directories (kind: Jobs). Exit status: 0 every job has a
    placement, 1 some job fits nowhere (PLACE001), 2 bad input.

    \b
    Example:
      topolog place inventories/mixed-fleet.yaml inventories/jobs/portable.yaml
      topolog place inventories/mixed-fleet.yaml inventories/jobs/ --why-not --rank cost --format json
    """
    from verifier.placement.place import place, render_json, render_text

    def body() -> int:
        _missing_files([inventory, *jobs])
        with Progress() as progress:
            report = place(
                [inventory], list(jobs), rank=rank, why_not=why_not, engine=engine, progress=progress, limit=limit
            )
        click.echo(render_json(report) if fmt == "json" else render_text(report), nl=False)
        return report.exit_code

    sys.exit(guard(body))


@main.command("rules")
@RULES_OPTION
@CHECK_OPTIONS
@click.option(
    "--path",
    "print_path",
    is_flag=True,
    help="Print the folder of the rule pack shipped with topolog (schema.dl is in it) and exit.",
)
def rules_cmd(rules: tuple[Path, ...], check_ids: tuple[str, ...], skip_ids: tuple[str, ...], print_path: bool) -> None:
    """Print the documentation of every check, generated from its metadata (Markdown).

    Your own --rules are documented with the shipped checks (see docs/custom-rules.md).

    \b
    Example:
      topolog rules > docs/rules.md
      topolog rules --rules site-rules/ --check SITE001
      topolog rules --path
    """
    from verifier.checks.check import checks_from_program
    from verifier.reports.rule_docs import render_rule_docs
    from verifier.session.model import load_rules

    def body() -> None:
        if print_path:
            from verifier.core.resources import shipped_rules_dir

            click.echo(str(shipped_rules_dir()))
            return
        _missing_files(list(rules))
        selection = _selection(rules, check_ids, skip_ids)
        checks = [c for c in checks_from_program(load_rules(list(rules))) if selection.reports(c.id)]
        click.echo(render_rule_docs(checks), nl=False)

    guard(body)


@main.command("test")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@_rules_options("More rule files or directories your checks read (repeatable), loaded before DIR's.", needed=False)
@CHECK_OPTIONS
@ENGINE_OPTION
def test_cmd(
    directory: Path,
    rules: tuple[Path, ...],
    check_ids: tuple[str, ...],
    skip_ids: tuple[str, ...],
    engine: str,
) -> None:
    """Run your rule tests: DIR's *.dl checks against the inventories in DIR/fixtures/<CHECK_ID>/.

    pass*.yaml must give no finding of the check; fail*.yaml exactly the findings listed in
    expected*.txt beside it (one `subject, subject | message` per line). The shipped rules
    are loaded too, so your checks may read their relations. Exit status: 0 every case
    passes, 1 some case fails (the missing and unexpected findings are shown), 2 bad input.
    The layout is in docs/custom-rules.md.

    \b
    Example:
      topolog test site-rules/
      topolog test site-rules/ --check SITE001 --engine pydatalog
    """
    from verifier.checks.rule_tests import run_rule_tests

    def body() -> int:
        _missing_files([directory, *rules])
        return run_rule_tests(
            directory, rules, engine, check_ids, skip_ids, out=click.echo, err=lambda line: click.echo(line, err=True)
        )

    sys.exit(guard(body))


if __name__ == "__main__":  # pragma: no cover
    main()
