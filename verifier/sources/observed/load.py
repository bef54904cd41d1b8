"""An observation folder (or files) read into one `Observations`.

Layout (docs/observed.md): each file speaks for one host. A file in a sub-folder speaks for the
sub-folder's name (`DIR/dgx03/nvidia-smi.xml`: host dgx03, which may contain dots); a file
directly in the folder, or named on its own, for its name up to the first dot
(`DIR/dgx03.nvidia-smi.xml`: host dgx03). Hidden files (`.name`) are skipped. Each file's format
is sniffed from its content unless `fmt` names it. Files are read in sorted path order.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.limits import read_limited
from verifier.sources.inventory.yaml_source import decode_utf8
from verifier.sources.observed.model import Observations, merge
from verifier.sources.observed.sniff import READERS, sniff

MAX_FILES = 200_000
"""Files one observation set may hold: 16,384 nodes with a handful of files each fit many times."""


PARALLEL_FILES = 512
"""From this many files on, they are read by worker processes (a fleet's 16,384 files: about 1 ms of
CPU each, the reading is most of what --observed adds); below it the start of the workers costs more
than it saves."""

CHUNK_FILES = 128
"""Files one worker reads per task: small enough to share the work evenly, large enough that sending
the observations back costs little beside reading them."""


def _walk(folder: str, out: list[str] | None = None, root: str | None = None) -> list[str]:
    """Every entry under `folder` that is not a folder, at any depth, through symbolic links to files
    but not into linked folders (as Path.rglob); os.scandir reads each folder once where rglob stats every entry again.

    Stops past MAX_FILES: a host folder linked to a large tree (/tmp) was listed whole, minutes,
    before the count was compared.
    """
    out = [] if out is None else out
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                # Hidden names are skipped, folders too: a Kubernetes ConfigMap or Secret mounted as a
                # host's folder holds its files in a hidden `..2026_12_07_...` folder (and in the one
                # being replaced, mid-update) with a link to each from the folder: each was read twice,
                # and an update's old and new files both.
                continue
            if entry.is_dir(follow_symlinks=False):
                _walk(entry.path, out, root or folder)
                continue
            try:
                linked_folder = entry.is_dir()
            except OSError:  # a loop of links: listed, and refused where it is read
                linked_folder = False
            # Not regular files only: a fifo, a socket or a link to no file (dangling, a loop) in a
            # host's folder was left out without a word (the run judged the host without it, or
            # stopped on an OSError as an internal error); listed, each is refused where it is read.
            if not linked_folder:
                out.append(entry.path)
                if len(out) > MAX_FILES:
                    raise TopologError.at(
                        SourceLocation(root or folder), f"more than {MAX_FILES:,} files; expected one folder per host"
                    )
    return out


def _files(path: Path) -> list[tuple[Path, str]]:
    """(file, host) pairs under `path` (a folder, or one file)."""
    if path.is_file() or not path.exists() or not path.is_dir():
        return [(path, path.name.split(".", 1)[0])]
    out: list[tuple[Path, str]] = []
    for entry in sorted(path.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            found = sorted(Path(f) for f in _walk(str(entry)))
            out.extend((f, entry.name) for f in found if not f.name.startswith("."))
        else:
            out.append((entry, entry.name.split(".", 1)[0]))
        if len(out) > MAX_FILES:
            raise TopologError.at(
                SourceLocation(str(path)), f"more than {MAX_FILES:,} files; expected one folder per host"
            )
    return out


def observation_files(path: Path) -> list[Path]:
    """The files `read_observations` reads under `path` (a folder, or one file), in its order.

    What it lists is what it reads: a host's sub-folder that is a link is read through it, a hidden
    entry is not. Whoever keeps a copy of a folder's observations (`topolog serve`) lists them so.
    """
    return [f for f, _host in _files(path)]


def read_file(path: Path, host: str, fmt: str | None = None) -> Observations:
    """One file's observations: its format sniffed (or `fmt`), read by that format's reader."""
    name = str(path)
    text = decode_utf8(read_limited(path, name, "observation file"), name)
    nul = text.find("\x00")
    if nul >= 0:
        # No tool prints a NUL byte; a file zero-filled where a crash cut its write short does, and some
        # readers pass over it (the nvidia-smi XML scanner read such a file as whole).
        raise TopologError.at(
            SourceLocation(name, text.count("\n", 0, nul) + 1),
            "the observation file holds a NUL byte (U+0000); expected a tool's text output (a file cut short "
            "by a crash is zero-filled)",
        )
    if not text.strip():
        # A fifo whose writer wrote nothing, a file cut short: no tool prints nothing at all.
        raise TopologError.at(
            SourceLocation(name, 1), "the observation file is empty; expected a tool's output (docs/observed.md)"
        )
    kind = fmt if fmt is not None else sniff(text)
    if kind is None:
        known = ", ".join(sorted(READERS))
        raise TopologError.at(
            SourceLocation(name, 1),
            f"not a format topolog reads observations from; expected one of: {known} "
            "(or name it with --observed-format)",
        )
    reader = READERS.get(kind)
    if reader is None:
        raise TopologError.at(
            SourceLocation(name), f"unknown observation format {kind!r}; expected one of: {', '.join(sorted(READERS))}"
        )
    return reader(text, name, host)


Read = Observations | tuple[Diagnostic, ...]
"""One file's observations, or what is wrong with it."""


def _read_chunk(chunk: Sequence[tuple[Path, str]], fmt: str | None) -> list[Read]:
    out: list[Read] = []
    for path, host in chunk:
        try:
            out.append(read_file(path, host, fmt))
        except TopologError as err:
            out.append(tuple(err.diagnostics))
    return out


def _workers(files: int) -> int:
    """Worker processes for `files` files: 0 (read here) for few files, or where forking is unsafe (a
    process with other threads, such as `topolog serve`, forks only the calling thread).
    """
    if files < PARALLEL_FILES or threading.active_count() > 1:
        return 0
    if "fork" not in multiprocessing.get_all_start_methods():
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return min(cores, 8) if cores > 1 else 0


def _read_all(files: Sequence[tuple[Path, str]], fmt: str | None) -> list[Read]:
    """Each file read, in the order given: here, or by forked workers (the same readers, so the same
    observations and the same file:line errors), chunk by chunk in order.
    """
    workers = _workers(len(files))
    if not workers:
        return _read_chunk(files, fmt)
    chunks = [files[i : i + CHUNK_FILES] for i in range(0, len(files), CHUNK_FILES)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        done = pool.starmap(_read_chunk, [(chunk, fmt) for chunk in chunks], chunksize=1)
    return [read for chunk in done for read in chunk]


def read_observations(paths: Sequence[Path], fmt: str | None = None) -> Observations:
    """Every file under `paths`, merged. Every unreadable file is reported (TopologError), not only the first."""
    problems: list[Diagnostic] = []
    files: list[tuple[Path, str]] = []
    for root in paths:
        if not root.exists():
            problems.append(Diagnostic(SourceLocation(str(root)), "no such observation file or folder"))
            continue
        found = _files(root)
        if not found:
            problems.append(Diagnostic(SourceLocation(str(root)), "the folder holds no observation file"))
        files.extend(found)
    parts: list[Observations] = []
    for read in _read_all(files, fmt):
        if isinstance(read, Observations):
            parts.append(read)
        else:
            problems.extend(read)
    if problems:
        raise TopologError(problems)
    return merge(parts)
