"""Validated policies and Cedar's decisions kept on disk: the same inputs give the same answer without
cedarpy; any change of what decides (a policy, a limit, the entities) asks Cedar again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.authorization import policies
from verifier.core import cache
from verifier.core.errors import TopologError
from verifier.core.limits import Limits, use_limits

ROOT = Path(__file__).resolve().parents[2]
MIXED = "inventories/mixed-fleet.yaml"
# ivan is an intern (inventories/principals.yml) and a100-n0/gpu0 an A100, which has ECC:
# policies/interns.cedar forbids it ("interns-consumer-only").
REQUEST = ["--principal", "ivan", "--action", "schedule", "--resource", "a100-n0/gpu0"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(where))
    return where


def _authorize(folder: Path, *extra: str) -> tuple[int, str, bool]:
    """(exit status, stdout, whether cedarpy was imported) of `topolog authorize` in a fresh interpreter."""
    code = (
        "import sys\n"
        "from verifier.cli.main import run\n"
        "try:\n"
        f"    run(['authorize', {MIXED!r}, *{REQUEST!r}, *{list(extra)!r}])\n"
        "except SystemExit as e:\n"
        "    status = e.code\n"
        "print('cedarpy' in sys.modules and 'cedarpy.pst' in sys.modules, status)\n"
    )
    env = {**os.environ, cache.ENV_DIR: str(folder)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    *out, last = done.stdout.splitlines()
    imported, status = last.split()
    return int(status), "\n".join(out), imported == "True"


def test_a_repeated_request_is_answered_without_cedarpy(folder: Path) -> None:
    first = _authorize(folder)
    again = _authorize(folder)
    assert first[0] == again[0] == 1  # DENY
    assert "interns-consumer-only (forbid)" in first[1]
    assert first[1] == again[1]
    assert (first[2], again[2]) == (True, False)


def test_an_edited_policy_is_asked_again(folder: Path, tmp_path: Path) -> None:
    mine = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", mine)
    assert _authorize(folder, "--policies", str(mine))[0] == 1
    # Without interns.cedar nothing forbids it, and nothing permits it either: ivan's tenant is
    # students (interns are in the students team), a100-n0 is labelled tenant team-nlp, and
    # tenant-own-hardware needs the two to be equal.
    (mine / "interns.cedar").unlink()
    status, out, imported = _authorize(folder, "--policies", str(mine))
    assert (status, imported) == (1, True)
    assert "no policy permits it (default deny)" in out


def test_a_lowered_limit_is_not_answered_from_a_run_under_the_default(folder: Path) -> None:
    assert _authorize(folder)[0] == 1
    # "interns-consumer-only" is 21 characters: over id_length = 8 the directory is refused.
    status, _, _ = _authorize(folder, "--input-limit", "id_length=8")
    assert status == 2


def test_a_refused_directory_leaves_no_entry_and_is_refused_every_time(folder: Path, tmp_path: Path) -> None:
    mine = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", mine)
    (mine / "broken.cedar").write_text('@id("broken")\npermit (principal, action, resource) when { resource.nope };\n')
    for _ in range(2):
        with pytest.raises(TopologError, match="broken"):
            policies.load_policies(mine)
    assert not list(folder.glob(f"{policies.KIND}-*"))


def test_a_bundle_read_back_holds_what_validation_found(folder: Path) -> None:
    fresh = policies.load_policies(ROOT / "policies")
    kept = policies.load_policies(ROOT / "policies")
    assert "schema" not in kept.__dict__  # no cedarpy handle made yet
    assert (kept.policies, kept.observed, kept.schema_shown, kept.digest) == (
        fresh.policies,
        fresh.observed,
        fresh.schema_shown,
        fresh.digest,
    )
    with use_limits(Limits(id_length=8)), pytest.raises(TopologError, match="id_length"):
        policies.load_policies(ROOT / "policies")
