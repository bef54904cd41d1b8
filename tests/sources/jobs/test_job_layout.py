"""TP x PP layouts of a replica (verifier/sources/jobs/layout.py), against arithmetic done by hand.

Conventions of every figure below: MB = 10^6 bytes; each GPU may use gpu_memory_utilization of
its memory (default 0.9, vLLM's), so a layout fits when its share per GPU / 0.9 <= the GPU's MB.
H100-SXM5-80GB: 80,000 MB in 8-GPU NVLink domains. Activations default to 10% of the weights.
The rules choose, of the layouts that fit, the fewest pipeline stages, then the smallest TP
(`choose` is the same choice; tests/placement/test_place_layout.py holds the rules to it).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs import load_jobs_text
from verifier.sources.jobs.layout import choose, layouts, pp_sizes, tp_allowed, tp_sizes
from verifier.sources.jobs.spec import ModelSpec

H100_MB = 80_000


def _model(**kw: object) -> ModelSpec:
    base: dict[str, object] = {
        "parameters": 70 * 10**9,
        "active_parameters": None,
        "mode": "inference",
        "weight_precision": "bf16",
        "kv_precision": "fp16",
        "optimizer": None,
    }
    base.update(kw)
    return ModelSpec(**base)  # type: ignore[arg-type]


def llama3_70b(context: int, batch: int) -> ModelSpec:
    """Llama-3-70B's shape: 80 layers, 64 attention heads, 8 KV heads, head_dim 128 (its config.json)."""
    return _model(layers=80, attention_heads=64, kv_heads=8, head_dim=128, context=context, batch=batch)


def test_llama3_70b_bf16_8k_context_is_tp4_on_h100() -> None:
    # weights 70e9 * 2 B = 140,000 MB; activations 14,000 MB;
    # KV 2 * 80 * 8 * 128 * 8192 * 4 * 2 B = 10,737,418,240 B = 10,737.42 MB; total 164,737.42 MB.
    # TP=1: 164,737.42 / 0.9 = 183,042 MB; TP=2: 82,368.71 / 0.9 = 91,521 MB: neither fits 80,000.
    # TP=4: 41,184.35 / 0.9 = 45,761 MB fits: 4 GPUs per replica (the old sizing said 3 GPUs:
    # ceil(164,738 / 80,000), a TP=3 that 64 heads cannot be split over).
    lay = choose(llama3_70b(8192, 4), H100_MB, 8)
    assert lay is not None and (lay.tp, lay.pp, lay.share_mb, lay.gpu_mb) == (4, 1, 41_185, 45_761)


def test_the_five_gpu_sizing_becomes_tp8() -> None:
    # 32k context, batch 16: KV 2 * 80 * 8 * 128 * 32768 * 16 * 2 B = 171,798.69 MB; total
    # 140,000 + 14,000 + 171,798.69 = 325,798.69 MB. The old sizing: ceil(325,799 / 80,000) = 5 H100,
    # which no engine starts (64 heads are not divisible by 5). TP=4: 81,449.67 / 0.9 = 90,500 MB,
    # too much; TP=8: 40,724.84 / 0.9 = 45,250 MB fits: TP=8 x PP=1.
    model = llama3_70b(32768, 16)
    assert 5 not in tp_sizes(model)
    lay = choose(model, H100_MB, 8)
    assert lay is not None and (lay.tp, lay.pp, lay.gpus, lay.gpu_mb) == (8, 1, 8, 45_250)
    assert all(lay.gpus != 5 or lay.tp == 1 for lay in layouts(model))  # 5 only as TP=1 x PP=5


def test_gqa_kv_heads_constrain_tp_phi3_medium() -> None:
    # Phi-3-medium: 40 layers, 40 attention heads, 10 KV heads, head_dim 128 (its config.json).
    # 40 heads allow TP 1, 2, 4, 8; 10 KV heads allow TP 1, 2 only (4 and 8 neither divide 10
    # nor are multiples of it: vLLM refuses TP=4 for this model).
    model = _model(
        parameters=14 * 10**9, layers=40, attention_heads=40, kv_heads=10, head_dim=128, context=4096, batch=160
    )
    assert tp_sizes(model) == (1, 2)
    assert [tp_allowed(model, tp) for tp in (1, 2, 4, 8)] == [True, True, False, False]
    # weights 28,000 MB + activations 2,800 MB + KV 2 * 40 * 10 * 128 * 4096 * 160 * 2 B
    # = 134,217.73 MB: 165,017.73 MB. PP=1: TP=2 -> 82,508.86 / 0.9 = 91,677 MB, too much, and TP=4
    # is not allowed. PP=2 (20 layers a stage): TP=1 -> 91,677 MB, too much; TP=2 -> 41,254.43 MB
    # / 0.9 = 45,839 MB fits: TP=2 x PP=2 = 4 GPUs (without the KV rule it would be TP=4 x PP=1).
    lay = choose(model, H100_MB, 8)
    assert lay is not None and (lay.tp, lay.pp, lay.gpu_mb) == (2, 2, 45_839)


