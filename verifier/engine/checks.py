"""Static checks a Datalog program or query must pass before any backend sees it.

Backends assume a checked program: every relation declared with the right arity, every
rule safe (each variable bound by a positive atom or an assignment), types consistent,
and negation / aggregation stratified. Every problem is collected, not only the first,
so a user fixes a file in one round.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, get_args

from verifier.core.errors import Diagnostic, ProgramError, SourceLocation
from verifier.core.lazy import lazy_module
from verifier.core.suggest import closest
from verifier.engine.ast import (
    Aggregate,
    Atom,
    BinOp,
    Column,
    ColumnType,
    Comparison,
    Const,
    Declaration,
    Head,
    HeadTerm,
    Literal_,
    Negation,
    Program,
    Query,
    Rule,
    Term,
    Value,
    Var,
    Wildcard,
    render_value,
)
from verifier.engine.strata import dependency_graph, is_assignment, order_body

if TYPE_CHECKING:
    import networkx as nx
else:
    nx = lazy_module("networkx")

COLUMN_TYPES: tuple[str, ...] = get_args(ColumnType)


# ---------------------------------------------------------------- public API


def check_program(program: Program) -> None:
    """Raise ProgramError listing every problem in `program`; return if there is none."""
    diagnostics = program_diagnostics(program)
    if diagnostics:
        raise ProgramError(diagnostics)


def check_query(query: Query, program: Program) -> None:
    """Raise ProgramError listing every problem in a query body against `program`'s declarations."""
    diagnostics = query_diagnostics(query, program)
    if diagnostics:
        raise ProgramError(diagnostics)


def program_diagnostics(program: Program) -> list[Diagnostic]:
    """Every problem in `program`, for callers that merge them with other errors (the loader)."""
    decls = declarations_by_name(program)
    diags = list(_check_declarations(program.declarations))
    for rule in program.rules:
        diags.extend(_check_rule(rule, decls))
    diags.extend(_check_strata(program))
    return diags


def query_diagnostics(query: Query, program: Program) -> list[Diagnostic]:
    decls = declarations_by_name(program)
    diags: list[Diagnostic] = []
    for lit in query.body:
        diags.extend(_check_literal_relation(lit, decls))
    diags.extend(_check_body_safety(query.body, bound_variables(query.body)))
    env = _TypeEnv(decls)
    env.check_body(query.body)
    diags.extend(env.diags)
    return diags


def declarations_by_name(program: Program) -> dict[str, Declaration]:
    """The first declaration of each relation (a second one is reported as a duplicate)."""
    decls: dict[str, Declaration] = {}
    for d in program.declarations:
        decls.setdefault(d.name, d)
    return decls


def relation_use_diagnostics(
    relation: str, arity: int, loc: SourceLocation, decls: Mapping[str, Declaration]
) -> list[Diagnostic]:
    """An undeclared relation (with a did-you-mean) or a wrong number of arguments."""
    decl = decls.get(relation)
    if decl is None:
        return [
            Diagnostic(
                loc,
                f"relation '{relation}' is not declared{_did_you_mean(relation, decls)}; "
                "declare it with .decl (derived) or .input (facts from the inventory)",
            )
        ]
    if decl.arity != arity:
        names = ", ".join(c.name for c in decl.columns)
        return [
            Diagnostic(
                loc,
                f"relation '{relation}' is declared with {_plural(decl.arity, 'argument')} "
                f"({names}) but used here with {arity}",
            )
        ]
    return []


def constant_column_diagnostic(const: Const, column: Column, relation: str) -> Diagnostic | None:
    """A string in a number column or an integer in a symbol column; None when it fits."""
    if isinstance(const.value, str) and column.type == "number":
        return Diagnostic(
            const.loc,
            f"string {render_value(const.value)} in column '{column.name}' of "
            f"'{relation}', which is declared number; expected an integer",
        )
    if isinstance(const.value, int) and column.type == "symbol":
        return Diagnostic(
            const.loc,
            f"integer {const.value} in column '{column.name}' of '{relation}', "
            "which is declared symbol; expected a quoted string",
        )
    return None


# ---------------------------------------------------------------- declarations


def _check_declarations(declarations: Iterable[Declaration]) -> Iterator[Diagnostic]:
    first: dict[str, Declaration] = {}
    for decl in declarations:
        if decl.name in first:
            yield Diagnostic(
                decl.loc,
                f"relation '{decl.name}' is declared twice (first at "
                f"{first[decl.name].loc}); declare each relation once",
            )
        else:
            first[decl.name] = decl
        yield from _check_columns(decl)


