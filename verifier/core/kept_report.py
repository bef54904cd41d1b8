"""A kept report: `topolog verify` run again on unchanged inputs answers with its last run's output.

A warm `verify` of a shipped example spends most of its time importing the CLI, the engine and
Cedar before it reads a single input. When a run is kept, the console script (verifier.cli.entry)
first asks this module whether an earlier run answered the very same question; if it did, the
kept stdout, stderr and exit code are written out and nothing else is imported.

What names a kept run (its entry's key, worked out before anything is read): the command line
word for word, the working directory, today's date (waivers expire), the interpreter and its
flags, topolog's version, whether each standard stream is a terminal (and its size and
encoding), and every environment variable that topolog, click or Python read at start-up
(TOPOLOG_*, PYTHON*, LANG, LC_*, TZ, TERM, COLUMNS, NO_COLOR, HOME, XDG_*).

What the entry holds besides the output: the manifest its full run recorded
(verifier.core.kept_recording), which is every input that run touched, and a hit needs each
one unchanged:
- every file it opened, by the SHA-256 of its bytes (the inventory and its includes, rules,
  policies, principals, waivers, baseline, thresholds, configuration, observations, the
  package's own data files);
- every path it only looked at (a default waivers file that is not there, a configuration file
  searched for up to the root), by what it was: missing, a folder, a link, or a file of a size
  and modification time;
- every folder it listed (a rules or policies folder), by the names in it and the type of
  each (a file, a folder, a link and to what);
- every Python module it ran, by size, modification and change times and inode;
- every further environment variable it read, by value (or absence); all of them when it
  read them all.

A kept run is an entry of verifier.core.cache: HMAC-signed under the user's key, read only from a
private folder, plain bytes (never a pickle), so a planted or altered entry is a miss. It is
kept only for a run that wrote nothing but its two streams, ran no other program, read no
terminal, pipe or device, and whose inputs did not change while it ran; see kept_recording for
the full list. `TOPOLOG_CACHE_DIR=` (empty) turns it off with the rest of the cache.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import time

from verifier.core import cache
from verifier.core.version import __version__

TYPE_CHECKING = False  # not typing's: importing typing is 2-5 ms of a kept report's 30 ms answer
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

KIND = "report"
"""The cache entry kind of kept runs."""
KEEP = 16
"""Kept runs per user: one per command line, working directory and environment."""
FORMAT = b"topolog kept report 2"
"""The first field of every entry: an entry of another layout is a miss."""

COMMANDS = frozenset({"verify"})
"""The commands whose runs are kept (a run of any other is never looked up)."""
GROUP_FLAGS = frozenset({"-q", "--quiet", "--no-config"})
"""The `topolog` group's options that take no value."""
GROUP_OPTIONS = ("--config", "--input-limit")
"""The `topolog` group's options that take a value: the command word comes after them."""
NEVER_KEPT = frozenset({"-h", "--help", "--version"})
"""Help and version text depend on the terminal and nothing else: not worth an entry."""

