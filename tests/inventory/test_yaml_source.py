"""Safe YAML loading: locations, YAML 1.2 scalars, and refusals (alias bombs, tags, encodings)."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from verifier.errors import TopologError
from verifier.inventory.yaml_source import YList, YMap, load_yaml_file, load_yaml_text

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