def _check_columns(decl: Declaration) -> Iterator[Diagnostic]:
    seen: set[str] = set()
    for col in decl.columns:
        if col.type not in COLUMN_TYPES:
            yield Diagnostic(
                col.loc,
                f"column '{col.name}' of '{decl.name}' has unknown type '{col.type}'; expected symbol or number",
            )
        if col.name in seen:
            yield Diagnostic(
                col.loc,
                f"column '{col.name}' appears twice in the declaration of '{decl.name}'; column names must differ",
            )
        seen.add(col.name)


# ---------------------------------------------------------------- rules


def _check_rule(rule: Rule, decls: Mapping[str, Declaration]) -> Iterator[Diagnostic]:
    yield from _check_head_relation(rule, decls)
    for lit in rule.body:
        yield from _check_literal_relation(lit, decls)
    yield from _check_rule_safety(rule)
    yield from _check_aggregates(rule.head)
    env = _TypeEnv(decls)
    env.check_body(rule.body)
    env.check_head(rule.head)
    yield from env.diags


def _check_head_relation(rule: Rule, decls: Mapping[str, Declaration]) -> Iterator[Diagnostic]:
    head = rule.head
    yield from relation_use_diagnostics(head.relation, len(head.args), head.loc, decls)
    decl = decls.get(head.relation)
    if decl is None or not decl.is_input:
        return
    if rule.body:
        yield Diagnostic(
            head.loc,
            f"'{head.relation}' is an input relation (.input), so no rule may derive "
            "it; its facts come only from the inventory loader. Declare the head "
            "with .decl instead",
        )
    else:
        yield Diagnostic(
            head.loc,
            f"inline fact for input relation '{head.relation}'; input relations get "
            "facts only from the inventory loader or a facts file, not a rule file",
        )


def _check_literal_relation(lit: Literal_, decls: Mapping[str, Declaration]) -> Iterator[Diagnostic]:
    atom = lit.atom if isinstance(lit, Negation) else lit
    if isinstance(atom, Atom):
        yield from relation_use_diagnostics(atom.relation, len(atom.args), atom.loc, decls)


def _did_you_mean(name: str, decls: Iterable[str]) -> str:
    close = closest(name, decls)
    return f" (did you mean '{close}'?)" if close else ""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


# ---------------------------------------------------------------- safety


def bound_variables(body: Iterable[Literal_]) -> set[str]:
    """Variables bound by positive atoms, then by assignments in the order they become evaluable."""
    lits = tuple(body)
    # Arithmetic inside an atom is an error of its own, so its variables bind nothing here.
    bound = {arg.name for lit in lits if isinstance(lit, Atom) for arg in lit.args if isinstance(arg, Var)}
    for lit in order_body(lits):
        target = is_assignment(lit, bound)
        if target is not None:
            bound.add(target)
    return bound


def _check_rule_safety(rule: Rule) -> Iterator[Diagnostic]:
    bound = bound_variables(rule.body)
    yield from _check_body_safety(rule.body, bound)
    yield from _check_head_safety(rule, bound)


def _check_body_safety(body: tuple[Literal_, ...], bound: set[str]) -> Iterator[Diagnostic]:
    for lit in body:
        if isinstance(lit, Atom):
            yield from _arithmetic_in_atom(lit)
        elif isinstance(lit, Negation):
            yield from _arithmetic_in_atom(lit.atom)
            for var in _unbound(lit.atom.args, bound):
                yield Diagnostic(
                    var.loc,
                    f"variable '{var.name}' in negated atom '{lit}' is not bound; "
                    f"negation only filters, so bind '{var.name}' in a positive "
                    "body atom first",
                )
        else:
            yield from _check_comparison_safety(lit, bound)


def _check_comparison_safety(lit: Comparison, bound: set[str]) -> Iterator[Diagnostic]:
    for wild in _wildcards((lit.left, lit.right)):
        yield Diagnostic(wild.loc, f"'_' is not allowed in comparison '{lit}'; compare a named variable or a constant")
    for var in _unbound((lit.left, lit.right), bound):
        yield Diagnostic(
            var.loc,
            f"variable '{var.name}' in comparison '{lit}' is not bound; bind it in a "
            "positive body atom or an assignment (V = expression) first",
        )


def _check_head_safety(rule: Rule, bound: set[str]) -> Iterator[Diagnostic]:
    head = rule.head
    for arg in head.args:
        inner = arg.term if isinstance(arg, Aggregate) else arg
        for wild in _wildcards((inner,)):
            yield Diagnostic(
                wild.loc,
                f"'_' is not allowed in the head of '{head.relation}'; every head argument needs a value from the body",
            )
        for var in _unbound((inner,), bound):
            yield Diagnostic(var.loc, _unbound_head_message(rule, var, arg))


