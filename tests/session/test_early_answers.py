"""A query typed while `topolog repl` still evaluates its rules: answered from the rules it depends on.

`Loading.answer_now` evaluates only the slice of the program a query reads (queries.program_for);
under stratified semantics its rows are the whole model's. The loadings here hold a future that is
never completed (the thread's evaluation "still running", whatever the machine's speed), so every
answer below is an early one, or a None that says the query must wait: no test depends on timing.
"""

from __future__ import annotations

import io
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

import pytest

from verifier.checks.check import checks_from_program
from verifier.cli.repl import Session, answer_line
from verifier.core.limits import current_limits, use_limits
from verifier.engine.ast import Program
from verifier.engine.queries import prepare_query
from verifier.session.background import Loading, start_evaluation
from verifier.session.inputs import read_inventory
from verifier.session.session import Evaluation, load_rules, open_evaluation
from verifier.session.side_files import discover

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
MIXED = ROOT / "inventories" / "mixed-fleet.yaml"


@pytest.fixture(scope="module")
def program() -> Program:
    return load_rules()


def still_loading(program: Program, path: Path) -> Loading:
    """A loading whose evaluation never ends: every answer has to come early (or say it must wait)."""
    inputs = read_inventory([path], discover([path]), None, principals=True)
    return Loading(program, inputs, Future())


def whole_model(program: Program, path: Path) -> Evaluation:
    """As `topolog repl` evaluates it: every rule, every input relation kept, no check judged."""
    inputs = {d.name for d in program.declarations if d.is_input}
    return open_evaluation([path], program, also_read=inputs, judge_checks=False)


def test_a_query_typed_at_once_is_answered_before_the_evaluation_ends(program: Program) -> None:
    session = Session(still_loading(program, POD))
    assert not session.loaded
    out, err = io.StringIO(), io.StringIO()
    # within/2 is derived (rules/topology/lib/containment.dl: parent, then parent of within). In the
    # pod dgx00/gpu0's parent is dgx00, dgx00's is rack0 (`name: dgx{seq:02d}`, 4 per rack, rack0
    # first) and rack0's is pod0: 3 rows, sorted, the column as wide as its widest value (5).
    assert answer_line(session, 'within("dgx00/gpu0", R)', out, err)
    assert err.getvalue() == ""
    assert out.getvalue().splitlines() == ["R", "-----", "dgx00", "pod0", "rack0", "(3 rows)"]
    # With negation: rack0 holds dgx00..dgx03 and no object of the pod is `state: down`, so the 4
    # nodes (each `kind: node`) are the answer.
    got = session.execute('parent(N, "rack0"), object(N, "node"), !state(N, "down")').splitlines()
    assert got[2:] == ["dgx00", "dgx01", "dgx02", "dgx03", "(4 rows)"]
    assert not session.loaded  # none of it waited for the evaluation


def test_a_mistyped_query_is_refused_without_waiting(program: Program) -> None:
    session = Session(still_loading(program, POD))
    out, err = io.StringIO(), io.StringIO()
    assert not answer_line(session, "withn(G, R)", out, err)
    assert "did you mean 'within'" in err.getvalue()


def reported(program: Program, every: bool) -> list[str]:
    """A query of each check's reported relation (`every`), else of the first check of each rule folder
    (topology, bandwidth, links, memory, ...: recursion, negation and aggregates among them), and two
    query shapes of the docs: the early and the whole model's rows must be the same for each."""
    first: dict[str, str] = {}
    for check in sorted(checks_from_program(program), key=lambda c: c.id):
        first.setdefault(check.id if every else Path(check.file).parent.name, check.reports)
    heads = sorted(set(first.values()))
    queries = [f"{r}({', '.join(f'X{i}' for i in range(program.relations[r].arity))})" for r in heads]
    return [*queries, 'within(G, R), object(G, "gpu"), !state(G, "down")', 'link(L, A, B, "nvlink", M), M < 400000']


def same_answers(program: Program, path: Path, queries: list[str]) -> None:
    loading = still_loading(program, path)
    early_ones = 0
    with whole_model(program, path) as model:
        for text in queries:
            query = prepare_query(text, program)
            early = loading.answer_now(query)
            if early is None:  # it reads authorization decisions: it waits for the evaluation
                continue
            early_ones += 1
            assert early == model.engine.answer(query), text
    assert early_ones >= len(queries) // 2  # most are answered early (all but authorization's)


@pytest.mark.parametrize("path", [POD, MIXED], ids=["pod", "mixed-fleet"])
def test_early_answers_are_the_whole_models(program: Program, path: Path) -> None:
    same_answers(program, path, reported(program, every=False))


@pytest.mark.slow
@pytest.mark.parametrize("path", [POD, MIXED], ids=["pod", "mixed-fleet"])
def test_early_answers_of_every_check_are_the_whole_models(program: Program, path: Path) -> None:
    same_answers(program, path, reported(program, every=True))


def test_queries_of_authorization_decisions_wait(program: Program) -> None:
    # inventories/principals.yml sits beside the pod: team_gpu/2 is built from Cedar's decisions,
    # whose setup is the evaluation thread's own. answer_now says "wait" rather than answer without it.
    loading = still_loading(program, POD)
    assert loading.inputs.principals is not None
    assert loading.answer_now(prepare_query("team_gpu(T, G)", program)) is None


def test_a_slice_over_a_limit_waits_for_the_whole_evaluation(program: Program) -> None:
    # within/2 alone derives 3 ancestors for each of the pod's 64 GPUs, more than 10 tuples: the
    # slice fails, and the error to show is the whole evaluation's (the session ends with it).
    loading = still_loading(program, POD)
    with use_limits(replace(current_limits(), derived_tuples=10)):
        assert loading.answer_now(prepare_query('within("dgx00/gpu0", R)', program)) is None
        # A query of input relations derives nothing: answered under the same limit.
        assert loading.answer_now(prepare_query('parent("dgx00/gpu0", P)', program)) == [("dgx00",)]


def test_once_evaluated_answers_come_from_the_model(program: Program) -> None:
    future: Future[Evaluation] = Future()
    loading = Loading(program, read_inventory([POD], discover([POD]), None, principals=True), future)
    session = Session(loading)
    future.set_result(whole_model(program, POD))
    try:
        assert loading.answer_now(prepare_query("nvlink_domain(G, D)", program)) is None
        assert session.loaded
        # .explain needs the whole model: dgx00/gpu0 within dgx00 by the first containment rule.
        assert 'within("dgx00/gpu0", "dgx00")' in session.execute('.explain within("dgx00/gpu0", "dgx00")')
    finally:
        session.close()


def test_the_links_are_made_before_the_thread_starts(program: Program) -> None:
    # The pod's nodes are stamped from a template, their links made when first read
    # (Inventory.defer_links): 7 of its 8 nodes wait for that (dgx03 has an override of one of its
    # links, inventories/dgx-h100-pod.yaml, and is made at once). Two threads must not both make
    # them (the banner's link count read them beside the evaluation's facts: KeyError '_unmade'),
    # so start_evaluation makes them before its thread.
    inputs = read_inventory([POD], discover([POD]), None, principals=True)
    assert len(inputs.inventory.unmade_links()) == 7
    session = Session(start_evaluation([POD], program))
    try:
        assert session.inventory.unmade_links() == {}
    finally:
        session.close()
