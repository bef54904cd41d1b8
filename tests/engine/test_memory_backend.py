"""What the memory engine adds to the shared backend tests: join ordering, bounded joins, engine choice.

The semantics (recursion, negation, aggregates, arithmetic, proofs) are the shared tests of
test_duckdb_backend.py, run on both engines, and the differential tests.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.engine.backend import OutgrewEngine
from verifier.engine.engines import MEMORY_ENGINE_ROWS, choose_engine
from verifier.engine.memory_backend import MemoryBackend, _Scan
from verifier.engine.parser import parse_program, parse_query

PAIRS = ".input item(x: number)\n.decl pair(x: number, y: number)\npair(X, Y) :- item(X), item(Y).\n"


def _engine(text: str, facts: dict[str, list[tuple[int, ...]]], cap: int | None = None) -> MemoryBackend:
    engine = MemoryBackend()
    if cap is not None:
        engine.max_bindings = cap
    engine.load(parse_program(text, "t.dl"))
    for relation, rows in facts.items():
        engine.add_facts(relation, rows)
    engine.evaluate()
    return engine


def test_a_join_past_the_binding_cap_stops_with_the_relation_named() -> None:
    # 5 items: pair's join holds 5 bindings after item(X), then 5 x 5 = 25 > 20 after item(Y).
    with pytest.raises(OutgrewEngine) as caught:
        _engine(PAIRS, {"item": [(i,) for i in range(5)]}, cap=20)
    (diagnostic,) = caught.value.diagnostics
    assert str(diagnostic.location) == "t.dl:2:1"  # pair's declaration
    assert "deriving 'pair' joins more than 20 bindings in one step in memory" in diagnostic.message
    assert "over the limit engine_memory" in diagnostic.message
    assert isinstance(caught.value, TopologError)  # bad input to a user: exit 2, never a traceback


def test_under_the_cap_the_same_join_runs() -> None:
    # 4 items: 4 x 4 = 16 <= 20.
    engine = _engine(PAIRS, {"item": [(i,) for i in range(4)]}, cap=20)
    assert engine.count("pair") == 16


def test_a_query_of_unconnected_parts_never_enumerates_their_product() -> None:
    # item(X), item(Y) joined would hold 1,000 x 1,000 bindings; answered part by part it holds
    # 1,000 per part, well under a cap of 5,000, and the answer is the product, as a join's would be.
    engine = _engine(".input item(x: number)\n", {"item": [(i,) for i in range(1000)]}, cap=5000)
    assert engine.answer(parse_query("item(_), item(_)")) == [()]
    rows = engine.answer(parse_query("item(X), item(Y), X < 2, Y > 997"))
    assert rows == [(0, 998), (0, 999), (1, 998), (1, 999)]


def test_joins_start_from_the_most_selective_atom() -> None:
    # hit(G) :- gpu(G, N), nic(K, N), K = "nic7": read in body order its first step holds all 100
    # GPUs; planned on the data, the 10-row nic relation comes first, the comparison keeps one of
    # its rows at once, and no step holds more than the 10 GPUs of node 7, under a cap of 50.
    text = (
        ".input gpu(g: number, node: number)\n.input nic(k: symbol, node: number)\n"
        '.decl hit(g: number)\nhit(G) :- gpu(G, N), nic(K, N), K = "nic7".\n'
    )
    engine = MemoryBackend()
    engine.max_bindings = 50
    engine.load(parse_program(text, "t.dl"))
    engine.add_facts("gpu", [(g, g % 10) for g in range(100)])
    engine.add_facts("nic", [(f"nic{k}", k) for k in range(10)])
    with pytest.raises(OutgrewEngine):
        # Without the constant to start from, every NIC meets every GPU of its node: 100 > 50.
        engine.answer(parse_query("gpu(G, N), nic(K, N)"))
    engine.evaluate()
    # nic7 sits on node 7, and so do GPUs 7, 17, ..., 97.
    assert engine.query("hit") == [(g,) for g in range(7, 100, 10)]


def test_auto_chooses_by_the_number_of_fact_rows() -> None:
    assert choose_engine("auto", MEMORY_ENGINE_ROWS) == "memory"
    assert choose_engine("auto", MEMORY_ENGINE_ROWS + 1) == "duckdb"
    for named in ("duckdb", "memory", "pydatalog"):
        assert choose_engine(named, 10**9) == named


def test_a_query_whose_answer_is_past_the_cap_is_refused_with_a_way_out() -> None:
    # Under auto's cap (chosen_by_auto): 3 unconnected parts of 10 rows each answer 10^3 = 1,000 rows > 500.
    engine = MemoryBackend(max_bindings=500)
    engine.load(parse_program(".input item(x: number)\n", "t.dl"))
    engine.add_facts("item", [(i,) for i in range(10)])
    engine.evaluate()
    assert len(engine.answer(parse_query("item(X), item(Y)"))) == 100  # 10 x 10 <= 500
    with pytest.raises(OutgrewEngine) as caught:
        engine.answer(parse_query("item(X), item(Y), item(Z)"))
    (diagnostic,) = caught.value.diagnostics
    assert str(diagnostic.location) == "<query>"
    assert diagnostic.message == (
        "the query joins more than 500 bindings in one step in memory, the most --engine auto evaluates "
        "in memory; run it with --engine duckdb"
    )


# ---------------------------------------------------------------- join order on skewed keys


def test_a_skewed_column_counts_as_few_values_a_uniform_one_as_its_count() -> None:
    from verifier.engine.memory_backend import _Relation

    skewed = _Relation()
    # One rack holds 9 GPUs, nine racks one each: 18 rows, 10 values. A rack drawn from these rows
    # matches 9 rows half the time: sum of counts squared 9^2 + 9 * 1^2 = 90, 18^2 / 90 = 3.6.
    skewed.add_all([(f"g{i}", "big") for i in range(9)] + [(f"h{i}", f"r{i}") for i in range(9)], 0)
    assert skewed.distinct(1) == pytest.approx(3.6)
    uniform = _Relation()
    uniform.add_all([(f"g{i}", f"r{i % 3}") for i in range(12)], 0)  # 3 racks of 4: 12^2 / (3 * 16) = 3
    assert uniform.distinct(1) == pytest.approx(3.0)


def test_a_rule_joins_through_its_links_rather_than_all_pairs_of_one_big_rack() -> None:
    # within: 40 GPUs in one big rack, 40 more alone in a small rack each (80 rows, 41 racks);
    # cable: 2 per GPU of the big rack (80 rows, 40 values of A). Counted by values, a rack matches
    # 80 / 41 = 1.95 rows and a GPU's cables 80 / 40 = 2, so within(B, P) came before the cables:
    # 40 x 40 pairs. Weighted by how often each rack comes: 80^2 / (40^2 + 40 * 1^2) = 3.9 racks,
    # 20.5 rows per rack, and the cables (2 per GPU) come first.
    program = parse_program(
        ".input within(x: symbol, r: symbol)\n.input promise(r: symbol, k: symbol)\n"
        ".input cable(l: symbol, a: symbol, b: symbol)\n.decl joined(l: symbol)\n"
        'joined(L) :- promise(P, "domain"), within(A, P), within(B, P), cable(L, A, B).\n',
        "t.dl",
    )
    engine = MemoryBackend()
    engine.load(program)
    engine.add_facts("promise", [("big", "domain")])
    engine.add_facts("within", [(f"g{i}", "big") for i in range(40)] + [(f"s{i}", f"small{i}") for i in range(40)])
    engine.add_facts("cable", [(f"c{i}-{j}", f"g{i}", f"g{(i + j + 1) % 40}") for i in range(40) for j in range(2)])
    plan = engine._new_plan(program.rules[0].body, (), None, program.rules[0].head)
    scanned = [getattr(step, "relation", "") for step in plan.steps]
    assert scanned == ["promise", "within", "cable", "within"]
    engine.evaluate()
    assert engine.count("joined") == 80


def test_an_atom_sharing_no_bound_variable_waits_for_one_that_does() -> None:
    # The shape of BW003's nic_type_link_old. 2 racks of 12 objects each (node_of: 24 rows, 12 per
    # rack); the objects of each rack alternate between models m0 and m1 (model: 24 rows, 12 per model);
    # spec gives 10 models a "gen" of their number (10 rows, 1 value in column 1: 10 per lookup).
    # Once node_type binds R, node_of(N, R) expects 12 rows per binding and spec(MN, "gen", GN) 10, so
    # by fewest matches alone both spec scans came next, sharing no variable with R: 2 x 10 x 10 = 200
    # bindings, then node_of 200 x 12 = 2,400, past a cap of 1,000. Joined through shared variables:
    # node_type 2, node_of(N, R) 24, model and spec 24 (one each), node_of(O, R) 24 x 12 = 288 at most.
    text = (
        ".input node_type(r: symbol)\n.input node_of(o: symbol, r: symbol)\n"
        ".input model(o: symbol, m: symbol)\n.input spec(m: symbol, k: symbol, v: number)\n"
        ".decl older(n: symbol, o: symbol)\n"
        'older(N, O) :- node_type(R), node_of(N, R), node_of(O, R), model(N, MN), spec(MN, "gen", GN),\n'
        '    model(O, MO), spec(MO, "gen", GO), GN < GO.\n'
    )
    program = parse_program(text, "t.dl")
    engine = MemoryBackend()
    engine.max_bindings = 1000
    engine.load(program)
    objects = [(f"{rack}-o{i}", rack, f"m{i % 2}") for rack in ("r0", "r1") for i in range(12)]
    engine.add_facts("node_type", [("r0",), ("r1",)])
    engine.add_facts("node_of", [(o, rack) for o, rack, _ in objects])
    engine.add_facts("model", [(o, m) for o, _, m in objects])
    engine.add_facts("spec", [(f"m{j}", "gen", j) for j in range(10)])
    plan = engine._new_plan(program.rules[0].body, (), None, program.rules[0].head)
    scanned = [step.relation for step in plan.steps if isinstance(step, _Scan)]
    assert scanned == ["node_type", "node_of", "model", "spec", "node_of", "model", "spec"]
    engine.evaluate()
    # Per rack, 6 objects of m0 (gen 0) and 6 of m1 (gen 1): 6 x 6 older pairs; 2 racks: 72.
    assert engine.count("older") == 72
    assert ("r0-o0", "r0-o1") in engine.query("older")
    assert ("r0-o1", "r0-o0") not in engine.query("older")  # gen 1 is not below gen 0
    assert ("r0-o0", "r1-o1") not in engine.query("older")  # another rack


def test_a_relation_past_projected_rows_drops_its_projections_and_answers_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from verifier.engine import memory_backend

    program = parse_program(
        ".input edge(a: symbol, b: symbol)\n.decl path(a: symbol, b: symbol)\n"
        "path(X, Y) :- edge(X, Y).\npath(X, Z) :- edge(X, Y), path(Y, Z).\n",
        "t.dl",
    )
    chain = [(f"n{i}", f"n{i + 1}") for i in range(30)]  # 30 edges: 30 * 31 / 2 = 465 paths

    def paths() -> tuple[list[tuple[str | int, ...]], dict[tuple[str | int, ...], int]]:
        engine = MemoryBackend()
        engine.load(program)
        engine.add_facts("edge", chain)
        engine.evaluate()
        return engine.query("path"), dict(engine._relations["path"].rows)  # rows and their stages

    projected = paths()
    monkeypatch.setattr(memory_backend, "PROJECTED_ROWS", 8)
    assert paths() == projected
    assert len(projected[0]) == 465
    relation = memory_backend._Relation()
    relation.add_all([("a", str(i)) for i in range(8)], 0)
    relation.projection((0,), (1,))
    assert relation.projects() and relation.projections
    relation.add_all([("b", "0")], 1)  # the ninth row: past 8
    assert not relation.projects() and not relation.projections
