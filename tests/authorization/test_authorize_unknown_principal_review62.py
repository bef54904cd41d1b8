"""An unknown principal is not compared with every known one (review R-HI, round 16).

3cc9c50c made `authorize --principal` suggest the nearest id by difflib, in verifier.authorization.requests,
which `serve` runs for every request of /v1/authorize/batch too: at 1,023 principals (the 131k fleet's) a batch
of 600 unknown names and one known took past --authorize-timeout (2 s), and the known principal's request,
allowed on the base, was denied with them ("not decided within 2 s"). The base suggested nothing there. A
look-alike (one pass, non-ASCII names only) is still named with its odd letter; no whole-list comparison runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
MIXED = str(ROOT / "inventories" / "mixed-fleet.yaml")


def _refuse_comparison(*_args: object, **_kwargs: object) -> str | None:
    raise AssertionError("an unknown principal was compared with every known one")


@pytest.mark.parametrize(
    ("principal", "hint"),
    [
        # An ASCII slip of ivan (inventories/principals.yml): no suggestion, as on the base.
        ("ivam", ""),
        # ivan with a Cyrillic a (U+0430): drawn as ivan, so named with the letter that differs.
        ("iv\u0430n", "; did you mean 'ivan'? (it looks the same but holds U+0430 CYRILLIC SMALL LETTER A)"),
    ],
)
def test_unknown_principal_is_refused_without_a_whole_list_comparison(
    monkeypatch: pytest.MonkeyPatch, principal: str, hint: str
) -> None:
    monkeypatch.setattr("verifier.core.suggest.closest", _refuse_comparison)
    code, _out, err = run_cli(
        "authorize", MIXED, "--principal", principal, "--action", "schedule", "--resource", "rtx-n3/gpu0"
    )
    assert code == 2, err
    assert f"--principal {principal!r} is not in " in err, err
    assert err.rstrip().endswith(f"principals.yml{hint}"), err
