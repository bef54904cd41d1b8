"""Options and parameter types shared by the commands, so each means the same everywhere."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.suggest import closest
from verifier.reports import VERIFY_FILE_FORMATS, VERIFY_FORMATS

if TYPE_CHECKING:
    from verifier.checks.check import CheckSelection
    from verifier.session.verify_run import SideFileFlags

# Almost every command module imports this one, `authorize` too: what only some commands use
# (the engines, the rule pack, the importers, the check catalogue, the verify run's side files,
# waiver dates) is imported by the option or function that uses it, not here.

_F = TypeVar("_F", bound=Callable[..., Any])


def _engine_option(f: _F) -> _F:
    """--engine: which backend evaluates the rules (only commands that evaluate rules import the engines)."""
    from verifier.engine.engines import ENGINE_CHOICES

    return click.option(
        "--engine",
        type=click.Choice(ENGINE_CHOICES),
        default="auto",
        show_default=True,
        help="Evaluation engine: memory (small inputs), duckdb (fleets), pydatalog (reference semantics), "
        "or auto (memory up to 50,000 fact rows, else duckdb).",
    )(f)


ENGINE_OPTION = _engine_option


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
        if ctx.meta.get(_NO_SHIPPED):
            if not value and needed:
                raise click.UsageError("--no-shipped-rules leaves no rules to load; name yours with --rules", ctx)
            return value
        from verifier.engine.rule_pack import inside_shipped, shipped_first

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
    rules: Sequence[Path],
    check_ids: Sequence[str],
    skip_ids: Sequence[str],
    also: Sequence[str] = (),
    sources: Mapping[str, SourceLocation] | None = None,
) -> CheckSelection:
    """--check / --skip checked against the ids the rules define (and `also`), before anything is evaluated;
    `sources`: the configuration line that set each (by '--check' / '--skip'), when a file did.
    """
    from verifier.checks.check import CheckSelection, checks_from_program, select_checks

    if not check_ids and not skip_ids:
        return CheckSelection()
    from verifier.session.session import load_rules  # only with --check / --skip

    ids = [c.id for c in checks_from_program(load_rules(list(rules)))]
    return select_checks(ids, check_ids, skip_ids, also=also, sources=sources)


def _missing_files(paths: Sequence[Path]) -> None:
    missing = [p for p in paths if not p.exists()]
    if missing:
        # A link that leads to itself, or to nothing, is there: "no such file" sent the user looking
        # for a file that `ls` shows.
        if missing[0].is_symlink():
            raise TopologError.at(
                SourceLocation(str(missing[0])),
                "it is a symbolic link that leads to no file (dangling, or a loop of links); expected a file",
            )
        raise TopologError.at(SourceLocation(str(missing[0])), "no such file or directory")


FILE_TYPE = click.Path(path_type=Path, dir_okay=False)


SUFFIX_FORMATS = {
    ".sarif": "sarif",
    ".xml": "junit",
    ".json": "json",
    ".md": "markdown",
    ".txt": "text",
    ".html": "html",
}
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
        if fmt not in VERIFY_FILE_FORMATS:
            close = closest(fmt.lower(), VERIFY_FILE_FORMATS)
            hint = f"did you mean {close}={path}? " if close else ""
            self.fail(
                f"unknown report format {fmt!r} in {text!r}; {hint}formats: {', '.join(VERIFY_FILE_FORMATS)}",
                param,
                ctx,
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
    if text in VERIFY_FORMATS:
        return (
            f"--output needs a file as well as a format: --output {text}={_example_file(text)} "
            f"(or --format {text} to print it on stdout)"
        )
    fmt = SUFFIX_FORMATS.get(Path(text).suffix.lower())
    if fmt in VERIFY_FILE_FORMATS:
        return f"--output takes FORMAT=PATH, so that the file's format is never guessed: --output {fmt}={text}"
    return f"--output takes FORMAT=PATH (FORMAT one of {', '.join(VERIFY_FILE_FORMATS)}), e.g. --output sarif={text}"


class WholeRange(click.IntRange):
    """A whole number as written in ASCII digits (an optional sign), within the range: click's IntRange
    reads with int(), which also takes `4_00` (400), fullwidth and Arabic-Indic digits and surrounding
    white space, so `--limit 4_00` would have been read as 400 without a word.
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            digits = value.removeprefix("-").removeprefix("+")
            if not (digits.isascii() and digits.isdigit()):
                self.fail(f"{value!r} is not a whole number; expected ASCII digits such as 8", param, ctx)
        return super().convert(value, param, ctx)


_DECIMAL = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
"""A number in ASCII decimal digits: `30`, `0.5`, `.5`, `2e-3` (WholeRange's rule, with a fraction and an
exponent): no `_`, no other script's digits, no white space, no `nan` or `inf`."""


class FiniteRange(click.FloatRange):
    """A finite number as written in ASCII decimal digits, within the range: click's FloatRange reads
    with float(), which also takes `4_00` (400), `1_0` (10), Arabic-Indic digits (`٤`: 4), white space,
    and `nan` (every comparison with NaN is false, so a range lets it through) or `inf`.
    """

    what = "number"
    expected = "ASCII digits such as 30 or 0.5"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not _DECIMAL.fullmatch(value):
            try:
                special = not math.isfinite(float(value))  # nan, inf, infinity: say so
            except ValueError:
                special = False
            finite = "finite " if special else ""
            self.fail(f"{value!r} is not a {finite}{self.what}; expected {self.expected}", param, ctx)
        if isinstance(value, str) and not math.isfinite(float(value)):
            # `1e999` is written in digits and reads as infinity: said before the range, whose own
            # message would quote it as "inf", a word the user never wrote.
            self.fail(f"{value!r} is not a finite {self.what}; expected {self.expected}", param, ctx)
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):  # `1e999` is written in digits and reads as infinity
            self.fail(f"{value!r} is not a finite {self.what}; expected {self.expected}", param, ctx)
        return number


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
    if value is None:
        return None
    from verifier.checks.waivers import parse_date  # only with --today

    try:
        return parse_date(value)
    except ValueError as err:
        raise click.BadParameter(str(err)) from None


STDOUT_FORMAT_OPTION = click.option(
    "--format",
    "stdout_fmt",
    cls=OnceOption,
    type=click.Choice(VERIFY_FORMATS),
    default=None,
    once_hint="--format chooses the one report printed on stdout; write the others with --output FORMAT=PATH",
    help="The report printed on stdout, at most one: text (the default without --output), json, sarif, "
    "junit, github (workflow annotations) or markdown.",
)
"""`--format` of the commands that write verify's reports (`verify`, `policy check`)."""

TODAY_OPTION = click.option(
    "--today",
    type=str,
    default=None,
    envvar="TOPOLOG_TODAY",
    show_envvar=True,
    callback=_parse_today,
    help="The date waivers expire against, YYYY-MM-DD. Default: today.",
)
"""`--today` of the commands that apply waivers."""


def _from_option(f: _F) -> _F:
    """`--from KIND`: the commands that read an inventory read a tool's output too."""
    from verifier.sources.importers import KINDS as IMPORT_KINDS

    return click.option(
        "--from",
        "from_kind",
        type=click.Choice(IMPORT_KINDS),
        default=None,
        help="Read INVENTORY as this tool's output instead of a topolog YAML inventory.",
    )(f)


FROM_OPTION = _from_option


def format_option(formats: Sequence[str], default: str | None = None) -> Callable[[_F], _F]:
    """--format, offering exactly the formats the command's report has (the first is the default)."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(formats)),
        default=default or formats[0],
        show_default=True,
        help=f"Report format: {', '.join(formats)}.",
    )


def side_file_options(*, principals: bool = True, policies: bool = True) -> Callable[[_F], _F]:
    """--principals and --policies: override where the side files are found (verifier.session.side_files)."""

    def decorate(f: _F) -> _F:
        if policies:
            f = click.option(
                "--policies",
                "policies_path",
                type=click.Path(path_type=Path, file_okay=False),
                default=None,
                help="Policy directory (schema.cedarschema + *.cedar). Default: policies/ next to the first "
                "inventory or in the working directory, else the shipped policies.",
            )(f)
        if principals:
            f = click.option(
                "--principals",
                "principals_path",
                type=click.Path(path_type=Path, dir_okay=False),
                default=None,
                help="Principals file. Default: principals.yml next to the first inventory, or in the working "
                "directory.",
            )(f)
        return f

    return decorate


NO_AUTHORIZATION_OPTION = click.option(
    "--no-authorization",
    "no_authorization",
    is_flag=True,
    help="Judge jobs without authorization (every principal may use every GPU); the report says so. "
    "Without it, jobs need a principals file and fail closed.",
)


def side_file_flags(
    principals_path: Path | None = None,
    policies_path: Path | None = None,
    thresholds_path: Path | None = None,
    waivers_path: Path | None = None,
    baseline_path: Path | None = None,
) -> SideFileFlags:
    from verifier.session.verify_run import SideFileFlags  # verify's and place's; not every command's

    return SideFileFlags(
        thresholds=thresholds_path,
        waivers=waivers_path,
        baseline=baseline_path,
        principals=principals_path,
        policies=policies_path,
    )
