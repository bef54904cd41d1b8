"""The Datalog abstract syntax tree that every other part of the engine works on.

Parsed once from text (see `parser.py`), checked (`checks.py`), then compiled by each
backend. Nodes are frozen so programs can be shared between backends safely.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import FrozenInstanceError
from functools import cached_property
from typing import Any, Literal, TypeAlias

from verifier.core.errors import SourceLocation

Value: TypeAlias = str | int
"""A ground value: a symbol (string) or an integer."""

Row: TypeAlias = tuple[Value, ...]

ColumnType = Literal["symbol", "number"]
ArithOp = Literal["+", "-", "*", "/", "%"]
CompareOp = Literal["=", "!=", "<", "<=", ">", ">="]
AggregateFunc = Literal["min", "max", "count", "sum"]

NOWHERE = SourceLocation("<unknown>")

_set = object.__setattr__
"""How a node's __init__ sets its fields (its own __setattr__ refuses), as a frozen dataclass's does."""

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
"""Numbers are 64-bit signed integers in every engine; overflow is an evaluation error."""


class FrozenNode:
    """A frozen syntax node, written out rather than made by `@dataclass(frozen=True)`.

    A frozen dataclass compiles its methods from generated source when its module is imported
    (about 0.45 ms a class: __init__, __repr__, __eq__, __hash__, __setattr__, __delattr__), and
    every command imports these fourteen. Written here they come compiled with the module. They
    behave as the dataclass's did: fields set once (FrozenInstanceError on assignment), equal and
    hashed by class and compared fields (each class's `_key`; `loc` is never compared), `repr` naming
    every field.
    The engine's other frozen records (strata, proofs, answers, columns) are written the same way.
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    """Every field, in order: what repr shows."""

    def _key(self) -> tuple[object, ...]:
        """The compared fields' values (never `loc`): what equality and the hash read."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._key() == other._key()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__qualname__}({shown})"


class Var(FrozenNode):
    _fields = __match_args__ = ("name", "loc")
    name: str
    loc: SourceLocation

    def __init__(self, name: str, loc: SourceLocation = NOWHERE) -> None:
        _set(self, "name", name)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.name,)

    def __str__(self) -> str:
        return self.name


class Wildcard(FrozenNode):
    """`_`: matches anything, binds nothing. Each occurrence is distinct."""

    _fields = __match_args__ = ("loc",)
    loc: SourceLocation

    def __init__(self, loc: SourceLocation = NOWHERE) -> None:
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return ()

    def __str__(self) -> str:
        return "_"


class Const(FrozenNode):
    _fields = __match_args__ = ("value", "loc")
    value: Value
    loc: SourceLocation

    def __init__(self, value: Value, loc: SourceLocation = NOWHERE) -> None:
        _set(self, "value", value)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.value,)

    def __str__(self) -> str:
        return render_value(self.value)


class BinOp(FrozenNode):
    """Integer arithmetic; `/` is floor division, `%` the matching remainder."""

    _fields = __match_args__ = ("op", "left", "right", "loc")
    op: ArithOp
    left: Term
    right: Term
    loc: SourceLocation

    def __init__(self, op: ArithOp, left: Term, right: Term, loc: SourceLocation = NOWHERE) -> None:
        _set(self, "op", op)
        _set(self, "left", left)
        _set(self, "right", right)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.op, self.left, self.right)

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


Term: TypeAlias = Var | Wildcard | Const | BinOp


class Aggregate(FrozenNode):
    """A head argument such as `count(G)` or `min(W)`.

    The rule groups by its other head arguments. `count(X)` counts distinct values of X;
    `sum(X)` adds X over the distinct bindings of the body's named variables; `min`/`max`
    are the extremes of X.
    """

    _fields = __match_args__ = ("func", "term", "loc")
    func: AggregateFunc
    term: Term
    loc: SourceLocation

    def __init__(self, func: AggregateFunc, term: Term, loc: SourceLocation = NOWHERE) -> None:
        _set(self, "func", func)
        _set(self, "term", term)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.func, self.term)

    def __str__(self) -> str:
        return f"{self.func}({self.term})"


HeadTerm: TypeAlias = Term | Aggregate


class Atom(FrozenNode):
    _fields = __match_args__ = ("relation", "args", "loc")
    relation: str
    args: tuple[Term, ...]
    loc: SourceLocation

    def __init__(self, relation: str, args: tuple[Term, ...], loc: SourceLocation = NOWHERE) -> None:
        _set(self, "relation", relation)
        _set(self, "args", args)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.relation, self.args)

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(str(a) for a in self.args)})"


class Head(FrozenNode):
    _fields = __match_args__ = ("relation", "args", "loc")
    relation: str
    args: tuple[HeadTerm, ...]
    loc: SourceLocation

    def __init__(self, relation: str, args: tuple[HeadTerm, ...], loc: SourceLocation = NOWHERE) -> None:
        _set(self, "relation", relation)
        _set(self, "args", args)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.relation, self.args)

    @property
    def aggregate(self) -> tuple[int, Aggregate] | None:
        for i, a in enumerate(self.args):
            if isinstance(a, Aggregate):
                return i, a
        return None

    def __str__(self) -> str:
        return f"{self.relation}({', '.join(str(a) for a in self.args)})"


class Negation(FrozenNode):
    _fields = __match_args__ = ("atom", "loc")
    atom: Atom
    loc: SourceLocation

    def __init__(self, atom: Atom, loc: SourceLocation = NOWHERE) -> None:
        _set(self, "atom", atom)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.atom,)

    def __str__(self) -> str:
        return f"!{self.atom}"


class Comparison(FrozenNode):
    """`L op R`. With `=` and exactly one side an unbound variable, it is an assignment."""

    _fields = __match_args__ = ("op", "left", "right", "loc")
    op: CompareOp
    left: Term
    right: Term
    loc: SourceLocation

    def __init__(self, op: CompareOp, left: Term, right: Term, loc: SourceLocation = NOWHERE) -> None:
        _set(self, "op", op)
        _set(self, "left", left)
        _set(self, "right", right)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.op, self.left, self.right)

    def __str__(self) -> str:
        return f"{self.left} {self.op} {self.right}"


Literal_: TypeAlias = Atom | Negation | Comparison


class Rule(FrozenNode):
    _fields = __match_args__ = ("head", "body", "loc")
    head: Head
    body: tuple[Literal_, ...]
    loc: SourceLocation

    def __init__(self, head: Head, body: tuple[Literal_, ...], loc: SourceLocation = NOWHERE) -> None:
        _set(self, "head", head)
        _set(self, "body", body)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.head, self.body)

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


class Column(FrozenNode):
    _fields = __match_args__ = ("name", "type", "doc", "loc")
    name: str
    type: ColumnType
    doc: str
    loc: SourceLocation

    def __init__(self, name: str, type: ColumnType, doc: str = "", loc: SourceLocation = NOWHERE) -> None:
        _set(self, "name", name)
        _set(self, "type", type)
        _set(self, "doc", doc)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.name, self.type, self.doc)


class Declaration(FrozenNode):
    """`.decl name(col: type, ...)`, optionally `.input`. `doc` comes from the comment above it."""

    _fields = __match_args__ = ("name", "columns", "is_input", "doc", "loc")
    name: str
    columns: tuple[Column, ...]
    is_input: bool
    doc: str
    loc: SourceLocation

    def __init__(
        self, name: str, columns: tuple[Column, ...], is_input: bool, doc: str = "", loc: SourceLocation = NOWHERE
    ) -> None:
        _set(self, "name", name)
        _set(self, "columns", columns)
        _set(self, "is_input", is_input)
        _set(self, "doc", doc)
        _set(self, "loc", loc)

    def _key(self) -> tuple[object, ...]:
        return (self.name, self.columns, self.is_input, self.doc)

    @property
    def arity(self) -> int:
        return len(self.columns)


class Program(FrozenNode):
    """Declarations, rules and inline facts (rules with empty bodies), plus `# @key: value` metadata."""

    _fields = __match_args__ = ("declarations", "rules", "metadata")
    declarations: tuple[Declaration, ...]
    rules: tuple[Rule, ...]
    metadata: tuple[tuple[str, str, SourceLocation], ...]

    def __init__(
        self,
        declarations: tuple[Declaration, ...] = (),
        rules: tuple[Rule, ...] = (),
        metadata: tuple[tuple[str, str, SourceLocation], ...] = (),
    ) -> None:
        _set(self, "declarations", declarations)
        _set(self, "rules", rules)
        _set(self, "metadata", metadata)

    def _key(self) -> tuple[object, ...]:
        return (self.declarations, self.rules, self.metadata)

    @cached_property
    def relations(self) -> dict[str, Declaration]:
        """Relation name -> its declaration (computed once: rule pruning asks per atom, thousands of times)."""
        return {d.name: d for d in self.declarations}

    def kept(self, name: str) -> dict[Any, Any]:
        """The dict this program keeps under `name` for values derived from its fields (parsed
        queries, slices): a Program is frozen and immutable, so what is derived once holds for it.
        """
        found: dict[Any, Any] | None = self.__dict__.get(name)
        if found is None:
            found = {}
            object.__setattr__(self, name, found)
        return found

    def merge(self, other: Program) -> Program:
        return Program(
            self.declarations + other.declarations,
            self.rules + other.rules,
            self.metadata + other.metadata,
        )


class Query(FrozenNode):
    """A rule body typed by a user; answered with one row per binding of `variables`."""

    _fields = __match_args__ = ("body", "variables", "text")
    body: tuple[Literal_, ...]
    variables: tuple[str, ...]
    text: str

    def __init__(self, body: tuple[Literal_, ...], variables: tuple[str, ...], text: str = "") -> None:
        _set(self, "body", body)
        _set(self, "variables", variables)
        _set(self, "text", text)

    def _key(self) -> tuple[object, ...]:
        return (self.body, self.variables, self.text)


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
