"""Queries typed by a user: parsed and checked against the program before anything is loaded."""

from __future__ import annotations

from collections.abc import Iterable

from verifier.engine.answers import QueryResult
from verifier.engine.ast import Atom, Negation, Program, Query, Rule
from verifier.engine.strata import sliced_strata

__all__ = ["QueryResult", "prepare_query", "program_for", "query_relations", "ready_for_queries"]


def prepare_query(text: str, program: Program, filename: str = "<query>", on_disk: bool = False) -> Query:
    """`text` parsed as a query body and checked against `program` (ProgramError with line:col when it is not).

    A query that passes is kept on the program, so the checks' `@needs` queries of a cached
    program are not parsed again on every run (parsing would build the grammar, 0.2 s). With
    `on_disk` (a query typed on the command line, asked again run after run) the parse is
    kept in the cache folder too (verifier.engine.query_cache).
    """
    kept: dict[tuple[str, str], Query] = program.kept(_KEPT)
    query = kept.get((text, filename))
    if query is None:
        from verifier.core.cache import enabled as cache_enabled
        from verifier.engine.checks import check_query

        query = _parsed(text, filename) if on_disk and cache_enabled() else _parse(text, filename)
        check_query(query, program)
        kept[(text, filename)] = query
    return query


def ready_for_queries() -> None:
    """Import and build the query parser and its checker now (lark and its tables, 0.05-0.08 s)
    rather than at the first query.

    A program from the cache needs neither, so without this a REPL's first answer would pay for them.
    """
    import verifier.engine.checks  # noqa: F401  (check_query's module, imported by the first query)
    from verifier.engine.parser import ready

    ready()


def _parsed(text: str, filename: str) -> Query:
    """`text` parsed as a query: from the disk cache when a run parsed the same text before."""
    from verifier.engine.query_cache import cached_query, query_key, remember_query

    key = query_key(text, filename)
    query = cached_query(key)
    if query is None:
        query = _parse(text, filename)
        remember_query(key, query)
    return query


def _parse(text: str, filename: str) -> Query:
    from verifier.engine.parser import parse_query

    return parse_query(text, filename)


_KEPT = "_queries"
NEEDS_KEY = "needs"
"""The metadata key of a check's `@needs` query, parsed ahead for the program cache."""


def query_relations(query: Query) -> set[str]:
    """Relations a query body reads, positively or under negation."""
    return {lit.relation for lit in query.body if isinstance(lit, Atom)} | {
        lit.atom.relation for lit in query.body if isinstance(lit, Negation)
    }


def program_for(program: Program, relations: Iterable[str], among: Iterable[Rule] | None = None) -> Program:
    """`program` with only the rules that `relations` depend on, directly or through other rules;
    with `among` (the rules that can fire, pruning.live_rules), through those rules only.

    Declarations and check metadata are kept whole. Under stratified semantics a relation's
    tuples depend only on the rules of the relations it reads, so a query answered on the
    slice gets the same rows as on the whole program, without evaluating the rest (and
    without authorization, unless the query reads it). A rule that cannot fire derives nothing,
    so leaving it out changes no tuple and no proof: a verification evaluates only what its
    reports depend on among the live rules (at fleet scale SCHED001's helpers would otherwise work
    out every GPU's NVLink domain with no scheduler grouping there to compare it with).
    """
    reads: dict[str, set[str]] = {}
    for rule in program.rules if among is None else among:
        body = reads.setdefault(rule.head.relation, set())
        body.update(a.relation for a in (*rule.positive_atoms(), *rule.negated_atoms()))
    needed: set[str] = set()
    todo = list(relations)
    while todo:
        relation = todo.pop()
        if relation not in needed:
            needed.add(relation)
            todo.extend(reads.get(relation, ()))
    if among is None:
        rules = tuple(r for r in program.rules if r.head.relation in needed)
    else:
        chosen = {id(r) for r in among}
        rules = tuple(r for r in program.rules if id(r) in chosen and r.head.relation in needed)
    sliced = Program(program.declarations, rules, program.metadata)
    sliced_strata(program, sliced)
    # The slice keeps every declaration, so a query checked against the whole program (the cached
    # `@needs` queries) is checked against the slice too: not parsed again.
    kept = program.__dict__.get(_KEPT)
    if kept is not None:
        object.__setattr__(sliced, _KEPT, dict(kept))
    return sliced
