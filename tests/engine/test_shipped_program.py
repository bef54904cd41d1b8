"""The shipped rule pack compiled to plain data (verifier.engine.shipped_program): current, faithful, and
used only for the shipped files unchanged. program_data's decoder makes each node without running its
__init__ (fields set straight into its __dict__), and compiled_shipped reads the pack with the cyclic
collector paused: each node must hold what __init__ would have given it, and the collector must be
left as it was found.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from verifier.core.cache import ENV_DIR
from verifier.core.errors import SourceLocation
from verifier.core.resources import display_path, shipped_rules_dir
from verifier.engine import loader, rule_pack, shipped_program
from verifier.engine.ast import Atom, FrozenNode, Head, Program, Rule, Var
from verifier.engine.compile_pack import compiled_text, data_path, main
from verifier.engine.loader import load_program
from verifier.engine.program_data import decode_program, encode_program, prepared
from verifier.engine.shared_terms import share_terms
from verifier.engine.shipped_program import compiled_shipped
from verifier.engine.strata import strata_of


@pytest.fixture(autouse=True)
def _fresh_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test but the first reads data compiled from the rules as they are now: other work may
    edit a rule before the committed file is compiled again, which the first test alone reports.
    """
    fresh = _fresh_text().encode()
    monkeypatch.setattr(shipped_program, "_data_bytes", lambda: fresh)


@cache
def _fresh_text() -> str:
    return compiled_text() + "\n"


def _shipped() -> list[tuple[str, bytes]]:
    """The shipped files as a run from here names and reads them."""
    return [(str(f), f.read_bytes()) for f in rule_pack.shipped_files(display_path(shipped_rules_dir()))]


def test_committed_data_is_current() -> None:
    # A rule edited (or a parser change) without `python -m verifier.engine.compile_pack` fails here.
    assert data_path().read_text(encoding="utf-8") == compiled_text() + "\n", (
        "verifier/engine/shipped_program.json is stale: run python -m verifier.engine.compile_pack"
    )
    assert main(["--check"]) == 0


def test_compiled_program_is_the_parsed_one() -> None:
    files = _shipped()
    compiled = compiled_shipped(files)
    assert compiled is not None
    parsed = prepared(share_terms(load_program([Path(name) for name, _ in files])))
    # Rules, declarations and metadata compare equal (positions are left out of ==), and every
    # position, shared term, strata and `@needs` query too: the two encode to the same data.
    assert compiled == parsed
    names = [name for name, _ in files]
    assert encode_program(compiled, names) == encode_program(parsed, names)
    assert [(s.relations, s.recursive) for s in strata_of(compiled)] == [
        (s.relations, s.recursive) for s in strata_of(parsed)
    ]
    # The strata hold the program's own rule objects (sliced_strata matches rules by identity).
    ids = {id(r) for r in compiled.rules}
    assert all(id(r) in ids for s in strata_of(compiled) for r in s.rules)
    assert compiled.__dict__["_queries"] == parsed.__dict__["_queries"]


def test_a_rule_reads_back_as_written() -> None:
    # rules/authz/AUTHZ002_evaluation_error.dl, line 11, read by hand:
    #   authz_failed(Policy, P, A, C, M) :- authz_error(P, A, C, Policy, M).
    # (the rule starts at column 1; its body atom at column 37, after the 36 characters before it).
    compiled = compiled_shipped(_shipped())
    assert compiled is not None
    name = str(display_path(shipped_rules_dir()) / "authz" / "AUTHZ002_evaluation_error.dl")
    (rule,) = [r for r in compiled.rules if r.loc.file == name]
    assert rule.loc == SourceLocation(name, 11, 1)
    assert rule.text == "authz_failed(Policy, P, A, C, M) :- authz_error(P, A, C, Policy, M)."
    v = {n: Var(n) for n in ("Policy", "P", "A", "C", "M")}
    assert rule == Rule(
        Head("authz_failed", (v["Policy"], v["P"], v["A"], v["C"], v["M"])),
        (Atom("authz_error", (v["P"], v["A"], v["C"], v["Policy"], v["M"])),),
    )
    (body,) = rule.body
    assert body.loc == SourceLocation(name, 11, 37)
    # Its check metadata (lines 1-8) keeps its `@needs` query parsed and checked.
    assert ("authz_principal(_, _)", name) in compiled.__dict__["_queries"]


