"""smt_show.holds: a ground term z3's evaluator leaves unreduced is decided by a fresh solver, never guessed."""

from __future__ import annotations

from typing import Any

import pytest
import z3

from verifier.authorization.analysis import smt_show
from verifier.core.errors import TopologError


def _unreduced() -> tuple[Any, Any]:
    """A model with S = {"x"} and T = {"x", "y"}, and `S & T` tested for emptiness: z3's evaluator
    leaves that as `Map(and, Store(..), Store(..)) == K(False)`, neither true nor false."""
    strings = z3.StringSort()
    s_var, t_var = z3.Const("S", z3.SetSort(strings)), z3.Const("T", z3.SetSort(strings))
    x = z3.SetAdd(z3.EmptySet(strings), z3.StringVal("x"))
    solver = z3.Solver()
    solver.add(s_var == x, t_var == z3.SetAdd(x, z3.StringVal("y")))
    assert solver.check() == z3.sat
    return solver.model(), z3.SetIntersect(s_var, t_var) == z3.EmptySet(strings)


def test_an_unreduced_ground_term_is_decided() -> None:
    # {"x"} & {"x", "y"} = {"x"}: not empty.
    model, term = _unreduced()
    assert smt_show.holds(model, term) is False
    assert smt_show.holds(model, z3.Not(term)) is True


def test_a_term_the_solver_cannot_decide_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    model, term = _unreduced()
    left = model.eval(term, model_completion=True)
    assert not z3.is_true(left) and not z3.is_false(left)  # so holds asks a fresh solver

    class Undecided(z3.Solver):  # type: ignore[misc]
        def check(self, *assumptions: Any) -> Any:
            return z3.unknown

    monkeypatch.setattr(z3, "Solver", Undecided)
    with pytest.raises(TopologError, match="could not evaluate a term of an example"):
        smt_show.holds(model, term)
