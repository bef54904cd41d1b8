"""A per-user folder of derived data, costly to rebuild and cheap to check (checked programs, node classes).

Nothing in it is ever authoritative: every entry is named by the SHA-256 of everything it
was derived from and carries an HMAC-SHA256 of its name and bytes under a signing key that
the folder does not hold, so a stale, truncated or tampered entry is a miss, never a wrong
answer, and never runs code. Most entries are pickles (a kept report, verifier.core.kept_report,
is plain bytes): loading one runs code, so a digest that
anyone who can write the folder could recompute would not do (a CI cache restored from a
shared store, a folder another job wrote). An entry whose tag does not verify is ignored,
rebuilt, and reported once on stderr. Entries are also read only from a folder the user
owns and nobody else may write.

Where: `$TOPOLOG_CACHE_DIR`, else `$XDG_CACHE_HOME/topolog`, else `~/.cache/topolog`.
`TOPOLOG_CACHE_DIR=` (empty) turns the cache off. A folder that cannot be made or written
turns it off silently: a read-only home or a locked-down CI runner loses only speed.

The signing key: `$TOPOLOG_CACHE_KEY` (a secret of at least 32 characters, e.g. a CI secret,
so that jobs sharing the folder share hits), else a random key kept in
`$XDG_CONFIG_HOME/topolog/cache-key` (else `~/.config/topolog/cache-key`), made on first use
with mode 0600. A key file that others may read or write, or that lies inside the cache
folder, turns the cache off with a warning: the key would not be secret from the folder.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
import sys

from verifier.core.version import __version__

TYPE_CHECKING = False  # not typing's: importing typing is 2-5 ms of a kept report's 30 ms answer
if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

# The module is read before anything else by a kept report's lookup (verifier.core.kept_report),
# which must stay a few milliseconds: folders are plain strings here (pathlib imports `re` and
# more), and pickle is imported by the functions that use it.

ENV_DIR = "TOPOLOG_CACHE_DIR"
ENV_KEY = "TOPOLOG_CACHE_KEY"
KEY_FILE = os.path.join("topolog", "cache-key")
"""The signing key's file, under `$XDG_CONFIG_HOME` (else `~/.config`): outside the cache folder."""
MIN_KEY_CHARS = 32
"""A key given in the environment must be at least this long: a short one could be guessed."""
MAX_ENTRIES = 32
"""Entries kept per kind; the least recently written go first (a few rule sets per user)."""
_DIGEST = hashlib.sha256().digest_size
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def cache_dir() -> Path | None:
    """The cache folder, made if missing (mode 0700); None when the cache is off or unusable."""
    folder = cache_folder()
    if folder is None:
        return None
    from pathlib import Path

    return Path(folder)


def cache_folder() -> str | None:
    """cache_dir as a string (what the modules that must start fast use)."""
    configured = os.environ.get(ENV_DIR)
    if configured is not None:
        if not configured:
            return None
        folder = configured
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "topolog")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.stat(folder)
    except OSError:
        return None
    if not _private(info):
        return None
    if _signing_key(folder) is None:
        return None
    return folder


def enabled() -> bool:
    """Whether entries can be read and written: a caller skips working out a key it could not use."""
    return cache_folder() is not None


def _private(info: os.stat_result) -> bool:
    owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return owned and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_entry(kind: str, key: str) -> bytes | None:
    """The bytes stored under (kind, key), or None: missing, unreadable, or not what was written."""
    folder = cache_folder()
    if folder is None:
        return None
    path = os.path.join(folder, f"{kind}-{key}")
    try:
        # Every entry is a regular file written in place (write_entry). Anything else under an
        # entry's name is no entry, and is not even read: a fifo had the run wait for a writer for
        # ever, a link to a large file outside the folder had it read whole into memory (8 GiB: killed
        # at 6 GB), before the tag could say it was no entry. Links are not followed, a fifo is opened
        # without waiting, and only a regular file is read.
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except OSError:
        return None
    try:
        with open(fd, "rb") as stream:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or not _private(info):
                return None
            data = stream.read()
    except OSError:
        return None
    tag, payload = data[:_DIGEST], data[_DIGEST:]
    key_bytes = _signing_key(folder)
    if key_bytes is None:
        return None
    if len(tag) != _DIGEST or not hmac.compare_digest(_tag(key_bytes, kind, key, payload), tag):
        _report_tampered(path)
        return None
    return payload


