"""`topolog test DIR`: a user's rule tests, laid out as topolog's own rule fixtures are.

    DIR/
      *.dl                                 the rules under test (any depth outside fixtures/)
      fixtures/<CHECK_ID>/
        pass.yaml, pass-NAME.yaml          inventories on which the check reports nothing
        fail.yaml + expected.txt           an inventory and exactly the findings it gives
        fail-NAME.yaml + expected-NAME.txt more of those
        jobs.yaml                          jobs for every inventory of the folder (as --jobs)
        observed/                          observations for every inventory of the folder (as --observed)
        pass-NAME.observed/, fail.observed/ observations for that case alone (instead of observed/)
        observed-now.txt                   the time observations are judged at (as --observed-now)
        policies/                          Cedar policies for every inventory of the folder (as --policies)
        pass-NAME.policies/, fail.policies/ policies for that case alone (instead of policies/)

principals.yml and topolog.thresholds.yaml beside an inventory are read as `topolog
verify` reads them. `expected*.txt` holds one finding per line, `subject, subject |
message`, the same format as tests/rules/fixtures/ (the project runs its own fixtures
through this module too).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from verifier.checks.check import Check, CheckSelection, checks_from_program, select_checks
from verifier.checks.findings import Finding
from verifier.core.errors import Diagnostic, EngineError, SourceLocation, TopologError
from verifier.core.resources import RULE_SUFFIX, display_path
from verifier.core.suggest import closest
from verifier.engine.loader import read_text
from verifier.engine.rule_pack import inside_shipped
from verifier.facts.observed import ObservedSettings
from verifier.session.observed_input import ObservedRun, parse_time
from verifier.session.session import load_rules
from verifier.session.verify_run import SideFileFlags, VerifyRun, verify
from verifier.sources.principals import PRINCIPALS_FILE
from verifier.sources.thresholds import OVERRIDE_NAME

FIXTURES_DIR = "fixtures"
JOBS_FILE = "jobs.yaml"
OBSERVED_DIR = "observed"
POLICIES_DIR = "policies"
OBSERVED_NOW_FILE = "observed-now.txt"
HELPER_FILES = frozenset({JOBS_FILE, PRINCIPALS_FILE, OVERRIDE_NAME, OBSERVED_NOW_FILE})
"""Files a fixture folder may hold besides its cases: read by verify from beside the inventory."""

_CASE = re.compile(r"^(?P<kind>pass|fail)(?P<name>-[A-Za-z0-9_.-]+)?\.ya?ml$")
_EXPECTED = re.compile(r"^expected(?P<name>-[A-Za-z0-9_.-]+)?\.txt$")

Status = Literal["PASS", "FAIL", "ERROR"]


@dataclass(frozen=True)
class Case:
    check_id: str
    inventory: Path
    expected: Path | None
    """The findings file of a failing case; None for a passing one (no finding of the check)."""
    expected_lines: tuple[str, ...] = ()
    """What `expected` lists, sorted (read when the layout is checked, before anything runs)."""
    jobs: Path | None = None

    @property
    def observed(self) -> Path | None:
        """The case's observations: `<case>.observed/` beside it, else the folder's `observed/`, else none."""
        own = self.inventory.with_name(f"{self.inventory.stem}.{OBSERVED_DIR}")
        if own.is_dir():
            return own
        shared = self.inventory.parent / OBSERVED_DIR
        return shared if shared.is_dir() else None

    @property
    def policies(self) -> Path | None:
        """The case's own policy folder, `<case>.policies/` beside it; None: found as verify finds it
        (the folder's `policies/`, else the shipped ones). Checks of the policies themselves (rules/policy/)
        need a policy set per case: their findings hold whatever the inventory.
        """
        own = self.inventory.with_name(f"{self.inventory.stem}.{POLICIES_DIR}")
        return own if own.is_dir() else None


@dataclass(frozen=True)
class Outcome:
    case: Case
    missing: tuple[str, ...] = ()
    """Expected findings the run did not give."""
    unexpected: tuple[str, ...] = ()
    """Findings of the check the run gave that were not expected."""
    errors: tuple[str, ...] = ()
    """Why the case could not run (its inventory or jobs do not load, evaluation failed)."""

    @property
    def status(self) -> Status:
        if self.errors:
            return "ERROR"
        return "FAIL" if self.missing or self.unexpected else "PASS"


def finding_line(finding: Finding) -> str:
    """A finding as expected*.txt writes it."""
    return f"{', '.join(finding.subjects)} | {finding.message}".strip()


def read_expected(path: Path) -> list[str]:
    """The findings listed in an expected*.txt, sorted; TopologError (file:line) for a malformed file."""
    problems: list[Diagnostic] = []
    text = read_text(path, problems)
    if text is None:
        raise TopologError(problems)
    lines: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if "|" not in line:
            problems.append(
                Diagnostic(
                    SourceLocation(str(path), number),
                    "expected a finding written as `subject, subject | message` (the subjects, then ' | ', then the "
                    "message, as `topolog test` prints a finding it did not expect)",
                )
            )
        lines.append(line)
    if not lines and not problems:
        problems.append(
            Diagnostic(
                SourceLocation(str(path)),
                "lists no finding; a failing case must expect at least one (an inventory with none is a pass*.yaml)",
            )
        )
    if problems:
        raise TopologError(problems)
    return sorted(lines)


def rule_files(directory: Path) -> list[Path]:
    """The rule files under test: every *.dl under `directory`, outside its fixtures folder."""
    fixtures = directory / FIXTURES_DIR
    return sorted(p for p in directory.rglob(f"*{RULE_SUFFIX}") if not p.is_dir() and fixtures not in p.parents)


def discover(fixtures: Path, check_ids: Collection[str]) -> tuple[list[Case], list[str]]:
    """The cases under `fixtures` and warnings about ignored files; TopologError for a broken layout.

    Every problem in the layout is collected before anything runs, so one round fixes them all.
    """
    if not fixtures.is_dir():
        raise TopologError.at(
            SourceLocation(str(fixtures)),
            "no fixtures folder here; expected fixtures/<CHECK_ID>/pass.yaml, fail.yaml and expected.txt "
            "(see docs/custom-rules.md)",
        )
    errors: list[Diagnostic] = []
    warnings: list[str] = []
    cases: list[Case] = []
    folders = sorted(p for p in fixtures.iterdir() if not p.name.startswith("."))
    for folder in folders:
        if not folder.is_dir():
            warnings.append(f"{folder}: not a check's fixture folder (fixtures/<CHECK_ID>/), ignored")
            continue
        if folder.name not in check_ids:
            close = closest(folder.name, check_ids, fold_case=True)
            hint = f" (did you mean {close}?)" if close else ""
            errors.append(
                Diagnostic(
                    SourceLocation(str(folder)),
                    f"fixtures for check {folder.name}, which no loaded rule file defines{hint}; a fixture folder "
                    "is named by the `# @id:` of its check",
                )
            )
            continue
        cases.extend(_folder_cases(folder, errors, warnings))
    if not folders:
        errors.append(Diagnostic(SourceLocation(str(fixtures)), "holds no fixture folder (fixtures/<CHECK_ID>/)"))
    if errors:
        raise TopologError(errors)
    return cases, warnings


def _folder_cases(folder: Path, errors: list[Diagnostic], warnings: list[str]) -> list[Case]:
    jobs = folder / JOBS_FILE
    passing: list[Path] = []
    failing: dict[str, Path] = {}
    expected: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        case = _CASE.match(path.name)
        wanted = _EXPECTED.match(path.name)
        if case is not None and path.is_file():
            if case["kind"] == "pass":
                passing.append(path)
            else:
                failing[case["name"] or ""] = path
        elif wanted is not None and path.is_file():
            expected[wanted["name"] or ""] = path
        elif path.is_file() and path.suffix in (".yaml", ".yml", ".txt") and path.name not in HELPER_FILES:
            warnings.append(
                f"{path}: not a test case (cases are pass*.yaml, and fail*.yaml with expected*.txt), ignored"
            )
    for name, path in failing.items():
        if name not in expected:
            errors.append(
                Diagnostic(
                    SourceLocation(str(path)),
                    f"no expected{name}.txt beside it; list the findings this inventory must give, one "
                    "`subject, subject | message` per line",
                )
            )
    for name, path in expected.items():
        if name not in failing:
            errors.append(Diagnostic(SourceLocation(str(path)), f"no fail{name}.yaml beside it to check"))
    if not passing and not failing:
        errors.append(Diagnostic(SourceLocation(str(folder)), "holds no pass*.yaml or fail*.yaml case"))
    with_jobs = jobs if jobs.is_file() else None
    cases = [Case(folder.name, p, None, (), with_jobs) for p in passing]
    for name in sorted(failing):
        if name not in expected:
            continue
        try:
            lines = tuple(read_expected(expected[name]))
        except TopologError as err:
            errors.extend(err.diagnostics)
            continue
        cases.append(Case(folder.name, failing[name], expected[name], lines, with_jobs))
    return sorted(cases, key=lambda c: c.inventory.name)


def case_findings(case: Case, rules_paths: Sequence[Path], engine: str) -> list[str]:
    """The findings of the case's check on its inventory, as expected*.txt lines, sorted. TopologError on bad input."""
    # A fixture folder is an example of its own: jobs are judged with authorization only
    # where the folder has principals to judge them by.
    principals = (case.inventory.parent / PRINCIPALS_FILE).is_file()
    run = VerifyRun(
        rules=list(rules_paths),
        engine=engine,
        jobs=[case.jobs] if case.jobs else (),
        authorize=principals,
        evaluate_only=frozenset({case.check_id}),
        observed=_observed(case),
        flags=SideFileFlags(policies=case.policies),
    )
    report = verify([case.inventory], run)
    return sorted(finding_line(f) for f in report.findings if f.rule == case.check_id)


def _observed(case: Case) -> ObservedRun | None:
    """`--observed` for a case with observations, judged at observed-now.txt's time when the folder has one."""
    folder = case.observed
    if folder is None:
        return None
    now_file = case.inventory.parent / OBSERVED_NOW_FILE
    now = parse_time(now_file.read_text(encoding="utf-8").strip(), str(now_file)) if now_file.is_file() else None
    # Named from the working directory, as findings name it: expected*.txt quotes observations' file:line.
    return ObservedRun((display_path(folder),), settings=ObservedSettings(now=now))


def run_case(case: Case, rules_paths: Sequence[Path], engine: str) -> Outcome:
    try:
        got = case_findings(case, rules_paths, engine)
    except TopologError as err:
        return Outcome(case, errors=tuple(str(d) for d in err.diagnostics))
    except EngineError as err:
        return Outcome(case, errors=(f"{case.inventory}: the rules could not be evaluated: {err}",))
    want_n, got_n = Counter(case.expected_lines), Counter(got)
    return Outcome(case, tuple(sorted((want_n - got_n).elements())), tuple(sorted((got_n - want_n).elements())))


def untested_warnings(checks: Iterable[Check], cases: Iterable[Case], selection: CheckSelection) -> list[str]:
    """A warning per user check (not one of topolog's) with no passing or no failing case."""
    kinds: dict[str, set[bool]] = {}
    for case in cases:
        kinds.setdefault(case.check_id, set()).add(case.expected is None)
    out: list[str] = []
    for check in checks:
        if not selection.reports(check.id) or inside_shipped(Path(check.file)):
            continue
        have = kinds.get(check.id, set())
        if not have:
            out.append(
                f"{check.file}: check {check.id} has no fixtures "
                f"(fixtures/{check.id}/pass.yaml, fail.yaml and expected.txt)"
            )
        elif True not in have:
            out.append(f"{check.file}: check {check.id} has no passing case (fixtures/{check.id}/pass.yaml)")
        elif False not in have:
            out.append(
                f"{check.file}: check {check.id} has no failing case (fixtures/{check.id}/fail.yaml and expected.txt)"
            )
    return out


@dataclass(frozen=True)
class RuleTestReport:
    """Every case run, in order, with the layout warnings found before any ran."""

    engine: str
    outcomes: list[Outcome]
    warnings: list[str]

    def count(self, status: Status) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def exit_code(self) -> int:
        """0 every case passed, 1 a case failed, 2 a case could not run."""
        if self.count("ERROR"):
            return 2
        return 1 if self.count("FAIL") else 0


def run_rule_tests(
    directory: Path,
    rules_paths: Sequence[Path],
    engine: str,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
) -> RuleTestReport:
    """Run every case under `directory`/fixtures.

    `rules_paths` are loaded before the rule files of `directory` (the shipped pack, unless
    --no-shipped-rules, and any --rules). Layout problems raise TopologError before any case runs.
    """
    if not directory.is_dir():
        raise TopologError.at(SourceLocation(str(directory)), "not a directory; give the folder of your rule tests")
    paths = [*rules_paths, *rule_files(directory)]
    if not paths:
        raise TopologError.at(
            SourceLocation(str(directory)),
            f"no rules to test: the folder holds no {RULE_SUFFIX} file and --no-shipped-rules leaves out topolog's",
        )
    checks = checks_from_program(load_rules(paths))
    selection = select_checks((c.id for c in checks), only, skip)
    cases, warnings = discover(directory / FIXTURES_DIR, {c.id for c in checks})
    cases = [c for c in cases if selection.reports(c.check_id)]
    if not cases:
        raise TopologError.at(
            SourceLocation(str(directory / FIXTURES_DIR)), "the --check / --skip options leave no case to run"
        )
    warnings = [*warnings, *untested_warnings(checks, cases, selection)]
    return RuleTestReport(engine, [run_case(case, paths, engine) for case in cases], warnings)
