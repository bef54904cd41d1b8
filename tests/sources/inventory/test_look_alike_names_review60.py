"""Review R-LA of c5c1159: valid names that the look-alike check must not refuse, and a message that
must name the character the look-alike really holds.

Letters are written as Python escapes so the file shows which is which:
- U+00BA MASCULINE ORDINAL INDICATOR and U+00AA FEMININE ORDINAL INDICATOR are Latin letters
  drawn raised and small (Spanish and Portuguese `Nº 3`, `1ª planta`); NFKC folds them to o and a,
  but no reader takes a raised letter for a letter on the line;
- U+0301 COMBINING ACUTE ACCENT after e is the decomposed (NFD) spelling of U+00E9.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text

HEAD = "apiVersion: topolog.dev/v1\nobjects:\n"


def _messages(text: str) -> list[tuple[int, str]]:
    try:
        load_inventory_text(text, "t.yaml")
    except TopologError as err:
        return [(d.location.line, d.message) for d in err.diagnostics]
    return []


@pytest.mark.parametrize("name", ["rack-N\u00ba3", "sala-N\u00ba1", "piso\u00aaA", "rackN\u00ba1"])
def test_an_ordinal_indicator_is_no_look_alike_letter(name: str) -> None:
    # One switch, nothing beside it: the load has no problem at all (before the fix: 'mixes U+00BA').
    assert _messages(HEAD + f'  - {{name: "{name}", kind: switch}}\n') == []


def test_a_decomposed_accent_names_the_combining_mark_it_holds() -> None:
    # Line 3 is cafe with U+00E9, line 4 cafe + U+0301: the same word in two Unicode forms, two ids that
    # print alike; refused at line 4, which holds U+0301 and no U+00E9 (the message said it held U+00E9).
    text = HEAD + '  - {name: "caf\u00e9", kind: switch}\n' + '  - {name: "cafe\u0301", kind: switch}\n'
    ((line, message),) = _messages(text)
    assert line == 4
    assert "U+0301 COMBINING ACUTE ACCENT" in message
    assert "U+00E9" not in message


def test_the_name_with_the_foreign_letter_is_blamed_when_both_names_hold_non_ascii_letters() -> None:
    # Line 3 is strasse's German spelling with U+0455 CYRILLIC SMALL LETTER DZE for the first s, line 4 the
    # Latin spelling; neither is ASCII (both hold U+00DF). The Cyrillic one (line 3) is the look-alike: one
    # problem, there. Before the fix the Latin name at line 4 was said to hold U+0455, plus the line-3 one.
    text = HEAD + '  - {name: "\u0455tra\u00dfe", kind: switch}\n' + '  - {name: "stra\u00dfe", kind: switch}\n'
    ((line, message),) = _messages(text)
    assert line == 3
    assert message.startswith("object name '\u0455tra\u00dfe' looks like 'stra\u00dfe' (t.yaml:4:")
    assert "U+0455 CYRILLIC SMALL LETTER DZE" in message
