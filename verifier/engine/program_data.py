"""A checked program as plain JSON-able data, and back: how the shipped rule pack travels inside the package.

Only lists, strings, integers, booleans and null: reading it back builds the AST's own dataclasses
and runs nothing that the data names (unlike a pickle). Besides the program it carries what a run
would otherwise work out again (its strata, its checks' `@needs` queries already parsed and
checked, each rule's text), so a run that loads it needs neither the parser nor the graph library.

Rule files are named by their index in a list the caller gives when decoding: the same pack is
reported as `rules/x.dl` from a checkout and by its installed path from elsewhere.

Variables, wildcards and constants shared between rules (verifier.engine.shared_terms) are
written once in a table and stay shared when read back; every other node is written in place.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verifier.core.errors import SourceLocation, TopologError
from verifier.engine.ast import (
    NOWHERE,
    Aggregate,
    Atom,
    BinOp,
    Column,
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
    Var,
    Wildcard,
)
from verifier.engine.queries import _KEPT as QUERIES_KEPT
from verifier.engine.queries import NEEDS_KEY, prepare_query
from verifier.engine.strata import _KEPT as STRATA_KEPT
from verifier.engine.strata import Stratum, strata_of

FORMAT = 1
"""Bumped whenever the layout below changes: data of another format is not read (the pack is parsed)."""

Data = dict[str, Any]


def encode_program(program: Program, files: Sequence[str]) -> Data:
    """`program` (checked, its terms shared, its `@needs` queries prepared) as plain data; `files` are
    the names its locations use, in the order the data will refer to them by index.
    """
    return _Encoder(files).program(program)


def decode_program(data: Data, files: Sequence[str]) -> Program:
    """The program `data` holds, its locations naming `files` (by index), with its strata and checked
    `@needs` queries attached as prepare_query and strata_of keep them.
    """
    return _Decoder(data["terms"], files).program(data)


class _Encoder:
    def __init__(self, files: Sequence[str]) -> None:
        self._files = {name: i for i, name in enumerate(files)}
        self._terms: list[list[Any]] = []
        self._term_ids: dict[int, int] = {}
        self._keep: list[object] = []  # holds each tabled term, so its id() is not reused

    def program(self, program: Program) -> Data:
        rules = [self.rule(r) for r in program.rules]
        index = {id(r): i for i, r in enumerate(program.rules)}
        strata = [[list(s.relations), [index[id(r)] for r in s.rules], s.recursive] for s in strata_of(program)]
        queries = []
        for i, (name, text, where) in enumerate(program.metadata):
            if name != NEEDS_KEY:
                continue
            kept: dict[tuple[str, str], Query] = program.__dict__.get(QUERIES_KEPT, {})
            query = kept.get((text, where.file))
            if query is not None:  # a query that failed its check is reported when the checks are built
                queries.append([i, [self.literal(lit) for lit in query.body], list(query.variables), query.text])
        return {
            "format": FORMAT,
            "declarations": [self.declaration(d) for d in program.declarations],
            "rules": rules,
            "metadata": [[name, value, self.loc(where)] for name, value, where in program.metadata],
            "strata": strata,
            "queries": queries,
            "terms": self._terms,
        }

    def loc(self, loc: SourceLocation) -> list[int] | None:
        if loc == NOWHERE:
            return None
        return [self._files[loc.file], loc.line, loc.col]

    def declaration(self, decl: Declaration) -> list[Any]:
        columns = [[c.name, c.type, c.doc, self.loc(c.loc)] for c in decl.columns]
        return [decl.name, columns, decl.is_input, decl.doc, self.loc(decl.loc)]

    def rule(self, rule: Rule) -> list[Any]:
        head = rule.head
        return [
            head.relation,
            [self.head_term(a) for a in head.args],
            self.loc(head.loc),
            [self.literal(lit) for lit in rule.body],
            self.loc(rule.loc),
            rule.text,
        ]

    def literal(self, lit: Literal_) -> list[Any]:
        if isinstance(lit, Atom):
            return ["a", *self.atom(lit)]
        if isinstance(lit, Negation):
            return ["n", self.atom(lit.atom), self.loc(lit.loc)]
        return ["c", lit.op, self.term(lit.left), self.term(lit.right), self.loc(lit.loc)]

    def atom(self, atom: Atom) -> list[Any]:
        return [atom.relation, [self.term(a) for a in atom.args], self.loc(atom.loc)]

    def head_term(self, term: HeadTerm) -> int | list[Any]:
        if isinstance(term, Aggregate):
            return ["g", term.func, self.term(term.term), self.loc(term.loc)]
        return self.term(term)

    def term(self, term: Term) -> int | list[Any]:
        """A variable, wildcard or constant as its index in the table; arithmetic in place."""
        if isinstance(term, BinOp):
            return ["b", term.op, self.term(term.left), self.term(term.right), self.loc(term.loc)]
        found = self._term_ids.get(id(term))
        if found is not None:
            return found
        if isinstance(term, Var):
            entry: list[Any] = ["v", term.name, self.loc(term.loc)]
        elif isinstance(term, Const):
            entry = ["c", term.value, self.loc(term.loc)]
        else:
            entry = ["_", None, self.loc(term.loc)]
        self._term_ids[id(term)] = len(self._terms)
        self._keep.append(term)
        self._terms.append(entry)
        return len(self._terms) - 1


_new = object.__new__


# Each node is made as its __init__ would make it, its fields set straight into its __dict__
# without running __init__ (nor a call with keywords per node): a quarter of the cost, for the
# 40,000 nodes of the shipped pack. tests/engine/test_shipped_program.py compares them field by field.


class _Decoder:
    def __init__(self, terms: list[list[Any]], files: Sequence[str]) -> None:
        self._files = files
        self._terms: list[Term] = [self._tabled(kind, value, loc) for kind, value, loc in terms]

    def _tabled(self, kind: str, value: Any, loc: list[int] | None) -> Term:
        where = self.loc(loc)
        if kind == "v":
            return Var(value, where)
        if kind == "c":
            return Const(value, where)
        return Wildcard(where)

    def program(self, data: Data) -> Program:
        rules = tuple([self.rule(r) for r in data["rules"]])
        metadata = tuple([(name, value, self.loc(where)) for name, value, where in data["metadata"]])
        program = Program(tuple([self.declaration(d) for d in data["declarations"]]), rules, metadata)
        strata = tuple(
            [
                Stratum(tuple(relations), tuple([rules[i] for i in members]), recursive)
                for relations, members, recursive in data["strata"]
            ]
        )
        queries: dict[tuple[str, str], Query] = {}
        for i, body, variables, text in data["queries"]:
            _, value, where = metadata[i]
            queries[(value, where.file)] = Query(tuple([self.literal(lit) for lit in body]), tuple(variables), text)
        # Program is frozen; these are derived from its fields, kept where strata_of and prepare_query look.
        object.__setattr__(program, STRATA_KEPT, strata)
        object.__setattr__(program, QUERIES_KEPT, queries)
        return program

    def loc(self, loc: list[int] | None) -> SourceLocation:
        if loc is None:
            return NOWHERE
        node = _new(SourceLocation)
        fields = node.__dict__
        fields["file"] = self._files[loc[0]]
        fields["line"] = loc[1]
        fields["col"] = loc[2]
        return node

    def declaration(self, d: list[Any]) -> Declaration:
        name, columns, is_input, doc, where = d
        loc = self.loc
        cols = []
        for cname, ctype, cdoc, cloc in columns:
            column = _new(Column)
            fields = column.__dict__
            fields["name"] = cname
            fields["type"] = ctype
            fields["doc"] = cdoc
            fields["loc"] = loc(cloc)
            cols.append(column)
        decl = _new(Declaration)
        fields = decl.__dict__
        fields["name"] = name
        fields["columns"] = tuple(cols)
        fields["is_input"] = is_input
        fields["doc"] = doc
        fields["loc"] = loc(where)
        return decl

    def rule(self, r: list[Any]) -> Rule:
        relation, args, head_loc, body, where, text = r
        term = self.head_term
        literal = self.literal
        head = _new(Head)
        fields = head.__dict__
        fields["relation"] = relation
        fields["args"] = tuple([term(a) for a in args])
        fields["loc"] = self.loc(head_loc)
        rule = _new(Rule)
        fields = rule.__dict__
        fields["head"] = head
        fields["body"] = tuple([literal(lit) for lit in body])
        fields["loc"] = self.loc(where)
        fields["text"] = text  # Rule.text's cached value, as the property would make it
        return rule

    def literal(self, lit: list[Any]) -> Literal_:
        kind = lit[0]
        if kind == "a":
            return self.atom(lit[1:])
        if kind == "n":
            negation = _new(Negation)
            fields = negation.__dict__
            fields["atom"] = self.atom(lit[1])
            fields["loc"] = self.loc(lit[2])
            return negation
        node = _new(Comparison)
        fields = node.__dict__
        fields["op"] = lit[1]
        fields["left"] = self.term(lit[2])
        fields["right"] = self.term(lit[3])
        fields["loc"] = self.loc(lit[4])
        return node

    def atom(self, a: list[Any]) -> Atom:
        relation, args, where = a
        terms = self._terms
        node = _new(Atom)
        fields = node.__dict__
        fields["relation"] = relation
        fields["args"] = tuple([terms[t] if t.__class__ is int else self.term(t) for t in args])
        fields["loc"] = self.loc(where)
        return node

    def head_term(self, term: int | list[Any]) -> HeadTerm:
        if isinstance(term, list) and term[0] == "g":
            node = _new(Aggregate)
            fields = node.__dict__
            fields["func"] = term[1]
            fields["term"] = self.term(term[2])
            fields["loc"] = self.loc(term[3])
            return node
        return self.term(term)

    def term(self, term: int | list[Any]) -> Term:
        if isinstance(term, int):
            return self._terms[term]
        node = _new(BinOp)
        fields = node.__dict__
        fields["op"] = term[1]
        fields["left"] = self.term(term[2])
        fields["right"] = self.term(term[3])
        fields["loc"] = self.loc(term[4])
        return node


def prepared(program: Program) -> Program:
    """`program` with what the data carries worked out: strata, rule texts, `@needs` queries."""
    strata_of(program)
    for rule in program.rules:
        _ = rule.text
    for name, text, where in program.metadata:
        if name == NEEDS_KEY:
            try:
                prepare_query(text, program, where.file)
            except TopologError:  # reported, with its check, when the checks are built
                continue
    return program
