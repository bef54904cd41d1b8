"""Review R-ST61: a number option with a fraction in .topolog.yaml (`reload-quiet: 0.5`).

The YAML loader keeps a scalar with a dot as text (an inventory's `cuda: 12.10` must stay 12.10),
so the configuration refused every such value of a number option: "'reload-quiet' must be a
number, not the string '0.5'" (exit 2), and no seconds option (--reload-quiet,
--reload-quiet-max, --request-head-timeout, --authorize-timeout, --admit-timeout) could be set
there to half a second or 2.5 s, where pyproject.toml's `reload-quiet = 0.5` was taken.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli
from service.serve_helpers import copy_inputs

from verifier.service import server
from verifier.service.config import ServeConfig


def _given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> tuple[int, str, list[ServeConfig]]:
    """`topolog serve mixed-fleet.yaml` in-process with `text` as .topolog.yaml; the server replaced
    by one that keeps the configuration it was given."""
    copy_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".topolog.yaml").write_text(text)
    given: list[ServeConfig] = []
    monkeypatch.setattr(server, "serve", given.append)
    code, out, err = run_cli("serve", "mixed-fleet.yaml")
    return code, out + err, given


def test_seconds_with_a_fraction_are_read_from_the_yaml_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each value as written: 0.5, 2.5 (quiet <= max), 1e1 = 10 (an exponent, no dot: also text to
    # the loader), .75, and 3 (a whole number, read before too).
    text = (
        "serve:\n  reload-quiet: 0.5\n  reload-quiet-max: 2.5\n  request-head-timeout: 1e1\n"
        "  authorize-timeout: .75\n  admit-timeout: 3\n"
    )
    code, said, given = _given(tmp_path, monkeypatch, text)
    assert code == 0, said
    assert [
        (c.reload_quiet_s, c.reload_quiet_max_s, c.head_timeout_s, c.authorize_timeout_s, c.admit_timeout_s)
        for c in given
    ] == [(0.5, 2.5, 10.0, 0.75, 3.0)]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        # Not a number as written: still refused as text, with its line.
        ("0.5s", "'reload-quiet' must be a number, not the string '0.5s'"),
        ("1_0.5", "'reload-quiet' must be a number, not the string '1_0.5'"),
        (".nan", "'reload-quiet' must be a number, not the string '.nan'"),
        # A number out of the option's range: its own message.
        ("0.0", "0.0 is not in the range 0<x<=86400"),
        # 1e400 is written in digits and reads as infinity: refused as written (round 16: the
        # range's message quoted it as "inf", a word the file does not hold).
        ("1e400", "'1e400' is not a finite number of seconds"),
    ],
)
def test_a_fraction_that_is_not_a_fitting_number_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, says: str
) -> None:
    code, said, given = _given(tmp_path, monkeypatch, f"serve:\n  reload-quiet: {value}\n")
    assert code == 2 and given == [], said
    assert ".topolog.yaml:2:3:" in said and says in said and "Traceback" not in said, said
