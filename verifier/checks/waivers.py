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
surface instead of silently waiving whatever comes next. A waiver naming a rule id that
no check has (a typo: `TOPO03`) is bad input, exit 2 with a did-you-mean: it could never
match, and a warning would let the finding it was meant for fail the build unexplained.
A rule of topolog's own pack that this run did not load (`--rules` chose others) is
known, and its waiver is only unused.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import date
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

from verifier.checks.baseline import fingerprint
from verifier.checks.check import Check
from verifier.checks.findings import Finding
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.resources import shipped_rules_dir
from verifier.sources.inventory.validate import Problems
from verifier.sources.inventory.yaml_source import YMap, load_yaml_file

DEFAULT_WAIVERS = "topolog.waivers.yaml"
WAIVER_KEYS = ("rule", "subject", "reason", "expires")
_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")

EXPIRED_ID = "WAIVER001"
UNUSED_ID = "WAIVER002"


@dataclass(frozen=True, repr=False, eq=False)
class Waiver(Frozen):
    rule: str
    subject: str
    reason: str
    expires: date
    location: SourceLocation
    rule_location: SourceLocation | None = field(default=None, compare=False)
    """Where the rule id itself is written (the `rule:` value), for errors about it."""

    def matches(self, finding: Finding) -> bool:
        # fnmatchcase: ids are case-sensitive and must match the same on every platform.
        return finding.rule == self.rule and any(fnmatchcase(s, self.subject) for s in finding.subjects)

    def expired(self, today: date) -> bool:
        """A waiver holds through its expiry date and lapses the day after."""
        return today > self.expires


@dataclass(frozen=True, repr=False, eq=False)
class WaiverFile(Frozen):
    path: str
    waivers: tuple[Waiver, ...]


def parse_date(text: str) -> date:
    """YYYY-MM-DD only (date.fromisoformat also takes week dates and the like); ValueError otherwise."""
    if not _DATE.match(text):
        raise ValueError(f"{text!r} is not a date written as YYYY-MM-DD")
    return date.fromisoformat(text)


def load_waivers(path: Path) -> WaiverFile:
    """Parse and check a waivers file; TopologError lists every problem with file:line:col."""
    doc = load_yaml_file(path, expected="a waivers file with a 'waivers' list")
    problems = Problems()
    problems.keys(doc, ("apiVersion", "waivers"), "the waivers file", required=("waivers",))
    items = problems.seq(doc, "waivers", "the waivers file")
    waivers: list[Waiver] = []
    for i, item in enumerate(items or []):
        what = f"waiver {i + 1}"
        if not isinstance(item, YMap):
            problems.add(
                items.item_loc(i) if items is not None else doc.loc,
                f"{what} must be a mapping with keys {', '.join(WAIVER_KEYS)}",
            )
            continue
        problems.keys(item, WAIVER_KEYS, what, required=WAIVER_KEYS, one_per_typo=True)
        for key in WAIVER_KEYS:
            if key in item and item.get(key) is None:  # `reason:` or `reason: null` says nothing
                problems.add(item.key_loc(key), f"'{key}' in {what} is empty; expected a value for every key")
        rule, subject, expires = (problems.text(item, k, what) for k in ("rule", "subject", "expires"))
        # A reason may be a folded or literal YAML block; its line breaks become spaces, so
        # a reason can never start a report line of its own (or a GitHub workflow command).
        reason = problems.text(item, "reason", what, multiline=True)
        when = _read_expiry(item, expires, what, problems)
        if rule and subject and reason and when is not None:
            waivers.append(Waiver(rule, subject, " ".join(reason.split()), when, item.loc, item.key_loc("rule")))
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
        Check.without_rule(
            EXPIRED_ID,
            "error",
            "A waiver has expired, so the findings it covered count again.",
            "Fix the waived findings, or renew the waiver with a new expiry date and a current reason.",
            waivers.path,
        ),
        Check.without_rule(
            UNUSED_ID,
            "warning",
            "A waiver matches no finding.",
            "Remove the waiver (the finding it covered is gone) or correct its rule id or subject pattern.",
            waivers.path,
        ),
    ]


def expired_finding(w: Waiver) -> tuple[Finding, str]:
    msg = f"waiver for {w.rule} on '{w.subject}' expired on {w.expires.isoformat()} ({w.reason})"
    return Finding(EXPIRED_ID, "error", (w.rule, w.subject), msg, w.location), _fingerprint(EXPIRED_ID, w)


_CHECK_ID = re.compile(r"^\s*(?:#|//)\s*@id:\s*(\S+)", re.MULTILINE)


@lru_cache(maxsize=1)
def shipped_check_ids() -> frozenset[str]:
    """The check ids of topolog's own rule pack, read from the `@id:` lines of its files.

    Only the metadata lines are read (no parsing of rules): it only tells a rule that
    exists but was not loaded from one that does not exist at all.
    """
    try:
        root = shipped_rules_dir()
    except TopologError:  # a zipped install: only the rules of the run are known
        return frozenset()
    ids: set[str] = set()
    for path in sorted(root.rglob("*.dl")):
        try:
            ids.update(_CHECK_ID.findall(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return frozenset(ids)


def check_rule_ids(waivers: WaiverFile, check_ids: Collection[str]) -> None:
    """Refuse waivers that name a rule id no check has; TopologError lists each at its file:line:col.

    `check_ids` are the checks of this run; the shipped pack's ids are known too (see the
    module docstring).
    """
    known = set(check_ids) | shipped_check_ids()
    problems = Problems()
    for w in waivers.waivers:
        if w.rule in known:
            continue
        loc = w.rule_location or w.location
        if w.rule in (EXPIRED_ID, UNUSED_ID):
            problems.add(
                loc,
                f"waiver names {w.rule}, a finding about waivers, which cannot itself be waived; "
                "expected the id of a check (fix or remove the waiver it reports instead)",
            )
            continue
        problems.add(
            loc,
            f"waiver names rule {w.rule!r}, which no check has; expected the id of a check "
            f"('topolog rules' lists them){_rule_hint(w.rule, known)}",
        )
    problems.raise_if_any()


def _rule_hint(rule: str, known: Collection[str]) -> str:
    for k in sorted(known):
        if k.upper() == rule.upper().replace(" ", ""):
            return f"; did you mean {k!r}?"
    match = difflib.get_close_matches(rule.upper(), sorted(known), n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def unused_finding(w: Waiver, known_rules: set[str]) -> tuple[Finding, str]:
    why = "no finding" if w.rule in known_rules else f"nothing: no check {w.rule} was run"
    msg = f"waiver for {w.rule} on '{w.subject}' matches {why}"
    return Finding(UNUSED_ID, "warning", (w.rule, w.subject), msg, w.location), _fingerprint(UNUSED_ID, w)


def _fingerprint(check_id: str, w: Waiver) -> str:
    return fingerprint(check_id, (w.rule, w.subject), (("expires", w.expires.isoformat()),))


def missing_file_error(path: Path) -> TopologError:
    return TopologError.at(SourceLocation(str(path)), "no such waivers file")
