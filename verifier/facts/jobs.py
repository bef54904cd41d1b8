"""Jobs as rows of the job relations declared in rules/schema.dl (job, job_need, ...).

`job_facts(jobs)` returns `{relation: [row, ...]}` with every relation of JOB_RELATIONS
present (possibly empty), rows in the order the jobs were written. A job with a model also
gets one job_layout row per TP x PP layout its heads allow (verifier/sources/jobs/layout.py). Only requirements a
job states (or derives from its model) produce job_need rows; absence means "no limit".
"""

from __future__ import annotations

from verifier.sources.jobs.layout import layouts
from verifier.sources.jobs.memory import replica_memory
from verifier.sources.jobs.spec import Job, Jobs

Row = tuple[str | int, ...]

JOB_RELATIONS: frozenset[str] = frozenset(
    {
        "job",
        "job_need",
        "job_scope",
        "job_accepts",
        "job_stack",
        "job_exclude",
        "job_mig",
        "job_unit",
        "job_layout",
    }
)
"""Every relation emitted; their columns are declared in rules/schema.dl (a test holds the rows to it)."""


def job_needs(job: Job) -> list[tuple[str, int]]:
    """The (key, value) needs of one job, in a fixed key order."""
    figures: list[tuple[str, int | None]] = [
        ("min_hbm_mb", job.min_hbm_mb),
        ("min_hbm_mbps", job.min_hbm_mbps),
        ("fp64", 1 if job.fp64 else None),
        ("min_pair_mbps", job.min_pair_mbps),
        ("min_fabric_mbps", job.min_fabric_mbps),
        ("max_nodes", job.max_nodes),
        ("min_nodes", job.min_nodes),
        ("rail_aligned", 1 if job.rail_aligned else None),
        ("hbm_per_replica_mb", replica_memory(job.model).total_mb if job.model is not None else None),
        ("replicas", job.replicas),
    ]
    return [(key, value) for key, value in figures if value is not None]


def _unit(job: Job) -> str:
    """What `job(_, _, gpus)` counts: MIG instances, replicas (a model without declared GPUs) or GPUs."""
    if job.mig is not None:
        return f"MIG {job.mig} instances"
    if job.model is not None and not job.gpus_declared:
        return "replica(s) of the model"
    return "GPUs"


def job_facts(jobs: Jobs) -> dict[str, list[Row]]:
    """Rows per job relation."""
    out: dict[str, list[Row]] = {name: [] for name in sorted(JOB_RELATIONS)}
    for job in jobs:
        name = job.name
        out["job"].append((name, job.principal, job.gpus))
        out["job_need"].extend((name, k, v) for k, v in job_needs(job))
        out["job_scope"].append((name, job.scope))
        out["job_accepts"].extend((name, what) for what in job.accepts)
        for option in job.stack:
            out["job_stack"].extend((name, option.name, c, v) for c, v in option.requires)
        out["job_exclude"].extend((name, k, v) for k, v in job.exclude)
        if job.mig is not None:
            out["job_mig"].append((name, job.mig))
        if job.model is not None:
            out["job_layout"].extend((name, lay.tp, lay.pp, lay.gpu_mb) for lay in layouts(job.model))
        out["job_unit"].append((name, _unit(job)))
    return out
