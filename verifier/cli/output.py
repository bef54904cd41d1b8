"""Where reports go: stdout, or a file written whole (never half a report, never over an input)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import click

from verifier.core.errors import SourceLocation, TopologError
from verifier.reports import render


def emit(report: object, fmt: str) -> None:
    """`report` rendered in `fmt` on stdout."""
    click.echo(render(report, fmt), nl=False)


def refuse_inputs(targets: Iterable[Path], inputs: Iterable[Path]) -> None:
    """A report must never replace a file the run reads: refuse before any work is done."""
    read: dict[Path, Path] = {}
    for p in inputs:
        if p.exists():
            read.setdefault(p.resolve(), p)
    for target in targets:
        if target.exists() and target.resolve() in read:
            raise TopologError.at(
                SourceLocation(str(target)),
                f"is an input of this run ({read[target.resolve()]}); write the report to another file",
            )


def write_file(path: Path, text: str) -> None:
    """`text` into `path` atomically: a temporary file beside it, renamed over it once complete."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise TopologError.at(SourceLocation(str(path)), f"cannot write report: no such folder {folder}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as err:
        raise TopologError.at(SourceLocation(str(path)), f"cannot write report: {err.strerror or err}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise TopologError.at(SourceLocation(str(path)), f"cannot write report: {err.strerror or err}") from None
