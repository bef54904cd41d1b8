"""`serve` whose web stack cannot be imported names what is missing and the extra (HI2, round 16).

618343d8 said "needs the serve extra" only for a package listed in pyproject.toml's serve extra;
any other import failure became an internal error, so a module those packages import (anyio for
starlette, h11 for uvicorn) missing sent the user a traceback where the extra's install is the cure.
Our own modules failing to import stays an internal error (tests/hostile/test_cli_inputs_round16.py).
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
from cli_helpers import run_cli

INV = str(Path(__file__).resolve().parents[2] / "inventories" / "edge-soc.yaml")


class _Failing(types.ModuleType):
    """verifier.service.server as it is when its imports fail: `from ... import serve` raises `error`."""

    def __init__(self, error: ImportError) -> None:
        super().__init__("verifier.service.server")
        self.error = error

    def __getattr__(self, name: str) -> object:
        raise self.error


@pytest.mark.parametrize(
    ("error", "said"),
    [
        # starlette imports anyio; anyio is in no extra of ours: its own name and the extra.
        (
            ModuleNotFoundError("No module named 'anyio'", name="anyio"),
            "needs the serve extra (anyio is not installed; the extra's packages need it)",
        ),
        (
            ModuleNotFoundError("No module named 'h11._events'", name="h11._events"),
            "needs the serve extra (h11 is not installed; the extra's packages need it)",
        ),
        # A package of the extra itself: as before.
        (
            ModuleNotFoundError("No module named 'uvicorn'", name="uvicorn"),
            "needs the serve extra (uvicorn is not installed)",
        ),
        # An installed package without a name we import: another version than the extra asks for.
        (
            ImportError("cannot import name 'Mount' from 'starlette.routing'", name="starlette.routing"),
            "needs the serve extra at the versions it names (starlette is installed but cannot import name 'Mount'",
        ),
    ],
)
def test_missing_dependency_is_named_with_the_extra(
    monkeypatch: pytest.MonkeyPatch, error: ImportError, said: str
) -> None:
    monkeypatch.setitem(sys.modules, "verifier.service.server", _Failing(error))
    code, _out, err = run_cli("serve", INV)
    assert code == 2, err
    assert f"error: topolog serve {said}" in err and "pip install" in err, err
    assert "internal error" not in err and "Traceback" not in err, err
