"""Datalog rule bodies and heads to DuckDB SQL: the compiler the duckdb backend drives.

Naming never reuses user text as an SQL identifier: DuckDB folds the case of even
quoted identifiers, so `linkA` and `linka` would collide. Relations become numbered
tables, columns `c0..cN`, variables `v0..vN`. String constants travel as named
parameters, never spliced into the statement.

Symbols are dictionary-encoded: a symbol column holds INTEGER ids from the `_symbols`
table (one id per distinct string), so joins, DISTINCT and anti joins hash 32-bit integers
(numbers stay BIGINT).
Equality on ids is equality on strings; order comparisons and min/max over symbols join
the dictionary and compare the strings. Symbol constants of rules become their ids.

The `_symbols` table holds only the texts some statement has read: the engine keeps every
symbol in Python, and a statement that joins the dictionary names in its `Params` which ids
it can read (`Params.needs_text`, `TextIds`), whose texts are stored just before it runs
(`Params.bind`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from verifier.engine.ast import (
    Aggregate,
    Atom,
    BinOp,
    ColumnType,
    Comparison,
    Const,
    Declaration,
    HeadTerm,
    Literal_,
    Negation,
    Row,
    Rule,
    Term,
    Value,
    Var,
    Wildcard,
)
from verifier.engine.strata import is_assignment, order_body

STAGE = '"_stage"'
"""Hidden column: the global iteration in which a tuple first appeared (0 for input facts)."""

UNIT = '"_unit"'
"""The one column of a zero-arity relation, so that it still has rows to count."""

SYMBOLS = '"_symbols"'
"""The symbol dictionary: `id INTEGER, s VARCHAR`, one row per distinct string, for the ids whose text
a statement has read so far (see `Params.needs_text`)."""

SYMBOL_ID = "INTEGER"
"""The SQL type of a symbol id: half the width of a number, so a fleet's tables and hash tables of
ids take half the memory. A dictionary past 2^31 symbols fails its insert (DuckDB's conversion
error), it never wraps."""

SYMBOLS_SQL = f"CREATE TABLE {SYMBOLS} (id {SYMBOL_ID}, s VARCHAR)"

SQL_TYPES = {"symbol": SYMBOL_ID, "number": "BIGINT"}
"""Column types of relation tables: symbols are stored as their dictionary ids."""

_ORDER = frozenset({"<", "<=", ">", ">="})
_OUTER_ALIAS = re.compile(r"\ba(\d+)\.")
"""A reference to a positive atom's column (`a3."c0"`) in a compiled condition."""

_LOOKUP = re.compile(r"\bd\d+\.")
"""A reference to a dictionary join's row (`d0.s`, see `Body.text_of`) in a compiled condition."""
_COLUMN = re.compile(r'\(*a(\d+)\.("c\d+")\)*')
"""A positive atom's column (`a3."c0"`), alone or as an assigned variable's (`(a3."c0")`)."""
_KEY = "$key"
"""Pseudo-variable (no Datalog variable can be named so): the string a symbol min/max orders by."""

# Python's floor division and modulo, overflow-free: DuckDB's `//` and `%` truncate toward zero.
# By zero they are undefined (NULL), and a rule instance with an undefined term derives nothing:
# see `partial` for where that is enforced.
MACROS = (
    "CREATE OR REPLACE MACRO _py_mod(a, b) AS CASE WHEN b = 0 THEN NULL "
    "WHEN a % b <> 0 AND ((a % b) < 0) <> (b < 0) THEN a % b + b ELSE a % b END",
    "CREATE OR REPLACE MACRO _py_div(a, b) AS CASE WHEN b = 0 THEN NULL "
    "ELSE a // b - CASE WHEN a % b <> 0 AND ((a % b) < 0) <> (b < 0) THEN 1 ELSE 0 END END",
)

