"""Shared fixtures. (tests/ is on sys.path through this file, so tests import cli_helpers.)"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def in_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports name files relative to the working directory, as a user running from the repo sees them."""
    monkeypatch.chdir(ROOT)
