"""Memory one replica of a model needs, from the model's description (docs/jobs.md).

All arithmetic is exact (integers and fractions of bytes); the total is rounded up to
whole MB (10^6 bytes), since a requirement must never be understated.

Inference:
    weights     = parameters * bytes(weight_precision)
    kv_cache    = 2 * layers * kv_heads * head_dim * context * batch * bytes(kv_precision)
                  (keys and values, every layer; only when the shape is given)
    activations = `activations` as written, else 10% of the weights
Training (mixed precision, the ZeRO paper's accounting, nothing sharded):
    state       = parameters * 16 bytes with Adam/AdamW: 2 (bf16/fp16 weights) + 2 (gradients)
                  + 4 (fp32 master weights) + 8 (two fp32 moments); fp32 training: 4 + 4 + 8,
                  also 16. SGD with momentum: 12 (no second moment).
    activations = `activations` as written, else 10% of the state. Real training activations
                  depend on sequence length, micro-batch and checkpointing: write them.
An MoE keeps every expert resident: memory uses `parameters`, not `active_parameters`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from verifier.sources.jobs.spec import PRECISION_BYTES, ModelSpec

MB = 10**6
ACTIVATION_FRACTION = Fraction(1, 10)
"""Default activations: this fraction of the weights (training: the state). The runtime reserve
(CUDA context, NCCL buffers, fragmentation) is apart: gpu_memory_utilization, layout.py."""

TRAINING_BYTES_PER_PARAMETER = {"adam": 16, "adamw": 16, "sgd": 12}


@dataclass(frozen=True)
class MemoryNeed:
    """One replica's memory, in bytes per part (exact) and the total in whole MB (rounded up)."""

    weights_bytes: Fraction  # inference: weights; training: weights + gradients + optimizer state
    kv_cache_bytes: int
    activations_bytes: Fraction

    @property
    def total_bytes(self) -> Fraction:
        return self.weights_bytes + self.kv_cache_bytes + self.activations_bytes

    @property
    def total_mb(self) -> int:
        return ceil_mb(self.total_bytes)

    @property
    def weights_mb(self) -> int:
        return ceil_mb(self.weights_bytes)

    @property
    def kv_cache_mb(self) -> int:
        return ceil_mb(Fraction(self.kv_cache_bytes))


def ceil_mb(nbytes: Fraction) -> int:
    """Bytes to MB, rounded up."""
    return -((-nbytes.numerator) // (nbytes.denominator * MB))


def precision_bytes(name: str) -> Fraction:
    num, den = PRECISION_BYTES[name]
    return Fraction(num, den)


def kv_cache_bytes(model: ModelSpec) -> int:
    """2 (K and V) * layers * kv_heads * head_dim * context * batch * bytes(kv_precision); 0 without a shape."""
    if model.mode != "inference" or None in (model.layers, model.kv_heads, model.head_dim, model.context):
        return 0
    assert model.layers and model.kv_heads and model.head_dim and model.context
    per_value = precision_bytes(model.kv_precision)
    total = 2 * model.layers * model.kv_heads * model.head_dim * model.context * model.batch * per_value
    return int(total) if total.denominator == 1 else int(total) + 1


def replica_memory(model: ModelSpec) -> MemoryNeed:
    """The memory one replica needs (see the module docstring for the formulas)."""
    if model.mode == "training":
        per_param = Fraction(TRAINING_BYTES_PER_PARAMETER[model.optimizer or "adam"])
        static = model.parameters * per_param
        kv = 0
    else:
        static = model.parameters * precision_bytes(model.weight_precision)
        kv = kv_cache_bytes(model)
    if model.activations_mb is not None:
        activations = Fraction(model.activations_mb * MB)
    else:
        activations = static * ACTIVATION_FRACTION
    return MemoryNeed(weights_bytes=static, kv_cache_bytes=kv, activations_bytes=activations)
