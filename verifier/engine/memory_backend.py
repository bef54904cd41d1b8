"""The in-process engine: the same strata, rounds and stages as `duckdb`, over Python sets and hash indexes.

A verification of a shipped example runs a few hundred rule statements over a few thousand
facts. DuckDB plans every statement (1-5 ms each), so on such inputs the engine's fixed
cost, not the data, is the run; here a rule is a join plan built once and run over
dictionaries, which costs microseconds per rule on small relations. The evaluation order
copies `duckdb_backend` step for step (one round per non-recursive stratum, semi-naive
rounds with one delta position at a time, the global stage counter, the proof search
and its tie-breaks), so both engines derive the same tuples at the same stages and give
the same proofs. DuckDB stays the engine for fleets: it joins millions of rows in
parallel and bounds its memory.
"""

from __future__ import annotations

import functools
import heapq
import operator
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple

from verifier.core.errors import Diagnostic, EngineError, SourceLocation, TopologError
from verifier.core.exit_soon import leave_for_exit
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
    Head,
    HeadTerm,
    Literal_,
    Negation,
    Program,
    Query,
    Row,
    Rule,
    Term,
    Value,
    Var,
    Wildcard,
    literal_vars,
    term_vars,
)
from verifier.engine.backend import (
    EngineStats,
    OutgrewEngine,
    Proof,
    format_fact,
    out_of_engine_memory,
    project,
    sort_rows,
)
from verifier.engine.fact_rows import fact_columns, fits, input_declaration
from verifier.engine.proof_search import Instance, ProofSearch
from verifier.engine.strata import (
    Stratum,
    combines_stored_values,
    endless_recursion,
    is_assignment,
    order_body,
    recursion_of,
    run_strata,
    runnable_rules,
    strata_of,
    what_to_derive,
)

State = tuple[int, list[str], list[str], dict[str, dict[Row, int]]]
"""What an evaluation holds (MemoryBackend.state): its last stage, the relations loaded, the relations
with any tuple, and each relation's tuples with the stage each first appeared in."""

AGGREGATE_PREMISES = 50
"""An aggregate's proof lists at most this many body instances of its group (as duckdb's does)."""
WILDCARD_VALUE = "_"
"""Stands for an unconstrained argument of an absent (negated) fact in a proof."""

Env = tuple[Value, ...]
"""One binding of a body's variables, by slot."""
Eval = Callable[[Env], Value]


PROJECTED_ROWS = 1 << 16
"""Relations up to this size keep projections (each row's scanned values, ready to append): a scan
of a bigger one picks values out of its rows instead, rather than hold a second copy of them
(a closure of a 2,000-node chain is 2 M tuples: 130 MB more)."""

BYTES_PER_BINDING = 200
"""What one intermediate binding costs in this process, about (a tuple of a few values and its list slot):
`engine_memory` divided by it bounds how many bindings one join step may hold."""

BYTES_PER_TUPLE = 170
"""What one derived tuple costs here, about (its tuple, its entry in the relation's dict and in the
indexes that scan it; measured: 4 million two-column tuples took 680 MB): `engine_memory` divided by
it bounds the tuples one evaluation derives in memory, as `derived_tuples` bounds them in DuckDB."""


class _Undefined(Exception):
    """A term divided by zero: the rule instance computing it derives nothing (SQL's NULL)."""


def _checked(value: int, term: BinOp) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise EngineError(f"{term.loc}: arithmetic overflowed 64-bit integers ({value}) in {term}")
    return value


def _floordiv(a: int, b: int) -> int:
    if b == 0:
        raise _Undefined
    return a // b


def _mod(a: int, b: int) -> int:
    if b == 0:
        raise _Undefined
    return a % b


