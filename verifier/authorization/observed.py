"""What a bundle's policies can observe, read off their syntax trees once, when they are validated.

A policy sees an entity only through its type, the attributes it reads and the entities it
names; it sees the context through the attributes it reads and the literals it compares them
with (verifier/authorization/classes.py builds equivalence classes and contexts from this).
Kept as plain data with the validated bundle, so a bundle read back from the cache answers
these questions without Cedar's parser (importing cedarpy is a sixth of a small `authorize`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, fields, is_dataclass
from typing import TYPE_CHECKING

from verifier.authorization.entities import uid
from verifier.core.frozen import Frozen

if TYPE_CHECKING:
    from cedarpy import pst

CEDAR_LONG = range(-(2**63), 2**63)
"""The values of a Cedar Long (64-bit signed)."""


@dataclass(frozen=True, repr=False, eq=False)
class Observed(Frozen):
    """What the policies of one bundle read: its union with another bundle's is their union's."""

    attributes: frozenset[str]
    """Entity attributes read (`principal.tenant`, `resource has quarantined`)."""
    named: frozenset[str]
    """Uids of the entities named anywhere (scopes, `in`, `==`, literals), actions aside."""
    context: tuple[tuple[str, frozenset[object]], ...]
    """Each context attribute read (sorted), with the literal values it is compared with."""
    context_tested: frozenset[str]
    """Context attributes tested with `has`."""
    groupable: bool
    """False when a policy compares principal and resource with each other as entities."""

    @staticmethod
    def union(parts: Iterable[Observed]) -> Observed:
        """What the policies of all these bundles read (a diff's two policy sets)."""
        parts = list(parts)
        context: dict[str, set[object]] = {}
        for part in parts:
            for name, literals in part.context:
                context.setdefault(name, set()).update(literals)
        return Observed(
            frozenset().union(*(p.attributes for p in parts)),
            frozenset().union(*(p.named for p in parts)),
            tuple((name, frozenset(context[name])) for name in sorted(context)),
            frozenset().union(*(p.context_tested for p in parts)),
            all(p.groupable for p in parts),
        )


def observe(templates: Iterable[pst.Template]) -> Observed:
    """What the policies with these syntax trees read."""
    from cedarpy import pst  # only when policies are validated: a cached bundle carries the answer

    attrs: set[str] = set()
    named: set[str] = set()
    ctx: dict[str, set[object]] = {}
    has_ctx: set[str] = set()
    groupable = True
    for template in templates:
        for u in pst.entity_uids(template):
            if str(u.type) != "Action":
                named.add(uid(str(u.type), u.id))
        for node in walk(template):
            if isinstance(node, pst.GetAttr):
                if node.base == pst.Var("context"):
                    ctx.setdefault(node.attr, set())
                else:
                    attrs.add(node.attr)
            elif isinstance(node, pst.HasAttr):
                if node.base == pst.Var("context"):
                    has_ctx.update(node.attrs)
                    for a in node.attrs:
                        ctx.setdefault(a, set())
                else:
                    attrs.update(node.attrs)
            elif isinstance(node, pst.BinaryOp):
                _context_literals(node, ctx)
                if node.op in ("eq", "not_eq", "in") and _entity_expr(node.left) and _entity_expr(node.right):
                    groupable = False
    context = tuple((name, frozenset(ctx[name])) for name in sorted(ctx))
    return Observed(frozenset(attrs), frozenset(named), context, frozenset(has_ctx), groupable)


def named_entities(template: pst.Template) -> tuple[str, ...]:
    """Uids of the entities one policy names, sorted: uid literals (actions aside), and the teams
    that string literals in `principal.teams.contains("x")` (containsAny, containsAll) stand for:
    `teams` holds team ids, so such a literal names a team as surely as `Team::"x"` does.
    """
    from cedarpy import pst

    named = {uid(str(u.type), u.id) for u in pst.entity_uids(template) if str(u.type) != "Action"}
    for node in walk(template):
        if (
            isinstance(node, pst.BinaryOp)
            and node.op in ("contains", "contains_any", "contains_all")
            and isinstance(node.left, pst.GetAttr)
            and node.left.attr == "teams"
        ):
            literals = node.right.elements if isinstance(node.right, pst.Set) else (node.right,)
            named.update(uid("Team", lit.value) for lit in literals if isinstance(lit, pst.StringLit))
    return tuple(sorted(named))


def walk(node: object) -> Iterator[object]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, dict):
            stack.extend(n.values())
        elif isinstance(n, tuple):
            stack.extend(n)
        elif is_dataclass(n) and not isinstance(n, type):
            stack.extend(getattr(n, f.name) for f in fields(n))


def _entity_expr(e: object) -> bool:
    """An expression that may denote a request entity (not a literal): principal, resource or an attribute."""
    from cedarpy import pst

    return isinstance(e, pst.Var) and e.name in ("principal", "resource")


def _context_literals(node: pst.BinaryOp, ctx: dict[str, set[object]]) -> None:
    from cedarpy import pst

    for attr_side, lit_side in ((node.left, node.right), (node.right, node.left)):
        if isinstance(attr_side, pst.GetAttr) and attr_side.base == pst.Var("context"):
            if isinstance(lit_side, pst.BoolLit | pst.StringLit):
                ctx.setdefault(attr_side.attr, set()).add(lit_side.value)
            elif isinstance(lit_side, pst.LongLit):
                # Each side of a bound: enough to see every outcome of <, <=, ==, >=, >. Only
                # Longs: beside the largest or smallest one there is no other side to ask (a
                # context holding 2**63 is no request Cedar can build).
                near = (lit_side.value - 1, lit_side.value, lit_side.value + 1)
                ctx.setdefault(attr_side.attr, set()).update(v for v in near if v in CEDAR_LONG)
