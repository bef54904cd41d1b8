"""Fingerprints of findings, and baseline files of them.

A fingerprint names a finding independently of where it was written: the rule id, the
sorted subject ids and the values its message quotes (not the message wording, not
file names or line numbers). Moving an object to another line, renaming the inventory
file or rewording a rule's message keeps its fingerprint; changing what the finding
says (another bandwidth, another domain count) makes a new one. SARIF
`partialFingerprints` and baselines use the same value.

A baseline is a JSON file of the fingerprints present when a team adopted topolog on an
existing fleet: `verify --baseline` reports only findings whose fingerprint is not in it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from verifier.checks.findings import Finding
from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.limits import current_limits, read_limited
from verifier.sources.inventory.yaml_source import YList, YMap, decode_utf8, load_yaml_text

BASELINE_VERSION = 1
FINGERPRINT_KEY = "topolog/v1"
"""The key of topolog's value in SARIF `partialFingerprints`; bump the suffix if the recipe changes."""


def fingerprint(rule: str, subjects: Iterable[str], values: Iterable[tuple[str, str]] = ()) -> str:
    """128 bits of SHA-256 over rule, sorted subjects and (name, value) pairs; stable across machines."""
    doc = json.dumps([rule, sorted(subjects), sorted(values)], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(doc.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, repr=False, eq=False)
class Baseline(Frozen):
    path: str
    fingerprints: frozenset[str]


def baseline_text(entries: Sequence[tuple[Finding, str]]) -> str:
    """The baseline of (finding, fingerprint) pairs; rule, subjects and message are there for reviewers only."""
    rows = sorted(
        {
            fp: {"fingerprint": fp, "rule": f.rule, "subjects": list(f.subjects), "message": f.message}
            for f, fp in entries
        }.values(),
        key=lambda r: (str(r["rule"]), list(r["subjects"]), str(r["fingerprint"])),
    )
    doc = {"schemaVersion": BASELINE_VERSION, "tool": "topolog", "findings": rows}
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


_FINGERPRINT = re.compile(r"[0-9a-f]{32}")
"""What `fingerprint()` writes: 128 bits as hex."""


BASELINE_FILE = "a baseline written by `topolog verify --write-baseline`"


def expected_baseline() -> str:
    return f"expected {BASELINE_FILE}"


def load_baseline(path: Path) -> Baseline:
    """Read a baseline; TopologError with file:line on anything but what write_baseline writes."""
    name = str(path)
    text = decode_utf8(read_limited(path, name, "baseline"), name)
    try:
        json.loads(text)
    except json.JSONDecodeError as err:
        raise TopologError.at(SourceLocation(name, err.lineno, err.colno), f"not valid JSON: {err.msg}") from None
    except ValueError:  # an integer of more digits than Python converts (4,300)
        raise TopologError.at(
            SourceLocation(name, 1, 1),
            f"not valid JSON: a number has more digits than can be read; {expected_baseline()}",
        ) from None
    except RecursionError:
        # json's parser recurses per level; the YAML reader below would refuse the depth anyway.
        raise TopologError.at(
            SourceLocation(name, 1, 1),
            f"JSON nested deeper than it can be read; expected at most nesting_depth = "
            f"{current_limits().nesting_depth} levels ({expected_baseline()})",
        ) from None
    # Valid JSON is valid YAML; the YAML loader keeps the line of every entry for the errors below.
    doc = load_yaml_text(text, name, BASELINE_FILE)
    problems: list[Diagnostic] = []
    expected = expected_baseline()
    version = doc.get("schemaVersion")
    if type(version) is not int or version != BASELINE_VERSION:  # `true` == 1 in Python, not here
        problems.append(
            Diagnostic(
                doc.key_loc("schemaVersion"),
                f"schemaVersion {doc.get('schemaVersion')!r} is not {BASELINE_VERSION}; {expected}",
            )
        )
    rows = doc.get("findings")
    fps: set[str] = set()
    if not isinstance(rows, YList):
        problems.append(Diagnostic(doc.key_loc("findings"), f"'findings' must be a list; {expected}"))
    else:
        for i, row in enumerate(rows):
            fp = row.get("fingerprint") if isinstance(row, YMap) else None
            if not isinstance(fp, str) or not fp:
                problems.append(Diagnostic(rows.item_loc(i), f"entry without a 'fingerprint' string; {expected}"))
            elif _FINGERPRINT.fullmatch(fp) is None:
                assert isinstance(row, YMap)
                problems.append(
                    Diagnostic(
                        row.key_loc("fingerprint"),
                        f"fingerprint {fp!r} is not 32 lowercase hexadecimal digits; {expected}",
                    )
                )
            else:
                fps.add(fp)
    if problems:
        raise TopologError(problems)
    return Baseline(name, frozenset(fps))
