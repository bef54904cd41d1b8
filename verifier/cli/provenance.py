"""Which options of a run came from the configuration file, and from which line.

verifier.cli.main reads the file once and remembers here, in the click context, where each
value was written. A command then asks which of its parameters kept the file's value (click
records each parameter's source: a flag or an environment variable replaces the file's), so
its report can name the file and what it changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import click
from click.core import ParameterSource

from verifier.checks.settings import ConfigSetting, RunSettings
from verifier.core.errors import SourceLocation
from verifier.core.frozen import Frozen
from verifier.reports.safe_text import one_line

_META_KEY = "topolog.config"
_set = object.__setattr__


@dataclass(frozen=True, init=False, repr=False, eq=False)  # frozen: verifier.core.frozen says why it is written so
class ConfigUse(Frozen):
    """The configuration file a run read, and the line of each value it set."""

    name: str
    above: bool
    """Found in a folder above the working directory (not there, and not named by --config)."""
    where: Mapping[tuple[str, str], SourceLocation]
    """(command, parameter name) -> the file:line that set it."""

    def __init__(self, name: str, above: bool, where: Mapping[tuple[str, str], SourceLocation]) -> None:
        _set(self, "name", name)
        _set(self, "above", above)
        _set(self, "where", where)


def remember(ctx: click.Context, use: ConfigUse) -> None:
    """Keep `use` for the subcommand (click shares `meta` between a group's context and its commands')."""
    ctx.meta[_META_KEY] = use


def config_use(ctx: click.Context) -> ConfigUse | None:
    use = ctx.meta.get(_META_KEY)
    return use if isinstance(use, ConfigUse) else None


def is_above(folder: Path) -> bool:
    """Whether a configuration found in `folder` lies above the working directory."""
    return folder != Path.cwd().absolute()


def _option_name(command: click.Command, name: str) -> str:
    for param in command.params:
        if param.name == name and isinstance(param, click.Option):
            long = [opt for opt in param.opts if opt.startswith("--")]
            return long[0] if long else param.opts[0]
    return name


def _text(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple | list):
        return ", ".join(_text(v) for v in value)
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def from_config(ctx: click.Context) -> tuple[ConfigSetting, ...]:
    """The options of this command whose value is the configuration file's, in the file's order."""
    use = config_use(ctx)
    if use is None or ctx.info_name is None:
        return ()
    out: list[ConfigSetting] = []
    for param in ctx.command.params:
        name = param.name
        if name is None or ctx.get_parameter_source(name) is not ParameterSource.DEFAULT_MAP:
            continue
        where = use.where.get((ctx.info_name, name))
        if where is not None:
            # The value as the file wrote it (its paths taken from the file's folder), not as click converted it.
            value = _text(ctx.lookup_default(name, call=False))
            out.append(ConfigSetting(_option_name(ctx.command, name), value, where))
    return tuple(sorted(out, key=lambda s: (s.where.line, s.where.col, s.option)))


def where_set(ctx: click.Context, name: str) -> SourceLocation | None:
    """The file:line that set parameter `name`, when its value is the configuration file's."""
    use = config_use(ctx)
    if use is None or ctx.info_name is None or ctx.get_parameter_source(name) is not ParameterSource.DEFAULT_MAP:
        return None
    return use.where.get((ctx.info_name, name))


def date_source(ctx: click.Context, name: str = "today") -> str:
    """Where the date waivers are judged against came from, for the reports."""
    source = ctx.get_parameter_source(name)
    if ctx.params.get(name) is None:
        return "the clock"
    if source is ParameterSource.ENVIRONMENT:
        return "TOPOLOG_TODAY"
    where = where_set(ctx, name)
    if where is not None:
        return f"'today:' in {where}"
    return "--today"


def run_settings(ctx: click.Context) -> RunSettings:
    """The configuration part of a report's settings (the waivers' date is the run's to add)."""
    use = config_use(ctx)
    if use is None:
        return RunSettings()
    return RunSettings(config_file=use.name, config_above=use.above, from_config=from_config(ctx))


def defaults_note(ctx: click.Context, name: str, command: click.Command) -> str | None:
    """For a command whose report does not name its configuration: the line said on stderr
    before it runs, naming the file and the defaults it gives that command (None: none).
    """
    use = config_use(ctx)
    if use is None:
        return None
    keys = sorted((where.line, param) for (cmd, param), where in use.where.items() if cmd == name)
    if not keys:
        return None
    above = " (found in a folder above the working directory)" if use.above else ""
    given = ", ".join(f"{_option_name(command, param)} (line {line})" for line, param in keys)
    return one_line(
        f"topolog: configuration {use.name}{above} sets defaults for `topolog {name}`: {given}; "
        "a flag on the command line wins"
    )