def write_entry(kind: str, key: str, payload: bytes, keep: int | None = None) -> None:
    """Store `payload` under (kind, key), atomically; a failure to write is ignored (only speed is lost).

    At most `keep` entries of the kind stay (MAX_ENTRIES by default; a kind whose entries are large
    keeps fewer).
    """
    folder = cache_folder()
    key_bytes = _signing_key(folder) if folder is not None else None
    if folder is None or key_bytes is None:
        return
    import contextlib

    try:
        fd, tmp = _new_file(folder, f".{kind}-")
        try:
            with os.fdopen(fd, "wb") as stream:
                stream.write(_tag(key_bytes, kind, key, payload))
                stream.write(payload)
            os.replace(tmp, os.path.join(folder, f"{kind}-{key}"))
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        _prune(folder, kind, MAX_ENTRIES if keep is None else keep)
    except OSError:
        return


def _new_file(folder: str, prefix: str) -> tuple[int, str]:
    """A new private file (mode 0600) under a random name in `folder`, open for writing, and its path.

    What tempfile.mkstemp does, without importing tempfile: with shutil and random it is about 2 % of
    the instructions of a run that writes an entry (every run whose inventory changed). The name is
    made with O_EXCL and links are not followed, so nothing already there, a link planted under the
    name included, is ever opened.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        # Eight characters after the prefix, as tempfile's names have: a kept run's recording
        # (verifier.core.kept_recording._cache_file) knows the cache's temporary files by that.
        path = os.path.join(folder, prefix + os.urandom(4).hex())
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:  # the name is taken (another run's file, or a planted one): another
            continue
    raise FileExistsError(f"no free temporary name in {folder!a}")


def remove_entry(kind: str, key: str) -> None:
    """Remove the entry under (kind, key), if there is one: it is known to be of no use (stale or altered)."""
    folder = cache_folder()
    if folder is None:
        return
    try:
        os.unlink(os.path.join(folder, f"{kind}-{key}"))
    except OSError:
        return


def _tag(secret: bytes, kind: str, key: str, payload: bytes) -> bytes:
    """The entry's HMAC: over its name too, so a valid entry copied under another name is a miss."""
    mac = hmac.new(secret, f"{kind}\0{key}\0".encode(), hashlib.sha256)
    mac.update(payload)
    return mac.digest()


_reported: set[str] = set()
_key_memo: dict[tuple[str | None, str], bytes | None] = {}


def warnings_said() -> int:
    """How many warnings about the cache this process has written to stderr: a run that wrote one is
    not kept (verifier.core.kept_recording), since the warning is about the cache, not the inputs.
    """
    return len(_reported)


def _report_tampered(path: str) -> None:
    """Say once per entry that it was ignored: someone wrote it who does not hold the key."""
    name = path
    if name in _reported:
        return
    _reported.add(name)
    sys.stderr.write(
        f"topolog: warning: cache entry {name!a} failed its integrity check "
        "(altered, or signed with another key); ignored and rebuilt\n"
    )


def _warn(message: str) -> None:
    if message not in _reported:
        _reported.add(message)
        sys.stderr.write(f"topolog: warning: {message}; the cache is off for this run\n")


def _key_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, KEY_FILE)


def key_file() -> str:
    """Where the signing key is kept when `$TOPOLOG_CACHE_KEY` is not set."""
    return _key_path()


def _signing_key(folder: str) -> bytes | None:
    """The key entries are signed with, or None (the cache is then off): see the module's docstring."""
    configured = os.environ.get(ENV_KEY)
    memo_key = (configured, folder)
    if memo_key in _key_memo:
        return _key_memo[memo_key]
    found = _find_key(configured, folder)
    _key_memo[memo_key] = found
    return found


