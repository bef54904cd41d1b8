"""The built-in catalogue kept parsed on disk: a hit gives the parsed models, anything else parses again."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core import cache
from verifier.sources.inventory import catalog
from verifier.sources.inventory.model import CatalogModel


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(where))
    return where


def _fresh() -> tuple[CatalogModel, ...]:
    """builtin_models without its per-process memo."""
    return catalog.builtin_models.__wrapped__()


def _parsed_without_cache(monkeypatch: pytest.MonkeyPatch) -> tuple[CatalogModel, ...]:
    with monkeypatch.context() as m:
        m.setenv(cache.ENV_DIR, "")  # empty: the cache is off
        return _fresh()


def test_a_second_read_comes_from_the_cache_and_equals_a_parse(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = _parsed_without_cache(monkeypatch)
    assert _fresh() == parsed
    assert len(list(folder.glob(f"{catalog.KIND}-*"))) == 1

    def no_parse(_text: str) -> None:
        raise AssertionError("parsed again although the cache holds the catalogue")

    monkeypatch.setattr(catalog, "_parse_builtin_models", no_parse)
    assert _fresh() == parsed


def test_a_tampered_entry_is_parsed_again(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parsed = _fresh()
    (entry,) = folder.glob(f"{catalog.KIND}-*")
    entry.write_bytes(entry.read_bytes()[:-1] + b"\0")  # its own digest no longer matches
    calls: list[str] = []
    real = catalog._parse_builtin_models

    def counted(text: str) -> tuple[CatalogModel, ...]:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(catalog, "_parse_builtin_models", counted)
    monkeypatch.setattr(catalog, "_compiled_models", lambda _data: None)  # the YAML read, not the compiled file
    assert _fresh() == parsed
    assert len(calls) == 1


def test_an_edited_catalogue_is_another_entry(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh()
    # The key is the digest of the code and of the file's bytes: one byte more is another key.
    edited = catalog._catalogue_bytes() + b"\n# an added comment\n"
    monkeypatch.setattr(catalog, "_catalogue_bytes", lambda: edited)
    _fresh()
    assert len(list(folder.glob(f"{catalog.KIND}-*"))) == 2
