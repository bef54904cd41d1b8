"""Option defaults from a configuration file: `.topolog.yaml`, or `[tool.topolog]` in pyproject.toml.

A key is an option name as typed on the command line without its dashes (`fail-on`,
`rules`). A key at the top level applies to every command that has that option; a table
named after a command (`[tool.topolog.verify]`, or `verify:` in YAML) applies to that
command only and wins over the top level. The result is a click `default_map`, which is
why a flag on the command line always beats the file.

Relative paths in the file are taken from the file's folder, so a configuration means the
same thing whichever subfolder topolog runs in.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import click

from verifier.cli.yaml_first import yaml
from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.limits import read_limited
from verifier.core.suggest import did_you_mean
from verifier.sources.inventory.yaml_source import YList, YMap, decode_utf8, load_yaml_text

YAML_NAME = ".topolog.yaml"
PYPROJECT_NAME = "pyproject.toml"

_set = object.__setattr__

KeyPath = tuple[str | int, ...]
"""Where a value sits below the topolog table: keys, and list indexes for items."""


@runtime_checkable
class PathsInValue(Protocol):
    """A parameter type whose values hold a path inside a larger string (`sarif=out.sarif`)."""

    def rebase_paths(self, value: str, rebase: Callable[[str], str]) -> str: ...


@dataclass(frozen=True, init=False, repr=False, eq=False)  # frozen: verifier.core.frozen says why it is written so
class ConfigFile(Frozen):
    """One configuration file, read: its topolog table and a way back to each key's line."""

    name: str
    """The file as messages name it (relative to the working directory where possible)."""
    folder: Path
    data: Mapping[str, Any]
    locate: Callable[[KeyPath], SourceLocation]
    is_toml: bool

    def __init__(
        self,
        name: str,
        folder: Path,
        data: Mapping[str, Any],
        locate: Callable[[KeyPath], SourceLocation],
        is_toml: bool,
    ) -> None:
        _set(self, "name", name)
        _set(self, "folder", folder)
        _set(self, "data", data)
        _set(self, "locate", locate)
        _set(self, "is_toml", is_toml)

    def section(self, command: str | None) -> str:
        """How the table holding a key is written in this file, for messages."""
        if self.is_toml:
            return "[tool.topolog]" if command is None else f"[tool.topolog.{command}]"
        return "the top level" if command is None else f"'{command}:'"


def _shown(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive on Windows: no relative form exists
        return str(path)


def _hint(word: str, choices: Iterable[str]) -> str:
    return did_you_mean(word, choices)


# -- reading ----------------------------------------------------------------------------------

_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)")
_TOOL_TOPOLOG = re.compile(rb"""["']?tool["']?[ \t]*\.[ \t]*["']?topolog""")
"""`tool.topolog` in a table header or a dotted key, its parts quoted or not."""
_TOOL_ALONE = re.compile(rb"""\[[ \t]*["']?tool["']?[ \t]*\]|["']?tool["']?[ \t]*=""")
"""A `[tool]` table (whose keys may include `topolog`) or an inline `tool = {...}`."""


def _may_hold_table(data: bytes) -> bool:
    """Whether TOML text could define tool.topolog: it spells `tool.topolog`, or has a `[tool]` table
    or a `tool =` key and names topolog somewhere; or it holds a \\u or \\U escape, with which a quoted
    key could spell either word (no other escape stands for a letter).
    """
    if b"\\u" in data or b"\\U" in data:
        return True
    return b"topolog" in data and (_TOOL_TOPOLOG.search(data) is not None or _TOOL_ALONE.search(data) is not None)


_TOML_HEADER = re.compile(r"^\s*\[\[?([^\[\]]+)\]\]?\s*(?:#.*)?$")
_TOML_WORD = r"(?:[A-Za-z0-9_\-]+|\"[^\"]*\"|'[^']*')"
_TOML_KEY = re.compile(rf"^\s*({_TOML_WORD}(?:\s*\.\s*{_TOML_WORD})*)\s*=")
_TOML_PART = re.compile(r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_\-]+)")


