"""live_reads: only what rules that can fire read is loaded; constants are matched against the rows."""

from __future__ import annotations

from verifier.engine.parser import parse_program
from verifier.engine.pruning import live_reads

PROGRAM = """
.input need(job: symbol, key: symbol, value: number)
.input paths(gpu: symbol, nic: symbol)
.input prices(node: symbol, cents: number)
.input decided(who: symbol)
.decl asked(on: number)
asked(1) :- need(_, "rail", 1).
.decl railed(gpu: symbol)
railed(G) :- asked(1), paths(G, _).
.decl priced(node: symbol)
priced(N) :- need(_, "budget", _), prices(N, _).
.decl allowed(who: symbol)
allowed(W) :- decided(W).
"""


def _reads(facts: dict[str, list[tuple[str | int, ...]]], pending: set[str] | None = None) -> set[str]:
    return live_reads(parse_program(PROGRAM, "p.dl"), facts, pending or set())


def test_an_atom_whose_constants_match_no_row_reads_nothing() -> None:
    # No job asks for rail or budget: neither paths nor prices is read, though need has rows.
    assert _reads({"need": [("j", "gpus", 8)], "paths": [("g", "n")], "prices": [("n0", 5)]}) == set()


def test_a_matching_row_makes_the_rule_live() -> None:
    reads = _reads({"need": [("j", "rail", 1)], "paths": [("g", "n")], "prices": [("n0", 5)]})
    assert reads == {"need", "asked", "paths"}  # rail asked; budget still not
    reads = _reads({"need": [("j", "rail", 0), ("k", "budget", 3)], "paths": [("g", "n")], "prices": [("n", 1)]})
    assert reads == {"need", "prices"}  # rail asked with 0 matches `need(_, "rail", 1)` not


def test_pending_relations_count_as_matching() -> None:
    assert _reads({}, {"decided"}) == {"decided"}  # decisions arrive after the first evaluation
    assert _reads({}) == set()


def test_rules_that_cannot_fire_ask_for_no_rows() -> None:
    from verifier.engine.pruning import constant_filters, live_rules

    program = parse_program(
        """
.input need(job: symbol, key: symbol, value: number)
.input quantity(x: symbol, key: symbol, value: number)
.decl hbm(gpu: symbol, mb: number)
hbm(G, V) :- quantity(G, "hbm_mb", V).
.decl indexed(gpu: symbol, i: number)
indexed(G, I) :- need(_, "rail", 1), quantity(G, "index", I).
""",
        "p.dl",
    )
    facts: dict[str, list[tuple[str | int, ...]]] = {
        "need": [("j", "gpus", 8)],
        "quantity": [("g0", "hbm_mb", 80_000), ("g0", "index", 0)],
    }
    live = live_rules(program, facts, set())
    assert [r.head.relation for r in live] == ["hbm"]
    # Only the live rule's constant counts: index rows (one per GPU of a fleet) stay out.
    assert constant_filters(program, set(), live) == {"quantity": [(1, frozenset({"hbm_mb"}))]}
    assert constant_filters(program, set()) == {
        "quantity": [(1, frozenset({"hbm_mb", "index"}))],
        "need": [(1, frozenset({"rail"})), (2, frozenset({1}))],
    }


DEMAND = """
.input node(n: symbol)
.input label(x: symbol, key: symbol, value: symbol)
.input domain(gpu: symbol, d: symbol)
.decl group(n: symbol, g: symbol)
group(N, G) :- node(N), label(N, "clique", G).
.decl node_domain(n: symbol, d: symbol)
node_domain(N, D) :- domain(N, D).
.decl split(d: symbol, g: symbol)
split(D, G) :- node_domain(N, D), group(N, G).
.decl bare(n: symbol)
bare(N) :- node(N), !group(N, _).
.decl helper(n: symbol)
helper(N) :- bare(N).
.decl reach(a: symbol, b: symbol)
reach(A, B) :- node_domain(A, B).
reach(A, C) :- reach(A, B), node_domain(B, C).
"""


def test_a_slice_among_the_live_rules_keeps_what_the_read_relations_depend_on() -> None:
    from verifier.engine.pruning import live_rules
    from verifier.engine.queries import program_for
    from verifier.engine.strata import strata_of

    program = parse_program(DEMAND, "p.dl")
    # No clique label: group cannot fire, so split cannot either; node_domain and reach can.
    facts: dict[str, list[tuple[str | int, ...]]] = {
        "node": [("n0",)],
        "label": [("n0", "rack", "r0")],
        "domain": [("n0", "n0")],
    }
    live = live_rules(program, facts, set())
    assert sorted({r.head.relation for r in live}) == ["bare", "helper", "node_domain", "reach"]
    # Reading split and bare: split's rule cannot fire and so keeps nothing alive, not even
    # node_domain, which only it and reach read; bare reads group (no live rule) and node.
    kept = program_for(program, {"split", "bare"}, live)
    assert [str(r) for r in kept.rules] == ["bare(N) :- node(N), !group(N, _)."]
    assert [(st.relations, st.recursive) for st in strata_of(kept)] == [(("bare",), False)]
    # Reading reach keeps its two rules (one recursive stratum) and node_domain's, in program order.
    kept = program_for(program, {"reach"}, live)
    assert [r.head.relation for r in kept.rules] == ["node_domain", "reach", "reach"]
    assert [(st.relations, st.recursive) for st in strata_of(kept)] == [(("node_domain",), False), (("reach",), True)]
    assert kept.declarations == program.declarations


def test_one_program_judged_again_on_other_rows() -> None:
    # The rules' reads are worked out once per program (kept on it), what they match on every call:
    # the same program asked with rail rows, then without, then with pending decisions.
    program = parse_program(PROGRAM, "p.dl")
    rail: dict[str, list[tuple[str | int, ...]]] = {"need": [("j", "rail", 1)], "paths": [("g", "n")]}
    gpus: dict[str, list[tuple[str | int, ...]]] = {"need": [("j", "gpus", 8)], "paths": [("g", "n")]}
    assert live_reads(program, rail, set()) == {"need", "asked", "paths"}
    # By hand: need(_, "rail", 1) matches no row of ("j", "gpus", 8) and prices has none of its own
    # reader's rows (budget not asked): nothing is live.
    assert live_reads(program, gpus, set()) == set()
    assert live_reads(program, {}, {"decided"}) == {"decided"}
    assert live_reads(program, rail, set()) == {"need", "asked", "paths"}
