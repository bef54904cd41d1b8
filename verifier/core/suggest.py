"""Did-you-mean: the one closest known name to a mistyped one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def closest(word: str, choices: Iterable[str], *, cutoff: float = 0.6, fold_case: bool = False) -> str | None:
    """The choice most like `word` (difflib ratio at least `cutoff`), or None when none is close.

    With `fold_case`, `word` is compared upper-cased (check ids are written in capitals).
    """
    import difflib  # only a mistyped name asks: about 1 ms of every run's start, which never does

    known = sorted(set(choices))
    match = difflib.get_close_matches(word.upper() if fold_case else word, known, n=1, cutoff=cutoff)
    return match[0] if match else None


def did_you_mean(word: str, choices: Iterable[str], *, fold_case: bool = False) -> str:
    """`; did you mean 'x'?` for a close match, else the empty string (to append to a message)."""
    known = list(choices)
    same = look_alike(word, known)
    if same is not None:
        return f"; did you mean {same!r}?{look_alike_note(word, same)}"
    match = closest(word, known, fold_case=fold_case)
    return f"; did you mean {match!r}?" if match else ""


def look_alike(word: str, choices: Iterable[str]) -> str | None:
    """The choice drawn as `word` is (core.lookalike.skeleton) but written otherwise, or None. Only a
    word past ASCII can be one: an ASCII word is its own skeleton, and so is every ASCII choice.
    """
    if word.isascii():
        return None
    from verifier.core.lookalike import skeleton  # only a mistyped name past ASCII asks

    drawn = skeleton(word)
    return next((c for c in choices if c != word and skeleton(c) == drawn), None)


_DRAWN: list[tuple[Mapping[str, object], dict[str, str]]] = []
"""The ids of the last mapping `drawn_as` was asked about, by what they look like (their skeleton)."""


def drawn_as(word: str, known: Mapping[str, object]) -> str | None:
    """`look_alike` of `word` among `known`'s keys, from an index of them built once per mapping.

    For a lookup made per request (serve's /v1/authorize and /v1/admit): the ids are folded once, the
    last mapping's index is kept, so a request naming a thousand unknown names costs a thousand
    lookups, not a thousand passes over every id. An ASCII word is its own skeleton: None at once.
    """
    if word.isascii():
        return None
    from verifier.core.lookalike import skeleton

    cached = _DRAWN[0] if _DRAWN else None
    if cached is None or cached[0] is not known:
        by_skeleton: dict[str, str] = {}
        for kid in known:
            by_skeleton.setdefault(skeleton(kid), kid)
        cached = (known, by_skeleton)
        _DRAWN[:] = [cached]  # one list assignment: a concurrent request sees the old entry or the new one
    same = cached[1].get(skeleton(word))
    return same if same != word else None


def look_alike_hint(word: str, known: Mapping[str, object]) -> str:
    """`; did you mean 'ivan'? (it looks the same but holds ...)` for a look-alike (`drawn_as`), else ''.

    No nearest id by difflib: that compares `word` with every id (about 3 ms at 1,000 principals),
    which a request naming many unknown names multiplies past the service's deadlines.
    """
    same = drawn_as(word, known)
    return f"; did you mean {same!r}?{look_alike_note(word, same)}" if same is not None else ""


def look_alike_note(word: str, same: str) -> str:
    """` (it looks the same but holds U+0430 CYRILLIC SMALL LETTER A)`: "did you mean 'ivan'?" beside a
    word that prints as 'ivan' tells a reader nothing without the letter that differs.
    """
    from verifier.core.lookalike import described, odd_character

    return f" (it looks the same but holds {described(odd_character(word, same))})"