def _toml_key(text: str) -> tuple[str, ...]:
    return tuple(next(g for g in m.groups() if g is not None) for m in _TOML_PART.finditer(text))


def _toml_locator(text: str, name: str) -> Callable[[KeyPath], SourceLocation]:
    """Tomllib keeps no positions, so table headers and `key =` lines are found in the text."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        if header := _TOML_HEADER.match(line):
            table = _toml_key(header[1])
            lines.setdefault(table, number)
        elif key := _TOML_KEY.match(line):
            lines.setdefault((*table, *_toml_key(key[1])), number)

    def locate(path: KeyPath) -> SourceLocation:
        keys = ("tool", "topolog", *(p for p in path if isinstance(p, str)))
        # A key inside an inline table or an array has no line of its own: the enclosing key's will do.
        while keys:
            if keys in lines:
                return SourceLocation(name, lines[keys])
            keys = keys[:-1]
        return SourceLocation(name)

    return locate


def _read_toml(path: Path, name: str, found: bool = False) -> ConfigFile | None:
    """The [tool.topolog] table of a TOML file, or None when it has none.

    `found`: the file was come across while looking for a configuration, not named by --config.
    Such a file is parsed only when its bytes could hold the table (_may_hold_table): a
    pyproject.toml that configures other tools, or names topolog only as a dependency or a
    script, is not ours to read, and parsing it is 4-10 ms of every command run beside it.
    """
    data = _read_bytes(path, name)
    if found and not _may_hold_table(data):
        return None
    import tomllib  # a run in a folder without pyproject.toml never parses TOML (6 ms of every command)

    text = decode_utf8(data, name)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        message = str(err)
        at = _TOML_AT.search(message)
        where = SourceLocation(name, int(at[1]), int(at[2])) if at else SourceLocation(name)
        raise TopologError.at(where, f"TOML syntax error: {_TOML_AT.sub('', message)}") from None
    except RecursionError:
        # tomllib reads nested arrays and inline tables by recursion: 100,000 `[` (or 3,000 `{a=`)
        # ended as "internal error (RecursionError)". Refused at the file, as the YAML reader refuses
        # its own; no option takes more than a list of texts.
        raise TopologError.at(
            SourceLocation(name, 1, 1),
            "TOML nested deeper than the parser can follow (hundreds of levels of arrays or inline "
            'tables); expected option names and values, such as fail-on = "warning"',
        ) from None
    tool = doc.get("tool")
    if not isinstance(tool, dict) or "topolog" not in tool:
        return None
    locate = _toml_locator(text, name)
    table = tool["topolog"]
    if not isinstance(table, dict):
        raise TopologError.at(locate(()), "tool.topolog must be a table of option names and values")
    return ConfigFile(name, path.absolute().parent, table, locate, is_toml=True)


def _compose(text: str) -> Any:
    """The document's node tree, by libyaml where it reads the text: the pure parser took about half a
    second per MB of one comment line (its reader steps one character at a time), and a configuration
    is read before every command. libyaml refuses some text the pure parser reads (nesting past 1,000,
    characters it does not take): the pure parser then decides, as the loader does.
    """
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        try:
            return yaml.compose(text, Loader=fast)
        except (yaml.YAMLError, UnicodeEncodeError):
            pass
    return yaml.compose(text, Loader=yaml.SafeLoader)


def _read_yaml(path: Path, name: str) -> ConfigFile:
    text = decode_utf8(_read_bytes(path, name), name)
    if not text.strip():
        # Nothing at all (a pipe whose writer wrote nothing, a file cut short or not written yet)
        # was read as no setting: the run went on with every default, a `fail-on` the file was
        # to hold gone without a word. As an empty thresholds file, it is refused; a file that
        # means to set nothing says so with a comment.
        raise TopologError.at(
            SourceLocation(name, 1, 1),
            "the configuration file is empty (nothing but white space: a pipe whose writer wrote nothing, "
            "a file cut short); expected option names and values, such as 'fail-on: warning', or a "
            "comment ('# no settings') for one that sets nothing",
        )
    try:
        # Only to tell an empty or non-mapping file apart before the loader, whose wording
        # for those cases speaks of inventories. Syntax errors are the loader's to report.
        node = _compose(text)
    except (yaml.YAMLError, RecursionError):
        # A nesting past the interpreter's stack (100,000 `[`) ended as "internal error
        # (RecursionError)"; the loader below refuses it at its line by nesting_depth.
        node = None
        load_yaml_text(text, name)  # raises, with the line and column of the error
    if node is None:
        return ConfigFile(name, path.absolute().parent, {}, lambda _path: SourceLocation(name), is_toml=False)
    if not isinstance(node, yaml.MappingNode):
        mark = node.start_mark
        raise TopologError.at(
            SourceLocation(name, mark.line + 1, mark.column + 1),
            "a topolog configuration is a mapping of option names to values, such as 'fail-on: warning'",
        )
    data = load_yaml_text(text, name)

    def locate(path: KeyPath) -> SourceLocation:
        here: Any = data
        where = data.loc
        for step in path:
            if isinstance(here, YMap) and isinstance(step, str) and step in here:
                where, here = here.key_loc(step), here[step]
            elif isinstance(here, YList) and isinstance(step, int) and 0 <= step < len(here):
                where, here = here.item_loc(step), here[step]
            else:
                break
        return where

    return ConfigFile(name, path.absolute().parent, data, locate, is_toml=False)


def _read_bytes(path: Path, name: str) -> bytes:
    try:
        return read_limited(path, name, "configuration")
    except OSError as err:
        raise TopologError.at(SourceLocation(name), f"cannot read configuration: {err.strerror or err}") from None


def read_config(path: Path) -> ConfigFile:
    """The file named by `--config`: YAML as a whole, TOML through its [tool.topolog] table."""
    name = str(path)
    if path.suffix == ".toml":
        config = _read_toml(path, name)
        if config is None:
            raise TopologError.at(
                SourceLocation(name), "has no [tool.topolog] table; expected option defaults under [tool.topolog]"
            )
        return config
    if path.suffix in (".yaml", ".yml"):
        return _read_yaml(path, name)
    raise TopologError.at(
        SourceLocation(name), "is neither YAML (.yaml, .yml) nor TOML (.toml); expected a topolog configuration file"
    )


def find_config(start: Path) -> ConfigFile | None:
    """The configuration nearest to `start`, looking in it and then in each folder above it.

    A pyproject.toml without a [tool.topolog] table is not a configuration and the search
    goes on above it. A folder with both files is refused: which one wins would otherwise be
    something a reader of either file cannot see.
    """
    folder = start.absolute()
    while True:
        yaml_path, toml_path = folder / YAML_NAME, folder / PYPROJECT_NAME
        from_yaml = _read_yaml(yaml_path, _shown(yaml_path)) if yaml_path.is_file() else None
        from_toml = _read_toml(toml_path, _shown(toml_path), found=True) if toml_path.is_file() else None
        if from_yaml is not None and from_toml is not None:
            raise TopologError.at(
                from_toml.locate(()),
                f"both {from_yaml.name} and the [tool.topolog] table here configure topolog; "
                "keep one of them (or choose with topolog --config FILE)",
            )
        if from_yaml is not None or from_toml is not None:
            return from_yaml or from_toml
        if folder.parent == folder:
            return None
        folder = folder.parent


# -- checking against the commands --------------------------------------------------------------


def options_by_name(command: click.Command) -> dict[str, click.Option]:
    """A command's options by their long name without dashes: the keys a configuration uses."""
    out: dict[str, click.Option] = {}
    for param in command.params:
        if isinstance(param, click.Option):
            long = [opt for opt in param.opts if opt.startswith("--")]
            if long:
                out[long[0][2:]] = param
    return out


