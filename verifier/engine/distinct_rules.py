"""Whether the rules of one relation can derive a tuple twice, so that its statement needs a DISTINCT.

DuckDB removes duplicates by hashing every derived row: at 131,072 GPUs that was 0.1 s of the
0.11 s link_peer took (2.1 M rows). Many rules cannot repeat a tuple. The tables a rule reads hold
each row once, so its join yields each combination of rows once; if the head's values fix every
row the body read, no two combinations give one head tuple (the rule is *injective*). A row is
fixed when each of its values is (a head variable, a constant, or a variable some fixed row
holds), or when the values of a key of its relation are (columns that hold no value twice:
verifier.engine.column_keys, known for input relations loaded once). Two injective rules of one
relation still repeat each other's tuples unless they are *disjoint*: a tuple both derived would
need bindings that contradict one another (two constants equal, `X != X`, or a row that one rule
reads and the other's negation says is absent). Equal head values are followed through keys: two
atoms of a keyed relation whose key values are equal read the same row, so all their values are.

Every answer errs towards "may repeat" (a DISTINCT that was not needed costs time, never a wrong
count): a rule with an aggregate head derives one tuple per group (two such rules are disjoint only
as any two rules are, by their groups), and nothing is proved about arithmetic in heads or atoms
beyond its variables being fixed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

from verifier.engine.ast import Aggregate, Atom, Comparison, Const, Negation, Rule, Term, Var, Wildcard, term_vars

Keys = Mapping[str, Sequence[tuple[int, ...]]]
"""Per relation, column sets that hold no value twice."""

_CONTRADICTED_BY_EQUAL = frozenset({"!=", "<", ">"})
"""Comparisons false whenever their two sides are equal."""


def rows_distinct(rules: Sequence[Rule], keys: Keys) -> bool:
    """Whether `rules` (all of one head relation, evaluated together) derive no tuple twice,
    every relation they read being a set of rows when they run.
    """
    return all(_injective(r, keys) for r in rules) and all(_disjoint(a, b, keys) for a, b in combinations(rules, 2))


def bindings_distinct(rule: Rule, keys: Keys) -> bool:
    """Whether no two instances of the rule's body bind its variables alike: each combination of the
    rows it reads gives other values to the variables (an aggregate's inner SELECT of its bindings then
    needs no DISTINCT for `sum`, which adds over distinct bindings).
    """
    return _fixes_rows(rule, {t.name for a in rule.positive_atoms() for t in a.args if isinstance(t, Var)}, keys)


def counted_apart(rule: Rule, keys: Keys) -> bool:
    """Whether a `count` rule counts a plain variable that, with the head's group variables, fixes every
    row its body reads: within a group no value of it then comes twice, so COUNT needs no DISTINCT.
    """
    agg = rule.head.aggregate
    if agg is None or agg[1].func != "count" or not isinstance(agg[1].term, Var):
        return False
    fixed = {a.name for a in rule.head.args if isinstance(a, Var)} | {agg[1].term.name}
    return _fixes_rows(rule, fixed, keys)


def _injective(rule: Rule, keys: Keys) -> bool:
    """Whether the head's values fix every row the body reads, or the rule groups its rows (an
    aggregate: one tuple per group).
    """
    if rule.head.aggregate is not None:
        return True
    return _fixes_rows(rule, {a.name for a in rule.head.args if isinstance(a, Var)}, keys)


def _fixes_rows(rule: Rule, fixed: set[str], keys: Keys) -> bool:
    """Whether the values of the variables `fixed` (and so of those they fix in turn) leave one row of
    each positive atom of the body.
    """
    fixed = set(fixed)
    atoms = list(rule.positive_atoms())
    assignments = [
        (left, right)
        for c in rule.body
        if isinstance(c, Comparison) and c.op == "="
        for left, right in ((c.left, c.right), (c.right, c.left))
        if isinstance(left, Var)
    ]
    grew = True
    while grew:
        grew = False
        for atom in atoms:
            if _row_fixed(atom, fixed, keys):
                more = {a.name for a in atom.args if isinstance(a, Var)} - fixed
                if more:
                    fixed |= more
                    grew = True
        for var, value in assignments:
            if var.name not in fixed and set(term_vars(value)) <= fixed:
                fixed.add(var.name)
                grew = True
    return all(_row_fixed(atom, fixed, keys) for atom in atoms)


def _row_fixed(atom: Atom, fixed: set[str], keys: Keys) -> bool:
    """Whether the values of `fixed` variables leave at most one row of the atom's relation to match it."""

    def known(term: Term) -> bool:
        return not isinstance(term, Wildcard) and set(term_vars(term)) <= fixed

    if all(known(t) for t in atom.args):
        return True
    return any(all(known(atom.args[c]) for c in key) for key in keys.get(atom.relation, ()))


