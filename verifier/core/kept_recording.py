"""Recording a run to keep (verifier.core.kept_report): its output and every input it touched.

Nobody lists a run's inputs by hand here, because a list would be out of date the day a new side
file is added; the run itself is watched, as ccache's direct mode watches a compiler:
- Python's audit hooks report every file opened (builtins.open, os.open: whoever calls them,
  the YAML loader, tomllib, the rule pack, importlib.resources) and every folder listed;
- os.stat and os.lstat are wrapped while the run goes, so that every path only looked at (a
  default waivers file that is not there, a configuration file searched for from the working
  directory up) is recorded with what it was;
- os.environ records every variable read, set or not (a library that reads them all, as networkx
  does, makes the whole environment an input);
- stdout and stderr go through a tee at the file-descriptor level, so the kept bytes are the ones
  that reached the two streams, in order.

A run is not kept (and says nothing about it) when it:
- wrote any file outside the cache that is still there at its end (a report, a baseline, GitHub's
  step summary; tempfile's probe of a folder, made and removed at once, is no output), ran another
  program, opened a socket or changed directory;
- read anything that is not a regular file (a pipe, /dev/stdin, a terminal);
- had an input change while it ran, or one changed within RACY_NS before it was read (a
  timestamp that could hide a second change);
- left a refusal (verifier.core.kept_report.refuse: `--observed` judged against the clock),
  said something about the cache on stderr, wrote progress lines (a run past a second, without
  --quiet), crossed midnight, or wrote more than MAX_OUTPUT bytes.
"""

from __future__ import annotations

import io
import os
import stat
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from verifier.core import cache, kept_report, progress
from verifier.core.kept_report import KeptRun

KEPT_STATUSES = (0, 1)
"""Exit codes kept: findings or none. A 2 may be a crash, which is not an answer to keep."""
MAX_OUTPUT = 16 << 20
"""A run that writes more than this (a fleet's JSON) is not kept: the entry would cost more to check."""
RACY_NS = 50_000_000
"""A file changed less than this before the run read it may change again without its times showing it
(file times move in clock ticks of a few milliseconds)."""
_WRITES = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
_NAMING_EVENTS = {
    "os.rename": 1,
    "os.link": 1,
    "os.symlink": 1,
    "os.mkdir": 0,
    "os.chmod": 0,
    "os.chown": 0,
    "os.utime": 0,
    "os.truncate": 0,
    "shutil.copyfile": 1,
    "shutil.copymode": 1,
    "shutil.copystat": 1,
}
"""Audit events that make or change a path, and which of their arguments it is."""
_MOVING_EVENTS = frozenset({"os.rename"})
"""Of those, the ones that also take a path away (their first argument)."""
_REMOVING_EVENTS = ("os.remove", "os.rmdir", "shutil.rmtree")
"""Audit events that take a path away (their first argument)."""
_REFUSED_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
    "socket.connect",
    "socket.bind",
    "socket.getaddrinfo",
    "urllib.Request",
    "os.chdir",
)
"""Audit events after which a run is not kept: another program, the network, a new working directory."""

PROCESS_STATE = "/proc/self/"
"""What the process reads about itself (a metrics library's boot time, its limits): no input of the answer."""
OPEN_FILES = "/proc/self/fd/"
"""Not process state: an input given as one of the process's open files (stdin) is judged as any other."""
PROCESS_FILES = frozenset({"/proc/stat"})
"""Read by prometheus_client as it loads (the boot time; --observed reads DCGM exporter files with it):
no input of the answer, and its counters differ on every read, so a run that kept it would never be
answered again."""

_recording: Recording | None = None
_hooked = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The process's audit hook (one per process, installed by the first recording; idle without one)."""
    recording = _recording
    if recording is None or recording.busy:
        return
    if event == "open":
        recording.opened(args[0], args[1], args[2])
    elif event in ("os.listdir", "os.scandir"):
        recording.listed(args[0])
    elif event in _NAMING_EVENTS:  # a file made or changed under a name (a report renamed into place)
        recording.changed_path(args[_NAMING_EVENTS[event]])
        if event in _MOVING_EVENTS:
            recording.changed_path(args[0], removed=True)
    elif event in _REMOVING_EVENTS:
        recording.changed_path(args[0], removed=True)
    elif event in _REFUSED_EVENTS:
        recording.refuse(f"it ran {event}")


class _Output(list[tuple[int, bytes]]):
    """What the run wrote, in order, as (descriptor, bytes), and how many bytes in all."""

    size = 0