def _describe(value: Any) -> str:
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a table"
    return type(value).__name__


def _scalar_kind(param: click.Option) -> str:
    if param.is_flag and param.is_bool_flag:
        return "true or false"
    if isinstance(param.type, click.types.IntParamType):
        return "a whole number"
    if isinstance(param.type, click.types.FloatParamType):
        return "a number"
    if isinstance(param.type, click.Choice):
        return "one of " + ", ".join(str(c) for c in param.type.choices)
    if isinstance(param.type, click.Path):
        return "a path"
    if param.type.name not in ("text", "string"):
        return f"a string {param.type.name}"  # a custom type's name is its form, such as FORMAT=PATH
    return "a string"


_DECIMAL = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+(?=[eE]))(?:[eE][-+]?[0-9]+)?")
"""A number with a fraction or an exponent as YAML writes it (0.5, 2.5, 1e3): the YAML loader keeps such
a scalar as text (`cuda: 12.10` must stay 12.10), and a number option refused it as "not the string
'0.5'" (no seconds option could be set to half a second in .topolog.yaml, where pyproject.toml's 0.5
was taken). The option's own type reads the text, as it reads the flag's."""


_WHOLE = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
"""A whole number written as text (`port: "8181"`, quoted): read by the option's own type as a fraction's
text is (a quoted "0.5" was taken and a quoted "2" refused). A leading zero stays refused: YAML 1.1 reads
an unquoted 010 as 8 and the loader keeps it as the text 010, so neither reading is safe."""


