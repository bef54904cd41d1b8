"""Every command documents itself with an example (a command without one fails here)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from verifier.cli.main import main


def _commands() -> list[str]:
    assert isinstance(main, click.Group)
    # list_commands includes the lazily imported ones (authorize, audit, import, reconcile).
    return main.list_commands(click.Context(main))


@pytest.mark.parametrize("name", _commands())
def test_command_help_has_example(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"])
    assert result.exit_code == 0, result.output
    assert "Example:" in result.output
    assert "topolog " + name in result.output


def test_top_level_help_lists_commands() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in ("verify", "query", "explain", "rules", "repl", "diff", "import", "reconcile", "authorize", "audit"):
        assert name in result.output


def test_unknown_option_is_usage_error() -> None:
    result = CliRunner().invoke(main, ["verify", "--no-such-flag", "x.yaml"])
    assert result.exit_code == 2
