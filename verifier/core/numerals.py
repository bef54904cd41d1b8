"""Digits as people write them in input files, checked before any conversion.

Python's `int()`, `float()` and `Decimal()` read far more than a person means by a number:
`int("4_00")` is 400, and fullwidth or Arabic-Indic digits, surrounding white space and
`"infinity"` all convert. Every reader of a figure in an input file matches ASCII digits with its
own pattern first; this module holds the one rule they share for `_` between digits.
"""

from __future__ import annotations

import re

# `_` is taken only as a thousands separator: groups of three after a first group of one to three
# digits (`1_000`, `25_600`). `4_00` is a slip (400? 4.00?) that Python would read as 400 without a
# word, so it is refused, not guessed.
_GROUPED = re.compile(r"[0-9]{1,3}(?:_[0-9]{3})+")
_INTEGER_PART = re.compile(r"[0-9_]+")


def underscore_problem(number: str) -> str | None:
    """What is wrong with the `_` in the whole-number part of `number`; None when there is none or
    each `_` ends a group of three digits. `number` is the matched figure (`4_00`, `1_000.5`).
    """
    if "_" not in number:
        return None
    digits = _INTEGER_PART.search(number)
    if digits is not None and _GROUPED.fullmatch(digits.group(0)) and "_" not in number[digits.end() :]:
        return None
    return (
        f"{number!r} has '_' where no group of three digits ends; expected digits alone (such as '400')"
        " or '_' between groups of three (such as '1_000')"
    )
