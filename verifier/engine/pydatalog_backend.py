"""The reference engine: every rule handed to pyDatalog 0.22.4 through its Python API.

It defines what a program means; the duckdb backend must agree with it on every
fixture (tests/engine/test_differential.py). Speed is not its job.

How it maps the language onto pyDatalog, and why:

* Nothing is ever passed to `pyDatalog.load` or `pyDatalog.ask`: they `exec`/`eval` text.
  Clauses are built from our AST with `pyParser.Term` objects and the `<=`, `&`, `~`
  operators, queries with `Query.ask()`.
* Strata run one after another. Each stratum's rules derive into `tl_d_<rel>`; once a
  stratum is complete its relations are read back and asserted as plain facts into
  `tl_m_<rel>`, which is the only name later strata (negation, aggregates) and queries
  read. So negation and aggregation only ever see complete, fact-only relations, whatever
  order pyDatalog's lazy top-down evaluation would otherwise pick.
* Every name pyDatalog sees is prefixed (`tl_` relations, `V_`/`F_`/`W_`... variables) so
  it cannot hit pyDatalog's own names (`ask`, `len_`, `sum_`, `_pyD_query*`). Symbols are
  stored as `"s" + text`: pyDatalog turns the constants `"True"`, `"False"` and `"??"`
  into other things, and the prefix keeps string order intact.
* Arithmetic is split into single steps, each followed by a guard. pyDatalog swallows
  exceptions inside arithmetic and binds the exception object as a value; the guard
  makes division by zero derive nothing and anything else non-integer an EngineError.

pyDatalog keeps one knowledge base per thread. The instance that evaluated last in a
thread owns it; any other instance (or the same one in another thread) rebuilds it
transparently on its next query, so only one instance per thread is live at a time and
interleaving instances costs re-evaluation, never wrong answers.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from pyDatalog import pyDatalog, pyEngine
from pyDatalog.pyParser import Literal as PyLiteral
from pyDatalog.pyParser import Operation, Term

from verifier.core.errors import Diagnostic, EngineError, FactError, ProgramError, SourceLocation, TopologError
from verifier.core.limits import current_limits, exceeded
from verifier.engine.ast import (
    INT64_MAX,
    INT64_MIN,
    Aggregate,
    Atom,
    BinOp,
    Comparison,
    Const,
    Declaration,
    HeadTerm,
    Literal_,
    Negation,
    Program,
    Query,
    Row,
    Rule,
    Value,
    Var,
    Wildcard,
    literal_vars,
    render_value,
)
from verifier.engine.backend import EngineStats, Proof, project, sort_rows
from verifier.engine.strata import order_body, stratify

MAX_FACT_ERRORS = 20

_PY_OPS = {"+": "+", "-": "-", "*": "*", "/": "//", "%": "%"}
_PY_COMPARE = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_GUARD = "tl_arith_ok__"

# Which backend instance built the knowledge base of the current thread.
_owner = threading.local()


def _arith_guard(value: Any, where: Any) -> Iterator[tuple[Any, Any]]:
    """PyDatalog resolver for `tl_arith_ok__(F, Loc)`: F must hold a plain integer.

    Division or remainder by zero is undefined, so the literal computing it is false for
    that binding (as a NULL is in SQL), whatever order the body is written in. Anything
    else that is not an integer means a program that skipped the checks: fail closed.
    """
    v = value.id
    at = where.id[1:] if isinstance(where.id, str) and where.id.startswith("s") else where.id
    if type(v) is int:
        if not INT64_MIN <= v <= INT64_MAX:
            # Numbers are 64-bit, as in the duckdb engine: an overflow fails the run, never wraps.
            raise EngineError(f"{at}: arithmetic overflowed 64-bit integers ({v})")
        yield (value, where)
    elif not isinstance(v, ZeroDivisionError):
        raise EngineError(f"{at}: arithmetic gave {v!r}, not an integer")


pyEngine.Python_resolvers[_GUARD + "/2"] = _arith_guard


def _encode(value: Value) -> Any:
    return "s" + value if isinstance(value, str) else value


def _decode(value: Any, relation: str) -> Value:
    if type(value) is int:
        return value
    if isinstance(value, str) and value.startswith("s"):
        return value[1:]
    raise EngineError(f"pyDatalog derived a value of unexpected type in {relation}: {value!r}")


def _constant(value: Value) -> Any:
    return Term(_encode(value), forced_type="constant")


def _derived(relation: str) -> str:
    return "tl_d_" + relation


def _materialized(relation: str) -> str:
    return "tl_m_" + relation


class _Compiler:
    """Turns one rule (or query) into pyDatalog literals, with fresh variables of its own."""

    def __init__(self, relation_name: Mapping[str, str], where: str, open_: Iterable[str] = ()) -> None:
        self.relation_name = relation_name
        self.open = frozenset(open_)
        self.where = _constant(where)
        self.fresh = itertools.count()
        self.literals: list[Any] = []

    def var(self, name: str) -> Any:
        return Term("V_" + name)

    def new_var(self, kind: str) -> Any:
        return Term(f"{kind}_{next(self.fresh)}")

    def term(self, term: HeadTerm) -> Any:
        """A variable or constant; arithmetic is computed into a fresh, guarded variable first."""
        if isinstance(term, Var):
            return self.var(term.name)
        if isinstance(term, Const):
            return _constant(term.value)
        if isinstance(term, Wildcard):
            return self.new_var("W")
        if isinstance(term, BinOp):
            left, right = self.term(term.left), self.term(term.right)
            result = self.new_var("F")
            step = Operation(left, _PY_OPS[term.op], right)
            self.literals.append(PyLiteral.make_for_comparison(result, "==", step))
            self.literals.append(Term(_GUARD)(result, self.where))
            return result
        raise EngineError(f"cannot compile {term} here")

    def atom(self, atom: Atom) -> Any:
        if any(isinstance(a, BinOp) for a in atom.args):
            raise EngineError(f"{atom.loc}: arithmetic inside an atom; the program was not checked")
        return Term(self.relation_name[atom.relation])(*(self.term(a) for a in atom.args))

    def body(self, body: tuple[Literal_, ...]) -> None:
        ordered = order_body(body)
        atoms = sorted((a for a in ordered if isinstance(a, Atom)), key=lambda a: a.relation not in self.open)
        for lit in [*atoms, *(b for b in ordered if not isinstance(b, Atom))]:
            if isinstance(lit, Atom) and lit.relation in self.open:
                self.open_atom(lit)
            elif isinstance(lit, Atom):
                self.literals.append(self.atom(lit))
            elif isinstance(lit, Negation):
                self.literals.append(~self.atom(lit.atom))
            else:
                self.comparison(lit)

    def open_atom(self, atom: Atom) -> None:
        """Call a relation of the running stratum with fresh variables only, then unify.

        pyDatalog 0.22.4 loops forever on right-linear recursion over a cycle
        (`r(X, Z) :- e(X, Y), r(Y, Z).` with e a 3-cycle): every bound call `r(b, Z)` is a
        subgoal of its own and their completion never settles. Calling the relation open,
        and first, makes every call a variant of one subgoal, whose table it fills once;
        the other atoms then run with their join columns bound.
        """
        slots = [self.new_var("O") for _ in atom.args]
        self.literals.append(Term(self.relation_name[atom.relation])(*slots))
        for slot, arg in zip(slots, atom.args, strict=True):
            if not isinstance(arg, Wildcard):
                self.literals.append(PyLiteral.make_for_comparison(slot, "==", self.term(arg)))

    def comparison(self, lit: Comparison) -> None:
        left, right = self.term(lit.left), self.term(lit.right)
        # `==` binds an unbound variable on either side and tests otherwise, which is
        # exactly the language's assignment-or-equality reading of `=`.
        self.literals.append(PyLiteral.make_for_comparison(left, _PY_COMPARE[lit.op], right))

    def head_term(self, arg: HeadTerm, seen: set[str]) -> Any:
        """A distinct head variable (aggregate keys must be variables); anything else via `H = term`."""
        if isinstance(arg, Var) and arg.name not in seen:
            seen.add(arg.name)
            return self.var(arg.name)
        value = self.term(arg)
        h = self.new_var("H")
        self.literals.append(PyLiteral.make_for_comparison(h, "==", value))
        return h

    def conjunction(self) -> Any:
        body = self.literals[0]
        for lit in self.literals[1:]:
            body = body & lit
        return body


class PyDatalogBackend:
    """The reference Backend (see backend.py). `explain` is not available: see its docstring."""

    name = "pydatalog"
    proves = False

    def __init__(self) -> None:
        self._program: Program | None = None
        self._decls: dict[str, Declaration] = {}
        self._facts: dict[str, set[Row]] = {}
        self._rows: dict[str, set[Row]] | None = None
        self._token = object()
        self._aggregates = itertools.count()
        self.stats = EngineStats()

    # -- Backend protocol

    def load(self, program: Program) -> None:
        self._program = program
        self._decls = {}
        for d in program.declarations:
            self._decls.setdefault(d.name, d)
        self._facts = {name: set() for name, d in self._decls.items() if d.is_input}
        self._rows = None
        self._token = object()
        # Clearing wipes whatever instance owned this thread's knowledge base: disown it
        # so that instance rebuilds on its next query instead of reading an empty one.
        pyDatalog.clear()
        _owner.token = None

    def add_facts(self, relation: str, rows: Iterable[Row]) -> None:
        decl = self._decls.get(relation)
        where = SourceLocation("<facts>")
        if decl is None:
            raise FactError.at(where, f"facts for '{relation}', which is not declared; declare it with .input")
        if not decl.is_input:
            raise FactError.at(
                where, f"facts for '{relation}', which is derived by rules (.decl); only .input relations take facts"
            )
        good: list[Row] = []
        errors: list[Diagnostic] = []
        for raw in rows:
            row = tuple(raw)
            problem = _row_problem(decl, row)
            if problem is None:
                good.append(row)
            elif len(errors) < MAX_FACT_ERRORS:
                errors.append(Diagnostic(where, f"fact {_show(relation, row)}: {problem}"))
        if errors:
            raise FactError(errors)
        self._facts[relation].update(good)
        self._rows = None

    def evaluate(self) -> None:
        program = self._require_program()
        started = time.perf_counter()
        pyDatalog.clear()
        _owner.token = self._token
        rows: dict[str, set[Row]] = {}
        # The derived_tuples budget, judged as each relation is complete: pyDatalog offers no
        # hook inside a relation's fixpoint, so one relation may pass the budget before it
        # is stopped, but a rule set that goes on deriving stops at the next relation.
        budget = current_limits().derived_tuples
        try:
            for name, decl in self._decls.items():
                # Declared so that a query or negation of an empty relation finds "no facts",
                # not pyDatalog's "predicate without definition".
                pyEngine.insert(pyEngine.Pred(_materialized(name), decl.arity))
                pyEngine.insert(pyEngine.Pred(_derived(name), decl.arity))
            for name, facts in self._facts.items():
                self._materialize(name, facts)
                rows[name] = set(facts)
            for stratum in stratify(program):
                names = {r: _materialized(r) for r in self._decls}
                names.update({r: _derived(r) for r in stratum.relations})
                for rule in stratum.rules:
                    self._add_rule(rule, names, stratum.relations)
                for relation in stratum.relations:
                    derived = self._ask(_derived(relation), self._decls[relation].arity, {}, relation)
                    budget -= len(derived)
                    if budget < 0:
                        total = current_limits().derived_tuples - budget
                        raise TopologError.at(
                            self._decls[relation].loc,
                            exceeded(
                                "derived_tuples",
                                f"the rules derive {total:,} tuples (relation {relation!r} holds "
                                f"{len(derived):,} of them so far)",
                            ),
                        )
                    self._materialize(relation, derived)
                    rows[relation] = derived
        except (EngineError, TopologError):
            _owner.token = None
            raise
        except Exception as exc:  # pyDatalog's own failures: the verification must fail closed
            _owner.token = None
            detail = f"{type(exc).__name__}: {exc}"
            raise EngineError(f"pyDatalog could not evaluate the program: {detail}") from exc
        for name in self._decls:
            rows.setdefault(name, set())
        self._rows = rows
        self.stats.eval_seconds = time.perf_counter() - started
        self.stats.tuples = {name: len(r) for name, r in sorted(rows.items())}

    def query(
        self,
        relation: str,
        bound: Mapping[int, Value] | None = None,
        ordered: bool = True,
        columns: Sequence[int] | None = None,
    ) -> list[Row]:
        self._ready()
        decl = self._decls.get(relation)
        if decl is None:
            raise ProgramError.at(SourceLocation("<query>"), f"relation '{relation}' is not declared")
        bound = dict(bound or {})
        for pos in bound:
            if not 0 <= pos < decl.arity:
                raise ProgramError.at(
                    SourceLocation("<query>"),
                    f"'{relation}' has {decl.arity} arguments; there is no argument position {pos}",
                )
        for pos in columns or ():
            if not 0 <= pos < decl.arity:
                raise ProgramError.at(
                    SourceLocation("<query>"),
                    f"'{relation}' has {decl.arity} arguments; there is no argument position {pos}",
                )
        return sort_rows(
            project(list(self._ask(_materialized(relation), decl.arity, bound, relation)), columns, decl.arity)
        )

    def holds(self, query: Query) -> bool:
        return bool(self.answer(query))

    def answer(self, query: Query) -> list[Row]:
        self._ready()
        compiler = _Compiler({r: _materialized(r) for r in self._decls}, query.text or "<query>")
        compiler.body(query.body)
        head = Term(f"tl_answer_{next(self._aggregates)}")(*(compiler.var(v) for v in query.variables))
        clause = head <= compiler.conjunction()
        try:
            result = head.ask()
        except EngineError:
            raise
        except Exception as exc:
            raise EngineError(f"pyDatalog could not answer the query: {type(exc).__name__}: {exc}") from exc
        finally:
            pyEngine.retract(clause)
        return sort_rows(self._rows_of(result, len(query.variables), "query"))

    def explain(self, relation: str, row: Row) -> Proof:
        """Not available: pyDatalog records no derivation stages to build a minimal-height proof from.

        Raises KeyError when the fact does not hold (as every backend does), EngineError otherwise.
        """
        if tuple(row) not in set(self.query(relation)):
            raise KeyError(_show(relation, tuple(row)))
        raise EngineError("proofs need the duckdb engine: pyDatalog records no derivation stages")

    def count(self, relation: str) -> int:
        self._ready()
        assert self._rows is not None
        if relation not in self._rows:
            raise ProgramError.at(SourceLocation("<query>"), f"relation '{relation}' is not declared")
        return len(self._rows[relation])

    def close(self) -> None:
        if getattr(_owner, "token", None) is self._token:
            pyDatalog.clear()
            _owner.token = None
        self._rows = None

    # -- internals

    def _require_program(self) -> Program:
        if self._program is None:
            raise EngineError("no program loaded; call load() first")
        return self._program

    def _ready(self) -> None:
        """Evaluate if facts changed, or if another instance (or thread) owns pyDatalog's state."""
        if self._rows is None or getattr(_owner, "token", None) is not self._token:
            self.evaluate()

    def _materialize(self, relation: str, rows: Iterable[Row]) -> None:
        name = _materialized(relation)
        for row in rows:
            pyDatalog.assert_fact(name, *(_encode(v) for v in row))

    def _add_rule(self, rule: Rule, names: Mapping[str, str], stratum: Iterable[str]) -> None:
        compiler = _Compiler(names, str(rule.loc), stratum)
        compiler.body(rule.body)
        if rule.head.aggregate is not None:
            self._add_aggregate_rule(rule, compiler, names)
            return
        seen: set[str] = set()
        args = [compiler.head_term(a, seen) for a in rule.head.args]
        if compiler.literals:
            _ = Term(names[rule.head.relation])(*args) <= compiler.conjunction()
        else:  # a fact written in a rule file: every argument is a constant
            pyDatalog.assert_fact(names[rule.head.relation], *(a._pyD_value for a in args))

    def _add_aggregate_rule(self, rule: Rule, compiler: _Compiler, names: Mapping[str, str]) -> None:
        """`r(K.., agg(T), K..) :- body` as `(f[K..] == agg_(Y)) <= body`, then `r(..) <= (f[K..] == V)`."""
        position, aggregate = rule.head.aggregate or (0, None)
        assert isinstance(aggregate, Aggregate)
        seen: set[str] = set()
        keys = [compiler.head_term(a, seen) for i, a in enumerate(rule.head.args) if i != position]
        value = compiler.head_term(aggregate.term, seen)
        func = Term(f"tl_agg_{next(self._aggregates)}")
        if aggregate.func == "count":
            agg = Term("len_")(value)
        elif aggregate.func == "sum":
            # Rows are distinct over (keys, value, for_each), so naming every body variable
            # sums over distinct bindings of the body, not over distinct values.
            body_vars = dict.fromkeys(v for lit in rule.body for v in literal_vars(lit))
            agg = Term("sum_")(value, for_each=(value, *(compiler.var(v) for v in body_vars)))
        else:
            agg = Term(aggregate.func + "_")(value, order_by=value)
        if not compiler.literals:
            raise EngineError(f"{rule.loc}: an aggregate needs a rule body")
        _ = (func[tuple(keys)] == agg) <= compiler.conjunction()
        out_keys = [Term(f"K_{i}") for i in range(len(keys))]
        result = Term("R_0")
        args = list(out_keys)
        args.insert(position, result)
        _ = Term(names[rule.head.relation])(*args) <= (func[tuple(out_keys)] == result)

    def _ask(self, name: str, arity: int, bound: Mapping[int, Value], relation: str) -> set[Row]:
        free = [i for i in range(arity) if i not in bound]
        terms = [_constant(bound[i]) if i in bound else Term(f"Q_{i}") for i in range(arity)]
        result = Term(name)(*terms).ask()
        found = self._rows_of(result, len(free), relation)
        rows: set[Row] = set()
        for values in found:
            row: list[Value] = [bound.get(i, 0) for i in range(arity)]
            for i, v in zip(free, values, strict=True):
                row[i] = v
            rows.add(tuple(row))
        return rows

    @staticmethod
    def _rows_of(result: Any, width: int, relation: str) -> set[Row]:
        """PyDatalog answers None or [] (nothing), True (a ground query holds) or a list of tuples."""
        if result is True:
            return {()} if width == 0 else set()
        if not result:
            return set()
        return {tuple(_decode(v, relation) for v in r) for r in result}


def _row_problem(decl: Declaration, row: tuple[Any, ...]) -> str | None:
    if len(row) != decl.arity:
        cols = ", ".join(f"{c.name}: {c.type}" for c in decl.columns)
        return f"'{decl.name}' has {decl.arity} columns ({cols}) but the fact has {len(row)} values"
    for col, value in zip(decl.columns, row, strict=True):
        if col.type == "number" and type(value) is not int:
            return f"column '{col.name}' is a number but got {value!r}"
        if col.type == "number" and not INT64_MIN <= value <= INT64_MAX:
            return f"column '{col.name}' is a 64-bit number but got {value!r}"
        if col.type == "symbol" and not isinstance(value, str):
            return f"column '{col.name}' is a symbol but got {value!r}"
    return None


def _show(relation: str, row: tuple[Any, ...]) -> str:
    parts = [render_value(v) if isinstance(v, str | int) and type(v) is not bool else repr(v) for v in row]
    return f"{relation}({', '.join(parts)})"
