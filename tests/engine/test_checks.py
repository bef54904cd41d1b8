"""Static program checks (declarations, safety, aggregates, types, strata) and the file loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import FactError, ProgramError
from verifier.engine.checks import check_program, check_query
from verifier.engine.loader import load_program, parse_facts
from verifier.engine.parser import parse_program, parse_query

# Rules in the tests below start on line 6.
SCHEMA = """\
.input link(a: symbol, b: symbol, gbps: number)
.input gpu(g: symbol)
.decl reach(a: symbol, b: symbol)
.decl total(a: symbol, n: number)
.decl a(x: symbol)
"""


def problems(rules: str, schema: str = SCHEMA) -> list[str]:
    with pytest.raises(ProgramError) as info:
        check_program(parse_program(schema + rules, "t.dl"))
    return [str(d) for d in info.value.diagnostics]


def passes(rules: str, schema: str = SCHEMA) -> None:
    check_program(parse_program(schema + rules, "t.dl"))


def query_problems(text: str) -> list[str]:
    with pytest.raises(ProgramError) as info:
        check_query(parse_query(text), parse_program(SCHEMA, "t.dl"))
    return [str(d) for d in info.value.diagnostics]


# ---------------------------------------------------------------- programs that pass


def test_realistic_program_passes() -> None:
    passes(
        """\