def _find_key(configured: str | None, folder: str) -> bytes | None:
    if configured is not None:
        if len(configured) < MIN_KEY_CHARS:
            _warn(f"{ENV_KEY} is shorter than {MIN_KEY_CHARS} characters")
            return None
        return configured.encode("utf-8", "surrogatepass")
    path = _key_path()
    try:
        where, inside = os.path.realpath(path), os.path.realpath(folder)
        if where == inside or where.startswith(inside.rstrip(os.sep) + os.sep):
            _warn(f"the cache key file {path!a} lies inside the cache folder")
            return None
        return _read_key(path) or _make_key(path)
    except OSError:
        return None


def _read_key(path: str) -> bytes | None:
    try:
        # Without waiting: a fifo under the key's name (it is then refused as no regular file) had
        # every run wait for a writer for ever.
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(stream.fileno())
        owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if not stat.S_ISREG(info.st_mode) or not owned or info.st_mode & 0o077:
            _warn(f"the cache key file {path!a} is not a private file of this user (mode 0600)")
            raise OSError("cache key file not private")
        secret = stream.read(1024).strip()
    if len(secret) < MIN_KEY_CHARS:
        _warn(f"the cache key file {path!a} holds fewer than {MIN_KEY_CHARS} characters")
        raise OSError("cache key file too short")
    return secret


def _make_key(path: str) -> bytes:
    """A new random key, published whole (a link of a finished file), so that two processes racing
    to make it agree on one and neither reads it half written.
    """
    parent = os.path.dirname(path)
    os.makedirs(parent, mode=0o700, exist_ok=True)
    secret = os.urandom(32).hex().encode()
    fd, tmp = _new_file(parent, ".cache-key-")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(secret + b"\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            found = _read_key(path)
            if found is None:
                raise OSError("cache key file vanished") from None
            return found
    finally:
        os.unlink(tmp)
    return secret


def _prune(folder: str, kind: str, keep: int) -> None:
    prefix = f"{kind}-"
    # Not followed: a link under an entry's name is pruned as itself (one whose target is gone made
    # stat fail, and with it every later prune of the kind). A plain listing, not pathlib's glob: each
    # run that writes prunes once per entry it writes.
    with os.scandir(folder) as listing:
        entries = sorted(
            ((e.stat(follow_symlinks=False).st_mtime, e.name) for e in listing if e.name.startswith(prefix)),
            reverse=True,
        )
    for _, name in entries[keep:]:
        try:
            os.unlink(os.path.join(folder, name))
        except FileNotFoundError:  # pruned by another run meanwhile
            continue


_code_digests: dict[tuple[str, tuple[str, ...]], bytes] = {}


def code_digest(package: str, files: tuple[str, ...]) -> bytes:
    """A digest of the code an entry kind is derived by: `files` of `package`, topolog's version,
    the Python version and the pickle protocol (an upgrade or an edit is a miss). Read once per process.
    """
    found = _code_digests.get((package, files))
    if found is not None:
        return found
    import pickle

    from verifier.core.resources import package_dir

    digest = hashlib.sha256(f"{__version__}\0{sys.version_info[:2]}\0{pickle.HIGHEST_PROTOCOL}".encode())
    folder = package_dir(package)
    for name in files:
        digest.update(name.encode() + b"\0" + folder.joinpath(name).read_bytes() + b"\0")
    _code_digests[(package, files)] = found = digest.digest()
    return found


def package_digest(package: str) -> bytes:
    """code_digest of every module and data file (.py, .yaml, .json) of `package`."""
    from verifier.core.resources import package_dir

    names = package_dir(package).iterdir()
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
    import pickle

    try:
        value: object = pickle.loads(payload)
    except Exception:  # an entry from another build of the code (any unpickling error): a miss
        return None
    return value


def write_pickled(kind: str, key: str, value: object, keep: int | None = None) -> None:
    """Pickle `value` under (kind, key); a failure to write is ignored."""
    if cache_folder() is None:  # the cache is off: nothing would be written, so nothing is pickled
        return
    import pickle

    write_entry(kind, key, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL), keep)
