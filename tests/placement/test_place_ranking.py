"""How `place` ranks: shortcuts taken for fleet scale (docs/placement.md) that must change no answer.

A domain's members and figures are judged once per shape (its nodes' classes and eligible
profiles), `--limit` keeps the head of the full ranking without sorting all of it, the
cyclic collector is paused while the ranking reads a fleet's worth of rows, and the rules
that only explain rejected domains are evaluated only for `--why-not`.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

import pytest

from verifier.engine.queries import program_for
from verifier.placement import place as placement
from verifier.placement.place import PlaceReport
from verifier.session.place_run import place
from verifier.session.session import load_rules

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "fixtures"
MIXED = REPO / "inventories" / "mixed-fleet.yaml"
JOBS = REPO / "inventories" / "jobs"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One scalable unit of the benchmark's DGX-H100 fleet (32 identical nodes, 8 racks) and its jobs."""
    sys.path.insert(0, str(REPO))
    try:
        from benchmarks.place_bench import jobs_yaml
        from benchmarks.verify_bench import Layout, inventory_yaml
    finally:
        sys.path.remove(str(REPO))
    tmp = tmp_path_factory.mktemp("fleet")
    (tmp / "fleet.yaml").write_text(inventory_yaml(Layout(256)))
    (tmp / "jobs.yaml").write_text(jobs_yaml(12))
    return tmp / "fleet.yaml", tmp / "jobs.yaml"


Answer = tuple[str, int, int, list[dict[str, object]], list[dict[str, object]]]
"""A job's name, candidate and hosting domains, placements and reasons against the others."""


def _answers(report: PlaceReport) -> list[Answer]:
    return [
        (
            jp.job.name,
            jp.candidates,
            jp.hosting,
            [p.to_dict() for p in jp.placements],
            [w.to_dict() for w in jp.why_not],
        )
        for jp in report.jobs
    ]


class _Forgetful(dict[tuple[object, ...], object]):
    """A shape memo that keeps nothing: every domain is judged from its own members."""

    def __setitem__(self, key: tuple[object, ...], value: object) -> None:
        pass


