"""Differential tests: every engine must derive exactly the same relations.

Four opinions are compared: the pyDatalog reference backend, the duckdb and memory backends, and a
deliberately naive evaluator written here from the language's definition (nested loops,
fixpoint per stratum), so a bug shared by both engines still shows. Each fixture in
programs/ is a NAME.dl program, NAME.facts input facts and NAME.expected, the derived
relations worked out by hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.engine.ast import (
    Atom,
    BinOp,
    Comparison,
    Const,
    HeadTerm,
    Literal_,
    Negation,
    Program,
    Row,
    Rule,
    Value,
    Var,
    Wildcard,
    literal_vars,
)
from verifier.engine.backend import sort_rows
from verifier.engine.checks import check_program
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program
from verifier.engine.strata import is_assignment, order_body, stratify

PROGRAMS = Path(__file__).parent / "programs"
FIXTURES = sorted(p.stem for p in PROGRAMS.glob("*.dl"))

Relations = dict[str, list[Row]]


def _duckdb_available() -> bool:
    try:
        make_backend("duckdb")
    except ImportError:
        return False
    return True


needs_duckdb = pytest.mark.skipif(not _duckdb_available(), reason="the duckdb backend is not written yet")


# ---------------------------------------------------------------- helpers


def ground_facts(text: str, filename: str) -> dict[str, set[Row]]:
    """Rows per relation from ground facts in Datalog syntax (`link("a", "b", 400).`)."""
    rows: dict[str, set[Row]] = {}
    for rule in parse_program(text, filename).rules:
        assert not rule.body, f"{rule.loc}: a facts file holds ground facts only"
        row: list[Value] = []
        for arg in rule.head.args:
            assert isinstance(arg, Const), f"{rule.loc}: {arg} is not a constant"
            row.append(arg.value)
        rows.setdefault(rule.head.relation, set()).add(tuple(row))
    return rows


def load_fixture(name: str) -> tuple[Program, dict[str, set[Row]]]:
    dl = PROGRAMS / f"{name}.dl"
    program = parse_program(dl.read_text(encoding="utf-8"), str(dl))
    check_program(program)
    facts = PROGRAMS / f"{name}.facts"
    return program, ground_facts(facts.read_text(encoding="utf-8"), str(facts))


def expected_relations(name: str, program: Program) -> Relations:
    path = PROGRAMS / f"{name}.expected"
    rows = ground_facts(path.read_text(encoding="utf-8"), str(path))
    derived = {d.name for d in program.declarations if not d.is_input}
    assert set(rows) <= derived, f"{path} names relations that are not derived: {set(rows) - derived}"
    return {rel: sort_rows(rows.get(rel, ())) for rel in sorted(derived)}


def run_engine(engine: str, program: Program, facts: dict[str, set[Row]]) -> Relations:
    backend = make_backend(engine)
    try:
        backend.load(program)
        for relation, rows in sorted(facts.items()):
            backend.add_facts(relation, sorted(rows, key=repr))
        backend.evaluate()
        return {d.name: backend.query(d.name) for d in sorted(program.declarations, key=lambda d: d.name)}
    finally:
        backend.close()


def derived_only(relations: Relations, program: Program) -> Relations:
    inputs = {d.name for d in program.declarations if d.is_input}
    return {rel: rows for rel, rows in relations.items() if rel not in inputs}


def diff(left_name: str, left: Relations, right_name: str, right: Relations) -> str:
    lines = []
    for rel in sorted(set(left) | set(right)):
        a, b = set(left.get(rel, ())), set(right.get(rel, ()))
        if a != b:
            lines.append(f"{rel}: only {left_name}: {sort_rows(a - b)}; only {right_name}: {sort_rows(b - a)}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the naive oracle


def naive_eval(program: Program, facts: dict[str, set[Row]]) -> Relations:
    """The language's definition, evaluated the slowest obvious way."""
    db: dict[str, set[Row]] = {d.name: set() for d in program.declarations}
    for rel, rows in facts.items():
        db[rel] = set(rows)
    for stratum in stratify(program):
        changed = True
        while changed:
            changed = False
            for rule in stratum.rules:
                for rel_row in _fire(rule, db):
                    if rel_row not in db[rule.head.relation]:
                        db[rule.head.relation].add(rel_row)
                        changed = True
    return {rel: sort_rows(rows) for rel, rows in sorted(db.items())}


def _arith(term: HeadTerm, env: dict[str, Value]) -> Value | None:
    """The value of a term; None when undefined (division or remainder by zero)."""
    if isinstance(term, Var):
        return env[term.name]
    if isinstance(term, Const):
        return term.value
    assert isinstance(term, BinOp), term
    left, right = _arith(term.left, env), _arith(term.right, env)
    if left is None or right is None:
        return None
    assert isinstance(left, int) and isinstance(right, int)
    if term.op in "/%" and right == 0:
        return None
    return {
        "+": lambda: left + right,
        "-": lambda: left - right,
        "*": lambda: left * right,
        "/": lambda: left // right,
        "%": lambda: left % right,
    }[term.op]()


