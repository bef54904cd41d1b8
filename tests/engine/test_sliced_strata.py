"""A query's slice of the program reuses the whole program's strata: they must be what stratifying the slice gives."""

from __future__ import annotations

import pytest

from verifier.core.resources import shipped_rules_dir
from verifier.engine.ast import Program, Query
from verifier.engine.loader import load_program
from verifier.engine.queries import program_for
from verifier.engine.strata import strata_of, stratify


def test_every_slice_of_the_shipped_pack_keeps_the_strata_it_would_compute() -> None:
    program = load_program([shipped_rules_dir()])
    heads = sorted({r.head.relation for r in program.rules})
    # Every tenth derived relation, and a slice of several at once (the relations a check reads).
    slices = [[h] for h in heads[::10]] + [heads[::7]]
    for relations in slices:
        sliced = program_for(program, relations)
        fresh = Program(sliced.declarations, sliced.rules, sliced.metadata)  # nothing kept on it
        assert strata_of(sliced) == stratify(fresh), relations


def test_a_slice_keeps_the_queries_checked_on_the_whole_program(monkeypatch: pytest.MonkeyPatch) -> None:
    import verifier.engine.parser as parser
    import verifier.engine.queries as queries

    program = load_program([shipped_rules_dir()])
    checked = queries.prepare_query('object(_, "gpu")', program, "needs.dl")
    sliced = program_for(program, ["within"])

    def no_parsing(text: str, filename: str = "<query>") -> Query:
        raise AssertionError(f"{text!r} parsed again")

    monkeypatch.setattr(parser, "parse_query", no_parsing)
    # The same object comes back: the slice has every declaration, so the check still holds.
    assert queries.prepare_query('object(_, "gpu")', sliced, "needs.dl") is checked
