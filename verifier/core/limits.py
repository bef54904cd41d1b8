"""Resource limits on everything topolog reads and derives, and the one place they are set.

Hostile or mistaken input (`/dev/zero` as an inventory, `count: 2**70`, `n[1-100000000]`,
a rule set deriving 10^9 tuples) must stop at once with exit 2 and a sentence saying
which limit it hit, never run until the machine kills it. Every limit is far above what
a real cluster needs (a 131,072-GPU fleet, a 100,000-node Slurm tree) and a user can
raise any of them (`--input-limit NAME=VALUE`).

The active limits live in a context variable, so loaders deep in the call tree read them
with `current_limits()` and nothing threads a parameter through every function:

    with use_limits(Limits().with_overrides({"file_size": "1GiB"})):
        inventory = load_inventory(paths)

A context variable is not inherited by threads started with `threading.Thread`; work
handed to another thread must carry `contextvars.copy_context()` along.
"""

from __future__ import annotations

import contextvars
import os
import re
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import ClassVar

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.numerals import underscore_problem

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
"""The engines store integers as 64-bit; a figure outside this range is refused where it is read."""

_KIB = 1024
_MIB = 1024 * _KIB
_GIB = 1024 * _MIB


class LimitError(TopologError):
    """A `--input-limit NAME=VALUE` (or `with_overrides` entry) that cannot be read.

    `problem` is the sentence without a location, for a CLI layer that reports bad flag
    values its own way (e.g. `click.BadParameter(err.problem)`).
    """

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__([Diagnostic(SourceLocation("--input-limit"), problem)])


