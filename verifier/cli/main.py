"""The `topolog` command group: the only layer that knows click (the rest is verifier.session).

Exit codes never change meaning: 0 no finding at or above --fail-on, 1 findings,
2 bad input or usage (every problem printed as file:line: message), and 2 as well for
anything unexpected, so CI never reads a crash as "findings".
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import click

from verifier.cli.config import default_map, find_config, read_config
from verifier.cli.errors import guard
from verifier.cli.provenance import ConfigUse, defaults_note, is_above, remember
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.limits import LimitError, Limits, current_limits, forget_reads, out_of_memory, use_limits
from verifier.core.progress import quiet as quiet_progress
from verifier.core.version import __version__
from verifier.reports.safe_text import one_line

LIMIT_NAMES = Limits.names()
HELP_FLAGS = ("-h", "--help")
HELP_ASKED = "topolog.help_asked"
NAMES_OWN_CONFIG = frozenset({"verify"})
"""Commands whose report names the configuration file and what it set; the others get a line on stderr."""


class LazyGroup(click.Group):
    """Imports a command's module only when that command runs (or help lists it).

    Each command module imports the stages it needs at the top; a run pays only for its own.
    """

    COMMANDS: ClassVar[dict[str, str]] = {
        "audit": "verifier.cli.audit_command:audit_cmd",
        "authorize": "verifier.cli.authz_commands:authorize_cmd",
        "diff": "verifier.cli.diff_command:diff_cmd",
        "draw": "verifier.cli.draw_command:draw_cmd",
        "explain": "verifier.cli.explain_command:explain_cmd",
        "export": "verifier.cli.import_commands:export_cmd",
        "import": "verifier.cli.import_commands:import_cmd",
        "place": "verifier.cli.place_command:place_cmd",
        "policy": "verifier.cli.policy_commands:policy_cmd",
        "query": "verifier.cli.query_commands:query_cmd",
        "reconcile": "verifier.cli.import_commands:reconcile_cmd",
        "repl": "verifier.cli.repl_command:repl_cmd",
        "rules": "verifier.cli.rules_commands:rules_cmd",
        "schema": "verifier.cli.schema_command:schema_cmd",
        "serve": "verifier.cli.serve_command:serve_cmd",
        "test": "verifier.cli.rules_commands:test_cmd",
        "verify": "verifier.cli.verify_commands:verify_cmd",
    }

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Help is asked for before the configuration is read: a broken configuration file must
        # not keep `topolog verify --help` from saying how to fix it. Click hands the group's
        # callback no trace of the subcommand's own arguments, so they are looked at here.
        options = args[: args.index("--")] if "--" in args else args  # after `--` every word is an argument
        ctx.meta[HELP_ASKED] = any(a in HELP_FLAGS for a in options)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        # click's standalone main turns a KeyboardInterrupt a command raises into "Aborted!" and
        # exit 1, the findings code: passed on past it instead, for run() to say so (exit 130).
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        # Names only: importing every command's module here would make each run that reads a
        # configuration (verifier.cli.config asks for the names) pay for all of them.
        return sorted(self.COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return self._find(cmd_name)

    def _find(self, name: str) -> click.Command | None:
        where = self.COMMANDS.get(name)
        if where is None:
            return None
        module, attr = where.split(":")
        command = getattr(importlib.import_module(module), attr, None)
        return command if isinstance(command, click.Command) else None


class _ConfigPath(click.Path):
    """click's Path, which calls a link that leads to no file (dangling, or a loop of links) a file that
    "does not exist": the user, whose `ls` shows it, is told it is a link.
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str | Path) and os.path.islink(value) and not os.path.exists(value):
            self.fail(
                f"{str(value)!r} is a symbolic link that leads to no file (dangling, or a loop of links); "
                "expected a configuration file",
                param,
                ctx,
            )
        return super().convert(value, param, ctx)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="topolog")
