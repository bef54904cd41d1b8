"""Every command documents itself with an example (a command without one fails here)."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from verifier.cli.main import main


def _commands() -> list[str]:
    """Every command, subcommands of a group (`export slurm-topology`) included."""
    from verifier.cli.reference import commands

    return [name for name, _command, _parent in commands()]


def _command(name: str) -> click.Command:
    from verifier.cli.reference import commands

    return next(command for n, command, _parent in commands() if n == name)


@pytest.mark.parametrize("name", _commands())
def test_command_help_has_example(name: str) -> None:
    result = CliRunner().invoke(main, [*name.split(), "--help"])
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


@pytest.mark.parametrize("name", _commands())
def test_every_option_says_what_it_does(name: str) -> None:
    command = _command(name)
    silent = [p.name for p in command.params if isinstance(p, click.Option) and not (p.help or "").strip()]
    assert silent == []


def test_the_cli_reference_is_current() -> None:
    """docs/cli.md holds every command's help; regenerate it with `python -m verifier.cli.reference > docs/cli.md`."""
    from pathlib import Path

    from verifier.cli.reference import render_reference

    docs = Path(__file__).resolve().parents[2] / "docs" / "cli.md"
    assert docs.read_text(encoding="utf-8") == render_reference()


def test_every_command_and_option_is_in_the_user_docs() -> None:
    """Each command has its section in docs/cli.md and each of its options is named there."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = []
    for name in _commands():
        section = text.split(f"\n## topolog {name}\n", 1)
        if len(section) != 2:
            missing.append(name)
            continue
        body = section[1].split("\n## ", 1)[0]
        command = _command(name)
        missing += [
            f"{name} {o}" for p in command.params if isinstance(p, click.Option) for o in p.opts if o not in body
        ]
    assert missing == []
