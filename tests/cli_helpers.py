"""Running the CLI in-process, for the end-to-end tests of every command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from verifier.cli.main import main


def run_cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`topolog --quiet ARGS...` in-process: exit code, stdout, stderr.

    --quiet: a progress line shows only when a run takes over a second, so on a busy machine it
    would enter the stderr a test compares (verifier/core/progress.py has its own tests).
    """
    result = CliRunner().invoke(main, ["--quiet", *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def modules_after(args: list[str], env: dict[str, str] | None = None) -> set[str]:
    """Every module loaded once `topolog ARGS...` has run in a fresh interpreter (imports are per
    process), run from the repository root with `env` added to the environment.
    """
    code = (
        "import json, sys\n"
        "from verifier.cli.main import run\n"
        "try:\n"
        f"    run({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return set(loaded)