_ARITH: dict[str, Callable[[int, int], int]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": _floordiv,
    "%": _mod,
}
_COMPARE: dict[str, Callable[[Value, Value], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class _Relation:
    """A relation's tuples with the stage each first appeared in, and hash indexes kept up to date."""

    __slots__ = ("_distinct", "indexes", "projections", "rows")

    def __init__(self, rows: dict[Row, int] | None = None) -> None:
        self.rows: dict[Row, int] = {} if rows is None else rows
        self.indexes: dict[tuple[int, ...], dict[Row, list[Row]]] = {}
        self.projections: dict[tuple[tuple[int, ...], tuple[int, ...]], dict[Row, list[Row]]] = {}
        """(key positions, value positions) -> key -> the value positions of each row holding the key."""
        self._distinct: dict[int, tuple[float, int]] = {}
        """Column -> (distinct values as a join sees them, the relation's size when they were counted)."""

    def add_all(self, rows: Iterable[Row], stage: int) -> list[Row]:
        """Adds the rows not held yet, in order (the first of duplicates), and returns them."""
        held = self.rows
        fresh = list(dict.fromkeys(rows))
        if held and fresh:
            fresh = [row for row in fresh if row not in held]
        if not fresh:
            return fresh
        held.update(dict.fromkeys(fresh, stage))
        for positions, index in self.indexes.items():
            _group(index, fresh, positions, None)
        if len(held) > PROJECTED_ROWS:
            self.projections = {}  # grown past them: scans pick from the rows from now on
        for (positions, values), projection in self.projections.items():
            _group(projection, fresh, positions, values)
        return fresh

    def projects(self) -> bool:
        """Whether scans of this relation read projections (see PROJECTED_ROWS)."""
        return len(self.rows) <= PROJECTED_ROWS

    def distinct(self, position: int) -> float:
        """How many different values the column holds, as a join sees them (for join ordering).

        The number of values a uniform column with the same expected matches would hold: size^2
        divided by the sum of each value's count squared. A key bound by another relation's rows
        comes with each value about as often as the value is common, so one rack holding most
        GPUs makes `within(G, Rack)` far wider than the count of its values says; for a uniform
        column this is the count. Counted again only once the relation has doubled since the last
        count: a plan needs the order of magnitude, and a relation growing round by round would
        otherwise be counted after every round.
        """
        size = len(self.rows)
        found = self._distinct.get(position)
        if found is None or size >= 2 * found[1] + 1:
            counts = Counter(map(operator.itemgetter(position), self.rows)).values()
            squares = sum(c * c for c in counts)
            found = self._distinct[position] = (size * size / squares if squares else 0.0, size)
        return found[0]

    def fan_out(self, positions: Sequence[int]) -> float:
        """Expected rows matching one key on `positions`, columns taken as independent."""
        size = float(len(self.rows))
        for p in positions:
            size /= max(1, self.distinct(p))
        return size

    def index(self, positions: tuple[int, ...]) -> dict[Row, list[Row]]:
        index = self.indexes.get(positions)
        if index is None:
            index = self.indexes[positions] = _group({}, self.rows, positions, None)
        return index

    def projection(self, positions: tuple[int, ...], values: tuple[int, ...]) -> dict[Row, list[Row]]:
        """Like `index(positions)`, but listing each row's `values` positions only: a scan extends a
        binding with them as they are, instead of picking them out of the row once per binding.
        """
        projection = self.projections.get((positions, values))
        if projection is None:
            projection = _group({}, self.rows, positions, values)
            self.projections[positions, values] = projection
        return projection

    def clear_derived(self) -> None:
        self.rows = {r: s for r, s in self.rows.items() if s == 0}
        self.indexes = {}
        self.projections = {}


def _group(
    groups: dict[Row, list[Row]], rows: Collection[Row], positions: tuple[int, ...], values: tuple[int, ...] | None
) -> dict[Row, list[Row]]:
    """`groups` with each row (or its `values` positions) appended under its `positions` key."""
    found = list(rows) if values is None else _picks(rows, values)
    if not positions:
        # A scan of the whole relation: one group, kept absent while the relation is empty.
        if found:
            groups.setdefault((), []).extend(found)
        return groups
    add = groups.setdefault
    for key, value in zip(_picks(rows, positions), found, strict=True):
        add(key, []).append(value)
    return groups


def _picks(rows: Collection[Row], positions: tuple[int, ...]) -> list[Row]:
    """Each row's values at `positions`, as a tuple (for one position without a call per row)."""
    if not positions:
        return [()] * len(rows)
    if len(positions) == 1:
        (at,) = positions
        return [(row[at],) for row in rows]
    return list(map(_getter(positions), rows))


class _Relations(dict[str, _Relation]):
    """Relation name -> its tuples, made on first use (a run names a fraction of the pack's relations)."""

    def __missing__(self, name: str) -> _Relation:
        made = self[name] = _Relation()
        return made


# -- join plans ----------------------------------------------------------------------
# Named tuples, not frozen dataclasses: a dataclass compiles its methods from source when its module is
# imported (six of them for a frozen one), and every cold run imports this module; a plan's steps are
# also built faster and their fields read faster.


class _Scan(NamedTuple):
    atom: int
    """Index of the atom among the body's positive atoms."""
    relation: str
    key_positions: tuple[int, ...]
    """The positions an index lookup matches: those holding constants first, then bound variables."""
    constants: Row
    """The constants' values, in key order."""
    key_slots: tuple[int, ...]
    """The binding slots of the bound variables, in key order."""
    new_positions: tuple[int, ...]
    """Positions whose values extend the binding, in slot order."""
    same: tuple[tuple[int, int], ...]
    """Position pairs that must hold equal values (a new variable repeated inside the atom)."""


class _Filter(NamedTuple):
    test: Callable[[Env], bool]
    total: bool = False
    """The test computes no arithmetic, so no division by zero can make it undefined."""


class _Assign(NamedTuple):
    value: Eval


class _Absent(NamedTuple):
    relation: str
    key_positions: tuple[int, ...]
    key: tuple[Eval, ...]
    same: tuple[tuple[int, int], ...]
    key_slots: tuple[int, ...] | None = None
    """When the key computes nothing: the binding slots of its variables, which follow its constants
    (the key is then read without `key`)."""
    constants: Row = ()
    """The key's constants, when `key_slots` is given."""


_Step = _Scan | _Filter | _Assign | _Absent


class _Plan(NamedTuple):
    steps: tuple[_Step, ...]
    slots: dict[str, int]
    """Each named variable's slot in a binding."""
    atoms: tuple[Atom, ...]
    """The positive atoms, body order."""
    atom_slots: tuple[tuple[int, ...], ...]
    """Per positive atom, the slots holding each of its positions' values (to rebuild the fact)."""
    negations: tuple[tuple[Atom, tuple[Eval | None, ...]], ...]
    """Per negated atom, how to compute each argument (None: a wildcard or a variable local to it)."""
    head_scan: _HeadScan | None = None
    """For a rule's plan, how its last step can yield the head's rows directly (None: it cannot)."""


class _HeadScan(NamedTuple):
    """A body ending in a plain scan, under a head listing variables only: each binding before the scan
    gives the head's leading variables and each row it matches the others, so the bindings the scan
    would make (one per head row) are never built.
    """

    step: _Scan
    bound: tuple[int, ...]
    """The slots of the head's leading variables, all bound before the scan."""
    values: tuple[int, ...]
    """The scanned atom's positions holding the head's other variables, in head order."""


def _head_scan(
    head: Head, steps: Sequence[_Step], slots: Mapping[str, int], atom_slots: Sequence[tuple[int, ...]]
) -> _HeadScan | None:
    step = steps[-1] if steps else None
    if not isinstance(step, _Scan) or step.same or not head.args:
        return None
    head_slots: list[int] = []
    for arg in head.args:
        if not isinstance(arg, Var) or arg.name not in slots:
            return None
        head_slots.append(slots[arg.name])
    # The scan gives the plan's last slots, one per new position.
    earlier = len(slots) - len(step.new_positions)
    split = 0
    while split < len(head_slots) and head_slots[split] < earlier:
        split += 1
    if min(head_slots[split:], default=earlier) < earlier:
        return None
    position_of = {atom_slots[step.atom][p]: p for p in step.new_positions}
    return _HeadScan(step, tuple(head_slots[:split]), tuple(position_of[s] for s in head_slots[split:]))


class _Unbound(Exception):
    """A variable no literal binds; programs passing `checks` never have one."""


def _compile_term(term: Term, slots: Mapping[str, int]) -> Eval:
    if isinstance(term, Var):
        if term.name not in slots:
            raise _Unbound(term.name)
        slot = slots[term.name]
        return lambda env: env[slot]
    if isinstance(term, Const):
        value = term.value
        return lambda env: value
    if isinstance(term, BinOp):
        left = _compile_term(term.left, slots)
        right = _compile_term(term.right, slots)
        op = _ARITH[term.op]
        node = term

        def arith(env: Env) -> Value:
            a, b = left(env), right(env)
            return _checked(op(a, b), node)  # type: ignore[arg-type]

        return arith
    raise _Unbound("_")


Estimate = Callable[[int, Sequence[int]], float]
"""Rows one binding is expected to match in a body's positive atom (by index), given its bound positions."""


def _plan(
    body: Sequence[Literal_],
    prebound: Sequence[str] = (),
    first: int | None = None,
    estimate: Estimate | None = None,
    head: Head | None = None,
) -> _Plan:
    """A join plan for a body: next the atom that matches fewest rows per binding, every other literal as soon
    as its inputs are bound.

    Which comparison is an assignment and which negated variable is local to its negation is
    decided exactly as `sql_compiler.compile_body` decides it, so both engines read a body the
    same way. `prebound` variables hold values before the first step (a proof search binds the
    head); `first` puts one atom (a semi-naive delta) at the start; `head`, given when the plan derives
    its rows, lets the plan say how its last step can yield them.
    """
    atoms = tuple(lit for lit in body if isinstance(lit, Atom))
    bound = {a.name for atom in atoms for a in atom.args if isinstance(a, Var)}
    # (kind, literal, target or local variables, variables needed) in the compiler's order.
    pending: list[tuple[str, Literal_ | tuple[int, int, Term], frozenset[str], frozenset[str]]] = []
    for lit in order_body(tuple(lit for lit in body if not isinstance(lit, Atom))):
        if isinstance(lit, Comparison):
            target = is_assignment(lit, bound)
            if target is not None:
                source = lit.right if isinstance(lit.left, Var) and lit.left.name == target else lit.left
                pending.append(("assign", lit, frozenset({target}), frozenset(term_vars(source))))
                bound.add(target)
            else:
                pending.append(("compare", lit, frozenset(), frozenset({*term_vars(lit.left), *term_vars(lit.right)})))
        elif isinstance(lit, Negation):
            local = frozenset(a.name for a in lit.atom.args if isinstance(a, Var) and a.name not in bound)
            needs = frozenset(v for a in lit.atom.args for v in term_vars(a)) - local
            pending.append(("absent", lit, local, needs))
    for i, atom in enumerate(atoms):
        for p, arg in enumerate(atom.args):
            if isinstance(arg, BinOp):
                pending.append(("deferred", (i, p, arg), frozenset(), frozenset(term_vars(arg))))

    slots: dict[str, int] = {}
    for name in prebound:
        slots.setdefault(name, len(slots))
    atom_slots: list[tuple[int, ...]] = [()] * len(atoms)
    negations: list[tuple[Atom, tuple[Eval | None, ...]]] = []
    steps: list[_Step] = []
    remaining = range(len(atoms))

    def drain() -> None:
        progress = True
        while progress:
            progress = False
            for entry in list(pending):
                kind, lit, names, needs = entry
                if not needs <= slots.keys():
                    continue
                pending.remove(entry)
                progress = True
                if kind == "assign":
                    assert isinstance(lit, Comparison)
                    (target,) = names
                    source = lit.right if isinstance(lit.left, Var) and lit.left.name == target else lit.left
                    value = _compile_term(source, slots)
                    if target in slots:
                        steps.append(_Filter(_equal(_compile_term(Var(target), slots), value)))
                    else:
                        steps.append(_Assign(value))
                        slots[target] = len(slots)
                elif kind == "compare":
                    assert isinstance(lit, Comparison)
                    steps.append(_comparison(lit, slots))
                elif kind == "absent":
                    assert isinstance(lit, Negation)
                    steps.append(_absent(lit.atom, names, slots, negations))
                else:
                    assert isinstance(lit, tuple)
                    i, p, term = lit
                    steps.append(_Filter(_equal(_slot(atom_slots[i][p]), _compile_term(term, slots))))

    drain()
    # An atom's cost changes only when one of its variables gets bound, so costs live in a heap
    # and only the atoms sharing a newly bound variable are costed again: a body of thousands of
    # atoms is planned in n log n, not n^2, steps. The last atom left is never costed: it comes next
    # whatever its cost (a third of a shipped pack's bodies are one atom, and costing one counts a
    # column's values the first time).
    users: dict[str, list[int]] = {}
    for i, atom in enumerate(atoms):
        for name in {a.name for a in atom.args if isinstance(a, Var)}:
            users.setdefault(name, []).append(i)
    costs = {i: _cost(i, atoms[i], slots, estimate) for i in remaining} if len(atoms) > 1 else {}
    heap = [(c, i) for i, c in costs.items()]
    heapq.heapify(heap)
    left = set(remaining)
    while left:
        if first is not None and first in left:
            pick = first
        elif len(left) == 1:
            (pick,) = left
        else:
            while True:
                cost, pick = heapq.heappop(heap)
                if pick in left and costs[pick] == cost:
                    break
        left.remove(pick)
        known = set(slots)
        steps.append(_scan(pick, atoms[pick], slots, atom_slots))
        drain()
        if len(left) < 2:
            continue
        for i in {i for name in slots.keys() - known for i in users.get(name, ()) if i in left}:
            costs[i] = _cost(i, atoms[i], slots, estimate)
            heapq.heappush(heap, (costs[i], i))
    if pending:
        raise _Unbound(", ".join(sorted({v for *_, needs in pending for v in needs} - slots.keys())) or "_")
    head_scan = _head_scan(head, steps, slots, atom_slots) if head is not None else None
    return _Plan(tuple(steps), dict(slots), atoms, tuple(atom_slots), tuple(negations), head_scan)


def _slot(slot: int) -> Eval:
    return lambda env: env[slot]


def _equal(left: Eval, right: Eval) -> Callable[[Env], bool]:
    return lambda env: left(env) == right(env)


def _comparison(lit: Comparison, slots: Mapping[str, int]) -> _Filter:
    test = _COMPARE[lit.op]
    left, right = lit.left, lit.right
    if isinstance(left, Var | Const) and isinstance(right, Var | Const):
        for side in (left, right):
            if isinstance(side, Var) and side.name not in slots:
                raise _Unbound(side.name)
        return _Filter(_plain_compare(test, left, right, slots), total=True)
    return _Filter(_compare(test, _compile_term(left, slots), _compile_term(right, slots)))


def _plain_compare(
    test: Callable[[Value, Value], bool], left: Var | Const, right: Var | Const, slots: Mapping[str, int]
) -> Callable[[Env], bool]:
    """A comparison of variables and constants, reading the slots itself (most body comparisons are)."""
    if isinstance(left, Var):
        a = slots[left.name]
        if isinstance(right, Var):
            b = slots[right.name]
            return lambda env: test(env[a], env[b])
        value = right.value
        return lambda env: test(env[a], value)
    if isinstance(right, Var):
        value, b = left.value, slots[right.name]
        return lambda env: test(value, env[b])
    left_value, right_value = left.value, right.value
    return lambda env: test(left_value, right_value)


def _compare(test: Callable[[Value, Value], bool], left: Eval, right: Eval) -> Callable[[Env], bool]:
    return lambda env: test(left(env), right(env))


def _cost(index: int, atom: Atom, slots: Mapping[str, int], estimate: Estimate | None) -> tuple[bool, float, int, int]:
    """Order of preference: an atom sharing a bound variable (or matching at most one row) before one that
    would multiply every binding by its rows, then fewest expected matches, then most bound arguments,
    then body order.

    Fewest matches alone is greedy: in BW003's `nic_type_link_old` the 22 `spec(_, "pcie_generation", _)`
    rows looked cheaper than the 28 objects of a node, so two unconnected spec scans made 3,872
    bindings and the next join 108,416, before any link narrowed them (48 of a shipped example's 80 ms
    of evaluation); joined through their shared variables the same rule holds a few hundred. Whether an
    atom is connected changes only when one of its variables gets bound, when `_plan` costs it again.
    """
    bound = [p for p, a in enumerate(atom.args) if isinstance(a, Const) or (isinstance(a, Var) and a.name in slots)]
    expected = estimate(index, bound) if estimate is not None else 0.0
    connected = any(isinstance(a, Var) and a.name in slots for a in atom.args)
    return (not connected and expected > 1, expected, -len(bound), index)


def _scan(index: int, atom: Atom, slots: dict[str, int], atom_slots: list[tuple[int, ...]]) -> _Scan:
    const_positions: list[int] = []
    constants: list[Value] = []
    var_positions: list[int] = []
    key_slots: list[int] = []
    new_positions: list[int] = []
    same: list[tuple[int, int]] = []
    first_seen: dict[str, int] = {}
    mine: list[int] = []
    for p, arg in enumerate(atom.args):
        if isinstance(arg, Var) and arg.name in slots and arg.name not in first_seen:
            var_positions.append(p)
            key_slots.append(slots[arg.name])
            mine.append(slots[arg.name])
        elif isinstance(arg, Var) and arg.name in first_seen:
            same.append((first_seen[arg.name], p))
            mine.append(slots[arg.name])
        elif isinstance(arg, Const):
            const_positions.append(p)
            constants.append(arg.value)
            mine.append(-1)
        else:
            # A new variable, a wildcard or an arithmetic argument (checked once its inputs are bound):
            # its value gets a slot so that the fact can be rebuilt for a proof.
            new_positions.append(p)
            name = arg.name if isinstance(arg, Var) else f"${index}.{p}"
            if isinstance(arg, Var):
                first_seen[arg.name] = p
            slots[name] = len(slots)
            mine.append(slots[name])
    atom_slots[index] = tuple(mine)
    return _Scan(
        index,
        atom.relation,
        (*const_positions, *var_positions),
        tuple(constants),
        tuple(key_slots),
        tuple(new_positions),
        tuple(same),
    )


def _absent(
    atom: Atom,
    local: frozenset[str],
    slots: Mapping[str, int],
    negations: list[tuple[Atom, tuple[Eval | None, ...]]],
) -> _Absent:
    key_positions: list[int] = []
    key: list[Eval] = []
    args: list[Eval | None] = []
    same: list[tuple[int, int]] = []
    first_seen: dict[str, int] = {}
    for p, arg in enumerate(atom.args):
        if isinstance(arg, Wildcard):
            args.append(None)
        elif isinstance(arg, Var) and arg.name in local:
            if arg.name in first_seen:
                same.append((first_seen[arg.name], p))
            else:
                first_seen[arg.name] = p
            args.append(None)
        else:
            value = _compile_term(arg, slots)
            key_positions.append(p)
            key.append(value)
            args.append(value)
    negations.append((atom, tuple(args)))
    constants = [p for p in key_positions if isinstance(atom.args[p], Const)]
    variables = [p for p in key_positions if isinstance(atom.args[p], Var)]
    if len(constants) + len(variables) < len(key_positions):
        return _Absent(atom.relation, tuple(key_positions), tuple(key), tuple(same))
    # Constants first, as in a scan's key: a binding's key is then the constants and a pick of its slots.
    computed = dict(zip(key_positions, key, strict=True))
    order = (*constants, *variables)
    return _Absent(
        atom.relation,
        order,
        tuple(computed[p] for p in order),
        tuple(same),
        tuple(slots[a.name] for a in (atom.args[p] for p in variables) if isinstance(a, Var)),
        tuple(a.value for a in (atom.args[p] for p in constants) if isinstance(a, Const)),
    )


# -- the engine ----------------------------------------------------------------------


class MemoryBackend:
    """Backend protocol implementation in this process's memory."""

    name = "memory"
    proves = True

    def __init__(self, max_bindings: int | None = None, max_rounds: int | None = None) -> None:
        self._program = Program()
        self._declarations: dict[str, Declaration] = {}
        self._relations = _Relations()
        self._strata: list[Stratum] = []
        self._rules_by_head: dict[str, list[Rule]] = {}
        self._plans: dict[tuple[int, int | None, tuple[str, ...]], _Plan] = {}
        """Plans by the rule's identity, as hashing a rule hashes its whole syntax tree: every rule planned
        is held by the loaded program and its strata, which `load` replaces only together with the plans."""
        self._stage = 0
        self._proofs = ProofSearch({}, self._instance)
        self._loaded: set[str] = set()
        self._filled: set[str] = set()
        self._changed: set[str] | None = None
        self.stats = EngineStats()
        self._budget = 0
        self._computing = ""
        self._asking = ""
        """The query being answered, for an error about it."""
        self.max_bindings = current_limits().engine_memory // BYTES_PER_BINDING
        """Bindings one join step may hold; `--engine auto` sets it lower and moves a bigger job to DuckDB."""
        self._capped = max_bindings is not None and max_bindings < self.max_bindings
        """Whether the cap is `--engine auto`'s, not engine_memory's."""
        self._auto = max_bindings is not None
        """Whether `--engine auto` chose this engine (and starts over in DuckDB when it outgrows it)."""
        if max_bindings is not None:
            self.max_bindings = min(self.max_bindings, max_bindings)
        self.max_rounds = max_rounds
        """Rounds a recursion may take here before `--engine auto` moves the run to DuckDB (None: no cap)."""
        self.max_tuples = current_limits().engine_memory // BYTES_PER_TUPLE
        """Tuples one evaluation may derive here (engine_memory at BYTES_PER_TUPLE each)."""

    # -- setup -----------------------------------------------------------------------

    def load(self, program: Program) -> None:
        self._program = program
        self._declarations = {}
        for decl in program.declarations:
            self._declarations.setdefault(decl.name, decl)
        self._relations = _Relations()
        self._strata = strata_of(program)
        self._rules_by_head = {}
        for rule in program.rules:
            self._rules_by_head.setdefault(rule.head.relation, []).append(rule)
        self._plans = {}
        self._stage = 0
        self._proofs = ProofSearch(self._rules_by_head, self._instance)
        self._loaded = set()
        self._changed = None
        self.stats = EngineStats()

    def add_facts(self, relation: str, rows: Iterable[Row]) -> None:
        started = time.perf_counter()
        decl = input_declaration(self._declarations, relation)
        rows = rows if isinstance(rows, list | tuple) else list(rows)
        if not rows:
            return
        if self._changed is not None:
            self._changed.add(relation)
        target = self._relations[relation]
        if not decl.arity:
            target.add_all([()], 0)
        else:
            fact_columns(decl, rows)
            target.add_all(map(tuple, rows), 0)
        self._loaded.add(relation)
        self.stats.load_seconds += time.perf_counter() - started

    # -- evaluation ------------------------------------------------------------------

    def evaluate(self) -> None:
        """Derive everything; after an earlier evaluation, only what the new facts can change (as duckdb does)."""
        started = time.perf_counter()
        self._proofs = ProofSearch(self._rules_by_head, self._instance)
        self._budget = current_limits().derived_tuples
        try:
            affected, self._filled = what_to_derive(self._program, self._changed, self._loaded)
            for relation in affected or ():
                self._relations[relation].clear_derived()
            if affected is None:
                self._stage = 0
            run_strata(self._strata, affected, self._run_once, self._run_recursive)
            self._changed = set()
        except _Unbound as err:
            raise EngineError(f"variable {err} is never bound; was the program checked?") from err
        except MemoryError:
            raise self._too_big("engine_memory") from None
        finally:
            self.stats.eval_seconds += time.perf_counter() - started

    def state(self) -> State:
        """What this evaluation holds, for verifier.engine.eval_cache (after evaluate())."""
        relations = {name: rel.rows for name, rel in self._relations.items() if rel.rows}
        return self._stage, sorted(self._loaded), sorted(self._filled), relations

    def restore(self, state: State) -> None:
        """Hold `state` as if the facts it was evaluated from had been loaded and evaluated (after load())."""
        stage, loaded, filled, relations = state
        self._relations = _Relations()
        for name, rows in relations.items():
            self._relations[name] = _Relation(rows)
        self._stage = stage
        self._loaded = set(loaded)
        self._filled = set(filled)
        self._changed = set()
        self._proofs = ProofSearch(self._rules_by_head, self._instance)

    def _run_once(self, stratum: Stratum) -> None:
        live = runnable_rules(stratum, self._filled)
        if not live:
            return
        self._stage += 1
        by_head: dict[str, list[Rule]] = {}
        for rule in live:
            by_head.setdefault(rule.head.relation, []).append(rule)
        for relation, rules in by_head.items():
            self._computing = relation
            target = self._relations[relation]
            inserted = 0
            for rule in rules:
                inserted += len(target.add_all(self._derive_rows(rule, None, None), self._stage))
            if inserted:
                self._filled.add(relation)
                self._spend(relation, inserted)

    def _run_recursive(self, stratum: Stratum) -> None:
        live = runnable_rules(stratum, self._filled)
        if not live:
            return
        members = set(stratum.relations)
        # Per rule, the positions of its atoms reading the stratum: a round after the first runs the
        # rule once per such position, that atom reading the last round's new tuples.
        runs = [
            (rule, [(i, a.relation) for i, a in enumerate(rule.positive_atoms()) if a.relation in members])
            for rule in live
        ]
        deltas: dict[str, _Relation] = {}
        first_round = True
        rounds = 0
        limit = current_limits().fixpoint_rounds if not combines_stored_values(stratum) else None
        while True:
            rounds += 1
            if limit is not None and rounds > limit:
                raise endless_recursion(stratum, self._declarations, limit)
            if self.max_rounds is not None and rounds > self.max_rounds:
                raise self._too_deep(stratum)
            self._stage += 1
            new: dict[str, list[Row]] = {}
            for relation in stratum.relations:
                self._computing = relation
                existing = self._relations[relation].rows
                found: dict[Row, None] = {}
                for rule, reading in runs:
                    if rule.head.relation != relation:
                        continue
                    if first_round:
                        variants: list[tuple[int | None, _Relation | None]] = [(None, None)]
                    else:
                        variants = [(i, deltas[read]) for i, read in reading]
                    for position, delta in variants:
                        found.update(dict.fromkeys(self._derive_rows(rule, position, delta)))
                new[relation] = [row for row in found if row not in existing]
                self._spend(relation, len(new[relation]))
            grew = any(new.values())
            deltas = {}
            for relation in stratum.relations:
                self._relations[relation].add_all(new[relation], self._stage)
                deltas[relation] = _Relation(dict.fromkeys(new[relation], self._stage))
                self._filled.add(relation)
            first_round = False
            if not grew:
                break

    def _outgrown(self) -> OutgrewEngine:
        relation = self._computing
        decl = self._declarations.get(relation)
        where = decl.loc if decl is not None else SourceLocation(self._asking or "<rules>")
        what = f"deriving {relation!r}" if relation else "the query"
        found = f"{what} joins more than {self.max_bindings:,} bindings in one step in memory"
        if self._capped:
            message = f"{found}, the most --engine auto evaluates in memory; run it with --engine duckdb"
        else:
            message = exceeded("engine_memory", found)
        return OutgrewEngine([Diagnostic(where, message)])

    def _too_deep(self, stratum: Stratum) -> OutgrewEngine:
        where, what = recursion_of(stratum, self._declarations)
        message = (
            f"{what} takes more than {self.max_rounds:,} rounds, the most --engine auto evaluates in memory; "
            "run it with --engine duckdb"
        )
        return OutgrewEngine([Diagnostic(where, message)])

    def _spend(self, relation: str, tuples: int) -> None:
        self._budget -= tuples
        if self._budget < 0:
            raise self._too_big("derived_tuples")
        derived = current_limits().derived_tuples - self._budget
        if derived > self.max_tuples:
            raise self._too_many(relation, derived)

    def _too_many(self, relation: str, derived: int) -> TopologError:
        """More derived tuples than engine_memory holds here: under `--engine auto` the sign to start
        over in DuckDB (about 30 bytes a tuple there), else the engine_memory bound.
        """
        decl = self._declarations.get(relation)
        where = decl.loc if decl is not None else SourceLocation("<rules>")
        found = (
            f"the rules derive {derived:,} tuples (relation {relation!r} among them), "
            f"more than the {self.max_tuples:,} that fit engine_memory in memory at {BYTES_PER_TUPLE} bytes each"
        )
        if self._auto:
            return OutgrewEngine([Diagnostic(where, f"{found}; run it with --engine duckdb")])
        return TopologError.at(where, exceeded("engine_memory", found))

    def _too_big(self, limit: str) -> TopologError:
        relation = self._computing or "?"
        decl = self._declarations.get(relation)
        where = decl.loc if decl is not None else SourceLocation("<rules>")
        held = len(self._relations[relation].rows) if relation in self._relations else 0
        if limit == "derived_tuples":
            total = current_limits().derived_tuples - self._budget
            found = f"the rules derive {total:,} tuples (relation {relation!r} holds {held:,} of them so far)"
        else:
            at = decl.loc if decl is not None else None
            return out_of_engine_memory("the memory engine", self._computing, at, f"{held:,}")
        return TopologError.at(where, exceeded(limit, found))

    # -- running a plan ----------------------------------------------------------------

    def _plan_for(self, rule: Rule, first: int | None = None, prebound: tuple[str, ...] = ()) -> _Plan:
        key = (id(rule), first, prebound)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._new_plan(rule.body, prebound, first, None if prebound else rule.head)
        return plan

    def _new_plan(
        self,
        body: Sequence[Literal_],
        prebound: tuple[str, ...] = (),
        first: int | None = None,
        head: Head | None = None,
    ) -> _Plan:
        atoms = [lit for lit in body if isinstance(lit, Atom)]

        def estimate(index: int, positions: Sequence[int]) -> float:
            return self._relations[atoms[index].relation].fan_out(positions)

        # Planned on the data at hand, as a SQL engine plans a statement when it runs.
        return _plan(body, prebound, first, estimate, head)

    def _bindings(
        self,
        plan: _Plan,
        start: Env = (),
        delta: tuple[int, _Relation] | None = None,
        before: int | None = None,
        steps: int | None = None,
    ) -> list[Env]:
        """Every binding of the plan's variables. `delta` reads one atom from another relation;
        `before` keeps only bindings whose facts all appeared before that stage; `steps` runs only
        the plan's first steps.
        """
        envs: list[Env] = [start]
        for step in plan.steps[:steps]:
            if not envs:
                return envs
            if isinstance(step, _Scan):
                extended = _run_scan(step, self._source(step, delta), envs, before, self.max_bindings)
                if extended is None:
                    raise self._outgrown()
                envs = extended
            elif isinstance(step, _Filter):
                envs = list(filter(step.test, envs)) if step.total else [e for e in envs if _holds(step.test, e)]
            elif isinstance(step, _Assign):
                envs = _run_assign(step.value, envs)
            else:
                envs = _run_absent(step, self._relations[step.relation], envs)
        return envs

    def _source(self, step: _Scan, delta: tuple[int, _Relation] | None) -> _Relation:
        return delta[1] if delta is not None and delta[0] == step.atom else self._relations[step.relation]

    def _derive_rows(self, rule: Rule, position: int | None, delta: _Relation | None) -> list[Row]:
        plan = self._plan_for(rule, position)
        read = None if delta is None or position is None else (position, delta)
        last = plan.head_scan
        if last is not None and self._source(last.step, read).projects():
            envs = self._bindings(plan, (), read, steps=-1)
            if not envs:
                return []
            matches = self._source(last.step, read).projection(last.step.key_positions, last.values)
            rows = _join(last.step, matches, envs, _picks(envs, last.bound), self.max_bindings)
            if rows is None:
                raise self._outgrown()
            return rows
        envs = self._bindings(plan, (), read)
        head = rule.head
        if head.aggregate is None:
            return _head_rows(head.args, plan.slots, envs)
        return _aggregate_rows(head.args, head.aggregate, plan.slots, envs)

    # -- reading -------------------------------------------------------------------------

    def query(
        self,
        relation: str,
        bound: Mapping[int, Value] | None = None,
        ordered: bool = True,
        columns: Sequence[int] | None = None,
    ) -> list[Row]:
        decl = self._declaration(relation)
        project([], columns, decl.arity)  # a position the relation lacks is refused, as a bound one is
        table = self._relations[relation]
        conditions: list[tuple[int, Value]] = []
        for pos, value in sorted((bound or {}).items()):
            if not 0 <= pos < decl.arity:
                raise ValueError(f"{relation} has no argument position {pos} (arity {decl.arity})")
            if not fits(value, decl.columns[pos].type):
                return []
            conditions.append((pos, value))
        if conditions:
            positions = tuple(p for p, _ in conditions)
            rows = list(table.index(positions).get(tuple(v for _, v in conditions), ()))
        else:
            rows = list(table.rows)
        rows = project(rows, columns, decl.arity)
        return sort_rows(rows) if ordered else rows

    def answer(self, query: Query) -> list[Row]:
        # Parts of the body that share no variable are answered one by one and their answers
        # combined: `object(_, "gpu"), object(_, "nic")` asks whether both exist, not for the
        # GPUs x NICs pairs a joined body would enumerate.
        parts: list[tuple[list[str], set[Row]]] = []
        for plan, wanted, getters in self._query_plans(query):
            found = {tuple(env[s] for s in getters) for env in self._bindings(plan)}
            if not found:
                return []
            parts.append((wanted, found))
        size = 1
        for _, found in parts:
            size *= len(found)
        if size > self.max_bindings:
            raise self._outgrown()
        rows: list[dict[str, Value]] = [{}]
        for wanted, found in parts:
            rows = [{**row, **dict(zip(wanted, values, strict=True))} for row in rows for values in found]
        return sort_rows({tuple(row[v] for v in query.variables) for row in rows})

    def holds(self, query: Query) -> bool:
        return all(self._bindings(plan) for plan, _, _ in self._query_plans(query))

    def _query_plans(self, query: Query) -> list[tuple[_Plan, list[str], list[int]]]:
        """A plan per independent part of the query's body, with the query variables it binds and their slots."""
        self._computing, self._asking = "", "<query>"
        try:
            for atom in (lit.atom if isinstance(lit, Negation) else lit for lit in query.body):
                if isinstance(atom, Atom):
                    self._declaration(atom.relation)
            plans = []
            for literals in _independent_parts(query.body):
                names = {v for lit in literals for v in literal_vars(lit)}
                plan = self._new_plan(literals)
                wanted = [v for v in query.variables if v in names]
                plans.append((plan, wanted, [plan.slots[v] for v in wanted]))
            missing = set(query.variables) - {v for _, wanted, _ in plans for v in wanted}
            if missing:
                raise _Unbound(", ".join(sorted(missing)))
        except (KeyError, _Unbound) as err:
            raise EngineError(f"query {query.text!r} binds no value for variable {err}") from err
        return plans

    def count(self, relation: str) -> int:
        self._declaration(relation)
        return len(self._relations[relation].rows)

    def close(self) -> None:
        # In the console script, which ends with its command, the tuples and indexes are left for the
        # exit instead of freed one by one (verifier.core.exit_soon); elsewhere they are freed here. Closed
        # again, an engine holds nothing, and what an earlier close left stays left.
        if any(relation.rows for relation in self._relations.values()):
            leave_for_exit("memory engine", (self._relations, self._plans))
        self._relations = _Relations()
        self._plans = {}

    def _declaration(self, relation: str) -> Declaration:
        decl = self._declarations.get(relation)
        if decl is None:
            raise KeyError(f"unknown relation {relation!r}")
        return decl

    # -- proofs ------------------------------------------------------------------------

    def explain(self, relation: str, row: Row) -> Proof:
        row = tuple(row)
        decl = self._declaration(relation)
        stage = self._relations[relation].rows.get(row) if len(row) == decl.arity else None
        if stage is None:
            raise KeyError(f"{format_fact(relation, row)} does not hold")
        return self._proofs.prove(relation, row, stage)

    def _instance(self, rule: Rule, row: Row, stage: int) -> Instance | None:
        head = rule.head
        if len(head.args) != len(row):
            return None
        agg = head.aggregate
        if agg is not None and not self._aggregate_holds(rule, row):
            return None
        # The head's plain variables are bound to the row's values up front: a lookup, not a scan.
        given: dict[str, Value] = {}
        for arg, value in zip(head.args, row, strict=True):
            if isinstance(arg, Var) and arg.name not in given:
                given[arg.name] = value
        prebound = tuple(given)
        plan = self._plan_for(rule, None, prebound)
        envs = self._bindings(plan, tuple(given.values()), before=stage)
        plain = [(i, _compile_term(a, plan.slots)) for i, a in enumerate(head.args) if not isinstance(a, Aggregate)]
        candidates: dict[tuple[Row, tuple[int, ...], Row], None] = {}
        for env in envs:
            try:
                if any(f(env) != row[i] for i, f in plain):
                    continue
                absent_values = tuple(f(env) for _, args in plan.negations for f in args if f is not None)
            except _Undefined:
                continue
            facts: list[Value] = []
            stages: list[int] = []
            for atom, atom_slots in zip(plan.atoms, plan.atom_slots, strict=True):
                fact = tuple(env[s] if s >= 0 else a.value for s, a in zip(atom_slots, atom.args, strict=True))  # type: ignore[union-attr]
                facts.extend(fact)
                stages.append(self._relations[atom.relation].rows[fact])
            candidates[(tuple(facts), tuple(stages), absent_values)] = None
        if not candidates:
            return None
        ordered = sorted(candidates, key=lambda c: (max(c[1], default=0), c[0]))
        chosen = ordered[: 1 if agg is None else AGGREGATE_PREMISES]
        premises: list[tuple[Atom, Row, int]] = []
        absent: list[tuple[str, Row]] = []
        seen: set[tuple[str, Row]] = set()
        for facts_flat, stages_found, absent_values in chosen:
            values = list(facts_flat)
            for atom, s in zip(plan.atoms, stages_found, strict=True):
                fact = tuple(values[: len(atom.args)])
                values = values[len(atom.args) :]
                if (atom.relation, fact) not in seen:
                    seen.add((atom.relation, fact))
                    premises.append((atom, fact, s))
            remaining = list(absent_values)
            for atom, args in plan.negations:
                fact = tuple(remaining.pop(0) if a is not None else WILDCARD_VALUE for a in args)
                if ("!" + atom.relation, fact) not in seen:
                    seen.add(("!" + atom.relation, fact))
                    absent.append((atom.relation, fact))
        return premises, absent

    def _aggregate_holds(self, rule: Rule, row: Row) -> bool:
        agg = rule.head.aggregate
        assert agg is not None
        given: dict[str, Value] = {}
        for arg, value in zip(rule.head.args, row, strict=True):
            if isinstance(arg, Var) and not isinstance(arg, Aggregate) and arg.name not in given:
                given[arg.name] = value
        prebound = tuple(given)
        plan = self._plan_for(rule, None, prebound)
        envs = self._bindings(plan, tuple(given.values()))
        group = tuple(v for i, v in enumerate(row) if i != agg[0])
        results = [r for r in _aggregate_rows(rule.head.args, agg, plan.slots, envs) if _group_of(r, agg[0]) == group]
        return bool(results) and results[0][agg[0]] == row[agg[0]]


def _independent_parts(body: Sequence[Literal_]) -> list[list[Literal_]]:
    """The body's literals grouped so that no two groups share a variable, in body order."""
    owner: dict[str, int] = {}
    groups: list[list[Literal_]] = []
    for lit in body:
        names = set(literal_vars(lit))
        joined = sorted({owner[n] for n in names if n in owner})
        if not joined:
            groups.append([lit])
            target = len(groups) - 1
        else:
            target = joined[0]
            groups[target].append(lit)
            for other in joined[1:]:
                groups[target].extend(groups[other])
                groups[other] = []
                for n, g in owner.items():
                    if g == other:
                        owner[n] = target
        for n in names:
            owner[n] = target
    return [g for g in groups if g]


def _group_of(row: Row, position: int) -> Row:
    return row[:position] + row[position + 1 :]


def _holds(test: Callable[[Env], bool], env: Env) -> bool:
    try:
        return test(env)
    except _Undefined:
        return False


@functools.cache
def _getter(positions: tuple[int, ...]) -> Callable[[Row], Row]:
    """A function picking `positions` out of a tuple, as a tuple (itemgetter, which runs in C)."""
    if not positions:
        return lambda _row: ()
    if len(positions) == 1:
        (only,) = positions
        return lambda row: (row[only],)
    return operator.itemgetter(*positions)


def _run_scan(step: _Scan, source: _Relation, envs: list[Env], before: int | None, cap: int) -> list[Env] | None:
    """The bindings extended by the step's matching rows; None once there would be more than `cap`."""
    if step.same or before is not None or not source.projects():
        return _run_checked_scan(step, source, envs, before, cap)
    return _join(step, source.projection(step.key_positions, step.new_positions), envs, envs, cap)


def _join(
    step: _Scan, matches: Mapping[Row, list[Row]], envs: list[Env], bases: list[Row], cap: int
) -> list[Row] | None:
    """Per binding, its base (the binding itself, or what a head takes of it) extended by the values of
    each row the step matches; None once there would be more than `cap`.
    """
    if not step.key_slots:
        every = matches.get(step.constants, [])
        if len(every) * len(envs) > cap:
            return None
        return [base + values for base in bases for values in every]
    out: list[Row] = []
    append, extend, lookup = out.append, out.extend, matches.get
    for base, key in zip(bases, _keys(step.constants, step.key_slots, envs), strict=True):
        found = lookup(key)
        if not found:
            continue
        # Most lookups match one row: a list built for it would cost more than the binding.
        if len(found) == 1:
            append(base + found[0])
        else:
            extend([base + values for values in found])
            if len(out) > cap:
                return None
    return out if len(out) <= cap else None


def _keys(constants: Row, slots: tuple[int, ...], envs: list[Env]) -> list[Row]:
    """Each binding's key into an index: the constants, then the values in its `slots`."""
    keys = _picks(envs, slots)
    if not constants:
        return keys
    return [constants + key for key in keys]


def _run_checked_scan(
    step: _Scan, source: _Relation, envs: list[Env], before: int | None, cap: int
) -> list[Env] | None:
    """`_run_scan` picking each matching row's values: for rows that need a check each (a repeated
    variable, a stage bound) and for relations too big to keep projections of.
    """
    out: list[Env] = []
    append = out.append
    same = step.same
    stages = source.rows
    pick = _getter(step.new_positions)
    if step.key_positions:
        lookup = source.index(step.key_positions).get
        env_key = _getter(step.key_slots)
        for env in envs:
            for row in lookup(step.constants + env_key(env), ()):
                if same and any(row[a] != row[b] for a, b in same):
                    continue
                if before is not None and stages[row] >= before:
                    continue
                append(env + pick(row))
            if len(out) > cap:
                return None
        return out
    rows = list(stages)
    if before is not None:
        rows = [r for r in rows if stages[r] < before]
    if same:
        rows = [r for r in rows if all(r[a] == r[b] for a, b in same)]
    if len(rows) * len(envs) > cap:
        return None
    picked = [pick(r) for r in rows]
    return [env + values for env in envs for values in picked]


def _run_assign(value: Eval, envs: list[Env]) -> list[Env]:
    out: list[Env] = []
    for env in envs:
        try:
            out.append((*env, value(env)))
        except _Undefined:
            continue
    return out


def _run_absent(step: _Absent, source: _Relation, envs: list[Env]) -> list[Env]:
    index = source.index(step.key_positions)
    if step.key_slots is not None and not step.same:
        keys = _keys(step.constants, step.key_slots, envs)
        return [env for env, key in zip(envs, keys, strict=True) if key not in index]
    out: list[Env] = []
    for env in envs:
        try:
            key = tuple(f(env) for f in step.key)
        except _Undefined:
            continue
        rows = index.get(key, ())
        if step.same:
            rows = [r for r in rows if all(r[a] == r[b] for a, b in step.same)]
        if not rows:
            out.append(env)
    return out


def _head_rows(args: Sequence[HeadTerm], slots: Mapping[str, int], envs: list[Env]) -> list[Row]:
    if not args:
        return [()] if envs else []
    if all(isinstance(a, Var) and a.name in slots for a in args):
        return _picks(envs, tuple(slots[a.name] for a in args if isinstance(a, Var)))
    exprs = [_compile_term(a, slots) for a in args if not isinstance(a, Aggregate)]
    rows: list[Row] = []
    for env in envs:
        try:
            rows.append(tuple(f(env) for f in exprs))
        except _Undefined:
            continue
    return rows


def _aggregate_rows(
    args: Sequence[HeadTerm], agg: tuple[int, Aggregate], slots: Mapping[str, int], envs: list[Env]
) -> list[Row]:
    position, aggregate = agg
    inputs = _aggregated(args, aggregate, slots, envs)
    results: dict[Row, Value] = {}
    if aggregate.func == "count":
        values: dict[Row, set[Value]] = {}
        for group, value, _ in inputs:
            values.setdefault(group, set()).add(value)
        results = {group: len(found) for group, found in values.items()}
    elif aggregate.func == "sum":
        # The sum runs over distinct bindings of the body's named variables, as in the SQL engine
        # (a wildcard's or an arithmetic argument's slot is not a variable of the body).
        named = _getter(tuple(s for name, s in slots.items() if not name.startswith("$")))
        bindings: dict[Row, dict[Row, Value]] = {}
        for group, value, env in inputs:
            bindings.setdefault(group, {}).setdefault(named(env), value)
        for group, found in bindings.items():
            total = sum(found.values())  # type: ignore[arg-type]
            if not INT64_MIN <= total <= INT64_MAX:
                raise EngineError(f"{aggregate.loc}: sum overflowed 64-bit integers ({total}) in {aggregate}")
            results[group] = total
    else:
        results = _extremes(inputs, aggregate.func == "min")
    return [(*group[:position], value, *group[position:]) for group, value in results.items()]


def _aggregated(
    args: Sequence[HeadTerm], aggregate: Aggregate, slots: Mapping[str, int], envs: list[Env]
) -> Iterable[tuple[Row, Value, Env]]:
    """Per binding, its group (the head's other arguments), the value it aggregates, and the binding;
    none for a binding whose group or value is undefined.
    """
    plain = [a for a in args if not isinstance(a, Aggregate)]
    term = aggregate.term
    if isinstance(term, Var) and all(isinstance(a, Var) and a.name in slots for a in (*plain, term)):
        # Nothing to compute: the groups and values are read off the bindings, without a call per binding.
        slot = slots[term.name]
        groups = _picks(envs, tuple(slots[a.name] for a in plain if isinstance(a, Var)))
        return zip(groups, [env[slot] for env in envs], envs, strict=True)
    return _computed_groups([_compile_term(a, slots) for a in plain], _compile_term(term, slots), envs)


def _computed_groups(groups: list[Eval], term: Eval, envs: list[Env]) -> Iterator[tuple[Row, Value, Env]]:
    for env in envs:
        try:
            yield tuple(f(env) for f in groups), term(env), env
        except _Undefined:
            continue


def _extremes(inputs: Iterable[tuple[Row, Value, Env]], lowest: bool) -> dict[Row, Value]:
    """Per group, its least (or greatest) value."""
    best: dict[Row, Value] = {}
    for group, value, _ in inputs:
        found = best.get(group)
        if found is None or (value < found if lowest else value > found):  # type: ignore[operator]
            best[group] = value
    return best
