"""The DuckDB backend: SQL compilation, semi-naive recursion, aggregates, loading and proofs.

Expected values are worked out by hand in the comments next to them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, TypeVar

import pytest

from verifier.core.errors import EngineError, FactError, TopologError
from verifier.core.limits import Limits, use_limits
from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine import sql_compiler as sc
from verifier.engine.ast import Row
from verifier.engine.backend import Backend, Proof, sort_rows
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program, parse_query

LINK = ".input link(src: symbol, dst: symbol)\n.decl reach(src: symbol, dst: symbol)\n"
LINEAR = "reach(X, Y) :- link(X, Y).\nreach(X, Y) :- reach(X, Z), link(Z, Y).\n"

E = TypeVar("E", bound=Backend)


@pytest.fixture(params=["duckdb", "memory"])
def engine(request: pytest.FixtureRequest) -> Iterator[Any]:
    # The memory engine copies duckdb's rounds, stages and proof search, so every test here holds for both.
    e = make_backend(request.param)
    yield e
    e.close()


def run(engine: E, text: str, facts: Mapping[str, Sequence[Row]]) -> E:
    engine.load(parse_program(text, "t.dl"))
    for relation, rows in facts.items():
        engine.add_facts(relation, rows)
    engine.evaluate()
    return engine


def pairs(text: str) -> list[Row]:
    """'a>b c>d' -> [("a", "b"), ("c", "d")]"""
    return [tuple(p.split(">")) for p in text.split()]


def _shape(proof: Proof) -> tuple[object, ...]:
    """A proof without its stage numbers: the facts, rules and absent facts of its tree."""
    return (proof.relation, proof.row, proof.rule, tuple(_shape(p) for p in proof.premises), proof.absent)


def check_stages(proof: Proof) -> None:
    """Every premise first appeared strictly before the fact it supports; inputs are stage 0."""
    if proof.rule is None:
        assert proof.stage == 0
    for p in proof.premises:
        assert p.stage < proof.stage
        check_stages(p)


# -- recursion ---------------------------------------------------------------------------


def test_transitive_closure_on_a_cycle(engine: DuckDBBackend) -> None:
    run(engine, LINK + LINEAR, {"link": pairs("a>b b>c c>a c>d")})
    # a, b, c reach each other and themselves (cycle) and d; d reaches nothing: 3 * 4 = 12.
    expected = [(x, y) for x in "abc" for y in "abcd"]
    assert engine.query("reach") == expected
    assert engine.count("reach") == 12


def test_non_linear_recursion(engine: DuckDBBackend) -> None:
    program = LINK + "reach(X, Y) :- link(X, Y).\nreach(X, Y) :- reach(X, Z), reach(Z, Y).\n"
    run(engine, program, {"link": pairs("n0>n1 n1>n2 n2>n3 n3>n4 n4>n5")})
    # A chain of 6 nodes: every i < j pair, 5+4+3+2+1 = 15.
    assert engine.query("reach") == [(f"n{i}", f"n{j}") for i in range(6) for j in range(i + 1, 6)]
    # Doubling: paths of length 1 at stage 1, 2 at stage 2, up to 4 at stage 3, 5 at stage 4.
    proof = engine.explain("reach", ("n0", "n5"))
    assert proof.stage == 4
    assert proof.height() == 4
    check_stages(proof)


def test_mutual_recursion(engine: DuckDBBackend) -> None:
    program = """
    .input zero(n: number)
    .input succ(a: number, b: number)
    .decl even(n: number)
    .decl odd(n: number)
    even(X) :- zero(X).
    odd(Y) :- even(X), succ(X, Y).
    even(Y) :- odd(X), succ(X, Y).
    """
    run(engine, program, {"zero": [(0,)], "succ": [(i, i + 1) for i in range(6)]})
    assert engine.query("even") == [(0,), (2,), (4,), (6,)]
    assert engine.query("odd") == [(1,), (3,), (5,)]


def test_negation_over_a_lower_stratum(engine: DuckDBBackend) -> None:
    program = (
        LINK
        + LINEAR
        + """
    .input node(n: symbol)
    .decl cut_off(n: symbol)
    cut_off(N) :- node(N), !reach("a", N).
    """
    )
    run(engine, program, {"link": pairs("a>b b>c d>a"), "node": [(n,) for n in "abcde"]})
    # From a: b, c. Not reached: a itself (no cycle), d, e.
    assert engine.query("cut_off") == [("a",), ("d",), ("e",)]
    proof = engine.explain("cut_off", ("d",))
    assert proof.absent == (("reach", ("a", "d")),)
    assert [p.fact for p in proof.premises] == ['node("d")']


def test_negation_with_wildcard_and_local_variable(engine: DuckDBBackend) -> None:
    program = (
        LINK
        + """
    .input node(n: symbol)
    .decl sink(n: symbol)
    .decl no_loop(n: symbol)
    sink(N) :- node(N), !link(N, _).
    no_loop(N) :- node(N), !link(N, N).
    """
    )
    run(engine, program, {"link": pairs("a>b b>b"), "node": [(n,) for n in "abc"]})
    assert engine.query("sink") == [("c",)]
    assert engine.query("no_loop") == [("a",), ("c",)]
    assert engine.explain("sink", ("c",)).absent == (("link", ("c", "_")),)


# -- aggregates, arithmetic, terms --------------------------------------------------------

AGG = """
.input cap(node: symbol, port: symbol, gbps: number)
.decl ports(node: symbol, n: number)
.decl total(node: symbol, gbps: number)
.decl slowest(node: symbol, gbps: number)
.decl fastest(node: symbol, gbps: number)
.decl fleet_total(gbps: number)
ports(N, count(P)) :- cap(N, P, _).
total(N, sum(G)) :- cap(N, P, G).
slowest(N, min(G)) :- cap(N, _, G).
fastest(N, max(G)) :- cap(N, _, G).
fleet_total(sum(G)) :- cap(_, _, G).
"""
CAPS = [("a", "p0", 100), ("a", "p1", 100), ("a", "p2", 400), ("b", "p0", 50)]


def test_count(engine: DuckDBBackend) -> None:
    run(engine, AGG, {"cap": CAPS})
    assert engine.query("ports") == [("a", 3), ("b", 1)]


def test_sum_adds_over_distinct_bindings_of_named_variables(engine: DuckDBBackend) -> None:
    run(engine, AGG, {"cap": CAPS})
    # a: p0 and p1 both carry 100 but are different bindings (P differs): 100 + 100 + 400.
    assert engine.query("total") == [("a", 600), ("b", 50)]
    # Only G is named: the distinct values are 50, 100, 400.
    assert engine.query("fleet_total") == [(550,)]


def test_min_and_max(engine: DuckDBBackend) -> None:
    run(engine, AGG, {"cap": CAPS})
    assert engine.query("slowest") == [("a", 100), ("b", 50)]
    assert engine.query("fastest") == [("a", 400), ("b", 50)]


def test_aggregate_over_nothing_derives_nothing(engine: DuckDBBackend) -> None:
    run(engine, AGG, {})
    assert engine.count("fleet_total") == 0
    assert engine.count("ports") == 0


def test_aggregate_proof_lists_the_group(engine: DuckDBBackend) -> None:
    run(engine, AGG, {"cap": CAPS})
    proof = engine.explain("total", ("a", 600))
    assert sorted(p.fact for p in proof.premises) == [
        'cap("a", "p0", 100)',
        'cap("a", "p1", 100)',
        'cap("a", "p2", 400)',
    ]
    with pytest.raises(KeyError):
        engine.explain("total", ("a", 500))


def test_floor_division_and_modulo_follow_python(engine: DuckDBBackend) -> None:
    program = """
    .input pair(a: number, b: number)
    .decl divmod(a: number, b: number, q: number, r: number)
    divmod(A, B, A / B, A % B) :- pair(A, B).
    """
    cases = [(7, 2), (-7, 2), (7, -2), (-7, -2), (-1, 3), (6, -3), (0, 5)]
    run(engine, program, {"pair": cases})
    # Python: -7 // 2 == -4, -7 % 2 == 1, 7 // -2 == -4, 7 % -2 == -1, -1 // 3 == -1, -1 % 3 == 2.
    assert (-7, 2, -4, 1) in engine.query("divmod")
    assert (7, -2, -4, -1) in engine.query("divmod")
    assert engine.query("divmod") == sorted((a, b, a // b, a % b) for a, b in cases)


def test_arithmetic_and_assignment(engine: DuckDBBackend) -> None:
    program = """
    .input n(x: number)
    .decl out(x: number, y: number)
    .decl big(x: number)
    out(X, Y) :- n(X), Y = X * 2 - 1, Y > 0.
    big(Z) :- n(X), n(Y), X < Y, Z = X + Y, Z >= 7.
    """
    run(engine, program, {"n": [(-1,), (1,), (3,), (4,)]})
    # 2X - 1: -3 (dropped), 1, 5, 7.
    assert engine.query("out") == [(1, 1), (3, 5), (4, 7)]
    # X < Y sums: 0, 2, 3, 4, 5, 7 -> only 7 reaches 7.
    assert engine.query("big") == [(7,)]


def test_division_by_zero_derives_nothing(engine: DuckDBBackend) -> None:
    program = """
    .input pair(a: number, b: number)
    .decl q(a: number, q: number)
    .decl r(a: number)
    .decl none_equal(a: number)
    .decl total(s: number)
    q(A, A / B) :- pair(A, B).
    r(A) :- pair(A, B), M = A % B, M >= 0.
    none_equal(A) :- pair(A, B), !pair(A / B, _).
    total(sum(Q)) :- pair(A, B), Q = A / B.
    """
    run(engine, program, {"pair": [(6, 0), (6, 3), (1, 2)]})
    # (6, 0) is undefined everywhere; 6 / 3 = 2, 1 / 2 = 0 (floor).
    assert engine.query("q") == [(1, 0), (6, 2)]
    assert engine.query("r") == [(1,), (6,)]
    # pair(2, _) and pair(0, _) do not exist, so both defined instances hold.
    assert engine.query("none_equal") == [(1,), (6,)]
    assert engine.query("total") == [(2,)]


def test_integer_overflow_fails_closed(engine: DuckDBBackend) -> None:
    program = ".input n(x: number)\n.decl q(x: number)\nq(X * X) :- n(X).\n"
    engine.load(parse_program(program))
    engine.add_facts("n", [(2**62,)])
    with pytest.raises(EngineError):
        engine.evaluate()


def test_wildcards_and_repeated_variables(engine: DuckDBBackend) -> None:
    program = """
    .input e(a: symbol, b: symbol, c: symbol)
    .decl has_out(a: symbol)
    .decl palin(a: symbol)
    .decl loop(a: symbol)
    has_out(X) :- e(X, _, _).
    palin(X) :- e(X, _, X).
    loop(X) :- e(X, X, X).
    """
    run(engine, program, {"e": [("a", "b", "a"), ("b", "b", "b"), ("c", "a", "b")]})
    assert engine.query("has_out") == [("a",), ("b",), ("c",)]
    assert engine.query("palin") == [("a",), ("b",)]
    assert engine.query("loop") == [("b",)]


def test_string_constants_are_data_not_sql(engine: DuckDBBackend) -> None:
    nasty = 'it\'s "q"; DROP TABLE x; -- $p0'
    program = r"""
    .input label(n: symbol, l: symbol)
    .decl quoted(n: symbol)
    .decl tagged(n: symbol, t: symbol)
    quoted(N) :- label(N, "it's \"q\"; DROP TABLE x; -- $p0").
    tagged(N, "o'k") :- label(N, _).
    """
    run(engine, program, {"label": [("a", nasty), ("b", "plain"), ("c\x00d", "nul inside")]})
    assert engine.query("quoted") == [("a",)]
    assert engine.query("label", {1: nasty}) == [("a", nasty)]
    assert engine.query("tagged", {0: "c\x00d"}) == [("c\x00d", "o'k")]


def test_inline_facts_and_zero_arity(engine: DuckDBBackend) -> None:
    program = """
    .decl color(c: symbol)
    .decl alarm()
    .decl calm()
    color("red").
    color("blue").
    color("red").
    alarm() :- color("red").
    calm() :- color("green").
    """
    run(engine, program, {})
    assert engine.query("color") == [("blue",), ("red",)]
    assert engine.query("alarm") == [()]
    assert engine.query("calm") == []
    assert engine.explain("alarm", ()).premises[0].fact == 'color("red")'


def test_relation_names_that_are_sql_keywords_or_differ_in_case(engine: DuckDBBackend) -> None:
    program = """
    .input select(x: symbol)
    .decl order(x: symbol)
    .decl orDer(x: symbol)
    order(X) :- select(X).
    orDer("other") :- select(_).
    """
    run(engine, program, {"select": [("from",)]})
    assert engine.query("order") == [("from",)]
    assert engine.query("orDer") == [("other",)]


# -- facts, queries ------------------------------------------------------------------------


def test_facts_are_a_set(engine: DuckDBBackend) -> None:
    engine.load(parse_program(LINK + LINEAR))
    engine.add_facts("link", pairs("a>b a>b"))
    engine.add_facts("link", (r for r in pairs("a>b b>c")))
    engine.evaluate()
    assert engine.count("link") == 2
    assert engine.query("reach") == pairs("a>b a>c b>c")
    engine.evaluate()  # evaluating again recomputes the same result
    assert engine.count("reach") == 3


def test_fact_errors(engine: DuckDBBackend) -> None:
    engine.load(parse_program(LINK + ".input w(a: symbol, g: number)\n" + LINEAR))
    with pytest.raises(FactError, match=r'link\("a"\) has 1 argument'):
        engine.add_facts("link", [("a", "b"), ("a",)])
    with pytest.raises(FactError, match=r'w\("a", "100"\).*must be a number'):
        engine.add_facts("w", [("a", 1), ("a", "100")])
    with pytest.raises(FactError, match="must be a number"):
        engine.add_facts("w", [("a", True)])
    with pytest.raises(FactError, match="must be a symbol"):
        engine.add_facts("w", [(3, 1)])
    with pytest.raises(FactError, match="not an input relation"):
        engine.add_facts("reach", [("a", "b")])
    with pytest.raises(FactError, match="undeclared"):
        engine.add_facts("nope", [("a",)])
    assert engine.count("link") == 0 and engine.count("w") == 0


def test_number_columns_round_trip_as_int(engine: DuckDBBackend) -> None:
    program = ".input w(a: symbol, g: number)\n"
    run(engine, program, {"w": [("a", -(2**63)), ("b", 2**63 - 1), ("c", 0)]})
    rows = engine.query("w")
    assert rows == [("a", -(2**63)), ("b", 2**63 - 1), ("c", 0)]
    assert all(type(r[1]) is int for r in rows)


def test_symbol_ids_are_stored_32_bit_and_numbers_64_bit() -> None:
    # Symbol columns hold dictionary ids (INTEGER: half a number's width, so a fleet's tables and
    # hash tables of ids take half the memory); number columns keep all of int64 (the test above).
    engine = DuckDBBackend()
    program = ".input w(a: symbol, g: number)\n.decl v(a: symbol, g: number)\nv(A, G) :- w(A, G).\n"
    run(engine, program, {"w": [("a", 2**40)]})
    types = engine._con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns()"
        " WHERE NOT internal AND table_name <> '_symbols'"
    ).fetchall()
    assert sorted((t.split("_", 1)[1], c, d) for t, c, d in types) == [
        ("v", "_stage", "INTEGER"),
        ("v", "c0", "INTEGER"),
        ("v", "c1", "BIGINT"),
        ("w", "_stage", "INTEGER"),
        ("w", "c0", "INTEGER"),
        ("w", "c1", "BIGINT"),
    ]
    assert engine.query("v") == [("a", 2**40)]
    engine.close()


def test_a_negation_over_one_atom_is_judged_inside_that_atom(engine: DuckDBBackend) -> None:
    # !node(P) reads only promise's P: DuckDB would run it after the joins, so the compiler puts
    # it inside promise. !pair(A, P) reads two atoms and stays in the body. Either way the answers
    # are the Datalog ones: edges a-b and c-d sit in p1, a non-node; p2 is a node; pair(c, p1) holds.
    program = (
        ".input edge(a: symbol, b: symbol)\n.input within(x: symbol, p: symbol)\n"
        ".input promise(p: symbol, what: symbol)\n.input node(p: symbol)\n.input pair(a: symbol, p: symbol)\n"
        ".decl declared(a: symbol, b: symbol)\n"
        'declared(A, B) :- edge(A, B), promise(P, "domain"), within(A, P), within(B, P), !node(P), !pair(A, P).\n'
    )
    facts: dict[str, list[Row]] = {
        "edge": pairs("a>b c>d e>f"),
        "within": pairs("a>p1 b>p1 c>p1 d>p1 e>p2 f>p2"),
        "promise": [("p1", "domain"), ("p2", "domain")],
        "node": [("p2",)],
        "pair": pairs("c>p1"),
    }
    run(engine, program, facts)
    assert engine.query("declared") == pairs("a>b")
    if isinstance(engine, DuckDBBackend):
        schema, params = engine._schema, sc.Params(engine._intern)
        sql = sc.rule_select(engine._program.rules[0], schema, params)
        promise, node = schema.table("promise"), schema.table("node")
        assert f'(SELECT * FROM {promise} AS a1 WHERE a1."c1" = ' in sql
        assert sql.index(f"NOT EXISTS (SELECT 1 FROM {node}") < sql.index(") AS a1")
        assert sql.index(f"NOT EXISTS (SELECT 1 FROM {schema.table('pair')}") > sql.index(") AS a1")


def test_query_with_bound_arguments(engine: DuckDBBackend) -> None:
    run(engine, LINK + LINEAR, {"link": pairs("a>b b>c x>c")})
    assert engine.query("reach", {1: "c"}) == pairs("a>c b>c x>c")
    assert engine.query("reach", {0: "a", 1: "c"}) == [("a", "c")]
    assert engine.query("reach", {0: "zzz"}) == []


def test_answer_with_a_comparison(engine: DuckDBBackend) -> None:
    run(engine, AGG, {"cap": CAPS})
    # Ports slower than 400 Gb/s, in the query's variable order (G before N).
    query = parse_query('cap(N, P, G), G < 400, P != "p1"')
    assert query.variables == ("N", "P", "G")
    assert engine.answer(query) == [("a", "p0", 100), ("b", "p0", 50)]
    assert engine.answer(parse_query("total(N, T), T > 100")) == [("a", 600)]


def test_holds_asks_only_whether_there_is_an_answer(engine: DuckDBBackend) -> None:
    run(engine, LINK + LINEAR, {"link": pairs("a>b b>c x>c")})
    # Two parts sharing no variable: both have answers (a reaches c; x links to c).
    assert engine.holds(parse_query('reach("a", "c"), link(_, "c")'))
    # The second part has none: nothing links to a, so the whole body has no answer.
    assert not engine.holds(parse_query('reach(_, _), link(_, "a")'))
    # Joined: a reaches b and c; c links nowhere, b links to c: `reach(a, Z), link(Z, c)` holds with Z = b.
    assert engine.holds(parse_query('reach("a", Z), link(Z, "c")'))
    assert not engine.holds(parse_query('reach("c", Z)'))
    # Negation: x reaches c, and nothing reaches x.
    assert engine.holds(parse_query('reach("x", _), !reach(_, "x")'))
    assert not engine.holds(parse_query('reach(A, "c"), !reach(A, _)'))


# -- proofs --------------------------------------------------------------------------------


def test_proof_of_minimal_height_through_a_shortcut(engine: DuckDBBackend) -> None:
    run(engine, LINK + LINEAR, {"link": pairs("a>b b>c c>d a>d")})
    proof = engine.explain("reach", ("a", "d"))
    # Via the shortcut link(a, d): one rule over one input fact.
    assert proof.height() == 1
    assert [p.fact for p in proof.premises] == ['link("a", "d")']
    long = engine.explain("reach", ("b", "d"))
    assert long.height() == 2
    check_stages(long)


def test_proofs_bottom_out_in_input_facts(engine: DuckDBBackend) -> None:
    run(engine, LINK + LINEAR, {"link": pairs("a>b b>c c>a c>d")})
    for row in engine.query("reach"):
        proof = engine.explain("reach", row)
        assert proof.rule is not None and proof.stage > 0
        check_stages(proof)
    leaf = engine.explain("link", ("a", "b"))
    assert leaf.rule is None and leaf.premises == () and leaf.stage == 0


def test_explaining_a_fact_that_does_not_hold(engine: DuckDBBackend) -> None:
    run(engine, LINK + LINEAR, {"link": pairs("a>b")})
    with pytest.raises(KeyError):
        engine.explain("reach", ("b", "a"))
    with pytest.raises(KeyError):
        engine.explain("reach", ("a",))
    with pytest.raises(KeyError):
        engine.explain("reach", ("a", 1))


# -- dictionary-encoded symbols ----------------------------------------------------------------
# Symbols are stored as ids handed out in load order, so these load facts in an order where
# id order and string order disagree: anything that compared ids instead of strings would fail.

ORDERED = """
.input item(g: symbol, x: symbol)
.decl before(x: symbol, y: symbol)
.decl from_m(x: symbol)
.decl first(g: symbol, x: symbol)
.decl last(g: symbol, x: symbol)
.decl kinds(g: symbol, n: number)
before(X, Y) :- item(_, X), item(_, Y), X < Y.
from_m(X) :- item(_, X), X >= "m", "zz" > X.
first(G, min(X)) :- item(G, X).
last(G, max(X)) :- item(G, X).
kinds(G, count(X)) :- item(G, X).
"""


def _load_out_of_order(engine: DuckDBBackend) -> None:
    engine.load(parse_program(ORDERED, "t.dl"))
    engine.add_facts("item", [("g2", "zebra"), ("g1", "pear")])
    engine.add_facts("item", [("g1", "apple"), ("g2", "mango"), ("g1", "zz")])
    engine.add_facts("item", [("g1", "pear")])  # again: still one fact
    engine.evaluate()


def test_symbol_order_comparisons_compare_strings(engine: DuckDBBackend) -> None:
    _load_out_of_order(engine)
    words = sorted(["zebra", "pear", "apple", "mango", "zz"])
    assert engine.query("before") == [(x, y) for x in words for y in words if x < y]
    # "m" and "zz" are rule constants; "m" occurs in no fact.
    assert engine.query("from_m") == [("mango",), ("pear",), ("zebra",)]
    assert engine.answer(parse_query('item(G, X), X < "n", X > "apple"')) == [("g2", "mango")]


def test_symbol_min_and_max_compare_strings(engine: DuckDBBackend) -> None:
    _load_out_of_order(engine)
    assert engine.query("first") == [("g1", "apple"), ("g2", "mango")]
    assert engine.query("last") == [("g1", "zz"), ("g2", "zebra")]
    assert engine.query("kinds") == [("g1", 3), ("g2", 2)]
    proof = engine.explain("first", ("g1", "apple"))
    assert sorted(p.fact for p in proof.premises) == ['item("g1", "apple")', 'item("g1", "pear")', 'item("g1", "zz")']
    with pytest.raises(KeyError):
        engine.explain("first", ("g1", "pear"))  # holds for no group: pear is not the smallest


def test_unknown_symbols_match_nothing(engine: DuckDBBackend) -> None:
    _load_out_of_order(engine)
    assert engine.query("item", {1: "never-seen"}) == []
    assert engine.query("item", {0: "g1", 1: 3}) == []  # a number where a symbol belongs
    assert engine.answer(parse_query('item(G, "never-seen")')) == []
    with pytest.raises(KeyError):
        engine.explain("item", ("g1", "never-seen"))
    # Looking up an unknown symbol leaves no trace: the relation still has 5 facts.
    assert engine.count("item") == 5


def test_rule_constants_join_loaded_symbols(engine: DuckDBBackend) -> None:
    program = """
    .input link(a: symbol, kind: symbol)
    .decl kind(k: symbol)
    .decl fast(a: symbol)
    .decl named(a: symbol, k: symbol)
    kind("nvlink").
    fast(A) :- link(A, K), kind(K).
    named(A, "pcie") :- link(A, "pcie").
    """
    # Evaluating first gives the rule constants their ids; the facts then bring the same strings again.
    engine.load(parse_program(program, "t.dl"))
    engine.evaluate()
    assert engine.query("kind") == [("nvlink",)]
    engine.add_facts("link", [("g0", "nvlink"), ("g1", "pcie"), ("g2", "nvlink")])
    engine.evaluate()
    assert engine.query("fast") == [("g0",), ("g2",)]
    assert engine.query("named") == [("g1", "pcie")]
    assert engine.explain("fast", ("g2",)).premises[1].fact == 'kind("nvlink")'


def test_non_recursive_relation_with_several_rules_is_a_set(engine: DuckDBBackend) -> None:
    program = """
    .input link(a: symbol, b: symbol)
    .decl edge(a: symbol, b: symbol)
    edge(A, B) :- link(A, B).
    edge(B, A) :- link(A, B).
    """
    run(engine, program, {"link": pairs("a>b b>a b>c")})
    assert engine.query("edge") == pairs("a>b b>a b>c c>b")
    assert all(engine.explain("edge", r).stage == 1 for r in engine.query("edge"))


TRICKY = ["", "plain", " spaced ", "  ", '"quoted"', "it's", "back\\slash", "a,b;c", "\t", "#hash", "NULL", "null"]
TRICKY += ["\\N", "ü→", "🦆", "x\ufeffy", "\ufeffmid", "", "last"]


@pytest.mark.parametrize("chunk", [1, 3, 50_000])
def test_any_symbol_round_trips(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    import verifier.engine.duckdb_backend as backend

    monkeypatch.setattr(backend, "LOAD_CHUNK", chunk)
    # Text with line breaks, NUL, a leading byte-order mark or 3 MB in one symbol, next to ordinary ones.
    symbols = [*TRICKY, "line\nbreak", "carriage\rreturn", "delim\x01iter", "nul\x00inside", "x" * 3_000_000]
    symbols = ["\ufeffbom first", *symbols, ""]
    numbers = [-(2**63), 2**63 - 1, 0, -1, *range(len(symbols))]
    rows = list(zip(symbols, numbers, strict=False))
    engine = DuckDBBackend()
    engine.load(parse_program(".input w(s: symbol, n: number)\n"))
    engine.add_facts("w", rows)
    engine.evaluate()
    assert engine.query("w") == sort_rows(set(rows))
    for symbol in ("nul\x00inside", "line\nbreak", "\ufeffbom first"):
        assert engine.query("w", {0: symbol}) == [r for r in rows if r[0] == symbol]


def _dictionary(engine: DuckDBBackend) -> list[tuple[int, str]]:
    """The `_symbols` table once it holds every id's text, as a statement reading any id would have it."""
    engine._store_texts([sc.TextIds(None, None)], {})
    return engine._con.execute('SELECT id, s FROM "_symbols" ORDER BY id').fetchall()


