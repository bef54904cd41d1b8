"""A solver's model as a request a person reads: one Cedar-like line per entity and the context.

Only what the policies read is shown (an attribute nobody reads can have any value); an
optional attribute the model leaves absent is left out, which is the point of many examples
(`context {}`: no `incident`). Sets are shown with the members, among `values` (the policies'
literals, the example's own strings and Longs, and what the model stores in any set), that the
model puts in them: exactly the set's members once `finite_sets` pinned it (a z3 set is an
array, which may hold infinitely many members; a Cedar set never does).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from verifier.authorization.analysis.smt_request import LONG_MAX, LONG_MIN, Read, Request, sort_of, string_val
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.lazy import lazy_module

if TYPE_CHECKING:
    import z3
else:
    z3 = lazy_module("z3")


GROUND_TIMEOUT_MS = 20_000
"""A term with no variable left is decided by a fresh solver within this (symbolic.SOLVER_TIMEOUT_MS alike)."""


@dataclass(frozen=True)
class Example:
    action: str
    principal: str
    resource: str
    context: str

    def line(self) -> str:
        return f"principal {self.principal}, action {self.action}, resource {self.resource}, context {self.context}"


def holds(model: Any, x: Any) -> bool:
    """Whether the Bool term `x` is true in `model`.

    z3's evaluator leaves some ground terms unreduced (`Map(and, Store(..), Store(..)) ==
    K(False)`, a set intersection tested for emptiness): such a rest has no variable left, so a
    fresh solver decides it; is_true alone would read it as false.
    """
    v = model.eval(x, model_completion=True)
    if z3.is_true(v) or z3.is_false(v):
        return bool(z3.is_true(v))
    solver = z3.Solver()
    solver.set("timeout", GROUND_TIMEOUT_MS)
    solver.add(v)
    result = solver.check()
    if result == z3.unknown:
        # Fail closed and say so (exit 2): an example or a decision the solver cannot evaluate is not guessed.
        raise TopologError.at(
            SourceLocation("policy analysis"),
            f"the solver could not evaluate a term of an example ({solver.reason_unknown()}); "
            "the analysis is refused rather than shown with a value it could not check",
        )
    return bool(result == z3.sat)


def values(req: Request, model: Any) -> list[Any]:
    """Values a set in the model may hold that are worth naming, in a stable order: the
    policies' literals, the example's strings and Longs, the values of the terms a set is asked
    to hold, and every value stored in a set.
    """
    found: set[object] = set(req.literals)
    found.update(_py(model.eval(t, model_completion=True)) for t in req.members)
    for read in req.reads.values():
        if read.type.kind in ("String", "Long"):
            found.add(_py(model.eval(read.value, model_completion=True)))
        elif read.type.kind == "Set":
            v = model.eval(read.value, model_completion=True)
            while z3.is_store(v):
                found.add(_py(v.arg(1)))
                v = v.arg(0)
    return sorted((x for x in found if x is not None), key=lambda x: (type(x).__name__, x))


def finite_sets(req: Request, model: Any) -> Any:
    """A Bool pinning every set the policies read to its members among `values` (64-bit Longs only).

    When the formulas still hold with it, every set of the example is finite and shown whole.
    """
    candidates = values(req, model)
    sets = [r for _, r in sorted(req.reads.items()) if r.type.kind == "Set" and r.type.element is not None]
    for read in sets:
        # A set with members outside the candidates (a non-empty set the policies never name a
        # member of): one such member joins them, so the pinned set stays non-empty.
        assert read.type.element is not None
        element = sort_of(read.type.element)
        outside = z3.Const("member", element)
        solver = z3.Solver()
        solver.add(z3.IsMember(outside, model.eval(read.value, model_completion=True)))
        solver.add(*[outside != c for c in _of_kind(candidates, read.type.element.kind)])
        if read.type.element.kind == "Long":
            solver.add(outside >= LONG_MIN, outside <= LONG_MAX)
        if read.type.element.kind == "String":
            solver.push()
            solver.add(z3.InRe(outside, z3.Star(z3.Range(" ", "~"))))  # printable, where one is
            if solver.check() != z3.sat:
                solver.pop()
        if solver.check() == z3.sat:
            candidates.append(_py(solver.model().eval(outside, model_completion=True)))
    pins = []
    for read in sets:
        assert read.type.element is not None
        pinned = z3.EmptySet(sort_of(read.type.element))
        for c in _of_kind(candidates, read.type.element.kind):
            if holds(model, z3.IsMember(c, read.value)):
                pinned = z3.SetAdd(pinned, c)
        pins.append(read.value == pinned)
    return z3.And(z3.BoolVal(True), *pins)


def _of_kind(candidates: list[Any], element: str) -> list[Any]:
    if element == "String":
        return [string_val(c) for c in candidates if isinstance(c, str)]
    if element == "Long":
        return [z3.IntVal(c) for c in candidates if type(c) is int and LONG_MIN <= c <= LONG_MAX]
    return [z3.BoolVal(False), z3.BoolVal(True)] if element == "Bool" else []


def _py(v: Any) -> object:
    if z3.is_string_value(v):
        return py_string(v)
    if z3.is_int_value(v):
        return v.as_long()
    return None


def example(req: Request, model: Any) -> Example:
    def ev(x: Any) -> Any:
        return model.eval(x, model_completion=True)

    candidates = values(req, model)

    def attrs(var: str) -> str:
        shown = []
        for (v, name), read in sorted(req.reads.items()):
            if v == var and (isinstance(read.present, bool) or holds(model, read.present)):
                shown.append(f"{_name(name)}: {_value(req, read, model, candidates)}")
        return "{" + ", ".join(shown) + "}"

    def entity(var: str) -> str:
        uid = f"{req.type_of(var)}::{_string(ev(req.id(var)))}"
        return f"{uid} {attrs(var)}{_inside(req, model, req.type_of(var), req.id(var))}"

    return Example(req.action.uid, entity("principal"), entity("resource"), attrs("context"))


def _inside(req: Request, model: Any, type_name: str, entity_id: Any) -> str:
    """` in [Group::"g", ...]`: the literal entities the model puts entity `type_name`::`entity_id` below."""
    parents = sorted(u for (t, u), f in req.ancestors.items() if t == type_name and holds(model, f(entity_id)))
    return f" in [{', '.join(parents)}]" if parents else ""


def _value(req: Request, read: Read, model: Any, candidates: list[Any]) -> str:
    v = model.eval(read.value, model_completion=True)
    kind = read.type.kind
    if kind == "Bool":
        return "true" if z3.is_true(v) else "false"
    if kind == "Long":
        return str(v.as_long())
    if kind == "String":
        return _string(v)
    if kind == "Entity":
        # An entity reached through an attribute (resource.owner) is shown with its place in
        # the hierarchy, which `resource.owner in Group::"g"` may need.
        return f"{read.type.name}::{_string(v)}{_inside(req, model, read.type.name, read.value)}"
    element = read.type.element.kind if read.type.element is not None else ""
    members = [c for c in _of_kind(candidates, element) if holds(model, z3.IsMember(c, read.value))]
    if element == "String":
        return "[" + ", ".join(_string(c) for c in members) + "]"
    return "[" + ", ".join(str(c).lower() if element == "Bool" else str(c) for c in members) + "]"


_ESCAPE = re.compile(r"\\u\{([0-9a-fA-F]+)\}")


def py_string(v: Any) -> str:
    """A z3 string value as the Python string it stands for (z3 prints characters as `\\u{...}`)."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), v.as_string())


def _string(v: Any) -> str:
    # A surrogate (z3 holds them, Cedar and UTF-8 output do not) is shown as Cedar's escape.
    text = json.dumps(py_string(v), ensure_ascii=False)
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{{{ord(m.group(0)):x}}}", text)


def _name(name: str) -> str:
    return name if name.isidentifier() else json.dumps(name, ensure_ascii=False)
