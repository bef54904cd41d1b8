"""The on-disk cache of checked programs: a hit is the same program, anything else is a miss."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from verifier.core import cache
from verifier.engine import loader, rule_pack
from verifier.engine.ast import Program
from verifier.engine.program_cache import KIND, cached_program, program_key, remember_program

RULES = """\
.input edge(a: symbol, b: symbol)
.decl path(a: symbol, b: symbol)
path(A, B) :- edge(A, B).
path(A, C) :- path(A, B), edge(B, C).
"""


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(where))
    monkeypatch.setattr(rule_pack, "_last", [])  # the in-process memo would answer before the disk
    return where


def _rules(tmp_path: Path, text: str = RULES) -> Path:
    path = tmp_path / "paths.dl"
    path.write_text(text)
    return path


def test_a_second_load_is_read_back_without_parsing(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = _rules(tmp_path)
    first = rule_pack.load_rule_pack([rules])
    assert len(list(folder.glob(f"{KIND}-*"))) == 1
    monkeypatch.setattr(rule_pack, "_last", [])

    def no_parsing(*_args: object, **_kwargs: object) -> Program:
        raise AssertionError("parsed again although the cache holds this program")

    # rule_pack imports the loader only on a miss, so the loader's function is the one to replace.
    monkeypatch.setattr(loader, "load_program", no_parsing)
    again = rule_pack.load_rule_pack([rules])
    assert again == first
    assert [r.head.relation for r in again.rules] == ["path", "path"]
    # Each rule's text comes back made (read per run to name an evaluation), as RULES writes it.
    assert [r.__dict__.get("text") for r in again.rules] == [
        "path(A, B) :- edge(A, B).",
        "path(A, C) :- path(A, B), edge(B, C).",
    ]


def test_an_edited_rule_file_is_parsed_again(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = _rules(tmp_path)
    rule_pack.load_rule_pack([rules])
    monkeypatch.setattr(rule_pack, "_last", [])
    rules.write_text(RULES.replace("path(A, B) :- edge(A, B).", "path(B, A) :- edge(A, B)."))
    edited = rule_pack.load_rule_pack([rules])
    # The first rule's head now starts with B, the second variable of its body: a stale entry would still say A.
    assert str(edited.rules[0]).startswith("path(B, A)")
    assert len(list(folder.glob(f"{KIND}-*"))) == 2


def test_a_file_named_otherwise_is_another_entry(folder: Path) -> None:
    # Locations in findings name the file as the run names it, so the name is part of the key.
    assert program_key([("a.dl", b"x")]) != program_key([("b.dl", b"x")])
    assert program_key([("a.dl", b"xy")]) != program_key([("a.dl", b"x"), ("y", b"")])


def test_a_tampered_entry_is_a_miss(folder: Path) -> None:
    key = program_key([("a.dl", b"x")])
    remember_program(key, Program())
    assert cached_program(key) == Program()
    entry = folder / f"{KIND}-{key}"
    data = bytearray(entry.read_bytes())
    data[-1] ^= 1  # one bit of the pickle flipped: the stored digest no longer matches
    entry.write_bytes(bytes(data))
    assert cached_program(key) is None


def test_a_folder_others_may_write_is_not_read(folder: Path) -> None:
    key = program_key([("a.dl", b"x")])
    remember_program(key, Program())
    os.chmod(folder, 0o777)  # another account could plant a pickle here: loading it would run its code
    assert cache.cache_dir() is None
    assert cached_program(key) is None


def test_an_empty_setting_turns_the_cache_off(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(cache.ENV_DIR, "")
    monkeypatch.setattr(rule_pack, "_last", [])
    rule_pack.load_rule_pack([_rules(tmp_path)])
    assert cache.cache_dir() is None
    assert not cache.enabled()
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "on"))
    assert cache.enabled()


def test_an_unwritable_place_only_loses_speed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv(cache.ENV_DIR, str(blocker / "cache"))  # below a file: cannot be made
    monkeypatch.setattr(rule_pack, "_last", [])
    program = rule_pack.load_rule_pack([_rules(tmp_path)])
    assert [d.name for d in program.declarations] == ["edge", "path"]
    assert not cache.enabled()


def test_old_entries_are_pruned(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 2)
    for i in range(4):
        remember_program(program_key([(f"{i}.dl", b"")]), Program())
    assert len(list(folder.glob(f"{KIND}-*"))) == 2
