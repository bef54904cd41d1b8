"""Waivers: accepted findings, each with a reason and an expiry date.

A waivers file (`topolog.waivers.yaml` by default) looks like

    waivers:
      - rule: TOPO004
        subject: "rack7/*"          # fnmatch glob over the finding's subject ids
        reason: NVSwitch tray out for RMA-1234; links come back with the spare.
        expires: 2025-07-01         # last day the waiver holds

A waiver without a reason or an expiry is refused (exit 2, with file:line), so nothing is
accepted forever or without an explanation. A waived finding is still reported, marked
suppressed. An expired waiver stops waiving and is itself an error finding (WAIVER001);
a waiver that matches no finding is a warning finding (WAIVER002), so stale entries
surface instead of silently waiving whatever comes next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from fnmatch import fnmatchcase
from pathlib import Path

from verifier.baseline import fingerprint
from verifier.checks import Check
from verifier.errors import SourceLocation, TopologError
from verifier.findings import Finding, Severity
from verifier.inventory.validate import Problems
from verifier.inventory.yaml_source import YMap, load_yaml_file

DEFAULT_WAIVERS = "topolog.waivers.yaml"
WAIVER_KEYS = ("rule", "subject", "reason", "expires")
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")

EXPIRED_ID = "WAIVER001"
UNUSED_ID = "WAIVER002"


@dataclass(frozen=True)
class Waiver:
    rule: str
    subject: str
    reason: str
    expires: date
    location: SourceLocation

    def matches(self, finding: Finding) -> bool:
        # fnmatchcase: ids are case-sensitive and must match the same on every platform.
        return finding.rule == self.rule and any(fnmatchcase(s, self.subject) for s in finding.subjects)

    def expired(self, today: date) -> bool:
        """A waiver holds through its expiry date and lapses the day after."""
        return today > self.expires


@dataclass(frozen=True)
class WaiverFile:
    path: str
    waivers: tuple[Waiver, ...]


def parse_date(text: str) -> date:
    """YYYY-MM-DD only (date.fromisoformat also takes week dates and the like); ValueError otherwise."""
    if not _DATE.match(text):
        raise ValueError(f"{text!r} is not a date written as YYYY-MM-DD")
    return date.fromisoformat(text)


def load_waivers(path: Path) -> WaiverFile:
    """Parse and check a waivers file; TopologError lists every problem with file:line:col."""
    doc = load_yaml_file(path)
    problems = Problems()
    problems.keys(doc, ("apiVersion", "waivers"), "the waivers file", required=("waivers",))
    items = problems.seq(doc, "waivers", "the waivers file")
    waivers: list[Waiver] = []
    for i, item in enumerate(items or []):
        what = f"waiver {i + 1}"
        if not isinstance(item, YMap):
            problems.add(items.item_loc(i) if items is not None else doc.loc,
                         f"{what} must be a mapping with keys {', '.join(WAIVER_KEYS)}")
            continue
        problems.keys(item, WAIVER_KEYS, what, required=WAIVER_KEYS)
        rule, subject, reason, expires = (problems.text(item, k, what) for k in WAIVER_KEYS)
        when = _read_expiry(item, expires, what, problems)
        if rule and subject and reason and when is not None:
            waivers.append(Waiver(rule, subject, reason.strip(), when, item.loc))
    problems.raise_if_any()
    return WaiverFile(str(path), tuple(waivers))


def _read_expiry(item: YMap, text: str | None, what: str, problems: Problems) -> date | None:
    if text is None:
        return None
    try:
        return parse_date(text)
    except ValueError as err:
        problems.add(item.key_loc("expires"), f"'expires' in {what}: {err}; expected a date such as 2025-07-01")
        return None


def waiver_checks(waivers: WaiverFile) -> list[Check]:
    """The two checks a waivers file adds, so SARIF rules and JUnit test cases describe them."""
    return [
        _check(EXPIRED_ID, "error", "A waiver has expired, so the findings it covered count again.",
               "Fix the waived findings, or renew the waiver with a new expiry date and a current reason.",
               waivers.path),
        _check(UNUSED_ID, "warning", "A waiver matches no finding.",
               "Remove the waiver (the finding it covered is gone) or correct its rule id or subject pattern.",
               waivers.path),
    ]


def _check(id: str, severity: Severity, summary: str, remediation: str, file: str) -> Check:
    return Check(id=id, severity=severity, summary=summary, remediation=remediation, reports="", message="",
                 subjects=(), columns=(), file=file)


def expired_finding(w: Waiver) -> tuple[Finding, str]:
    msg = f"waiver for {w.rule} on '{w.subject}' expired on {w.expires.isoformat()} ({w.reason})"
    return Finding(EXPIRED_ID, "error", (w.rule, w.subject), msg, w.location), _fingerprint(EXPIRED_ID, w)


def unused_finding(w: Waiver, known_rules: set[str]) -> tuple[Finding, str]:
    why = "no finding" if w.rule in known_rules else f"nothing: no check {w.rule} was run"
    msg = f"waiver for {w.rule} on '{w.subject}' matches {why}"
    return Finding(UNUSED_ID, "warning", (w.rule, w.subject), msg, w.location), _fingerprint(UNUSED_ID, w)


def _fingerprint(check_id: str, w: Waiver) -> str:
    return fingerprint(check_id, (w.rule, w.subject), (("expires", w.expires.isoformat()),))


def missing_file_error(path: Path) -> TopologError:
    return TopologError.at(SourceLocation(str(path)), "no such waivers file")