# Its __init__ (which checks every value) and immutability come from the decorator; equality, hash and
# repr (which the evaluation cache's key spells out) from verifier.core.frozen, not compiled at every start.
@dataclass(frozen=True, repr=False, eq=False)
class Limits(Frozen):
    """Upper bounds on input and derived data. Sizes are bytes, everything else a count."""

    file_size: int = 256 * _MIB
    """Bytes of one input file (inventory, jobs, principals, waivers, baseline, thresholds, XML).
    A 131,072-GPU inventory written with templates is a few KB; written out in full by an
    importer it is tens of MB (and then over yaml_size)."""
    yaml_size: int = 6 * _MIB
    """Bytes of one YAML (or JSON read as YAML) document: inventory, jobs, principals, waivers,
    baseline, thresholds, configuration. Read into memory a document costs 90 bytes per byte
    written out as an importer writes it, and up to 300 per byte for dense flow lists
    (`[[],[],...]`, measured with PyYAML's libyaml parser): 6 MiB stays under 2 GiB whatever it
    holds. Checked before the document is parsed."""
    id_length: int = 1024
    """Characters of one id or name (objects, links, templates, jobs, principals, label keys)."""
    nesting_depth: int = 100
    """Levels of nesting in one YAML, JSON or XML document (hwloc dumps reach about 20)."""
    template_count: int = 1_000_000
    """The `count:` of one entry (instances of one template or object)."""
    expanded_objects: int = 1_800_000
    """Objects and links an inventory may expand to (counted before expanding); the 131,072-GPU
    fleet of benchmarks/verify_bench.py has 1,483,280 and peaks at 1.1 GiB. An object costs about
    1 KB in a run, a link less: 1.8 million bare objects would peak near 1.7 GiB."""
    hostlist_size: int = 500_000
    """Hosts one Slurm hostlist expression may name (`n[1-100000000]` is refused unexpanded), and
    hosts one Slurm import may make, all its hostlists together. A host costs about 2.7 KB in a
    verify (200,000 took 536 MB) and 2 KB in an import: 500,000 stay near 1.3 GiB, and a
    100,000-node tree named in several partitions stays well within."""
    list_length: int = 5_000_000
    """Items of one YAML sequence (or elements of one XML document)."""
    matrix_cells: int = 250_000
    """Cells of one device matrix (`nvidia-smi topo -m`, `rocm-smi --showtopo`), counted from its
    header before any row is read: a 500-device matrix. A real host prints at most a few dozen
    devices (about 1,000 cells); importing a 1,450-GPU matrix (2.1 million cells) needed 6 GB."""
    derived_tuples: int = 25_000_000
    """Tuples all derived relations together may hold in one evaluation. A 131,072-GPU fleet
    derives under 20 million; DuckDB holds 25-40 bytes per tuple, so 25 million stays near 1 GB
    (the memory engine, at about 170 bytes a tuple, is held to engine_memory as well)."""
    fixpoint_rounds: int = 20_000
    """Rounds a recursive stratum that computes head values may take to reach its fixpoint: one that
    computes a new number every round (`n(Y) :- n(X), Y = X + 1`) never ends. A recursion that only
    pairs up stored values (containment, reachability) ends by itself and is bounded by
    derived_tuples instead (verifier.engine.strata.combines_stored_values)."""
    policy_count: int = 5_000
    """Cedar policies (statements) one policy directory may hold, all its files together, counted
    before any is parsed. Each is parsed and validated on its own so that a problem names its line:
    about 1.5 ms of CPU a policy (100,000 took over 60 s on a loaded host), so 5,000 stay near 7 s.
    A directory written by hand holds tens."""
    engine_memory: int = 1 * _GIB
    """Bytes the engine may use: DuckDB's `memory_limit`; for the memory engine, the bindings one
    join step holds and the tuples it derives, each at its measured cost (verifier.engine.memory_backend).
    A 131,072-GPU fleet evaluates within 768 MiB in DuckDB."""

    SIZE_FIELDS: ClassVar[frozenset[str]] = frozenset({"file_size", "yaml_size", "engine_memory"})

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LimitError(f"limit {f.name} must be a positive whole number, got {value!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """Every limit's name, as `--input-limit NAME=VALUE` takes it."""
        return tuple(f.name for f in fields(cls))

    def with_overrides(self, overrides: Mapping[str, str | int]) -> Limits:
        """These limits with some replaced by user text such as {"file_size": "1GiB", "derived_tuples": "5e8"}.

        Sizes take a whole number of bytes or a number with an exact unit (B, KB, MB, GB, TB,
        KiB, MiB, GiB, TiB); counts take a whole number, `_` separators allowed, or with a
        decimal suffix k, M, G. Anything else (a bare `64M`, `1,000`, a fraction of a byte,
        an unknown name) raises LimitError: a limit is never guessed.
        """
        changes: dict[str, int] = {}
        known = self.names()
        for raw_name, raw_value in overrides.items():
            name = raw_name.strip().replace("-", "_")
            if name not in known:
                hint = _close(name, known)
                raise LimitError(f"unknown limit {raw_name!r}{hint}; expected one of: {', '.join(known)}")
            changes[name] = parse_limit_value(name, raw_value)
        return replace(self, **changes) if changes else self

    def with_override_text(self, items: tuple[str, ...] | list[str]) -> Limits:
        """`with_overrides` from `NAME=VALUE` strings, as a repeated CLI flag gives them."""
        pairs: dict[str, str] = {}
        for item in items:
            name, sep, value = item.partition("=")
            if not sep or not name.strip() or not value.strip():
                raise LimitError(f"cannot read {item!r}; expected NAME=VALUE such as file_size=1GiB")
            pairs[name] = value
        return self.with_overrides(pairs)


def hint(name: str) -> str:
    """The clause every limit error ends with: which flag raises the limit."""
    return f"raise it with --input-limit {name}=VALUE if this input is genuine"


def exceeded(name: str, found: str, limits: Limits | None = None) -> str:
    """`found` (what the input would need) against limit `name`, as one sentence."""
    active = limits or current_limits()
    value = getattr(active, name)
    shown = format_size(value) if name in Limits.SIZE_FIELDS else f"{value:,}"
    return f"{found}, over the limit {name} = {shown}; {hint(name)}"


def refuse_large_text(text: str, filename: str, name: str = "yaml_size", what: str = "YAML document") -> None:
    """Refuse `text` when its UTF-8 form is over the byte limit `name`, before it is parsed.

    The error names the line where the limit is crossed, so that a user sees how far in the
    document it is (a whole-file size has no better line to name).
    """
    limit: int = getattr(current_limits(), name)
    if len(text) <= limit // 4:  # at most 4 bytes a character: no encoding needed to know it fits
        return
    encoded = text.encode("utf-8", "surrogatepass")
    size = len(encoded)
    if size <= limit:
        return
    # The character where the byte count passes the limit: at most `limit` characters in.
    chars = len(encoded[: limit + 1].decode("utf-8", "ignore"))
    del encoded
    line = text.count("\n", 0, max(chars - 1, 0)) + 1
    found = f"this {what} is {format_size(size)} (the limit is crossed on this line)"
    raise TopologError.at(SourceLocation(filename, line), exceeded(name, found))


def refuse_matrix(devices: int, where: SourceLocation, tool: str) -> None:
    """Refuse a device matrix of `devices` columns (as many rows) past `matrix_cells`, from its header
    alone: before a row is read or a link made (each cell becomes a pair to judge).
    """
    cells = devices * devices
    if cells > current_limits().matrix_cells:
        found = f"this {tool} matrix has {devices:,} devices, {cells:,} cells"
        raise TopologError.at(where, exceeded("matrix_cells", found))


def out_of_memory(what: str = "this run") -> TopologError:
    """The refusal for a MemoryError: which bounds keep a run within memory, and how to move them."""
    limits = current_limits()
    return TopologError.at(
        SourceLocation("topolog"),
        f"{what} ran out of memory before any bound stopped it (engine_memory = "
        f"{format_size(limits.engine_memory)}, yaml_size = {format_size(limits.yaml_size)}, "
        f"expanded_objects = {limits.expanded_objects:,}, derived_tuples = {limits.derived_tuples:,}); "
        "nothing is verified. Lower one of them with --input-limit NAME=VALUE so that it refuses "
        "this input early, or run on a machine with more memory (docs/limits.md)",
    )


_SIZE_UNITS: dict[str, int] = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": _KIB,
    "MiB": _MIB,
    "GiB": _GIB,
    "TiB": 1024 * _GIB,
}
_COUNT_UNITS: dict[str, int] = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9}
_VALUE_RE = re.compile(r"^(?P<num>[0-9][0-9_]*(?:\.[0-9]+)?)\s*(?P<unit>[A-Za-z]*)$")