def _unbound_head_message(rule: Rule, var: Var, arg: HeadTerm) -> str:
    if not rule.body:
        return f"fact '{rule.head.relation}' has variable '{var.name}'; a fact's arguments must be constants"
    if isinstance(arg, Aggregate):
        return (
            f"variable '{var.name}' aggregated by {arg} is not bound; expected it in a positive body "
            "atom or an assignment"
        )
    return (
        f"variable '{var.name}' in the head of '{rule.head.relation}' is not bound; expected it in a "
        "positive body atom or an assignment"
    )


def _arithmetic_in_atom(atom: Atom) -> Iterator[Diagnostic]:
    for arg in atom.args:
        if isinstance(arg, BinOp):
            expr = _strip_parens(str(arg))
            yield Diagnostic(
                arg.loc,
                f"arithmetic '{expr}' is not allowed as an argument of "
                f"'{atom.relation}'; compute it with an assignment (T = {expr}) "
                "and pass T",
            )


def _unbound(terms: Iterable[Term], bound: set[str]) -> Iterator[Var]:
    """Each unbound variable once, at its first occurrence."""
    seen: set[str] = set()
    for var in _vars(terms):
        if var.name not in bound and var.name not in seen:
            seen.add(var.name)
            yield var


def _vars(terms: Iterable[Term]) -> Iterator[Var]:
    for t in terms:
        if isinstance(t, Var):
            yield t
        elif isinstance(t, BinOp):
            yield from _vars((t.left, t.right))


def _wildcards(terms: Iterable[Term]) -> Iterator[Wildcard]:
    for t in terms:
        if isinstance(t, Wildcard):
            yield t
        elif isinstance(t, BinOp):
            yield from _wildcards((t.left, t.right))


def _strip_parens(text: str) -> str:
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


# ---------------------------------------------------------------- aggregates


def _check_aggregates(head: Head) -> Iterator[Diagnostic]:
    aggregates = [a for a in head.args if isinstance(a, Aggregate)]
    for extra in aggregates[1:]:
        yield Diagnostic(
            extra.loc,
            f"the head of '{head.relation}' has {len(aggregates)} aggregates; a head "
            "may have at most one, so split it into one rule per aggregate",
        )


# ---------------------------------------------------------------- types


@dataclass(frozen=True)
class _Typed:
    """Why a variable has a type: the first place that fixed it."""

    type: ColumnType
    reason: str
    loc: SourceLocation


