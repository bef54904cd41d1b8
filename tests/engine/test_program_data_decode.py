"""program_data's decoder makes each node without running its __init__ (fields set straight into
its __dict__), and compiled_shipped reads the pack with the cyclic collector paused: each node must
hold what __init__ would have given it, and the collector must be left as it was found.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from verifier.core.resources import display_path, shipped_rules_dir
from verifier.engine import rule_pack, shipped_program
from verifier.engine.ast import FrozenNode, Program
from verifier.engine.compile_pack import compiled_text
from verifier.engine.loader import load_program
from verifier.engine.program_data import prepared
from verifier.engine.shared_terms import share_terms
from verifier.engine.shipped_program import compiled_shipped


@pytest.fixture(autouse=True)
def _fresh_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """The data compiled from the rules as they are now (test_shipped_program says why)."""
    fresh = _fresh_text().encode()
    monkeypatch.setattr(shipped_program, "_data_bytes", lambda: fresh)


@cache
def _fresh_text() -> str:
    return compiled_text() + "\n"


def _shipped() -> list[tuple[str, bytes]]:
    return [(str(f), f.read_bytes()) for f in rule_pack.shipped_files(display_path(shipped_rules_dir()))]


def _nodes(value: object) -> Iterator[object]:
    """`value` and every node, location and tuple under it, depth first, in field order."""
    yield value
    if isinstance(value, tuple):
        for item in value:
            yield from _nodes(item)
    elif isinstance(value, FrozenNode):
        for name in value._fields:
            yield from _nodes(getattr(value, name))


def test_decoded_nodes_hold_what_init_gives_field_by_field() -> None:
    # The program parsed (every node made by its __init__) and the one decoded are walked side by
    # side: each node must be of the same class with the same fields in the same order (a field
    # left out, misnamed or set twice under another name shows here), and equal values, the
    # positions (never compared by ==) included. A rule's `text` is the one field beyond __init__'s:
    # both hold it (prepared reads it on the parsed one), after head, body and loc.
    files = _shipped()
    decoded = compiled_shipped(files)
    assert decoded is not None
    parsed = prepared(share_terms(load_program([Path(name) for name, _ in files])))
    pairs = list(zip(_nodes(decoded), _nodes(parsed), strict=True))
    assert len(pairs) > 40_000  # the whole pack: declarations, columns, rules, atoms, terms, places
    for got, want in pairs:
        assert type(got) is type(want)
        if isinstance(want, FrozenNode):
            assert list(vars(got)) == list(vars(want)), type(want).__name__
            assert [getattr(got, f) for f in want._fields if f != "loc"] == [
                getattr(want, f) for f in want._fields if f != "loc"
            ]
            assert getattr(got, "loc", None) == getattr(want, "loc", None)
    # Frozen as __init__'s are: assigning a field fails.
    with pytest.raises(AttributeError):
        decoded.rules[0].head.relation = "x"


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was_found(enabled: bool) -> None:
    # compiled_shipped pauses the cyclic collector while it reads the pack: afterwards it is on
    # again when it was on, and still off when the caller had turned it off.
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        program = compiled_shipped(_shipped())
        assert isinstance(program, Program)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()