class _Equalities:
    """Terms of two rules (0 and 1) known equal when both derive one tuple: union-find over nodes.

    A variable is one node per rule, a constant one node per value (two constants in one class
    contradict each other), and a wildcard or an arithmetic term one node per place it is written
    (equal to nothing unless joined).
    """

    def __init__(self) -> None:
        self._up: dict[object, object] = {}
        self._at: dict[tuple[int, int, int], object] = {}

    def node(self, rule: int, literal: int, position: int, term: Term) -> object:
        """The node of `term`, written at `position` of literal `literal` (-1: the head) of `rule`."""
        if isinstance(term, Var):
            return ("v", rule, term.name)
        if isinstance(term, Const):
            return ("c", type(term.value).__name__, term.value)
        return self._at.setdefault((rule, literal, position), ("w", rule, literal, position))

    def find(self, x: object) -> object:
        root = x
        while (nxt := self._up.get(root, root)) != root:
            root = nxt
        while x != root:
            self._up[x], x = root, self._up[x]
        return root

    def join(self, a: object, b: object) -> bool:
        """Make `a` and `b` one class; whether they were two."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self._up[ra] = rb
        return True

    def same(self, a: object, b: object) -> bool:
        return a == b or self.find(a) == self.find(b)

    def constants_clash(self) -> bool:
        """Whether two different constants were made equal."""
        seen: dict[object, object] = {}
        for node in {*self._up, *self._up.values()}:
            if isinstance(node, tuple) and node[0] == "c" and seen.setdefault(self.find(node), node) != node:
                return True
        return False


def _disjoint(first: Rule, second: Rule, keys: Keys) -> bool:
    """Whether no tuple can be derived by both rules."""
    eq = _Equalities()
    rules = (first, second)
    for p, (ha, hb) in enumerate(zip(first.head.args, second.head.args, strict=True)):
        if not isinstance(ha, Aggregate) and not isinstance(hb, Aggregate):  # rows_distinct left those out
            eq.join(eq.node(0, -1, p, ha), eq.node(1, -1, p, hb))
    atoms = [[(i, lit) for i, lit in enumerate(rule.body) if isinstance(lit, Atom)] for rule in rules]
    # Two atoms of a keyed relation whose key values are equal read one row: all their values are equal.
    grew = True
    while grew:
        grew = False
        for (i, a), (j, b) in ((x, y) for x in atoms[0] for y in atoms[1] if x[1].relation == y[1].relation):
            for key in keys.get(a.relation, ()):
                if all(eq.same(eq.node(0, i, c, a.args[c]), eq.node(1, j, c, b.args[c])) for c in key):
                    for c, (ta, tb) in enumerate(zip(a.args, b.args, strict=True)):
                        grew |= eq.join(eq.node(0, i, c, ta), eq.node(1, j, c, tb))
                    break
    if eq.constants_clash():
        return True
    for r, rule in enumerate(rules):
        for i, lit in enumerate(rule.body):
            if (
                isinstance(lit, Comparison)
                and lit.op in _CONTRADICTED_BY_EQUAL
                and eq.same(eq.node(r, i, 0, lit.left), eq.node(r, i, 1, lit.right))
            ):
                return True
    # A row that one rule reads and the other's negation says is absent.
    for r, rule in enumerate(rules):
        for i, lit in enumerate(rule.body):
            if not isinstance(lit, Atom):
                continue
            for j, neg in enumerate(rules[1 - r].body):
                if (
                    isinstance(neg, Negation)
                    and neg.atom.relation == lit.relation
                    and all(
                        isinstance(tn, Wildcard) or eq.same(eq.node(r, i, c, tp), eq.node(1 - r, j, c, tn))
                        for c, (tp, tn) in enumerate(zip(lit.args, neg.atom.args, strict=True))
                    )
                ):
                    return True
    return False
