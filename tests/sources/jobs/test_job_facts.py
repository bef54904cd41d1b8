"""Job facts: exact rows for a small job file, and every relation declared in rules/schema.dl."""

from __future__ import annotations

from pathlib import Path

from verifier.engine.parser import parse_program
from verifier.facts.jobs import JOB_RELATIONS, job_facts
from verifier.sources.jobs import load_jobs, load_jobs_text

ROOT = Path(__file__).resolve().parents[3]

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: train
    principal: Team::"hpc"
    gpus: 16
    replicas: 2
    gpu: {accepts: [H100, MI300X], min_hbm: 80 GB, min_hbm_bandwidth: 3 TB/s, fp64: true}
    topology: {scope: rack, max_nodes: 2, min_gpu_bandwidth: 400 GB/s, min_network_bandwidth: 400 Gb/s,
               rail_aligned: true}
    software: [{cuda: ">=12.4", nccl: ">=2.18"}, {rocm: ">=6.1"}]
    exclude: {quarantine: "true", tenant: [students, robotics]}
    model: {parameters: 70B, weight_precision: fp8, layers: 80, kv_heads: 8, head_dim: 128,
            context: 32768, batch: 16}
  - name: any
    principal: alice
    gpus: 1
    gpu: {fp64: false}
    topology: {rail_aligned: false}
  - name: slices
    principal: alice
    gpus: 9
    gpu: {mig: 1g.10gb}
"""


def test_exact_rows() -> None:
    facts = job_facts(load_jobs_text(JOBS, "jobs.yaml"))
    layouts = {(tp, pp): mb for job, tp, pp, mb in facts.pop("job_layout") if job == "train"}
    # One replica is 248,798,691,840 B (70,000 + 7,000 + 171,799 MB); every GPU keeps 10% free.
    assert layouts[(1, 1)] == 276_443  # 248,798.69184 MB / 0.9 = 276,442.99 -> 276,443
    assert layouts[(8, 1)] == 34_556  # / 8: 31,099.84 MB / 0.9 = 34,555.4
    # TP=16 > 8 KV heads: each KV head is replicated on 2 GPUs, so KV divides by 8, not 16:
    # 77,000 MB / 16 + 171,798.69 MB / 8 = 4,812.5 + 21,474.84 = 26,287.34 MB / 0.9 = 29,208.2
    assert layouts[(16, 1)] == 29_209
    # PP=3 over 80 layers: the largest stage has 27 layers: 34,555.4 MB * 27 / 80 = 11,662.5
    assert layouts[(8, 3)] == 11_663
    assert (8, 4) in layouts and (8, 41) not in layouts  # PP 41..79 give the same 2-layer stage as PP 40
    assert facts == {
        "job": [("train", "hpc", 16), ("any", "alice", 1), ("slices", "alice", 9)],
        "job_need": [
            ("train", "min_hbm_mb", 80_000),
            ("train", "min_hbm_mbps", 3_000_000),
            ("train", "fp64", 1),
            ("train", "min_pair_mbps", 400_000),
            ("train", "min_fabric_mbps", 50_000),
            ("train", "max_nodes", 2),
            ("train", "rail_aligned", 1),
            ("train", "hbm_per_replica_mb", 248_799),  # 70,000 + 7,000 + 171,799 (docs/jobs.md)
            ("train", "replicas", 2),
        ],
        "job_scope": [("train", "rack"), ("any", "any"), ("slices", "any")],
        "job_accepts": [("train", "H100"), ("train", "MI300X")],
        "job_stack": [
            ("train", "cuda", "cuda", 12004),
            ("train", "cuda", "nccl", 2018),
            ("train", "rocm", "rocm", 6001),
        ],
        "job_exclude": [
            ("train", "quarantine", "true"),
            ("train", "tenant", "students"),
            ("train", "tenant", "robotics"),
        ],
        "job_mig": [("slices", "1g.10gb")],
        "job_unit": [("train", "GPUs"), ("any", "GPUs"), ("slices", "MIG 1g.10gb instances")],
    }


def test_relations_match_schema() -> None:
    path = ROOT / "rules" / "schema.dl"
    program = parse_program(path.read_text(encoding="utf-8"), str(path))
    schema = {d.name: tuple(c.type for c in d.columns) for d in program.declarations if d.is_input}
    facts = job_facts(load_jobs([ROOT / "inventories" / "jobs"]))
    assert set(facts) == set(JOB_RELATIONS)
    for name, rows in facts.items():
        types = schema[name]
        assert rows or name == "job_need", name
        for row in rows:
            assert len(row) == len(types), (name, row)
            for value, typ in zip(row, types, strict=True):
                assert isinstance(value, int if typ == "number" else str) and not isinstance(value, bool)


def test_examples_sizes() -> None:
    facts = job_facts(load_jobs([ROOT / "inventories" / "jobs"]))
    needs = {(j, k): v for j, k, v in facts["job_need"]}
    assert needs[("llm-pretrain-400b", "hbm_per_replica_mb")] == 7_000_000
    assert needs[("chat-8b-serving", "hbm_per_replica_mb")] == 13_095
    assert needs[("moe-train-128", "hbm_per_replica_mb")] == 30_800_000
    scopes = {row[0]: row[1] for row in facts["job_scope"]}
    assert scopes["llm-pretrain-400b"] == scopes["moe-train-128"] == "nvlink_domain"
