"""The Datalog parser: every grammar construct, comments and docs, errors with line:col."""

from __future__ import annotations

import pytest

from verifier.core.errors import ProgramError, SourceLocation
from verifier.engine.ast import (
    Aggregate,
    Atom,
    BinOp,
    Column,
    Comparison,
    Const,
    Head,
    Negation,
    Rule,
    Var,
    Wildcard,
)
from verifier.engine.parser import parse_program, parse_query


def one_rule(text: str) -> Rule:
    program = parse_program(text, "t.dl")
    assert len(program.rules) == 1
    return program.rules[0]


def syntax_errors(text: str) -> list[str]:
    with pytest.raises(ProgramError) as info:
        parse_program(text, "t.dl")
    return [str(d) for d in info.value.diagnostics]


X, Y, Z, G = Var("X"), Var("Y"), Var("Z"), Var("G")


# ---------------------------------------------------------------- declarations


def test_input_and_derived_declarations() -> None:
    text = ".input link(a: symbol, b: symbol, gbps: number)\n.decl reach(a: symbol, b: symbol)\n"
    program = parse_program(text)
    link, reach = program.declarations
    assert (link.name, link.is_input, link.arity) == ("link", True, 3)
    assert [(c.name, c.type) for c in link.columns] == [("a", "symbol"), ("b", "symbol"), ("gbps", "number")]
    assert (reach.name, reach.is_input, reach.arity) == ("reach", False, 2)
    assert program.rules == ()


def test_declaration_allows_trailing_comma_and_no_columns() -> None:
    program = parse_program(".decl a(x: symbol,)\n.decl flag()\n")
    assert [d.arity for d in program.declarations] == [1, 0]


def test_declaration_doc_from_comment_lines_above() -> None:
    text = (
        "# unrelated, separated by a blank line\n"
        "\n"
        "# A physical link between two devices,\n"
        "// one direction only.\n"
        ".input link(a: symbol, b: symbol)\n"
    )
    (decl,) = parse_program(text).declarations
    assert decl.doc == "A physical link between two devices, one direction only."


def test_declaration_without_comment_has_empty_doc() -> None:
    (decl,) = parse_program(".decl a(x: symbol)\n").declarations
    assert decl.doc == ""


def test_column_docs_from_trailing_comments() -> None:
    text = (
        ".input link(\n"
        "    a: symbol,     # source device id\n"
        "    b: symbol,     // target device id\n"
        "    gbps: number\n"
        ")\n"
    )
    (decl,) = parse_program(text, "s.dl").declarations
    assert [c.doc for c in decl.columns] == ["source device id", "target device id", ""]
    assert decl.columns[2] == Column("gbps", "number")
    assert decl.columns[1].loc == SourceLocation("s.dl", 3, 5)
    assert decl.loc == SourceLocation("s.dl", 1, 1)


# ---------------------------------------------------------------- metadata and comments


def test_metadata_comments() -> None:
    text = (
        "# @id: BW002\n"
        "# @severity:   warning  \n"
        "// @summary: A GPU's nearest NIC is across the CPU interconnect.\n"
        "# id: not metadata without the at sign\n"
        "a(1). # @inline: not metadata after code\n"
    )
    program = parse_program(text, "m.dl")
    assert program.metadata == (
        ("id", "BW002", SourceLocation("m.dl", 1, 1)),
        ("severity", "warning", SourceLocation("m.dl", 2, 1)),
        ("summary", "A GPU's nearest NIC is across the CPU interconnect.", SourceLocation("m.dl", 3, 1)),
    )


def test_comments_are_ignored_but_not_inside_strings() -> None:
    text = '# a comment\na("x#y", "u//v"). // trailing\n# a(2).\n'
    rule = one_rule(text)
    assert rule.head == Head("a", (Const("x#y"), Const("u//v")))


# ---------------------------------------------------------------- rules and terms


def test_fact_has_empty_body() -> None:
    rule = one_rule('link("n0/gpu0", "n0/sw0", 400).')
    assert rule == Rule(Head("link", (Const("n0/gpu0"), Const("n0/sw0"), Const(400))), ())


def test_rule_with_atom_negation_and_comparison() -> None:
    rule = one_rule("r(X, Y) :- link(X, Y, G), !blocked(Y), G >= 100.")
    assert rule.head == Head("r", (X, Y))
    assert rule.body == (
        Atom("link", (X, Y, G)),
        Negation(Atom("blocked", (Y,))),
        Comparison(">=", G, Const(100)),
    )


@pytest.mark.parametrize("op", ["=", "!=", "<", "<=", ">", ">="])
def test_every_comparison_operator(op: str) -> None:
    rule = one_rule(f"r(X) :- a(X, Y), X {op} Y.")
    assert rule.body[1] == Comparison(op, X, Y)  # type: ignore[arg-type]