def parse_limit_value(name: str, raw: str | int) -> int:
    """A limit value as the user wrote it, read exactly or refused (LimitError)."""
    if isinstance(raw, bool):
        raise LimitError(f"limit {name} must be a number, got {raw!r}")
    if isinstance(raw, int):
        value = raw
    else:
        text = raw.strip()
        m = _VALUE_RE.match(text)
        is_size = name in Limits.SIZE_FIELDS
        units = _SIZE_UNITS if is_size else _COUNT_UNITS
        expected = (
            "a number of bytes or a size with an exact unit such as 512MiB, 2GiB or 500MB"
            if is_size
            else "a whole number such as 5000000, 5_000_000 or 5M"
        )
        if m is None or m.group("unit") not in units or (is_size and not m.group("unit") and "." in text):
            raise LimitError(f"cannot read {text!r} for limit {name}; expected {expected}")
        if (problem := underscore_problem(m.group("num"))) is not None:
            raise LimitError(f"limit {name}: {problem}")
        from decimal import Decimal, InvalidOperation  # only for a limit written as text: not at every start

        try:
            exact = Decimal(m.group("num").replace("_", "")) * units[m.group("unit")]
        except InvalidOperation:
            raise LimitError(f"cannot read {text!r} for limit {name}; expected {expected}") from None
        if exact != exact.to_integral_value():
            raise LimitError(f"{text!r} for limit {name} is not a whole number; expected {expected}")
        value = int(exact)
    if value < 1:
        raise LimitError(f"limit {name} must be at least 1, got {raw!r}")
    if value > INT64_MAX:
        raise LimitError(f"limit {name} = {raw!r} does not fit 64 bits")
    return value


def format_size(n: int) -> str:
    """Bytes for a message: `256 MiB`, `8 GiB`, `1,000 bytes`."""
    for unit, size in (("TiB", 1024 * _GIB), ("GiB", _GIB), ("MiB", _MIB), ("KiB", _KIB)):
        if n >= size and n % size == 0:
            return f"{n // size:,} {unit}"
    return f"{n:,} bytes"


def _close(name: str, known: tuple[str, ...]) -> str:
    import difflib  # only when a name is wrong: not at every start

    match = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


_ACTIVE: contextvars.ContextVar[Limits] = contextvars.ContextVar("topolog_limits", default=Limits())  # noqa: B039


def current_limits() -> Limits:
    """The limits in force here (the defaults unless a caller set others with `use_limits`)."""
    return _ACTIVE.get()


@contextmanager
def use_limits(limits: Limits) -> Iterator[Limits]:
    """Make `limits` the active ones for the body of the `with` (nested uses restore the outer)."""
    token = _ACTIVE.set(limits)
    try:
        yield limits
    finally:
        _ACTIVE.reset(token)


