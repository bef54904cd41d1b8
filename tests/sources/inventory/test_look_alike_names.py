"""Look-alike object names and link ids are refused where written (docs/inventory-format.md, `name`).

Letters are written as Python escapes so the file shows which is which:
- U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I is drawn as i;
- U+0440 CYRILLIC SMALL LETTER ER is drawn as p; U+0455 CYRILLIC SMALL LETTER DZE as s;
- U+043E CYRILLIC SMALL LETTER O as o; U+03B1 GREEK SMALL LETTER ALPHA as a.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.core.lookalike import mixed_letter, skeleton
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.lookalike_names import plain_text
from verifier.sources.inventory.partial import partial_inventory

I_CYR = "\u0456"
ER = "\u0440"
DZE = "\u0455"
O_CYR = "\u043e"
ALPHA = "\u03b1"

HEAD = "apiVersion: topolog.dev/v1\nobjects:\n"


def _problems(text: str) -> list[tuple[int, str]]:
    try:
        load_inventory_text(text, "t.yaml")
    except TopologError as err:
        return [(d.location.line, d.message) for d in err.diagnostics if "look" in d.message or "mixes" in d.message]
    return []


def test_a_cyrillic_i_beside_the_latin_id_is_refused_naming_both(tmp_path: Path) -> None:
    # Line 3 is spine0, line 4 the same letters with U+0456 for the i: one problem, at line 4.
    text = HEAD + "  - {name: spine0, kind: switch}\n" + f"  - {{name: sp{I_CYR}ne0, kind: switch}}\n"
    ((line, message),) = _problems(text)
    assert line == 4
    assert message.startswith(f"object name 'sp{I_CYR}ne0' looks like 'spine0' (t.yaml:3:")
    assert "U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I" in message
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    code, _out, err = run_cli("verify", str(path))
    assert code == 2
    assert f"{path}:4:" in err and "Traceback" not in err
    # authorize's partial load gives way to the whole load, which refuses.
    assert partial_inventory([(str(path), text.encode())], ["spine0"]) is None


def test_a_name_wholly_in_cyrillic_is_refused_only_beside_the_id_it_passes_for() -> None:
    # DZE, ER, DZE reads "sps": refused beside sps (line 4 names line 3), loads alone.
    lookalike = f"{DZE}{ER}{DZE}"
    text = HEAD + f"  - {{name: {lookalike}, kind: switch}}\n" + "  - {name: sps, kind: switch}\n"
    ((line, message),) = _problems(text)
    assert line == 3
    assert f"'{lookalike}' looks like 'sps' (t.yaml:4:" in message
    assert "U+0455" in message
    assert _problems(HEAD + f"  - {{name: {lookalike}, kind: switch}}\n") == []


def test_a_look_alike_letter_inside_a_latin_word_is_refused_alone() -> None:
    # g, ER, u, 1 in node n0 (line 6): no gpu1 exists, yet the name reads as gpu1.
    text = (
        HEAD
        + "  - name: n0\n    kind: node\n    children:\n"
        + f"      - {{name: g{ER}u1, kind: gpu, model: H100-SXM5-80GB}}\n"
    )
    ((line, message),) = _problems(text)
    assert line == 6
    assert message.startswith(f"object name 'g{ER}u1' mixes U+0440 CYRILLIC SMALL LETTER ER into a word")
    assert "it reads as 'gpu1'" in message


def test_a_count_pattern_is_read_once_not_per_instance() -> None:
    # nOde{i} with a Cyrillic o, count 500: one problem at the pattern's line (5), not 500.
    text = (
        "apiVersion: topolog.dev/v1\ntemplates:\n  box: {kind: node}\nobjects:\n"
        + f'  - {{template: box, name: "n{O_CYR}de{{i}}", count: 500}}\n'
    )
    assert [line for line, _ in _problems(text)] == [5]


def test_names_of_one_template_body_are_compared_with_each_other() -> None:
    # Template box (a node) names gpu{i} (line 6) and g-ER-u{i} (line 7): the second looks like the first.
    text = (
        "apiVersion: topolog.dev/v1\ntemplates:\n  box:\n    kind: node\n    children:\n"
        '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}\n'
        f'      - {{name: "g{ER}u{{i}}", kind: gpu, model: H100-SXM5-80GB, count: 2, start: 2}}\n'
        'objects:\n  - {template: box, name: "n{i}", count: 2}\n'
    )
    ((line, message),) = _problems(text)
    assert line == 7
    assert "looks like 'gpu{i}' (t.yaml:6:" in message


def test_a_double_quoted_escape_in_an_ascii_file_is_read() -> None:
    # The bytes are ASCII but "sp\u0456ne0" is the Cyrillic-i name: the backslash keeps the check.
    text = HEAD + "  - {name: spine0, kind: switch}\n" + '  - {name: "sp\\u0456ne0", kind: switch}\n'
    assert text.isascii()
    assert [line for line, _ in _problems(text)] == [4]


def test_a_link_id_is_read_too() -> None:
    # Link id "upl" + U+0456 + "nk" (line 6) mixes a Cyrillic i into Latin letters.
    text = (
        HEAD
        + "  - {name: a, kind: switch}\n  - {name: b, kind: switch}\nlinks:\n"
        + f"  - {{a: a, b: b, kind: ethernet, bandwidth: 400 Gb/s, id: upl{I_CYR}nk}}\n"
    )
    ((line, message),) = _problems(text)
    assert line == 6
    assert message.startswith(f"link id 'upl{I_CYR}nk' mixes U+0456")


@pytest.mark.parametrize(
    "names",
    [
        # The alpha is a word of its own, not inside a Latin word (beside rack-a it would look alike).
        (f"rack-{ALPHA}", "rack-b"),
        ("\u03a3\u03bf\u03c6\u03af\u03b1", "\u03c3\u03bf\u03c6\u03af\u03b1"),  # Greek, capital/small sigma
        ("stra\u00dfe", "strasse"),  # sharp s is drawn unlike ss
        ("\u00c9mile", "\u00e9mile"),  # capital and small E with acute
        ("gpu-\u6771\u4eac", "gpu-tokyo"),  # Han beside Latin: no letter drawn as Latin
    ],
)
def test_names_a_reader_tells_apart_load(names: tuple[str, ...]) -> None:
    text = HEAD + "".join(f'  - {{name: "{n}", kind: rack}}\n' for n in names)
    inv = load_inventory_text(text, "t.yaml")
    assert sorted(names) == sorted(o for o in inv.objects if o in names)


def test_names_in_different_nodes_are_different_ids() -> None:
    # n0's child DZE-ER-DZE is n0/<it>, a top-level sps is sps: ids that look different.
    lookalike = f"{DZE}{ER}{DZE}"
    text = (
        HEAD
        + "  - {name: sps, kind: switch}\n  - name: n0\n    kind: node\n    children:\n"
        + f"      - {{name: {lookalike}, kind: nic}}\n"
    )
    assert _problems(text) == []


def test_a_socket_templates_names_are_ids_inside_nodes() -> None:
    # Template sock (a cpu) names DZE-ER-DZE: stamped into node n0 it is n0/<it>, not the top-level sps.
    lookalike = f"{DZE}{ER}{DZE}"
    text = (
        "apiVersion: topolog.dev/v1\ntemplates:\n"
        + f"  sock: {{kind: cpu, children: [{{name: {lookalike}, kind: cache}}]}}\n"
        + "  box: {kind: node, children: [{template: sock, name: cpu0}]}\n"
        + "objects:\n  - {name: sps, kind: switch}\n  - {template: box, name: n0}\n"
    )
    assert _problems(text) == []


def test_a_name_written_in_full_is_looked_up_among_made_ids(tmp_path: Path) -> None:
    # "s{i}" count 2 (line 3) makes s0 and s1. DZE + "1" (line 4) reads as s1: refused, naming
    # line 3; DZE + "7" (line 5) reads as s7, which nothing makes: it loads.
    text = (
        HEAD
        + '  - {name: "s{i}", kind: switch, count: 2}\n'
        + f"  - {{name: {DZE}1, kind: switch}}\n"
        + f"  - {{name: {DZE}7, kind: switch}}\n"
    )
    ((line, message),) = _problems(text)
    assert line == 4
    assert message.startswith(f"object name '{DZE}1' looks like 's1' (t.yaml:3:")
    assert "U+0455 CYRILLIC SMALL LETTER DZE" in message
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    assert partial_inventory([(str(path), text.encode())], ["s1"]) is None
    assert _problems(text.replace(f"{DZE}1", f"{DZE}8")) == []


def test_shared_helpers() -> None:
    assert skeleton(f"sp{I_CYR}ne0") == "spine0"
    assert skeleton("\uff53pine0") == "spine0"  # fullwidth s folds to s
    assert mixed_letter(f"sp{I_CYR}ne0") == I_CYR
    assert mixed_letter(f"rack-{ALPHA}") is None
    assert plain_text([("a", b"name: spine0\n")])
    assert not plain_text([("a", b'name: "sp\\u0456ne0"\n')])
    assert not plain_text([("a", f"name: sp{I_CYR}ne0\n".encode())])


def test_a_kind_written_as_a_list_is_the_loaders_error_not_a_crash(tmp_path: Path) -> None:
    # The names are walked before the loader's own checks: a template whose kind is a list (line 4)
    # and an object whose kind is a mapping (line 9) were hashed as kinds (TypeError: unhashable
    # 'YList', an internal error). Now the loader reports both at their lines, beside the name
    # 'node0' written with a Cyrillic o (U+043E) at line 8, exit 2.
    inv = tmp_path / "hostile.yaml"
    inv.write_text(
        "apiVersion: topolog.dev/v1\n"
        "templates:\n"
        "  dgx:\n"
        "    kind: [a, b]\n"
        "    children:\n"
        "      - {name: gpu0, kind: gpu}\n"
        "objects:\n"
        '  - {name: "n\u043ede0", template: dgx}\n'
        "  - {name: x, kind: {a: 1}}\n",
        encoding="utf-8",
    )
    code, out, err = run_cli("verify", str(inv))
    assert code == 2, (out, err)
    assert "internal error" not in err and "Traceback" not in err
    assert f"{inv}:4:5: 'kind' in template 'dgx' must be a single value" in err
    assert f"{inv}:8:6: object name 'n\u043ede0' mixes U+043E" in err
    assert f"{inv}:9:" in err
