"""Job files: every field read into the model, every mistake reported with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory.units import UnitError
from verifier.sources.jobs import load_jobs, load_jobs_text
from verifier.sources.jobs.loader import parse_count

ROOT = Path(__file__).resolve().parents[3]

FULL = """\
apiVersion: topolog.dev/v1
kind: Jobs
metadata: {name: example}
jobs:
  - name: big
    principal: Team::"hpc"
    description: everything written
    gpus: 16
    replicas: 2
    gpu:
      accepts: [H100-SXM5-80GB, MI300X, nvidia]
      min_hbm: 80 GB
      min_hbm_bandwidth: 3 TB/s
      fp64: true
    topology:
      scope: rack
      max_nodes: 2
      min_gpu_bandwidth: 400 GB/s
      min_network_bandwidth: 400 Gb/s
      rail_aligned: true
    software:
      - {cuda: ">=12.4", nccl: ">=2.18"}
      - {rocm: "6.1"}
    exclude:
      quarantine: "true"
      tenant: [students, robotics]
    model:
      parameters: 70B
      active_parameters: 13B
      weight_precision: fp8
      kv_precision: fp16
      layers: 80
      kv_heads: 8
      head_dim: 128
      context: 32768
      batch: 16
      mode: inference
  - name: small
    principal: alice
    gpus: 1
"""


def _errors(text: str) -> list[str]:
    with pytest.raises(TopologError) as err:
        load_jobs_text(text, "jobs.yaml")
    return [str(d) for d in err.value.diagnostics]


def _one(job: str) -> str:
    return "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n" + job


def test_every_field() -> None:
    jobs = load_jobs_text(FULL, "jobs.yaml")
    assert list(jobs.jobs) == ["big", "small"]
    big = jobs.jobs["big"]
    assert (big.principal, big.principal_type, big.gpus, big.gpus_declared, big.replicas) == (
        "hpc",
        "Team",
        16,
        True,
        2,
    )
    assert big.description == "everything written"
    assert big.accepts == ("H100-SXM5-80GB", "MI300X", "nvidia")
    assert (big.min_hbm_mb, big.min_hbm_mbps, big.fp64) == (80_000, 3_000_000, True)
    assert (big.scope, big.max_nodes, big.min_pair_mbps, big.min_fabric_mbps, big.rail_aligned) == (
        "rack",
        2,
        400_000,
        50_000,
        True,
    )
    assert [(o.name, o.requires) for o in big.stack] == [
        ("cuda", (("cuda", 12004), ("nccl", 2018))),
        ("rocm", (("rocm", 6001),)),
    ]
    assert big.exclude == (("quarantine", "true"), ("tenant", "students"), ("tenant", "robotics"))
    m = big.model
    assert m is not None
    assert (m.parameters, m.active_parameters, m.weight_precision, m.kv_precision, m.mode) == (
        70 * 10**9,
        13 * 10**9,
        "fp8",
        "fp16",
        "inference",
    )
    assert (m.layers, m.kv_heads, m.head_dim, m.context, m.batch, m.optimizer) == (80, 8, 128, 32768, 16, None)
    assert str(big.loc) == "jobs.yaml:5:5"
    small = jobs.jobs["small"]
    assert (small.principal, small.principal_type, small.scope, small.replicas, small.model) == (
        "alice",
        None,
        "any",
        None,
        None,
    )
    assert small.stack == () and small.accepts == () and small.exclude == ()


def test_model_defaults_and_gpus_from_replicas() -> None:
    jobs = load_jobs_text(_one("  - {name: j, principal: x, replicas: 3, model: {parameters: 7B}}\n"), "j.yaml")
    j = jobs.jobs["j"]
    assert (j.gpus, j.gpus_declared, j.replicas) == (3, False, 3)
    assert j.model is not None
    assert (j.model.weight_precision, j.model.kv_precision, j.model.mode) == ("bf16", "fp16", "inference")
    t = load_jobs_text(_one("  - {name: t, principal: x, model: {parameters: 7B, mode: training}}\n"), "t.yaml")
    assert t.jobs["t"].model is not None and t.jobs["t"].model.optimizer == "adam"
    assert t.jobs["t"].gpus == 1 and t.jobs["t"].replicas == 1


def test_software_option_names() -> None:
    jobs = load_jobs_text(
        _one("""\
  - name: j
    principal: x
    gpus: 1
    software: [{cuda: ">=12.4"}, {cuda: ">=11.8", driver: ">=520"}, {rocm: ">=6.0"}]
