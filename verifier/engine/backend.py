"""The one small interface every engine implements, and the proof trees they return.

Usage, the same on every backend:

    engine = make_backend("duckdb")     # verifier.engine.engines
    engine.load(program)                 # a checked Program (see checks.check_program)
    engine.add_facts("link", rows)       # bulk, any number of calls, before evaluate()
    engine.evaluate()
    engine.query("within", {1: "rack-a"})   # sorted rows; keys are 0-based argument positions
    engine.answer(query)                 # a parsed Query: sorted rows of its variables
    engine.holds(query)                  # whether it has any answer at all
    engine.explain("within", ("g0", "rack-a"))
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Protocol

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.escape import one_line
from verifier.core.frozen import Record
from verifier.core.limits import exceeded
from verifier.engine.ast import FrozenNode, Program, Query, Row, Rule, Value, render_value

Locator = Callable[["Proof"], SourceLocation | None]
"""Where an input fact was written (its inventory file:line), or None when that is not known."""


class Proof(FrozenNode):
    """How a fact holds.

    `rule is None` means an input fact. `premises` are sub-proofs of the positive body
    facts of that rule instance, `absent` the negated body facts that were checked to be
    missing. Every premise first appeared strictly earlier than the fact it supports, so
    the tree is finite and of minimal height.
    """

    _fields = __match_args__ = ("relation", "row", "rule", "premises", "absent", "stage")
    relation: str
    row: Row
    rule: Rule | None
    premises: tuple[Proof, ...]
    absent: tuple[tuple[str, Row], ...]
    stage: int

    def __init__(
        self,
        relation: str,
        row: Row,
        rule: Rule | None = None,
        premises: tuple[Proof, ...] = (),
        absent: tuple[tuple[str, Row], ...] = (),
        stage: int = 0,
    ) -> None:
        # Written out, not a frozen dataclass (verifier.engine.ast.FrozenNode says why).
        _set = object.__setattr__
        _set(self, "relation", relation)
        _set(self, "row", row)
        _set(self, "rule", rule)
        _set(self, "premises", premises)
        _set(self, "absent", absent)
        _set(self, "stage", stage)

    def _key(self) -> tuple[object, ...]:
        return (self.relation, self.row, self.rule, self.premises, self.absent, self.stage)

    @property
    def fact(self) -> str:
        """The fact proved, as Datalog text."""
        return format_fact(self.relation, self.row)

    def height(self) -> int:
        """The number of rule steps on the longest path down to an input fact."""
        return 0 if not self.premises else 1 + max(p.height() for p in self.premises)

    def to_dict(self, locate: Locator | None = None) -> dict[str, object]:
        """JSON-ready tree. With `locate`, each input fact also gets `location` ({file, line, col} or null)."""
        out: dict[str, object] = {"fact": self.fact}
        if self.rule is None:
            out["input"] = True
            if locate is not None:
                loc = locate(self)
                out["location"] = None if loc is None else {"file": loc.file, "line": loc.line, "col": loc.col}
            return out
        out["rule"] = str(self.rule)
        out["at"] = str(self.rule.loc)
        out["premises"] = [p.to_dict(locate) for p in self.premises]
        if self.absent:
            out["absent"] = [format_fact(r, row) for r, row in self.absent]
        return out

    def render(self, indent: str = "", locate: Locator | None = None) -> str:
        """A readable tree, one fact per line; with `locate`, input facts say where they were written."""
        if self.rule is None:
            if locate is None:
                return f"{indent}{self.fact}  [input]"
            loc = locate(self)
            # Places are paths, and a folder's name may hold a newline: escaped, one fact per line.
            where = f" at {one_line(str(loc))}" if loc is not None else ", not from an inventory object"
            return f"{indent}{self.fact}  [input{where}]"
        lines = [f"{indent}{self.fact}  [rule at {one_line(str(self.rule.loc))}]"]
        for p in self.premises:
            lines.append(p.render(indent + "  ", locate))
        for rel, row in self.absent:
            lines.append(f"{indent}  not {format_fact(rel, row)}  [absent]")
        return "\n".join(lines)


@dataclass(repr=False, eq=False)
class EngineStats(Record):
    """What a run cost, for benchmarks: seconds per phase (and tuples per relation where counting is free)."""

    load_seconds: float = 0.0
    eval_seconds: float = 0.0
    tuples: dict[str, int] = field(default_factory=dict)


class OutgrewEngine(TopologError):
    """A join step would hold more than the engine may: bad input to a user (exit 2), or under
    `--engine auto` the sign to start over in DuckDB.
    """


ENGINE_MEMORY_PLACE = SourceLocation("<evaluation>")
"""Where an engine that ran out of memory says the problem is: the size of the input against the
engine_memory bound, not the rule it happened to be deriving (often a shipped one)."""


def out_of_engine_memory(
    engine: str, relation: str, where: SourceLocation | None, held: str, doing: str = "deriving"
) -> TopologError:
    """The error for an engine that ran out of its `engine_memory` while `relation` was derived (or loaded).

    `where` is the relation's declaration, named only as what was running; `held` its tuples so far.
    """
    running = f"relation {relation!r}" if relation else "the rules"
    if where is not None and relation:
        running += f" (declared at {where})"
    found = (
        f"{engine} ran out of memory while {doing} {running}, {held} tuples so far: the input and rules "
        "need more memory than this bound gives them (this is not a fault in that rule)"
    )
    return TopologError.at(ENGINE_MEMORY_PLACE, exceeded("engine_memory", found))


def format_fact(relation: str, row: Row) -> str:
    """`relation(v1, v2, ...)` with each value written as Datalog reads it back."""
    return f"{relation}({', '.join(render_value(v) for v in row)})"


class Backend(Protocol):
    """An engine that evaluates a checked program over bulk-loaded facts."""

    name: str
    proves: bool
    """Whether `explain` can build proofs (pyDatalog records no derivation stages)."""

    def load(self, program: Program) -> None:
        """Take a program that passed `checks.check_program`. Resets any earlier state."""

    def add_facts(self, relation: str, rows: Iterable[Row]) -> None:
        """Add input facts in bulk; raises FactError on a wrong arity or type."""

    def evaluate(self) -> None:
        """Run every stratum to its fixpoint; raises EngineError if anything cannot be evaluated."""

    def query(
        self,
        relation: str,
        bound: Mapping[int, Value] | None = None,
        ordered: bool = True,
        columns: Sequence[int] | None = None,
    ) -> list[Row]:
        """Rows of a relation matching the bound positions, sorted unless `ordered` is False
        (a caller that groups 100k rows itself need not pay for the sort).

        `columns`: only these positions of each row, in this order (`project`); a row per tuple
        matched all the same, duplicates kept. A caller that reads three of twelve columns of a
        fleet's rows does not have the other nine decoded for it.
        """

    def answer(self, query: Query) -> list[Row]:
        """Distinct bindings of the query's variables (in `query.variables` order), sorted."""

    def holds(self, query: Query) -> bool:
        """Whether the query has an answer (a check's `@needs`): stops at the first one."""

    def explain(self, relation: str, row: Row) -> Proof:
        """A minimal-height derivation of a fact that holds; KeyError if it does not hold."""

    def count(self, relation: str) -> int:
        """Number of tuples in a relation."""

    def close(self) -> None:
        """Release the engine's resources."""


