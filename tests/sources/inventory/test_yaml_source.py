"""Safe YAML loading: locations, YAML 1.2 scalars, and refusals (alias bombs, tags, encodings)."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text, yaml_source
from verifier.sources.inventory.yaml_source import YList, YMap, load_yaml_file, load_yaml_text

T = TypeVar("T")

FIXTURES = Path(__file__).parent / "fixtures"


def test_locations_of_keys_and_items() -> None:
    doc = load_yaml_text("a: 1\nb:\n  - x\n  - {c: 2}\n", "f.yaml")
    assert isinstance(doc, YMap)
    assert doc.key_loc("b").line == 2
    items = doc["b"]
    assert isinstance(items, YList)
    assert [loc.line for loc in items.item_locs] == [3, 4]
    assert items[1].loc.line == 4 and items[1].loc.col == 5


def test_scalars_follow_yaml_1_2() -> None:
    doc = load_yaml_text("cuda: 12.10\ncountry: no\nflag: true\nn: 8\nwhen: 2001-01-01\n", "f.yaml")
    assert doc == {"cuda": "12.10", "country": "no", "flag": True, "n": 8, "when": "2001-01-01"}


def test_billion_laughs_is_refused_quickly_and_small() -> None:
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(TopologError, match="alias bomb"):
        load_yaml_file(FIXTURES / "billion_laughs.yaml")
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 2.0
    assert peak < 50 * 2**20


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("a: 1\na: 2\n", "duplicate key 'a' (first written at line 1)", 2),
        ("a: !!python/object/apply:os.system [ls]\n", "is not allowed; only plain data", 1),
        ("a: &x [*x]\n", "recursive YAML alias", 1),
        ("a: 1\n---\nb: 2\n", "more than one YAML document", 2),
        ("- 1\n", "top level is not a mapping", 1),
        ("# only a comment\n", "no YAML content", 1),
        ("a: [1,\n", "YAML syntax error", 2),
    ],
)
def test_refusals(text: str, fragment: str, line: int) -> None:
    with pytest.raises(TopologError) as err:
        load_yaml_text(text, "f.yaml")
    (diag,) = err.value.diagnostics
    assert fragment in diag.message
    assert diag.location.line == line


def test_not_utf8_names_the_place() -> None:
    with pytest.raises(TopologError) as err:
        load_yaml_file(FIXTURES / "not_utf8.yaml")
    (diag,) = err.value.diagnostics
    assert "not UTF-8" in diag.message
    assert (diag.location.line, diag.location.col) == (3, 12)


# --- libyaml and the pure parser: same places, same errors -----------------------------

INVENTORIES = Path(__file__).resolve().parent.parent.parent.parent / "inventories"
needs_libyaml = pytest.mark.skipif(not yaml_source.HAVE_LIBYAML, reason="PyYAML built without libyaml")


def _places(value: object, path: str = "") -> list[tuple[str, int, int]]:
    """Every mapping, key, sequence and item of a loaded document with its line:col."""
    out: list[tuple[str, int, int]] = []
    if isinstance(value, YMap):
        out.append((path, value.loc.line, value.loc.col))
        for key, item in value.items():
            loc = value.key_loc(key)
            out.append((f"{path}.{key}", loc.line, loc.col))
            out.extend(_places(item, f"{path}.{key}"))
    elif isinstance(value, YList):
        out.append((path, value.loc.line, value.loc.col))
        for i, item in enumerate(value):
            loc = value.item_loc(i)
            out.append((f"{path}[{i}]", loc.line, loc.col))
            out.extend(_places(item, f"{path}[{i}]"))
    return out


def _with(monkeypatch: pytest.MonkeyPatch, libyaml: bool, action: Callable[[], T]) -> T:
    with monkeypatch.context() as m:
        m.setattr(yaml_source, "USE_LIBYAML", libyaml)
        return action()


def _diagnostics(action: Callable[[], object]) -> list[str]:
    try:
        action()
    except TopologError as err:
        return [str(d) for d in err.diagnostics]
    return []


@needs_libyaml
@pytest.mark.parametrize("name", sorted(p.name for p in INVENTORIES.glob("*.y*ml")))
def test_libyaml_places_every_key_and_item_as_the_pure_parser_does(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    path = INVENTORIES / name
    fast = _with(monkeypatch, True, lambda: _places(load_yaml_file(path)))
    pure = _with(monkeypatch, False, lambda: _places(load_yaml_file(path)))
    assert len(fast) > 50 and fast == pure


# Text that moves columns (multi-byte and astral characters, CRLF, block scalars, flow
# collections split over lines, comments) followed by mistakes whose places are checked.
TRICKY = (
    "apiVersion: topolog.dev/v1\r\n"
    "metadata:\r\n"
    '  name: "pöd-ß 😀"\r\n'
    "  description: |\r\n"
    "    line one\r\n"
    "    line two\r\n"
    "objects:\n"
    "  - {name: n0, kind: node, labels: {note: \"日本語 😀😀\", rack: 'r''1'}, colour: blue,\n"
    "     children: [{name: g0, kind: gpu}, {name: g1, kind: gpu, modle: x}]}   # 😀 comment\n"
    "  - name: n1\n"
    "    kind: nod\n"
    "    description: >\n"
    "      folded\n"
    "      text\n"
    "    bandwidth: 3,5 TB/s\n"
    "links:\n"
    "  - {a: n0/g0, b: n0/g9, kind: nvlink, bandwidth: 1 GB/s}\n"
)


@needs_libyaml
@pytest.mark.parametrize(
    "text",
    [
        TRICKY,
        *(
            (FIXTURES / name).read_text(encoding="utf-8", errors="replace")
            for name in (
                "many_errors.yaml",
                "unknown_keys.yaml",
                "bad_units.yaml",
                "dangling_link.yaml",
                "duplicate_ids.yaml",
                "unknown_template.yaml",
                "two_parents.yaml",
                "cycle.yaml",
                "syntax_error.yaml",
            )
        ),
        "apiVersion: topolog.dev/v1\nobjects: [{name: a, kind: node}, {name: a, kind: node}]\na: 1\na: 2\n",
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: é\n    kind: gpu\n    labels: [1,\n",  # syntax error
        "apiVersion: topolog.dev/v1\nobjects:\n  - {name: x, kind: gpu}\n  - {name: y, kind: gpu, x: \x07}\n",
        "apiVersion: topolog.dev/v1\nobjects:\n  - {name: x,\tkind: gpu}\n",  # a tab: refused by both
        "apiVersion: topolog.dev/v1\nobjects:\n  - {name: \ufeffx, kind: gpu, bogus: 1}\n",  # U+FEFF mid-line
        "apiVersion: topolog.dev/v1\nobjects: &o [{name: x, kind: gpu, bogus: *o}]\n",  # recursive alias
        "apiVersion: topolog.dev/v1\nobjects:\n  - !!python/object/apply:os.system [ls]\n",
        "apiVersion: topolog.dev/v1\n---\nobjects: []\n",
    ],
)
def test_libyaml_reports_every_error_where_the_pure_parser_does(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    fast = _with(monkeypatch, True, lambda: _diagnostics(lambda: load_inventory_text(text, "inv.yaml")))
    pure = _with(monkeypatch, False, lambda: _diagnostics(lambda: load_inventory_text(text, "inv.yaml")))
    assert fast and fast == pure


def test_tricky_text_errors_are_at_their_places() -> None:
    # Columns count characters, not bytes: each of '日本語 😀😀' is one column. The oracle is
    # the character index of the word in its line.
    lines = TRICKY.splitlines()

    def at(line: int, word: str) -> str:
        return f"inv.yaml:{line}:{lines[line - 1].index(word) + 1}"

    assert [s.split(": ", 1)[0] for s in _diagnostics(lambda: load_inventory_text(TRICKY, "inv.yaml"))] == [
        at(8, "colour"),
        at(9, "modle"),
        at(11, "kind"),  # unknown kind 'nod'
        at(15, "bandwidth"),  # 3,5 TB/s
        at(17, "{"),  # the link to n0/g9
    ]


@needs_libyaml
def test_libyaml_is_the_parser_used_when_present(monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[str] = []
    real = yaml_source._load

    def spy(text: str, filename: str, loader_class: type[object], expected: str) -> YMap:
        used.append(loader_class.__name__)
        return real(text, filename, loader_class, expected)

    monkeypatch.setattr(yaml_source, "_load", spy)
    load_yaml_text("a: 1\n", "f.yaml")
    assert used == ["_CLoader"]
    used.clear()
    load_yaml_text("a: 'x\ty'\n", "f.yaml")  # a tab: libyaml and PyYAML disagree, PyYAML decides
    assert used == ["_PureLoader"]
    used.clear()
    with pytest.raises(TopologError):
        load_yaml_text("a: [1,\n", "f.yaml")
    assert used == ["_CLoader", "_PureLoader"]  # a syntax error is worded and placed by the pure parser
    used.clear()
    with pytest.raises(TopologError, match="duplicate key"):
        load_yaml_text("a: 1\na: 2\n", "f.yaml")
    assert used == ["_CLoader"]  # our own refusals are the same either way: no second reading


@pytest.mark.parametrize(("char", "name"), [("\x07", "'\\x07' (#x0007)"), ("\ud800", "'\\ud800' (#xd800)")])
def test_a_character_yaml_refuses_is_an_error_at_its_place_not_a_crash(char: str, name: str) -> None:
    # Line 2 is `bé: x` then the character: column 6 (é is one column).
    with pytest.raises(TopologError) as err:
        load_yaml_text(f"a: 1\nbé: x{char}\n", "f.yaml")
    (diag,) = err.value.diagnostics
    assert (diag.location.line, diag.location.col) == (2, 6)
    assert diag.message.startswith(f"character {name} is not allowed in YAML")
