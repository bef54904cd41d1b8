"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; `tool.driver.rules` carries each check's id, summary and remediation. Each
result points at the inventory file:line of its finding, named relative to the top of
the git work tree (`uriBaseId` `%SRCROOT%`, see RepoPaths), which is how code scanning
resolves it whatever folder of the checkout topolog ran in. `partialFingerprints` carries
topolog's fingerprint (rule id, subjects and quoted values, hashed; no line number) and
`primaryLocationLineHash`, the value GitHub's upload action would compute for the line,
salted with that fingerprint (verifier/reports/sarif_fingerprints.py): GitHub matches alerts
by it, and two findings written on one template line stay two alerts.

A finding's proof travels as `properties.proof` and as a `codeFlows` thread through the rule
and inventory lines that derived it. Steps are named only in files of the repository (a
code scanning viewer can open nothing else); the shipped rule pack of an installed topolog,
which lies outside it, is named by the base id TOPOLOG_RULES and its path inside the pack,
never by a site-packages path. A waived finding is kept with a `suppressions` entry rather
than dropped.

GitHub's limits (docs.github.com, "SARIF results exceed one or more limits") are kept: at
most 25,000 results per run (the most severe kept, the count left out said in a tool
notification and `properties.resultsLeftOut`; the JSON report has them all), 10,000 thread
flow locations per result (1,000 shown, so a thread keeps at most 1,000), and a budget for
proof trees so that a large fleet's log stays under the upload's size limit.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path, PurePath
from urllib.parse import quote

from verifier.checks.baseline import FINGERPRINT_KEY
from verifier.checks.findings import Severity
from verifier.checks.settings import RunSettings
from verifier.checks.verify import Result, VerifyReport
from verifier.core.errors import SourceLocation
from verifier.core.resources import shipped_rules_dir
from verifier.core.version import __version__
from verifier.engine.backend import Locator, Proof, format_fact
from verifier.reports import indented_json
from verifier.reports.json_report import settings_doc
from verifier.reports.sarif_fingerprints import LineHashes, salted

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS: dict[Severity, str] = {"error": "error", "warning": "warning", "note": "note"}
SRCROOT = "%SRCROOT%"
RULES_BASE = "TOPOLOG_RULES"
"""uriBaseId of the shipped rule pack when it lies outside the repository (an installed topolog)."""
LINE_HASH_KEY = "primaryLocationLineHash"
MAX_RESULTS = 25_000
"""Results per run GitHub code scanning accepts; a run with more is rejected whole."""
MAX_FLOW_STEPS = 1_000
"""Thread flow locations per result GitHub shows (it accepts 10,000)."""
PROOF_FACTS = 200
"""Facts one result's `properties.proof` tree holds at most."""
PROOF_BUDGET = 4_000_000
"""Characters of proof trees one log holds; past it results carry no tree (the JSON report has them).
Uncompressed: with the rest of a large fleet's log this keeps the gzip upload well under GitHub's 10 MB."""
_SEVERITY_ORDER: dict[Severity, int] = {"error": 0, "warning": 1, "note": 2}


class RepoPaths:
    """Names files as code scanning and annotations resolve them: from the top of the git work
    tree, found by walking up to a `.git` (a folder, or a file in worktrees and submodules)
    rather than by running git. One instance per report, so each folder is walked once.

    The work tree is the one topolog runs in, when it runs in one: that is the checkout CI
    uploads for, and it also holds the inventories of any submodule inside it. Run from
    outside every work tree, each file is named from the work tree that holds it, else from
    the current folder.
    """

    def __init__(self) -> None:
        self._cwd = os.getcwd()
        self._tops: dict[str, str | None] = {}

    def _top(self, folder: str) -> str | None:
        if folder not in self._tops:
            parent = os.path.dirname(folder)
            if os.path.exists(os.path.join(folder, ".git")):
                self._tops[folder] = folder
            else:
                self._tops[folder] = None if parent == folder else self._top(parent)
        return self._tops[folder]

    def relative(self, file: str) -> str | None:
        """`file` as a POSIX path from the root described above; None when it lies outside it.

        Symlinks are kept (abspath, not resolve), so a checkout reached through a link names
        its files as the repository does.
        """
        absolute = os.path.abspath(os.path.join(self._cwd, file))
        base = self._top(self._cwd) or self._top(os.path.dirname(absolute)) or self._cwd
        if not absolute.startswith(base.rstrip(os.sep) + os.sep):
            return None
        return PurePath(os.path.relpath(absolute, base)).as_posix()

    def artifact(self, file: str) -> dict[str, object]:
        """A SARIF artifactLocation: relative to %SRCROOT% where possible, else a file URI."""
        relative = self.relative(file)
        if relative is not None:
            return {"uri": quote(relative), "uriBaseId": SRCROOT}
        return {"uri": Path(os.path.abspath(os.path.join(self._cwd, file))).as_uri()}

    def absolute(self, file: str) -> str:
        """`file` as the absolute path the run read."""
        return os.path.abspath(os.path.join(self._cwd, file))


class _ShippedRules:
    """Names a file of the shipped rule pack by its place inside the pack, wherever it is installed."""

    def __init__(self) -> None:
        self._root = os.path.abspath(shipped_rules_dir()) + os.sep

    def relative(self, file: str) -> str | None:
        absolute = os.path.abspath(file)
        if not absolute.startswith(self._root):
            return None
        return PurePath(absolute[len(self._root) :]).as_posix()


class _Results:
    """Builds result objects; holds what every result of one report shares."""

    def __init__(self, report: VerifyReport, locate: Locator | None) -> None:
        self.paths = RepoPaths()
        self.shipped = _ShippedRules()
        self.hashes = LineHashes()
        self.locate = locate
        self.rule_index = {c.id: i for i, c in enumerate(report.checks)}
        self.fallback = SourceLocation(report.inventories[0] if report.inventories else "", 1)
        self.proof_budget = PROOF_BUDGET
        self.proofs_left_out = 0

    def location(self, loc: SourceLocation, message: str | None = None) -> dict[str, object]:
        physical: dict[str, object] = {"artifactLocation": self.paths.artifact(loc.file)}
        if loc.line > 0:
            region: dict[str, int] = {"startLine": loc.line}
            if loc.col > 0:
                region["startColumn"] = loc.col
            physical["region"] = region
        out: dict[str, object] = {"physicalLocation": physical}
        if message is not None:
            out["message"] = {"text": message}
        return out

    def place(self, loc: SourceLocation) -> dict[str, object] | None:
        """Where a proof step was written: a repository file, or a file of the shipped pack by its
        place in the pack; None for anything else (a path outside both would name one machine's disk).
        """
        relative = self.paths.relative(loc.file) if loc.file else None
        if relative is not None:
            out: dict[str, object] = {"uri": quote(relative), "uriBaseId": SRCROOT}
        else:
            in_pack = self.shipped.relative(loc.file) if loc.file else None
            if in_pack is None:
                return None
            out = {"uri": quote(in_pack), "uriBaseId": RULES_BASE}
        if loc.line > 0:
            out["line"] = loc.line
            if loc.col > 0:
                out["column"] = loc.col
        return out

    def flow_steps(self, proof: Proof) -> tuple[list[dict[str, object]], int]:
        """The proof's facts written in repository files, premises before what they support, each
        fact once, at most MAX_FLOW_STEPS - 1 of them (the thread's last step is the finding);
        and how many more there were.

        Rule instances sit at their rule's line; input facts at their inventory line when a
        locator was given. Facts without a place in the repository stay in `properties.proof`
        only: a viewer cannot show a step that points nowhere or outside the repository.
        """
        steps: list[dict[str, object]] = []
        seen: set[str] = set()
        left_out = 0

        def visit(p: Proof) -> None:
            nonlocal left_out
            for premise in p.premises:
                visit(premise)
            if p.fact in seen:
                return
            seen.add(p.fact)
            where: SourceLocation | None
            if p.rule is None:
                where = self.locate(p) if self.locate is not None else None
                text = f"{p.fact} is an input fact"
            else:
                where = p.rule.loc
                text = f"{p.fact} follows by this rule"
                if p.absent:
                    text += "; absent: " + ", ".join(format_fact(rel, row) for rel, row in p.absent)
            if where is None or not where.file or self.paths.relative(where.file) is None:
                return
            if len(steps) < MAX_FLOW_STEPS - 1:
                steps.append({"location": self.location(where, text)})
            else:
                left_out += 1

        visit(proof)
        return steps, left_out

    def proof_doc(self, proof: Proof) -> tuple[dict[str, object], int]:
        """The proof tree with each step's place (see `place`), at most PROOF_FACTS facts; and how
        many facts were left out past that.
        """
        room = PROOF_FACTS
        left_out = 0

        def doc(p: Proof) -> dict[str, object] | None:
            nonlocal room, left_out
            if room == 0:
                left_out += 1 + sum(1 for _ in _facts_below(p))
                return None
            room -= 1
            out: dict[str, object] = {"fact": p.fact}
            if p.rule is None:
                out["input"] = True
                if self.locate is not None:
                    loc = self.locate(p)
                    out["location"] = None if loc is None else self.place(loc)
                return out
            out["rule"] = str(p.rule)
            out["at"] = self.place(p.rule.loc)
            premises = [d for d in (doc(q) for q in p.premises) if d is not None]
            out["premises"] = premises
            if p.absent:
                out["absent"] = [format_fact(r, row) for r, row in p.absent]
            return out

        tree = doc(proof)
        assert tree is not None  # the root is always within PROOF_FACTS (> 0)
        return tree, left_out

    def result(self, r: Result) -> dict[str, object]:
        f = r.finding
        # Code scanning needs a location on every result; a finding without one points at the inventory.
        where = f.location or self.fallback
        props: dict[str, object] = {"subjects": list(f.subjects)}
        if f.proof is not None:
            tree, facts_left_out = self.proof_doc(f.proof)
            size = len(json.dumps(tree, ensure_ascii=False))
            if size <= self.proof_budget:
                self.proof_budget -= size
                props["proof"] = tree
                if facts_left_out:
                    props["proofFactsLeftOut"] = facts_left_out
            else:
                self.proofs_left_out += 1
                props["proofLeftOut"] = "the proof budget of this log is spent; the JSON report has the proof"
        fingerprints: dict[str, str] = {FINGERPRINT_KEY: r.fingerprint}
        if where.line > 0 and self.paths.relative(where.file) is not None:
            line_value = self.hashes.of(self.paths.absolute(where.file), where.line)
            if line_value is not None:
                fingerprints[LINE_HASH_KEY] = salted(line_value, r.fingerprint)
        out: dict[str, object] = {
            "ruleId": f.rule,
            "level": LEVELS[f.severity],
            "message": {"text": f"{f.message} [{', '.join(f.subjects)}]"},
            "locations": [self.location(where)],
            "partialFingerprints": fingerprints,
            "properties": props,
        }
        if f.proof is not None:
            # The thread ends where the finding is reported, so a viewer walks from causes to result.
            steps, steps_left_out = self.flow_steps(f.proof)
            steps.append({"location": self.location(where, f"{f.rule} reports: {f.message}")})
            out["codeFlows"] = [{"threadFlows": [{"locations": steps}]}]
            if steps_left_out:
                props["codeFlowStepsLeftOut"] = steps_left_out
        if f.rule in self.rule_index:
            out["ruleIndex"] = self.rule_index[f.rule]
        if r.waiver is not None:
            w = r.waiver
            out["suppressions"] = [
                {
                    "kind": "external",
                    "status": "accepted",
                    "justification": f"{w.reason} (waived until {w.expires.isoformat()})",
                    "location": self.location(w.location),
                }
            ]
        return out


def _facts_below(p: Proof) -> Iterator[Proof]:
    for q in p.premises:
        yield q
        yield from _facts_below(q)


def kept_results(report: VerifyReport) -> tuple[list[Result], int]:
    """The results one run may hold (at most MAX_RESULTS, the most severe first, waived ones last,
    report order within each), in report order; and how many were left out.
    """
    if len(report.results) <= MAX_RESULTS:
        return list(report.results), 0
    ranked = sorted(
        range(len(report.results)),
        key=lambda i: (report.results[i].waiver is not None, _SEVERITY_ORDER[report.results[i].finding.severity], i),
    )
    keep = sorted(ranked[:MAX_RESULTS])
    return [report.results[i] for i in keep], len(report.results) - MAX_RESULTS


def left_out_line(report: VerifyReport) -> str | None:
    """The sentence that says how many results a SARIF log of `report` leaves out, if any."""
    _kept, left_out = kept_results(report)
    if not left_out:
        return None
    return (
        f"topolog: the SARIF log holds {MAX_RESULTS:,} of {len(report.results):,} results "
        f"(errors first); {left_out:,} left out, as GitHub code scanning rejects a run with more than "
        f"{MAX_RESULTS:,}. The JSON report (--output json=FILE) has every finding."
    )


def _invocation(settings: RunSettings, problems: list[str]) -> dict[str, object]:
    """What shaped the run as SARIF says it: one toolConfigurationNotification per sentence of
    verifier.checks.settings (a warning for checks a configuration left out), each at the
    configuration file's line where it has one, and the JSON report's `configuration` object
    as the invocation's properties.
    """
    paths = RepoPaths()
    notes: list[dict[str, object]] = []

    def note(text: str | None, level: str, where: SourceLocation | None) -> None:
        if text is None:
            return
        out: dict[str, object] = {"message": {"text": text}, "level": level}
        if where is not None:
            region = {"startLine": where.line} if where.line else {}
            physical = {"artifactLocation": paths.artifact(where.file), **({"region": region} if region else {})}
            out["locations"] = [{"physicalLocation": physical}]
        notes.append(out)

    file_at = SourceLocation(settings.config_file) if settings.config_file is not None else None
    note(settings.config_line(), "note", file_at)
    note(settings.checks_line(), "warning", file_at)
    note(settings.date_line(), "note", None)
    out: dict[str, object] = {"executionSuccessful": True}
    if notes:
        out["toolConfigurationNotifications"] = notes
    if problems:
        # What this log leaves out to fit GitHub's limits: said where code scanning shows the tool's state.
        out["toolExecutionNotifications"] = [{"message": {"text": p}, "level": "warning"} for p in problems]
    if not settings.empty:
        out["properties"] = {"configuration": settings_doc(settings)}
    return out


def _rule_file(results: _Results, file: str) -> str:
    """A check's file as the log names it: from the repository's top, else inside the shipped pack."""
    relative = results.paths.relative(file)
    if relative is not None:
        return relative
    in_pack = results.shipped.relative(file)
    return f"{RULES_BASE}/{in_pack}" if in_pack is not None else file


def _semantic(version: str) -> bool:
    parts = version.split(".")
    return len(parts) == 3 and all(p.isdigit() for p in parts)


def render(report: VerifyReport, locate: Locator | None = None) -> str:
    """The SARIF log. `locate` places a proof's input facts (verifier.checks.explain.leaf_locator);
    without it only the rule steps of a proof get a place in `codeFlows`.
    """
    results = _Results(report, locate)
    rules = []
    for c in report.checks:
        file = _rule_file(results, c.file)
        rules.append(
            {
                "id": c.id,
                "shortDescription": {"text": c.summary},
                "fullDescription": {"text": c.summary},
                "help": {
                    "text": f"Remediation: {c.remediation}",
                    "markdown": f"**Remediation:** {c.remediation}\n\nDefined in `{file}`.",
                },
                "defaultConfiguration": {"level": LEVELS[c.severity]},
                "properties": {"tags": ["topolog", "infrastructure"], "file": file},
            }
        )
    kept, left_out = kept_results(report)
    driver: dict[str, object] = {"name": "topolog", "version": __version__}
    if _semantic(__version__):  # a release; a build past one (0.3.1.dev4+g...) is no semantic version
        driver["semanticVersion"] = __version__
    driver["rules"] = rules
    run: dict[str, object] = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {
            RULES_BASE: {"description": {"text": f"topolog {__version__}'s shipped rule pack (`topolog rules --path`)"}}
        },
        "columnKind": "unicodeCodePoints",
        "results": [results.result(r) for r in kept],
    }
    problems = []
    line = left_out_line(report)
    if line is not None:
        problems.append(line)
        run["properties"] = {"resultsLeftOut": left_out, "resultsInReport": len(report.results)}
    if results.proofs_left_out:
        problems.append(
            f"topolog: {results.proofs_left_out:,} results carry no proof tree: the log's proof budget "
            f"({PROOF_BUDGET:,} characters) is spent. The JSON report has every proof."
        )
    if problems or not report.settings.empty:
        run["invocations"] = [_invocation(report.settings, problems)]
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    # json.dumps's text, written by the C encoder (any indent makes json.dumps encode in Python).
    return indented_json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
