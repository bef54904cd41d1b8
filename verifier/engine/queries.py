"""Queries typed by a user: parsed and checked against the program before anything is loaded."""

from __future__ import annotations

from collections.abc import Iterable

from verifier.engine.answers import QueryResult
from verifier.engine.ast import Atom, Negation, Program, Query
from verifier.engine.checks import check_query
from verifier.engine.parser import parse_query

__all__ = ["QueryResult", "prepare_query", "program_for", "query_relations"]


def prepare_query(text: str, program: Program, filename: str = "<query>") -> Query:
    """`text` parsed as a query body and checked against `program` (ProgramError with line:col when it is not)."""
    query = parse_query(text, filename)
    check_query(query, program)
    return query


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