def _match(atom: Atom, row: Row, env: dict[str, Value]) -> dict[str, Value] | None:
    out = dict(env)
    for arg, value in zip(atom.args, row, strict=True):
        if isinstance(arg, Wildcard):
            continue
        if isinstance(arg, Const):
            if arg.value != value or type(arg.value) is not type(value):
                return None
        elif isinstance(arg, Var):
            if arg.name in out and (out[arg.name] != value or type(out[arg.name]) is not type(value)):
                return None
            out[arg.name] = value
    return out


def _bindings(body: tuple[Literal_, ...], db: dict[str, set[Row]]) -> Iterator[dict[str, Value]]:
    envs: list[dict[str, Value]] = [{}]
    for lit in order_body(body):
        nxt: list[dict[str, Value]] = []
        for env in envs:
            if isinstance(lit, Atom):
                nxt.extend(m for row in db[lit.relation] if (m := _match(lit, row, env)) is not None)
            elif isinstance(lit, Negation):
                if not any(_match(lit.atom, row, env) is not None for row in db[lit.atom.relation]):
                    nxt.append(env)
            else:
                nxt.extend(_compare(lit, env))
        envs = nxt
    yield from envs


def _compare(lit: Comparison, env: dict[str, Value]) -> Iterator[dict[str, Value]]:
    target = is_assignment(lit, set(env))
    if target is not None:
        source = lit.right if isinstance(lit.left, Var) and lit.left.name == target else lit.left
        value = _arith(source, env)
        if value is not None:
            yield {**env, target: value}
        return
    left, right = _arith(lit.left, env), _arith(lit.right, env)
    if left is None or right is None:
        return
    if lit.op in ("=", "!="):
        same = left == right and type(left) is type(right)
        if same == (lit.op == "="):
            yield env
        return
    assert isinstance(left, int) and isinstance(right, int), "the checker allows order only on numbers"
    if {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[lit.op]:
        yield env


def _values(terms: Iterable[HeadTerm], env: dict[str, Value]) -> tuple[Value, ...] | None:
    out: list[Value] = []
    for term in terms:
        value = _arith(term, env)
        if value is None:
            return None
        out.append(value)
    return tuple(out)


def _fire(rule: Rule, db: dict[str, set[Row]]) -> Iterator[Row]:
    agg = rule.head.aggregate
    if agg is None:
        for env in _bindings(rule.body, db):
            row = _values(rule.head.args, env)
            if row is not None:
                yield row
        return
    position, aggregate = agg
    named = sorted(dict.fromkeys(v for lit in rule.body for v in literal_vars(lit)))
    groups: dict[tuple[Value, ...], dict[tuple[Value, ...], Value]] = {}
    for env in _bindings(rule.body, db):
        key = _values((a for i, a in enumerate(rule.head.args) if i != position), env)
        value = _arith(aggregate.term, env)
        if key is None or value is None:
            continue
        # One entry per distinct binding of the body's named variables.
        groups.setdefault(key, {})[tuple(env[v] for v in named)] = value
    for key, by_binding in groups.items():
        values = list(by_binding.values())
        result: Value
        if aggregate.func == "count":
            result = len(set(values))
        else:
            numbers = [v for v in values if isinstance(v, int)]
            assert len(numbers) == len(values), "the checker allows sum/min/max only on numbers"
            result = (
                sum(numbers) if aggregate.func == "sum" else min(numbers) if aggregate.func == "min" else max(numbers)
            )
        out = list(key)
        out.insert(position, result)
        yield tuple(out)


# ---------------------------------------------------------------- fixtures


@pytest.mark.parametrize("evaluator", ["pydatalog", "memory", "naive"])
@pytest.mark.parametrize("name", FIXTURES)
def test_evaluator_matches_hand_computed(name: str, evaluator: str) -> None:
    # The reference engine, the memory engine and the naive oracle of this file, each against
    # the relations written by hand next to the fixture.
    program, facts = load_fixture(name)
    result = naive_eval(program, facts) if evaluator == "naive" else run_engine(evaluator, program, facts)
    got = derived_only(result, program)
    want = expected_relations(name, program)
    assert got == want, diff(evaluator, got, "expected", want)


@needs_duckdb
@pytest.mark.parametrize("name", FIXTURES)
def test_backends_agree_on_fixture(name: str) -> None:
    program, facts = load_fixture(name)
    reference = run_engine("pydatalog", program, facts)
    duck = run_engine("duckdb", program, facts)
    assert duck == reference, diff("duckdb", duck, "pydatalog", reference)


def test_fixtures_cover_the_language() -> None:
    text = "\n".join((PROGRAMS / f"{n}.dl").read_text(encoding="utf-8") for n in FIXTURES)
    for needle in ("count(", "sum(", "min(", "max(", "!", " / ", " % ", "_)", '\\"', "-"):
        assert needle in text, f"no fixture uses {needle!r}"
    assert len(FIXTURES) >= 10


# ---------------------------------------------------------------- random programs

# Inputs are small number relations over a tiny domain so joins stay small; derived
# relations get levels: a rule reads its own level positively only (recursion), lower
# levels also through negation and aggregates, so every program is stratified.

INPUTS = {"e": 2, "v": 1}
DOMAIN = st.integers(min_value=-2, max_value=3)
VARS = ("X", "Y", "Z", "W")


@st.composite
def programs(draw: st.DrawFn) -> tuple[str, dict[str, set[Row]]]:
    n_derived = draw(st.integers(min_value=1, max_value=4))
    arities = {f"d{i}": draw(st.integers(min_value=1, max_value=2)) for i in range(n_derived)}
    levels = {name: draw(st.integers(min_value=0, max_value=2)) for name in arities}
    decls = [".input e(a: number, b: number)", ".input v(a: number)"]
    decls += [f".decl {n}({', '.join(f'c{i}: number' for i in range(a))})" for n, a in arities.items()]
    rules: list[str] = []
    for head, arity in arities.items():
        for _ in range(draw(st.integers(min_value=1, max_value=2))):
            rules.append(draw(_rule(head, arity, levels, arities)))
    facts: dict[str, set[Row]] = {
        "e": set(draw(st.lists(st.tuples(DOMAIN, DOMAIN), max_size=6))),
        "v": {(x,) for x in draw(st.lists(DOMAIN, max_size=4))},
    }
    return "\n".join(decls + rules) + "\n", facts


@st.composite
def _rule(draw: st.DrawFn, head: str, arity: int, levels: dict[str, int], arities: dict[str, int]) -> str:
    level = levels[head]
    same = [r for r in arities if levels[r] == level]
    lower = [r for r in arities if levels[r] < level]
    aggregate = bool(lower or INPUTS) and draw(st.booleans()) and draw(st.booleans())
    positive_pool = sorted(INPUTS) + lower + ([] if aggregate else same)
    readable = {**INPUTS, **arities}

    body: list[str] = []
    bound: list[str] = []
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        rel = draw(st.sampled_from(positive_pool))
        args = []
        for _ in range(readable[rel]):
            kind = draw(st.sampled_from(("var", "var", "var", "const", "wild")))
            if kind == "var":
                var = draw(st.sampled_from(VARS))
                args.append(var)
                bound.append(var)
            elif kind == "const":
                args.append(str(draw(DOMAIN)))
            else:
                args.append("_")
        body.append(f"{rel}({', '.join(args)})")
    names = sorted(set(bound))
    recursive = any(a.split("(")[0] in same for a in body)
    values = list(names) or ["0"]

    if draw(st.booleans()) and names:
        op = draw(st.sampled_from(("<", "<=", ">", ">=", "!=", "=")))
        rhs = draw(st.sampled_from([*names, str(draw(DOMAIN))]))
        body.append(f"{draw(st.sampled_from(names))} {op} {rhs}")
    if draw(st.booleans()) and names and not recursive:
        op = draw(st.sampled_from(("+", "-", "*", "/", "%")))
        rhs = draw(st.sampled_from([*names, str(draw(DOMAIN))]))
        body.append(f"T = {draw(st.sampled_from(names))} {op} {rhs}")
        values.append("T")
    neg_pool = sorted(INPUTS) + lower
    if draw(st.booleans()):
        rel = draw(st.sampled_from(neg_pool))
        neg_args = [draw(st.sampled_from([*names, "_", str(draw(DOMAIN))])) for _ in range(readable[rel])]
        body.append(f"!{rel}({', '.join(neg_args)})")

    head_args = [draw(st.sampled_from(values)) for _ in range(arity)]
    if recursive:
        # A recursive rule may only copy values it read, or the fixpoint could grow forever.
        head_args = [a if a != "T" else draw(st.sampled_from(names or ["0"])) for a in head_args]
    if aggregate:
        func = draw(st.sampled_from(("count", "sum", "min", "max")))
        position = draw(st.integers(min_value=0, max_value=arity - 1))
        head_args[position] = f"{func}({draw(st.sampled_from(values))})"
    return f"{head}({', '.join(head_args)}) :- {', '.join(body)}."


def _engines() -> list[str]:
    return ["pydatalog", "duckdb", "memory"] if _duckdb_available() else ["pydatalog", "memory"]


# derandomize: the same 40 programs on every run. With fresh random draws a CI run once hung for
# 15+ minutes inside pyDatalog's evaluation (Body.ask) on some generated program, which is not
# reduced yet; a gate must not depend on the draw. Widen the search locally with a random seed.
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(programs())
def test_random_programs_agree(case: tuple[str, dict[str, set[Row]]]) -> None:
    text, facts = case
    program = parse_program(text, "random.dl")
    check_program(program)
    oracle = naive_eval(program, facts)
    for engine in _engines():
        got = run_engine(engine, program, facts)
        assert got == oracle, f"{engine} disagrees with the naive oracle on\n{text}\nfacts {facts}\n" + diff(
            engine, got, "naive", oracle
        )
