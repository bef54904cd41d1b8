"""Jobs to place: job files (kind: Jobs, Kubernetes workloads, Slurm batch scripts) to a validated
model and its memory need. `read_jobs` reads every format; `load_jobs` topolog's own only.
"""

from verifier.sources.jobs.loader import load_jobs, load_jobs_text
from verifier.sources.jobs.memory import MemoryNeed, replica_memory
from verifier.sources.jobs.principal_rules import PrincipalRule, parse_rules
from verifier.sources.jobs.read import read_jobs, read_jobs_text
from verifier.sources.jobs.spec import Job, Jobs, ModelSpec, StackOption

__all__ = [
    "Job",
    "Jobs",
    "MemoryNeed",
    "ModelSpec",
    "PrincipalRule",
    "StackOption",
    "load_jobs",
    "load_jobs_text",
    "parse_rules",
    "read_jobs",
    "read_jobs_text",
    "replica_memory",
]
