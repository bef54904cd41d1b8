"""`topolog diff`: what a change to an inventory does.

Both sides are loaded and evaluated with the same rules. Findings are matched by
fingerprint (so a finding that merely moved lines is neither added nor resolved), and a
declared list of watched derived relations is compared row by row. Only relations that
rules actually derive are compared: a figure no rule derives is never shown.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from verifier import __version__
from verifier.checks.findings import Severity, fails
from verifier.checks.verify import Result, collect_results
from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.progress import Progress
from verifier.engine.ast import Program, Row
from verifier.engine.backend import format_fact
from verifier.session.model import load_model, load_rules
from verifier.sources.inventory.validate import did_you_mean

WATCHED = ("nvlink_domain", "node_domain_count", "permitted")
"""Relations compared by default, when the rules declare them: NVLink domains, per-node domain
counts, and the authorization decisions (`permitted`, present when a principals file is found)."""
PRINCIPALS_FILE = "principals.yml"
"""Read at the revision too, next to the first inventory, so both sides authorize alike."""
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RelationChange:
    relation: str
    columns: tuple[str, ...]
    added: list[Row]
    removed: list[Row]


@dataclass
class DiffReport:
    old: tuple[str, ...]
    new: tuple[str, ...]
    added: list[Result]
    resolved: list[Result]
    relations: list[RelationChange]
    fail_on: Severity

    @property
    def failed(self) -> bool:
        """Only findings the change adds count: a change is not blamed for what it inherited."""
        return fails((r.finding for r in self.added), self.fail_on)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


@dataclass(frozen=True)
class _Side:
    results: list[Result]
    rows: dict[str, list[Row]]


def watched_relations(program: Program, extra: Sequence[str]) -> list[str]:
    """The default watch list (those the rules declare) plus `--relation` names, which must exist."""
    problems = [
        Diagnostic(
            SourceLocation("--relation"),
            f"relation {name!r} is not declared by the rules{did_you_mean(name, program.relations)}",
        )
        for name in extra
        if name not in program.relations
    ]
    if problems:
        raise TopologError(problems)
    return sorted({*(r for r in WATCHED if r in program.relations), *extra})


def _evaluate(
    paths: Sequence[Path], program: Program, engine: str, relations: Sequence[str], progress: Progress | None
) -> _Side:
    # also_read: a watched input relation that no rule reads would otherwise not be loaded at all.
    model = load_model(paths, None, engine, progress, program=program, also_read=relations)
    try:
        results, _ = collect_results(model, with_proofs=False)
        rows = {rel: sorted(model.engine.query(rel)) for rel in relations}
    finally:
        model.engine.close()
    return _Side(results, rows)


def diff(
    old_paths: Sequence[Path],
    new_paths: Sequence[Path],
    rules_paths: Sequence[Path] | None = None,
    engine: str = "duckdb",
    extra_relations: Sequence[str] = (),
    fail_on: Severity = "error",
    labels: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> DiffReport:
    """Compare two inventories. `labels` renames old-side files (temporary copies) in everything reported."""
    labels = labels or {}
    program = load_rules(rules_paths)
    relations = watched_relations(program, extra_relations)
    try:
        old = _evaluate(old_paths, program, engine, relations, progress)
    except TopologError as err:
        raise TopologError(replace(d, location=_relabel(d.location, labels)) for d in err.diagnostics) from None
    new = _evaluate(new_paths, program, engine, relations, progress)
    old_fps = {r.fingerprint for r in old.results}
    new_fps = {r.fingerprint for r in new.results}
    resolved = [
        replace(r, finding=replace(r.finding, location=_relabel(r.finding.location, labels)))
        if r.finding.location is not None
        else r
        for r in old.results
        if r.fingerprint not in new_fps
    ]
    changes = []
    for rel in relations:
        before, after = set(old.rows[rel]), set(new.rows[rel])
        columns = tuple(c.name for c in program.relations[rel].columns)
        changes.append(RelationChange(rel, columns, sorted(after - before), sorted(before - after)))
    return DiffReport(
        old=tuple(labels.get(str(p), str(p)) for p in old_paths),
        new=tuple(str(p) for p in new_paths),
        added=[r for r in new.results if r.fingerprint not in old_fps],
        resolved=resolved,
        relations=changes,
        fail_on=fail_on,
    )


def _relabel(loc: SourceLocation, labels: Mapping[str, str]) -> SourceLocation:
    return replace(loc, file=labels[loc.file]) if loc.file in labels else loc


@contextmanager
def files_at_revision(paths: Sequence[Path], rev: str) -> Iterator[tuple[list[Path], dict[str, str]]]:
    """Each file as committed at `rev` (`git show`), in a temporary directory under its own name.

    Yields the copies and labels mapping each copy to `REV:path`, so reports name the
    revision rather than a temporary directory.
    """
    with tempfile.TemporaryDirectory(prefix="topolog-diff-") as tmp:
        copies: list[Path] = []
        labels: dict[str, str] = {}
        for i, path in enumerate(paths):
            # One directory per file keeps two files of the same name from overwriting each other.
            copy = Path(tmp) / str(i) / path.name
            copy.parent.mkdir()
            copy.write_bytes(_git_show(path, rev))
            copies.append(copy)
            labels[str(copy)] = f"{rev}:{path}"
        if paths:
            principals = paths[0].parent / PRINCIPALS_FILE
            try:
                (copies[0].parent / PRINCIPALS_FILE).write_bytes(_git_show(principals, rev))
                labels[str(copies[0].parent / PRINCIPALS_FILE)] = f"{rev}:{principals}"
            except TopologError:
                pass  # no principals file at that revision: that side has no authorization facts
        yield copies, labels


def _git_show(path: Path, rev: str) -> bytes:
    where = SourceLocation(str(path))
    if rev.startswith("-"):
        raise TopologError.at(where, f"revision {rev!r} looks like an option; expected a branch, tag or commit")
    directory = path.parent if str(path.parent) else Path(".")
    try:
        # `REV:./name` is resolved against the working directory given by -C, wherever the repository root is.
        done = subprocess.run(
            ["git", "-C", str(directory), "show", f"{rev}:./{path.name}"],
            capture_output=True,
            check=False,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise TopologError.at(where, f"cannot run git to read it at {rev}: {err}") from None
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise TopologError.at(where, f"cannot read it at revision {rev}: {reason[0] if reason else 'git show failed'}")
    return done.stdout


def render_text(report: DiffReport) -> str:
    from verifier.reports.text_report import finding_line

    lines = [f"comparing {', '.join(report.old)} -> {', '.join(report.new)}"]
    lines.append(f"findings added ({len(report.added)}):")
    lines.extend(f"  + {finding_line(r.finding)}" for r in report.added)
    lines.append(f"findings resolved ({len(report.resolved)}):")
    lines.extend(f"  - {finding_line(r.finding)}" for r in report.resolved)
    for ch in report.relations:
        if not ch.added and not ch.removed:
            lines.append(f"{ch.relation}: unchanged")
            continue
        lines.append(f"{ch.relation}: {len(ch.added)} rows added, {len(ch.removed)} removed")
        marked = sorted([(row, 0, "-") for row in ch.removed] + [(row, 1, "+") for row in ch.added])
        lines.extend(f"  {sign} {format_fact(ch.relation, row)}" for row, _, sign in marked)
    changed = sum(1 for ch in report.relations if ch.added or ch.removed)
    verdict = "FAILED" if report.failed else "passed"
    lines.append(
        f"{len(report.added)} added, {len(report.resolved)} resolved; {changed} of {len(report.relations)} "
        f"watched relations changed: {verdict} (--fail-on {report.fail_on})"
    )
    return "\n".join(lines) + "\n"


def render_json(report: DiffReport) -> str:
    def finding(r: Result) -> dict[str, object]:
        return {**r.finding.to_dict(), "fingerprint": r.fingerprint}

    doc = {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "topolog", "version": __version__},
        "old": list(report.old),
        "new": list(report.new),
        "failOn": report.fail_on,
        "failed": report.failed,
        "findings": {
            "added": [finding(r) for r in report.added],
            "resolved": [finding(r) for r in report.resolved],
        },
        "relations": {
            ch.relation: {
                "columns": list(ch.columns),
                "added": [list(r) for r in ch.added],
                "removed": [list(r) for r in ch.removed],
            }
            for ch in report.relations
        },
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
