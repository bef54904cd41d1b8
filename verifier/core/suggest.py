"""Did-you-mean: the one closest known name to a mistyped one."""

from __future__ import annotations

from collections.abc import Iterable


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


def look_alike_note(word: str, same: str) -> str:
    """` (it looks the same but holds U+0430 CYRILLIC SMALL LETTER A)`: "did you mean 'ivan'?" beside a
    word that prints as 'ivan' tells a reader nothing without the letter that differs.
    """
    from verifier.core.lookalike import described, odd_character

    return f" (it looks the same but holds {described(odd_character(word, same))})"
