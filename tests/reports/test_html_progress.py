"""Progress while `verify --output html=PATH` draws the page: a fleet's page takes seconds after
the rules are evaluated (131,072 GPUs: about 25 s of drawing), so the run says it is writing the
report, and "done" comes only once the file is written.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from reports.output_helpers import ROOT

from verifier.cli import verify_commands
from verifier.cli.main import main
from verifier.core.progress import Progress

POD = str(ROOT / "inventories" / "dgx-h100-pod.yaml")


class ShownAtOnce(Progress):
    """Progress shown from its first instant, in this thread: no timer, so nothing depends on speed."""

    def __enter__(self) -> Progress:
        self._reveal()
        return self


def test_progress_runs_until_the_html_page_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify_commands, "Progress", ShownAtOnce)
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["--no-config", "verify", POD, "--output", f"html={out}"])
    assert result.exit_code == 1, result.stderr  # the pod's one error, TOPO005
    phases = re.findall(r"^topolog: \[ *[0-9.]+ s\] (.*)$", result.stderr, re.M)
    # The write is a phase of its own, after the rules, and "done" is the last line, after it.
    writing = f"writing the html report to {out}"
    assert writing in phases and phases[-1].startswith("done in ")
    assert phases.index(writing) == len(phases) - 2
    # (Which phases come before it depends on what this process evaluated already: a cache.)
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_quiet_writes_the_page_without_a_progress_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(verify_commands, "Progress", ShownAtOnce)
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["--quiet", "--no-config", "verify", POD, "--output", f"html={out}"])
    assert result.exit_code == 1 and out.exists()
    assert "topolog: [" not in result.stderr
