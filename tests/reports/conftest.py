"""Every report-format test runs from the repository root, as a user running topolog there would."""

from __future__ import annotations

import pytest
from reports.output_helpers import ROOT


@pytest.fixture(autouse=True)
def _run_from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("TOPOLOG_TODAY", raising=False)
    # Inside GitHub Actions, a github-format run must not write into the job's own summary page.
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
