"""Checks on inventory input: the helpers that read YAML values (collecting one clear
problem per mistake) and the whole-inventory checks run once everything is expanded
(dangling link endpoints, unknown parents and models, containment cycles).

Nothing here raises on the first problem: every `Problems` method records a Diagnostic
and returns None, so the loader can carry on and report everything at once. Everything
is reported, but each mistake once: the same problem on every copy of a template line is
one error with a count, and errors that a reported mistake explains (links to objects an
entry failed to define) are counted against it instead of listed.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.limits import INT64_MAX, INT64_MIN, current_limits, exceeded
from verifier.core.suggest import look_alike, look_alike_note
from verifier.sources.inventory.model import CABLES_UNMADE, CableColumns, Inventory, Link, cables_of
from verifier.sources.inventory.raw_files import ReadFile, read_files
from verifier.sources.inventory.software import release_shape_problem
from verifier.sources.inventory.units import UnitError, comma_problem
from verifier.sources.inventory.yaml_source import YList, YMap, decode_utf8, load_yaml_text

T = TypeVar("T")

MAX_PROBLEMS = 1000
"""Beyond this, more diagnostics only bury the first ones (a typo in a 16k-node template)."""

# A contained object must sit strictly below its parent in this ranking; devices
# (rank 4) may nest in devices (a core in a CPU, a cache in a core).
_RANK = {"fleet": 0, "pod": 1, "rack": 2, "node": 3}

# Which catalogue model kinds fit an object kind (objects not listed take any model).
MODEL_FITS: dict[str, frozenset[str]] = {
    "gpu": frozenset({"gpu", "hpu"}),
    "fpga": frozenset({"fpga"}),
    "cpu": frozenset({"cpu"}),
    "socket": frozenset({"cpu", "system"}),
    "nic": frozenset({"nic", "dpu"}),
    "nvswitch": frozenset({"nvswitch"}),
    "pcie_switch": frozenset({"pcie_switch"}),
    "switch": frozenset({"switch"}),
    "memory": frozenset({"memory"}),
    "node": frozenset({"system"}),
    "rack": frozenset({"system"}),
}


# Characters no name, id or label value may hold: C0 and C1 controls (NUL, escape, a line
# break: they forge report lines and break JUnit XML), lone surrogates (not UTF-8: DuckDB
# cannot store them), line and paragraph separators, and the bidirectional overrides and
# isolates that make text display as something else ("Trojan source").
_BAD_CHARS = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
    # Invisible: the Arabic letter mark, zero-width space/joiners and the LRM/RLM marks, word
    # joiner and invisible operators, the BOM, and tag characters. `n1\u200b` prints as `n1`
    # but is another id, so a finding or a waiver would name what nobody can see.
    "\u061c\u200b-\u200f\u2060-\u2064\ufeff\U000e0000-\U000e007f]"
)
_INVISIBLE = frozenset("\u061c\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff")
_MULTILINE_OK = frozenset("\n\r\t")


def text_problem(value: str, *, multiline: bool = False) -> str | None:
    """What makes `value` unfit as a name, id or label value, or None when it is fine.

    `multiline` (free text such as a description) lets line breaks (LF, CR) and tabs through.
    """
    if value.isascii() and value.isprintable():  # the common case, checked at C speed
        return None
    for m in _BAD_CHARS.finditer(value):
        ch = m.group(0)
        if multiline and ch in _MULTILINE_OK:
            continue
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            kind = "a lone surrogate, which is not valid UTF-8"
        elif code in (0x2028, 0x2029):
            kind = "a line or paragraph separator"
        elif ch in _INVISIBLE or 0xE0000 <= code <= 0xE007F:
            kind = "an invisible format character"
        elif code >= 0x202A:
            kind = "a bidirectional text control"
        else:
            kind = "a control character"
        return (
            f"holds {kind} (U+{code:04X}) at character {m.start() + 1}; "
            "expected printable text without control characters"
        )
    return None


def name_problem(value: str) -> str | None:
    """`text_problem`, and the `id_length` limit: for ids and names."""
    limit = current_limits().id_length
    if len(value) > limit:
        return exceeded("id_length", f"is {len(value):,} characters long")
    return text_problem(value)


def int64_problem(value: int) -> str | None:
    """Why `value` cannot be stored (engines keep 64-bit integers), or None."""
    if INT64_MIN <= value <= INT64_MAX:
        return None
    return f"{value} does not fit in 64 bits; expected a whole number between {INT64_MIN} and {INT64_MAX}"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """`; did you mean 'x'?` for a close match (a look-alike first, its odd letter named), else the empty string."""
    known = list(choices)
    same = look_alike(word, known)
    if same is not None:
        return f"; did you mean {same!r}?{look_alike_note(word, same)}"
    match = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"; did you mean {match[0]!r}?" if match else ""


def one_of(choices: Collection[str]) -> str:
    return ", ".join(sorted(choices))


def misspelled(m: YMap, allowed: Collection[str]) -> dict[str, str]:
    """Keys of `allowed` missing from `m` that an unknown key of `m` is close to: {meant: written}.

    A required key that is missing because it was misspelled is one mistake, not two: the
    unknown key (with its did-you-mean) says it all.
    """
    out: dict[str, str] = {}
    for key in m:
        if key not in allowed:
            match = difflib.get_close_matches(key, list(allowed), n=1, cutoff=0.6)
            if match and match[0] not in m:
                out.setdefault(match[0], key)
    return out


class Problems:
    """Collects diagnostics; small typed readers for YAML values.

    One mistake should read as one error, however many times it is expanded: `add(...,
    same=...)` folds every later problem of the same kind at the same place (the copies
    of one template line) into the first, with a count; `hide(cause)` counts a follow-on
    error that is not listed because the problem reported at `cause` explains it.
    """

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []
        self._seen: set[tuple[SourceLocation, str]] = set()
        self._groups: dict[tuple[SourceLocation, str], int] = {}
        self._copies: dict[int, int] = {}
        self._hidden: dict[SourceLocation, int] = {}

    def add(self, loc: SourceLocation, message: str, *, same: str | None = None) -> None:
        # Template bodies are read once, but an error in an instance-dependent field can
        # come up once per instance: report each place+message once.
        key = (loc, message)
        if key in self._seen:
            return
        if same is not None:
            first = self._groups.get((loc, same))
            if first is not None:
                self._seen.add(key)
                self._copies[first] = self._copies.get(first, 0) + 1
                return
        if len(self.items) >= MAX_PROBLEMS:
            return
        self._seen.add(key)
        if same is not None:
            self._groups[(loc, same)] = len(self.items)
        self.items.append(Diagnostic(loc, message))

    def add_all(self, err: TopologError) -> None:
        """Every problem an error holds (a file that could not be read or parsed), among the others."""
        for d in err.diagnostics:
            self.add(d.location, d.message)

    def reported(self, loc: SourceLocation, same: str) -> bool:
        """Whether a problem of kind `same` is already reported at `loc` (later ones only count)."""
        return (loc, same) in self._groups

    def hide(self, cause: SourceLocation) -> None:
        self._hidden[cause] = self._hidden.get(cause, 0) + 1

    def diagnostics(self) -> list[Diagnostic]:
        """Every problem as it is shown: with its count of copies and of follow-on errors."""
        out: list[Diagnostic] = []
        told: set[SourceLocation] = set()
        for i, d in enumerate(self.items):
            message = d.message
            copies = self._copies.get(i, 0)
            if copies:
                message += f" (and {copies} more {'copy' if copies == 1 else 'copies'})"
            hidden = self._hidden.get(d.location, 0)
            if hidden and d.location not in told:
                told.add(d.location)
                follow = "error that follows" if hidden == 1 else "errors that follow"
                message += f" ({hidden} {follow} from it are not listed)"
            out.append(Diagnostic(d.location, message) if message != d.message else d)
        return out

    def raise_if_any(self) -> None:
        if self.items:
            raise TopologError(self.diagnostics())

    def __bool__(self) -> bool:
        return bool(self.items)

    # --- reading YAML -------------------------------------------------------------
    def keys(
        self,
        m: YMap,
        allowed: Collection[str],
        what: str,
        required: Collection[str] = (),
        *,
        one_per_typo: bool = False,
    ) -> bool:
        """Report unknown keys (with a did-you-mean) and missing required ones.

        `one_per_typo`: a required key that is missing because an unknown key is its
        misspelling is not reported again (the did-you-mean already names it).
        """
        ok = True
        for key in m:
            if key not in allowed:
                ok = False
                split = _split_number(m, key, what)
                if split is not None:
                    self.add(*split)
                    continue
                self.add(
                    m.key_loc(key),
                    f"unknown key {key!r} in {what}{did_you_mean(key, allowed)} (expected one of: {one_of(allowed)})",
                )
        meant = misspelled(m, allowed) if one_per_typo and not ok else {}
        for key in required:
            if key not in m and key not in meant:
                ok = False
                self.add(m.loc, f"{what} has no {key!r}; it is required")
        return ok

    def mapping(self, m: YMap, key: str, what: str) -> YMap | None:
        value = m.get(key)
        if value is None:
            return None
        if not isinstance(value, YMap):
            self.add(m.key_loc(key), f"{key!r} in {what} must be a mapping (key: value lines)")
            return None
        return value

    def seq(self, m: YMap, key: str, what: str) -> YList | None:
        value = m.get(key)
        if value is None:
            return None
        if not isinstance(value, YList):
            self.add(m.key_loc(key), f"{key!r} in {what} must be a list")
            return None
        return value

    def text(self, m: YMap, key: str, what: str, *, multiline: bool = False) -> str | None:
        """A symbol-valued field: strings as written; integers are accepted as text.

        Control characters and lone surrogates are refused here, where the value was
        written (`multiline` lets a free-text field keep line breaks and tabs).
        """
        value = m.get(key)
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str | int):
            text = str(value)
            if not text.strip():
                self.add(m.key_loc(key), f"{key!r} in {what} is empty")
                return None
            problem = text_problem(text, multiline=multiline) if isinstance(value, str) else None
            if problem is not None:
                self.add(m.key_loc(key), f"{key!r} in {what} {problem}")
                return None
            return text
        self.add(m.key_loc(key), f"{key!r} in {what} must be a single value, not a list or mapping")
        return None

    def choice(self, m: YMap, key: str, what: str, choices: Collection[str]) -> str | None:
        value = self.text(m, key, what)
        if value is None:
            return None
        if value not in choices:
            self.add(
                m.key_loc(key),
                f"unknown {key} {value!r} in {what}{did_you_mean(value, choices)} (expected one of: {one_of(choices)})",
            )
            return None
        return value

    def unit(self, m: YMap, key: str, what: str, parse: Callable[[object], int]) -> int | None:
        value = m.get(key)
        if value is None:
            return None
        try:
            return parse(value)
        except UnitError as err:
            self.add(m.key_loc(key), f"{key!r} in {what}: {err}")
            return None

    def str_map(self, m: YMap, key: str, what: str) -> dict[str, str] | None:
        """A mapping of plain words (labels, software): values become symbols."""
        sub = self.mapping(m, key, what)
        if sub is None:
            return None
        out: dict[str, str] = {}
        for k in sub:
            problem = name_problem(k)
            if problem is not None:
                self.add(sub.key_loc(k), f"key {k!r} in {key} of {what} {problem}")
                continue
            v = self.text(sub, k, f"{key} of {what}")
            if v is not None and key == "software" and (problem := release_shape_problem(k, v)) is not None:
                self.add(sub.key_loc(k), f"{k!r} in {key} of {what}: {problem}")
            elif v is not None:
                out[k] = v
        return out

    def int_map(self, m: YMap, key: str, what: str) -> dict[str, int] | None:
        sub = self.mapping(m, key, what)
        if sub is None:
            return None
        out: dict[str, int] = {}
        for k, v in sub.items():
            problem = name_problem(k)
            if problem is not None:
                self.add(sub.key_loc(k), f"key {k!r} in {key} of {what} {problem}")
            elif isinstance(v, bool) or not isinstance(v, int):
                self.add(sub.key_loc(k), f"{k!r} in {key} of {what} must be a whole number, got {v!r}")
            elif (problem := int64_problem(v)) is not None:
                self.add(sub.key_loc(k), f"{k!r} in {key} of {what}: {problem}")
            elif v < 0:
                # Each is a count or a figure in its unit (slots, modes, MB/s, GFLOPS, profiles):
                # a negative one is no figure, and summed (demand_mbps) it would hide an overload.
                self.add(sub.key_loc(k), f"{k!r} in {key} of {what} is {v}; expected a whole number, 0 or more")
            else:
                out[k] = v
        return out

    def words(self, m: YMap, key: str, what: str) -> list[str] | None:
        items = self.seq(m, key, what)
        if items is None:
            return None
        out: list[str] = []
        for i, item in enumerate(items):
            if isinstance(item, str) and (problem := name_problem(item)) is not None:
                self.add(items.item_loc(i), f"item {item!r} of {key!r} in {what} {problem}")
            elif isinstance(item, str | int) and not isinstance(item, bool):
                out.append(str(item))
            else:
                self.add(items.item_loc(i), f"items of {key!r} in {what} must be plain words")
        return out

    def known_words(self, m: YMap, key: str, what: str, allowed: Collection[str], noun: str) -> list[str]:
        """`words`, keeping those in `allowed` and reporting the others with a did-you-mean."""
        out: list[str] = []
        for word in self.words(m, key, what) or []:
            if word in allowed:
                out.append(word)
            else:
                self.add(
                    m.key_loc(key),
                    f"unknown {noun} {word!r} in {what}{did_you_mean(word, allowed)} "
                    f"(expected one of: {one_of(allowed)})",
                )
        return out


# Keys whose figures are counts: a comma in them can only be a thousands separator.
_WHOLE_KEYS = frozenset({"count", "start", "lanes", "generation", "level", "index", "links", "cores"})


def _split_number(m: YMap, key: str, what: str) -> tuple[SourceLocation, str] | None:
    """A key made by a comma in a number inside `{...}`: `{bandwidth: 3,5 TB/s}` is read by
    YAML as `bandwidth: 3` and a key `5 TB/s`. Returns the error to report instead of
    "unknown key", at the figure's key, or None when `key` is not such a fragment.
    """
    if m.get(key) is not None or not key[:1].isdigit():
        return None
    names = list(m)
    at = names.index(key)
    if at == 0:
        return None
    before = names[at - 1]
    value = m[before]
    here, there = m.key_loc(key), m.key_loc(before)
    if isinstance(value, bool) or not isinstance(value, int) or here.line != there.line:
        return None
    problem = comma_problem(f"{value},{key}", before, whole=before in _WHOLE_KEYS)
    if problem is None:
        return None
    return there, (
        f"{before!r} in {what}: {problem} (inside {{...}} a comma separates entries, so YAML read "
        f"'{before}: {value}' and a key {key!r})"
    )


def failure_cause(oid: str, failed: Mapping[str | None, SourceLocation]) -> SourceLocation | None:
    """Where the error is reported that explains why `oid` does not exist, if one does.

    `failed` holds what entries whose definition failed would have made: an id stands for
    itself and every id below it (`dgx03` covers `dgx03/gpu2`), None for any id.
    """
    if not failed:
        return None
    cause = failed.get(None)
    cur = oid
    while cause is None:
        cause = failed.get(cur)
        if "/" not in cur:
            break
        cur = cur.rsplit("/", 1)[0]
    return cause


def may_nest(kind: str, parent_kind: str) -> bool:
    """Whether an object of `kind` may sit in one of `parent_kind` (strictly below it in _RANK)."""
    crank = _RANK.get(kind, 4)
    prank = _RANK.get(parent_kind, 4)
    return not (crank < prank or (crank == prank and crank < 4 and kind != "pod"))


CableRun = tuple[str, str, int, Sequence[str], Sequence[str]]
"""Cables one `foreach` made in one pass, every end an object then and none a loop (templates.py
expand_link): the first and last id, how many, and their ends (a side and b side)."""


def check_inventory(
    inv: Inventory,
    problems: Problems,
    explicit_parents: Iterable[str] = (),
    failed: Mapping[str | None, SourceLocation] | None = None,
    *,
    ids_checked: bool = False,
    sound: AbstractSet[str] = frozenset(),
    cabled: Sequence[CableRun] = (),
    removed: AbstractSet[str] = frozenset(),
) -> None:
    """Whole-inventory checks, after every file is merged and every template expanded.

    `ids_checked`: every id and label was checked where it was read (the YAML loader), so
    the scan for control characters in ids and labels (for importers) is skipped.

    Runs once per object of a fleet, so verdicts are cached per (kind, parent kind) and
    per (kind, model) pair, and cycles are only searched from objects that named their
    parent with `parent:` (nesting alone cannot make a cycle). A missing object that a
    failed definition explains (`failed`, see `failure_cause`) is not reported again;
    the same problem on every copy of one line is reported once, with a count.

    `sound`: stamped nodes (Inventory.stamped) whose template's plan was checked whole, once,
    before anything else went wrong: what their plan made (`origin`) passes every check here,
    so it is not looked at again (a million objects and links at fleet scale).

    `cabled`: runs of cables whose ends were all objects when they were made; unless an end is
    among the objects `removed` since, they are passed over while the run is whole (see _suspects).
    """
    failed = failed or {}
    suggestions = 20  # a did-you-mean scans ids: only for the first few missing ids
    hints: dict[str, str] = {}  # one message per missing id, so that repeats of it are not counted as copies

    def explained(oid: str) -> bool:
        cause = failure_cause(oid, failed)
        if cause is not None:
            problems.hide(cause)
        return cause is not None

    def hint(missing: str, loc: SourceLocation, same: str) -> str:
        nonlocal suggestions
        if missing in removed:
            # Taken out on purpose (a decommissioned node, a device sent back): what still names it
            # was written before the removal was read, or beside it (`parent:`); no near id helps.
            return "; an override removed it ('remove: true'): expected nothing to name it"
        if missing not in hints:
            hints[missing] = ""
            # Copies of one line fold into its first report: only that one needs a hint.
            if suggestions > 0 and not problems.reported(loc, same):
                suggestions -= 1
                hints[missing] = did_you_mean(missing, _near(missing, objects))
        return hints[missing]

    # Looked up without making the objects of stamped nodes not made yet (Inventory.found): those of
    # `sound` nodes are passed over; any other is made where it is read.
    objects = inv.found
    if not ids_checked:
        _check_ids(inv, problems)
        _check_labels(inv, problems)
    nesting_ok: dict[tuple[str, str], bool] = {}
    model_ok: dict[tuple[str, str], str | None] = {}
    for obj in inv.objects_but(sound) if sound else inv.objects.values():
        if obj.parent is not None:
            par = objects.get(obj.parent)
            if par is None:
                if not explained(obj.parent):
                    problems.add(
                        obj.loc,
                        f"{obj.id!r} names parent {obj.parent!r}, which does not exist"
                        f"{hint(obj.parent, obj.loc, 'no-parent')}",
                        same="no-parent",
                    )
            else:
                pair = (obj.kind, par.kind)
                ok = nesting_ok.get(pair)
                if ok is None:
                    ok = nesting_ok[pair] = may_nest(obj.kind, par.kind)
                if not ok:
                    problems.add(
                        obj.loc,
                        f"a {obj.kind} ({obj.id!r}) cannot be inside a {par.kind} ({par.id!r})",
                        same="nesting",
                    )
        if obj.model is not None:
            key = (obj.kind, obj.model)
            if key not in model_ok:
                model_ok[key] = model_problem(inv, obj.kind, obj.model)
            msg = model_ok[key]
            if msg is not None:
                problems.add(obj.loc, msg.format(id=obj.id), same=msg)
    _check_cycles(inv, problems, explicit_parents)
    # Only a link with a missing end or a loop can be wrong: found in one pass at C speed. The
    # links of sound nodes are passed over: they need not be made for this (Inventory.links_but).
    runs = inv.unmade_cables()  # (before the table: made meanwhile, it holds no placeholder)
    suspect = _suspects(
        _with_suspect_cables(inv.links_but(sound, cables=True), runs, removed),
        objects,
        sound,
        cabled,
        removed,
    )
    for link in suspect:
        for end in (link.a, link.b):
            if end not in objects and not explained(end):
                problems.add(
                    link.loc,
                    f"link endpoint {end!r} does not exist{hint(end, link.loc, 'no-endpoint')}",
                    same="no-endpoint",
                )
        if link.a == link.b:
            problems.add(link.loc, f"link {link.id!r} connects {link.a!r} to itself", same="self-link")
    for mem, _dev in inv.serves:
        m = objects.get(mem)
        if m is not None and m.kind not in ("memory", "cache"):
            problems.add(
                m.loc, f"only memory and cache objects can serve devices; {mem!r} is a {m.kind}", same="serves"
            )


def _with_suspect_cables(
    links: Mapping[str, Link], runs: Mapping[str, CableColumns], removed: AbstractSet[str]
) -> Mapping[str, Link]:
    """`links` without the placeholders of runs of cables not made yet (Inventory.unmade_cables):
    the loader keeps only runs whose ends were all objects and none a loop when they were made
    (Sink.cabled's), so those pass every check of _suspects; a run with an end `removed` since is
    put back as its cables, in its place, to be looked at one by one.
    """
    if not runs:
        return links
    out: dict[str, Link] = {}
    for lid, lk in links.items():
        if lk.loc is not CABLES_UNMADE:
            out[lid] = lk
            continue
        run = runs[lid]
        if removed and not (removed.isdisjoint(run[1]) and removed.isdisjoint(run[2])):
            out.update((c.id, c) for c in cables_of(run))
    return out


def _suspects(
    links: Mapping[str, Link],
    objects: Mapping[str, Any],
    sound: AbstractSet[str],
    cabled: Sequence[CableRun],
    removed: AbstractSet[str],
) -> list[Link]:
    """The links (but those of `sound` nodes) with an end that is no object, or both ends one.

    A run of `cabled` was put in the table in one update, so its cables follow one another there;
    while the run is whole (its last cable where it should be) and none of its ends was `removed`,
    its cables passed these tests when they were made and are passed over in C, two lookups in a
    table of a million objects fewer each. A run not whole has the whole table read one by one.
    """

    def bad(lk: Link) -> bool:
        return lk.origin not in sound and (lk.a not in objects or lk.b not in objects or lk.a == lk.b)

    runs = {run[0]: run for run in cabled if not removed or (removed.isdisjoint(run[3]) and removed.isdisjoint(run[4]))}
    if not runs:
        return [lk for lk in links.values() if bad(lk)]
    out: list[Link] = []
    it = iter(links.values())
    for lk in it:
        run = runs.get(lk.id)
        if run is None:
            if bad(lk):
                out.append(lk)
            continue
        _first, last, count, _a, _b = run
        if count > 1:
            end = next(islice(it, count - 2, None), None)
            if end is None or end.id != last:
                return [lk for lk in links.values() if bad(lk)]
    return out


_PRINTABLE_ASCII = bytes(range(0x20, 0x7F))


def _check_ids(inv: Inventory, problems: Problems) -> None:
    """Object ids an importer made from a tool's output must be printable too (YAML ids are
    checked where they are read; link endpoints must be object ids, or they are reported).

    One join and one C-speed pass over all ids (`bytes.translate` deletes every printable
    ASCII byte: three times faster than `str.isprintable`); ids are looked at one by one
    only when something is wrong.
    """
    joined = "".join(inv.objects)
    if joined.isascii() and not joined.encode("ascii").translate(None, _PRINTABLE_ASCII):
        return
    if text_problem(joined) is None:
        return
    for oid, obj in inv.objects.items():
        problem = text_problem(oid)
        if problem is not None:
            problems.add(obj.loc, f"id {oid!r} {problem}", same="bad-id")


def _check_labels(inv: Inventory, problems: Problems) -> None:
    """Labels an importer copied from a tool's output obey the rule the YAML loader applies.

    A label is a name or a short value, never text to print as is: a control character in
    one (an escape sequence in a DMI string, a bell in a node label) is refused where the
    tool wrote it, so `import -o` then `verify` loads what `verify --from` loads.
    """
    owners = [("object", o.id, o.loc, o.labels) for o in inv.objects.values() if o.labels]
    owners += [("link", lk.id, lk.loc, lk.labels) for lk in inv.links.values() if lk.labels]
    joined = "".join(k + v for _, _, _, labels in owners for k, v in labels.items())
    if joined.isascii() and not joined.encode("ascii").translate(None, _PRINTABLE_ASCII):
        return
    if text_problem(joined) is None:
        return
    for what, oid, loc, labels in owners:
        for key, value in labels.items():
            problem = text_problem(key)
            if problem is not None:
                problems.add(loc, f"a label name in labels of {what} {oid!r} {problem}", same="bad-label")
                continue
            problem = text_problem(value)
            if problem is not None:
                problems.add(loc, f"{key!r} in labels of {what} {oid!r} {problem}", same="bad-label")


def _near(word: str, ids: Mapping[str, Any]) -> list[str]:
    """Candidates for a did-you-mean without scanning a million ids: same node first."""
    prefix = word.rsplit("/", 1)[0] + "/" if "/" in word else ""
    if prefix:
        local = list(_siblings(prefix, ids))
        if local:
            return local
    return [k for k in ids if "/" not in k][:5000]


def _siblings(prefix: str, ids: Mapping[str, Any]) -> Iterable[str]:
    n = 0
    for k in ids:
        if k.startswith(prefix):
            n += 1
            yield k
            if n > 500:
                return


def model_problem(inv: Inventory, kind: str, name: str) -> str | None:
    """The message (with an `{id}` hole) for an object of `kind` using model `name`, or None."""
    model = inv.models.get(name)
    if model is None:
        hint = did_you_mean(name, inv.models).replace("{", "{{").replace("}", "}}")
        quoted = repr(name).replace("{", "{{").replace("}", "}}")
        return f"unknown model {quoted} for {{id!r}}{hint}; add it under 'catalog: models:' or use a catalogue model"
    fits = MODEL_FITS.get(kind)
    if fits is not None and model.kind not in fits:
        return (
            f"{{id!r}} is a {kind} but model {model.name!r} is a {model.kind}; expected a model of kind {one_of(fits)}"
        )
    return None


def _check_cycles(inv: Inventory, problems: Problems, starts: Iterable[str]) -> None:
    """Containment must be a forest: walk up from each object that named its parent."""
    objects = inv.found
    done: set[str] = set()
    for start in starts:
        if start in done or start not in objects:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        cur: str | None = start
        while cur is not None and cur in objects and cur not in done and cur not in on_path:
            on_path.add(cur)
            path.append(cur)
            cur = objects[cur].parent
        if cur is not None and cur in on_path:
            cycle = path[path.index(cur) :]
            shown = " -> ".join([*cycle, cur])
            first = min(cycle, key=lambda i: objects[i].loc)
            problems.add(objects[first].loc, f"containment cycle: {shown}")
        done.update(path)


def first_of(items: Iterable[T]) -> T | None:
    for item in items:
        return item
    return None


def read_documents(paths: Iterable[str | Path], problems: Problems) -> tuple[list[YMap], list[str]]:
    """Each file's YAML document and name; a file that cannot be read adds its problems instead.

    Inventories and job files both collect every file's problems before giving up, so a
    user sees all of them in one run.
    """
    files = read_files(paths)
    return documents_of(files, problems), [name for name, _ in files]


def documents_of(files: Iterable[ReadFile], problems: Problems) -> list[YMap]:
    """The YAML document of each file already read (raw_files.read_files); a file that could not
    be read or parsed adds its problems instead.
    """
    docs: list[YMap] = []
    for name, data in files:
        try:
            if isinstance(data, TopologError):
                raise data
            docs.append(load_yaml_text(decode_utf8(data, name), name))
        except TopologError as err:
            problems.add_all(err)
    return docs


def read_document_text(text: str, filename: str, problems: Problems) -> list[YMap]:
    """The same for text already in memory (tests, importers)."""
    try:
        return [load_yaml_text(text, filename)]
    except TopologError as err:
        problems.add_all(err)
        return []