@dataclass
class _TypeEnv:
    """Types of one rule's (or query's) variables, inferred from atom columns and arithmetic."""

    decls: Mapping[str, Declaration]
    vars: dict[str, _Typed] = field(default_factory=dict)
    diags: list[Diagnostic] = field(default_factory=list)
    conflicted: set[str] = field(default_factory=set)

    def check_body(self, body: tuple[Literal_, ...]) -> None:
        # Atoms first: their declared columns are the ground truth every other literal is checked against.
        for lit in body:
            atom = lit.atom if isinstance(lit, Negation) else lit
            if isinstance(atom, Atom):
                self._atom(atom)
        for lit in order_body(body):
            if isinstance(lit, Comparison):
                self._comparison(lit)

    def check_head(self, head: Head) -> None:
        columns = self._columns(head.relation, len(head.args))
        for i, arg in enumerate(head.args):
            got = self._head_arg_type(arg)
            col = columns[i] if columns else None
            if got is None or col is None or col.type not in COLUMN_TYPES:
                continue
            if isinstance(arg, Const):
                self._report(constant_column_diagnostic(arg, col, head.relation))
            elif got != col.type:
                self._error(
                    arg.loc,
                    f"head argument {i + 1} of '{head.relation}' ({arg}) is a {got} "
                    f"but column '{col.name}' is declared {col.type}",
                )

    # -- body

    def _atom(self, atom: Atom) -> None:
        columns = self._columns(atom.relation, len(atom.args))
        if columns is None:
            return
        for arg, col in zip(atom.args, columns, strict=True):
            if col.type not in COLUMN_TYPES:
                continue
            if isinstance(arg, Var):
                self._require(arg, col.type, f"column '{col.name}' of '{atom.relation}'")
            elif isinstance(arg, Const):
                self._report(constant_column_diagnostic(arg, col, atom.relation))

    def _comparison(self, lit: Comparison) -> None:
        # Order comparisons work on symbols too (lexicographic, the same in every engine):
        # rules use `L1 < L2` to report each unordered pair once.
        left, right = self._type_of(lit.left), self._type_of(lit.right)
        if left is None and right is not None and isinstance(lit.left, Var):
            self._require(lit.left, right, f"'{lit}'")
        elif right is None and left is not None and isinstance(lit.right, Var):
            self._require(lit.right, left, f"'{lit}'")
        elif left is not None and right is not None and left != right:
            self._error(
                lit.loc,
                f"'{lit.op}' compares a {left} ({lit.left}) with a {right} ({lit.right}) "
                f"in '{lit}'; both sides must have one type",
            )

    # -- terms

    def _head_arg_type(self, arg: HeadTerm) -> ColumnType | None:
        if not isinstance(arg, Aggregate):
            return self._type_of(arg)
        if arg.func == "sum":
            self._number(arg.term, "sum needs a number argument", "")
            return "number"
        if arg.func == "count":
            self._type_of(arg.term)
            return "number"
        # min and max keep their argument's type: the smallest GPU id names a domain.
        return self._type_of(arg.term)

    def _type_of(self, term: Term) -> ColumnType | None:
        """The term's type (checking arithmetic operands on the way); None when unknown."""
        if isinstance(term, Const):
            return "number" if isinstance(term.value, int) else "symbol"
        if isinstance(term, Var):
            typed = self.vars.get(term.name)
            return typed.type if typed else None
        if isinstance(term, BinOp):
            for side in (term.left, term.right):
                self._number(side, f"arithmetic '{term.op}' needs numbers", "")
            return "number"
        return None

    def _number(self, term: Term, what: str, hint: str) -> None:
        """Require a number: fix an untyped variable to number, or report a symbol."""
        got = self._type_of(term)
        if got is None and isinstance(term, Var):
            self._require(term, "number", what)
        elif got == "symbol":
            tail = f"; {hint}" if hint else ""
            self._error(term.loc, f"{what}, but {self._describe(term)} is a symbol{tail}")

    def _require(self, var: Var, type_: ColumnType, reason: str) -> None:
        known = self.vars.get(var.name)
        if known is None:
            self.vars[var.name] = _Typed(type_, reason, var.loc)
        elif known.type != type_ and var.name not in self.conflicted:
            # One report per variable: later uses would only repeat the same conflict.
            self.conflicted.add(var.name)
            self._error(
                var.loc,
                f"variable '{var.name}' is used as a {type_} here ({reason}) but as a "
                f"{known.type} at {known.loc} ({known.reason}); a variable holds values "
                "of one type",
            )

    def _describe(self, term: Term) -> str:
        if isinstance(term, Var) and term.name in self.vars:
            typed = self.vars[term.name]
            return f"'{term.name}' ({typed.reason} at {typed.loc})"
        if isinstance(term, Const):
            return _describe_value(term.value)
        return f"'{term}'"

    def _columns(self, relation: str, arity: int) -> tuple[Column, ...] | None:
        decl = self.decls.get(relation)
        if decl is None or decl.arity != arity:
            return None  # reported as an undeclared relation or wrong arity
        return decl.columns

    def _error(self, loc: SourceLocation, message: str) -> None:
        self.diags.append(Diagnostic(loc, message))

    def _report(self, diag: Diagnostic | None) -> None:
        if diag is not None:
            self.diags.append(diag)


def _describe_value(value: Value) -> str:
    return f"the string {render_value(value)}" if isinstance(value, str) else f"the integer {value}"


# ---------------------------------------------------------------- stratification


def _check_strata(program: Program) -> Iterator[Diagnostic]:
    graph = dependency_graph(program)
    components = nx.strongly_connected_components(graph)
    component = {rel: i for i, members in enumerate(components) for rel in members}
    for rule in program.rules:
        head = rule.head.relation
        for body_rel, how, loc in _non_monotone_uses(rule):
            if component.get(body_rel) != component.get(head):
                continue
            cycle = " -> ".join(_cycle(graph, head, body_rel))
            yield Diagnostic(
                loc,
                f"relation '{head}' {how} '{body_rel}' inside the recursive cycle {cycle}; "
                "negation and aggregates must not be recursive",
            )


def _non_monotone_uses(rule: Rule) -> Iterator[tuple[str, str, SourceLocation]]:
    """(body relation, verb phrase, where) for each negated read, and each read of an aggregate rule."""
    aggregated = rule.head.aggregate is not None
    for lit in rule.body:
        if isinstance(lit, Negation):
            yield lit.atom.relation, "depends negatively on", lit.loc
        elif isinstance(lit, Atom) and aggregated:
            yield lit.relation, "aggregates over", lit.loc


def _cycle(graph: nx.DiGraph, head: str, body: str) -> list[str]:
    """`head -> body -> ... -> head` in depends-on order.

    Graph edges point from a body relation to the head that reads it, so the way back
    from `body` to `head` in depends-on order is the graph path head ~> body, reversed.
    """
    back: list[str] = nx.shortest_path(graph, head, body)
    return [head, *reversed(back)]
