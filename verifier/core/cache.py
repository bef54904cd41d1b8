"""A per-user folder of derived data, costly to rebuild and cheap to check (checked programs, node classes).

Nothing in it is ever authoritative: every entry is named by the SHA-256 of everything it
was derived from and carries the SHA-256 of its own bytes, so a stale, truncated or
tampered entry is a miss, never a wrong answer. Entries are read only from a folder the
user owns and nobody else may write (entries are pickles: loading one runs code, so a
folder another account can write would let it run code as this user).

Where: `$TOPOLOG_CACHE_DIR`, else `$XDG_CACHE_HOME/topolog`, else `~/.cache/topolog`.
`TOPOLOG_CACHE_DIR=` (empty) turns the cache off. A folder that cannot be made or written
turns it off silently: a read-only home or a locked-down CI runner loses only speed.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
from collections.abc import Iterable
from functools import cache
from importlib import resources
from pathlib import Path

from verifier.core.version import __version__

ENV_DIR = "TOPOLOG_CACHE_DIR"
MAX_ENTRIES = 32
"""Entries kept per kind; the least recently written go first (a few rule sets per user)."""
_DIGEST = hashlib.sha256().digest_size


def cache_dir() -> Path | None:
    """The cache folder, made if missing (mode 0700); None when the cache is off or unusable."""
    configured = os.environ.get(ENV_DIR)
    if configured is not None:
        if not configured:
            return None
        folder = Path(configured)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = Path(base) / "topolog"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = folder.stat()
    except OSError:
        return None
    if not _private(info):
        return None
    return folder


def enabled() -> bool:
    """Whether entries can be read and written: a caller skips working out a key it could not use."""
    return cache_dir() is not None


def _private(info: os.stat_result) -> bool:
    owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return owned and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_entry(kind: str, key: str) -> bytes | None:
    """The bytes stored under (kind, key), or None: missing, unreadable, or not what was written."""
    folder = cache_dir()
    if folder is None:
        return None
    path = folder / f"{kind}-{key}"
    try:
        with path.open("rb") as stream:
            if not _private(os.fstat(stream.fileno())):
                return None
            data = stream.read()
    except OSError:
        return None
    digest, payload = data[:_DIGEST], data[_DIGEST:]
    if len(digest) != _DIGEST or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def write_entry(kind: str, key: str, payload: bytes, keep: int | None = None) -> None:
    """Store `payload` under (kind, key), atomically; a failure to write is ignored (only speed is lost).

    At most `keep` entries of the kind stay (MAX_ENTRIES by default; a kind whose entries are large
    keeps fewer).
    """
    folder = cache_dir()
    if folder is None:
        return
    # Imported here: only a miss writes, and tempfile (with shutil and random) is 3 ms of every hit's start-up.
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{kind}-")
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(hashlib.sha256(payload).digest())
                stream.write(payload)
            os.replace(tmp, folder / f"{kind}-{key}")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(folder, kind, MAX_ENTRIES if keep is None else keep)
    except OSError:
        return


def _prune(folder: Path, kind: str, keep: int) -> None:
    entries = sorted(folder.glob(f"{kind}-*"), key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
    for old in entries[keep:]:
        old.unlink(missing_ok=True)


@cache
def code_digest(package: str, files: tuple[str, ...]) -> bytes:
    """A digest of the code an entry kind is derived by: `files` of `package`, topolog's version,
    the Python version and the pickle protocol (an upgrade or an edit is a miss). Read once per process.
    """
    digest = hashlib.sha256(f"{__version__}\0{sys.version_info[:2]}\0{pickle.HIGHEST_PROTOCOL}".encode())
    folder = resources.files(package)
    for name in files:
        digest.update(name.encode() + b"\0" + folder.joinpath(name).read_bytes() + b"\0")
    return digest.digest()


def package_digest(package: str) -> bytes:
    """code_digest of every module and data file (.py, .yaml, .json) of `package`."""
    names = resources.files(package).iterdir()
    return code_digest(package, tuple(sorted(p.name for p in names if p.name.endswith((".py", ".yaml", ".json")))))


def entry_key(code: bytes, parts: Iterable[str | bytes]) -> str:
    """An entry's name: the digest of `code` (a code_digest) and of `parts`, each prefixed by its
    length, so that no two different lists of parts name the same entry.
    """
    digest = hashlib.sha256(code)
    for part in parts:
        data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def read_pickled(kind: str, key: str) -> object | None:
    """The object pickled under (kind, key), or None (missing, tampered, or from another build of the code)."""
    payload = read_entry(kind, key)
    if payload is None:
        return None
    try:
        value: object = pickle.loads(payload)
    except Exception:  # an entry from another build of the code (any unpickling error): a miss
        return None
    return value


def write_pickled(kind: str, key: str, value: object, keep: int | None = None) -> None:
    """Pickle `value` under (kind, key); a failure to write is ignored."""
    write_entry(kind, key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), keep)
