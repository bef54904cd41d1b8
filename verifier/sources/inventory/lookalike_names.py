"""Object names and link ids that a reader takes for others: refused where they are written.

A node written `spine0` with a Cyrillic i (U+0456) beside `spine0` loads as two objects that every
report prints alike, and a Cedar forbid, a job file or a query naming one does not reach the other.
The principals file refuses such ids (verifier/sources/principals.py); the inventory does too, on
the names as written (template bodies and count patterns once, not every stamped id), so a fleet of
131k GPUs costs what its file holds, and a file that is plain ASCII costs nothing (`plain_text`).

Two names of one scope (the top level, or one node: ids inside a node are `<node>/<name>`) whose
skeletons are equal and texts differ are one finding at the later look-alike; a word that mixes a
letter drawn as a Latin one into Latin letters is one too, with or without the id it passes for.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator, Mapping, Sequence

from verifier.core.errors import SourceLocation
from verifier.core.lookalike import described, mixed_letter, odd_character, skeleton
from verifier.sources.inventory.model import Obj
from verifier.sources.inventory.raw_files import ReadFile
from verifier.sources.inventory.validate import Problems
from verifier.sources.inventory.yaml_source import YList, YMap

Scope = tuple[str, str | int]
_TOP: Scope = ("top", 0)
# Kinds whose template's objects keep their names as ids (a rack type's nodes): the top level.
_CONTAINERS = frozenset({"fleet", "pod", "rack", None})


def plain_text(files: Sequence[ReadFile]) -> bool:
    """Whether no name of these files can hold a letter other than ASCII: every byte is ASCII and
    none is a backslash (a double-quoted YAML `\\u0456` writes one with ASCII bytes).
    """
    return all(isinstance(data, bytes) and data.isascii() and b"\\" not in data for _, data in files)


def check_look_alike_names(docs: Sequence[YMap], problems: Problems) -> list[tuple[str, SourceLocation]]:
    """Add a problem for each object name or link id that looks like another of its scope, or mixes
    a look-alike letter into a word of Latin letters. Returns the top-level names written in full
    that may still look like an id a count pattern makes (`made_look_alikes` reads them once the
    ids are made).
    """
    names = list(_written_names(docs))
    if all(text.isascii() for _, _, text, _ in names):
        return []
    odd_scopes = {scope for scope, _, text, _ in names if not text.isascii()}
    # Each text's skeleton once (a fleet written out in full repeats none, a template's names
    # repeat per scope); an ASCII text is its own and is not stored.
    drawn = {text: skeleton(text) for _, _, text, _ in names if not text.isascii()}
    groups: dict[tuple[Scope, str], dict[str, tuple[str, SourceLocation]]] = {}
    for scope, what, text, loc in names:
        if scope in odd_scopes:
            groups.setdefault((scope, drawn.get(text, text)), {}).setdefault(text, (what, loc))
    reported: set[str] = set()
    for texts in groups.values():
        if len(texts) < 2:
            continue
        # The name the others pass for: an ASCII one, else one that is its own skeleton (`straße`
        # beside the same word with a Cyrillic dze for its s: both hold a letter past ASCII, and
        # the Latin one is no look-alike), else the first written.
        plain = [t for t in texts if t.isascii()] or [t for t in texts if skeleton(t) == t]
        ref = plain[0] if plain else next(iter(texts))
        for text, (what, loc) in texts.items():
            if text == ref:
                continue
            reported.add(text)
            problems.add(
                loc,
                f"{what} {text!r} looks like {ref!r} ({texts[ref][1]}) but is another id (it holds "
                f"{described(odd_character(text, ref))}): a policy, job or query naming one does not name "
                "the other; expected names that differ in what a reader sees",
            )
    for _, what, text, loc in names:
        # A text that is its own skeleton is NFKC-normal and holds no letter of the table, so no
        # letter of it folds to an ASCII one: mixed_letter would find none.
        if text in reported or text.isascii() or drawn[text] == text:
            continue
        ch = mixed_letter(text)
        if ch is not None:
            reported.add(text)
            problems.add(
                loc,
                f"{what} {text!r} mixes {described(ch)} into a word of Latin letters: it reads as "
                f"{skeleton(text)!r}, which a policy, job or query would write, but does not name it; "
                "expected each word in one script",
            )
    unsure = [
        (text, loc)
        for scope, what, text, loc in names
        if scope == _TOP
        and what == "object name"
        and text not in reported
        and "{" not in text
        and not text.isascii()
        and drawn[text] != text
    ]
    # A count pattern written wholly in another script (a Cyrillic dze's `\u0455{i}`, which mixes no
    # letters) makes ids that may look like a name written in full (`s0`): each such name that the
    # pattern's skeleton matches gives the id the pattern would make for it, looked up once made.
    patterns = [
        (text, loc)
        for scope, what, text, loc in names
        if scope == _TOP
        and what == "object name"
        and "{" in text
        and text not in reported
        and drawn.get(text, text) != text
    ]
    if patterns:
        literals = sorted({text for scope, what, text, _ in names if scope == _TOP and "{" not in text})
        for text, loc in patterns:
            unsure.extend((twin, loc) for twin in _pattern_twins(text, drawn[text], literals))
    return unsure


_FIELD = re.compile(r"\{[^{}]*\}")


def _pattern_twins(pattern: str, drawn: str, literals: Sequence[str]) -> Iterator[str]:
    """The ids `pattern` would make that look like a name of `literals`: `\u0455{i}` and `s0` give
    `\u0455` + `0`. A literal matches when the pattern's skeleton (`s{i}`) with its fields read as
    any text does; the fields' text is put back into the pattern as written.
    """
    written, shown = _FIELD.split(pattern), _FIELD.split(drawn)
    if len(written) != len(shown):  # a folded letter changed the fields: not compared
        return
    # `literals` is sorted: only the run of names that begin with the pattern's first part can
    # match, found by bisection (a fleet's thousands of patterns against as many written names
    # were compared pair by pair: 2,000 by 20,000 took over 20 s).
    first = shown[0]
    for name in itertools.islice(literals, bisect.bisect_left(literals, first), None):
        if not name.startswith(first):
            break
        values = _field_values(shown, name)
        if values is not None:
            yield "".join(part + value for part, value in zip(written, [*values, ""], strict=True))


def _field_values(shown: Sequence[str], name: str) -> list[str] | None:
    """The text each field between the parts `shown` takes in `name` (each at least one
    character), or None when `name` is not the parts with fields between them.

    Each middle part is placed where it first occurs after the previous one: a placement further
    right only leaves less room for the rest, so this finds a match whenever there is one, as a
    regular expression's lazy `(.+?)` per field would, in one pass. That expression backtracked
    through every split of the name: a pattern of a dozen fields against a name of 60 characters
    that it does not match took seconds, each further field several times longer.
    """
    first, last = shown[0], shown[-1]
    end = len(name) - len(last)
    if not name.startswith(first) or not name.endswith(last) or end - len(first) < len(shown) - 1:
        return None
    values: list[str] = []
    at = len(first)
    for part in shown[1:-1]:
        found = name.find(part, at + 1, end - 1)  # the field before it takes one character at least
        if found < 0:
            return None
        values.append(name[at:found])
        at = found + len(part)
    if end - at < 1:  # the last field takes one character at least
        return None
    values.append(name[at:end])
    return values


def made_look_alikes(
    unsure: Sequence[tuple[str, SourceLocation]], found: Mapping[str, Obj], problems: Problems
) -> None:
    """A top-level name written in full that looks like an id a count pattern made (a Cyrillic
    `\u0455\u0440\u0455`, "sps", beside `sp{i}`'s `sps`... of a fleet): one lookup each, after the load.
    """
    for text, loc in unsure:
        drawn = skeleton(text)
        other = found.get(drawn)
        # A pattern's twin is an id it may not have made (its count ends first, or an override removed it).
        if other is None or drawn == text or found.get(text) is None:
            continue
        problems.add(
            loc,
            f"object name {text!r} looks like {drawn!r} ({other.loc}) but is another id (it holds "
            f"{described(odd_character(text, drawn))}): a policy, job or query naming one does not name "
            "the other; expected names that differ in what a reader sees",
        )


def _written_names(docs: Sequence[YMap]) -> Iterator[tuple[Scope, str, str, SourceLocation]]:
    """(scope, what, text, where) of every object name and link id as written, in file order."""
    template_kinds: dict[str, object] = {}
    for doc in docs:
        templates = doc.get("templates")
        if isinstance(templates, YMap):
            for tname, body in templates.items():
                if isinstance(body, YMap):
                    template_kinds[tname] = body.get("kind")
    # (entry, its scope, the template's name for a template body); an explicit stack: YAML
    # nesting is bounded by the reader's limits, but a stack is no frame per level.
    for doc in docs:
        yield from _link_ids(doc, _TOP)
    stack: list[tuple[YMap, Scope, str | None]] = []
    for doc in reversed(docs):
        templates = doc.get("templates")
        for item in reversed(_maps(doc.get("objects"))):
            stack.append((item, _TOP, None))
        if isinstance(templates, YMap):
            for tname, body in reversed(list(templates.items())):
                if isinstance(body, YMap):
                    stack.append((body, _TOP, tname))
    while stack:
        entry, scope, template = stack.pop()
        if template is None:
            name = entry.get("name")
            if isinstance(name, str):
                yield scope, "object name", name, entry.key_loc("name")
        kind = entry.get("kind")
        if kind is None:
            kind = template_kinds.get(str(entry.get("template")))
        if not isinstance(kind, str):
            # A kind written as a list or mapping is the loader's error to report; here it is no kind.
            kind = None
        inner: Scope = scope
        if template is not None and kind not in _CONTAINERS:
            # A node type, or a part stamped into nodes (a socket's cores): ids under the node.
            inner = ("template", template)
        elif kind == "node":
            inner = ("node", id(entry))
        yield from _link_ids(entry, inner)
        for child in reversed(_maps(entry.get("children"))):
            stack.append((child, inner, None))


def _link_ids(entry: YMap, scope: Scope) -> Iterator[tuple[Scope, str, str, SourceLocation]]:
    for link in _maps(entry.get("links")):
        lid = link.get("id")
        if isinstance(lid, str):
            yield ("links", repr(scope)), "link id", lid, link.key_loc("id")


def _maps(value: object) -> list[YMap]:
    return [item for item in value if isinstance(item, YMap)] if isinstance(value, YList) else []
