"""Running the CLI in-process, for the end-to-end tests of every command."""

from __future__ import annotations

from click.testing import CliRunner

from verifier.cli.main import main


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`topolog ARGS...` in-process: exit code, stdout, stderr."""
    result = CliRunner().invoke(main, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr
