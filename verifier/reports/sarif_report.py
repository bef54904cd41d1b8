"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

One run; `tool.driver.rules` carries each check's id, summary and remediation. Each
result points at the inventory file:line of its finding, named relative to the top of
the git work tree (`uriBaseId` `%SRCROOT%`, see RepoPaths), which is how code scanning
resolves it whatever folder of the checkout topolog ran in. `partialFingerprints` carries
topolog's fingerprint (rule id, subjects and quoted values, hashed; no line number), so
alerts follow a finding across line moves and two findings written on one template line
stay two alerts. A finding's proof travels as `properties.proof` (the JSON report's
tree) and as a `codeFlows` thread through the rule and inventory lines that derived it.
A waived finding is kept with a `suppressions` entry rather than dropped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from urllib.parse import quote

from verifier.checks.baseline import FINGERPRINT_KEY
from verifier.checks.findings import Severity
from verifier.checks.settings import RunSettings
from verifier.checks.verify import Result, VerifyReport
from verifier.core.errors import SourceLocation
from verifier.core.version import __version__
from verifier.engine.backend import Locator, Proof, format_fact
from verifier.reports.json_report import settings_doc

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVELS: dict[Severity, str] = {"error": "error", "warning": "warning", "note": "note"}
SRCROOT = "%SRCROOT%"


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


class _Results:
    """Builds result objects; holds what every result of one report shares."""

    def __init__(self, report: VerifyReport, locate: Locator | None) -> None:
        self.paths = RepoPaths()
        self.locate = locate
        self.rule_index = {c.id: i for i, c in enumerate(report.checks)}
        self.fallback = SourceLocation(report.inventories[0] if report.inventories else "", 1)

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

    def flow_steps(self, proof: Proof) -> list[dict[str, object]]:
        """The proof's facts that have a place, premises before what they support, each fact once.

        Rule instances sit at their rule's line; input facts at their inventory line when a
        locator was given. Facts without a place stay in `properties.proof` only: a viewer
        cannot show a step that points nowhere.
        """
        steps: list[dict[str, object]] = []
        seen: set[str] = set()

        def visit(p: Proof) -> None:
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
            if where is not None and where.file:
                steps.append({"location": self.location(where, text)})

        visit(proof)
        return steps

    def result(self, r: Result) -> dict[str, object]:
        f = r.finding
        # Code scanning needs a location on every result; a finding without one points at the inventory.
        where = f.location or self.fallback
        props: dict[str, object] = {"subjects": list(f.subjects)}
        if f.proof is not None:
            props["proof"] = f.proof.to_dict(self.locate)
        out: dict[str, object] = {
            "ruleId": f.rule,
            "level": LEVELS[f.severity],
            "message": {"text": f"{f.message} [{', '.join(f.subjects)}]"},
            "locations": [self.location(where)],
            "partialFingerprints": {FINGERPRINT_KEY: r.fingerprint},
            "properties": props,
        }
        if f.proof is not None:
            # The thread ends where the finding is reported, so a viewer walks from causes to result.
            steps = [*self.flow_steps(f.proof), {"location": self.location(where, f"{f.rule} reports: {f.message}")}]
            out["codeFlows"] = [{"threadFlows": [{"locations": steps}]}]
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


def _invocation(settings: RunSettings) -> dict[str, object]:
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
    return {
        "executionSuccessful": True,
        "toolConfigurationNotifications": notes,
        "properties": {"configuration": settings_doc(settings)},
    }


def render(report: VerifyReport, locate: Locator | None = None) -> str:
    """The SARIF log. `locate` places a proof's input facts (verifier.checks.explain.leaf_locator);
    without it only the rule steps of a proof get a place in `codeFlows`.
    """
    rules = [
        {
            "id": c.id,
            "shortDescription": {"text": c.summary},
            "fullDescription": {"text": c.summary},
            "help": {
                "text": f"Remediation: {c.remediation}",
                "markdown": f"**Remediation:** {c.remediation}\n\nDefined in `{c.file}`.",
            },
            "defaultConfiguration": {"level": LEVELS[c.severity]},
            "properties": {"tags": ["topolog", "infrastructure"], "file": c.file},
        }
        for c in report.checks
    ]
    results = _Results(report, locate)
    run: dict[str, object] = {
        "tool": {
            "driver": {
                "name": "topolog",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": rules,
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": [results.result(r) for r in report.results],
    }
    if not report.settings.empty:
        run["invocations"] = [_invocation(report.settings)]
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