"""),
        "j.yaml",
    )
    assert [o.name for o in jobs.jobs["j"].stack] == ["option1", "option2", "rocm"]
    single = load_jobs_text(_one("  - {name: j, principal: x, gpus: 1, software: {cuda: '>=12.4'}}\n"), "j.yaml")
    assert [o.name for o in single.jobs["j"].stack] == ["cuda"]


@pytest.mark.parametrize(
    ("raw", "count"),
    [
        ("70B", 70 * 10**9),
        ("1.5T", 15 * 10**11),
        ("350M", 350 * 10**6),
        ("7e9", 7 * 10**9),
        (1000, 1000),
        ("13 B", 13 * 10**9),
    ],
)
def test_parameter_counts(raw: object, count: int) -> None:
    assert parse_count(raw) == count


@pytest.mark.parametrize(
    ("raw", "fix"),
    [("1,5B", "'1.5B'"), ("1,000M", "'1000M'"), ("70,000,000,000", "'70000000000'")],
)
def test_parameter_count_with_a_comma_is_refused_never_guessed(raw: str, fix: str) -> None:
    """`1,5B` was read as 15 billion: a comma is a decimal comma or a separator, and neither is guessed."""
    with pytest.raises(UnitError, match="comma") as err:
        parse_count(raw)
    assert fix in str(err.value)


def test_unknown_keys_did_you_mean_with_lines() -> None:
    errs = _errors(
        _one("""\
  - name: j
    principal: x
    gpus: 1
    gpu: {min_hmb: 80 GB}
    topolgy: {scope: node}
    model: {parameters: 7B, contxt: 4096}
""")
    )
    assert any(e.startswith("jobs.yaml:7:11: unknown key 'min_hmb'") and "did you mean 'min_hbm'" in e for e in errs)
    assert any(e.startswith("jobs.yaml:8:5: unknown key 'topolgy'") and "did you mean 'topology'" in e for e in errs)
    assert any(e.startswith("jobs.yaml:9:29: unknown key 'contxt'") and "did you mean 'context'" in e for e in errs)


def test_mig_profile_read_and_checked() -> None:
    (job,) = load_jobs_text(_one("  - {name: j, principal: x, gpus: 9, gpu: {mig: 1g.10gb}}\n"), "jobs.yaml")
    assert (job.mig, job.gpus) == ("1g.10gb", 9)
    errs = _errors(_one("  - {name: j, principal: x, gpus: 1, gpu: {mig: 1g10gb}}\n"))
    assert len(errs) == 1 and errs[0].startswith("jobs.yaml:4:") and "must be a MIG profile such as" in errs[0]
    errs = _errors(_one("  - {name: j, principal: x, gpu: {mig: 1g.10gb}, model: {parameters: 7B}}\n"))
    assert len(errs) == 1 and "has both 'mig' and 'model'" in errs[0]


def test_all_problems_listed_with_places() -> None:
    errs = _errors("""\
apiVersion: topolog.dev/v2
kind: Jobs
jobs:
  - name: a
    principal: Robot::"r2"
    gpus: 0
  - name: b
    principal: x
    gpus: 2
    gpu: {min_hbm: 80 Gb, fp64: "yes", accepts: []}
    topology: {scope: nvlink, max_nodes: two, min_gpu_bandwidth: fast, rail_aligned: 1}
    software:
      - {cuda: "<13"}
      - {nccl: ">=2.18.3"}
      - {rocm: "latest"}
      - {}
    exclude: {tenant: []}
  - name: c
    principal: x
  - name: d
    principal: x
    gpus: 1
    replicas: 2
  - name: e
    principal: x
    gpus: 1
    model: {parameters: 7B, layers: 32, optimizer: adam, weight_precision: fp9}
  - name: f
    principal: x
    gpus: 1
    model: {parameters: 70B, active_parameters: 80B, mode: training, weight_precision: int4, context: 4096}
  - name: g
    principal: x
    gpus: 2
    topology: {scope: node, max_nodes: 2}