def test_wildcards_and_underscore_variables() -> None:
    rule = one_rule("r(_Node) :- a(_Node, _, _).")
    assert rule.head.args == (Var("_Node"),)
    body = rule.body[0]
    assert isinstance(body, Atom)
    assert body.args == (Var("_Node"), Wildcard(), Wildcard())


def test_zero_arity_atoms() -> None:
    rule = one_rule("ok() :- ready().")
    assert rule == Rule(Head("ok", ()), (Atom("ready", ()),))


@pytest.mark.parametrize("func", ["min", "max", "count", "sum"])
def test_aggregates_in_heads(func: str) -> None:
    rule = one_rule(f"n(D, {func}(G)) :- member(G, D).")
    assert rule.head.args == (Var("D"), Aggregate(func, G))  # type: ignore[arg-type]
    assert rule.head.aggregate == (1, Aggregate(func, G))  # type: ignore[arg-type]


def test_aggregate_name_is_a_relation_name_in_a_declaration() -> None:
    (decl,) = parse_program(".decl count(x: number)\n").declarations
    assert decl.name == "count"


def test_negative_integers() -> None:
    rule = one_rule("a(-3, 0, -0) :- b(X), X > -10.")
    assert rule.head.args == (Const(-3), Const(0), Const(0))
    assert rule.body[1] == Comparison(">", X, Const(-10))


def test_negated_variable_is_zero_minus() -> None:
    rule = one_rule("a(Y) :- b(X), Y = -X.")
    assert rule.body[1] == Comparison("=", Y, BinOp("-", Const(0), X))


def test_multiplication_binds_tighter_than_addition() -> None:
    rule = one_rule("a(1 + 2 * 3, 1 * 2 + 3).")
    assert rule.head.args == (
        BinOp("+", Const(1), BinOp("*", Const(2), Const(3))),
        BinOp("+", BinOp("*", Const(1), Const(2)), Const(3)),
    )


def test_parentheses_and_left_associativity() -> None:
    rule = one_rule("a((1 + 2) * 3, 10 - 4 - 3, 8 / 2 % 3).")
    assert rule.head.args == (
        BinOp("*", BinOp("+", Const(1), Const(2)), Const(3)),
        BinOp("-", BinOp("-", Const(10), Const(4)), Const(3)),
        BinOp("%", BinOp("/", Const(8), Const(2)), Const(3)),
    )


def test_string_escapes() -> None:
    rule = one_rule(r'a("say \"hi\"", "back\\slash", "").')
    assert rule.head.args == (Const('say "hi"'), Const("back\\slash"), Const(""))


def test_locations_point_at_each_node() -> None:
    rule = one_rule("\n  r(X) :-\n    link(X, _, G), G < 5.")
    assert rule.loc == SourceLocation("t.dl", 2, 3)
    atom = rule.body[0]
    assert isinstance(atom, Atom)
    assert atom.loc == SourceLocation("t.dl", 3, 5)
    assert atom.args[2].loc == SourceLocation("t.dl", 3, 16)
    assert rule.body[1].loc == SourceLocation("t.dl", 3, 20)


def test_declarations_and_rules_keep_file_order() -> None:
    program = parse_program(".decl a(x: number)\na(1).\n.decl b(x: number)\nb(2).\na(3).\n")
    assert [d.name for d in program.declarations] == ["a", "b"]
    assert [str(r) for r in program.rules] == ["a(1).", "b(2).", "a(3)."]


def test_empty_program() -> None:
    program = parse_program("# only a comment\n\n")
    assert (program.declarations, program.rules) == ((), ())


# ---------------------------------------------------------------- syntax errors


def test_syntax_error_has_line_col_and_expectation() -> None:
    # End of input is reported at the last token, the one a '.' should follow.
    assert syntax_errors("a(X) :- b(X)\n") == ["t.dl:1:12: syntax error: unexpected end of input; expected '.'"]


def test_several_syntax_errors_reported_together() -> None:
    text = (
        "a(X) :- b(X.\n"  # missing ')'
        "ok(X) :- b(X).\n"
        "c(X) :- b(X), , d(X).\n"  # stray comma
        "e(X) :- b(X) ; f(X).\n"  # ';' is not an operator
    )
    errors = syntax_errors(text)
    assert [e.split(": syntax error")[0] for e in errors] == ["t.dl:1:12", "t.dl:3:15", "t.dl:4:14"]
    assert errors[1].endswith(
        "unexpected ','; expected '!', '(', '-', '_', a quoted string, "
        "a relation name (lower case), a variable (Upper case) or an integer"
    )
    assert "unexpected character ';'" in errors[2]


def test_unterminated_string_is_a_syntax_error() -> None:
    (error,) = syntax_errors('a("open).\n')
    assert error.startswith("t.dl:1:3: syntax error: unexpected character '\"'")


