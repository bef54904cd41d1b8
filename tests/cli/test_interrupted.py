"""A Ctrl-C that DuckDB turns into its own error is an interrupted run, not a bug report.

DuckDB answers a SIGINT that arrives inside a statement with a plain `RuntimeError("Query
interrupted")`; read while findings are collected (after the guarded evaluation), it reached the
console entry point's crash branch and printed "internal error ... please report it".
"""

from __future__ import annotations

import pytest

from verifier.cli import main as cli_main


def _run_raising(monkeypatch: pytest.MonkeyPatch, err: BaseException) -> int | str | None:
    """The exit code of the console entry point when the `main` group raises `err`."""

    def raising(**_kw: object) -> None:
        raise err

    monkeypatch.setattr(cli_main.main, "main", raising)
    with pytest.raises(SystemExit) as stopped:
        cli_main.run(["verify", "x.yaml"])
    return stopped.value.code


def test_duckdb_query_interrupted_is_reported_as_an_interrupt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _run_raising(monkeypatch, RuntimeError("Query interrupted"))
    assert code == 130  # 128 + SIGINT, as for a KeyboardInterrupt
    assert capsys.readouterr().err == "topolog: interrupted\n"


def test_another_runtime_error_is_still_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run_raising(monkeypatch, RuntimeError("Query interrupted by mistake")) == 2
    assert "internal error (RuntimeError: Query interrupted by mistake)" in capsys.readouterr().err