class _Tee(io.RawIOBase):
    """A standard stream's file descriptor, with a copy of every byte written to it."""

    def __init__(self, fd: int, sink: _Output) -> None:
        super().__init__()
        self._fd = fd
        self._sink = sink

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: Any) -> int:
        written = os.write(self._fd, data)
        if self._sink.size <= MAX_OUTPUT:  # past it the run is not kept: no copy of a fleet's report is held
            self._sink.append((self._fd, bytes(memoryview(data)[:written])))
        self._sink.size += written
        return written


_PLAIN_ENVIRON = type(os.environ)


class _RecordingEnviron(os._Environ[str]):
    """os.environ's own class, with its reads recorded (swapped in while a run is recorded)."""

    def __getitem__(self, name: str) -> str:
        _note_env(name)
        return super().__getitem__(name)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            _note_env(name)
        return super().__contains__(name)

    def __iter__(self) -> Any:
        if _recording is not None:  # networkx looks for its settings so: the whole environment is an input
            _recording.every_variable = True
        return super().__iter__()


def _note_env(name: str) -> None:
    if _recording is not None:
        _recording.env.add(name)


class Recording:
    """One run being watched; `finish` keeps it when nothing above ruled that out."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.cwd = os.getcwd()
        self.date = kept_report.today()
        self.refused: list[str] = []
        """Why this run may not be kept (empty: it may)."""
        self.busy = False
        """True while the recorder itself lists a folder: the audit hook then records nothing."""
        self.warnings = cache.warnings_said()
        self.progress_lines = progress.lines_written
        self.chunks = _Output()
        self.env: set[str] = set()
        self.environ = dict(os.environ)
        """The environment as the run found it (numpy sets and unsets variables of its own as it loads)."""
        self.written: set[str] = set()
        """Paths the run wrote, made or removed: kept only if none of them is there at the end."""
        self.every_variable = False
        self.files: dict[str, tuple[int, int, int, int]] = {}
        """Opened files (as opened) and their (size, mtime, ctime, inode) when they were."""
        self.folders: dict[str, bytes] = {}
        """Listed folders (as listed) and their listing's digest (kept_report.listing)."""
        self.looked: dict[bytes, bytes] = {}
        """b"stat\\0path" or b"lstat\\0path" of every path looked at, and what it was (kept_report.stat_state)."""
        folder = cache.cache_folder() or ""
        self._ignored = tuple({os.path.normpath(os.path.join(self.cwd, p)) for p in (folder, os.path.realpath(folder))})
        self._key_file = os.path.normpath(os.path.join(self.cwd, cache.key_file()))
        self._streams: tuple[TextIO, TextIO] | None = None
        self._stat: Callable[..., os.stat_result] = os.stat
        self._lstat: Callable[..., os.stat_result] = os.lstat

    # -- what the hooks report ----------------------------------------------------------------

    def refuse(self, reason: str) -> None:
        self.refused.append(reason)

    def _absolute(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.cwd, path))

    def _ours(self, absolute: str) -> bool:
        """The cache's own files (entries, the key): never an input, and fine to write.

        Only files named as the cache names them: the cache folder may be the inventory's own
        (TOPOLOG_CACHE_DIR=.), and an input kept there is an input all the same.
        """
        folder, name = os.path.split(absolute)
        if absolute == self._key_file or (folder == os.path.dirname(self._key_file) and name.startswith(".cache-key-")):
            return True
        if "__pycache__" in absolute.split(os.sep):  # the interpreter's byte code, written as it imports
            return True
        return any(absolute == f or (folder == f and _cache_file(name)) for f in self._ignored if f)

    def opened(self, path: object, mode: object, flags: object) -> None:
        """The `open` audit event: a file read is an input (by identity now, by content at the end);
        a file written must be gone by the end; anything but a regular file read refuses the run.
        """
        if isinstance(path, int):  # a descriptor already open (os.fdopen): its open was recorded
            return
        if not isinstance(path, (str, bytes, os.PathLike)):
            self.refuse("it opened something that is not a path")
            return
        name = os.fsdecode(path)
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & _WRITES
        )
        absolute = self._absolute(name)
        if self._ours(absolute) or absolute in PROCESS_FILES:
            return
        if absolute.startswith(PROCESS_STATE) and not absolute.startswith(OPEN_FILES):
            return
        if writes:  # allowed only if gone again by the end (tempfile's probe of a folder it may use)
            self.written.add(name)
            return
        if name in self.files:
            return
        try:
            info = self._stat(name)
        except OSError as err:  # the open fails too: a file that appears later must be a change
            self._note_look("stat", name, kept_report.stat_state(None, err))
            return
        if not stat.S_ISREG(info.st_mode):
            self.refuse(f"it read {name!a}, which is not a regular file")
            return
        if _racy(info):
            self.refuse(f"{name!a} changed just before the run read it")
        self.files[name] = _identity(info)

    def changed_path(self, path: object, removed: bool = False) -> None:
        """A path the run made, removed or altered: fine only for the cache's own files and for
        files the run made itself and left no trace of (a temporary file removed again).
        """
        if not isinstance(path, (str, bytes, os.PathLike)):
            self.refuse("it changed a file by descriptor")
            return
        name = os.fsdecode(path)
        if self._ours(self._absolute(name)):
            return
        if removed and name not in self.written:
            self.refuse(f"it removed {name!a}")
        self.written.add(name)

    def listed(self, path: object) -> None:
        """The os.listdir and os.scandir audit events: a folder listed is an input, by its listing."""
        if isinstance(path, int):
            self.refuse("it listed a folder by descriptor")
            return
        if path is not None and not isinstance(path, (str, bytes, os.PathLike)):
            self.refuse("it listed something that is not a path")
            return
        name = "." if path is None else os.fsdecode(path)
        absolute = self._absolute(name)
        if name in self.folders or self._ours(absolute) or (absolute + os.sep).startswith(PROCESS_STATE):
            return  # (the process's own folders: the descriptors a metrics library counts)
        self.busy = True  # the listing below is the recorder's own, not the run's
        try:
            self.folders[name] = kept_report.listing(os.fsencode(name))
        finally:
            self.busy = False

    def stat(self, path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        return self._looked("stat", self._stat, path, args, kwargs)

    def lstat(self, path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        return self._looked("lstat", self._lstat, path, args, kwargs)

    def _looked(
        self, how: str, real: Callable[..., os.stat_result], path: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> os.stat_result:
        plain = not args and kwargs.get("dir_fd") is None and not isinstance(path, int)
        if plain and kwargs.get("follow_symlinks") is False:
            how = "lstat"
        try:
            info = real(path, *args, **kwargs)
        except OSError as err:
            if plain:
                self._note_look(how, path, kept_report.stat_state(None, err))
            raise
        if plain:
            self._note_look(how, path, kept_report.stat_state(info), info)
        return info

    def _note_look(self, how: str, path: Any, state: bytes, info: os.stat_result | None = None) -> None:
        try:
            name = os.fsdecode(path)
        except TypeError:
            return
        if self._ours(self._absolute(name)):
            return
        if info is not None and stat.S_ISREG(info.st_mode) and _racy(info):
            self.refuse(f"{name!a} changed just before the run looked at it")
        self.looked.setdefault(how.encode() + b"\0" + os.fsencode(name), state)

    # -- start and finish ---------------------------------------------------------------------

    def start(self) -> None:
        global _recording, _hooked
        if not _hooked:
            sys.addaudithook(_audit)
            _hooked = True
        out, err = sys.stdout, sys.stderr
        out.flush()
        err.flush()
        self._streams = (out, err)
        sys.stdout = _teed(1, out, self.chunks)
        sys.stderr = _teed(2, err, self.chunks)
        os.stat, os.lstat = self.stat, self.lstat
        os.environ.__class__ = _RecordingEnviron
        _recording = self

    def stop(self) -> None:
        """Undo what `start` did (the streams flushed first, so every byte is recorded)."""
        global _recording
        if _recording is not self:
            return
        _recording = None
        os.environ.__class__ = _PLAIN_ENVIRON
        os.stat, os.lstat = self._stat, self._lstat
        assert self._streams is not None
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                self.refuse("a stream could not be written")
        sys.stdout, sys.stderr = self._streams

    def finish(self, status: object) -> None:
        """Stop, and keep the run when it may be kept (a failure to keep costs only speed)."""
        self.stop()
        try:
            entry = self.entry(status)
        except Exception:  # a recorder's bug must not cost the run its answer, only its speed
            return
        if entry is not None:
            cache.write_entry(kept_report.KIND, self.key, entry.encode(), keep=kept_report.KEEP)
        else:  # what the entry under this key holds (if anything) is stale or was altered: never of use
            cache.remove_entry(kept_report.KIND, self.key)

    def entry(self, status: object) -> KeptRun | None:
        """The kept run, or None when this run may not be kept."""
        if status not in KEPT_STATUSES:
            return None
        self.refused += kept_report.refusals()
        if cache.warnings_said() != self.warnings:
            self.refuse("it warned about the cache")
        if progress.lines_written != self.progress_lines:
            self.refuse("it wrote progress lines, whose times are the run's own")
        if kept_report.today() != self.date:
            self.refuse("the date changed while it ran")
        if self.chunks.size > MAX_OUTPUT:
            self.refuse("its output is too large to keep")
        manifest = self._manifest()
        if self.refused:
            if os.environ.get("TOPOLOG_DEBUG"):  # why a run was not kept, for whoever wonders why it is slow
                sys.stderr.write(f"topolog: debug: this run is not kept: {'; '.join(sorted(set(self.refused)))}\n")
            return None
        return KeptRun(status, _merged(self.chunks), manifest)

    def _manifest(self) -> dict[str, list[tuple[bytes, bytes]]]:
        code = _module_files()
        package_roots = _package_roots()
        files: list[tuple[bytes, bytes]] = []
        for name, identity in sorted(self.files.items()):
            try:
                now = _identity(os.stat(name))
            except OSError:
                now = None
            if now != identity:
                self.refuse(f"{name!a} changed while the run went")
                continue
            absolute = self._absolute(name)
            if absolute in code:
                continue
            if absolute.startswith(package_roots):  # topolog's own data: its code's, checked the same way
                code.add(absolute)
            else:
                files.append((os.fsencode(name), kept_report.content(os.fsencode(name))))
        for name, names in self.folders.items():
            if kept_report.listing(os.fsencode(name)) != names:
                self.refuse(f"the folder {name!a} changed while the run went")
        modules = []
        for path in sorted(code):
            state = kept_report.code_state(os.fsencode(path))
            if state and time.time_ns() - kept_report.changed_ns(state) < RACY_NS:
                self.refuse(f"the module {path!a} changed just before the run")
            modules.append((os.fsencode(path), state))
        for name in sorted(self.written):
            if os.path.lexists(name):
                self.refuse(f"it wrote {name!a}")
        variables = sorted(self.env - kept_report.SECRET_ENV)
        if self.every_variable:
            variables.append(kept_report.EVERY_VARIABLE)
        return {
            "env": [(n.encode("utf-8", "surrogateescape"), kept_report.env_state(n, self.environ)) for n in variables],
            "stat": sorted(self.looked.items()),
            "dir": sorted((os.fsencode(n), d) for n, d in self.folders.items()),
            "code": modules,
            "file": files,
        }


def _cache_file(name: str) -> bool:
    """Whether a file of the cache folder is named as the cache names its entries (`kind-<hex key>`)
    and their temporary files (`.kind-` and tempfile's 8 characters).
    """
    temporary = name.startswith(".")
    kind, _, tail = name[temporary:].rpartition("-")
    if not kind:
        return False
    if temporary:
        return len(tail) == 8
    return len(tail) >= 16 and all(c in "0123456789abcdef" for c in tail)


def _racy(info: os.stat_result) -> bool:
    """Whether a file changed so recently that a second change could leave its times as they are."""
    return time.time_ns() - info.st_ctime_ns < RACY_NS


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    """(size, mtime, ctime, inode): what tells whether an opened file changed while the run went."""
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)


def _module_files() -> set[str]:
    """Every module file the run has imported (absolute): they are its code, checked by identity."""
    found: set[str] = set()
    for module in list(sys.modules.values()):
        try:
            # Not getattr: a module still deferred (verifier.core.lazy) would be imported by it.
            path = object.__getattribute__(module, "__dict__").get("__file__")
        except AttributeError:
            continue
        if isinstance(path, str):
            found.add(os.path.normpath(os.path.abspath(path)))
    return found


PACKAGES = ("verifier", "verifier.rules", "verifier.policies")
"""The packages whose files are topolog itself: its modules, the shipped rule pack, catalogue and policies."""


def _package_roots() -> tuple[str, ...]:
    """The folders of PACKAGES (a wheel's site-packages/verifier; an editable checkout's rules/ beside it)."""
    roots: list[str] = []
    for name in PACKAGES:
        module = sys.modules.get(name)
        for folder in getattr(module, "__path__", None) or ():
            roots.append(os.path.normpath(os.path.abspath(folder)) + os.sep)
    return tuple(roots)


def _teed(fd: int, stream: TextIO, sink: _Output) -> TextIO:
    """A text stream like `stream` (same encoding, errors, buffering) whose bytes are also recorded."""
    return io.TextIOWrapper(
        io.BufferedWriter(_Tee(fd, sink)),
        encoding=stream.encoding,
        errors=stream.errors,
        newline="\n",
        line_buffering=bool(stream.line_buffering),
        write_through=getattr(stream, "write_through", False),
    )


def _merged(chunks: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """Adjacent writes to one stream joined: fewer fields to store, the same bytes in the same order."""
    runs: list[tuple[int, list[bytes]]] = []
    for fd, data in chunks:
        if runs and runs[-1][0] == fd:
            runs[-1][1].append(data)
        elif data:
            runs.append((fd, [data]))
    return [(fd, b"".join(parts)) for fd, parts in runs]


def start(key: str) -> Recording | None:
    """A recording of the run to keep under `key` (`report_key`), started; None when it cannot be recorded."""
    try:
        sys.stdout.fileno()
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # streams replaced by a caller: nothing to tee
        return None
    recording = Recording(key)
    recording.start()
    return recording