def test_a_changed_or_different_file_list_is_parsed_instead() -> None:
    files = _shipped()
    edited = [(name, data + b"\n// a site's edit\n" if i == 0 else data) for i, (name, data) in enumerate(files)]
    assert compiled_shipped(edited) is None
    assert compiled_shipped(files[1:]) is None  # one file fewer
    assert compiled_shipped([*files, ("site/extra.dl", b"")]) is None  # a user's rules beside the pack
    moved = [(f"elsewhere/{name}", data) for name, data in files]
    assert compiled_shipped(moved) is None


def test_the_pack_named_by_its_absolute_path_is_compiled_too() -> None:
    # A library call may name the pack by shipped_rules_dir() itself: the same files, other names.
    absolute = [(str(f), f.read_bytes()) for f in rule_pack.shipped_files(shipped_rules_dir())]
    compiled = compiled_shipped(absolute)
    assert compiled is not None
    assert {r.loc.file for r in compiled.rules} <= {name for name, _ in absolute}


def test_damaged_data_is_parsed_instead(monkeypatch: pytest.MonkeyPatch) -> None:
    files = _shipped()
    good = _fresh_text().encode()
    for damaged in (good[: len(good) // 2], b"[]", good.replace(b'"format":1', b'"format":0'), b""):
        monkeypatch.setattr(shipped_program, "_data_bytes", lambda damaged=damaged: damaged)
        assert compiled_shipped(files) is None
    rule_pack._last.clear()
    monkeypatch.setenv(ENV_DIR, "")  # no program kept on disk by an earlier test: parsed here
    monkeypatch.setattr(shipped_program, "_data_bytes", lambda: good[: len(good) // 2])
    # The pack is parsed: the same rules as compiled.
    assert len(rule_pack.load_rule_pack(rule_pack.shipped_first([])).rules) == len(json.loads(good)["program"]["rules"])
    rule_pack._last.clear()


def test_a_run_on_the_shipped_pack_does_not_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    rule_pack._last.clear()

    def no_parse(*_: object, **__: object) -> None:
        raise AssertionError("the shipped pack was parsed")

    monkeypatch.setattr(loader, "load_program", no_parse)
    # No program kept on disk (an earlier test parses the pack and keeps it): read from the compiled data.
    monkeypatch.setenv(ENV_DIR, "")
    program = rule_pack.load_rule_pack(rule_pack.shipped_first([]))
    assert len(program.rules) == len(json.loads(_fresh_text())["program"]["rules"])
    rule_pack._last.clear()


def test_a_user_rule_beside_the_pack_is_parsed(tmp_path: Path) -> None:
    rule_pack._last.clear()
    site = tmp_path / "site.dl"
    site.write_text('.decl site_flag(x: symbol)\nsite_flag("on").\n', encoding="utf-8")
    program = rule_pack.load_rule_pack(rule_pack.shipped_first([site]))
    # The shipped rules, plus the one rule of site.dl (line 2).
    assert [r.loc for r in program.rules if r.loc.file == str(site)] == [SourceLocation(str(site), 2, 1)]
    rule_pack._last.clear()


def test_decode_of_round_trip_is_stable() -> None:
    files = _shipped()
    names = [name for name, _ in files]
    data = json.loads(_fresh_text())["program"]
    assert encode_program(decode_program(data, names), names) == data


def test_compile_pack_check_says_when_the_file_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier.engine import compile_pack

    stale = tmp_path / "shipped_program.json"
    stale.write_text(_fresh_text().replace('"format":1', '"format":0'), encoding="utf-8")
    monkeypatch.setattr(compile_pack, "data_path", lambda: stale)
    monkeypatch.setattr(compile_pack, "compiled_text", lambda: _fresh_text()[:-1])
    assert main(["--check"]) == 1
    assert main([]) == 0  # writes it
    assert stale.read_text(encoding="utf-8") == _fresh_text()
    assert main(["--check"]) == 0
    assert main(["--bogus"]) == 2


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
