"""The reload's quiet wait is a setting of `serve` (`--reload-quiet`, `--reload-quiet-max`, or the
configuration file's `serve:` keys), no longer module constants the server cannot be told.

Defaults are the wait's measured values (2 s of quiet, 20 s at most); a value that is not a finite
number of seconds above 0, or a quiet longer than its deadline, stops `serve` with exit 2 before
anything is served. The wait reads the revision's ServeConfig, so a lowered setting lowers the wait.
So is the time a request's head may take to arrive (`--request-head-timeout`, 10 s), which the
slowloris test lowers (test_serve_hostile_http_round13).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from cli_helpers import run_cli
from service.serve_helpers import copy_inputs

from verifier.service import server
from verifier.service.config import ServeConfig
from verifier.service.revision import build_revision


def _started_with(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, list[ServeConfig]]:
    """`topolog serve mixed-fleet.yaml ARGS` in-process, the server replaced by one that keeps its
    configuration and returns: the exit code, stderr and the configurations it was given.
    """
    given: list[ServeConfig] = []
    monkeypatch.setattr(server, "serve", given.append)
    code, out, err = run_cli("serve", "mixed-fleet.yaml", *args)
    return code, out + err, given


def test_the_defaults_are_the_measured_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, said, given = _started_with(monkeypatch)
    assert code == 0, said
    assert [(c.reload_quiet_s, c.reload_quiet_max_s, c.head_timeout_s) for c in given] == [(2.0, 20.0, 10.0)]


def test_flags_and_the_configuration_file_set_the_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, said, given = _started_with(
        monkeypatch, "--reload-quiet", "0.25", "--reload-quiet-max", "1.5", "--request-head-timeout", "3"
    )
    assert code == 0, said
    assert [(c.reload_quiet_s, c.reload_quiet_max_s, c.head_timeout_s) for c in given] == [(0.25, 1.5, 3.0)]
    # From the file's serve section; a flag still wins over it (the quiet here, 0.5 not 4).
    (tmp_path / ".topolog.yaml").write_text("serve:\n  reload-quiet: 4\n  reload-quiet-max: 30\n")
    code, said, given = _started_with(monkeypatch, "--reload-quiet", "0.5")
    assert code == 0, said
    assert [(c.reload_quiet_s, c.reload_quiet_max_s) for c in given] == [(0.5, 30.0)]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--reload-quiet", "0"], "'--reload-quiet': 0.0 is not in the range 0<x<=86400"),
        (["--reload-quiet-max", "-1"], "'--reload-quiet-max': -1.0 is not in the range 0<x<=86400"),
        (["--reload-quiet", "nan"], "'--reload-quiet': 'nan' is not a finite number of seconds"),
        (["--reload-quiet-max", "inf"], "'--reload-quiet-max': 'inf' is not a finite number of seconds"),
        (["--reload-quiet", "2s"], "'--reload-quiet': '2s' is not a number of seconds; expected one above 0"),
        # 5 s of quiet could never come within 1 s: every wait would end at the deadline.
        (["--reload-quiet", "5", "--reload-quiet-max", "1"], "--reload-quiet 5 is longer than --reload-quiet-max 1"),
        # The deadline alone lowered under the default quiet (2 s) is the same mistake.
        (["--reload-quiet-max", "1.5"], "--reload-quiet 2 is longer than --reload-quiet-max 1.5"),
        (["--request-head-timeout", "0"], "'--request-head-timeout': 0.0 is not in the range 0<x<=86400"),
        (["--request-head-timeout", "nan"], "'--request-head-timeout': 'nan' is not a finite number of seconds"),
        # A day at most: 1e300 s is past what a sleep takes (OverflowError), and no wait is that long.
        (["--reload-quiet-max", "1e300"], "'--reload-quiet-max': 1e+300 is not in the range 0<x<=86400"),
    ],
)
def test_a_bad_wait_is_exit_2_before_anything_is_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], says: str
) -> None:
    copy_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    # The real server: it checks its configuration before it binds or builds anything.
    code, out, err = run_cli("serve", "mixed-fleet.yaml", "--port", "0", *args)
    assert code == 2, out + err
    assert says in err and "Traceback" not in err, err


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("serve:\n  reload-quiet: 0\n", ".topolog.yaml:2:3: 'reload-quiet': Invalid value for '--reload-quiet'"),
        ("serve:\n  reload-quiet-max: two\n", ".topolog.yaml:2:3: 'reload-quiet-max' must be a number"),
        ("serve:\n  reload-quiet: 30\n", "--reload-quiet 30 is longer than --reload-quiet-max 20"),
    ],
)
def test_a_bad_wait_in_the_configuration_file_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, says: str
) -> None:
    copy_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".topolog.yaml").write_text(text)
    code, out, err = run_cli("serve", "mixed-fleet.yaml", "--port", "0")
    assert code == 2, out + err
    assert says in err and "Traceback" not in err, err


def _first_sleep(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, quiet_s: float, max_s: float) -> float:
    """The first sleep of a reload's quiet wait just after a policy file was written, with the wait
    set to `quiet_s` (at most `max_s`). The sleep ages every file by an hour instead of sleeping,
    so the next look finds them quiet and the reload reads: no real wait.
    """
    config = ServeConfig((copy_inputs(tmp_path),), reload_quiet_s=quiet_s, reload_quiet_max_s=max_s)
    first = build_revision(config)
    (tmp_path / "policies" / "extra.cedar").write_text(
        '@id("x")\nforbid (principal == User::"alice", action, resource);\n'
    )
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        old = time.time() - 3600
        for f in tmp_path.rglob("*"):
            os.utime(f, (old, old))

    monkeypatch.setattr("verifier.service.revision.time.sleep", sleep)
    second = build_revision(config, first)
    monkeypatch.undo()
    assert second.id != first.id  # extra.cedar was read
    assert len(waits) == 1
    return waits[0]


def test_the_wait_is_the_configured_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # extra.cedar written a moment ago: the wait sleeps out the rest of the quiet, at most its
    # whole length. Set to 600 s (deadline 3,600 s) it sleeps nearly 600 s, not the 2 s default.
    waited = _first_sleep(tmp_path, monkeypatch, 600.0, 3600.0)
    assert 590.0 < waited <= 600.0


def test_the_wait_ends_at_the_configured_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A quiet of 600 s never comes within a deadline of 1.5 s: the one sleep lasts until that
    # deadline (at most 1.5 s), not the 20 s default's.
    waited = _first_sleep(tmp_path, monkeypatch, 600.0, 1.5)
    assert 0.0 < waited <= 1.5
