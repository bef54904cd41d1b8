"""An observation folder (or files) read into one `Observations`.

Layout (docs/observed.md): each file speaks for one host. A file in a sub-folder speaks for the
sub-folder's name (`DIR/dgx03/nvidia-smi.xml`: host dgx03, which may contain dots); a file
directly in the folder, or named on its own, for its name up to the first dot
(`DIR/dgx03.nvidia-smi.xml`: host dgx03). Hidden files (`.name`) are skipped. Each file's format
is sniffed from its content unless `fmt` names it. Files are read in sorted path order.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.limits import read_limited
from verifier.sources.inventory.yaml_source import decode_utf8
from verifier.sources.observed.model import Observations, merge
from verifier.sources.observed.sniff import READERS, sniff

MAX_FILES = 200_000
"""Files one observation set may hold: 16,384 nodes with a handful of files each fit many times."""


def _files(path: Path) -> list[tuple[Path, str]]:
    """(file, host) pairs under `path` (a folder, or one file)."""
    if path.is_file() or not path.exists() or not path.is_dir():
        return [(path, path.name.split(".", 1)[0])]
    out: list[tuple[Path, str]] = []
    for entry in sorted(path.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            out.extend((f, entry.name) for f in sorted(entry.rglob("*")) if f.is_file() and not f.name.startswith("."))
        else:
            out.append((entry, entry.name.split(".", 1)[0]))
        if len(out) > MAX_FILES:
            raise TopologError.at(
                SourceLocation(str(path)), f"more than {MAX_FILES:,} files; expected one folder per host"
            )
    return out


def read_file(path: Path, host: str, fmt: str | None = None) -> Observations:
    """One file's observations: its format sniffed (or `fmt`), read by that format's reader."""
    name = str(path)
    text = decode_utf8(read_limited(path, name, "observation file"), name)
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


def read_observations(paths: Sequence[Path], fmt: str | None = None) -> Observations:
    """Every file under `paths`, merged. Every unreadable file is reported (TopologError), not only the first."""
    parts: list[Observations] = []
    problems: list[Diagnostic] = []
    for root in paths:
        if not root.exists():
            problems.append(Diagnostic(SourceLocation(str(root)), "no such observation file or folder"))
            continue
        files = _files(root)
        if not files:
            problems.append(Diagnostic(SourceLocation(str(root)), "the folder holds no observation file"))
        for path, host in files:
            try:
                parts.append(read_file(path, host, fmt))
            except TopologError as err:
                problems.extend(err.diagnostics)
    if problems:
        raise TopologError(problems)
    return merge(parts)
