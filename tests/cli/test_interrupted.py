"""A Ctrl-C that DuckDB turns into its own error is an interrupted run, not a bug report.

DuckDB answers a SIGINT that arrives inside a statement with a plain `RuntimeError("Query
interrupted")`; read while findings are collected (after the guarded evaluation), it reached the
console entry point's crash branch and printed "internal error ... please report it".
"""

from __future__ import annotations

import pytest

from verifier.cli import main as cli_main


def _raises(err: BaseException) -> None:
    raise err


def test_duckdb_query_interrupted_is_reported_as_an_interrupt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_main.main, "main", lambda **_kw: _raises(RuntimeError("Query interrupted")))
    with pytest.raises(SystemExit) as stopped:
        cli_main.run(["verify", "x.yaml"])
    assert stopped.value.code == 130  # 128 + SIGINT, as for a KeyboardInterrupt
    err = capsys.readouterr().err
    assert err == "topolog: interrupted\n"


def test_another_runtime_error_is_still_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_main.main, "main", lambda **_kw: _raises(RuntimeError("Query interrupted by mistake")))
    with pytest.raises(SystemExit) as stopped:
        cli_main.run(["verify", "x.yaml"])
    assert stopped.value.code == 2
    assert "internal error (RuntimeError: Query interrupted by mistake)" in capsys.readouterr().err
