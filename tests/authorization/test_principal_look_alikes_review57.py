"""Review of the look-alike principal ids check (debd601): only ids a reader cannot tell apart are
refused; ids that differ in case, or in letters drawn differently, load as two principals.

Each pair below is judged by what is drawn (Unicode's confusables, UTS #39):
- 'Émile' / 'émile': capital and small E with acute, told apart as 'Alice' / 'alice' are.
- 'Σοφία' / 'σοφία': Greek capital and small sigma, a case difference too.
- 'straße' / 'strasse': a sharp s is drawn unlike two s.
- 'анна' / 'ahha': Cyrillic small en (U+043D) is drawn as a small capital H, not as h.
- 'вова' / 'boba': Cyrillic small ve (U+0432) is drawn as a small capital B, not as b.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.principals import load_principals


def _file(tmp_path: Path, *ids: str) -> Path:
    path = tmp_path / "principals.yml"
    users = ", ".join(f'{{id: "{i}"}}' for i in ids)
    path.write_text(f"apiVersion: topolog.dev/v1\nkind: Principals\n\nusers: [{users}]\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "ids",
    [
        ("Émile", "émile"),
        ("Σοφία", "σοφία"),
        ("straße", "strasse"),
        ("анна", "ahha"),
        ("вова", "boba"),
        ("αλέξανδρος", "νίκος", "иван", "ольга"),
    ],
)
def test_ids_a_reader_tells_apart_load(tmp_path: Path, ids: tuple[str, ...]) -> None:
    assert sorted(load_principals(_file(tmp_path, *ids)).principals) == sorted(ids)


@pytest.mark.parametrize(
    ("ids", "char"),
    [
        # Cyrillic capitals ve, o, ve, a (U+0412, U+041E, U+0412, U+0410) are drawn as B, O, B, A.
        (("BOBA", "\u0412\u041e\u0412\u0410"), "U+0412 CYRILLIC CAPITAL LETTER VE"),
        # Cyrillic small a (U+0430) is drawn as a.
        (("alice", "\u0430lice"), "U+0430 CYRILLIC SMALL LETTER A"),
        # Fullwidth a (U+FF41) is a by its compatibility form.
        (("alice", "\uff41lice"), "U+FF41 FULLWIDTH LATIN SMALL LETTER A"),
    ],
)
def test_ids_drawn_alike_are_refused(tmp_path: Path, ids: tuple[str, str], char: str) -> None:
    with pytest.raises(TopologError, match=f"looks like '{ids[0]}'.*{re.escape(char)}"):
        load_principals(_file(tmp_path, *ids))