ENV_NAMES = frozenset(
    {"LANG", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE"}
    | {"HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "CI", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"}
)
ENV_PREFIXES = ("TOPOLOG_", "PYTHON", "LC_")
"""Environment read before a run can record anything (the interpreter's start-up, the locale)."""
SECRET_ENV = frozenset({cache.ENV_KEY})
"""Never part of a key: the signing key itself (an entry it did not sign cannot be read anyway)."""

SECTIONS = ("env", "stat", "dir", "code", "file")
"""The manifest's parts, in the order they are stored and checked (cheapest first)."""
EVERY_VARIABLE = "\0every variable"
"""The manifest's name for the whole environment (no variable's name holds a NUL)."""
ABSENT = b"\x00"
"""An environment variable that was not set, as the manifest stores it (a value is stored after '=')."""


def command_of(argv: Sequence[str]) -> str | None:
    """The command a command line runs, when its runs may be kept; None otherwise."""
    if any(word in NEVER_KEPT for word in argv):
        return None
    at = 0
    while at < len(argv):
        word = argv[at]
        if word in GROUP_FLAGS or word.startswith(tuple(f"{option}=" for option in GROUP_OPTIONS)):
            at += 1
        elif word in GROUP_OPTIONS:
            at += 2
        else:
            break
    if at < len(argv) and argv[at] in COMMANDS:
        return argv[at]
    return None


def today() -> str:
    """The local date, as `date.today()` gives it to the waivers."""
    return time.strftime("%Y-%m-%d")


def report_key(argv: Sequence[str]) -> str | None:
    """The entry that would keep this command line's run, or None: not a kept command, or the cache is off."""
    if command_of(argv) is None or cache.cache_folder() is None:
        return None
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed: relative paths mean nothing stable
        return None
    parts: list[str | bytes] = [FORMAT, sys.executable, sys.version, repr(sys.flags), __version__, cwd, today()]
    parts += [str(len(argv)), *argv]
    for name, value in sorted(os.environ.items()):
        if name not in SECRET_ENV and (name in ENV_NAMES or name.startswith(ENV_PREFIXES)):
            parts += [name, value]
    for fd, stream in ((0, sys.stdin), (1, sys.stdout), (2, sys.stderr)):
        parts.append(_stream_traits(fd, stream))
    return cache.entry_key(KIND.encode(), parts)


def _stream_traits(fd: int, stream: object) -> str:
    """What of a standard stream can change a run's output: terminal or not (and its size), encoding."""
    try:
        tty = os.isatty(fd)
    except OSError:
        return "closed"
    size = ""
    if tty:
        try:
            size = "x".join(map(str, os.get_terminal_size(fd)))
        except OSError:
            size = "?"
    encoding = getattr(stream, "encoding", None)
    errors = getattr(stream, "errors", None)
    return f"{tty}:{size}:{encoding}:{errors}"


# -- the entry's bytes ------------------------------------------------------------------------


def pack(fields: Sequence[bytes]) -> bytes:
    """Fields as one byte string, each after its length (4 bytes, big-endian)."""
    return b"".join(len(field).to_bytes(4, "big") + field for field in fields)


def unpack(data: bytes) -> list[bytes] | None:
    """The fields `pack` joined, or None when `data` is not such a string."""
    fields: list[bytes] = []
    at, end = 0, len(data)
    while at < end:
        if at + 4 > end:
            return None
        size = int.from_bytes(data[at : at + 4], "big")
        at += 4
        if at + size > end:
            return None
        fields.append(data[at : at + size])
        at += size
    return fields


class KeptRun:
    """A kept run, decoded: its output, its exit code, and the manifest a hit must match."""

    __slots__ = ("chunks", "manifest", "status")

    def __init__(
        self, status: int, chunks: list[tuple[int, bytes]], manifest: dict[str, list[tuple[bytes, bytes]]]
    ) -> None:
        self.status = status
        """The run's exit code (one of kept_recording.KEPT_STATUSES)."""
        self.chunks = chunks
        """What the run wrote, in order: (1 for stdout or 2 for stderr, bytes)."""
        self.manifest = manifest
        """Per section of SECTIONS: (what, as recorded) pairs."""

    def encode(self) -> bytes:
        """The entry's bytes: FORMAT, the status, the chunks, then each section's pairs (`pack`)."""
        fields = [FORMAT, str(self.status).encode(), str(len(self.chunks)).encode()]
        for fd, data in self.chunks:
            fields += [str(fd).encode(), data]
        for section in SECTIONS:
            pairs = self.manifest.get(section, [])
            fields.append(str(len(pairs)).encode())
            for what, recorded in pairs:
                fields += [what, recorded]
        return pack(fields)

    @classmethod
    def decode(cls, data: bytes) -> KeptRun | None:
        """The kept run `encode` wrote, or None for bytes of any other layout (a miss)."""
        fields = unpack(data)
        if not fields or fields[0] != FORMAT:
            return None
        try:
            rest = iter(fields[1:])
            status = int(next(rest))
            chunks = [(int(next(rest)), next(rest)) for _ in range(int(next(rest)))]
            manifest = {section: [(next(rest), next(rest)) for _ in range(int(next(rest)))] for section in SECTIONS}
        except (StopIteration, ValueError):
            return None
        if next(rest, None) is not None or any(fd not in (1, 2) for fd, _ in chunks):
            return None
        return cls(status, chunks, manifest)


# -- what each input is now -------------------------------------------------------------------


def stat_state(info: os.stat_result | None, error: OSError | None = None) -> bytes:
    """What a path was found to be: how a looked-at path is recorded and compared."""
    if info is None:
        if error is None or isinstance(error, (FileNotFoundError, NotADirectoryError)):
            return b"missing"
        return f"error {error.errno}".encode()
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        return b"dir"
    if stat.S_ISLNK(mode):
        return b"link"
    if stat.S_ISREG(mode):
        return f"file {info.st_size} {info.st_mtime_ns}".encode()
    return b"other"


def looked_at(what: bytes) -> bytes:
    """The state of a path the run stat'ed (`what` is b"stat\\0path" or b"lstat\\0path")."""
    how, _, path = what.partition(b"\0")
    try:
        info = os.lstat(path) if how == b"lstat" else os.stat(path)
    except OSError as err:
        return stat_state(None, err)
    return stat_state(info)


def listing(path: bytes) -> bytes:
    """The digest of a folder's names, sorted, each with its type (b"" when it cannot be listed).

    The types count: a walk (Path.rglob, os.scandir) takes them from the listing and stats
    nothing, so a plain file replaced by a folder of rules under the same name is seen only here.
    """
    try:
        with os.scandir(path) as entries:
            named = sorted(entry.name + b"/" + _entry_type(entry) for entry in entries)
    except OSError:
        return b""
    return hashlib.sha256(b"\0".join(named)).digest()


def _entry_type(entry: os.DirEntry[bytes]) -> bytes:
    """d, f or o (a folder, a regular file, anything else); a link: l and what it leads to."""
    try:
        if entry.is_symlink():
            return b"l" + (b"d" if entry.is_dir() else b"f" if entry.is_file() else b"o")
        return b"d" if entry.is_dir(follow_symlinks=False) else b"f" if entry.is_file(follow_symlinks=False) else b"o"
    except OSError:
        return b"?"


def code_state(path: bytes) -> bytes:
    """A module file's identity: any rewrite or replacement changes it (b"" when it is gone)."""
    try:
        info = os.stat(path)
    except OSError:
        return b""
    return f"{info.st_size} {info.st_mtime_ns} {info.st_ctime_ns} {info.st_ino} {info.st_dev}".encode()


def changed_ns(state: bytes) -> int:
    """When a module file was last changed (its ctime), read from what `code_state` wrote."""
    return int(state.split()[2])


def content(path: bytes) -> bytes:
    """The SHA-256 of a regular file's bytes (b"" when it cannot be read or is no regular file).

    Opened without waiting and read only when regular: a check of /dev/stdin that now leads to a
    pipe must neither wait for a writer nor take the bytes the full run is about to read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return b""
    try:
        with open(fd, "rb") as stream:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return b""
            return hashlib.file_digest(stream, "sha256").digest()
    except OSError:
        return b""


def env_state(name: str, environ: Mapping[str, str] | None = None) -> bytes:
    """An environment variable's value as recorded (EVERY_VARIABLE: a digest of them all), in
    `environ` (the process's environment by default).
    """
    where = os.environ if environ is None else environ
    if name == EVERY_VARIABLE:
        every = sorted((n, v) for n, v in where.items() if n not in SECRET_ENV)
        return hashlib.sha256("\0".join(f"{n}={v}" for n, v in every).encode("utf-8", "surrogateescape")).digest()
    value = where.get(name)
    return ABSENT if value is None else b"=" + value.encode("utf-8", "surrogateescape")


def _env_now(name: bytes) -> bytes:
    return env_state(name.decode("utf-8", "surrogateescape"))


CHECKS: dict[str, Callable[[bytes], bytes]] = {
    "env": _env_now,
    "stat": looked_at,
    "dir": listing,
    "code": code_state,
    "file": content,
}
"""Per section of SECTIONS: what an input recorded there is now (compared with the manifest's bytes)."""


def changed(run: KeptRun) -> tuple[str, bytes] | None:
    """The first input the kept run recorded that is not as it was (its section and name), or None."""
    for section in SECTIONS:
        check = CHECKS[section]
        for what, recorded in run.manifest.get(section, []):
            if check(what) != recorded:
                return section, what
    return None


def unchanged(run: KeptRun) -> bool:
    """Whether every input the kept run recorded is as it was."""
    return changed(run) is None


# -- the console script's questions -----------------------------------------------------------


_refusals: list[str] = []


def refuse(reason: str) -> None:
    """Keep no entry for this run (it read the clock, say): a command calls it, the recorder reads it."""
    _refusals.append(reason)


def refusals() -> list[str]:
    """The reasons given to `refuse` so far in this process (the recorder adds them to its own)."""
    return list(_refusals)


def replay(key: str) -> int | None:
    """When the run kept under `key` (`report_key`) still answers: its output written, its exit code
    returned; else None.
    """
    data = cache.read_entry(KIND, key)
    run = KeptRun.decode(data) if data is not None else None
    if run is None:
        return None
    different = changed(run)
    if different is not None:
        if os.environ.get("TOPOLOG_DEBUG"):  # why a run that was kept is run again
            section, what = different
            sys.stderr.write(f"topolog: debug: the kept run is not used: {section} {what!a} changed\n")
        return None
    for fd, chunk in run.chunks:
        _write_all(fd, chunk)
    return run.status


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:  # a reader that went away (`| head -1`): the rest is not wanted
        return
