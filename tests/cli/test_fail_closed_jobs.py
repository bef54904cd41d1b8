"""Jobs are judged with authorization or not at all: no principals file is exit 2, not an open fleet."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
MIXED = ROOT / "inventories" / "mixed-fleet.yaml"
PORTABLE = ROOT / "inventories" / "jobs" / "portable.yaml"


@pytest.fixture
def alone(tmp_path: Path) -> Path:
    """mixed-fleet.yaml copied to a folder with no principals file beside it."""
    inv = tmp_path / "mixed-fleet.yaml"
    shutil.copy(MIXED, inv)
    return inv


def test_place_without_principals_is_refused(alone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("place", str(alone), str(PORTABLE))
    assert code == 2 and out == ""
    assert "no principals file to place jobs" in err and "--principals" in err


def test_no_authorization_places_and_says_so(alone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli("place", str(alone), str(PORTABLE), "--no-authorization")
    assert code in (0, 1)
    assert out.rstrip().endswith("jobs were judged as if every principal may use every GPU")
    code, out, _ = run_cli("verify", str(alone), "--jobs", str(PORTABLE), "--no-authorization")
    assert "authorization not checked (--no-authorization)" in out


def test_verify_jobs_without_principals_is_refused(
    alone: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("verify", str(alone), "--jobs", str(PORTABLE))
    assert code == 2 and "no principals file to judge the jobs' principals" in err


def test_a_job_whose_principal_is_not_in_the_principals_file_is_bad_input(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.yaml"
    # portable.yaml's principal is User::"hana"; "hanna" is in no principals file.
    jobs.write_text(PORTABLE.read_text().replace('User::"hana"', 'User::"hanna"'))
    code, _, err = run_cli("place", str(MIXED), str(jobs))
    assert code == 2
    assert f"{jobs}:" in err and "principal 'hanna' is not in" in err and "did you mean 'hana'?" in err


def test_a_report_never_overwrites_an_input(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    shutil.copy(ROOT / "inventories" / "edge-soc.yaml", inv)
    before = inv.read_bytes()
    code, _, err = run_cli("verify", str(inv), "--output", f"json={inv}")
    assert code == 2 and "is an input of this run" in err
    assert inv.read_bytes() == before


def test_a_crash_is_exit_2_not_findings() -> None:
    # A bug must never read as "findings" (exit 1) in CI: the entry point turns it into exit 2.
    code = (
        "import verifier.session.verify_run as v\n"
        "def boom(*a, **k): raise RuntimeError('boom')\n"
        "v.verify = boom\n"
        "import verifier.cli.verify_commands as c\n"
        "c.verify = boom\n"
        "from verifier.cli.main import run\n"
        f"run(['verify', {str(ROOT / 'inventories' / 'edge-soc.yaml')!r}])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "internal error (RuntimeError: boom)" in result.stderr and "Traceback" not in result.stderr


def test_json_on_the_reference_engine_says_it_has_no_proofs() -> None:
    # JSON asks for proofs; pyDatalog keeps no derivation stages: the report says so instead of failing.
    code, out, _ = run_cli(
        "verify", str(ROOT / "tests" / "golden" / "stray-devices.yaml"), "--engine", "pydatalog", "--format", "json"
    )
    assert code == 1
    import json

    doc = json.loads(out)
    assert doc["summary"]["proofsUnavailable"].startswith("the pydatalog engine records no derivations")
    assert doc["findings"] and all("proof" not in f or f["proof"] is None for f in doc["findings"])
