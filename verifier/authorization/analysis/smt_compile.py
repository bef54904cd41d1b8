"""A Cedar policy's syntax tree (cedarpy.pst) as z3 terms over one symbolic request.

Each expression becomes its value and the list of ways it can raise an error, in the order
Cedar evaluates them: (what raises, when). Cedar short-circuits `&&`, `||` and `if`, so the
right side's errors count only where the left side lets evaluation reach it:
err(A && B) = err(A) or (A and err(B)). A policy is *satisfied* when its scope matches and
its condition is true without error; it *errs* when its scope matches and some error entry
holds. Every construct not listed here raises OutsideAnalysis with the policy's file:line.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from verifier.authorization.analysis.smt_errors import OutsideAnalysis
from verifier.authorization.analysis.smt_request import ENTITY_VARS, LONG_MAX, LONG_MIN, Request, encodable
from verifier.authorization.analysis.smt_request import string_val as _string_val
from verifier.authorization.analysis.smt_schema import ACTION
from verifier.core.errors import SourceLocation
from verifier.core.lazy import lazy_module

if TYPE_CHECKING:
    import z3
    from cedarpy import pst
else:
    z3 = lazy_module("z3")

    class _Pst:
        """cedarpy.pst, imported when a policy is first compiled (importing cedarpy loads its native library)."""

        def __getattr__(self, name: str) -> object:
            from cedarpy import pst

            return getattr(pst, name)

    pst = _Pst()

Errors = tuple[tuple[str, Any], ...]
_ARITH = {"add": "+", "sub": "-", "mul": "*"}
_COMPARE = {"less": "<", "less_eq": "<=", "greater": ">", "greater_eq": ">="}


@dataclass(frozen=True)
class Ent:
    """An entity value: a request entity (`var`), a literal (`literal` its uid text), or the
    value of an entity-typed attribute (`path`, e.g. resource.owner).
    """

    var: str | None
    type: str
    id: Any
    literal: str = ""
    path: str = ""

    @property
    def is_literal(self) -> bool:
        return bool(self.literal)


@dataclass(frozen=True)
class Term:
    kind: str
    """bool, long, string, set (element kind in `elem`), entity (value an Ent), entities (a
    literal set of them), action (value its uid), actions, context, never (an attribute the
    entity's type lacks: only reachable where the validator proved it is not)."""
    value: Any
    errors: Errors = ()
    elem: str = ""


@dataclass
class Compiled:
    """One policy over one request."""

    scope: Any
    value: Any
    errors: Errors

    @cached_property
    def sat(self) -> Any:
        return z3.And(self.scope, z3.Not(self.err_cond), self.value)

    @cached_property
    def err_cond(self) -> Any:
        return z3.Or(*[c for _, c in self.errors]) if self.errors else z3.BoolVal(False)

    @cached_property
    def err(self) -> Any:
        return z3.And(self.scope, self.err_cond)


NEVER_APPLIES = None
"""What `compile_policy` returns when the scope cannot match the request's action and types."""


def compile_policy(template: pst.Template, req: Request, policy: str, where: SourceLocation) -> Compiled | None:
    """`template` over `req`, or None when its scope rules the request out on types and action alone."""
    return _Compiler(req, policy, where).policy(template)


class _Compiler:
    def __init__(self, req: Request, policy: str, where: SourceLocation) -> None:
        self.req = req
        self.policy_id = policy
        self.where = where

    def outside(self, what: str) -> OutsideAnalysis:
        return OutsideAnalysis.construct(self.where, self.policy_id, what)

    # -- scope
    def policy(self, t: pst.Template) -> Compiled | None:
        if not self.action_scope(t.action):
            return NEVER_APPLIES
        scope = [self.entity_scope("principal", t.principal), self.entity_scope("resource", t.resource)]
        if any(z3.is_false(s) for s in scope):
            return NEVER_APPLIES
        value: Any = z3.BoolVal(True)
        errors: Errors = ()
        for clause in t.clauses:
            term = self.boolean(self.expr(clause.expr))
            v = term.value if isinstance(clause, pst.When) else z3.Not(term.value)
            errors = errors + tuple((what, z3.And(value, c)) for what, c in term.errors)
            value = z3.And(value, v)
        return Compiled(z3.And(*scope), value, errors)

    def action_scope(self, c: object) -> bool:
        if isinstance(c, pst.ScopeAny):
            return True
        if isinstance(c, pst.ActionEq):
            return str(c.entity) == self.req.action.uid
        if isinstance(c, pst.ActionIn):
            ancestors = self.req.schema.action_ancestors(self.req.action.uid)
            return any(str(u) in ancestors for u in c.entities)
        raise self.outside(f"action scope {type(c).__name__}")

    def entity_scope(self, var: str, c: object) -> Any:
        me = self.var_entity(var)
        if isinstance(c, pst.ScopeAny):
            return z3.BoolVal(True)
        if isinstance(c, pst.ScopeIs | pst.ScopeIsIn):
            if str(c.entity_type) != me.type:
                return z3.BoolVal(False)
            if isinstance(c, pst.ScopeIs):
                return z3.BoolVal(True)
        if isinstance(c, pst.ScopeEq | pst.ScopeIn | pst.ScopeIsIn):
            if not isinstance(c.entity, pst.EntityUid):
                raise self.outside(f"a template slot in the {var} scope")
            lit = self.literal(c.entity)
            return self.ent_eq(me, lit) if isinstance(c, pst.ScopeEq) else self.ent_in(me, lit)
        raise self.outside(f"{var} scope {type(c).__name__}")

    # -- entities
    def var_entity(self, var: str) -> Ent:
        return Ent(var, self.req.type_of(var), self.req.id(var))

    def string(self, text: str) -> Any:
        try:
            return _string_val(text)
        except ValueError as err:
            raise self.outside(str(err)) from None

    def literal(self, uid: pst.EntityUid) -> Ent:
        self.req.literals.add(uid.id)
        return Ent(None, str(uid.type), self.string(uid.id), str(uid))

    def ent_eq(self, a: Ent, b: Ent) -> Any:
        if a.type != b.type:
            return z3.BoolVal(False)
        return a.id == b.id

    def ent_in(self, a: Ent, b: Ent) -> Any:
        """`a in b`: equal, or `a` strictly below `b`, which the schema allows only where `b`'s
        type is reachable from `a`'s through memberOf.
        """
        if not b.is_literal:
            raise self.outside(f"`in` {b.var or b.path} (only `in` a literal entity, or a list of them, is encoded)")
        if a.is_literal:
            raise self.outside("`in` between two entity literals (their hierarchy is not encoded)")
        eq = self.ent_eq(a, b)
        if b.type in self.req.schema.ancestor_types(a.type):
            return z3.Or(eq, self.req.descendant(a.type, a.id, b.literal, (b.type, b.id)))
        return eq

    # -- expressions
    def boolean(self, t: Term) -> Term:
        return Term("bool", self.need(t, "bool"), t.errors)

    def need(self, t: Term, kind: str) -> Any:
        if t.kind == kind:
            return t.value
        if t.kind == "never":
            return {"bool": z3.BoolVal(False), "long": z3.IntVal(0), "string": z3.StringVal("")}.get(
                kind, z3.BoolVal(False)
            )
        raise self.outside(f"a {t.kind} where a {kind} is expected")

    def expr(self, e: object) -> Term:
        if isinstance(e, pst.BoolLit):
            return Term("bool", z3.BoolVal(e.value))
        if isinstance(e, pst.LongLit):
            self.req.literals.add(e.value)
            return Term("long", z3.IntVal(e.value))
        if isinstance(e, pst.StringLit):
            self.req.literals.add(e.value)
            return Term("string", self.string(e.value))
        if isinstance(e, pst.EntityLit):
            if e.value.type.basename == ACTION:
                return Term("action", str(e.value))
            return Term("entity", self.literal(e.value))
        if isinstance(e, pst.Var):
            if e.name in ENTITY_VARS:
                return Term("entity", self.var_entity(e.name))
            if e.name == "action":
                return Term("action", self.req.action.uid)
            return Term("context", None)
        if isinstance(e, pst.UnaryOp):
            return self.unary(e)
        if isinstance(e, pst.BinaryOp):
            return self.binary(e)
        if isinstance(e, pst.GetAttr):
            return self.get_attr(e)
        if isinstance(e, pst.HasAttr):
            return self.has_attr(e)
        if isinstance(e, pst.Like):
            s = self.expr(e.base)
            return Term("bool", z3.InRe(self.need(s, "string"), self.pattern(e.pattern)), s.errors)
        if isinstance(e, pst.Is):
            base = self.expr(e.base)
            if base.kind != "entity":
                raise self.outside("`is` on something other than an entity")
            value = z3.BoolVal(base.value.type == str(e.entity_type))
            if e.in_expr is not None:
                value = z3.And(value, self.in_op(base, self.expr(e.in_expr)).value)
            return Term("bool", value, base.errors)
        if isinstance(e, pst.IfThenElse):
            return self.if_then_else(e)
        if isinstance(e, pst.Set):
            return self.set_literal(e)
        if isinstance(e, pst.Slot):
            raise self.outside("a template slot")
        if isinstance(e, pst.Record):
            raise self.outside("a record literal")
        raise self.outside(f"the expression {type(e).__name__}")

    def unary(self, e: pst.UnaryOp) -> Term:
        a = self.expr(e.arg)
        if e.op == "not":
            return Term("bool", z3.Not(self.need(a, "bool")), a.errors)
        if e.op == "neg":
            v = self.need(a, "long")
            return Term("long", -v, (*a.errors, (f"`-({show(e.arg)})` may overflow a Long", v == LONG_MIN)))
        if e.op == "is_empty" and a.kind == "never":
            return Term("bool", z3.BoolVal(False), a.errors)
        if e.op == "is_empty" and a.kind == "set":
            return Term("bool", a.value == z3.EmptySet(a.value.sort().domain()), a.errors)
        raise self.outside(f"the {e.op}() function (extension types and functions are not encoded)")

    def binary(self, e: pst.BinaryOp) -> Term:
        op = e.op
        if op in ("and", "or"):
            a = self.boolean(self.expr(e.left))
            b = self.boolean(self.expr(e.right))
            guard = a.value if op == "and" else z3.Not(a.value)
            errors = a.errors + tuple((what, z3.And(guard, c)) for what, c in b.errors)
            value = z3.And(a.value, b.value) if op == "and" else z3.Or(a.value, b.value)
            return Term("bool", value, errors)
        a, b = self.expr(e.left), self.expr(e.right)
        errors = a.errors + b.errors
        if "never" in (a.kind, b.kind) and op not in ("eq", "not_eq"):
            # An attribute the entity's type lacks: the validator proved this is never reached
            # (a `has` or `is` before it is false here); the error entry says so if it were.
            return Term("long" if op in _ARITH else "bool", z3.IntVal(0) if op in _ARITH else z3.BoolVal(False), errors)
        if op in ("eq", "not_eq"):
            eq = self.equal(a, b)
            return Term("bool", eq if op == "eq" else z3.Not(eq), errors)
        if op in _COMPARE:
            x, y = self.need(a, "long"), self.need(b, "long")
            value = {"less": x < y, "less_eq": x <= y, "greater": x > y, "greater_eq": x >= y}[op]
            return Term("bool", value, errors)
        if op in _ARITH:
            x, y = self.need(a, "long"), self.need(b, "long")
            r = x + y if op == "add" else x - y if op == "sub" else x * y
            overflow = z3.Or(r < LONG_MIN, r > LONG_MAX)
            return Term("long", r, (*errors, (f"`{show(e)}` may overflow a Long", overflow)))
        if op == "in":
            return self.in_op(a, b)
        if op in ("contains", "contains_all", "contains_any"):
            return self.contains(op, a, b)
        raise self.outside(f"the {op} operator (extension types, tags are not encoded)")

    def equal(self, a: Term, b: Term) -> Any:
        if "never" in (a.kind, b.kind):
            return z3.BoolVal(False)
        if a.kind != b.kind or a.elem != b.elem:
            return z3.BoolVal(False)  # Cedar: values of different types are never equal, no error
        if a.kind == "entity":
            return self.ent_eq(a.value, b.value)
        if a.kind == "action":
            return z3.BoolVal(a.value == b.value)
        if a.kind in ("bool", "long", "string", "set"):
            return a.value == b.value
        raise self.outside(f"`==` between two {a.kind}")

    def in_op(self, a: Term, b: Term) -> Term:
        errors = a.errors + b.errors
        if a.kind == "action":
            targets = b.value if b.kind == "actions" else (b.value,) if b.kind == "action" else None
            if targets is None:
                raise self.outside("`action in` something other than action literals")
            ancestors = self.req.schema.action_ancestors(a.value)
            return Term("bool", z3.BoolVal(any(t in ancestors for t in targets)), errors)
        if a.kind != "entity":
            raise self.outside(f"`in` on a {a.kind}")
        if b.kind == "entity":
            return Term("bool", self.ent_in(a.value, b.value), errors)
        if b.kind == "entities":
            return Term("bool", z3.Or(*[self.ent_in(a.value, x) for x in b.value]), errors)
        raise self.outside(f"`in` a {b.kind} (only entity literals and sets of them are encoded)")

    def contains(self, op: str, a: Term, b: Term) -> Term:
        errors = a.errors + b.errors
        if a.kind == "entities" and op == "contains" and b.kind == "entity" and not b.value.is_literal:
            return Term("bool", z3.Or(*[self.ent_eq(b.value, x) for x in a.value]), errors)
        if a.kind != "set":
            raise self.outside(f"{op} on a {a.kind} (sets of Bool, Long or String are encoded)")
        if op == "contains":
            member = self.need(b, a.elem)
            self.req.members.append(member)
            return Term("bool", z3.IsMember(member, a.value), errors)
        if b.kind != "set" or b.elem != a.elem:
            raise self.outside(f"{op} with a {b.kind} argument")
        if op == "contains_all":
            return Term("bool", z3.IsSubset(b.value, a.value), errors)
        empty = z3.EmptySet(a.value.sort().domain())
        return Term("bool", z3.Not(z3.SetIntersect(a.value, b.value) == empty), errors)

    def get_attr(self, e: pst.GetAttr) -> Term:
        base = self.expr(e.base)
        var = self.attr_var(base, e)
        path = f"{var}.{e.attr}"
        attr = self.req.attr_type(var, e.attr)
        if attr is None:
            owner = "the context" if var == "context" else self.req.type_of(var)
            return Term("never", None, (*base.errors, (f"reads {path}, which {owner} does not have", z3.BoolVal(True))))
        if not encodable(attr.type):
            raise self.outside(
                f"reads {path} of type {attr.type} (only Bool, Long, String, entities and sets of "
                "Bool, Long or String are encoded)"
            )
        read = self.req.read(var, e.attr)
        errors = base.errors
        if not attr.required:
            errors = (*errors, (f"reads {path} without `has` (optional attribute)", z3.Not(read.present)))
        if attr.type.kind == "Entity":
            return Term("entity", Ent(None, attr.type.name, read.value, path=path), errors)
        kind = attr.type.kind.lower()
        elem = attr.type.element.kind.lower() if attr.type.element is not None else ""
        return Term(kind, read.value, errors, elem)

    def has_attr(self, e: pst.HasAttr) -> Term:
        if len(e.attrs) != 1:
            raise self.outside("`has` with an attribute path (a.b): records are not encoded")
        base = self.expr(e.base)
        var = self.attr_var(base, e)
        attr = self.req.attr_type(var, e.attrs[0])
        if attr is None:
            return Term("bool", z3.BoolVal(False), base.errors)
        if attr.required:
            return Term("bool", z3.BoolVal(True), base.errors)
        if not encodable(attr.type):
            raise self.outside(f"tests {var} has {e.attrs[0]} of type {attr.type}")
        return Term("bool", self.req.read(var, e.attrs[0]).present, base.errors)

    def attr_var(self, base: Term, e: object) -> str:
        if base.kind == "context":
            return "context"
        if base.kind == "entity" and base.value.path:
            raise self.outside(
                f"`{show(e)}` reads an attribute of {base.value.path}, an entity reached through an "
                "attribute (only principal, resource and context attributes are encoded)"
            )
        if base.kind == "entity" and base.value.var is not None:
            return str(base.value.var)
        raise self.outside(f"`{show(e)}`: attributes are encoded for principal, resource and context only")

    def if_then_else(self, e: pst.IfThenElse) -> Term:
        c = self.boolean(self.expr(e.cond))
        a, b = self.expr(e.then_expr), self.expr(e.else_expr)
        kind = a.kind if a.kind != "never" else b.kind
        if kind not in ("bool", "long", "string") or (a.kind not in (kind, "never")) or (b.kind not in (kind, "never")):
            raise self.outside("an `if` whose branches are not both Bool, Long or String")
        errors = (
            c.errors
            + tuple((w, z3.And(c.value, x)) for w, x in a.errors)
            + tuple((w, z3.And(z3.Not(c.value), x)) for w, x in b.errors)
        )
        return Term(kind, z3.If(c.value, self.need(a, kind), self.need(b, kind)), errors)

    def pattern(self, elems: tuple[object, ...]) -> Any:
        """A `like` pattern as a z3 regular expression (whole-string match, `*` any sequence)."""
        parts: list[Any] = []
        chars = ""
        for p in elems:
            if isinstance(p, pst.Char):
                chars += p.value
                continue
            if chars:
                parts.append(z3.Re(self.string(chars)))
                chars = ""
            parts.append(z3.Full(z3.ReSort(z3.StringSort())))
        if chars or not parts:
            parts.append(z3.Re(self.string(chars)))
        return parts[0] if len(parts) == 1 else z3.Concat(*parts)

    def set_literal(self, e: pst.Set) -> Term:
        items = [self.expr(x) for x in e.elements]
        errors: Errors = sum((t.errors for t in items), ())
        kinds = {t.kind for t in items}
        if not items:
            raise self.outside("an empty set literal (its element type is unknown)")
        if kinds == {"entity"} and all(t.value.is_literal for t in items):
            return Term("entities", tuple(t.value for t in items), errors)
        if kinds == {"action"}:
            return Term("actions", tuple(t.value for t in items), errors)
        if len(kinds) == 1 and kinds <= {"bool", "long", "string"}:
            (kind,) = kinds
            value = z3.EmptySet(items[0].value.sort())
            for t in items:
                value = z3.SetAdd(value, t.value)
                self.req.members.append(t.value)
            return Term("set", value, errors, kind)
        raise self.outside("a set literal of " + ", ".join(sorted(kinds)))


_SYMBOL = {"eq": "==", "not_eq": "!=", "and": "&&", "or": "||", "in": "in", **_ARITH, **_COMPARE}


def show(e: object) -> str:
    """An expression as Cedar text, for messages (operands of binary operators parenthesised
    when they are themselves binary).
    """
    if isinstance(e, pst.Var):
        return e.name
    if isinstance(e, pst.GetAttr):
        return f"{show(e.base)}.{e.attr}"
    if isinstance(e, pst.LongLit | pst.BoolLit):
        return str(e.value).lower() if isinstance(e, pst.BoolLit) else str(e.value)
    if isinstance(e, pst.StringLit):
        return '"' + e.value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(e, pst.EntityLit):
        return str(e.value)
    if isinstance(e, pst.BinaryOp):

        def side(x: object) -> str:
            return f"({show(x)})" if isinstance(x, pst.BinaryOp) else show(x)

        if e.op in _SYMBOL:
            return f"{side(e.left)} {_SYMBOL[e.op]} {side(e.right)}"
        name = {"contains_all": "containsAll", "contains_any": "containsAny"}.get(e.op, e.op)
        return f"{side(e.left)}.{name}({show(e.right)})"
    if isinstance(e, pst.UnaryOp):
        return f"!{show(e.arg)}" if e.op == "not" else f"-{show(e.arg)}" if e.op == "neg" else f"{show(e.arg)}.{e.op}()"
    if isinstance(e, pst.HasAttr):
        return f"{show(e.base)} has {'.'.join(e.attrs)}"
    return "…"