LOADED_FIRST = ("object",)
"""The relations a DuckDB engine is given before the others (`load_order`)."""


def load_order(relations: Collection[str]) -> list[str]:
    """The relations in the order to add their facts to a DuckDB engine: LOADED_FIRST, then the rest sorted.

    The inventory's `object` blocks hold every name of the nodes stamped whole, in lists that say
    which of their names other relations read again (facts.inventory's _NodeNames): loaded first,
    those names go into the engine's symbol dictionary once, in its pass for names all new, and the
    relations after it find them there. In name order authz_class came first: its 130,816 GPU names
    (131,072 GPUs) were deferred (SymbolIds.defer: hashed, sorted, searched), then put in the
    dictionary anyway by the relations that read them again, and label's 16,384 node names, each
    twice, took the pass for repeated new names. No answer depends on the order: ids carry none
    (sql_compiler orders symbols by their texts) and every answer is read back as text.
    """
    first = [r for r in LOADED_FIRST if r in relations]
    return first + sorted(r for r in relations if r not in first)


def project(rows: list[Row], columns: Sequence[int] | None, arity: int) -> list[Row]:
    """Each row cut to `columns` (positions, in that order); `rows` itself without them.

    Raises ValueError for a position the relation does not have, as a bound position does.
    """
    if columns is None:
        return rows
    for pos in columns:
        if not 0 <= pos < arity:
            raise ValueError(f"no column position {pos} (arity {arity})")
    if len(columns) == 1:
        at = columns[0]
        return [(r[at],) for r in rows]
    return list(map(itemgetter(*columns), rows)) if columns else [() for _ in rows]


def sort_rows(rows: Iterable[Row]) -> list[Row]:
    """Sort mixed symbol/number rows deterministically: numbers before symbols per column."""
    rows = list(rows)
    try:
        # Plain tuple order is the same order whenever no comparison meets a number and a
        # symbol in one column, and it is several times faster on the 100k-row relations
        # that `place` reads back; a mixed column raises TypeError and takes the slow key.
        return sorted(rows)
    except TypeError:
        return sorted(rows, key=lambda r: tuple((0, v, "") if isinstance(v, int) else (1, 0, v) for v in r))
