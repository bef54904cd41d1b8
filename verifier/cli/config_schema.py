"""The JSON Schema of topolog's configuration file, made from the commands' own options.

A configuration key is an option's long name without dashes (verifier/cli/config.py): at
the top level it applies to every command that has the option; under a command's name it
applies to that command only. The schema is made from the same click options, so it cannot
drift from what `topolog` accepts; verifier/schemas/config.schema.json is this module's
output (`python -m verifier.cli.config_schema`), and tests/cli/test_schemas.py fails when
the shipped file is not.
"""

from __future__ import annotations

import json
from typing import Any

import click

from verifier.cli.config import options_by_name

_NOT_IN_CONFIG = {"help"}


def _scalar(param: click.Option) -> dict[str, Any]:
    """What one value of `param` may be, as verifier/cli/config.py's _fits accepts it."""
    if param.is_flag and param.is_bool_flag:
        return {"type": "boolean"}
    if isinstance(param.type, click.types.IntParamType):
        return {"type": "integer"}
    if isinstance(param.type, click.types.FloatParamType):
        return {"type": "number"}
    if isinstance(param.type, click.Choice):
        return {"enum": [str(c) for c in param.type.choices]}
    return {"type": "string"}


def option_schema(param: click.Option) -> dict[str, Any]:
    """The schema of a configuration value for `param`: a list where the option repeats."""
    one = _scalar(param)
    out: dict[str, Any] = {"type": "array", "items": one} if param.multiple or param.nargs != 1 else dict(one)
    if param.help:
        out["description"] = " ".join(param.help.split())
    return out


def config_schema(group: click.Group, ctx: click.Context) -> dict[str, Any]:
    """The configuration file's JSON Schema (draft 2020-12) for `group`'s commands."""
    tables: dict[str, Any] = {}
    top: dict[str, list[dict[str, Any]]] = {}
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None:
            continue
        options = {k: option_schema(p) for k, p in sorted(options_by_name(command).items()) if k not in _NOT_IN_CONFIG}
        if not options:
            continue
        tables[name] = {
            "type": "object",
            "description": f"Defaults for `topolog {name}` only.",
            "properties": options,
            "additionalProperties": False,
        }
        for key, schema in options.items():
            if schema not in top.setdefault(key, []):
                top[key].append(schema)
    properties: dict[str, Any] = {}
    for key in sorted(set(top) | set(tables)):
        choices = [*top.get(key, []), *([tables[key]] if key in tables else [])]
        properties[key] = choices[0] if len(choices) == 1 else {"anyOf": choices}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://topolog.dev/schemas/config.schema.json",
        "title": "topolog configuration (.topolog.yaml, or [tool.topolog] in pyproject.toml)",
        "description": "Option defaults: a key is an option's long name; at the top level it applies to every "
        "command that has the option, under a command's name to that command only. A flag on the command line "
        "wins. Written by `topolog schema config`; see docs/configuration.md.",
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }


def config_schema_text() -> str:
    """The schema of `topolog`'s own commands, as the shipped file holds it."""
    from verifier.cli.main import main  # the command group, which imports this module's users lazily

    with click.Context(main) as ctx:
        return json.dumps(config_schema(main, ctx), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(config_schema_text(), end="")
