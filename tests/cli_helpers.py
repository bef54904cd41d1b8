"""Running the CLI in-process, for the end-to-end tests of every command."""

from __future__ import annotations

from click.testing import CliRunner

from verifier.cli.main import main


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`topolog --quiet ARGS...` in-process: exit code, stdout, stderr.

    --quiet: a progress line shows only when a run takes over a second, so on a busy machine it
    would enter the stderr a test compares (verifier/core/progress.py has its own tests).
    """
    result = CliRunner().invoke(main, ["--quiet", *args], env=env)
    return result.exit_code, result.stdout, result.stderr