@click.option(
    "--config",
    "config_path",
    type=_ConfigPath(path_type=Path, exists=True, dir_okay=False),
    default=None,
    help="Take option defaults from this file (.yaml, or .toml with [tool.topolog]) instead of the nearest "
    ".topolog.yaml or pyproject.toml found from the working directory upwards.",
)
@click.option("--no-config", is_flag=True, help="Read no configuration file: only flags and built-in defaults.")
@click.option(
    "--input-limit",
    "input_limits",
    multiple=True,
    metavar="NAME=VALUE",
    help="Raise (or lower) a bound on what any input may hold, e.g. --input-limit file_size=1GiB "
    f"(repeatable). Names: {', '.join(LIMIT_NAMES)}; docs/limits.md gives the defaults.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print no progress lines on stderr (they show when a run takes over a second): for pre-commit "
    "hooks and logs that are compared.",
)
@click.pass_context
def main(
    ctx: click.Context, config_path: Path | None, no_config: bool, input_limits: tuple[str, ...], quiet: bool
) -> None:
    """Verify AI infrastructure topology before it is used.

    Option defaults come from .topolog.yaml or [tool.topolog] in pyproject.toml, the
    nearest one from the working directory upwards (see docs/configuration.md); flags
    given on the command line win over it.

    \b
    Example:
      topolog verify inventories/dgx-h100-pod.yaml
      topolog --config ci/topolog.yaml verify inventories/*.yaml
      topolog --no-config verify inventories/dgx-h100-pod.yaml
      topolog --quiet verify inventories/*.yaml
    """
    forget_reads()  # a new run: no input read yet (write_file refuses to replace one that was)
    if quiet:
        ctx.with_resource(quiet_progress())  # until the command returns
    if no_config and config_path is not None:
        raise click.UsageError("--config FILE and --no-config contradict each other; give one of them")
    if input_limits:
        try:
            limits = current_limits().with_override_text(list(input_limits))
        except LimitError as err:
            raise click.BadParameter(err.problem, ctx, param_hint="--input-limit") from None
        # In force until the command returns: every loader reads the active limits.
        ctx.with_resource(use_limits(limits))
    if no_config:
        return
    assert isinstance(ctx.command, click.Group)
    group = ctx.command

    def load() -> dict[str, dict[str, Any]] | None:
        config = read_config(config_path) if config_path is not None else find_config(Path.cwd())
        if config is None:
            return None
        where: dict[tuple[str, str], SourceLocation] = {}
        defaults = default_map(config, group, ctx, ctx.invoked_subcommand, where)
        # Remembered so that reports can name the file and the line of each value they used.
        remember(ctx, ConfigUse(config.name, config_path is None and is_above(config.folder), where))
        return defaults

    # Click hands each subcommand's context its entry of the group's default_map.
    if ctx.meta.get(HELP_ASKED):
        # Help shows the defaults a valid file gives; a broken one is reported when the command runs.
        try:
            ctx.default_map = load()
        except (TopologError, click.ClickException):
            ctx.default_map = None
        return
    ctx.default_map = guard(load)
    invoked = ctx.invoked_subcommand
    if invoked is not None and invoked not in NAMES_OWN_CONFIG and not ctx.resilient_parsing:
        command = group.get_command(ctx, invoked)
        note = defaults_note(ctx, invoked, command) if command is not None else None
        if note is not None:  # a default from a file nobody named must not change a run silently
            click.echo(note, err=True)


_DUCKDB_INTERRUPTED = "Query interrupted"
"""What DuckDB raises (a plain RuntimeError) when a Ctrl-C reaches it inside a statement, e.g. while
findings are read: the user stopped the run, which is not a bug to report."""


class _Interrupted(Exception):
    """A Ctrl-C inside a command (`LazyGroup.invoke`): not a KeyboardInterrupt, which click would take."""


def _interrupted() -> NoReturn:
    click.echo("topolog: interrupted", err=True)
    sys.exit(130)


def run(args: list[str] | None = None) -> None:
    """The console entry point: the `main` group, with a crash reported as an internal error (exit 2)."""
    # One command, then the process exits. The cyclic collector would only walk, again and again,
    # the inventory, facts and rule objects the run builds (which hold no cycles): a fifth of a
    # shipped example's verify. `topolog repl`, which stays, turns it back on.
    gc.disable()
    try:
        main.main(args=args, prog_name="topolog")
    except SystemExit:
        raise
    except (KeyboardInterrupt, _Interrupted):
        _interrupted()
    except MemoryError:  # outside any command's guard (a default from configuration, click itself)
        click.echo(f"error: {out_of_memory()}", err=True)
        sys.exit(2)
    except Exception as err:  # a crash is a bug, but CI must not read it as findings (exit 1)
        if type(err) is RuntimeError and str(err) == _DUCKDB_INTERRUPTED:
            _interrupted()
        if os.environ.get("TOPOLOG_DEBUG"):
            import traceback  # only for a crash: not at every start

            traceback.print_exc()
        click.echo(
            one_line(f"topolog: internal error ({type(err).__name__}: {err})")  # the message may quote a path
            + "; this is a bug in topolog, please report it (TOPOLOG_DEBUG=1 prints the traceback)",
            err=True,
        )
        sys.exit(2)


if __name__ == "__main__":  # pragma: no cover
    run()
