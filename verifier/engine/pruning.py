"""What of a program can matter, given its input rows: rules that can fire, rows that can match.

At fleet scale most input rows (labels, link attributes, prices) are read by no rule that can
fire for the question at hand; leaving them out of the engine changes nothing derived and
saves about half of a verification's time and memory.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from verifier.core.stamped_rows import StampedRows
from verifier.engine.ast import Atom, Comparison, Const, Program, Row, Rule, Value, Var


def live_reads(program: Program, facts: Mapping[str, Sequence[Row]], pending: set[str]) -> set[str]:
    """Relations read by the rules that can fire (live_rules)."""
    return {a.relation for r in live_rules(program, facts, pending) for a in (*r.positive_atoms(), *r.negated_atoms())}


def live_rules(program: Program, facts: Mapping[str, Sequence[Row]], pending: set[str]) -> list[Rule]:
    """The rules that can fire, given the input rows at hand.

    A rule whose positive atom can match no row derives nothing, so what it alone reads need
    not be loaded: without jobs the placement rules' reads of every label, price and software
    version, and without a job asking for rail alignment (`job_need(_, "rail_aligned", 1)`)
    the NIC paths, cost seconds at fleet scale for nothing. An input atom can match when some
    row holds each of its constants at that position (each position judged alone, so this may
    keep a rule that cannot fire, never drop one that can); relations in `pending` may still
    get rows (summaries computed on demand, authorization decisions, a query's relations) and
    count as matching anything.
    """
    seen: dict[tuple[str, int], set[Value]] = {}
    judged: dict[_Read, bool] = {}  # rules share their reads of the inputs (`object(_, "gpu")`): judged once

    def can_match(read: _Read) -> bool:
        relation, constants = read
        if relation in pending:
            return True
        rows = facts.get(relation)
        if not rows:
            return False
        for i, value in constants:
            values = seen.get((relation, i))
            if values is None:
                at = rows.values_at(i) if isinstance(rows, StampedRows) else {row[i] for row in rows}
                values = seen[(relation, i)] = at
            if value not in values:
                return False
        return True

    # A rule can fire once each input atom can match and each relation it reads positively from
    # other rules can hold tuples: the least fixpoint, reached by counting each rule's unmet reads
    # down as relations become available (linear in the program, as a CI gate wants).
    ready: list[tuple[Rule, frozenset[str]]] = []
    for rule, inputs, reads in _bodies(program):
        for read in inputs:
            fits = judged.get(read)
            if fits is None:
                fits = judged[read] = can_match(read)
            if not fits:
                break
        else:
            ready.append((rule, reads))
    unmet = [len(reads) for _, reads in ready]
    waiting: dict[str, list[int]] = {}
    for i, (_, reads) in enumerate(ready):
        for relation in reads:
            waiting.setdefault(relation, []).append(i)
    available: set[str] = set()
    todo = [rule.head.relation for (rule, _), n in zip(ready, unmet, strict=True) if not n]
    while todo:
        relation = todo.pop()
        if relation in available:
            continue
        available.add(relation)
        for i in waiting.get(relation, ()):
            unmet[i] -= 1
            if not unmet[i]:
                todo.append(ready[i][0].head.relation)
    return [rule for rule, reads in ready if reads <= available]


_Read = tuple[str, tuple[tuple[int, Value], ...]]
"""An atom's read of an input relation: the relation and its constants by position."""

_BODIES = "_live_bodies"


def _bodies(program: Program) -> list[tuple[Rule, tuple[_Read, ...], frozenset[str]]]:
    """Per rule of `program`, in order: the reads of input relations its positive atoms make, and
    the other relations they read. Worked out once per program (kept on it, as queries.py keeps its
    queries): a verification asks live_rules twice, before and after its authorization decisions.
    """
    kept: list[tuple[Rule, tuple[_Read, ...], frozenset[str]]] | None = program.__dict__.get(_BODIES)
    if kept is not None:
        return kept
    inputs = {name for name, decl in program.relations.items() if decl.is_input}
    kept = []
    for rule in program.rules:
        reads: list[_Read] = []
        derived: set[str] = set()
        for atom in rule.body:
            if not isinstance(atom, Atom):
                continue
            if atom.relation in inputs:
                reads.append(
                    (atom.relation, tuple((i, arg.value) for i, arg in enumerate(atom.args) if isinstance(arg, Const)))
                )
            else:
                derived.add(atom.relation)
        kept.append((rule, tuple(reads), frozenset(derived)))
    object.__setattr__(program, _BODIES, kept)
    return kept


def relations_read(program: Program) -> set[str]:
    """Relations some rule body reads, positively or under negation."""
    return {a.relation for r in program.rules for a in (*r.positive_atoms(), *r.negated_atoms())}


class Excluded(frozenset[Value]):
    """A filter's values that no atom reading the column can match, where every one of them holds a
    variable there that its rule compares `!=` with each (`C != "NV"`): rows holding one are left out.
    """


def constant_filters(
    program: Program,
    unfiltered: set[str],
    rules: Iterable[Rule] | None = None,
) -> dict[str, list[tuple[int, frozenset[Value]]]]:
    """Per input relation, the argument positions at which every reading atom has a constant, or a
    variable its rule compares `!=` with constants (an `Excluded` filter: the values none can be).

    A row whose value there is none of those constants can match no atom of the program,
    so leaving it out of the engine changes nothing that is derived: `label(X, "role",
    "leaf")` and `label(X, "rail", R)` need only the role and rail labels of a fleet, not
    every label. Likewise a row holding a value that every reading atom's rule says its variable
    there is not: BW001 reads `gpu_pair_bottleneck(A, B, C, M), C != "NV"`, and at 131,072 GPUs
    every one of the 458,752 pairs is NV. (Under negation too: the one instance such a row could
    answer fails its `!=`.) Relations in `unfiltered` (read by a query or explained) are loaded
    whole. Given `rules` (the live ones), only their atoms count: a rule that cannot fire asks for nothing.
    """
    constants: dict[str, dict[int, tuple[bool, set[Value]]]] = {}  # position: (excluding, values)
    for rule in program.rules if rules is None else rules:
        unequal = _unequal_constants(rule)
        for atom in (*rule.positive_atoms(), *rule.negated_atoms()):
            decl = program.relations.get(atom.relation)
            if decl is None or not decl.is_input or atom.relation in unfiltered:
                continue
            here: dict[int, tuple[bool, set[Value]]] = {}
            for i, arg in enumerate(atom.args):
                if isinstance(arg, Const):
                    here[i] = (False, {arg.value})
                elif isinstance(arg, Var) and arg.name in unequal:
                    here[i] = (True, set(unequal[arg.name]))
            seen = constants.get(atom.relation)
            if seen is None:
                constants[atom.relation] = here
                continue
            for i in list(seen):
                either = _either(seen[i], here[i]) if i in here else None
                if either is None:
                    del seen[i]  # a variable here reads every value
                else:
                    seen[i] = either
    return {
        rel: sorted(
            (i, Excluded(values) if excluding else frozenset(values)) for i, (excluding, values) in positions.items()
        )
        for rel, positions in constants.items()
        if positions
    }


def _unequal_constants(rule: Rule) -> dict[str, set[Value]]:
    """Per variable of the rule, the constants a comparison of its body says it is not (`V != c`)."""
    out: dict[str, set[Value]] = {}
    for lit in rule.body:
        if isinstance(lit, Comparison) and lit.op == "!=":
            for var, const in ((lit.left, lit.right), (lit.right, lit.left)):
                if isinstance(var, Var) and isinstance(const, Const):
                    out.setdefault(var.name, set()).add(const.value)
    return out


def _either(a: tuple[bool, set[Value]], b: tuple[bool, set[Value]]) -> tuple[bool, set[Value]] | None:
    """The values two atoms' filters at one position let through together (None: every value)."""
    (a_out, a_values), (b_out, b_values) = a, b
    if not a_out and not b_out:
        return (False, a_values | b_values)
    if a_out and b_out:
        values = a_values & b_values
    else:
        values = (a_values if a_out else b_values) - (b_values if a_out else a_values)
    return (True, values) if values else None


def filter_rows(rows: Sequence[Row], filters: Sequence[tuple[int, frozenset[Value]]]) -> Sequence[Row]:
    if not filters:
        return rows
    if isinstance(rows, StampedRows):  # blocks are filtered on their plan's rows, not row by row
        # An Excluded filter as the values it lets through, where every block holds constants in its
        # column (found from the plans); on a column of names (every row's own) it is passed over.
        allowed = [
            (i, frozenset(rows.values_at(i) - values) if isinstance(values, Excluded) else values)
            for i, values in filters
            if not isinstance(values, Excluded) or all(b.slots[i] is None for b in rows.blocks)
        ]
        return rows.filtered(allowed) if allowed else rows
    if len(filters) == 1:  # the common case, without a generator per row (object: a million rows)
        ((i, values),) = filters
        if isinstance(values, Excluded):
            return [row for row in rows if row[i] not in values]
        return [row for row in rows if row[i] in values]
    checks = [(i, values, isinstance(values, Excluded)) for i, values in filters]  # kinds told apart once
    return [row for row in rows if all((row[i] in values) is not excluding for i, values, excluding in checks)]
