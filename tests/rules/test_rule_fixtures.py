"""Every check has a passing and a failing fixture; one parametrized test runs them all.

`expected.txt` lists, one per line, the subjects and message of each finding the failing
fixture must produce (`subject, subject | message`), written by hand from the fixture.
Both engines must agree with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.checks import checks_from_program
from verifier.datalog.loader import load_program
from verifier.resources import shipped_rules_dir
from verifier.verify import verify

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHECK_IDS = [c.id for c in checks_from_program(load_program([shipped_rules_dir()]))]
ENGINES = ["duckdb", "pydatalog"]


def _findings(path: Path, rule: str, engine: str) -> list[str]:
    jobs = path.parent / "jobs.yaml"  # placement checks (PLACE*) judge the jobs of their fixture dir
    report = verify([path], [shipped_rules_dir()], engine=engine, jobs=[jobs] if jobs.is_file() else None)
    return sorted(f"{', '.join(f.subjects)} | {f.message}" for f in report.findings if f.rule == rule)


def test_every_check_has_fixtures() -> None:
    missing = [
        f"{cid}/{name}" for cid in CHECK_IDS for name in ("pass.yaml", "fail.yaml", "expected.txt")
        if not (FIXTURES / cid / name).is_file()
    ]
    assert missing == []
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == sorted(CHECK_IDS)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_failing_fixture(check_id: str, engine: str) -> None:
    expected = sorted(
        line.strip() for line in (FIXTURES / check_id / "expected.txt").read_text().splitlines() if line.strip()
    )
    assert expected, "a failing fixture must expect at least one finding"
    assert _findings(FIXTURES / check_id / "fail.yaml", check_id, engine) == expected


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("check_id", CHECK_IDS)
def test_passing_fixture(check_id: str, engine: str) -> None:
    assert _findings(FIXTURES / check_id / "pass.yaml", check_id, engine) == []
