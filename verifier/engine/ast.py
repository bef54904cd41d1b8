"""The Datalog abstract syntax tree that every other part of the engine works on.

Parsed once from text (see `parser.py`), checked (`checks.py`), then compiled by each
backend. Nodes are frozen so programs can be shared between backends safely.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, TypeAlias

from verifier.core.errors import SourceLocation

Value: TypeAlias = str | int
"""A ground value: a symbol (string) or an integer."""

Row: TypeAlias = tuple[Value, ...]

ColumnType = Literal["symbol", "number"]
ArithOp = Literal["+", "-", "*", "/", "%"]
CompareOp = Literal["=", "!=", "<", "<=", ">", ">="]
AggregateFunc = Literal["min", "max", "count", "sum"]

NOWHERE = SourceLocation("<unknown>")

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
"""Numbers are 64-bit signed integers in every engine; overflow is an evaluation error."""


@dataclass(frozen=True)
class Var:
    name: str
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Wildcard:
    """`_`: matches anything, binds nothing. Each occurrence is distinct."""

    loc: SourceLocation = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return "_"


@dataclass(frozen=True)
class Const:
    value: Value
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return render_value(self.value)


@dataclass(frozen=True)
class BinOp:
    """Integer arithmetic; `/` is floor division, `%` the matching remainder."""

    op: ArithOp
    left: Term
    right: Term
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


Term: TypeAlias = Var | Wildcard | Const | BinOp


@dataclass(frozen=True)
class Aggregate:
    """A head argument such as `count(G)` or `min(W)`.

    The rule groups by its other head arguments. `count(X)` counts distinct values of X;
    `sum(X)` adds X over the distinct bindings of the body's named variables; `min`/`max`
    are the extremes of X.
    """

    func: AggregateFunc
    term: Term
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return f"{self.func}({self.term})"


HeadTerm: TypeAlias = Term | Aggregate


@dataclass(frozen=True)
class Atom:
    relation: str
    args: tuple[Term, ...]
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class Head:
    relation: str
    args: tuple[HeadTerm, ...]
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    @property
    def aggregate(self) -> tuple[int, Aggregate] | None:
        for i, a in enumerate(self.args):
            if isinstance(a, Aggregate):
                return i, a
        return None

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class Negation:
    atom: Atom
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return f"!{self.atom}"


@dataclass(frozen=True)
class Comparison:
    """`L op R`. With `=` and exactly one side an unbound variable, it is an assignment."""

    op: CompareOp
    left: Term
    right: Term
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


Literal_: TypeAlias = Atom | Negation | Comparison


@dataclass(frozen=True)
class Rule:
    head: Head
    body: tuple[Literal_, ...]
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    def __str__(self) -> str:
        return self.text

    @cached_property
    def text(self) -> str:
        """The rule as Datalog text, made once: a cached program holds each rule's (program_cache),
        which names evaluations (eval_cache) and proofs print.
        """
        if not self.body:
            return f"{self.head}."
        return f"{self.head} :- {', '.join(str(b) for b in self.body)}."

    def positive_atoms(self) -> Iterator[Atom]:
        return (b for b in self.body if isinstance(b, Atom))

    def negated_atoms(self) -> Iterator[Atom]:
        return (b.atom for b in self.body if isinstance(b, Negation))


@dataclass(frozen=True)
class Column:
    name: str
    type: ColumnType
    doc: str = ""
    loc: SourceLocation = field(default=NOWHERE, compare=False)


@dataclass(frozen=True)
class Declaration:
    """`.decl name(col: type, ...)`, optionally `.input`. `doc` comes from the comment above it."""

    name: str
    columns: tuple[Column, ...]
    is_input: bool
    doc: str = ""
    loc: SourceLocation = field(default=NOWHERE, compare=False)

    @property
    def arity(self) -> int:
        return len(self.columns)


@dataclass(frozen=True)
class Program:
    """Declarations, rules and inline facts (rules with empty bodies), plus `# @key: value` metadata."""

    declarations: tuple[Declaration, ...] = ()
    rules: tuple[Rule, ...] = ()
    metadata: tuple[tuple[str, str, SourceLocation], ...] = ()

    @cached_property
    def relations(self) -> dict[str, Declaration]:
        """Relation name -> its declaration (computed once: rule pruning asks per atom, thousands of times)."""
        return {d.name: d for d in self.declarations}

    def merge(self, other: Program) -> Program:
        return Program(
            self.declarations + other.declarations,
            self.rules + other.rules,
            self.metadata + other.metadata,
        )


@dataclass(frozen=True)
class Query:
    """A rule body typed by a user; answered with one row per binding of `variables`."""

    body: tuple[Literal_, ...]
    variables: tuple[str, ...]
    text: str = ""


def render_value(value: Value) -> str:
    if isinstance(value, int):
        return str(value)
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return '"' + escaped + '"'


def term_vars(term: HeadTerm) -> Iterator[str]:
    """Named variables in a term, in order of appearance (wildcards excluded)."""
    if isinstance(term, Var):
        yield term.name
    elif isinstance(term, BinOp):
        yield from term_vars(term.left)
        yield from term_vars(term.right)
    elif isinstance(term, Aggregate):
        yield from term_vars(term.term)


def literal_vars(lit: Literal_) -> Iterator[str]:
    if isinstance(lit, Atom):
        for a in lit.args:
            yield from term_vars(a)
    elif isinstance(lit, Negation):
        yield from literal_vars(lit.atom)
    else:
        yield from term_vars(lit.left)
        yield from term_vars(lit.right)


def arithmetic_of(rule: Rule) -> Iterator[BinOp]:
    """The outermost arithmetic of a rule, body first then head, in the order written: where an
    engine that cannot say which expression overflowed points a user (file:line:col).
    """

    def outermost(term: HeadTerm) -> Iterator[BinOp]:
        if isinstance(term, BinOp):
            yield term
        elif isinstance(term, Aggregate):
            yield from outermost(term.term)

    for lit in rule.body:
        if isinstance(lit, Comparison):
            yield from outermost(lit.left)
            yield from outermost(lit.right)
        elif isinstance(lit, Atom):
            for term in lit.args:
                yield from outermost(term)
    for head_term in rule.head.args:
        yield from outermost(head_term)
