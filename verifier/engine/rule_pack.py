"""Which rule files a run loads: the shipped pack, a user's own rules, or both.

`--rules` adds to the shipped pack, so a site's checks can read the declared input
relations (rules/schema.dl) and the pack's derived relations (nvlink_domain, within, ...)
without copying them; `--no-shipped-rules` loads the user's rules alone.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from verifier.core.cache import enabled as cache_enabled
from verifier.core.errors import TopologError
from verifier.core.resources import RULE_SUFFIX, display_path, shipped_rules_dir
from verifier.engine.ast import Program
from verifier.engine.program_cache import cached_program, program_key, remember_program
from verifier.engine.shipped_program import compiled_shipped

SCHEMA_NAME = "schema.dl"

_last: list[tuple[tuple[tuple[str, bytes | None], ...], Program]] = []
"""The programs loaded last, newest first, with what their files held: a CLI run asks for the same
rules more than once (check ids are validated before the inventory loads, `topolog test` verifies
fixture after fixture), and a process that runs several commands (a library user, the REPL, the
test suite) alternates between a few rule sets. Parsing the pack costs about a second."""
_REMEMBERED = 8


def shipped_first(user_paths: Sequence[Path], shipped: bool = True) -> list[Path]:
    """The rule paths a command loads: the shipped pack, then the user's; the user's alone without `shipped`."""
    if not shipped:
        return list(user_paths)
    return [display_path(shipped_rules_dir()), *user_paths]


def inside_shipped(path: Path) -> bool:
    """Whether `path` is the shipped pack or a part of it (`--rules rules/topology` in a checkout)."""
    shipped = shipped_rules_dir().resolve()
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13): the loader says so
        return False
    return resolved == shipped or shipped in resolved.parents


def outside_shipped(files: Iterable[str]) -> set[str]:
    """The rule `files` that are not part of the shipped pack: inside_shipped of each, for a whole program.

    A program's ~120 files lie in a dozen folders, and resolving each path walks every one of its
    folders (10 ms of every `verify` from an installed package): a folder is resolved once, and a
    file on its own only when it is a symbolic link, whose target decides.
    """
    shipped = shipped_rules_dir().resolve()
    folders: dict[str, Path] = {}
    out: set[str] = set()
    for name in set(files):
        path = Path(name)
        if path.name in ("", ".", "..") or path.is_symlink():
            resolved = path.resolve()
        else:
            parent = str(path.parent)
            if parent not in folders:
                folders[parent] = path.parent.resolve()
            resolved = folders[parent] / path.name
        if not (resolved == shipped or shipped in resolved.parents):
            out.add(name)
    return out


def load_rule_pack(paths: Sequence[Path]) -> Program:
    """The checked program of `paths` (rule files, or directories searched for *.dl), in that order.

    With the shipped pack among `paths`, a user's file that is a byte-for-byte copy of a
    shipped one is loaded once, as the shipped file: a schema.dl copied next to one's rules
    (which custom rule sets needed before --rules added to the pack) declares nothing twice.
    Without it, a relation used but declared nowhere is reported with the shipped file
    that declares it, and how to load that file.
    """
    shipped = shipped_rules_dir().resolve()
    with_shipped = any(p.resolve() == shipped for p in paths)
    files = _files(paths, shipped if with_shipped else None)
    key = tuple((str(f), _bytes(f)) for f in files)
    for i, (seen, known) in enumerate(_last):
        if seen == key:
            _last.insert(0, _last.pop(i))
            return known
    readable = [(name, data) for name, data in key if data is not None]
    complete = len(readable) == len(key)  # an unreadable file: no state, the loader reports it
    # With the cache off nothing is read or written: no key is worked out and no program pickled.
    disk_key = program_key(readable) if complete and cache_enabled() else None
    # The signed cache first: unpickling the checked program is about twice as fast as rebuilding it
    # from the compiled data, so a warm run reads the cache and only a cold one the compiled data.
    program = cached_program(disk_key) if disk_key is not None else None
    if program is None and with_shipped and complete:
        # The shipped pack alone, unchanged: compiled with the release (verifier.engine.shipped_program).
        program = compiled_shipped(readable)
        if program is not None and disk_key is not None:
            remember_program(disk_key, program)
    if program is None:
        from verifier.engine.loader import load_program
        from verifier.engine.shared_terms import share_terms

        # Checked, its terms' positions are no longer read: shared terms on a miss as on a hit.
        program = share_terms(load_program(files, None if with_shipped else shipped_declaration_hint))
        if disk_key is not None:
            remember_program(disk_key, program)
    if complete:
        _last.insert(0, (key, program))
        del _last[_REMEMBERED:]
    return program


def shipped_files(root: Path) -> list[Path]:
    """The rule files of the pack at `root`, in the order a run loads them."""
    return _files([root], None)


def _files(paths: Sequence[Path], shipped: Path | None) -> list[Path]:
    """`paths` with directories expanded as the loader expands them, less copies of the files of the
    `shipped` pack (when it is loaded too).

    A directory without rule files stays in the list, so the loader reports it.
    """
    out: list[Path] = []
    texts: frozenset[bytes] | None = None  # the shipped files' bytes, read only if a user's file needs them
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob(f"*{RULE_SUFFIX}") if not p.is_dir())  # as the loader expands
            if not found:
                out.append(path)
                continue
        else:
            found = [path]
        if shipped is None or path.resolve() == shipped:
            out.extend(found)
            continue
        for f in found:
            if not inside_shipped(f):
                texts = _shipped_texts(shipped) if texts is None else texts
                data = _bytes(f)
                if data is not None and data in texts:
                    continue
            out.append(f)
    return out


def _shipped_texts(shipped: Path) -> frozenset[bytes]:
    return frozenset(data for f in shipped.rglob(f"*{RULE_SUFFIX}") if (data := _bytes(f)) is not None)


_read: dict[str, tuple[tuple[int, ...], bytes]] = {}
"""Rule files read in this process, with what os.stat said of each then. A process that verifies
again (the test suite, `topolog test`, the REPL) asks for the shipped pack's ~160 files each time:
a file whose device, inode, size, modification and change times are all as they were is not read
again. Writing a file sets its change time to the clock, which utime cannot set back; but the file
system's clock moves in ticks, so a file written in the tick it was read in could look unchanged:
like git's racily clean entries, a file changed less than _SETTLED_NS before it was read is not
remembered and is read every time."""
_READ_KEPT = 4096
_SETTLED_NS = 2_000_000_000


def _now_ns() -> int:
    return time.time_ns()


def _bytes(path: Path) -> bytes | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # missing, a loop of links, a NUL in the name: the loader says so
        return None
    # Only a regular file can be a copy of a shipped one; opening a FIFO would wait for a writer.
    if not stat.S_ISREG(st.st_mode):
        return None
    seen = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    name = str(path)
    known = _read.get(name)
    if known is not None and known[0] == seen:
        return known[1]
    try:
        data = path.read_bytes()
    except OSError:  # unreadable: the loader says so, with the path
        return None
    if max(st.st_mtime_ns, st.st_ctime_ns) < _now_ns() - _SETTLED_NS:
        if len(_read) >= _READ_KEPT:
            _read.clear()
        _read[name] = (seen, data)
    return data


@cache
def _shipped_declarations() -> dict[str, Path]:
    """Relation name -> the shipped rule file that declares it, as an absolute path."""
    from verifier.engine.loader import load_program

    shipped = shipped_rules_dir()
    files = [(str(f), data) for f in shipped_files(shipped) if (data := _bytes(f)) is not None]
    program = compiled_shipped(files)  # named by absolute paths, as the parse below names them
    if program is None:
        try:
            program = load_program([shipped])
        except TopologError:  # a broken install: no hint is better than a second error
            return {}
    return {d.name: Path(d.loc.file) for d in program.declarations}


def shipped_declaration_hint(relation: str) -> str | None:
    """Where the shipped pack declares `relation`, for a rule set loaded without it; None if it does not."""
    found = _shipped_declarations().get(relation)
    if found is None:
        return None
    file = display_path(found)  # named as reports name it, from the working directory of this run
    if file.name == SCHEMA_NAME:
        return (
            f"topolog declares it in its shipped {file}, which is not loaded: drop --no-shipped-rules, "
            f"or add that file with --rules {file}"
        )
    schema = display_path(shipped_rules_dir()) / SCHEMA_NAME
    return (
        f"topolog's shipped rule file {file} derives it, and the shipped rules are not loaded: drop "
        f"--no-shipped-rules, or add {file} with --rules (with {schema} and the shipped files it reads)"
    )
