"""`serve`'s number options read ASCII digits only, as `place --limit` does (WholeRange): click's
IntRange and FloatRange read with int() and float(), which take `4_00` (400), `1_0` (10) and
Arabic-Indic digits (`٤`: 4), and FloatRange lets `nan` and `inf` through a lower bound (every
comparison with NaN is false). Each was taken without a word; now each is exit 2 before anything is
served. `topolog` has no other number option (grep IntRange/FloatRange/type=int/type=float in
verifier/cli: `place --limit` was fixed before).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli
from service.serve_helpers import copy_inputs

from verifier.service import server
from verifier.service.config import ServeConfig

WHOLE = ["--port", "--decision-log-max-bytes", "--decision-log-keep", "--max-body", "--max-batch", "--admit-limit"]
SECONDS = ["--request-head-timeout", "--reload-quiet", "--reload-quiet-max"]
TIMEOUTS = ["--authorize-timeout", "--admit-timeout"]


@pytest.mark.parametrize("option", WHOLE)
@pytest.mark.parametrize("text", ["4_00", "٤", "1_0", "0x50", " 80"])
def test_a_whole_number_option_takes_ascii_digits_only(option: str, text: str) -> None:
    code, _out, err = run_cli("serve", "mixed-fleet.yaml", option, text)
    assert code == 2
    assert f"Invalid value for '{option}': {text!r} is not a whole number; expected ASCII digits such as 8" in err


@pytest.mark.parametrize("option", SECONDS)
@pytest.mark.parametrize("text", ["4_00", "٤", "1_0"])
def test_seconds_take_ascii_digits_only(option: str, text: str) -> None:
    code, _out, err = run_cli("serve", "mixed-fleet.yaml", option, text)
    assert code == 2
    assert f"Invalid value for '{option}': {text!r} is not a number of seconds; expected one above 0" in err


@pytest.mark.parametrize("option", TIMEOUTS)
@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("1_0", "'1_0' is not a number"),
        ("٤", "'٤' is not a number"),
        # Above the 0.001 lower bound by click's comparison (NaN compares false): an undecided
        # authorize would never be denied.
        ("nan", "'nan' is not a finite number"),
        ("inf", "'inf' is not a finite number"),
        ("1e999", "'1e999' is not a finite number"),  # written in digits, read as infinity
    ],
)
def test_timeouts_are_finite_numbers_in_ascii_digits(option: str, text: str, says: str) -> None:
    code, _out, err = run_cli("serve", "mixed-fleet.yaml", option, text)
    assert code == 2
    assert f"Invalid value for '{option}': {says}" in err


def test_numbers_in_ascii_digits_are_still_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Controls: the forms a person types (a sign, a fraction, an exponent) reach ServeConfig as written.
    copy_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    given: list[ServeConfig] = []
    monkeypatch.setattr(server, "serve", given.append)
    code, out, err = run_cli(
        "serve", "mixed-fleet.yaml", "--port", "0", "--max-body", "+2048", "--admit-limit", "0",
        "--authorize-timeout", "2.5", "--admit-timeout", "1e1", "--request-head-timeout", ".5",
    )  # fmt: skip
    assert code == 0, out + err
    assert [
        (c.port, c.max_body, c.admit_limit, c.authorize_timeout_s, c.admit_timeout_s, c.head_timeout_s) for c in given
    ] == [(0, 2048, 0, 2.5, 10.0, 0.5)]
