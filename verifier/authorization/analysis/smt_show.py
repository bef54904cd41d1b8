"""A solver's model as a request a person reads: one Cedar-like line per entity and the context.

Only what the policies read is shown (an attribute nobody reads can have any value); an
optional attribute the model leaves absent is left out, which is the point of many examples
(`context {}`: no `incident`). Sets are shown with the members, among the policies' literals
and the example's own strings, that the model puts in them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from verifier.authorization.analysis.smt_request import Read, Request, string_val
from verifier.core.lazy import lazy_module

if TYPE_CHECKING:
    import z3
else:
    z3 = lazy_module("z3")


@dataclass(frozen=True)
class Example:
    action: str
    principal: str
    resource: str
    context: str

    def line(self) -> str:
        return f"principal {self.principal}, action {self.action}, resource {self.resource}, context {self.context}"


def example(req: Request, model: Any) -> Example:
    def ev(x: Any) -> Any:
        return model.eval(x, model_completion=True)

    candidates = _candidates(req, ev)

    def attrs(var: str) -> str:
        shown = []
        for (v, name), read in sorted(req.reads.items()):
            if v == var and z3.is_true(ev(read.present) if not isinstance(read.present, bool) else z3.BoolVal(True)):
                shown.append(f"{_name(name)}: {_value(read, ev, candidates)}")
        return "{" + ", ".join(shown) + "}"

    def entity(var: str) -> str:
        uid = f"{req.type_of(var)}::{_string(ev(req.id(var)))}"
        me = req.type_of(var)
        parents = sorted(u for (t, u), f in req.ancestors.items() if t == me and z3.is_true(ev(f(req.id(var)))))
        inside = f" in [{', '.join(parents)}]" if parents else ""
        return f"{uid} {attrs(var)}{inside}"

    return Example(req.action.uid, entity("principal"), entity("resource"), attrs("context"))


def _candidates(req: Request, ev: Any) -> list[Any]:
    """Values a set in the model may hold that are worth naming, in a stable order."""
    values: set[object] = set(req.literals)
    for read in req.reads.values():
        if read.type.kind in ("String", "Long"):
            v = ev(read.value)
            values.add(py_string(v) if read.type.kind == "String" else v.as_long())
    return sorted(values, key=lambda v: (type(v).__name__, v))


def _value(read: Read, ev: Any, candidates: list[Any]) -> str:
    v = ev(read.value)
    kind = read.type.kind
    if kind == "Bool":
        return "true" if z3.is_true(v) else "false"
    if kind == "Long":
        return str(v.as_long())
    if kind == "String":
        return _string(v)
    if kind == "Entity":
        return f"{read.type.name}::{_string(v)}"
    element = read.type.element.kind if read.type.element is not None else ""
    members = []
    for c in candidates:
        if element == "String" and isinstance(c, str):
            if z3.is_true(ev(z3.IsMember(string_val(c), read.value))):
                members.append(json.dumps(c, ensure_ascii=False))
        elif element == "Long" and isinstance(c, int) and z3.is_true(ev(z3.IsMember(z3.IntVal(c), read.value))):
            members.append(str(c))
    if element == "Bool":
        members = [b for b in ("false", "true") if z3.is_true(ev(z3.IsMember(z3.BoolVal(b == "true"), read.value)))]
    return "[" + ", ".join(members) + "]"


_ESCAPE = re.compile(r"\\u\{([0-9a-fA-F]+)\}")


def py_string(v: Any) -> str:
    """A z3 string value as the Python string it stands for (z3 prints characters as `\\u{...}`)."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), v.as_string())


def _string(v: Any) -> str:
    return json.dumps(py_string(v), ensure_ascii=False)


def _name(name: str) -> str:
    return name if name.isidentifier() else json.dumps(name, ensure_ascii=False)
