"""ruff and mypy (configured in pyproject.toml) are part of the test run, so CI enforces them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_clean() -> None:
    result = _run("ruff", "check", "verifier", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_clean() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_clean() -> None:
    result = _run("ruff", "format", "--check", "verifier", "tests", "benchmarks")
    assert result.returncode == 0, result.stdout + result.stderr
