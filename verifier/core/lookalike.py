"""Ids that a reader cannot tell apart: the principals file and the inventory loader refuse them.

`spine0` written with a Cyrillic i (U+0456) is printed like `spine0`, but a Cedar forbid, a job file or
a query that names one does not name the other. Both loaders compare what ids look like (their
skeleton) rather than their text, and refuse a word that mixes a look-alike letter into Latin ones.
"""

from __future__ import annotations

import unicodedata

# Letters of other scripts drawn as Latin ones are (Unicode's confusables, UTS #39), capitals and
# small letters apart: a Cyrillic capital ve is drawn as B, its small letter as a small capital B,
# which no reader takes for b. Mapped to the Latin letter they pass for.
_LOOK_ALIKE = str.maketrans(
    "аеорсухіјѕԁһԛԝѵӏαορινАВЕКМНОРСТХУІЈЅԚԜΑΒΕΖΗΙΚΜΝΟΡΤΥΧ\u0131",
    "aeopcyxijsdhqwvlaopivABEKMHOPCTXYIJSQWABEZHIKMNOPTYXi",
)
# Letters of Latin-script alphabets among them: the Turkish and Azerbaijani dotless i (U+0131) is
# drawn as an i without its dot, so `site1` written with it beside `site1` is a pair no reader tells
# apart, but it stands among Latin letters in every word of those languages (Turkish "kap\u0131",
# door): it is never a letter mixed into a word of another script.
_LATIN_LETTERS = frozenset("\u0131")


def skeleton(text: str) -> str:
    """What `text` looks like: compatibility forms folded (fullwidth f is f), look-alike letters made
    Latin. Not case-folded: ids that differ in case (Émile, émile) are told apart by any reader.
    An ASCII text is its own skeleton.
    """
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text).translate(_LOOK_ALIKE)


def described(ch: str) -> str:
    """A character as a reader can look it up: `U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I`."""
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'a character')}"


def odd_character(text: str, other: str) -> str:
    """The character that makes two look-alike texts differ: the first of `text` that is not in
    `other` where it stands, else the first of `other` not in `text`.
    """
    for at, (a, b) in enumerate(zip(text, other, strict=False)):
        if a != b:
            if not a.isascii():
                return a
            # An accent written apart (NFD `e` + U+0301) beside the composed letter (U+00E9) differs
            # first at the plain `e`: the mark after it is what `text` holds.
            mark = text[at + 1 : at + 2]
            return mark if mark and unicodedata.combining(mark) else b
    longer = text if len(text) > len(other) else other
    return next((ch for ch in longer if not ch.isascii()), longer[-1] if longer else "?")


def mixed_letter(text: str) -> str | None:
    """A letter drawn as a Latin one inside a word of Latin letters (the Cyrillic i of such a `spine0`), or None.

    A word is a run of letters, so `rack-` and a Greek alpha (a letter that is a word of its own) and `gpu-東京`
    (other scripts that no reader takes for Latin) pass; only a letter whose skeleton is an ASCII
    letter, beside ASCII letters in one word, is one.
    """
    if text.isascii():
        return None
    word: list[str] = []
    for ch in [*text, " "]:
        if ch.isalpha():
            word.append(ch)
            continue
        if word and any(c.isascii() for c in word):
            for c in word:
                # A raised or lowered letter (the ordinal indicators of Spanish and Portuguese `Nº 3`,
                # `1ª`) folds to an ASCII one under NFKC but is drawn apart from the line: no look-alike.
                if (
                    not c.isascii()
                    and c not in _LATIN_LETTERS
                    and not unicodedata.decomposition(c).startswith(("<super>", "<sub>"))
                ):
                    drawn = skeleton(c)
                    if drawn.isascii() and drawn.isalpha():
                        return c
        word = []
    return None