.decl bottleneck(a: symbol, b: symbol, w: number)
.decl isolated(g: symbol)
.decl degree(g: symbol, n: number)
.decl fast(a: symbol)
reach(X, Y) :- link(X, Y, _).
reach(X, Z) :- reach(X, Y), link(Y, Z, _).
bottleneck(X, Y, min(W)) :- link(X, Y, G), W = G * 8 / 10 + 0.
isolated(G) :- gpu(G), !reach(G, _).
degree(G, count(Y)) :- gpu(G), link(G, Y, _).
total(X, sum(G)) :- link(X, _, G), G != 0, G >= -1.
fast(X) :- link(X, Y, G), Y != "n0/cpu0", X = Y, G > 2 * 100.
a("n0/gpu0").
"""
    )


def test_negation_across_strata_passes() -> None:
    passes("reach(X, Y) :- link(X, Y, _).\na(X) :- gpu(X), !reach(X, X).\n")


def test_assignment_chain_in_any_order_passes() -> None:
    passes("total(X, C) :- C = B + 1, B = G * 2, link(X, _, G).\n")


def test_declarations_alone_pass() -> None:
    check_program(parse_program(SCHEMA, "t.dl"))  # raises on any problem


# ---------------------------------------------------------------- declarations and relation use


def test_undeclared_relation_with_did_you_mean() -> None:
    assert problems("reach(X, Y) :- lnk(X, Y, _).\n") == [
        "t.dl:6:16: relation 'lnk' is not declared (did you mean 'link'?); "
        "declare it with .decl (derived) or .input (facts from the inventory)"
    ]


def test_undeclared_relation_in_head_and_negation_without_suggestion() -> None:
    assert problems("zzz(X) :- gpu(X), !qqq(X).\n") == [
        "t.dl:6:1: relation 'zzz' is not declared; declare it with .decl (derived) or .input "
        "(facts from the inventory)",
        "t.dl:6:20: relation 'qqq' is not declared; declare it with .decl (derived) or .input "
        "(facts from the inventory)",
    ]


def test_wrong_arity() -> None:
    assert problems("reach(X, Y) :- link(X, Y).\n") == [
        "t.dl:6:16: relation 'link' is declared with 3 arguments (a, b, gbps) but used here with 2"
    ]


def test_wrong_arity_in_head() -> None:
    assert problems("a(X, Y) :- link(X, Y, _).\n") == [
        "t.dl:6:1: relation 'a' is declared with 1 argument (x) but used here with 2"
    ]


def test_relation_declared_twice() -> None:
    assert problems(".decl reach(x: symbol, y: symbol)\n") == [
        "t.dl:6:1: relation 'reach' is declared twice (first at t.dl:3:1); declare each relation once"
    ]


def test_unknown_column_type_and_repeated_column() -> None:
    assert problems(".decl b(x: string, x: number)\n") == [
        "t.dl:6:9: column 'x' of 'b' has unknown type 'string'; expected symbol or number",
        "t.dl:6:20: column 'x' appears twice in the declaration of 'b'; column names must differ",
    ]


# ---------------------------------------------------------------- input relations


def test_rule_deriving_an_input_relation() -> None:
    assert problems("gpu(X) :- link(X, _, _).\n") == [
        "t.dl:6:1: 'gpu' is an input relation (.input), so no rule may derive it; its facts come only "
        "from the inventory loader. Declare the head with .decl instead"
    ]


def test_inline_fact_for_an_input_relation() -> None:
    assert problems('gpu("g0").\n') == [
        "t.dl:6:1: inline fact for input relation 'gpu'; input relations get facts only from the "
        "inventory loader or a facts file, not a rule file"
    ]


# ---------------------------------------------------------------- safety


def test_unbound_head_variable() -> None:
    assert problems("reach(X, Y) :- gpu(X).\n") == [
        "t.dl:6:10: variable 'Y' in the head of 'reach' is not bound; expected it in a positive body "
        "atom or an assignment"
    ]


def test_variable_in_fact() -> None:
    assert problems("a(X).\n") == ["t.dl:6:3: fact 'a' has variable 'X'; a fact's arguments must be constants"]


def test_variable_only_in_negation_is_unbound() -> None:
    assert problems("a(X) :- gpu(X), !link(X, Y, _).\n") == [
        "t.dl:6:26: variable 'Y' in negated atom '!link(X, Y, _)' is not bound; negation only filters, "
        "so bind 'Y' in a positive body atom first"
    ]


def test_variable_only_in_comparison_is_unbound() -> None:
    assert problems("total(X, G) :- link(X, _, G), G < L.\n") == [
        "t.dl:6:35: variable 'L' in comparison 'G < L' is not bound; bind it in a positive body atom "
        "or an assignment (V = expression) first"
    ]


def test_assignment_from_unbound_variables_binds_nothing() -> None:
    assert problems("total(X, T) :- gpu(X), T = A + 1.\n") == [
        "t.dl:6:10: variable 'T' in the head of 'total' is not bound; expected it in a positive body "
        "atom or an assignment",
        "t.dl:6:24: variable 'T' in comparison 'T = (A + 1)' is not bound; bind it in a positive body "
        "atom or an assignment (V = expression) first",
        "t.dl:6:28: variable 'A' in comparison 'T = (A + 1)' is not bound; bind it in a positive body "
        "atom or an assignment (V = expression) first",
    ]


def test_wildcard_in_head() -> None:
    assert problems("reach(X, _) :- gpu(X).\n") == [
        "t.dl:6:10: '_' is not allowed in the head of 'reach'; every head argument needs a value from the body"
    ]


def test_wildcard_in_comparison() -> None:
    assert problems("a(X) :- gpu(X), X != _.\n") == [
        "t.dl:6:22: '_' is not allowed in comparison 'X != _'; compare a named variable or a constant"
    ]


def test_arithmetic_in_body_atom() -> None:
    assert problems("a(X) :- link(X, _, G), link(X, _, G * 2).\n") == [
        "t.dl:6:35: arithmetic 'G * 2' is not allowed as an argument of 'link'; compute it with an "
        "assignment (T = G * 2) and pass T"
    ]


def test_arithmetic_in_head_and_comparison_is_allowed() -> None:
    passes("total(X, G * 2 - 1) :- link(X, _, G), G * 3 > G + 1.\n")


# ---------------------------------------------------------------- aggregates


def test_two_aggregates_in_one_head() -> None:
    schema = SCHEMA + ".decl stats(a: symbol, n: number, m: number)\n"
    assert problems("stats(X, count(Y), sum(G)) :- link(X, Y, G).\n", schema=schema)[0] == (
        "t.dl:7:20: the head of 'stats' has 2 aggregates; a head may have at most one, so split it "
        "into one rule per aggregate"
    )


def test_sum_of_a_symbol() -> None:
    assert problems("total(X, sum(Y)) :- link(X, Y, _).\n") == [
        "t.dl:6:14: sum needs a number argument, but 'Y' (column 'b' of 'link' at t.dl:6:29) is a symbol"
    ]


@pytest.mark.parametrize("func", ["min", "max"])
def test_min_max_keep_their_argument_type(func: str) -> None:
    passes(f"reach(X, {func}(Y)) :- link(X, Y, _).\n")
    assert problems(f"total(X, {func}(Y)) :- link(X, Y, _).\n") == [
        f"t.dl:6:10: head argument 2 of 'total' ({func}(Y)) is a symbol but column 'n' is declared number"
    ]


def test_count_takes_symbols() -> None:
    passes("total(X, count(Y)) :- link(X, Y, _).\n")


def test_aggregate_of_unbound_variable() -> None:
    assert problems("total(X, count(Y)) :- gpu(X).\n") == [
        "t.dl:6:16: variable 'Y' aggregated by count(Y) is not bound; expected it in a positive body "
        "atom or an assignment"
    ]


def test_aggregate_of_wildcard() -> None:
    assert problems("total(X, count(_)) :- gpu(X).\n") == [
        "t.dl:6:16: '_' is not allowed in the head of 'total'; every head argument needs a value from the body"
    ]


def test_aggregate_result_must_fit_a_number_column() -> None:
    assert problems("reach(X, count(Y)) :- link(X, Y, _).\n") == [
        "t.dl:6:10: head argument 2 of 'reach' (count(Y)) is a number but column 'b' is declared symbol"
    ]


# ---------------------------------------------------------------- types


def test_variable_used_as_symbol_and_number() -> None:
    assert problems("a(Y) :- link(_, Y, _), gpu(Y), link(_, _, Y).\n") == [
        "t.dl:6:43: variable 'Y' is used as a number here (column 'gbps' of 'link') but as a symbol at "
        "t.dl:6:17 (column 'b' of 'link'); a variable holds values of one type"
    ]


def test_string_in_number_column_and_integer_in_symbol_column() -> None:
    assert problems('a(X) :- link(X, 7, "fast").\n') == [
        "t.dl:6:17: integer 7 in column 'b' of 'link', which is declared symbol; expected a quoted string",
        "t.dl:6:20: string \"fast\" in column 'gbps' of 'link', which is declared number; expected an integer",
    ]


def test_constant_in_head_of_wrong_type() -> None:
    assert problems("total(1, 2) :- gpu(_).\n") == [
        "t.dl:6:7: integer 1 in column 'a' of 'total', which is declared symbol; expected a quoted string"
    ]


def test_arithmetic_on_a_symbol() -> None:
    assert problems("total(X, N) :- link(X, _, G), N = X + G.\n") == [
        "t.dl:6:35: arithmetic '+' needs numbers, but 'X' (column 'a' of 'link' at t.dl:6:21) is a symbol"
    ]


def test_ordering_comparison_on_symbols_is_lexicographic() -> None:
    passes('a(X) :- gpu(X), X < "m".\n')
    assert problems("a(X) :- link(X, _, G), X < G.\n") == [
        "t.dl:6:24: '<' compares a symbol (X) with a number (G) in 'X < G'; both sides must have one type"
    ]


def test_equality_between_types() -> None:
    assert problems("a(X) :- link(X, Y, G), Y = G.\n") == [
        "t.dl:6:24: '=' compares a symbol (Y) with a number (G) in 'Y = G'; both sides must have one type"
    ]


def test_head_variable_type_mismatch_through_assignment() -> None:
    assert problems("reach(X, T) :- link(X, _, G), T = G + 1.\n") == [
        "t.dl:6:10: head argument 2 of 'reach' (T) is a number but column 'b' is declared symbol"
    ]


def test_assignment_carries_symbol_type() -> None:
    passes('reach(X, Y) :- gpu(X), Y = "n0/nic0".\n')


# ---------------------------------------------------------------- stratification


def test_negation_in_cycle_names_the_cycle() -> None:
    schema = SCHEMA + ".decl b(x: symbol)\n"
    assert problems("a(X) :- gpu(X), !b(X).\nb(X) :- a(X).\n", schema=schema) == [
        "t.dl:7:17: relation 'a' depends negatively on 'b' inside the recursive cycle a -> b -> a; "
        "negation and aggregates must not be recursive"
    ]


def test_longer_cycle_is_named_in_dependency_order() -> None:
    schema = SCHEMA + ".decl b(x: symbol)\n.decl c(x: symbol)\n"
    rules = "a(X) :- gpu(X), !b(X).\nb(X) :- c(X).\nc(X) :- a(X).\n"
    assert problems(rules, schema=schema) == [
        "t.dl:8:17: relation 'a' depends negatively on 'b' inside the recursive cycle a -> b -> c -> a; "
        "negation and aggregates must not be recursive"
    ]


def test_self_negation() -> None:
    assert problems("a(X) :- gpu(X), !a(X).\n") == [
        "t.dl:6:17: relation 'a' depends negatively on 'a' inside the recursive cycle a -> a; "
        "negation and aggregates must not be recursive"
    ]


def test_recursive_aggregate() -> None:
    assert problems("total(X, sum(N)) :- total(X, N).\ntotal(X, 1) :- gpu(X).\n") == [
        "t.dl:6:21: relation 'total' aggregates over 'total' inside the recursive cycle total -> total; "
        "negation and aggregates must not be recursive"
    ]


# ---------------------------------------------------------------- every problem at once


def test_all_problems_are_reported_together_sorted() -> None:
    found = problems('reach(X, Y) :- lnk(X, Y).\na(Z) :- gpu(X).\ngpu("g").\n')
    assert [f.split(": ")[0] for f in found] == ["t.dl:6:16", "t.dl:7:3", "t.dl:8:1"]


# ---------------------------------------------------------------- queries


def test_valid_query() -> None:
    check_query(parse_query('link(A, B, G), G < 400, !gpu(B), A != "x"'), parse_program(SCHEMA, "t.dl"))


def test_query_problems_have_columns() -> None:
    assert query_problems("lnk(A), link(A, B, G), !reach(A, C), G < D, E = A + 1") == [
        "<query>:1:1: relation 'lnk' is not declared (did you mean 'link'?); declare it with .decl "
        "(derived) or .input (facts from the inventory)",
        "<query>:1:34: variable 'C' in negated atom '!reach(A, C)' is not bound; negation only filters, "
        "so bind 'C' in a positive body atom first",
        "<query>:1:42: variable 'D' in comparison 'G < D' is not bound; bind it in a positive body atom "
        "or an assignment (V = expression) first",
        "<query>:1:49: arithmetic '+' needs numbers, but 'A' (column 'a' of 'link' at <query>:1:14) is a symbol",
    ]


def test_query_types_and_arithmetic_in_atom() -> None:
    assert query_problems('link(A, "b", G + 1), gpu(A), link(_, _, A)') == [
        "<query>:1:14: arithmetic 'G + 1' is not allowed as an argument of 'link'; compute it with an "
        "assignment (T = G + 1) and pass T",
        "<query>:1:41: variable 'A' is used as a number here (column 'gbps' of 'link') but as a symbol at "
        "<query>:1:6 (column 'a' of 'link'); a variable holds values of one type",
    ]


# ---------------------------------------------------------------- loader


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_load_directory_recursively_sorted(tmp_path: Path) -> None:
    write(tmp_path / "schema.dl", SCHEMA)
    write(tmp_path / "z" / "b.dl", "a(X) :- gpu(X).\n")
    write(tmp_path / "m" / "a.dl", "reach(X, Y) :- link(X, Y, _).\n")
    write(tmp_path / "notes.txt", "not datalog")
    program = load_program([tmp_path])
    assert [str(r.loc) for r in program.rules] == [
        f"{tmp_path / 'm' / 'a.dl'}:1:1",
        f"{tmp_path / 'z' / 'b.dl'}:1:1",
    ]
    assert len(program.declarations) == 5


def test_load_same_file_twice_counts_once(tmp_path: Path) -> None:
    schema = write(tmp_path / "schema.dl", SCHEMA)
    program = load_program([schema, tmp_path])
    assert len(program.declarations) == 5


def test_load_collects_errors_from_every_file(tmp_path: Path) -> None:
    one = write(tmp_path / "one.dl", "a(X :- b.\n")
    two = write(tmp_path / "two.dl", "ok(X) :- b(X).\nc(X) :- , d.\n")
    missing = tmp_path / "missing.dl"
    with pytest.raises(ProgramError) as info:
        load_program([one, two, missing])
    assert [str(d.location) for d in info.value.diagnostics] == [str(missing), f"{one}:1:5", f"{two}:2:9"]
    assert info.value.diagnostics[0].message == "no such file or directory"


def test_load_checks_the_merged_program(tmp_path: Path) -> None:
    write(tmp_path / "a_schema.dl", SCHEMA)
    rules = write(tmp_path / "b_rules.dl", "reach(X, Y) :- lnk(X, Y, _).\na(Q) :- gpu(X).\n")
    with pytest.raises(ProgramError) as info:
        load_program([tmp_path])
    assert [str(d.location) for d in info.value.diagnostics] == [f"{rules}:1:16", f"{rules}:2:3"]


def test_load_non_utf8_file(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.dl", b'# ok\na("caf\xe9").\n')
    with pytest.raises(ProgramError) as info:
        load_program([bad])
    assert [str(d) for d in info.value.diagnostics] == [
        f"{bad}:2:7: the file is not UTF-8 text (byte 0xe9); save it as UTF-8"
    ]


def test_load_empty_directory(tmp_path: Path) -> None:
    with pytest.raises(ProgramError, match=r"holds no \.dl rule files"):
        load_program([tmp_path])


# ---------------------------------------------------------------- facts files


def test_parse_facts_rows_per_relation() -> None:
    text = '# inventory\nlink("a", "b", 400).\ngpu("a").\nlink("b", "a", -1). // back\n'
    assert parse_facts(text, "f.facts") == {
        "link": [("a", "b", 400), ("b", "a", -1)],
        "gpu": [("a",)],
    }


def test_parse_facts_rejects_non_ground_statements() -> None:
    text = 'link(X, "b", 1).\nreach(X, Y) :- link(X, Y, _).\n.decl q(x: symbol)\ngpu(1 + 2).\n'
    with pytest.raises(FactError) as info:
        parse_facts(text, "f.facts")
    assert [str(d.location) for d in info.value.diagnostics] == [
        "f.facts:1:6",
        "f.facts:2:1",
        "f.facts:3:1",
        "f.facts:4:5",
    ]
    assert info.value.diagnostics[0].message == (
        "argument 'X' of fact 'link' is not a constant; expected a quoted string or an integer"
    )


def test_parse_facts_against_declarations() -> None:
    program = parse_program(SCHEMA, "t.dl")
    text = 'lnk("a").\nlink("a", "b").\nreach("a", "b").\nlink("a", 3, "x").\ngpu("ok").\n'
    with pytest.raises(FactError) as info:
        parse_facts(text, "f.facts", program)
    assert [str(d) for d in info.value.diagnostics] == [
        "f.facts:1:1: relation 'lnk' is not declared (did you mean 'link'?); declare it with .decl "
        "(derived) or .input (facts from the inventory)",
        "f.facts:2:1: relation 'link' is declared with 3 arguments (a, b, gbps) but used here with 2",
        "f.facts:3:1: 'reach' is a derived relation (.decl), so rules compute its facts; a facts file may "
        "only hold facts of .input relations",
        "f.facts:4:11: integer 3 in column 'b' of 'link', which is declared symbol; expected a quoted string",
        "f.facts:4:14: string \"x\" in column 'gbps' of 'link', which is declared number; expected an integer",
    ]


def test_parse_facts_syntax_error_is_a_program_error() -> None:
    with pytest.raises(ProgramError, match=r"f.facts:1:"):
        parse_facts('link("a"\n', "f.facts")
