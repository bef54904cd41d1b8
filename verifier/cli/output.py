"""Where reports go: stdout, or a file written whole (never half a report, never over an input)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

import click

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.limits import read_by_this_run
from verifier.reports import render


def emit(report: object, fmt: str) -> None:
    """`report` rendered in `fmt` on stdout."""
    text = render(report, fmt)
    # click strips terminal codes when stdout is not a terminal. Without an escape character there is
    # nothing to strip, and its search for one would read a fleet's report (100 MB for an audit at
    # 131,072 GPUs) once more: color=True tells it to keep the text as it is.
    click.echo(text, nl=False, color=None if "\x1b" in text else True)


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
    """`text` into `path` atomically: a temporary file beside it, renamed over it once complete.

    Never over a file this run has read (under any name), and never in place of a device
    file or a FIFO: `/dev/null` or `/dev/stdout` is written to, not replaced by a regular file.
    """
    read_as = read_by_this_run(path)
    if read_as is not None:
        raise TopologError.at(
            SourceLocation(str(path)), f"is an input of this run ({read_as}); write the report to another file"
        )
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except NotADirectoryError:
        blocking = next((p for p in path.parents if p.is_file()), path.parent)
        raise TopologError.at(
            SourceLocation(str(path)), f"cannot write report: {blocking} is a file; expected a folder"
        ) from None
    except OSError as err:
        raise TopologError.at(SourceLocation(str(path)), f"cannot write report: {err.strerror or err}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise TopologError.at(SourceLocation(str(path)), "cannot write report: it is a folder; expected a file")
    if mode is not None and not stat.S_ISREG(mode):
        write_in_place(path, text.encode("utf-8"), "report")
        return
    if mode is not None and (not mode & 0o222 or not os.access(path, os.W_OK)):
        # Renaming a new file over it would succeed (the folder is writable), but a file made
        # read-only is one its owner meant to keep: a baseline, an approved report.
        raise TopologError.at(
            SourceLocation(str(path)),
            f"cannot write report: the file is read-only (mode {stat.filemode(mode)}); "
            "make it writable or write the report to another file",
        )
    folder = path.parent if str(path.parent) else Path(".")
    try:
        # As pytest's --junitxml does: a report path in a folder not made yet (reports/ in CI) makes it.
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise TopologError.at(
            SourceLocation(str(path)), f"cannot write report: {folder} is a file; expected a folder"
        ) from None
    except OSError as err:
        raise TopologError.at(SourceLocation(str(path)), f"cannot write report: {err.strerror or err}") from None
    # Imported here: tempfile pulls shutil and random (a few ms) into every run, most of which
    # write to standard output.
    import tempfile

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


def write_in_place(path: Path, data: bytes, what: str) -> None:
    """`data` written to a device file or FIFO that exists (not replaced). A FIFO no process
    reads is refused at once instead of waiting for a reader.
    """
    loc = SourceLocation(str(path))
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        if err.errno == errno.ENXIO and path.is_fifo():
            raise TopologError.at(loc, f"cannot write {what}: no process reads this FIFO") from None
        if err.errno == errno.ENXIO:
            # /dev/tty of a process with no controlling terminal (CI, cron, a container)
            raise TopologError.at(
                loc, f"cannot write {what}: no such device here (a terminal this process does not have?)"
            ) from None
        raise TopologError.at(loc, f"cannot write {what}: {err.strerror or err}") from None
    try:
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError as err:
        raise TopologError.at(loc, f"cannot write {what}: {err.strerror or err}") from None
    finally:
        os.close(fd)
