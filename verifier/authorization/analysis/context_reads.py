"""Context reads the enumerated contexts cannot cover: refused, never answered for some contexts only.

The analyses over the inventory (analysis/inventory.py, analysis/questions.py, the inventory half
of analysis/equivalence.py) ask Cedar once per context of an enumeration built from what the
policies compare context attributes with (verifier/authorization/classes.py `policy_reads`):
both values of a boolean, each literal (and its neighbours, for a whole number) of a comparison.
That is every outcome only where each read of `context.x` is used as a condition or compared with
a literal. Any other read (`context.tag like "a*"`, `context.n + 1 > 5`, `context.t ==
resource.tenant`, `context.set.contains(...)`, a record attribute, the whole `context`) has
outcomes no enumerated value shows: the policy would be called dead, or nobody allowed, for a
context that exists. Such a policy set is refused (exit 2) at the policy's file:line, naming the
read; `--context` still asks about one context given by hand.
"""

from __future__ import annotations

from collections.abc import Iterator

from verifier.authorization.policies import PolicyBundle
from verifier.core.errors import TopologError

COMPARISONS = frozenset({"eq", "not_eq", "less", "less_eq", "greater", "greater_eq"})
"""Operators whose outcome over a literal the enumeration shows in full (see classes.policy_reads)."""
CONDITION_JOINS = frozenset({"and", "or"})


def refuse_uncovered_context_reads(bundle: PolicyBundle, what: str, hint: str = "") -> None:
    """Raise TopologError at the first policy (by file and line) reading the context in a way the
    enumerated contexts do not cover; `what` names the analysis refused, `hint` what to do instead.
    """
    for policy in sorted(bundle.policies.values(), key=lambda p: (p.loc.file, p.loc.line or 0, p.id)):
        read = uncovered_read(policy.text)
        if read is not None:
            raise TopologError.at(
                policy.loc,
                f"policy {policy.id} reads {read}; {what} asks each context attribute only with the values "
                "it is compared with (both values of a condition, each literal of ==, !=, <, <=, >, >=), so "
                "it would miss contexts this read tells apart: refused rather than answered for some contexts "
                f"only{hint}",
            )


def uncovered_read(statement: str) -> str | None:
    """The first context read of one policy statement that the enumeration does not cover, in words."""
    # Imported when asked, as verifier.authorization.observed does: only the analyses parse again.
    from cedarpy import PolicySet, pst

    (template,) = PolicySet.from_str(statement).to_pst().static_policies.values()
    for clause in template.clauses:
        for node, parent, _ in _walk(clause.expr, None, True):
            if not (isinstance(node, pst.Var) and node.name == "context") or isinstance(parent, pst.HasAttr):
                continue
            if not isinstance(parent, pst.GetAttr):
                return "the whole `context` record"
            holder, attr_is_condition = _holder(clause.expr, parent)
            if not attr_is_condition and not _compared_with_literal(parent, holder):
                return f"`context.{parent.attr}` {_how(holder)}"
    return None


def _compared_with_literal(attr: object, holder: object) -> bool:
    from cedarpy import pst

    if not (isinstance(holder, pst.BinaryOp) and holder.op in COMPARISONS):
        return False
    other = holder.right if holder.left is attr else holder.left
    return isinstance(other, pst.BoolLit | pst.LongLit | pst.StringLit)


def _how(holder: object) -> str:
    from cedarpy import pst

    if isinstance(holder, pst.Like):
        return "with `like`"
    if isinstance(holder, pst.GetAttr):
        return f"as a record (`.{holder.attr}`)"
    if isinstance(holder, pst.HasAttr):
        return "as a record (`has`)"
    if isinstance(holder, pst.BinaryOp | pst.UnaryOp):
        if holder.op in COMPARISONS:
            return f"in `{holder.op}` with something other than a literal"
        return f"in `{holder.op}`"
    return f"in {type(holder).__name__}"


def _holder(root: object, target: object) -> tuple[object, bool]:
    """The node holding `target`, and whether `target` stands where a condition (a boolean) does."""
    for node, parent, is_condition in _walk(root, None, True):
        if node is target:
            return parent, is_condition
    raise AssertionError("the target is a node of the tree walked")


def _walk(node: object, parent: object, is_condition: bool) -> Iterator[tuple[object, object, bool]]:
    """Each node with its parent and whether it stands where a condition (a boolean) does.

    Condition position: the clause itself, either side of && and ||, the argument of `!`, the test
    of an `if`, and its branches where the `if` itself is in condition position. Any other child
    (a comparison's side, an operand, a record field, ...) is not.
    """
    from cedarpy import pst

    yield node, parent, is_condition
    if isinstance(node, pst.BinaryOp):
        joins = node.op in CONDITION_JOINS
        yield from _walk(node.left, node, joins and is_condition)
        yield from _walk(node.right, node, joins and is_condition)
    elif isinstance(node, pst.UnaryOp):
        yield from _walk(node.arg, node, node.op == "not")
    elif isinstance(node, pst.IfThenElse):
        yield from _walk(node.cond, node, True)
        yield from _walk(node.then_expr, node, is_condition)
        yield from _walk(node.else_expr, node, is_condition)
    elif isinstance(node, pst.GetAttr | pst.HasAttr | pst.Like):
        yield from _walk(node.base, node, False)
    elif isinstance(node, pst.Is):
        yield from _walk(node.base, node, False)
        if node.in_expr is not None:
            yield from _walk(node.in_expr, node, False)
    elif isinstance(node, pst.Set):
        for e in node.elements:
            yield from _walk(e, node, False)
    elif isinstance(node, pst.Record):
        for v in dict(node.fields).values():
            yield from _walk(v, node, False)
