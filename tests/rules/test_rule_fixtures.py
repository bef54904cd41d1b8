"""Every check has a passing and a failing fixture; one parametrized test runs them all.

`expected.txt` lists, one per line, the subjects and message of each finding the failing
fixture must produce (`subject, subject | message`), written by hand from the fixture.
Both engines must agree with it. The observed checks (OBS...) read observations too: a case's
`<case>.observed/` folder (else the folder's `observed/`) is given as `--observed`, judged at the time in
the folder's `observed-now.txt`; their expected lines quote observation files by their path from the
repository root, where the tests run. The cases are found and run by verifier.session.rule_tests, the
runner behind `topolog test`, so a user's fixtures follow exactly this layout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.checks.check import checks_from_program
from verifier.core.resources import shipped_rules_dir
from verifier.engine.rule_pack import load_rule_pack
from verifier.session.rule_tests import Case, case_findings, discover

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# The pack as every run loads it (its compiled form, which equals a parse of the files while their
# digest matches: test_shipped_program.py; else the files are parsed): collected by every worker.
CHECK_IDS = [c.id for c in checks_from_program(load_rule_pack([shipped_rules_dir()]))]
CASES, IGNORED = discover(FIXTURES, set(CHECK_IDS))
ENGINES = ["duckdb", "memory", "pydatalog"]


def test_every_check_has_fixtures() -> None:
    missing = [
        f"{cid}/{name}"
        for cid in CHECK_IDS
        for name in ("pass.yaml", "fail.yaml", "expected.txt")
        if not (FIXTURES / cid / name).is_file()
    ]
    assert missing == []
    assert sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) == sorted(CHECK_IDS)
    assert IGNORED == []  # a misnamed case would silently not run


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.check_id}/{c.inventory.name}")
def test_fixture(case: Case, engine: str) -> None:
    # A passing case expects no line, a failing one at least one (discover refuses an empty expected.txt).
    assert case_findings(case, [shipped_rules_dir()], engine) == list(case.expected_lines)