def test_kv_heads_fewer_than_tp_are_replicated_not_split() -> None:
    # 8 KV heads, TP=16: each KV head lives on 2 GPUs, so KV per GPU is KV / 8, not KV / 16.
    model = llama3_70b(32768, 16)
    by = {(lay.tp, lay.pp): lay for lay in layouts(model)}
    # (140,000 + 14,000) / 16 + 171,798.69 / 8 = 9,625 + 21,474.84 = 31,099.84 MB
    assert by[(16, 1)].share_mb == 31_100
    assert by[(8, 1)].share_mb == 40_725  # 19,250 + 21,474.84


def test_llama31_405b_needs_two_nvlink_domains_of_h100() -> None:
    # Llama-3.1-405B: 126 layers, 128 attention heads, 8 KV heads, head_dim 128; bf16, 8k, batch 1.
    # weights 810,000 MB + activations 81,000 MB + KV 2 * 126 * 8 * 128 * 8192 * 2 B = 4,227.86 MB
    # = 895,227.86 MB. In an 8-GPU domain TP <= 8: TP=8 x PP=1 -> 111,903.48 / 0.9 = 124,338 MB,
    # too much. PP=2 (63 layers each): TP=4 -> 124,338 MB, too much; TP=8 -> 55,951.74 / 0.9
    # = 62,169 MB fits: TP=8 x PP=2 = 16 GPUs, two DGX H100 nodes.
    model = _model(parameters=405 * 10**9, layers=126, attention_heads=128, kv_heads=8, head_dim=128, context=8192)
    lay = choose(model, H100_MB, 8)
    assert lay is not None and (lay.tp, lay.pp, lay.gpus, lay.gpu_mb) == (8, 2, 16, 62_169)
    # MI300X (192,000 MB, 8-GPU xGMI domain): TP=8 x PP=1 (124,338 MB) fits.
    mi = choose(model, 192_000, 8)
    assert mi is not None and (mi.tp, mi.pp) == (8, 1)


def test_pcie_gpus_get_pipeline_stages_not_tp() -> None:
    # A 24 GB GPU alone in its scale-up domain (RTX 4090 on PCIe): TP stays 1. Llama-3-70B at 8k x 4,
    # 164,737.42 MB: PP=7 -> ceil(80 / 7) = 12 layers: 164,737.42 * 12 / 80 = 24,710.61 / 0.9
    # = 27,457 MB, too much; PP=8 -> 10 layers: 20,592.18 / 0.9 = 22,880.2 -> 22,881 MB fits.
    lay = choose(llama3_70b(8192, 4), 24_000, 1)
    assert lay is not None and (lay.tp, lay.pp, lay.gpu_mb) == (1, 8, 22_881)


def test_pipeline_stages_tried_and_heads_absent() -> None:
    # 80 layers: PP 41..79 give the same 2-layer largest stage as PP 40, so only PP 40 is tried.
    assert 40 in pp_sizes(llama3_70b(8192, 1)) and 41 not in pp_sizes(llama3_70b(8192, 1))
    assert pp_sizes(_model()) == tuple(range(1, 65))  # no layers: any stage count up to 64
    assert tp_sizes(_model()) == (1, 2, 4, 8, 16, 32, 64)  # no heads: every power of two
    assert tp_sizes(_model(attention_heads=12)) == (1, 2, 4)


def test_nothing_fits_is_none() -> None:
    # 1.8T parameters in bf16: 3,600,000 MB + 360,000 MB; the most a layout can split it here is
    # TP=1 x PP=64 (no layers given): 61,875 MB / 0.9 = 68,750 MB > a 40 GB GPU.
    assert choose(_model(parameters=1_800 * 10**9), 40_000, 1) is None


def test_memory_utilization_is_read_and_checked() -> None:
    head = "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
    (job,) = load_jobs_text(
        head + "  - {name: j, principal: x, model: {parameters: 7B, gpu_memory_utilization: 0.95}}\n", "j.yaml"
    )
    assert job.model is not None and job.model.gpu_memory_utilization == Fraction(19, 20)
    for bad in ("0", "1.5", "'90%'", "true"):
        text = head + f"  - {{name: j, principal: x, model: {{parameters: 7B, gpu_memory_utilization: {bad}}}}}\n"
        with pytest.raises(TopologError) as err:
            load_jobs_text(text, "j.yaml")
        (msg,) = (str(d) for d in err.value.diagnostics)
        assert msg.startswith("j.yaml:4:") and "expected a fraction above 0 and at most 1" in msg


def test_attention_heads_are_read_and_checked() -> None:
    head = "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
    shape = "layers: 80, kv_heads: 8, head_dim: 128, context: 8192"
    (job,) = load_jobs_text(
        head + f"  - {{name: j, principal: x, model: {{parameters: 70B, attention_heads: 64, {shape}}}}}\n", "j.yaml"
    )
    assert job.model is not None and job.model.attention_heads == 64
    for bad, says in (("60", "must be a multiple of kv_heads"), ("0", "expected a whole number of at least 1")):
        text = head + f"  - {{name: j, principal: x, model: {{parameters: 70B, attention_heads: {bad}, {shape}}}}}\n"
        with pytest.raises(TopologError) as err:
            load_jobs_text(text, "j.yaml")
        (msg,) = (str(d) for d in err.value.diagnostics)
        assert msg.startswith("j.yaml:4:") and says in msg, msg
