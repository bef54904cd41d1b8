"""Plain jobs are admitted without the placement rules (verifier/placement/plain.py), with the CLI's answer.

A plain job asks a GPU count, a principal, a scope, and at most accepted models, memory, memory
bandwidth, FP64 and excluded labels: the revision judges it per domain class in Python on its
evaluation with no job. Every answer here must be byte for byte `topolog place --why-not
--format json` on the same files, on both engines a revision keeps (DuckDB for a fleet, memory
for these small inventories), and each job that asks more must still go to the rules.

Hand derivation, from inventories/dgx-h100-pod.yaml and principals.yml: pod0 (label zone
us-east-1a) holds rack0 (dgx00-dgx03) and rack1 (dgx04-dgx07), each node a DGX H100 with 8
H100-SXM5-80GB (NVIDIA; 80 GB), label tenant research; dgx03 has a degraded NVLink link (gpu2 to
nvsw1), so its GPU pair bottleneck is below the others' 450 GB/s. dan is a member of team
research (the pod's tenant: permitted everywhere); bob is team-vision's (no policy permits him
on research hardware).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from cli_helpers import run_cli
from service.serve_helpers import ROOT, copy_inputs

from verifier.placement import plain
from verifier.placement.plain import is_plain
from verifier.reports.place_report import render_json
from verifier.service import placing
from verifier.service.admission import Review, review_doc
from verifier.service.config import ServeConfig
from verifier.service.placing import PreparedPlacement
from verifier.service.revision import Revision, build_revision
from verifier.session.place_run import jobs_to_place
from verifier.sources.jobs.principal_rules import parse_rules

NODES = [f"dgx{i:02d}" for i in range(8)]
CLI: dict[str, str] = {}
"""The CLI's answers by job text (the same on both engines' revisions: one run each)."""


@pytest.fixture(scope="module", autouse=True, params=["duckdb", "memory"])
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(placing, "ENGINE", request.param)
        yield str(request.param)


@pytest.fixture(scope="module")
def pod(tmp_path_factory: pytest.TempPathFactory, engine: str) -> Revision:
    folder = tmp_path_factory.mktemp("plain-pod")
    return build_revision(ServeConfig((copy_inputs(folder, "dgx-h100-pod.yaml"),)))


def _prepared(revision: Revision) -> PreparedPlacement:
    prepared = revision.placing.get()
    assert prepared is not None, revision.placing.error
    return prepared


def _job_file(folder: Path, body: str) -> Path:
    path = folder / "job.yaml"
    path.write_text("apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - name: probe\n" + body)
    return path


def _cli(revision: Revision, job: Path, limit: int) -> str:
    key = f"{limit}\n{job.read_text()}"
    if key not in CLI:
        args = [str(revision.inputs.paths[0]), str(job), "--why-not", "--format", "json", "--limit", str(limit)]
        code, out, err = run_cli("place", *args)
        assert code in (0, 1), err
        CLI[key] = out
    return CLI[key]


def _admitted(revision: Revision, job: Path, limit: int) -> tuple[str, bool]:
    """The prepared placement's answer, and whether it was judged as a plain job."""
    prepared = _prepared(revision)
    before = prepared.plain
    report = prepared.place(jobs_to_place([job], True, parse_rules(())).jobs, limit)
    assert report is not None
    return render_json(report), prepared.plain == before + 1