_COMPARE = {"=": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_AGGREGATE = {
    "min": "MIN({})",
    "max": "MAX({})",
    "count": "COUNT(DISTINCT {})",
    "sum": "CAST(SUM({}) AS BIGINT)",
}


def quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


class Schema:
    """Where each declared relation lives: table name and data columns.

    `on_first_use(relation)` runs the first time a relation's table is named, before any
    statement naming it is built, so a table can be created only once something reads or
    writes it: a verification names a fraction of the pack's relations, and each CREATE
    costs about half a millisecond.
    """

    def __init__(self, declarations: Iterable[Declaration], on_first_use: Callable[[str], None] | None = None) -> None:
        self.declarations: dict[str, Declaration] = {}
        self.tables: dict[str, str] = {}
        self.used: set[str] = set()
        self._on_first_use = on_first_use
        for i, decl in enumerate(declarations):
            if decl.name in self.declarations:
                continue
            self.declarations[decl.name] = decl
            # The name is only a readable suffix; the index alone keeps tables distinct.
            self.tables[decl.name] = quote(f"r{i}_{decl.name}")

    def table(self, relation: str) -> str:
        name = self.tables[relation]
        if relation not in self.used:
            if self._on_first_use is not None:
                self._on_first_use(relation)
            # Counted once made: stopped before (Ctrl-C), the next statement naming it makes it.
            self.used.add(relation)
        return name

    def claim(self, relation: str) -> bool:
        """Count `relation`'s table as named without creating it; whether it was not named before
        (then the caller creates it, e.g. with `create_as_sql`).
        """
        if relation in self.used:
            return False
        self.used.add(relation)
        return True

    def columns(self, relation: str) -> list[str]:
        arity = self.declarations[relation].arity
        return [quote(f"c{i}") for i in range(arity)] if arity else [UNIT]

    def create_as_sql(self, relation: str, select: str, stage: int | None) -> str:
        """CREATE TABLE of `relation` holding the rows of `select` (one column per data column, in
        order) at `stage`: the columns and types of `create_sql`, in one statement instead of two.
        `stage` None: `select` gives each row's stage, as a last column.
        """
        decl = self.declarations[relation]
        columns = self.columns(relation)
        types = [SQL_TYPES[c.type] for c in decl.columns] or ["BOOLEAN"]
        casts = [f"CAST(_s.{c} AS {t}) AS {c}" for c, t in zip(columns, types, strict=True)]
        casts.append(f"CAST({'_s.' + STAGE if stage is None else stage} AS INTEGER) AS {STAGE}")
        source = f"({select}) AS _s({', '.join([*columns, *([STAGE] if stage is None else [])])})"
        # OR REPLACE: a table left by a statement stopped as it returned (a second Ctrl-C on the
        # DROP after a first) is not yet counted as made (`used`), so it holds nothing that counts.
        return f"CREATE OR REPLACE TABLE {self.tables[relation]} AS SELECT {', '.join(casts)} FROM {source}"

    def create_sql(self, relation: str, table: str | None = None, stage: bool = True, replace: bool = False) -> str:
        decl = self.declarations[relation]
        cols = [f"{quote(f'c{i}')} {SQL_TYPES[c.type]}" for i, c in enumerate(decl.columns)] or [f"{UNIT} BOOLEAN"]
        if stage:
            cols.append(f"{STAGE} INTEGER")
        create = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE"
        return f"{create} {table or self.tables[relation]} ({', '.join(cols)})"


@dataclass(frozen=True)
class TextIds:
    """The ids whose texts a statement's dictionary joins may read, as SELECTs of one column."""

    rows: str | None
    """Those in the rows the joins read (the body's, the conditions on texts left out); None where
    no other statement can read them (a recursive query's own rows)."""
    columns: str | None
    """A superset, for where `rows` are too many to read: those in the table columns the joins
    read; None: any id."""


@dataclass
class Params:
    """Named parameters of one statement; equal values share a name.

    `intern` gives a symbol's dictionary id (adding it when new); symbol literals are ids.
    `store_texts(texts, values)` puts into the `_symbols` table the texts of the ids that `texts`
    (see `needs_text`) select, run with the parameter values they name; it returns False only when
    it read every `rows` of `texts` and found none (those bodies have no rows).
    """

    intern: Callable[[str], int] | None = None
    values: dict[str, Value] = field(default_factory=dict)
    _names: dict[tuple[type, Value], str] = field(default_factory=dict)
    store_texts: Callable[[Sequence[TextIds], dict[str, Value]], bool] | None = None
    texts: list[Callable[[], TextIds]] = field(default_factory=list)
    """What the statements compiled since the last `bind` join the dictionary on: each gives, when
    asked (as they run), the ids that may be read."""
    bodies: int = 0
    """Rule bodies compiled since the last `bind` (`compile_body`)."""
    body_texts: int = 0
    """Of those, how many join the dictionary (`Body.text_of`)."""
    nothing: bool = False
    """Set by `bind`: every body compiled since the one before joins the dictionary, and none of
    them has a row even with its conditions on texts left out, so a statement of those bodies
    derives nothing and need not run (TOPO002's `L1 < L2` over a fleet's links, which share no
    ends: the self-join of a million links ran twice, once for the texts and once to find nothing)."""

    def add(self, value: Value) -> str:
        key = (type(value), value)
        name = self._names.get(key)
        if name is None:
            name = f"p{len(self._names)}"
            self._names[key] = name
            self.values[name] = value
        return f"${name}"

    def literal(self, value: Value) -> str:
        if isinstance(value, int):
            # Integers are safe to inline; BIGINT keeps literal arithmetic from overflowing INTEGER.
            return f"CAST({value} AS BIGINT)"
        if self.intern is None:
            raise ValueError("symbol literal without a symbol dictionary")
        return f"CAST({self.intern(value)} AS {SYMBOL_ID})"

    def text(self, value: str) -> str:
        """A symbol as its string (for order comparisons), not its id."""
        return f"CAST({self.add(value)} AS VARCHAR)"

    def needs_text(self, ids: Callable[[], TextIds], of_body: bool = False) -> None:
        """The statement joins the dictionary on the ids that `ids()` names (`of_body`: a rule body's
        rows, `Body.text_ids`).
        """
        self.texts.append(ids)
        self.body_texts += of_body

    def bind(self) -> dict[str, Value] | None:
        """The values, called as the statement runs: the texts it reads are stored first.

        So a statement that joins `_symbols` must be run with `bind()`, and run right after it: the
        ids are read from the tables as they are then (a recursive round's, say). The texts stay
        stored; the next statement with these parameters names its own.
        """
        self.nothing = False
        if self.texts and self.store_texts is not None:
            found = self.store_texts([ids() for ids in self.texts], self.values)
            self.nothing = not found and self.body_texts == self.bodies == len(self.texts)
            self.texts = []
        self.bodies = self.body_texts = 0
        return self.values or None


class UnboundVariable(Exception):
    """A term used a variable no literal binds; programs passing `checks` never do this."""


def term_sql(term: Term, bindings: dict[str, str], params: Params) -> str:
    if isinstance(term, Var):
        if term.name not in bindings:
            raise UnboundVariable(term.name)
        return bindings[term.name]
    if isinstance(term, Const):
        return params.literal(term.value)
    if isinstance(term, BinOp):
        left = term_sql(term.left, bindings, params)
        right = term_sql(term.right, bindings, params)
        if term.op == "/":
            return f"_py_div({left}, {right})"
        if term.op == "%":
            return f"_py_mod({left}, {right})"
        return f"({left} {term.op} {right})"
    raise UnboundVariable("_")


def term_type(term: HeadTerm, types: dict[str, ColumnType]) -> ColumnType | None:
    """The type of a term's values, from the body's variable types; None when unknown."""
    if isinstance(term, Const):
        return "symbol" if isinstance(term.value, str) else "number"
    if isinstance(term, Var):
        return types.get(term.name)
    if isinstance(term, BinOp):
        return "number"
    if isinstance(term, Aggregate):
        return "number" if term.func in ("count", "sum") else term_type(term.term, types)
    return None


def partial(term: HeadTerm) -> bool:
    """Whether a term can be undefined (NULL): it divides or takes a remainder."""
    if isinstance(term, BinOp):
        return term.op in "/%" or partial(term.left) or partial(term.right)
    if isinstance(term, Aggregate):
        return partial(term.term)
    return False


def defined(sql: str) -> str:
    return f"({sql}) IS NOT NULL"


@dataclass
class Body:
    """A compiled rule body: FROM items, WHERE conditions and variable bindings."""

    sources: list[str] = field(default_factory=list)
    conditions: list[str] = field(default_factory=list)
    bindings: dict[str, str] = field(default_factory=dict)
    atoms: list[tuple[Atom, str]] = field(default_factory=list)
    """Positive atoms in body order, with their alias."""
    negations: list[tuple[Atom, list[str | None]]] = field(default_factory=list)
    """Negated atoms with the SQL of each argument (None for wildcards and local variables)."""
    types: dict[str, ColumnType] = field(default_factory=dict)
    """The type of each bound variable."""
    lookups: int = 0
    unreadable: list[bool] = field(default_factory=list)
    """Per positive atom (body order), whether it reads an override that is not a subquery (a
    recursive query's own name), which no statement but its own can read."""
    tables: list[str | None] = field(default_factory=list)
    """Per positive atom (body order), the table it reads; None where an override took its place."""
    looked_up: list[str] = field(default_factory=list)
    """The id of each dictionary join (`text_of`)."""

    def text_of(self, term: Term, sql: str, params: Params) -> str:
        """SQL for the string of a symbol term whose id is `sql`: a constant's text, or a dictionary join.

        The join reads the texts of the ids `sql` holds in the body's rows (`text_ids`).
        """
        if isinstance(term, Const) and isinstance(term.value, str):
            return params.text(term.value)
        if not self.looked_up:
            params.needs_text(self.text_ids, of_body=True)
        self.looked_up.append(sql)
        alias = f"d{self.lookups}"
        self.lookups += 1
        self.sources.append(f"{SYMBOLS} AS {alias}")
        self.conditions.append(f"{alias}.id = {sql}")
        return f"{alias}.s"

    def text_ids(self) -> TextIds:
        """The ids whose texts the dictionary joins read, in the body as it stands when asked.

        Their rows are the body's with the conditions on texts left out, a superset of what the
        statement reads: the body's join runs twice, but few texts are stored (at 131,072 GPUs,
        `L1 < L2` over the links joining another link of the same ends and kind: none of the
        1.06 M link ids). Their columns: those of the atoms' tables that the joined ids are read
        from (a variable assigned a constant: that id).
        """
        rows = None
        if not any(self.unreadable):
            atoms = self.sources[: len(self.atoms)]
            rows = f"SELECT unnest([{', '.join(self.looked_up)}])"
            rows += f" FROM {', '.join(atoms)}" if atoms else ""
            conditions = [c for c in self.conditions if not _LOOKUP.search(c)]
            rows += f" WHERE {' AND '.join(conditions)}" if conditions else ""
        columns: list[str] = []
        for sql in self.looked_up:
            column = _COLUMN.fullmatch(sql)
            table = self.tables[int(column[1])] if column else None
            if column is None or table is None:
                return TextIds(rows, None)
            columns.append(f"SELECT {column[2]} FROM {table}")
        return TextIds(rows, " UNION ".join(columns))

    def from_where(self) -> str:
        sql = f" FROM {', '.join(self.sources)}" if self.sources else ""
        if self.conditions:
            sql += " WHERE " + " AND ".join(self.conditions)
        return sql


def compile_body(
    body: Sequence[Literal_],
    schema: Schema,
    params: Params,
    overrides: dict[int, str] | None = None,
) -> Body:
    """Compile a body. `overrides` maps a positive atom's index (body order) to another table (a delta)."""
    out = Body()
    params.bodies += 1
    deferred: list[tuple[str, Term]] = []
    positive = [lit for lit in body if isinstance(lit, Atom)]
    own: list[list[str]] = []  # each atom's conditions on its own columns alone (constants)
    for i, atom in enumerate(positive):
        alias = f"a{i}"
        table = (overrides or {}).get(i, schema.table(atom.relation))
        out.unreadable.append(i in (overrides or {}) and not table.startswith("("))
        out.tables.append(None if i in (overrides or {}) else table)
        out.sources.append(f"{table} AS {alias}")
        out.atoms.append((atom, alias))
        own.append([])
        decl = schema.declarations[atom.relation]
        for col, arg, column in zip(schema.columns(atom.relation), atom.args, decl.columns, strict=False):
            ref = f"{alias}.{col}"
            if isinstance(arg, Var):
                if arg.name in out.bindings:
                    out.conditions.append(f"{ref} = {out.bindings[arg.name]}")
                else:
                    out.bindings[arg.name] = ref
                    out.types[arg.name] = column.type
            elif isinstance(arg, Const):
                own[i].append(f"{ref} = {params.literal(arg.value)}")
            elif isinstance(arg, BinOp):
                deferred.append((ref, arg))
    pushed: list[list[str]] = [[] for _ in positive]
    for lit in order_body(tuple(lit for lit in body if not isinstance(lit, Atom))):
        if isinstance(lit, Comparison):
            target = is_assignment(lit, set(out.bindings))
            if target is not None:
                source = lit.right if isinstance(lit.left, Var) and lit.left.name == target else lit.left
                out.bindings[target] = f"({term_sql(source, out.bindings, params)})"
                source_type = term_type(source, out.types)
                if source_type is not None:
                    out.types[target] = source_type
                if partial(source):
                    out.conditions.append(defined(out.bindings[target]))
                continue
            left = term_sql(lit.left, out.bindings, params)
            right = term_sql(lit.right, out.bindings, params)
            if lit.op in _ORDER and "symbol" in (term_type(lit.left, out.types), term_type(lit.right, out.types)):
                # Ids carry no order: compare the strings.
                left = out.text_of(lit.left, left, params)
                right = out.text_of(lit.right, right, params)
            out.conditions.append(f"{left} {_COMPARE[lit.op]} {right}")
        elif isinstance(lit, Negation):
            condition, args = _negation(lit.atom, len(out.negations), schema, out.bindings, params)
            out.negations.append((lit.atom, args))
            outer = {int(a) for a in _OUTER_ALIAS.findall(condition)}
            if len(outer) == 1:
                pushed[outer.pop()].append(condition)
            else:
                out.conditions.append(condition)
    for i, (_, alias) in enumerate(out.atoms):
        if pushed[i]:
            # A negation that reads one atom alone: DuckDB runs an anti join after every inner join of
            # the body, so it goes inside that atom (with the atom's constants), where it can empty the
            # atom before the big joins are built (promise(P, "nvlink_domain"), !object(P, "node") at
            # fleet scale: 77 -> 4 ms). Inside, the alias names the atom's own rows; outside, the
            # rows left: the rest of the body's SQL reads the same either way.
            table = out.sources[i].rsplit(" AS ", 1)[0]
            where = " AND ".join([*own[i], *pushed[i]])
            out.sources[i] = f"(SELECT * FROM {table} AS {alias} WHERE {where}) AS {alias}"
        else:
            out.conditions.extend(own[i])
    for ref, term in deferred:
        out.conditions.append(f"{ref} = {term_sql(term, out.bindings, params)}")
    return out


def _negation(
    atom: Atom, index: int, schema: Schema, bindings: dict[str, str], params: Params
) -> tuple[str, list[str | None]]:
    alias = f"n{index}"
    local: dict[str, str] = {}
    conditions: list[str] = []
    outer: list[str] = []
    args: list[str | None] = []
    for col, arg in zip(schema.columns(atom.relation), atom.args, strict=False):
        ref = f"{alias}.{col}"
        if isinstance(arg, Wildcard):
            args.append(None)
        elif isinstance(arg, Var) and arg.name not in bindings:
            # Only in the negation: "no tuple with any value here" (the same value where repeated).
            if arg.name in local:
                conditions.append(f"{ref} = {local[arg.name]}")
            else:
                local[arg.name] = ref
            args.append(None)
        else:
            value = term_sql(arg, bindings, params)
            conditions.append(f"{ref} = {value}")
            args.append(value)
            if partial(arg):
                # Otherwise an undefined argument would make the negation hold vacuously.
                outer.append(defined(value))
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    exists = f"NOT EXISTS (SELECT 1 FROM {schema.table(atom.relation)} AS {alias}{where})"
    return " AND ".join([*outer, exists]), args


def head_exprs(args: Sequence[HeadTerm], bindings: dict[str, str], params: Params) -> list[str]:
    """SQL for non-aggregate head arguments; a zero-arity head yields its unit column."""
    if not args:
        return ["TRUE"]
    return [term_sql(a, bindings, params) for a in args if not isinstance(a, Aggregate)]


Apart = tuple[bool, bool]
"""What is proven of an aggregate rule's body (distinct_rules): its bindings are distinct
(`bindings_distinct`), and a `count`'s values are distinct within each group (`counted_apart`)."""


def rule_select(
    rule: Rule,
    schema: Schema,
    params: Params,
    overrides: dict[int, str] | None = None,
    distinct: bool = True,
    apart: Apart = (False, False),
) -> str:
    """A SELECT of the head tuples the rule derives, one column per head argument.

    `distinct=False` leaves duplicates for a following EXCEPT or DISTINCT to remove, saving a hash pass.
    `apart`: for an aggregate rule, what `aggregate_query` may take as proven (distinct_rules).
    """
    body = compile_body(rule.body, schema, params, overrides)
    if rule.head.aggregate is None:
        exprs = head_exprs(rule.head.args, body.bindings, params)
        body.conditions.extend(defined(e) for a, e in zip(rule.head.args, exprs, strict=False) if partial(a))
        return f"SELECT {'DISTINCT ' if distinct else ''}{', '.join(exprs)}{body.from_where()}"
    return aggregate_query(rule, body, params, apart=apart)


def aggregate_query(
    rule: Rule, body: Body, params: Params, group: Row | None = None, apart: Apart = (False, False)
) -> str:
    """A SELECT of the head tuples an aggregate rule derives from `body` (only `group`'s, if given).

    Where `apart` says the body binds no two instances alike, `sum` adds over its rows without a
    DISTINCT first, and where it says a `count`'s values come once per group, COUNT counts them
    without hashing them (at 131,072 GPUs a GPU's scale-up links, 0.06 -> 0.02 s a sum).
    """
    agg = rule.head.aggregate
    assert agg is not None
    _, aggregate = agg
    if aggregate.func in ("min", "max") and term_type(aggregate.term, body.types) == "symbol":
        term = term_sql(aggregate.term, body.bindings, params)
        body.bindings[_KEY] = body.text_of(aggregate.term, term, params)
    inner, outer = distinct_bindings(body, distinct=aggregate.func == "sum" and not apart[0])
    extra = []
    if group is not None:
        extra = [
            f"{term_sql(a, outer, params)} = {params.literal(group[i])}"
            for i, a in enumerate(rule.head.args)
            if not isinstance(a, Aggregate)
        ]
    return aggregate_select(rule, inner, outer, params, extra, counted_apart=apart[1])


def distinct_bindings(body: Body, distinct: bool = True) -> tuple[str, dict[str, str]]:
    """The body's variable bindings as a subquery, and how to refer to each variable in it.

    `sum` needs them distinct (it adds over distinct bindings); min, max and COUNT(DISTINCT) do not.
    """
    names = list(body.bindings)
    cols = [f"{body.bindings[n]} AS v{i}" for i, n in enumerate(names)] or ["TRUE AS v_unit"]
    inner = f"SELECT {'DISTINCT ' if distinct else ''}{', '.join(cols)}{body.from_where()}"
    return inner, {n: f"_b.v{i}" for i, n in enumerate(names)}


def aggregate_select(
    rule: Rule,
    inner: str,
    bindings: dict[str, str],
    params: Params,
    extra_where: Sequence[str] = (),
    counted_apart: bool = False,
) -> str:
    agg = rule.head.aggregate
    assert agg is not None
    position, aggregate = agg
    groups = head_exprs(rule.head.args, bindings, params)
    term = term_sql(aggregate.term, bindings, params)
    if _KEY in bindings:
        # A symbol min/max: the id whose string is smallest/largest (strings are unique per id).
        value = f"ARG_{aggregate.func.upper()}({term}, {bindings[_KEY]})"
    elif aggregate.func == "count" and counted_apart:
        value = f"COUNT({term})"
    else:
        value = _AGGREGATE[aggregate.func].format(term)
    exprs = [*groups[:position], value, *groups[position:]]
    plain = [a for a in rule.head.args if not isinstance(a, Aggregate)]
    undefined = [defined(g) for a, g in zip(plain, groups, strict=True) if partial(a)]
    if partial(aggregate.term):
        undefined.append(defined(term))
    conditions = [*undefined, *extra_where]
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    group_by = f" GROUP BY {', '.join(groups)}" if groups else ""
    # With no group columns SQL would still return one row (count 0, sum NULL) for an empty body;
    # Datalog derives nothing from nothing.
    return f"SELECT {', '.join(exprs)} FROM ({inner}) AS _b{where}{group_by} HAVING COUNT(*) > 0"


def recursive_positions(rule: Rule, stratum: set[str]) -> list[int]:
    """Indexes (among positive atoms) of atoms that read a relation of the rule's own stratum."""
    return [i for i, a in enumerate(rule.positive_atoms()) if a.relation in stratum]


def decoded(select: str, kinds: Sequence[ColumnType | None], params: Params) -> tuple[str, list[str]]:
    """Wrap a SELECT of ids and numbers so its symbol columns come out as strings.

    `kinds` gives each column's type (None: neither, e.g. a unit or stage column). Returns the
    SQL (FROM ... joins, no SELECT list yet) and the outer expression of every column; the
    statement must run with `params.bind()` (it reads the texts of the ids `select` gives).
    """
    names = [f"x{i}" for i in range(len(kinds))]
    source = f"({select}) AS _q({', '.join(names)})"
    cols: list[str] = []
    joins: list[str] = []
    for i, kind in enumerate(kinds):
        if kind == "symbol":
            joins.append(f" LEFT JOIN {SYMBOLS} AS d{i} ON d{i}.id = _q.x{i}")
            cols.append(f"d{i}.s")
        else:
            cols.append(f"_q.x{i}")
    symbols = [f"_q.x{i}" for i, kind in enumerate(kinds) if kind == "symbol"]
    if symbols:
        params.needs_text(lambda: TextIds(f"SELECT unnest([{', '.join(symbols)}]) FROM {source}", None))
    return f" FROM {source}{''.join(joins)}", cols