def _fits(param: click.Option, value: Any) -> bool:
    if param.is_flag and param.is_bool_flag:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if isinstance(param.type, click.types.IntParamType):
        return isinstance(value, int) or (isinstance(value, str) and _WHOLE.fullmatch(value) is not None)
    if isinstance(param.type, click.types.FloatParamType):
        return isinstance(value, int | float) or (
            isinstance(value, str) and (_DECIMAL.fullmatch(value) is not None or _WHOLE.fullmatch(value) is not None)
        )
    return isinstance(value, str)


class _Misfit(Exception):
    """A value that does not fit its option: where it is, below the topolog table, and why."""

    def __init__(self, path: KeyPath, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


def _rebaser(folder: Path) -> Callable[[str], str]:
    def rebase(value: str) -> str:
        path = Path(value)
        if path.is_absolute():
            return value
        try:
            # Relative to the working directory again, so that reports name files as a user types them.
            return os.path.relpath(folder / path)
        except ValueError:
            return str(folder / path)

    return rebase


def _scalar(param: click.Option, value: Any, path: KeyPath, key: str, rebase: Callable[[str], str]) -> Any:
    if not _fits(param, value):
        raise _Misfit(path, f"{key!r} must be {_scalar_kind(param)}, not {_describe(value)}")
    if isinstance(param.type, click.Choice) and value not in param.type.choices:
        choices = [str(c) for c in param.type.choices]
        raise _Misfit(path, f"{key!r} must be one of {', '.join(choices)}, not {value!r}{_hint(str(value), choices)}")
    if isinstance(param.type, click.Path):
        value = rebase(value)
    elif isinstance(param.type, PathsInValue):
        value = param.type.rebase_paths(value, rebase)
    try:
        param.type.convert(value, param, None)
    except click.BadParameter as err:
        raise _Misfit(path, f"{key!r}: {err.format_message()}") from None
    return value


def _value(param: click.Option, value: Any, path: KeyPath, key: str, rebase: Callable[[str], str]) -> Any:
    """The value for the default_map, its paths taken from the file's folder; _Misfit when it does not fit."""
    if not (param.multiple or param.nargs != 1):
        return _scalar(param, value, path, key, rebase)
    if not isinstance(value, list):
        raise _Misfit(path, f"{key!r} must be a list, each item {_scalar_kind(param)}; not {_describe(value)}")
    return [_scalar(param, item, (*path, index), key, rebase) for index, item in enumerate(value)]


def default_map(
    config: ConfigFile,
    group: click.Group,
    ctx: click.Context,
    invoked: str | None = None,
    where: dict[tuple[str, str], SourceLocation] | None = None,
) -> dict[str, dict[str, Any]]:
    """The click default_map of `config` for `group`'s commands; TopologError on any bad key or value.

    `where`, when given, is filled with the file:line of each value set, by (command, parameter
    name): what the reports quote when they name the settings that shaped a run.

    Commands (imported lazily by the group) are loaded only when they are invoked, named by
    a table, or a top-level key may apply to them: their imports are what LazyGroup avoids.
    """
    names = group.list_commands(ctx)
    loaded: dict[str, click.Command] = dict(group.commands)
    rebase = _rebaser(config.folder)
    problems: list[Diagnostic] = []

    def problem(path: KeyPath, message: str) -> None:
        problems.append(Diagnostic(config.locate(path), message))

    def load(name: str) -> None:
        if name not in loaded and name in names:
            command = group.get_command(ctx, name)
            if command is not None:
                loaded[name] = command

    def having(key: str) -> list[str]:
        return [n for n in sorted(loaded) if key in options_by_name(loaded[n])]

    tables: dict[str, Mapping[str, Any]] = {}
    top: dict[str, Any] = {}
    for key, value in config.data.items():
        if not isinstance(value, Mapping):
            top[key] = value
        elif key in names:
            tables[key] = value
            load(key)
        else:
            problem(
                (key,),
                f"unknown command {key!r} in {config.section(None)}"
                + (_hint(key, names) or f"; a table configures one of the commands {', '.join(names)}"),
            )
    if invoked is not None:
        load(invoked)

    out: dict[str, dict[str, Any]] = {}
    for command_name, table in tables.items():
        options = options_by_name(loaded[command_name])
        for key, value in table.items():
            if key not in options:
                problem(
                    (command_name, key),
                    f"unknown option {key!r} in {config.section(command_name)}: "
                    f"`topolog {command_name}` has no --{key}{_hint(key, options)}",
                )
                continue
            try:
                converted = _value(options[key], value, (command_name, key), key, rebase)
            except _Misfit as misfit:
                problem(misfit.path, misfit.message)
                continue
            out.setdefault(command_name, {})[options[key].name or key] = converted
            if where is not None:
                where[(command_name, options[key].name or key)] = config.locate((command_name, key))

    if top:  # a top-level key applies to every command with that option, so each must be known
        for name in names:
            load(name)
    for key, value in top.items():
        commands = [n for n in having(key) if key not in tables.get(n, {})]  # a command's own table wins
        if not having(key):
            every = {k for command in loaded.values() for k in options_by_name(command)}
            what = (
                f"{key!r} is a command: give it a table of its options"
                if key in names
                else f"unknown option {key!r} in {config.section(None)}: no command has --{key}"
            )
            problem((key,), what + _hint(key, every))
            continue
        misfits: dict[str, _Misfit] = {}
        for name in commands:
            param = options_by_name(loaded[name])[key]
            try:
                out.setdefault(name, {})[param.name or key] = _value(param, value, (key,), key, rebase)
                if where is not None:
                    where[(name, param.name or key)] = config.locate((key,))
            except _Misfit as misfit:
                misfits[name] = misfit
        if misfits and len(misfits) == len(commands):
            first = next(iter(misfits.values()))
            # When a command's own table already set the key, the top-level value is for the others: name them.
            which = f" (for {_commands(misfits)})" if commands != having(key) else ""
            problem(first.path, first.message + which)
        elif misfits:
            # The value suits some commands with this option and not others (`format`, `output`
            # mean different things in different commands): it belongs in a command's table.
            first = next(iter(misfits.values()))
            fits = [n for n in commands if n not in misfits]
            problem(
                first.path,
                f"{first.message} for {_commands(misfits)}; a top-level key applies to every "
                f"command with --{key}, so set it in the table of the command it is meant for, "
                f"such as {config.section(fits[0])}",
            )

    if problems:
        raise TopologError(problems)
    return out


def _commands(names: Iterable[str]) -> str:
    return ", ".join(f"`topolog {n}`" for n in names)
