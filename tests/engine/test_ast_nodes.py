"""The syntax nodes (verifier.engine.ast), written out by hand, behave as the frozen dataclasses they
replace: fields set once, equal and hashed by class and fields with `loc` left out, a dataclass's repr,
and a pickle (the per-user program cache) or a copy gives an equal node back.
"""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError

import pytest

from verifier.core.errors import SourceLocation
from verifier.engine.ast import (
    NOWHERE,
    Aggregate,
    Atom,
    BinOp,
    Column,
    Comparison,
    Const,
    Declaration,
    Head,
    Negation,
    Program,
    Query,
    Rule,
    Var,
    Wildcard,
)

HERE = SourceLocation("a.dl", 3, 7)


def _rule(loc: SourceLocation) -> Rule:
    # `big(N) :- gpus(N, C), C > 8, !spare(N).`, every node placed at `loc`.
    n, c = Var("N", loc), Var("C", loc)
    body = (Atom("gpus", (n, c), loc), Comparison(">", c, Const(8, loc), loc), Negation(Atom("spare", (n,), loc), loc))
    return Rule(Head("big", (n,), loc), body, loc)


def test_nodes_are_frozen() -> None:
    var = Var("X")
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'name'"):
        var.name = "Y"
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'loc'"):
        del var.loc
    assert var.name == "X"


def test_equal_and_hashed_without_their_place() -> None:
    here, nowhere = _rule(HERE), _rule(NOWHERE)
    assert here == nowhere and hash(here) == hash(nowhere)
    assert here.text == "big(N) :- gpus(N, C), C > 8, !spare(N)."
    # Same fields, other class: not equal (a Head is not an Atom).
    assert Atom("p", (Var("X"),)) != Head("p", (Var("X"),))
    assert Var("X") != Var("Y") and Const(1) != Const("1")
    assert Wildcard(HERE) == Wildcard() and hash(Wildcard()) == hash(())
    assert BinOp("+", Var("X"), Const(1)) != BinOp("-", Var("X"), Const(1))
    assert Aggregate("count", Var("G"), HERE) == Aggregate("count", Var("G"))
    assert Column("n", "symbol", "doc", HERE) == Column("n", "symbol", "doc")
    assert Column("n", "symbol", "doc") != Column("n", "symbol", "other")
    assert Declaration("p", (), True, "", HERE) == Declaration("p", (), True)
    assert Declaration("p", (), True) != Declaration("p", (), False)
    assert Query((), ("X",), "p(X)") != Query((), ("X",), "q(X)")
    assert len({Var("X", HERE), Var("X")}) == 1


def test_repr_names_every_field_in_order() -> None:
    assert repr(Var("X", HERE)) == "Var(name='X', loc=SourceLocation(file='a.dl', line=3, col=7))"
    assert repr(Const(2)) == "Const(value=2, loc=SourceLocation(file='<unknown>', line=0, col=0))"
    assert repr(Program()) == "Program(declarations=(), rules=(), metadata=())"
    assert repr(Query((), ("X",))) == "Query(body=(), variables=('X',), text='')"


def test_keyword_arguments_and_defaults() -> None:
    atom = Atom(relation="p", args=(Wildcard(),))
    assert atom.loc is NOWHERE
    decl = Declaration(name="p", columns=(Column(name="x", type="number"),), is_input=False)
    assert (decl.doc, decl.arity, decl.columns[0].doc) == ("", 1, "")


def test_pickled_and_copied_nodes_are_equal_with_their_places() -> None:
    rule = _rule(HERE)
    program = Program((Declaration("gpus", (Column("n", "symbol"), Column("c", "number")), True),), (rule,))
    _ = program.relations  # a cached value travels with the node, as a dataclass's did
    for back in (pickle.loads(pickle.dumps(program)), copy.deepcopy(program)):
        assert back == program
        assert back.rules[0].loc == HERE and back.rules[0].head.args[0].loc == HERE
        assert back.relations == {"gpus": program.declarations[0]}


def test_the_engines_other_records_behave_the_same() -> None:
    from verifier.engine.answers import QueryResult
    from verifier.engine.backend import Proof
    from verifier.engine.records import Columns
    from verifier.engine.strata import Edge, Stratum

    rule = _rule(HERE)
    leaf = Proof("gpus", ("n0", 8))
    proof = Proof("big", ("n0",), rule, (leaf,), (("spare", ("n0",)),), 1)
    assert proof == Proof("big", ("n0",), _rule(NOWHERE), (Proof("gpus", ("n0", 8)),), (("spare", ("n0",)),), 1)
    assert proof != Proof("big", ("n0",), rule, (leaf,), (("spare", ("n0",)),), 2)  # the stage is compared
    assert repr(leaf) == "Proof(relation='gpus', row=('n0', 8), rule=None, premises=(), absent=(), stage=0)"
    with pytest.raises(FrozenInstanceError):
        leaf.stage = 1
    # `index` is neither compared nor shown.
    columns = Columns("gpus", ("n", "c"), {"n": 0, "c": 1})
    assert columns == Columns("gpus", ("n", "c"), {}) and hash(columns) == hash(Columns("gpus", ("n", "c"), {}))
    assert repr(columns) == "Columns(relation='gpus', names=('n', 'c'))"
    assert columns("c", ("n0", 8)) == 8
    stratum = Stratum(("big",), (rule,), False)
    assert stratum == Stratum(("big",), (_rule(NOWHERE),), False) != Stratum(("big",), (rule,), True)
    assert Edge("big", "gpus", "positive", rule) != Edge("big", "gpus", "negative", rule)
    assert QueryResult(("X",), [("a",)]) == QueryResult(("X",), [("a",)])
    with pytest.raises(TypeError):  # rows are a list: unhashable, as the dataclass was
        hash(QueryResult(("X",), [("a",)]))
    assert pickle.loads(pickle.dumps(proof)) == proof and pickle.loads(pickle.dumps(columns)).index == {"n": 0, "c": 1}
