"""`topolog diff`: what a change to an inventory does.

Both sides are loaded and evaluated with the same rules. Findings are matched by
fingerprint (so a finding that merely moved lines is neither added nor resolved), and a
declared list of watched derived relations is compared row by row. Only relations that
rules actually derive are compared: a figure no rule derives is never shown.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from verifier.checks.findings import Severity, fails
from verifier.checks.verify import Result
from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.suggest import did_you_mean
from verifier.engine.ast import Program, Row

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
class DiffSide:
    """One side of a comparison: its findings and the rows of the watched relations."""

    paths: tuple[Path, ...]
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


def relabel_error(err: TopologError, labels: Mapping[str, str]) -> TopologError:
    """`err` with old-side file names (temporary copies) replaced by their labels."""
    return TopologError(replace(d, location=_relabel(d.location, labels)) for d in err.diagnostics)


def compare(
    program: Program,
    old: DiffSide,
    new: DiffSide,
    relations: Sequence[str],
    fail_on: Severity = "error",
    labels: Mapping[str, str] | None = None,
) -> DiffReport:
    """What changed from `old` to `new`. `labels` renames old-side files (temporary copies) in everything reported."""
    labels = labels or {}
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
        old=tuple(labels.get(str(p), str(p)) for p in old.paths),
        new=tuple(str(p) for p in new.paths),
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
