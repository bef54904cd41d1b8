"""The job model: what a job file says, validated and in fixed units (docs/jobs.md).

Sizes are MB (10^6 bytes), bandwidth MB/s per direction, versions major*1000 + minor,
as everywhere in topolog. Every object keeps the place it was written.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction

from verifier.core.errors import Diagnostic, SourceLocation

JOB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
"""What a job's name may be, whatever format wrote it: it travels into facts, reports and SARIF."""
BATCH_JOB_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,199}(?<! )$")
"""A Slurm job's name: sbatch takes `--job-name="my job"`, so a space (never first or last) is kept
as part of it, as squeue shows it; the rest is JOB_NAME's."""

SCOPES = ("nvlink_domain", "node", "rack", "any")
"""How close together a job's GPUs must be, tightest first."""

PRECISION_BYTES: dict[str, tuple[int, int]] = {
    "fp32": (4, 1),
    "fp16": (2, 1),
    "bf16": (2, 1),
    "fp8": (1, 1),
    "int8": (1, 1),
    "fp4": (1, 2),
    "int4": (1, 2),
}
"""Bytes per value as a fraction (numerator, denominator): int4 is half a byte."""

MODES = ("inference", "training")
DEFAULT_UTILIZATION = Fraction(9, 10)
"""vLLM's default gpu_memory_utilization: the engine may use 90% of each GPU's memory."""
OPTIMIZERS = ("adam", "adamw", "sgd")


@dataclass(frozen=True)
class ModelSpec:
    """The model a job runs, for sizing its memory (verifier/sources/jobs/memory.py)."""

    parameters: int  # all parameters (an MoE's total, every expert resident)
    active_parameters: int | None  # MoE: parameters used per token (recorded; memory needs all)
    mode: str  # inference or training
    weight_precision: str  # a key of PRECISION_BYTES
    kv_precision: str  # inference KV cache precision
    optimizer: str | None  # training only: adam, adamw or sgd
    layers: int | None = None  # inference KV cache shape: all four or none
    kv_heads: int | None = None
    head_dim: int | None = None
    context: int | None = None  # tokens per sequence
    batch: int = 1  # sequences served at once
    activations_mb: int | None = None  # written per replica; None: the documented default
    attention_heads: int | None = None  # constrains tensor parallelism (verifier/sources/jobs/layout.py)
    gpu_memory_utilization: Fraction = DEFAULT_UTILIZATION  # share of each GPU's memory the engine may use
    loc: SourceLocation = field(default=SourceLocation("<jobs>"), compare=False)


@dataclass(frozen=True)
class StackOption:
    """One software alternative: every (component, minimum version) must hold on the node."""

    name: str
    requires: tuple[tuple[str, int], ...]  # (component, major*1000 + minor), in the order written
    loc: SourceLocation = field(default=SourceLocation("<jobs>"), compare=False)


@dataclass(frozen=True)
class Job:
    name: str
    principal: str  # the principal id ("hpc"), as permitted/3 names it
    principal_type: str | None  # Team, User or ServiceAccount when written as a Cedar uid
    gpus: int  # declared GPUs (replicas when not declared)
    gpus_declared: bool
    replicas: int | None = None  # stated, or 1 when a model is given
    accepts: tuple[str, ...] = ()  # empty: any GPU
    min_hbm_mb: int | None = None
    min_hbm_mbps: int | None = None
    fp64: bool = False
    scope: str = "any"
    max_nodes: int | None = None
    min_nodes: int | None = None  # at least this many nodes, an equal share of the GPUs on each (Slurm's -N)
    min_pair_mbps: int | None = None
    min_fabric_mbps: int | None = None
    rail_aligned: bool = False
    stack: tuple[StackOption, ...] = ()  # empty: any stack
    exclude: tuple[tuple[str, str], ...] = ()
    model: ModelSpec | None = None
    description: str | None = None
    mig: str | None = None  # a MIG profile: `gpus` then counts instances of it
    loc: SourceLocation = field(default=SourceLocation("<jobs>"), compare=False)
    mig_loc: SourceLocation | None = field(default=None, compare=False)
    """Where `mig` is written, when the job's format has such a line (else problems are reported at `loc`)."""
    notes: tuple[Diagnostic, ...] = field(default=(), compare=False)
    """What the job's spec says that topolog does not judge (a scheduler's own format: CPU, images, ...)."""


@dataclass(frozen=True)
class Jobs:
    """Every job of the files loaded together, by name, in the order written."""

    jobs: dict[str, Job]
    files: tuple[str, ...] = ()
    notes: tuple[Diagnostic, ...] = ()
    """What the files hold besides jobs (a Service beside a LeaderWorkerSet, a CPU-only Pod): not placed."""

    def __iter__(self) -> Iterator[Job]:
        return iter(self.jobs.values())

    def __len__(self) -> int:
        return len(self.jobs)
