"""Jobs to place: job files (kind: Jobs) to a validated model, its memory need, and facts."""

from verifier.jobs.facts import JOB_RELATIONS, job_facts
from verifier.jobs.loader import load_jobs, load_jobs_text
from verifier.jobs.memory import MemoryNeed, replica_memory
from verifier.jobs.spec import Job, Jobs, ModelSpec, StackOption

__all__ = [
    "JOB_RELATIONS",
    "Job",
    "Jobs",
    "MemoryNeed",
    "ModelSpec",
    "StackOption",
    "job_facts",
    "load_jobs",
    "load_jobs_text",
    "replica_memory",
]
