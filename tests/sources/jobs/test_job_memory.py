"""Memory per replica, against figures computed by hand (docs/jobs.md shows the same)."""

from __future__ import annotations

from fractions import Fraction

from verifier.sources.jobs.memory import ceil_mb, kv_cache_bytes, replica_memory
from verifier.sources.jobs.spec import ModelSpec


def _model(**kw: object) -> ModelSpec:
    base: dict[str, object] = {
        "parameters": 70 * 10**9,
        "active_parameters": None,
        "mode": "inference",
        "weight_precision": "fp8",
        "kv_precision": "fp16",
        "optimizer": None,
    }
    base.update(kw)
    return ModelSpec(**base)  # type: ignore[arg-type]


def test_70b_fp8_weights_fit_one_80gb_gpu() -> None:
    need = replica_memory(_model())
    assert need.weights_mb == 70_000
    assert need.kv_cache_bytes == 0
    assert need.activations_bytes == 7 * 10**9  # 10% of the weights
    assert need.total_mb == 77_000  # < 80,000 MB: one 80 GB GPU


def test_70b_fp8_with_32k_context_kv_cache_does_not_fit() -> None:
    m = _model(layers=80, kv_heads=8, head_dim=128, context=32768, batch=16)
    # 2 * 80 * 8 * 128 * 32768 * 16 * 2 bytes
    assert kv_cache_bytes(m) == 171_798_691_840
    need = replica_memory(m)
    assert need.kv_cache_mb == 171_799
    assert need.total_mb == 70_000 + 7_000 + 171_799  # 248,799 MB: 4 x 80 GB GPUs
    assert need.total_mb > 80_000


def test_precisions() -> None:
    assert replica_memory(_model(weight_precision="bf16")).weights_mb == 140_000
    assert replica_memory(_model(weight_precision="fp32")).weights_mb == 280_000
    assert replica_memory(_model(weight_precision="int4")).weights_mb == 35_000
    assert replica_memory(_model(weight_precision="int8")).weights_mb == 70_000
    # int4 KV: half a byte per value, odd totals round up to a whole byte
    assert kv_cache_bytes(_model(layers=1, kv_heads=1, head_dim=1, context=1, kv_precision="int4")) == 1


def test_training_adam_is_16_bytes_per_parameter() -> None:
    m = _model(mode="training", weight_precision="bf16", optimizer="adam")
    need = replica_memory(m)
    assert need.weights_bytes == 70 * 10**9 * 16  # 1,120,000 MB of state
    assert need.total_mb == 1_120_000 + 112_000  # + 10% activations by default
    sgd = replica_memory(_model(mode="training", weight_precision="bf16", optimizer="sgd"))
    assert sgd.weights_mb == 840_000


def test_written_activations_replace_the_default() -> None:
    m = _model(
        parameters=400 * 10**9, mode="training", weight_precision="bf16", optimizer="adam", activations_mb=600_000
    )
    assert replica_memory(m).total_mb == 7_000_000


def test_moe_memory_uses_all_parameters() -> None:
    dense = replica_memory(_model(parameters=47 * 10**9))
    moe = replica_memory(_model(parameters=47 * 10**9, active_parameters=13 * 10**9))
    assert dense == moe


def test_ceil_mb_rounds_up() -> None:
    assert ceil_mb(Fraction(1)) == 1
    assert ceil_mb(Fraction(10**6)) == 1
    assert ceil_mb(Fraction(10**6 + 1)) == 2