# Each job (indented under `- name: probe`), the limit, and what the answer must say, by hand:
# (hosting domains, candidate domains, the domains shown, the first why-not's requirement/have/need).
PLAIN_CASES = {
    # Every node hosts 8 GPUs; seven tie at 450 GB/s and go by name, dgx03 (degraded) last.
    "eight": ('    principal: User::"dan"\n    gpus: 8\n    topology: {scope: node}\n', 3, (8, 8, NODES[:3], None)),
    "eight-all": (
        '    principal: User::"dan"\n    gpus: 8\n    topology: {scope: node}\n',
        0,
        (8, 8, [*NODES[:3], *NODES[4:], "dgx03"], None),
    ),
    # A node holds 8 GPUs: 9 fit none (stage gpus, 8 of 9).
    "nine": ('    principal: User::"dan"\n    gpus: 9\n    topology: {scope: node}\n', 10, (0, 8, [], ("gpus", 8, 9))),
    # bob may schedule on none of the research nodes: authorization, 0 of 8.
    "bob": (
        '    principal: User::"bob"\n    gpus: 8\n    topology: {scope: node}\n',
        10,
        (0, 8, [], ("authorization", 0, 8)),
    ),
    # By family (H100) and by vendor (nvidia) the H100s are accepted; A100 accepts none of them.
    "family": (
        '    principal: User::"dan"\n    gpus: 8\n    gpu: {accepts: [H100]}\n    topology: {scope: node}\n',
        2,
        (8, 8, NODES[:2], None),
    ),
    "vendor": (
        '    principal: User::"dan"\n    gpus: 8\n    gpu: {accepts: [nvidia]}\n    topology: {scope: node}\n',
        2,
        (8, 8, NODES[:2], None),
    ),
    "a100": (
        '    principal: User::"dan"\n    gpus: 8\n    gpu: {accepts: [A100]}\n    topology: {scope: node}\n',
        10,
        (0, 8, [], ("model", 0, 8)),
    ),
    # 80 GB H100s: 100 GB fails the memory stage; full-rate FP64 (an H100 has it) passes.
    "memory": (
        '    principal: User::"dan"\n    gpus: 8\n    gpu: {min_hbm: 100 GB}\n    topology: {scope: node}\n',
        10,
        (0, 8, [], ("hbm", 0, 8)),
    ),
    "fp64": (
        '    principal: User::"dan"\n    gpus: 8\n    gpu: {fp64: true}\n    topology: {scope: node}\n',
        1,
        (8, 8, NODES[:1], None),
    ),
    # zone us-east-1a is on pod0, above every node: all excluded. tenant research is on each node.
    "zone": (
        '    principal: User::"dan"\n    gpus: 8\n    topology: {scope: node}\n    exclude: {zone: us-east-1a}\n',
        10,
        (0, 8, [], ("excluded", 0, 8)),
    ),
    "tenant": (
        '    principal: User::"dan"\n    gpus: 8\n    topology: {scope: node}\n    exclude: {tenant: research}\n',
        10,
        (0, 8, [], ("excluded", 0, 8)),
    ),
    # 16 GPUs in a rack: both racks host, each on its first two nodes.
    "rack": (
        '    principal: User::"dan"\n    gpus: 16\n    topology: {scope: rack}\n',
        10,
        (2, 2, ["rack0", "rack1"], None),
    ),
    # 64 GPUs with scope any: the pod is the one candidate and holds exactly 64.
    "any": ('    principal: User::"dan"\n    gpus: 64\n', 10, (1, 1, ["pod0"], None)),
    "any-65": ('    principal: User::"dan"\n    gpus: 65\n', 10, (0, 1, [], ("gpus", 64, 65))),
}