def _forget_shapes(monkeypatch: pytest.MonkeyPatch) -> None:
    init = placement._Picker.__init__

    def forgetful(self: placement._Picker, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self._shapes = _Forgetful()  # type: ignore[assignment]

    monkeypatch.setattr(placement._Picker, "__init__", forgetful)


def test_judging_once_per_shape_changes_no_answer(fleet: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    inventory, jobs = fleet
    ranks = placement.RANKS
    judged = [_answers(place([inventory], [jobs], rank=r, why_not=True, authorize=False)) for r in ranks]
    _forget_shapes(monkeypatch)
    alone = [_answers(place([inventory], [jobs], rank=r, why_not=True, authorize=False)) for r in ranks]
    assert alone == judged
    hosting = {name: count for name, _c, count, _p, _w in judged[0]}
    assert hosting["node-0"] > 16 and hosting["rack-2"] > 4  # many nodes and racks of one shape


def test_uneven_nodes_judged_alone_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes of one class with different GPUs down share no members (tests/placement/fixtures/uneven.yaml)."""
    inventory, jobs = HERE / "uneven.yaml", HERE / "uneven_jobs.yaml"
    judged = _answers(place([inventory], [jobs], why_not=True, authorize=False))
    _forget_shapes(monkeypatch)
    assert _answers(place([inventory], [jobs], why_not=True, authorize=False)) == judged


@pytest.mark.parametrize("rank", placement.RANKS)
def test_limit_is_the_head_of_the_full_ranking(rank: str) -> None:
    every = place([MIXED], [JOBS], rank=rank).jobs
    for limit in (1, 2, 3):
        head = place([MIXED], [JOBS], rank=rank, limit=limit).jobs
        assert [(jp.job.name, jp.hosting, jp.placements) for jp in head] == [
            (jp.job.name, jp.hosting, jp.placements[:limit]) for jp in every
        ]


@pytest.mark.parametrize("enabled", [True, False])
def test_ranking_leaves_the_collector_as_it_found_it(enabled: bool) -> None:
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        place([MIXED], [JOBS / "portable.yaml"])
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_why_not_rules_are_left_out_without_why_not() -> None:
    def heads(why_not: bool) -> set[str]:
        return {r.head.relation for r in program_for(load_rules(), placement.placement_relations(why_not)).rules}

    assert "place_why_not" in heads(True) and "place_why_not" not in heads(False)
    assert heads(False) < heads(True)


@pytest.mark.parametrize("rank", placement.RANKS)
def test_without_why_not_the_same_placements(fleet: tuple[Path, Path], rank: str) -> None:
    """Leaving out the rules that only explain rejected domains moves no other answer."""
    inventory, jobs = fleet
    for inventories, job_files, authorize in (([MIXED], [JOBS], True), ([inventory], [jobs], False)):
        plain = place(inventories, job_files, rank=rank, authorize=authorize)
        explained = place(inventories, job_files, rank=rank, why_not=True, authorize=authorize)
        assert any(jp.why_not for jp in explained.jobs)
        for jp in explained.jobs:
            jp.why_not = []
        assert _answers(plain) == _answers(explained)


def _evaluated_heads(monkeypatch: pytest.MonkeyPatch, jobs: str = "training.yaml", **options: Any) -> set[str]:
    """The relations whose rules `place` handed the engine for its placements (DGX pod, `jobs`);
    with observations, the outages are evaluated first (observed_outages), placements last."""
    from verifier.session import session

    seen: list[set[str]] = []
    run_engine = session._run_engine

    def spy(engine: str, program: Any, *rest: Any, **named: Any) -> Any:
        seen.append({r.head.relation for r in program.rules})
        return run_engine(engine, program, *rest, **named)

    monkeypatch.setattr(session, "_run_engine", spy)
    place([REPO / "inventories" / "dgx-h100-pod.yaml"], [JOBS / jobs], **options)
    assert seen
    return seen[-1]


def test_only_the_live_rules_placement_reads_are_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    """xid_needs_reset is a table of facts (rules/observed/lib/xid.dl) read by one rule only,
    observed_out_of_service(G, R, W) :- observed_xid(G, X, W), xid_needs_reset(X, R): without
    --observed no observed_xid row exists, that rule cannot fire, and nothing placement reads can
    use the table, so it is not evaluated. With the pod's observations (dgx03's dcgm-exporter.prom
    reports XID 95 on gpu0) the rule can fire and the table is evaluated.
    """
    from verifier.facts.observed import ObservedSettings
    from verifier.session.observed_input import ObservedRun, parse_time

    plain = _evaluated_heads(monkeypatch)
    assert {"place_host", "place_profile", "job_never"} <= plain
    assert "xid_needs_reset" not in plain and "observed_out_of_service" not in plain
    observed = ObservedRun(
        (REPO / "inventories" / "observed" / "dgx-h100-pod",),
        settings=ObservedSettings(now=parse_time("2026-12-06T09:00:00Z")),
    )
    assert {"xid_needs_reset", "observed_out_of_service"} <= _evaluated_heads(monkeypatch, observed=observed)


def test_per_stage_counts_and_domain_gpus_only_for_why_not(monkeypatch: pytest.MonkeyPatch) -> None:
    """inventories/jobs/hpc.yaml's one job asks FP64, HBM, a node and an exclusion: no model (no
    layout, no TP groups) and no min_pair. Its eligible GPUs are counted from place_eligible_profile;
    the first stage each profile fails (place_first_fail), the counts per stage (place_fail_count)
    and each domain's GPUs (place_domain_gpu) are read only by why-not answers, the TP-group rules
    and the pair rules, so only `--why-not` evaluates them.
    """
    per_stage = {"place_first_fail", "place_fail_count", "place_domain_gpu"}
    assert not per_stage & _evaluated_heads(monkeypatch, "hpc.yaml")
    assert per_stage <= _evaluated_heads(monkeypatch, "hpc.yaml", why_not=True)
