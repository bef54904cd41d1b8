"""A checked program with shared terms is the same program: equal rules, the same answers, and
every position that runs after the checks (rules, atoms, arithmetic, aggregates) kept.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import SourceLocation
from verifier.engine.ast import (
    NOWHERE,
    Aggregate,
    Atom,
    BinOp,
    Comparison,
    Const,
    Negation,
    Program,
    Term,
    Var,
    Wildcard,
)
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program
from verifier.engine.rule_pack import load_rule_pack
from verifier.engine.shared_terms import share_terms
from verifier.session.session import default_rules

# Line 4 holds an aggregate over arithmetic, line 5 a negation with a wildcard and a comparison
# with the integer 1 next to the symbol "1".
TEXT = """\
.input link(a: symbol, b: symbol, w: number)
.decl wide(a: symbol, total: number)
.decl lonely(a: symbol, tag: symbol)
wide(A, sum(W * 2)) :- link(A, _, W).
lonely(A, "1") :- link(A, B, W), !link(B, _, _), W != 1.
"""


def _terms(program: Program) -> list[Term]:
    found: list[Term] = []
    for rule in program.rules:
        for arg in rule.head.args:
            found.append(arg.term if isinstance(arg, Aggregate) else arg)
        for lit in rule.body:
            if isinstance(lit, Atom | Negation):
                found.extend((lit if isinstance(lit, Atom) else lit.atom).args)
            elif isinstance(lit, Comparison):
                found.extend((lit.left, lit.right))
    return found


def test_equal_rules_one_object_per_name_and_the_positions_evaluation_reads() -> None:
    parsed = parse_program(TEXT, "paths.dl")
    shared = share_terms(parsed)
    assert shared.rules == parsed.rules and shared.declarations == parsed.declarations
    # Every term's position was read from the text; shared, variables and constants have none.
    assert all(t.loc != NOWHERE for t in _terms(parsed) if not isinstance(t, BinOp))
    plain = [t for t in _terms(shared) if isinstance(t, Var | Const | Wildcard)]
    assert {t.loc for t in plain} == {NOWHERE}
    # Variables A, B, W: one object each across both rules; 1 and "1" stay two constants.
    assert len({id(t) for t in plain if isinstance(t, Var)}) == 3
    ones = [t for t in plain if isinstance(t, Const) and t.value in (1, "1")]
    assert sorted(repr(t.value) for t in {id(c): c for c in ones}.values()) == ["'1'", "1"]
    # What evaluation errors point at keeps its place: the rules, the atoms, W * 2 and sum(...).
    assert [r.loc for r in shared.rules] == [r.loc for r in parsed.rules]
    assert [a.loc for r in shared.rules for a in r.positive_atoms()] == [
        a.loc for r in parsed.rules for a in r.positive_atoms()
    ]
    # Line 4 is `wide(A, sum(W * 2)) ...`: `sum` starts at column 9, `W * 2` at column 13.
    aggregate = shared.rules[0].head.args[1]
    assert isinstance(aggregate, Aggregate) and isinstance(aggregate.term, BinOp)
    assert aggregate.loc == SourceLocation("paths.dl", 4, 9)
    assert aggregate.term.loc == SourceLocation("paths.dl", 4, 13)


@pytest.mark.parametrize("engine", ["memory", "duckdb", "pydatalog"])
def test_the_same_answers_on_every_engine(engine: str) -> None:
    # link: a->b (3), b->c (5), c->nothing. wide: a 3*2 = 6, b 5*2 = 10. lonely: b (its B is c,
    # which has no outgoing link, and W = 5 != 1); a's B is b, which links on.
    facts = [("a", "b", 3), ("b", "c", 5)]
    answers = []
    for program in (parse_program(TEXT, "paths.dl"), share_terms(parse_program(TEXT, "paths.dl"))):
        backend = make_backend(engine)
        try:
            backend.load(program)
            backend.add_facts("link", facts)
            backend.evaluate()
            answers.append((backend.query("wide"), backend.query("lonely")))
        finally:
            backend.close()
    assert answers[0] == answers[1] == ([("a", 6), ("b", 10)], [("b", "1")])


def test_the_shipped_pack_is_loaded_with_shared_terms() -> None:
    program = load_rule_pack([Path(p) for p in default_rules()])
    variables = [t for t in _terms(program) if isinstance(t, Var)]
    assert len({id(v) for v in variables}) == len({v.name for v in variables}) < len(variables)
