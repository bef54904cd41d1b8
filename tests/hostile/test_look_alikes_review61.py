"""Review of 9ed6fe1 (look-alike count patterns): matching a written name against a pattern's
skeleton took time growing with the number of ways to split the name among the fields.

The pattern's fields were each a lazy `(.+?)` of one regular expression: a pattern of a dozen
fields, `\u0455-{i}-{i}...z`, against a written name `s-0-0...-y` that it does not match tried every
split of the name (18 s for 12 fields and a name of 62 characters; base, without the check: 0.02 s).
The fields' text is now found in one pass, placing each part between fields where it first occurs.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.lookalike_names import _field_values

HEAD = "apiVersion: topolog.dev/v1\nobjects:\n"
DZE = "\u0455"  # Cyrillic small dze, drawn as s


@pytest.mark.parametrize(
    ("shown", "name", "values"),
    [
        # s{i}: after the part "s", the one field takes the rest.
        (["s", ""], "s0", ["0"]),
        # s-{i}-{j}z: the middle part "-" first occurs after "s-1" at index 3, the field after it runs to "z".
        (["s-", "-", "z"], "s-1-22z", ["1", "22"]),
        # Adjacent fields {a}{b}: the part between them is empty; the first field takes one character.
        (["r", "", ""], "r123", ["1", "23"]),
        # A field takes one character at least: "s" then nothing is no match; nor is a wrong end.
        (["s", ""], "s", None),
        (["s-", "-", "z"], "s-1-22y", None),
        (["s-", "-", "z"], "s--z", None),
        # The middle part must leave the last field a character: "s-1-" + "z" has none after "-".
        (["s-", "-", "z"], "s-1-z", None),
    ],
)
def test_field_values(shown: list[str], name: str, values: list[str] | None) -> None:
    assert _field_values(shown, name) == values


def test_a_many_field_pattern_against_a_long_name_loads() -> None:
    # 40 fields and a written name of 603 characters that the pattern's skeleton does not match
    # (it ends in y, the pattern in z): the regular expression would not have finished.
    pattern = DZE + "-{i}" * 40 + "z"
    written = "s" + "-0" * 300 + "-y"
    text = HEAD + f'  - {{name: "{pattern}", kind: node, count: 2}}\n  - {{name: "{written}", kind: node}}\n'
    inv = load_inventory_text(text, "inv.yaml")
    assert written in inv.found


def test_a_pattern_of_two_fields_that_makes_a_look_alike_is_still_refused() -> None:
    # dze-{i}-{i} with count 2 makes dze-0-0 and dze-1-1; the second passes for s-1-1 written in full.
    text = HEAD + f'  - {{name: "{DZE}-{{i}}-{{i}}", kind: node, count: 2}}\n' + "  - {name: s-1-1, kind: node}\n"
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "inv.yaml")
    (error,) = [str(d) for d in err.value.diagnostics]
    assert error.startswith(f"inv.yaml:3:6: object name '{DZE}-1-1' looks like 's-1-1' (inv.yaml:4:5)")


def test_only_names_that_begin_with_the_first_part_are_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    # Sorted literals; the pattern dze{i}'s skeleton s{i} begins with "s": of the five names only
    # s0 and s1 begin so (a0 sorts before them, t0 and u0 after), so two are compared.
    from verifier.sources.inventory import lookalike_names

    compared: list[str] = []
    real = lookalike_names._field_values

    def counting(shown: list[str], name: str) -> list[str] | None:
        compared.append(name)
        return real(shown, name)

    monkeypatch.setattr(lookalike_names, "_field_values", counting)
    twins = list(lookalike_names._pattern_twins(DZE + "{i}", "s{i}", ["a0", "s0", "s1", "t0", "u0"]))
    assert twins == [DZE + "0", DZE + "1"]
    assert compared == ["s0", "s1"]
