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
    match = closest(word, choices, fold_case=fold_case)
    return f"; did you mean {match!r}?" if match else ""