_READ: dict[tuple[int, int], str] = {}
"""The regular files this run has read, by (device, inode): a report must never replace one."""


def forget_reads() -> None:
    """Start a new run: no file has been read yet (the CLI calls it once per command)."""
    _READ.clear()


def read_by_this_run(path: str | Path) -> str | None:
    """The name an input of this run was read under, when `path` is that same file (a link or
    another name for it included); None when this run has not read it.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    return _READ.get((st.st_dev, st.st_ino)) if stat.S_ISREG(st.st_mode) else None


def read_limited(path: str | Path, name: str | None = None, what: str = "file") -> bytes:
    """A file's bytes, refusing more than `file_size` of them, with a located TopologError.

    Regular files are checked by size before anything is read. A FIFO (`<(cmd)`, a pipe
    given as /dev/stdin) is read up to the limit; it is opened non-blocking, so a FIFO
    with no writer reads as empty instead of waiting forever. Device files, sockets and
    folders are refused: `/dev/zero` would never end and `/dev/tty` would wait for a key.
    """
    shown = name if name is not None else str(path)
    loc = SourceLocation(shown)
    limit = current_limits().file_size
    try:
        st = os.stat(path)
    except OSError as err:
        # A link to nothing is there (`ls` lists it, as a folder listing found it): "no such
        # file" alone sent the user looking for a file that is in plain sight.
        if os.path.islink(path):
            raise TopologError.at(
                loc,
                f"cannot read {what}: it is a symbolic link that leads to no file (dangling, or a loop of links); "
                "expected a file",
            ) from None
        raise TopologError.at(loc, f"cannot read {what}: {err.strerror or err}") from None
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise TopologError.at(loc, f"cannot read {what}: it is a folder; expected a file")
    if stat.S_ISREG(mode):
        if st.st_size > limit:
            raise TopologError.at(loc, exceeded("file_size", f"{what} is {format_size(st.st_size)}"))
        _READ.setdefault((st.st_dev, st.st_ino), shown)
    elif not stat.S_ISFIFO(mode):
        kind = "a device file" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
        raise TopologError.at(loc, f"cannot read {what}: it is {kind}; expected a regular file (or a pipe)")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise TopologError.at(loc, f"cannot read {what}: {err.strerror or err}") from None
    try:
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # non-blocking only for the open; reads wait for the writer
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                raise TopologError.at(loc, exceeded("file_size", f"{what} is larger than {format_size(limit)}"))
    except OSError as err:
        raise TopologError.at(loc, f"cannot read {what}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def read_regular(path: str | Path, name: str | None = None, what: str = "file") -> bytes:
    """A regular file's bytes (a link to one is followed), refusing more than `file_size`, never waiting.

    For a file read again and again (`serve` reads its inputs at every reload, twice per build, and
    its token file): a pipe could give its bytes once at most, and one that a process holds open
    without writing would have the read wait for ever (read_limited takes pipes, for `<(cmd)` given
    once). The kind is checked before opening, so a device is not even opened, and again on what was
    opened (without waiting), so a swap between the two is caught as well.
    """
    shown = name if name is not None else str(path)
    loc = SourceLocation(shown)
    limit = current_limits().file_size
    try:
        mode = os.stat(path).st_mode
        fd = (
            os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
            if stat.S_ISREG(mode)
            else -1
        )
    except OSError as err:
        raise TopologError.at(loc, f"cannot read {what}: {err.strerror or err}") from None
    if fd < 0:
        raise TopologError.at(loc, f"cannot read {what}: it is {file_kind(mode)}; expected a regular file")
    chunks: list[bytes] = []
    total = 0
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise TopologError.at(loc, f"cannot read {what}: it is {file_kind(st.st_mode)}; expected a regular file")
        if st.st_size > limit:
            raise TopologError.at(loc, exceeded("file_size", f"{what} is {format_size(st.st_size)}"))
        # In chunks, as read_limited does: no buffer of the whole limit is asked for a small file.
        while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew past the limit while being read
                raise TopologError.at(loc, exceeded("file_size", f"{what} is larger than {format_size(limit)}"))
    except OSError as err:
        raise TopologError.at(loc, f"cannot read {what}: {err.strerror or err}") from None
    finally:
        os.close(fd)
    _READ.setdefault((st.st_dev, st.st_ino), shown)
    return b"".join(chunks)


def file_kind(mode: int) -> str:
    """What a file system entry of `mode` is, as a message says it ("a pipe", "a folder")."""
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"
