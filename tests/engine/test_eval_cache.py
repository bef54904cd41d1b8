"""Memory-engine evaluations kept on disk: a hit holds what evaluating would derive, anything else is evaluated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main
from verifier.core import cache
from verifier.core.limits import Limits, use_limits
from verifier.engine import eval_cache
from verifier.engine.ast import Program, Row
from verifier.engine.checks import check_program
from verifier.engine.memory_backend import MemoryBackend
from verifier.engine.parser import parse_program

ROOT = Path(__file__).resolve().parents[2]
RULES = """\
.input edge(a: symbol, b: symbol, w: number)
.decl path(a: symbol, b: symbol)
.decl heavy(a: symbol)
path(A, B) :- edge(A, B, _).
path(A, C) :- path(A, B), edge(B, C, _).
heavy(A) :- edge(A, _, W), W > 10.
"""
EDGES: list[Row] = [("a", "b", 5), ("b", "c", 20)]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(where))
    return where


def _program(text: str = RULES) -> Program:
    program = parse_program(text, "paths.dl")
    check_program(program)
    return program


def _evaluated(program: Program, facts: dict[str, list[Row]]) -> MemoryBackend:
    engine = MemoryBackend()
    engine.load(program)
    for relation, rows in facts.items():
        engine.add_facts(relation, rows)
    engine.evaluate()
    return engine


def _all(engine: MemoryBackend, program: Program) -> dict[str, list[Row]]:
    return {d.name: engine.query(d.name) for d in program.declarations}


def test_the_key_is_the_content_not_how_the_rows_were_built(folder: Path) -> None:
    program = _program()
    # The middle rack as one shared object (as a loader shares a name among its rows), then as two
    # equal strings made apart (as another code path, or a cache hit upstream, builds them). Names
    # of one character would not do: CPython keeps a single copy of each.
    shared = "-".join(["rack", "b"])
    once: list[Row] = [("rack-a", shared, 5), (shared, "rack-c", 20)]
    apart: list[Row] = [("rack-a", "-".join(["rack", "b"]), 5), ("-".join(["rack", "b"]), "rack-c", 20)]
    assert apart[0][1] == apart[1][0] and apart[0][1] is not apart[1][0]
    key = eval_cache.evaluation_key(program, {"edge": once})
    assert key is not None
    assert eval_cache.evaluation_key(program, {"edge": apart}) == key
    assert eval_cache.evaluation_key(_program(), {"edge": tuple(once)}) == key  # another parse, a tuple


@pytest.mark.parametrize(
    ("rules", "edges"),
    [
        (RULES, [("a", "b", 5), ("b", "c", 21)]),  # one number
        (RULES, [("a", "b", 5), ("b", "c", "20")]),  # a number written as text
        (RULES, [("b", "c", 20), ("a", "b", 5)]),  # the order rows load in: the order of stages
        (RULES, [("a", "b", 5)]),  # one row fewer
        (RULES.replace("W > 10", "W > 11"), EDGES),  # a constant in a rule
        (RULES.replace("path(A, B) :- edge(A, B, _).\n", "") + "path(A, B) :- edge(A, B, _).\n", EDGES),  # rule order
        (RULES + ".decl spare(x: symbol)\n", EDGES),  # a declaration
    ],
)
def test_any_change_of_rule_or_fact_is_another_entry(folder: Path, rules: str, edges: list[Row]) -> None:
    base = eval_cache.evaluation_key(_program(), {"edge": EDGES})
    assert base is not None
    assert eval_cache.evaluation_key(_program(rules), {"edge": edges}) != base


def test_a_bool_is_not_the_number_it_equals(folder: Path) -> None:
    # True == 1 in Python (and hashes alike): as a fact it is refused when loaded, never a hit for 1.
    program = _program()
    one = eval_cache.evaluation_key(program, {"edge": [("a", "b", 1)]})
    assert one is not None and eval_cache.evaluation_key(program, {"edge": [("a", "b", True)]}) != one


def test_the_limits_in_force_are_part_of_the_key(folder: Path) -> None:
    program = _program()
    base = eval_cache.evaluation_key(program, {"edge": EDGES})
    with use_limits(Limits().with_overrides({"derived_tuples": "3"})):
        assert eval_cache.evaluation_key(program, {"edge": EDGES}) != base


def test_no_key_without_a_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.ENV_DIR, "")
    assert eval_cache.evaluation_key(_program(), {"edge": EDGES}) is None


def test_a_restored_state_answers_and_grows_as_the_evaluation_it_was_taken_from(folder: Path) -> None:
    program = _program()
    first = _evaluated(program, {"edge": EDGES})
    key = eval_cache.evaluation_key(program, {"edge": EDGES})
    assert key is not None
    eval_cache.remember_state(key, first.state())
    state = eval_cache.cached_state(key)
    assert state is not None
    restored = MemoryBackend()
    restored.load(program)
    restored.restore(state)
    # By hand: path = a->b, b->c, and a->c through b; heavy = b (its edge weighs 20 > 10).
    assert restored.query("path") == [("a", "b"), ("a", "c"), ("b", "c")]
    assert restored.query("heavy") == [("b",)]
    assert _all(restored, program) == _all(first, program)
    assert restored.explain("path", ("a", "c")) == first.explain("path", ("a", "c"))  # same stages, same proof
    # Facts added afterwards are evaluated on top, as on the engine that derived the state.
    more: list[Row] = [("c", "d", 1)]
    restored.add_facts("edge", more)
    restored.evaluate()
    whole = _evaluated(program, {"edge": EDGES + more})
    assert _all(restored, program) == _all(whole, program)
    assert ("a", "d") in restored.query("path")


def test_big_evaluations_are_not_kept(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = _program()
    engine = _evaluated(program, {"edge": EDGES})
    monkeypatch.setattr(eval_cache, "MAX_TUPLES", 5)  # edge 2 + path 3 + heavy 1 = 6 tuples
    eval_cache.remember_state("k" * 64, engine.state())
    assert not list(folder.glob(f"{eval_cache.KIND}-*"))
    monkeypatch.setattr(eval_cache, "MAX_TUPLES", 6)
    eval_cache.remember_state("k" * 64, engine.state())
    assert len(list(folder.glob(f"{eval_cache.KIND}-*"))) == 1


def test_a_repeated_verify_reads_the_evaluation_back_and_says_the_same(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    args = ["verify", "inventories/dgx-h100-pod.yaml", "--format", "json", "--proofs"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code in (0, 1), first.output
    assert len(list(folder.glob(f"{eval_cache.KIND}-*"))) == 1

    def not_again(self: MemoryBackend) -> None:
        raise AssertionError("evaluated again although the cache holds this evaluation")

    evaluate = MemoryBackend.evaluate
    monkeypatch.setattr(MemoryBackend, "evaluate", not_again)
    again = CliRunner().invoke(main, args)
    # stdout only: stderr carries progress lines once a run passes a second, which a busy host makes it.
    assert (again.exit_code, again.stdout) == (first.exit_code, first.stdout)
    assert json.loads(again.stdout)["findings"], "the pod has findings, each with its proof"
    # Not monkeypatch.undo(): that would also undo conftest's pinned report version.
    monkeypatch.setattr(MemoryBackend, "evaluate", evaluate)

    # Without the cache: the engine evaluates, and says the same.
    monkeypatch.setenv(cache.ENV_DIR, "")
    fresh = CliRunner().invoke(main, args)
    assert (fresh.exit_code, fresh.stdout) == (first.exit_code, first.stdout)


def test_a_changed_inventory_is_evaluated_again(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    text = (ROOT / "inventories" / "dgx-h100-pod.yaml").read_text()
    copy = tmp_path / "pod.yaml"
    copy.write_text(text)
    assert CliRunner().invoke(main, ["verify", str(copy)]).exit_code in (0, 1)
    copy.write_text(text + "\n# a comment changes no fact\n")
    assert CliRunner().invoke(main, ["verify", str(copy)]).exit_code in (0, 1)
    assert len(list(folder.glob(f"{eval_cache.KIND}-*"))) == 1  # same facts, same entry
    # One NVLink of the pod, degraded by design, now down: one fact differs.
    edited = text.replace(
        "{a: gpu2, b: nvsw1, count: 3, state: degraded}", "{a: gpu2, b: nvsw1, count: 3, state: down}"
    )
    assert edited != text
    copy.write_text(edited)
    CliRunner().invoke(main, ["verify", str(copy)])
    assert len(list(folder.glob(f"{eval_cache.KIND}-*"))) == 2


def test_facts_too_many_to_keep_are_not_even_keyed(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eval_cache, "MAX_TUPLES", 1)
    assert eval_cache.evaluation_key(_program(), {"edge": EDGES}) is None  # 2 rows > 1
