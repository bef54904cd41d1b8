"""Look-alike ids the round-14 check let through, and valid names it must keep accepting.

- The Turkish dotless i (U+0131) is drawn as an i without its dot (Unicode's confusables map it to
  i): `site1` written with it beside `site1` is two ids no reader tells apart.
- A count pattern written wholly in another script mixes no letters: the Cyrillic dze's
  `\u0455{i}` (count 2) makes `\u0455` + `0` and `\u0455` + `1`, and the first passes for a node
  `s0` written in full.
- Turkish words hold the dotless i among Latin letters (`kap\u0131`, door): not refused.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text

HEAD = "apiVersion: topolog.dev/v1\nobjects:\n"
DOTLESS = "\u0131"
DZE = "\u0455"


def _errors(text: str) -> list[str]:
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "inv.yaml")
    return [str(d) for d in err.value.diagnostics]


def test_a_dotless_i_beside_the_dotted_name_is_refused() -> None:
    text = HEAD + "  - {name: site1, kind: node}\n" + f"  - {{name: s{DOTLESS}te1, kind: node}}\n"
    # Line 4 is the look-alike; the loader points at its `name` key: column 6 ("  - {" is 5 characters).
    assert _errors(text) == [
        f"inv.yaml:4:6: object name 's{DOTLESS}te1' looks like 'site1' (inv.yaml:3:6) but is another id (it "
        "holds U+0131 LATIN SMALL LETTER DOTLESS I): a policy, job or query naming one does not name the "
        "other; expected names that differ in what a reader sees"
    ]


@pytest.mark.parametrize("first", [True, False])
def test_a_pattern_in_another_script_that_makes_a_look_alike_is_refused(first: bool) -> None:
    plain = "  - {name: s0, kind: node}\n"
    pattern = f'  - {{name: "{DZE}{{i}}", kind: node, count: 2}}\n'
    text = HEAD + (plain + pattern if first else pattern + plain)
    # The pattern's line: 4 when the plain name comes first, else 3; `s0` is the other line.
    at, other = (4, 3) if first else (3, 4)
    (error,) = _errors(text)
    assert error.startswith(f"inv.yaml:{at}:6: object name '{DZE}0' looks like 's0' (inv.yaml:{other}:5)")
    assert "U+0455 CYRILLIC SMALL LETTER DZE" in error


def test_a_pattern_whose_ids_look_like_no_written_name_loads() -> None:
    # `\u0455{i}` with count 2 makes dze+0 and dze+1: `s5` is neither's look-alike.
    text = HEAD + "  - {name: s5, kind: node}\n" + f'  - {{name: "{DZE}{{i}}", kind: node, count: 2}}\n'
    inv = load_inventory_text(text, "inv.yaml")
    assert sorted(inv.found[k].id for k in ("s5", f"{DZE}0", f"{DZE}1")) == sorted(["s5", f"{DZE}0", f"{DZE}1"])


def test_turkish_names_with_the_dotless_i_load() -> None:
    names = [f"kap{DOTLESS}1", f"yaz{DOTLESS}c{DOTLESS}-2", "Istanbul", f"{DOTLESS}stanbul"]
    text = HEAD + "".join(f"  - {{name: {n}, kind: node}}\n" for n in names)
    inv = load_inventory_text(text, "inv.yaml")
    assert all(inv.found[n].id == n for n in names)
