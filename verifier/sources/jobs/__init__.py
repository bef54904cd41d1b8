"""Jobs to place: job files (kind: Jobs) to a validated model and its memory need."""

from verifier.sources.jobs.loader import load_jobs, load_jobs_text
from verifier.sources.jobs.memory import MemoryNeed, replica_memory
from verifier.sources.jobs.spec import Job, Jobs, ModelSpec, StackOption

__all__ = [
    "Job",
    "Jobs",
    "MemoryNeed",
    "ModelSpec",
    "StackOption",
    "load_jobs",
    "load_jobs_text",
    "replica_memory",
]