@pytest.mark.parametrize("case", sorted(PLAIN_CASES))
def test_a_plain_job_is_judged_without_the_rules_as_the_cli_answers(
    pod: Revision, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setattr(placing, "ANSWERS", 0)  # nothing kept: each admit judged
    body, limit, (hosting, candidates, shown, first_why_not) = PLAIN_CASES[case]
    job = _job_file(tmp_path, body)
    answer, was_plain = _admitted(pod, job, limit)
    assert was_plain
    assert answer == _cli(pod, job, limit)
    (only,) = json.loads(answer)["jobs"]
    assert (only["hosting"], only["candidates"]) == (hosting, candidates)
    assert [p["domain"] for p in only["placements"]] == shown
    if first_why_not is None:
        assert only["why_not"] == []
    else:
        why = only["why_not"][0]
        assert (why["requirement"], why["have"], why["need"]) == first_why_not
        assert len(only["why_not"]) == candidates


# What the rules judge, not PlainPlacement: each job asks one thing more than a plain job may.
FALLBACK_CASES = {
    "mig": "    gpus: 8\n    gpu: {mig: 1g.10gb}\n    topology: {scope: node}\n",
    "software": '    gpus: 8\n    topology: {scope: node}\n    software:\n      - {cuda: ">=12.4"}\n',
    "max_nodes": "    gpus: 16\n    topology: {scope: rack, max_nodes: 2}\n",
    "pair": "    gpus: 8\n    topology: {scope: node, min_gpu_bandwidth: 400 GB/s}\n",
    "fabric": "    gpus: 16\n    topology: {scope: rack, min_network_bandwidth: 400 Gb/s}\n",
    "model": (
        "    topology: {scope: node}\n    model: {parameters: 8B, weight_precision: fp8, kv_precision: fp16, "
        "layers: 32, attention_heads: 32, kv_heads: 8, head_dim: 128, context: 8192, batch: 4}\n"
    ),
}


@pytest.mark.parametrize("case", sorted(FALLBACK_CASES))
def test_a_job_that_asks_more_goes_to_the_rules_with_the_same_answer(
    pod: Revision, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setattr(placing, "ANSWERS", 0)
    job = _job_file(tmp_path, '    principal: User::"dan"\n' + FALLBACK_CASES[case])
    answer, was_plain = _admitted(pod, job, 10)
    assert not was_plain
    assert answer == _cli(pod, job, 10)


# Jobs that can never run (PLACE002, rules/placement/lib/never.dl): the pod's catalogue holds
# NVIDIA and AMD models (model_info, kind gpu); cuda runs on NVIDIA alone, rocm on AMD alone
# (vendor_software, verifier/sources/inventory/software.yaml). Each answer names the reason under
# "never", as `place` does, and the admission webhook's message says PLACE002 with it.
NO_MODEL = (
    "the accelerators it accepts (gpu.accepts, a node selector on the GPU product, a Slurm GPU type) "
    "name no model, family or vendor of the catalogue"
)
STACKS = (
    "every software alternative needs another vendor's stack than the accelerators it accepts run, "
    "or two vendors' stacks at once (CUDA on AMD, ROCm on NVIDIA)"
)
NEVER_CASES = {
    # Plain in shape (a count, a scope, accepts), but TPU-v5p is no model, family or vendor of
    # the catalogue: the plain path sends it to the rules, which say why.
    "tpu": ("    gpus: 8\n    gpu: {accepts: [TPU-v5p]}\n    topology: {scope: node}\n", NO_MODEL),
    # One alternative asking CUDA (NVIDIA) and ROCm (AMD) at once.
    "stacks": ('    gpus: 8\n    topology: {scope: node}\n    software: {cuda: ">=12.0", rocm: ">=6.0"}\n', STACKS),
}


@pytest.mark.parametrize("case", sorted(NEVER_CASES))
def test_a_job_that_can_never_run_is_said_so_as_the_cli_says_it(
    pod: Revision, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setattr(placing, "ANSWERS", 0)
    body, reason = NEVER_CASES[case]
    job = _job_file(tmp_path, '    principal: User::"dan"\n' + body)
    answer, was_plain = _admitted(pod, job, 1)
    assert not was_plain
    assert answer == _cli(pod, job, 1)
    (only,) = json.loads(answer)["jobs"]
    assert (only["never"], only["placeable"], only["placements"]) == ([reason], False, [])
    text = yaml.safe_load(job.read_text())
    review = Review("uid-1", "CREATE", text)
    response, allowed = review_doc(pod, review)
    message = cast("dict[str, Any]", response["response"])["status"]["message"]
    assert not allowed and f"job probe can never run on any node (PLACE002: {reason})" in message
    assert "fits nowhere" not in message


def test_a_plain_job_accepting_a_catalogue_word_stays_plain(
    pod: Revision, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # B200 is a family of the catalogue (B200-GB200-186GB, B200-HGX-180GB) that the pod has none
    # of: placeable nowhere now (stage model, 0 of 8 on each node) but not never; judged plain.
    monkeypatch.setattr(placing, "ANSWERS", 0)
    job = _job_file(tmp_path, '    principal: User::"dan"\n    gpus: 8\n    gpu: {accepts: [B200]}\n')
    answer, was_plain = _admitted(pod, job, 1)
    assert was_plain
    assert answer == _cli(pod, job, 1)
    (only,) = json.loads(answer)["jobs"]
    assert only["never"] == [] and only["why_not"][0]["requirement"] == "model"


def test_an_excluded_label_on_too_many_objects_goes_to_the_rules(
    pod: Revision, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tenant research labels the 8 nodes: over a bound of 7, the rules judge it (the same answer).
    monkeypatch.setattr(placing, "ANSWERS", 0)
    monkeypatch.setattr(plain, "MAX_LABELLED", 7)
    job = _job_file(tmp_path, PLAIN_CASES["tenant"][0])
    answer, was_plain = _admitted(pod, job, 10)
    assert not was_plain
    assert answer == _cli(pod, job, 10)


def test_which_shipped_jobs_are_plain() -> None:
    # finetune.sbatch asks 8 H100 (accepts) on a node; hpc.yaml FP64, 80 GB and no quarantine:
    # plain. kueue-pretrain asks max_nodes, portable.yaml software, notebooks MIG, the others a
    # model: the rules.
    jobs = ROOT / "inventories" / "jobs"
    files = [
        *sorted(jobs.glob("*.yaml")),
        jobs / "schedulers" / "finetune.sbatch",
        jobs / "schedulers" / "kueue-pretrain.yaml",
    ]
    acts_as = parse_rules(("namespace=Team", "account=Team"))
    found = {f.name: [is_plain(j) for j in jobs_to_place([f], True, acts_as).jobs] for f in files}
    assert {name for name, flags in found.items() if all(flags)} == {"finetune.sbatch", "hpc.yaml"}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory, engine: str) -> Revision:
    folder = tmp_path_factory.mktemp("plain-mixed")
    return build_revision(ServeConfig((copy_inputs(folder, "mixed-fleet.yaml"),)))


# The mixed fleet has what the pod lacks: GPUs down and nodes drained (stage healthy), several
# tenants and a quarantine (authorization), four models with different memory and FP64. Plain
# jobs of several principals, scopes and sizes, each one after another on one evaluation.
MIXED_JOBS = [
    '    principal: User::"alice"\n    gpus: 2\n    topology: {scope: node}\n',
    '    principal: User::"bob"\n    gpus: 4\n    topology: {scope: nvlink_domain}\n',
    '    principal: User::"carol"\n    gpus: 8\n    gpu: {fp64: true, min_hbm: 80 GB}\n    topology: {scope: node}\n',
    '    principal: User::"hana"\n    gpus: 8\n    gpu: {accepts: [H100, MI300X]}\n    topology: {scope: node}\n'
    '    exclude: {quarantine: "true"}\n',
    '    principal: Team::"students"\n    gpus: 1\n    gpu: {accepts: [nvidia], min_hbm_bandwidth: 1 TB/s}\n'
    "    topology: {scope: node}\n",
    '    principal: User::"ivan"\n    gpus: 2\n    exclude: {tenant: [robotics, team-nlp]}\n',
    '    principal: User::"rita"\n    gpus: 1\n    topology: {scope: rack}\n',
]


def test_plain_jobs_on_the_mixed_fleet_answer_as_the_cli(
    mixed: Revision, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(placing, "ANSWERS", 0)
    for i, body in enumerate(MIXED_JOBS):
        (tmp_path / str(i)).mkdir()
        job = _job_file(tmp_path / str(i), body)
        for limit in (1, 0):
            answer, was_plain = _admitted(mixed, job, limit)
            assert was_plain, body
            assert answer == _cli(mixed, job, limit), body


# Seeded plain jobs on every shipped inventory, judged both ways on one revision: by
# PlainPlacement and by the rules (the same prepared placement without it). The shipped
# inventories between them hold what the classes must get right: multi-node NVLink domains
# (gb200-nvl72), GPUs with labels of their own and GPUs down (mixed fleet), an SoC GPU
# (edge-soc), identical nodes but one (dgx-h100-pod).
PRINCIPALS = ["alice", "bob", "carol", "hana", "dan", "fiona", "ivan", "rita", "sam"]
ACCEPTS = ["H100", "A100", "nvidia", "amd", "apple", "RTX-4090", "MI300X", "B200", "H100-SXM5-80GB"]
EXCLUDES = [
    '{quarantine: "true"}',
    "{tenant: [students, robotics]}",
    "{ticket: HW-4471}",
    "{zone: eu-west-1a}",
    "{zone: us-central-1b}",
    "{cluster: big}",
]


def _seeded_job(rng: random.Random) -> str:
    gpu: list[str] = []
    if rng.random() < 0.4:
        gpu.append(f"accepts: [{', '.join(rng.sample(ACCEPTS, rng.randint(1, 3)))}]")
    if rng.random() < 0.3:
        gpu.append(f"min_hbm: {rng.choice([16, 24, 80, 186, 192])} GB")
    if rng.random() < 0.2:
        gpu.append(f"min_hbm_bandwidth: {rng.choice([1, 3])} TB/s")
    if rng.random() < 0.2:
        gpu.append("fp64: true")
    body = f'    principal: User::"{rng.choice(PRINCIPALS)}"\n    gpus: {rng.choice([1, 2, 3, 4, 8, 9, 16, 72, 73])}\n'
    body += f"    topology: {{scope: {rng.choice(['node', 'nvlink_domain', 'rack', 'any'])}}}\n"
    if gpu:
        body += f"    gpu: {{{', '.join(gpu)}}}\n"
    if rng.random() < 0.3:
        body += f"    exclude: {rng.choice(EXCLUDES)}\n"
    return body


SEEDED = 30
"""Seeded jobs per inventory: all of them on the memory engine; on DuckDB (some 0.4 s a job by the
rules) the first DUCKDB_SEEDED of them by default, all in the slow run."""
DUCKDB_SEEDED = 6
INVENTORIES = ["mixed-fleet.yaml", "dgx-h100-pod.yaml", "gb200-nvl72.yaml", "edge-soc.yaml"]


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_seeded_plain_jobs_answer_as_the_rules_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, inventory: str
) -> None:
    _seeded(tmp_path, monkeypatch, inventory, SEEDED if engine == "memory" else DUCKDB_SEEDED)


@pytest.mark.slow
@pytest.mark.parametrize("inventory", INVENTORIES)
def test_every_seeded_plain_job_answers_as_the_rules_do_on_duckdb(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, inventory: str
) -> None:
    if engine != "duckdb":
        pytest.skip("the default run judges every seeded job on the memory engine")
    _seeded(tmp_path, monkeypatch, inventory, SEEDED)


def _seeded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inventory: str, count: int) -> None:
    """The first `count` seeded plain jobs on `inventory`, placed by PlainPlacement and by the rules:
    the same answer (the seed is the inventory's, so the first jobs are the same whatever `count`).
    """
    monkeypatch.setattr(placing, "ANSWERS", 0)
    revision = build_revision(ServeConfig((copy_inputs(tmp_path / "inputs", inventory),)))
    prepared = _prepared(revision)
    kept = prepared._plain
    assert kept is not None
    rng = random.Random(f"{inventory}-39")
    for i in range(count):
        job = _job_file(tmp_path, _seeded_job(rng))
        jobs = jobs_to_place([job], True, parse_rules(())).jobs
        limit = rng.choice([0, 1, 3, 10])
        (named,) = jobs
        assert is_plain(named), job.read_text()
        fast = prepared.place(jobs, limit)
        monkeypatch.setattr(prepared, "_plain", None)
        slow = prepared.place(jobs, limit)
        monkeypatch.setattr(prepared, "_plain", kept)
        assert fast is not None and slow is not None
        assert render_json(fast) == render_json(slow), f"job {i}:\n{job.read_text()}"
    assert prepared.plain == count
