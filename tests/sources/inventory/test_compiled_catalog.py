"""The built-in catalogue compiled ahead of time (catalog_compiled.json): current, equal to a parse of
catalog.yaml field by field, and passed over (the YAML parsed) when made from other bytes."""

from __future__ import annotations

from dataclasses import fields

import pytest

from verifier.core import cache
from verifier.core.limits import Limits, use_limits
from verifier.sources.inventory import catalog, compile_catalog
from verifier.sources.inventory.model import CatalogModel


def _parsed() -> tuple[CatalogModel, ...]:
    with use_limits(Limits()):
        return catalog._parse_builtin_models(catalog._catalogue_bytes().decode("utf-8"))


def test_the_committed_file_is_current() -> None:
    # Fails after an edit to catalog.yaml or its parsing code: run the command it names.
    assert compile_catalog.main(["--check"]) == 0


def test_compiled_models_equal_the_parsed_ones_field_by_field() -> None:
    compiled = catalog._compiled_models(catalog._catalogue_bytes())
    assert compiled is not None
    parsed = _parsed()
    assert [m.name for m in compiled] == [m.name for m in parsed]
    for got, want in zip(compiled, parsed, strict=True):
        for f in fields(CatalogModel):
            assert getattr(got, f.name) == getattr(want, f.name), (got.name, f.name)
        assert list(got.specs.items()) == list(want.specs.items())  # the order the YAML gives them


def test_a_compiled_model_keeps_its_line_in_the_yaml() -> None:
    # Derived from catalog.yaml itself: the line that opens the first model's entry ("  - name: ...")
    # and the column of `name` (after "  - ").
    text = catalog._catalogue_bytes().decode("utf-8").splitlines()
    line = next(i for i, t in enumerate(text, 1) if t.lstrip().startswith("- name:"))
    name = text[line - 1].split(":", 1)[1].strip()
    compiled = catalog._compiled_models(catalog._catalogue_bytes())
    assert compiled is not None
    first = compiled[0]
    assert (first.name, first.loc.file, first.loc.line, first.loc.col) == (name, catalog.BUILTIN_FILE, line, 5)


def test_other_bytes_are_parsed_not_read_from_the_compiled_file(monkeypatch: pytest.MonkeyPatch) -> None:
    data = catalog._catalogue_bytes()
    assert catalog._compiled_models(data + b"\n# edited after compiling\n") is None
    # builtin_models then parses the bytes it read: a catalogue edited without recompiling keeps its answers.
    monkeypatch.setenv(cache.ENV_DIR, "")
    edited = data.replace(b"name: H100-SXM5-80GB", b"name: H100-SXM5-80GB-EDITED", 1)
    assert edited != data
    monkeypatch.setattr(catalog, "_catalogue_bytes", lambda: edited)
    names = {m.name for m in catalog.builtin_models.__wrapped__()}
    assert "H100-SXM5-80GB-EDITED" in names and "H100-SXM5-80GB" not in names