def _table_ids(engine: DuckDBBackend, symbols: list[str]) -> dict[str, int]:
    """The symbols of `symbols` that the engine's lookup table gives an id, with it."""
    found = {s: engine._symbol_ids.get(s) for s in symbols}
    return {s: i for s, i in found.items() if i is not None}


@pytest.mark.parametrize("chunk", [1, 2, 50_000])
def test_symbols_get_ids_column_by_column_in_order_of_first_appearance(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    import verifier.engine.duckdb_backend as backend

    monkeypatch.setattr(backend, "LOAD_CHUNK", chunk)
    engine = DuckDBBackend()
    engine.load(parse_program(".input t(a: symbol, n: number, b: symbol)\n.input u(a: symbol)\n"))
    engine.add_facts("t", [("x", 1, "y"), ("z", 2, "x"), ("x", 3, "w"), ("v", 4, "y")])
    engine.add_facts("u", [("w",), ("new",), ("v",)])
    # Column a of t first (x z v), then column b (y w), then u's one new symbol.
    expected = list(enumerate(["x", "z", "v", "y", "w", "new"]))
    assert _dictionary(engine) == expected
    assert list(enumerate(engine._symbol_text)) == expected
    assert engine.query("t", {2: "x"}) == [("z", 2, "x")]


def test_a_column_that_looks_new_at_both_ends_still_gets_first_appearance_ids() -> None:
    # A chunk whose first and last symbols are new is tried as all new at once (a fleet's link
    # ids); a known symbol inside it or a repeated one sends it the ordinary way, with the same ids.
    engine = DuckDBBackend()
    engine.load(parse_program(".input u(a: symbol)\n.input v(a: symbol)\n.input w(a: symbol)\n"))
    engine.add_facts("u", [("x",)])
    engine.add_facts("v", [("p",), ("x",), ("q",)])  # x is known: p and q get ids 1 and 2
    engine.add_facts("w", [("r",), ("s",), ("x",), ("r",), ("t",)])  # x known, r twice: r, s, t get 3, 4, 5
    engine.add_facts("u", [("m",), ("n",)])  # all new: 6, 7
    expected = list(enumerate(["x", "p", "q", "r", "s", "t", "m", "n"]))
    assert _dictionary(engine) == expected
    assert list(enumerate(engine._symbol_text)) == expected
    assert engine.query("w") == [("r",), ("s",), ("t",), ("x",)]
    assert engine.query("u") == [("m",), ("n",), ("x",)]
    assert engine.query("v", {0: "x"}) == [("x",)] and engine.query("w", {0: "r"}) == [("r",)]
    engine.close()


@pytest.mark.parametrize("chunk", [1, 2, 50_000])
def test_refused_facts_leave_the_dictionary_as_it_was(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    import verifier.engine.duckdb_backend as backend

    monkeypatch.setattr(backend, "LOAD_CHUNK", chunk)
    engine = DuckDBBackend()
    engine.load(parse_program(".input w(a: symbol, b: symbol, n: number)\n"))
    engine.add_facts("w", [("a", "b", 1)])
    before = _dictionary(engine)
    bad_batches: list[tuple[list[Row], type[Exception], str]] = [
        # The bad row comes after new symbols have been looked up (in an earlier chunk or column).
        ([("c", "d", 1), ("e", "f", 2), ("g",)], FactError, "has 1 argument"),
        ([("c", "d", 1), ("e", "f", 2), ("g", 3, 3)], FactError, "must be a symbol"),
        ([("c", "d", 1), ("e", "f", 2), ("g", "h", 2**63)], FactError, "must be a number"),
        ([("c", "d", 1), ("e", "f", True)], FactError, "must be a number"),
        ([("c", "d", 1), ("e", "\ud800", 2)], EngineError, "loading the facts of w"),
    ]
    for rows, error, message in bad_batches:
        with pytest.raises(error, match=message):
            engine.add_facts("w", rows)
        assert _dictionary(engine) == before
        assert list(enumerate(engine._symbol_text)) == before
        assert _table_ids(engine, [*"abcdefgh", "\ud800"]) == {"a": 0, "b": 1}
    engine.add_facts("w", [("c", "a", 5)])
    engine.evaluate()
    assert engine.query("w") == [("a", "b", 1), ("c", "a", 5)]
    assert _dictionary(engine) == [*before, (2, "c")]


@pytest.mark.parametrize("chunk", [1, 2, 50_000])
def test_facts_stay_a_set_whichever_way_distinct_rows_are_recognised(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    import verifier.engine.duckdb_backend as backend

    monkeypatch.setattr(backend, "LOAD_CHUNK", chunk)
    engine = DuckDBBackend()
    engine.load(parse_program(".input t(a: symbol, b: symbol, n: number)\n.input u(a: symbol)\n"))
    engine.add_facts("u", [("p",), ("q",), ("r",)])
    # Duplicates with no column of distinct symbols: a DISTINCT is needed.
    engine.add_facts("t", [("p", "q", 1), ("p", "q", 1), ("q", "q", 2), ("p", "q", 1)])
    assert engine.count("t") == 2
    # Column b holds only new symbols, each once: these rows are new to the table.
    engine.add_facts("t", [("p", "s1", 1), ("p", "s2", 1)])
    # Known symbols, rows distinct in column a, some already stored: the EXCEPT is still needed.
    engine.add_facts("t", [("p", "q", 1), ("q", "s1", 1), ("r", "s2", 3)])
    engine.load(parse_program(".input t(a: symbol, b: symbol, n: number)\n.input v(a: symbol, b: symbol)\n"))
    engine.add_facts("v", [("a", "b"), ("c", "b")])
    # A first load whose column a repeats no (known) symbol: distinct rows, no DISTINCT needed.
    engine.add_facts("t", [("a", "c", 1), ("b", "c", 1), ("c", "c", 1)])
    engine.evaluate()
    assert engine.query("t") == [("a", "c", 1), ("b", "c", 1), ("c", "c", 1)]
    assert engine.query("v") == [("a", "b"), ("c", "b")]


def test_facts_stay_a_set_across_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = DuckDBBackend()
    engine.load(parse_program(".input t(a: symbol, b: symbol, n: number)\n"))
    engine.add_facts("t", [("p", "q", 1), ("p", "q", 1), ("q", "q", 2)])
    engine.add_facts("t", [("p", "s1", 1), ("p", "s2", 1)])
    engine.add_facts("t", [("p", "q", 1), ("q", "s1", 1), ("r", "s2", 3), ("r", "s2", 3)])
    engine.evaluate()
    expected = [("p", "q", 1), ("p", "s1", 1), ("p", "s2", 1), ("q", "q", 2), ("q", "s1", 1), ("r", "s2", 3)]
    assert engine.query("t") == expected


INCREMENTAL = """
.input edge(a: symbol, b: symbol)
.input node(n: symbol)
.input tag(n: symbol, t: symbol)
.decl reach(a: symbol, b: symbol)
reach(A, B) :- edge(A, B).
reach(A, C) :- reach(A, B), edge(B, C).
.decl unreached(n: symbol)
unreached(N) :- node(N), !reach("a", N).
.decl out_degree(a: symbol, n: number)
out_degree(A, count(B)) :- edge(A, B).
.decl tagged(n: symbol)
tagged(N) :- tag(N, _), node(N).
"""


def _all_relations(engine: DuckDBBackend) -> dict[str, list[tuple[str | int, ...]]]:
    return {r: engine.query(r) for r in ("reach", "unreached", "out_degree", "tagged")}


def test_re_evaluation_after_new_facts_equals_a_fresh_run() -> None:
    program = parse_program(INCREMENTAL, "inc.dl")
    step = DuckDBBackend()
    step.load(program)
    step.add_facts("node", [("a",), ("b",), ("c",), ("d",)])
    step.add_facts("edge", [("a", "b")])
    step.add_facts("tag", [("c", "x")])
    step.evaluate()
    assert step.query("unreached") == [("a",), ("c",), ("d",)]
    # New edges change reach, and through the negation unreached, and the aggregate;
    # tagged reads neither and keeps its tuples.
    step.add_facts("edge", [("b", "c"), ("c", "a")])
    step.evaluate()
    fresh = DuckDBBackend()
    fresh.load(program)
    fresh.add_facts("node", [("a",), ("b",), ("c",), ("d",)])
    fresh.add_facts("edge", [("a", "b"), ("b", "c"), ("c", "a")])
    fresh.add_facts("tag", [("c", "x")])
    fresh.evaluate()
    assert _all_relations(step) == _all_relations(fresh)
    # a -> b -> c -> a: a now reaches itself, so only d stays unreached.
    assert step.query("unreached") == [("d",)]
    assert step.query("out_degree") == [("a", 1), ("b", 1), ("c", 1)]
    assert step.query("tagged") == [("c",)]


def test_proofs_after_re_evaluation_stay_well_founded() -> None:
    program = parse_program(INCREMENTAL, "inc.dl")
    engine = DuckDBBackend()
    engine.load(program)
    engine.add_facts("node", [("a",), ("b",)])
    engine.add_facts("edge", [("a", "b")])
    engine.evaluate()
    engine.add_facts("edge", [("b", "a")])
    engine.evaluate()

    def check(proof: Proof) -> None:
        for premise in proof.premises:
            assert premise.stage < proof.stage
            check(premise)

    proof = engine.explain("reach", ("a", "a"))
    check(proof)
    assert proof.height() == 2  # reach(a,a) <- reach(a,b), edge(b,a); reach(a,b) <- edge(a,b)


def test_rules_over_empty_inputs_are_skipped_without_changing_answers() -> None:
    program = parse_program(
        """
.input missing(x: symbol)
.decl a(x: symbol)
.decl b(x: symbol)
.decl c(x: symbol)
.decl d(x: symbol)
a(X) :- missing(X).
b(X) :- a(X).
c("k").
d(X) :- c(X), !a(X).
""",
        "skip.dl",
    )
    engine = DuckDBBackend()
    engine.load(program)
    engine.evaluate()
    # a and b read nothing; the fact rule and the negation over the empty a still run.
    assert [engine.query(r) for r in ("a", "b", "c", "d")] == [[], [], [("k",)], [("k",)]]
    engine.add_facts("missing", [("k",)])
    engine.evaluate()
    assert [engine.query(r) for r in ("a", "b", "c", "d")] == [[("k",)], [("k",)], [("k",)], []]


def test_a_recursion_that_never_ends_stops_at_fixpoint_rounds(engine: Any) -> None:
    # n(0), n(1), ... : every round derives one new number, so the fixpoint never comes.
    text = ".decl n(x: number)\nn(0).\nn(Y) :- n(X), Y = X + 1.\n"
    with use_limits(Limits(fixpoint_rounds=50)), pytest.raises(TopologError) as caught:
        run(engine, text, {})
    (diagnostic,) = caught.value.diagnostics
    assert str(diagnostic.location) == "t.dl:1:1"
    assert diagnostic.message.startswith("the recursion of 'n' still derives new tuples after 50 rounds")


def test_fixpoint_rounds_counts_the_rounds_of_a_counter(engine: Any) -> None:
    # n(0) in round 1, then n(1), n(2), n(3) in rounds 2-4 (X < 3 stops the counter), and round
    # 5 finds nothing new: 5 rounds, so a limit of 5 passes and 4 stops.
    text = ".decl n(x: number)\nn(0).\nn(Y) :- n(X), X < 3, Y = X + 1.\n"
    with use_limits(Limits(fixpoint_rounds=5)):
        assert run(engine, text, {}).query("n") == [(0,), (1,), (2,), (3,)]
    with use_limits(Limits(fixpoint_rounds=4)), pytest.raises(TopologError):
        run(engine, text, {})


def test_a_recursion_over_stored_values_is_not_bounded_by_rounds(engine: Any) -> None:
    # a>b>c>d takes 4 rounds (links, two hops, a>d, nothing new), but reach only pairs up values
    # that exist, so it ends by itself and fixpoint_rounds does not apply: all 6 pairs.
    with use_limits(Limits(fixpoint_rounds=2)):
        assert run(engine, LINK + LINEAR, {"link": pairs("a>b b>c c>d")}).count("reach") == 6


def test_a_closure_runs_as_one_query_and_proofs_still_come_in_rounds() -> None:
    # DuckDB evaluates reach (linear, over stored values) with one WITH RECURSIVE query; the first
    # proof asked for derives everything again in rounds, so its stages are the rounds of the
    # memory engine: reach(a,d) <- reach(a,c), link(c,d) <- reach(a,b), link(b,c) <- link(a,b).
    facts = {"link": pairs("a>b b>c c>d")}
    fast, rounds = make_backend("duckdb"), make_backend("memory")
    try:
        run(fast, LINK + LINEAR, facts)
        run(rounds, LINK + LINEAR, facts)
        assert fast.query("reach") == rounds.query("reach") == pairs("a>b a>c a>d b>c b>d c>d")
        proof = fast.explain("reach", ("a", "d"))
        # The same proof up to stage numbers: the rounds take the stages kept free after the query's.
        assert _shape(proof) == _shape(rounds.explain("reach", ("a", "d")))
        assert proof.height() == 3
        check_stages(proof)
    finally:
        fast.close()
        rounds.close()


def test_a_closure_is_derived_again_in_rounds_only_when_a_proof_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two closures, reach over link and near over hop, a fact that reads neither and one that
    # reads near without fixing its first column. Each closure is derived again in rounds when a
    # proof first reads it, and only then: reach passes its first column through, so a proof of
    # reach(a, c) derives the tuples from a alone; far(r) reads near(X, r) for any X, which takes
    # the tuples from every X with a tuple ending at r (p>q>r, q>r: from p and q). The proofs
    # are the memory engine's (reach(a,c) <- reach(a,b), link(b,c) <- link(a,b): height 2), up
    # to stage numbers (DuckDB keeps stages free after each closure). Both as the UNION query, one
    # stage for all: chains (each source once) would be stored with their rounds' stages at once
    # (DuckDBBackend._chain), and no proof would derive them again.
    monkeypatch.setattr(DuckDBBackend, "_chain_step", lambda *_: None)
    text = (
        LINK
        + LINEAR
        + ".input hop(src: symbol, dst: symbol)\n.decl near(src: symbol, dst: symbol)\n"
        + "near(X, Y) :- hop(X, Y).\nnear(X, Y) :- near(X, Z), hop(Z, Y).\n"
        + ".input other(x: symbol)\n.decl flag(x: symbol)\nflag(X) :- other(X).\n"
        + ".decl far(y: symbol)\nfar(Y) :- other(X), near(P, Y), X != P.\n"
    )
    facts: dict[str, list[Row]] = {"link": pairs("a>b b>c c>d"), "hop": pairs("p>q q>r s>t"), "other": [("z",)]}
    fast, rounds = make_backend("duckdb"), make_backend("memory")
    try:
        run(fast, text, facts)
        run(rounds, text, facts)
        assert isinstance(fast, DuckDBBackend) and set(fast._coarse) == {"reach", "near"}
        assert _shape(fast.explain("flag", ("z",))) == _shape(rounds.explain("flag", ("z",)))
        assert set(fast._coarse) == {"reach", "near"}  # a proof that reads no closure derives none
        proof = fast.explain("reach", ("a", "c"))
        assert _shape(proof) == _shape(rounds.explain("reach", ("a", "c"))) and proof.height() == 2
        check_stages(proof)
        assert fast._rounds_for == {"reach": {fast._encode("a")}}  # reach(b, _) is not needed yet
        assert _shape(fast.explain("reach", ("b", "d"))) == _shape(rounds.explain("reach", ("b", "d")))
        assert fast._rounds_for == {"reach": {fast._encode("a"), fast._encode("b")}}
        far = fast.explain("far", ("r",))
        # far(r) <- other(z), near(q, r) <- hop(q, r): the earliest premise, near(q, r) of round 1.
        assert _shape(far) == _shape(rounds.explain("far", ("r",))) and far.height() == 2
        check_stages(far)
        # near's tuples from p and q derived again (near(p, q), near(p, r), near(q, r)); near(s, t),
        # which no proof read, keeps the stage of the one query
        assert set(fast._coarse) == {"reach", "near"}
        assert fast._rounds_for["near"] == {fast._encode("p"), fast._encode("q")}
    finally:
        fast.close()
        rounds.close()


def test_duckdb_draws_no_progress_bar_on_stdout() -> None:
    # DuckDB prints a progress bar on stdout for any statement over 2 s (a fleet's biggest join),
    # which would land inside a report written to stdout: the engine turns it off.
    engine = DuckDBBackend()
    engine.load(parse_program(LINK + LINEAR, "t.dl"))
    setting = engine._con.execute("SELECT current_setting('enable_progress_bar')").fetchone()
    assert setting == (False,)
    engine.close()


# -- stamped rows (verifier.core.stamped_rows) ---------------------------------------------

STAMPED_PROGRAM = ".input link(id: symbol, a: symbol, b: symbol, mbps: number)\n.input attr(id: symbol, key: symbol)\n"


def _stamped() -> tuple[StampedRows, StampedRows]:
    # Two nodes; slots 0-1 are each node's GPU names, slot 2 its one link id. The blocks share one
    # list of names, as a plan's link and link_attr blocks do.
    names: list[Sequence[str]] = [["n0/g0", "n0/g1", "n0/l"], ["n1/g0", "n1/g1", "n1/l"]]
    links = StampBlock(((2,), (0,), (1,), None), (None, None, None, (900,)), names)
    attrs = StampBlock(((2, 2), None), (None, ("lanes", "count")), names)
    # A plain row beside them that names a GPU of n1 (as a fabric cable ends on a stamped node's NIC).
    return StampedRows([("cable", "n1/g0", "sw", 50)], [links]), StampedRows([], [attrs])


def test_stamped_rows_load_as_the_rows_they_stand_for(engine: DuckDBBackend) -> None:
    link, attr = _stamped()
    run(engine, STAMPED_PROGRAM, {"link": link, "attr": attr})
    # Per node, one link g0 -> g1 of 900 and its two attributes; plus the plain cable.
    assert engine.query("link") == [
        ("cable", "n1/g0", "sw", 50),
        ("n0/l", "n0/g0", "n0/g1", 900),
        ("n1/l", "n1/g0", "n1/g1", 900),
    ]
    assert engine.query("attr") == [("n0/l", "count"), ("n0/l", "lanes"), ("n1/l", "count"), ("n1/l", "lanes")]
    assert engine.query("link", {1: "n1/g0"}) == [("cable", "n1/g0", "sw", 50), ("n1/l", "n1/g0", "n1/g1", 900)]


def test_refused_stamped_rows_leave_the_dictionary_as_it_was() -> None:
    engine = DuckDBBackend()
    engine.load(parse_program(STAMPED_PROGRAM))
    engine.add_facts("attr", [("x", "y")])
    before = _dictionary(engine)
    names: list[Sequence[str]] = [["a", "b", "c"]]
    bad = [
        StampBlock(((2,), (0,), (1,), None), (None, None, None, ("900",)), names),  # mbps a string
        StampBlock(((2,), (0,), None, (1,)), (None, None, ("z",), None), names),  # names in a number column
        StampBlock(((2,), (0,), (1,)), (None, None, None), names),  # three columns for four
        StampBlock(
            ((2,), (0,), (1,), None),
            (None, None, None, (1,)),
            [["a", "b", "c"], ["d", 5, "f"]],  # type: ignore[list-item]  # a name a number: bad input on purpose
        ),
    ]
    for block in bad:
        with pytest.raises(FactError):
            engine.add_facts("link", StampedRows([], [block]))
        assert _dictionary(engine) == before
        assert _table_ids(engine, ["x", "y", "a", "b", "c", "d", "f", "z"]) == {"x": 0, "y": 1}
    good = StampBlock(((2,), (0,), (1,), None), (None, None, None, (7,)), names)
    engine.add_facts("link", StampedRows([], [good]))
    engine.evaluate()
    assert engine.query("link") == [("c", "a", "b", 7)]
    engine.close()


def test_stamped_names_load_right_whichever_slots_are_new(engine: DuckDBBackend) -> None:
    # Slots are encoded in groups by whether the first node's name there is new: here slot 0 is
    # seen for node 0 only, slot 1 new for node 0 only, slot 2 new everywhere, so two groups mix.
    names: list[Sequence[str]] = [["s0", "m0", "l0"], ["n1", "s1", "l1"], ["n2", "s2", "l2"]]
    links = StampBlock(((2,), (0,), (1,), None), (None, None, None, (3,)), names)
    seen: list[Row] = [("p", "s0", "s1", 1), ("q", "s2", "x", 2)]
    run(engine, STAMPED_PROGRAM, {"link": StampedRows(seen, [links])})
    # Each node's row is (its slot 2, its slot 0, its slot 1, 3), read off `names`.
    assert engine.query("link") == [
        ("l0", "s0", "m0", 3),
        ("l1", "n1", "s1", 3),
        ("l2", "n2", "s2", 3),
        ("p", "s0", "s1", 1),
        ("q", "s2", "x", 2),
    ]
    assert engine.query("link", {1: "n2"}) == [("l2", "n2", "s2", 3)]
    assert engine.query("link", {2: "s1"}) == [("l1", "n1", "s1", 3), ("p", "s0", "s1", 1)]


def test_stamped_rows_with_an_empty_block_load_their_other_rows(engine: DuckDBBackend) -> None:
    # A block with no plan rows, and one with no nodes, hold no row: the plain row alone is loaded.
    empty_plan = StampBlock(((), (), (), None), (None, None, None, ()), [["a", "b"]])
    no_nodes = StampBlock(((0,), (0,), (1,), None), (None, None, None, (1,)), [])
    run(engine, STAMPED_PROGRAM, {"link": StampedRows([("l", "a", "b", 5)], [empty_plan, no_nodes])})
    assert engine.query("link") == [("l", "a", "b", 5)]


TEXTS_READ = """
.input name(x: symbol, who: symbol)
.input pick(g: symbol, x: symbol)
.decl first(g: symbol, x: symbol)
first(G, min(X)) :- pick(G, X).
.decl known(x: symbol)
known(X) :- name(X, _).
"""


def _stored(engine: DuckDBBackend) -> list[str]:
    """The texts in the dictionary table, each checked to be its id's."""
    rows = engine._con.execute('SELECT id, s FROM "_symbols"').fetchall()
    assert len({i for i, _ in rows}) == len(rows) and all(engine._symbol_text[i] == s for i, s in rows)
    return sorted(s for _, s in rows)


def test_the_dictionary_table_gets_only_the_texts_a_statement_reads() -> None:
    # name holds n0..n99 (each by "w"), pick (g, b), (g, a), (h, c): 105 symbols. Only `first`
    # orders by text, reading pick's second column: "b", "a", "c" are the texts stored.
    engine = DuckDBBackend()
    try:
        engine.load(parse_program(TEXTS_READ))
        engine.add_facts("name", [(f"n{i}", "w") for i in range(100)])
        engine.add_facts("pick", [("g", "b"), ("g", "a"), ("h", "c")])
        engine.evaluate()
        assert engine.query("first") == [("g", "a"), ("h", "c")]
        assert len(engine.query("known")) == 100
        assert _stored(engine) == ["a", "b", "c"]
        # Only the ids of the rows the body's other conditions keep: of the names, "n7" (above a, b, c).
        query = parse_query('name(X, _), pick(G, Y), X = "n7", X > Y')
        assert engine.answer(query) == [("n7", "g", "a"), ("n7", "g", "b"), ("n7", "h", "c")]
        assert _stored(engine) == ["a", "b", "c", "n7"]
        # A query comparing the names with "n5" (a variable's, so joined too): their texts are read.
        # By hand: the names below "n5" as text are n0..n4 and n10..n49, 45 of them.
        assert len(engine.answer(parse_query('name(X, _), Y = "n5", X < Y'))) == 45
        assert _stored(engine) == sorted(["a", "b", "c", *(f"n{i}" for i in range(100))])
    finally:
        engine.close()


def test_past_text_rows_the_texts_of_the_columns_read_are_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    import verifier.engine.duckdb_backend as backend

    # At most 10 rows are read for the ids: X > Y pairs every name with every pick (300 rows), so
    # the texts of the two columns it reads are stored: name's first (n0..n99) and pick's second
    # (a, b, c), not "w", "g" or "h". By hand: every name is above "a", "b" and "c" as text.
    monkeypatch.setattr(backend, "TEXT_ROWS", 10)
    engine = DuckDBBackend()
    try:
        engine.load(parse_program(TEXTS_READ))
        engine.add_facts("name", [(f"n{i}", "w") for i in range(100)])
        engine.add_facts("pick", [("g", "b"), ("g", "a"), ("h", "c")])
        engine.evaluate()
        assert _stored(engine) == ["a", "b", "c"]  # first's 3 rows, within the 10
        assert engine.holds(parse_query("name(X, _), pick(G, Y), X > Y"))
        assert _stored(engine) == sorted(["a", "b", "c", *(f"n{i}" for i in range(100))])
        # A variable assigned a constant reads no column: past 10 rows, every text is stored.
        assert len(engine.answer(parse_query('name(X, W), Y = "n5", X < Y'))) == 45
        assert _stored(engine) == sorted(engine._symbol_text)
    finally:
        engine.close()


def test_rounds_ordering_by_text_store_the_texts_of_their_rows() -> None:
    # up and down recurse through each other, so they run in semi-naive rounds, whose atoms read
    # the last round's rows as subqueries: the texts their rows hold are stored, not "zz" (in no
    # edge). By hand: a<b, b<c, c<d hold, d<a does not; up adds a<c, b<d, then a<d through c.
    program = (
        ".input edge(a: symbol, b: symbol)\n.input other(x: symbol)\n"
        ".decl up(a: symbol, b: symbol)\n.decl down(a: symbol, b: symbol)\n"
        "up(A, B) :- edge(A, B), A < B.\nup(A, C) :- down(A, B), edge(B, C), B < C.\ndown(A, B) :- up(A, B).\n"
    )
    engine = DuckDBBackend()
    try:
        engine.load(parse_program(program))
        engine.add_facts("other", [("zz",)])
        engine.add_facts("edge", pairs("a>b b>c c>d d>a"))
        engine.evaluate()
        assert engine.query("up") == pairs("a>b a>c a>d b>c b>d c>d")
        assert _stored(engine) == ["a", "b", "c", "d"]
    finally:
        engine.close()


def test_a_recursive_query_ordering_by_text_stores_every_text() -> None:
    # `up` runs as one recursive query, whose step reads the query's own rows: no other statement
    # can, so every symbol's text is stored (also "zz", in no edge). By hand: a<b and b<c hold,
    # c<a does not: up holds (a, b), (b, c), and (a, c) through b.
    program = (
        ".input edge(a: symbol, b: symbol)\n.input other(x: symbol)\n.decl up(a: symbol, b: symbol)\n"
        "up(A, B) :- edge(A, B), A < B.\nup(A, C) :- up(A, B), edge(B, C), B < C.\n"
    )
    engine = DuckDBBackend()
    try:
        engine.load(parse_program(program))
        engine.add_facts("other", [("zz",)])
        engine.add_facts("edge", pairs("a>b b>c c>a"))
        engine.evaluate()
        assert engine.query("up") == pairs("a>b a>c b>c")
        assert _stored(engine) == ["a", "b", "c", "zz"]
    finally:
        engine.close()


def test_a_lone_surrogate_in_a_query_constant_is_refused() -> None:
    # DuckDB stores text as UTF-8, which a lone surrogate is not: refused as facts are (above).
    engine = DuckDBBackend()
    try:
        engine.load(parse_program(TEXTS_READ))
        engine.add_facts("pick", [("g", "a")])
        engine.evaluate()
        with pytest.raises(EngineError, match="lone surrogate '\\\\ud800'"):
            engine.answer(parse_query('pick(G, X), X < "\ud800"'))
        assert engine.answer(parse_query('pick(G, X), X < "b"')) == [("g", "a")]
    finally:
        engine.close()