def test_uppercase_relation_name_is_a_syntax_error() -> None:
    (error,) = syntax_errors("Link(X) :- b(X).\n")
    assert error.startswith("t.dl:1:1: syntax error:")


# ---------------------------------------------------------------- queries


def test_query_variables_in_order_of_appearance() -> None:
    query = parse_query('link(A, B, "nvlink", G), G < 400, !down(B)')
    assert query.variables == ("A", "B", "G")
    assert query.body == (
        Atom("link", (Var("A"), Var("B"), Const("nvlink"), G)),
        Comparison("<", G, Const(400)),
        Negation(Atom("down", (Var("B"),))),
    )
    assert query.text == 'link(A, B, "nvlink", G), G < 400, !down(B)'


def test_query_trailing_dot_and_columns() -> None:
    query = parse_query("  reach(X, _).")
    assert query.variables == ("X",)
    assert query.body[0].loc == SourceLocation("<query>", 1, 3)


def test_empty_query_is_an_error() -> None:
    with pytest.raises(ProgramError, match=r"<query>:1:1: empty query"):
        parse_query("  . ")


def test_query_syntax_error_has_column() -> None:
    with pytest.raises(ProgramError) as info:
        parse_query("link(A, B), A <")
    (diag,) = info.value.diagnostics
    assert str(diag) == (
        "<query>:1:15: syntax error: unexpected end of input; expected "
        "'(', '-', '_', a quoted string, a variable (Upper case) or an integer"
    )


def test_query_text_is_data_not_code() -> None:
    # A query that looks like Python must be rejected as Datalog, never evaluated.
    with pytest.raises(ProgramError):
        parse_query("__import__('os').system('true')")


# ---------------------------------------------------------------- places, nesting, errors


def test_a_parenthesised_start_places_the_node_at_its_parenthesis() -> None:
    # "a(X) :- b(X), " is 14 characters: the comparison's "(" is column 15, X column 16.
    comparison = one_rule("a(X) :- b(X), (X + 1) * 2 > 3.").body[1]
    assert isinstance(comparison, Comparison) and isinstance(comparison.left, BinOp)
    assert comparison.loc == SourceLocation("t.dl", 1, 15)
    assert comparison.left.loc == SourceLocation("t.dl", 1, 15)  # (X + 1) * 2 starts at its "("
    assert isinstance(comparison.left.left, BinOp)
    assert comparison.left.left.loc == SourceLocation("t.dl", 1, 16)  # X + 1 starts at X


def test_a_negation_a_minus_and_an_aggregate_are_placed_at_their_first_character() -> None:
    # Columns: a(X, min(Y)) :- !b(X), c(X, Y), X = -(Y), Z = - 4, d(Z).
    #          1    6         17     24        33  37      43  47
    rule = one_rule("a(X, min(Y)) :- !b(X), c(X, Y), X = -(Y), Z = - 4, d(Z).")
    assert rule.head.args[1] == Aggregate("min", Y)
    assert rule.head.args[1].loc == SourceLocation("t.dl", 1, 6)
    negation, _, minus_y, minus_four, _ = rule.body
    assert isinstance(negation, Negation)
    assert (negation.loc, negation.atom.loc) == (SourceLocation("t.dl", 1, 17), SourceLocation("t.dl", 1, 18))
    assert isinstance(minus_y, Comparison) and isinstance(minus_four, Comparison)
    assert minus_y.loc == SourceLocation("t.dl", 1, 33)
    assert minus_y.right == BinOp("-", Const(0), Y)  # 0 - Y, placed at its "-"
    assert minus_y.right.loc == SourceLocation("t.dl", 1, 37)
    assert minus_four.right == Const(-4)  # a negative number, placed at its "-"
    assert minus_four.right.loc == SourceLocation("t.dl", 1, 47)


def test_nesting_past_the_limit_is_refused_with_its_place() -> None:
    # With nesting_depth = 100, a left-deep chain `1 + 1 + ... + 1` of n ones is a tree of height
    # 4 + n: program(1) > rule(2) > body(3) > comparison(4) > n-1 binops > the first integer.
    # 96 ones are height 100 (allowed), 97 are 101 (refused).
    allowed = "a(X) :- b(X), X = " + " + ".join(["1"] * 96) + "."
    refused = "a(X) :- b(X), X = " + " + ".join(["1"] * 97) + "."
    assert len(parse_program(allowed, "t.dl").rules) == 1
    with pytest.raises(ProgramError, match="nested more than 100 levels deep"):
        parse_program(refused, "t.dl")


def test_every_statements_syntax_error_is_reported() -> None:
    # Both statements' errors: after the first, the parser skips to the end of its statement.
    first, second = syntax_errors("a(X) :- b(X) X.\nc(Y :- d.")
    assert first == "t.dl:1:14: syntax error: unexpected 'X'; expected ',' or '.'"
    assert second.startswith("t.dl:2:5: syntax error: unexpected ':-'; expected ')'")
