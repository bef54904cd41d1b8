"""`topolog schema`: the JSON Schema of the inventory format, for editors (registered in verifier/cli/main.py).

The schema is a file shipped inside the package rather than built at run time, so that
what an editor checks against is exactly what the tests validated every inventory with.
"""

from __future__ import annotations

from pathlib import Path

import click

from verifier.cli.errors import fail, guard
from verifier.cli.output import write_file
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.resources import package_file

SCHEMA_FILE = ("schemas", "inventory.schema.json")
"""Where the inventory schema lives under the `verifier` package."""
KINDS = ("inventory", "jobs", "principals", "waivers", "config")
"""The files topolog reads that have a shipped schema, each `verifier/schemas/<kind>.schema.json`."""


def schema_text(kind: str) -> str:
    """The JSON Schema (draft 2020-12) of one kind of file, as shipped."""
    return package_file("verifier.schemas", f"{kind}.schema.json").read_text(encoding="utf-8")


def inventory_schema_text() -> str:
    """The JSON Schema (draft 2020-12) of inventory files, as shipped."""
    return schema_text("inventory")


@click.command("schema")
@click.argument("kind", type=click.Choice(KINDS), default="inventory", metavar="[KIND]")
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the schema to FILE (missing folders are made) instead of printing it.",
)
def schema_cmd(kind: str, output: Path | None) -> None:
    """Print the JSON Schema of the inventory format (or of KIND: jobs, principals, waivers, config), for editors.

    With yaml-language-server (the VS Code YAML extension and other editors) an inventory
    then completes keys, object kinds and link kinds as it is typed, and flags misspelt
    keys, unknown kinds and figures without a unit it knows. Point an inventory at the
    schema with a first line `# yaml-language-server: $schema=<path>`, or map file
    patterns to it with the `yaml.schemas` setting (docs/inventory-format.md). The schema
    checks each file's shape; `topolog verify` still checks what it cannot (ids, link
    endpoints, templates and models across files). Job files, principals files, waivers
    files and the configuration file (.topolog.yaml) have schemas of their own.

    \b
    Example:
      topolog schema -o .topolog/inventory.schema.json
      topolog schema > inventory.schema.json
      topolog schema jobs -o .topolog/jobs.schema.json
      topolog schema config > topolog-config.schema.json
    """
    text = schema_text(kind)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        fail(TopologError.at(SourceLocation(str(output)), f"cannot write the schema: {err.strerror or err}"))
    # Whole or not at all, and into a device file or FIFO rather than over it; written with
    # newline="", so the file is byte-identical on every platform (no CRLF on Windows).
    guard(lambda: write_file(output, text))
