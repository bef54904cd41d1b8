"""Query support: the part of a program a query needs, and answers as a table or JSON.

Rows arrive sorted from the engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from verifier.engine.ast import Atom, Negation, Program, Query, Row


def query_relations(query: Query) -> set[str]:
    """Relations a query body reads, positively or under negation."""
    return {lit.relation for lit in query.body if isinstance(lit, Atom)} | {
        lit.atom.relation for lit in query.body if isinstance(lit, Negation)
    }


def program_for(program: Program, relations: Iterable[str]) -> Program:
    """`program` with only the rules that `relations` depend on, directly or through other rules.

    Declarations and check metadata are kept whole. Under stratified semantics a relation's
    tuples depend only on the rules of the relations it reads, so a query answered on the
    slice gets the same rows as on the whole program, without evaluating the rest (and
    without authorization, unless the query reads it).
    """
    reads: dict[str, set[str]] = {}
    for rule in program.rules:
        body = reads.setdefault(rule.head.relation, set())
        body.update(a.relation for a in (*rule.positive_atoms(), *rule.negated_atoms()))
    needed: set[str] = set()
    todo = list(relations)
    while todo:
        relation = todo.pop()
        if relation not in needed:
            needed.add(relation)
            todo.extend(reads.get(relation, ()))
    rules = tuple(r for r in program.rules if r.head.relation in needed)
    return Program(program.declarations, rules, program.metadata)


def render_rows(variables: tuple[str, ...], rows: list[Row], fmt: str) -> str:
    if fmt == "json":
        doc = {"columns": list(variables), "rows": [list(r) for r in rows], "count": len(rows)}
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"
    if not variables:
        return ("true" if rows else "false") + "\n"
    cells = [list(variables)] + [[str(v) for v in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(variables))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    noun = "row" if len(rows) == 1 else "rows"
    lines.append(f"({len(rows)} {noun})")
    return "\n".join(lines) + "\n"
