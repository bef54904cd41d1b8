"""The revision's prepared placement (verifier/service/placing.py) answers as `topolog place --why-not` does.

The fleet is evaluated once without jobs; each job's facts are added, evaluated, ranked and
retracted. The answers must be byte for byte the CLI's JSON on the same files, job after job on
one evaluation (so a retract leaves nothing of the job before), for topolog's own jobs on the
mixed fleet and for a Kueue Job and a Slurm script on the DGX H100 pod. `auto` evaluates
inventories this small in memory (each admit in a restored copy); a fleet goes to DuckDB (each
admit's facts added and retracted): every test runs on both.

Hand-derived outcomes, from inventories/jobs/schedulers/README.md and dgx-h100-pod.yaml (8 DGX
H100, dgx00-03 in rack0 and dgx04-07 in rack1, tenant research): finetune.sbatch (account
research -> Team::"research", 8 GPUs, scope node) fits each of the 8 nodes, dgx03 last (one of its
NVLink links is degraded: 425 GB/s against 450); kueue-pretrain.yaml (namespace research, 2 pods x
8 GPUs, one rack) fits rack0 and rack1, on the first two nodes of each (dgx00+dgx01, dgx04+dgx05).
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run_cli
from service.serve_helpers import QUICK_S, ROOT, copy_inputs, wait_for

from verifier.engine.parser import parse_program
from verifier.reports.place_report import render_json
from verifier.service import app, placing
from verifier.service.app import Service
from verifier.service.config import ServeConfig
from verifier.service.decision_log import DecisionLog
from verifier.service.gate import Gate, admit_doc
from verifier.service.placing import PreparedPlacement
from verifier.service.revision import Revision, build_revision
from verifier.session.place_run import jobs_to_place
from verifier.sources.jobs.principal_rules import parse_rules

JOBS = ROOT / "inventories" / "jobs"
OWN_JOBS = sorted(JOBS.glob("*.yaml"))
SCHEDULERS = [JOBS / "schedulers" / "kueue-pretrain.yaml", JOBS / "schedulers" / "finetune.sbatch"]
ACTS_AS = ("namespace=Team", "account=Team")


@pytest.fixture(scope="module", autouse=True, params=["duckdb", "memory"])
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(placing, "ENGINE", request.param)
        yield str(request.param)


def _revision(folder: Path, inventory: str) -> Revision:
    return build_revision(ServeConfig((copy_inputs(folder, inventory),)))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory, engine: str) -> Revision:
    return _revision(tmp_path_factory.mktemp("placing-mixed"), "mixed-fleet.yaml")


@pytest.fixture(scope="module")
def pod(tmp_path_factory: pytest.TempPathFactory, engine: str) -> Revision:
    return _revision(tmp_path_factory.mktemp("placing-pod"), "dgx-h100-pod.yaml")


def _prepared(revision: Revision) -> PreparedPlacement:
    prepared = revision.placing.get()
    assert prepared is not None, revision.placing.error
    assert prepared.engine == placing.ENGINE
    return prepared


# The CLI's answer depends on the files and flags only, not on placing.ENGINE: each is asked once a
# run, on the first engine's copy of the inventory, and compared with the other engine's answers too.
_CLI_ANSWERS: dict[tuple[bytes, str, bytes, tuple[str, ...]], str] = {}


def _cli(revision: Revision, job: Path, *flags: str) -> str:
    inventory = revision.inputs.paths[0]
    key = (inventory.read_bytes(), inventory.name, job.read_bytes(), flags)
    if key not in _CLI_ANSWERS:
        code, out, err = run_cli("place", str(inventory), str(job), "--why-not", "--format", "json", *flags)
        assert code in (0, 1), err
        _CLI_ANSWERS[key] = out
    return _CLI_ANSWERS[key]


def _placed(prepared: PreparedPlacement, job: Path, acts_as: tuple[str, ...] = (), limit: int = 0) -> str:
    report = prepared.place(jobs_to_place([job], True, parse_rules(acts_as)).jobs, limit)
    assert report is not None, f"{job.name} was not placed on the prepared evaluation"
    return render_json(report)


# DuckDB adds and retracts each job's facts (about 2 s a job): by default it places three jobs that
# go through different stages (hpc: FP64 and Cedar's fp64 policy; notebooks: MIG instances;
# portable: software versions, two stacks), then hpc again, which a fact left by either of the other
# two would change. The memory engine places all of them, and so does DuckDB in the slow run.
SOME_OWN_JOBS = [JOBS / "hpc.yaml", JOBS / "notebooks.yaml", JOBS / "portable.yaml"]


@pytest.mark.parametrize("every", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["some", "every"])
def test_own_jobs_one_after_another_answer_as_the_cli(
    mixed: Revision, engine: str, every: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if every and engine == "memory":
        pytest.skip("the memory engine places every job in the default run")
    jobs = OWN_JOBS if every or engine == "memory" else SOME_OWN_JOBS
    assert set(SOME_OWN_JOBS) < set(OWN_JOBS)
    monkeypatch.setattr(placing, "ANSWERS", 0)  # no answer kept: every job evaluated, the first again too
    prepared = _prepared(mixed)
    before = prepared.admits
    expected = {job.name: _cli(mixed, job) for job in jobs}
    for job in [*jobs, jobs[0]]:  # the first again: nothing of the others is left
        assert _placed(prepared, job) == expected[job.name], job.name
    assert prepared.admits == before + len(jobs) + 1


def test_a_job_asked_again_is_answered_from_the_kept_answers(mixed: Revision, tmp_path: Path) -> None:
    # inference.yaml renamed (another name, another file, another line for its notes) asks what the
    # original asks: its answer is the kept one, with its own name, and still the CLI's on its file.
    # Another limit is another question: evaluated anew.
    prepared = _prepared(mixed)
    original = JOBS / "inference.yaml"
    renamed = tmp_path / "again.yaml"
    renamed.write_text("# asked again\n" + original.read_text().replace("chat-8b-serving", "chat-8b-again"))
    first = _placed(prepared, original)
    reused = prepared.reused
    again = _placed(prepared, renamed)
    assert prepared.reused == reused + 1
    assert again == _cli(mixed, renamed) and again != first
    assert json.loads(again)["jobs"][0]["job"] == "chat-8b-again"
    _placed(prepared, original, limit=1)
    assert prepared.reused == reused + 1


def test_scheduler_jobs_answer_as_the_cli(pod: Revision) -> None:
    prepared = _prepared(pod)
    flags = [x for rule in ACTS_AS for x in ("--principal-from", rule)]
    for job in SCHEDULERS:
        assert _placed(prepared, job, ACTS_AS) == _cli(pod, job, *flags), job.name
    kueue = json.loads(_placed(prepared, SCHEDULERS[0], ACTS_AS))["jobs"][0]
    assert [(p["domain"], p["nodes"], sorted({g.split("/")[0] for g in p["gpus"]})) for p in kueue["placements"]] == [
        ("rack0", 2, ["dgx00", "dgx01"]),
        ("rack1", 2, ["dgx04", "dgx05"]),
    ]
    slurm = json.loads(_placed(prepared, SCHEDULERS[1], ACTS_AS))["jobs"][0]
    assert slurm["principal"] == "research"
    assert [p["domain"] for p in slurm["placements"]][-1] == "dgx03" and len(slurm["placements"]) == 8


def test_the_best_limit_placements_are_those_of_place_limit(pod: Revision) -> None:
    # finetune.sbatch fits all 8 nodes; dgx03 ranks last (its degraded NVLink link), the other
    # seven tie at 450 GB/s on one node and go by name: the best 3 are dgx00, dgx01, dgx02.
    flags = [x for rule in ACTS_AS for x in ("--principal-from", rule)]
    job = SCHEDULERS[1]
    best = _placed(_prepared(pod), job, ACTS_AS, limit=3)
    assert best == _cli(pod, job, *flags, "--limit", "3")
    (slurm,) = json.loads(best)["jobs"]
    assert slurm["hosting"] == 8
    assert [p["domain"] for p in slurm["placements"]] == ["dgx00", "dgx01", "dgx02"]


def test_admit_on_the_revision_uses_it_and_names_the_body(pod: Revision) -> None:
    body = SCHEDULERS[1].read_bytes()
    before = _prepared(pod).admits
    doc = admit_doc(pod, body, parse_rules(ACTS_AS))
    assert _prepared(pod).admits == before + 1  # placed on the prepared evaluation, not from scratch
    assert doc["admitted"] is True and doc["errors"] == []
    cli = json.loads(_cli(pod, SCHEDULERS[1], "--principal-from", ACTS_AS[0], "--principal-from", ACTS_AS[1]))
    # The CLI's notes name the script's path; the service's name the request body.
    assert doc["placement"] == json.loads(json.dumps(cli).replace(str(SCHEDULERS[1]), "<request body>"))


def test_a_job_of_an_unknown_principal_is_refused_and_the_next_is_placed(mixed: Revision) -> None:
    text = (JOBS / "inference.yaml").read_text().replace('Team::"students"', 'Team::"nobody"')
    refused = admit_doc(mixed, text.encode())
    assert refused["admitted"] is False and "nobody" in json.dumps(refused["errors"])
    assert _placed(_prepared(mixed), JOBS / "inference.yaml") == _cli(mixed, JOBS / "inference.yaml")


def test_concurrent_admits_get_the_answers_made_one_at_a_time(mixed: Revision) -> None:
    prepared = _prepared(mixed)
    jobs = OWN_JOBS[:3]
    alone = {job.name: _placed(prepared, job) for job in jobs}
    seen: list[tuple[str, str]] = []
    failures: list[BaseException] = []

    def work(job: Path) -> None:
        try:
            for _ in range(2):
                seen.append((job.name, _placed(prepared, job)))
        except BaseException as err:  # pragma: no cover - reported below
            failures.append(err)

    threads = [threading.Thread(target=work, args=(job,)) for job in jobs * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert len(seen) == 12 and all(out == alone[name] for name, out in seen)


def test_each_revision_prepares_its_own(tmp_path: Path) -> None:
    # inference.yaml acts as Team::"students", which only rtx-n3 hosts (test_serve_admit.py). A
    # policy forbidding the team anything makes the new revision refuse it; the old revision,
    # still held by an admit that began on it, keeps its own evaluation and its answer.
    old = _revision(tmp_path, "mixed-fleet.yaml")
    body = (JOBS / "inference.yaml").read_bytes()
    assert admit_doc(old, body)["admitted"] is True
    (tmp_path / "policies" / "stop-students.cedar").write_text(
        '@id("stop-students")\nforbid (principal in Team::"students", action, resource);\n'
    )
    new = build_revision(ServeConfig((tmp_path / "mixed-fleet.yaml",), reload_quiet_s=QUICK_S), old)
    assert new.id != old.id and new.placing is not old.placing
    refused = admit_doc(new, body)
    assert refused["admitted"] is False
    (job,) = refused["placement"]["jobs"]  # type: ignore[index]
    assert any("policy stop-students denies students" in w["message"] for w in job["why_not"])
    assert new.describe()["placement"]["prepared"] is True  # type: ignore[index]
    assert admit_doc(old, body)["admitted"] is True


def test_a_rail_aligned_job_is_placed_from_scratch_with_the_same_answer(mixed: Revision, tmp_path: Path) -> None:
    # Rail alignment reads the NICs, leaves and cables, which the kept evaluation leaves out (as
    # `place` does for any other job): such a job is not for it, and admit places it as `place` does.
    job = tmp_path / "railed.yaml"
    job.write_text(
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        '  - {name: railed, principal: Team::"students", gpus: 2, topology: {scope: node, rail_aligned: true}}\n'
    )
    assert _prepared(mixed).place(jobs_to_place([job], True).jobs) is None
    doc = admit_doc(mixed, job.read_bytes())
    assert doc["errors"] == [] and doc["placement"] == json.loads(_cli(mixed, job))


def test_a_job_that_outgrows_the_memory_engine_is_placed_from_scratch(
    mixed: Revision, engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if engine != "memory":
        pytest.skip("only the memory engine outgrows (`--engine auto` then starts over in DuckDB)")
    prepared = _prepared(mixed)
    monkeypatch.setattr(placing, "AUTO_MAX_BINDINGS", 1)  # every join step is too big
    monkeypatch.setattr(placing, "ANSWERS", 0)  # evaluated, not answered from an earlier test's admit
    job = JOBS / "inference.yaml"
    assert prepared.place(jobs_to_place([job], True).jobs) is None
    assert admit_doc(mixed, job.read_bytes())["placement"] == json.loads(_cli(mixed, job))
    monkeypatch.undo()
    assert _placed(prepared, job) == _cli(mixed, job)  # the kept state was only read


def test_only_the_guard_of_that_shape_becomes_a_fact() -> None:
    program = parse_program(
        ".input job(name: symbol, principal: symbol, gpus: number)\n.decl placing(on: number)\n"
        ".decl other(on: number)\nplacing(1) :- job(_, _, _).\nother(1) :- job(_, _, _).\n",
        "t.dl",
    )
    rules = placing.assuming_jobs(program).rules
    assert [str(r) for r in rules] == ["placing(1).", "other(1) :- job(_, _, _)."]
    odd = parse_program(
        ".input job(name: symbol, principal: symbol, gpus: number)\n.decl placing(on: number)\n"
        'placing(1) :- job(_, "x", _).\n',
        "t.dl",
    )
    assert placing.assuming_jobs(odd).rules == odd.rules  # another shape: kept, everything stays job-dependent


def test_the_service_prepares_each_revision_ahead_of_admits_and_frees_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    monkeypatch.setattr(app, "PREPARE_AFTER_RELOAD_S", 3600.0)  # prepared below, when the test says
    gate = Gate(ServeConfig((copy_inputs(tmp_path),), watch=False))
    service = Service(gate, DecisionLog(None, 1, 1))
    try:
        wait_for("the first revision's placement", lambda: gate.live.placing.describe()["prepared"] is True)
        first = gate.live.placing.get()
        assert first is not None
        # The evaluation in DuckDB holds reference cycles (the engine keeps bound methods of itself).
        kept = weakref.ref(first._duckdb if engine == "duckdb" else first)
        (tmp_path / "policies" / "stop-students.cedar").write_text(
            '@id("stop-students")\nforbid (principal in Team::"students", action, resource);\n'
        )
        old_id = gate.live.id
        status = gate.reload("api")
        assert status.ok and status.changed and gate.live.id != old_id
        del first
        service.prepare()
        wait_for("the reloaded revision's placement", lambda: gate.live.placing.describe()["prepared"] is True)
        wait_for("the replaced evaluation freed", lambda: kept() is None)
    finally:
        service.close()
