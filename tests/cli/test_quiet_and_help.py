"""`--quiet` (no progress lines) and `--help` whatever the configuration file holds."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main
from verifier.core import progress
from verifier.core.progress import Progress

ROOT = Path(__file__).resolve().parents[2]
POD = str(ROOT / "inventories" / "dgx-h100-pod.yaml")


def test_quiet_progress_writes_nothing_even_once_shown() -> None:
    stream = io.StringIO()
    with progress.quiet(), Progress(stream, delay=0.0) as shown:
        shown._timer.join(10)  # the zero-delay timer has revealed progress
        assert shown.visible
        shown.step("loading inventory")
    assert stream.getvalue() == ""
    # Outside `quiet()` the same steps are written.
    loud = io.StringIO()
    with Progress(loud, delay=0.0) as shown:
        shown._timer.join(10)
        shown.step("loading inventory")
    assert "loading inventory" in loud.getvalue() and "done in" in loud.getvalue()


def test_quiet_flag_keeps_progress_out_of_a_slow_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # Progress shown from the first instant: without --quiet every phase of this run would be on stderr.
    monkeypatch.setattr(progress, "DELAY", 0.0)
    result = CliRunner().invoke(main, ["--quiet", "--no-config", "verify", POD])
    assert result.exit_code in (0, 1), result.stderr
    assert "topolog: [" not in result.stderr


def test_help_works_whatever_the_configuration_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".topolog.yaml").write_text("fail-on: [\n")  # an unclosed flow sequence
    for args in (["verify", "--help"], ["verify", "-h"], ["--help"], ["place", "--help"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, (args, result.output)
        assert result.stdout.startswith("Usage: ")
    # The command itself still refuses the file: line 2, where the YAML ends inside the sequence.
    result = CliRunner().invoke(main, ["verify", POD])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: .topolog.yaml:2:")
    # A valid file still gives help its defaults.
    (tmp_path / ".topolog.yaml").write_text("fail-on: warning\n")
    shown = CliRunner().invoke(main, ["verify", "--help"])
    assert shown.exit_code == 0 and "[default: warning]" in shown.stdout
    # An argument after `--` is not a help flag.
    assert CliRunner().invoke(main, ["verify", "--", "--help"]).exit_code == 2