""")
    text = "\n".join(errs)
    expected = [
        "jobs.yaml:1:1: apiVersion is 'topolog.dev/v2'",
        "jobs.yaml:5:5: principal type 'Robot'",
        "jobs.yaml:6:5: 'gpus' in job 'a' is 0; expected a whole number of at least 1",
        "jobs.yaml:10:11: 'min_hbm' in gpu of job 'b': size '80 Gb' is in bits",
        "jobs.yaml:10:27: 'fp64' in gpu of job 'b' must be true or false",
        "jobs.yaml:10:40: 'accepts' in gpu of job 'b' is empty",
        "jobs.yaml:11:16: unknown scope 'nvlink' in topology of job 'b'; did you mean 'nvlink_domain'?",
        "jobs.yaml:11:31: 'max_nodes' in topology of job 'b' is 'two'; expected a whole number",
        "jobs.yaml:11:47: 'min_gpu_bandwidth' in topology of job 'b': cannot read bandwidth 'fast'",
        "jobs.yaml:11:72: 'rail_aligned' in topology of job 'b' must be true or false",
        "jobs.yaml:13:10: cuda in software of job 'b' uses '<'; only minimum versions",
        "jobs.yaml:14:10: nccl in software of job 'b' '>=2.18.3' names a patch level",
        "jobs.yaml:15:10: cannot read version 'latest' of rocm in software of job 'b'",
        "jobs.yaml:16:9: alternative 4 in software of job 'b' is empty",
        "jobs.yaml:17:15: 'tenant' in exclude of job 'b' is an empty list",
        "jobs.yaml:18:5: job 'c' has no 'gpus'",
        "jobs.yaml:23:5: job 'd' asks for 2 replicas on 1 GPUs; each replica needs at least one GPU",
        "jobs.yaml:23:5: 'replicas' in job 'd' needs a 'model'",
        "jobs.yaml:27:12: model of job 'e' gives part of the KV cache shape",
        "jobs.yaml:27:41: 'optimizer' in model of job 'e' applies to mode 'training' only",
        "jobs.yaml:27:58: unknown weight_precision 'fp9'",
        "jobs.yaml:31:30: active_parameters (80,000,000,000) exceed parameters",
        "jobs.yaml:31:70: training in model of job 'f' is sized for fp32 or mixed bf16/fp16 precision, not 'int4'",
        "jobs.yaml:31:94: 'context' in model of job 'f' sizes an inference KV cache",
        "jobs.yaml:35:29: job 'g' has scope 'node' and max_nodes 2",
    ]
    for e in expected:
        assert e in text, f"{e!r} not in:\n{text}"
    assert len(errs) == len(expected), text


def test_top_level_and_duplicates_across_files(tmp_path: Path) -> None:
    a = tmp_path / "a.yaml"
    b = tmp_path / "b.yaml"
    a.write_text(_one("  - {name: j, principal: x, gpus: 1}\n"), encoding="utf-8")
    b.write_text(_one("  - {name: k, principal: x, gpus: 1}\n  - {name: j, principal: y, gpus: 2}\n"), encoding="utf-8")
    with pytest.raises(TopologError) as err:
        load_jobs([a, b])
    (d,) = err.value.diagnostics
    assert str(d).startswith(f"{b}:5:6: job 'j' is defined twice (first at {a}:4:6)")
    errs = _errors("apiVersion: topolog.dev/v1\nkind: Inventory\njob: []\n")
    assert any("jobs.yaml:2:1: kind is 'Inventory'; expected 'Jobs'" in e for e in errs)
    assert any("jobs.yaml:3:1: unknown key 'job'" in e and "did you mean 'jobs'" in e for e in errs)
    assert any("has no 'jobs'" in e for e in errs)


def test_yaml_errors_have_places(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: topolog.dev/v1\nkind: Jobs\njobs: [\n", encoding="utf-8")
    with pytest.raises(TopologError) as err:
        load_jobs([bad])
    assert str(err.value).startswith(f"{bad}:")


def test_shipped_examples_load_and_name_known_principals() -> None:
    from verifier.sources.principals import load_principals

    jobs = load_jobs([ROOT / "inventories" / "jobs"])
    assert len(jobs) == 7
    principals = load_principals(ROOT / "inventories" / "principals.yml").principals
    for job in jobs:
        assert job.principal in principals, job.name
        if job.principal_type is not None:
            assert principals[job.principal].type == job.principal_type, job.name
