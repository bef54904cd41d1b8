"""Parallel layouts a model replica can start with: tensor parallel x pipeline parallel (docs/jobs.md).

A serving or training engine splits one replica over TP x PP GPUs. Not every count is a layout:

- TP is a power of two (vLLM, TensorRT-LLM and Megatron-LM shard by powers of two in
  practice; NCCL's tree and ring all-reduce are tuned for them), at most MAX_TP.
- TP divides the attention heads (vLLM `ModelConfig.verify_with_parallel_config`: "Total
  number of attention heads must be divisible by tensor parallel size"; Megatron-LM the same).
- With KV heads (GQA/MQA): TP divides the KV heads, or, when TP is larger, TP is a multiple
  of them and each KV head is replicated TP / kv_heads times (vLLM `QKVParallelLinear`).
  A replicated head costs its KV cache on every GPU that holds it.
- PP is any stage count from 1 to the layers (vLLM `get_pp_indices` splits unevenly; the
  largest stage, ceil(layers / PP) layers, decides the memory), at most MAX_PP.

Per GPU the replica's memory is divided by TP (and KV by min(TP, kv_heads)) and scaled by the
largest stage's share of the layers. The GPU must hold that share with the runtime reserve left
free: `gpu_memory_utilization` (vLLM's flag, default 0.9: 10% kept for the CUDA context, NCCL
buffers and fragmentation), so the GPU memory needed is share / utilization, rounded up to MB.

The rules (rules/placement/lib/) then pick per GPU memory and scale-up domain size the layout
with the fewest pipeline stages and then the smallest TP, TP inside one scale-up domain: TP
all-reduces every layer and needs NVLink bandwidth; PP stages exchange activations only once
per micro-batch, so they may cross the fabric (vLLM's distributed serving guide: TP within a
node, PP across nodes).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from verifier.sources.jobs.memory import MemoryNeed, ceil_mb, replica_memory
from verifier.sources.jobs.spec import ModelSpec

MAX_TP = 64
"""The largest TP tried: the largest power of two inside a GB200 NVL72 rack's 72-GPU domain."""
MAX_PP = 64
"""The most pipeline stages tried (Megatron-LM's largest published runs use PP <= 64)."""


@dataclass(frozen=True)
class Layout:
    """One TP x PP layout and what each of its GPUs must hold."""

    tp: int
    pp: int
    share_bytes: Fraction  # the replica's memory on the fullest GPU (largest stage)
    gpu_mb: int  # GPU memory needed: share / utilization, rounded up to MB

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    @property
    def share_mb(self) -> int:
        return ceil_mb(self.share_bytes)


def tp_sizes(model: ModelSpec) -> tuple[int, ...]:
    """The tensor parallel sizes the model's heads allow, smallest first (always including 1)."""
    out = []
    tp = 1
    while tp <= MAX_TP:
        if tp_allowed(model, tp):
            out.append(tp)
        tp *= 2
    return tuple(out)


def tp_allowed(model: ModelSpec, tp: int) -> bool:
    """Whether TP splits the model's attention and KV heads evenly (module docstring)."""
    if model.attention_heads is not None and model.attention_heads % tp:
        return False
    kv = model.kv_heads
    return kv is None or (kv % tp == 0 if tp <= kv else tp % kv == 0)


def pp_sizes(model: ModelSpec) -> tuple[int, ...]:
    """Pipeline stage counts worth trying: for each largest-stage size, the fewest stages giving it."""
    if model.layers is None:
        return tuple(range(1, MAX_PP + 1))
    seen: dict[int, int] = {}
    for pp in range(1, min(model.layers, MAX_PP) + 1):
        seen.setdefault(-(-model.layers // pp), pp)
    return tuple(sorted(seen.values()))


def stage_fraction(model: ModelSpec, pp: int) -> Fraction:
    """The largest stage's share of the layers: ceil(layers / PP) / layers, or 1 / PP without layers."""
    if model.layers is None:
        return Fraction(1, pp)
    return Fraction(-(-model.layers // pp), model.layers)


def gpu_share(need: MemoryNeed, model: ModelSpec, tp: int, pp: int) -> Fraction:
    """Bytes on the fullest GPU of a TP x PP layout: weights and activations / TP, KV / min(TP, kv_heads)."""
    kv_split = min(tp, model.kv_heads) if model.kv_heads is not None else tp
    per_stage = (need.weights_bytes + need.activations_bytes) / tp + Fraction(need.kv_cache_bytes, kv_split)
    return per_stage * stage_fraction(model, pp)


def layouts(model: ModelSpec) -> list[Layout]:
    """Every layout worth trying, by (PP, TP); the rules pick one per GPU memory and domain size."""
    need = replica_memory(model)
    out = []
    for pp in pp_sizes(model):
        for tp in tp_sizes(model):
            share = gpu_share(need, model, tp, pp)
            out.append(Layout(tp, pp, share, ceil_mb(share / model.gpu_memory_utilization)))
    return out


def choose(model: ModelSpec, gpu_mb: int, max_tp: int) -> Layout | None:
    """The layout the rules choose on GPUs of `gpu_mb` MB in scale-up domains of `max_tp` GPUs
    (fewest stages, then smallest TP), or None. Tests hold the rules to this.
    """
    fits = [lay for lay in layouts(model) if lay.gpu_mb <= gpu_mb and lay.tp <= max_tp]
    return min(fits, key=lambda lay: (lay.pp, lay.tp), default=None)


def heads_text(model: ModelSpec) -> str:
    """What constrains TP, in words, for a derivation."""
    if model.attention_heads is not None and model.kv_heads is not None:
        return (
            f"powers of two dividing the {model.attention_heads} attention heads "
            f"and dividing or multiplying the {model.kv_heads} KV heads"
        )
    if model.attention_heads is not None:
        return f"powers of two dividing the {model.attention_heads} attention heads"
    if model.kv_heads is not None:
        return f"powers of two dividing or multiplying the {model.kv_heads} KV heads (attention heads not given)"
    return f"powers of two up to {MAX_TP} (no heads given)"
