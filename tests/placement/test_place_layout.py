"""GPUs per replica as a TP x PP layout chosen by the placement rules, on both engines.

The layouts and their memory are worked out by hand in tests/sources/jobs/test_job_layout.py;
here the rules must choose the same (`choose` is the reference) on the shipped inventories:
dgx-h100-pod.yaml (8 DGX H100 nodes, 80,000 MB GPUs, one 8-GPU NVLink domain each, team
research) and mixed-fleet.yaml (H100 and MI300X nodes with 8-GPU domains, RTX 4090 workstations
whose PCIe GPUs are domains of one).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.placement.place import JobPlacements, PlaceReport
from verifier.reports.place_report import render_json, render_text
from verifier.session.place_run import place
from verifier.sources.jobs import load_jobs
from verifier.sources.jobs.layout import choose

REPO = Path(__file__).resolve().parents[2]
POD = REPO / "inventories" / "dgx-h100-pod.yaml"
MIXED = REPO / "inventories" / "mixed-fleet.yaml"
SERVING = REPO / "inventories" / "jobs" / "serving.yaml"

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  # Llama-3-70B, 32k context, batch 16: 325,799 MB, which memory alone sizes to 5 H100 (no engine
  # starts TP=5 on 64 heads). TP=4 needs 90,500 MB a GPU; TP=8 45,250 MB: TP=8 x PP=1.
  - name: llama70b-32k
    principal: Team::"research"
    topology: {scope: node}
    model: {parameters: 70B, weight_precision: bf16, layers: 80, attention_heads: 64, kv_heads: 8,
            head_dim: 128, context: 32768, batch: 16}
  # Phi-3-medium: 10 KV heads allow TP 1 and 2 only; 165,018 MB -> TP=2 x PP=2 (45,839 MB a GPU).
  - name: phi3-medium
    principal: Team::"research"
    topology: {scope: node}
    model: {parameters: 14B, weight_precision: bf16, layers: 40, attention_heads: 40, kv_heads: 10,
            head_dim: 128, context: 4096, batch: 160}
  # Llama-3.1-405B: 895,228 MB; on 8-GPU domains TP=8 x PP=1 needs 124,338 MB a GPU, so TP=8 x PP=2
  # = 16 GPUs (62,169 MB a GPU): two nodes, never a TP across them (the whole pod, whose dgx03
  # has a 7-GPU domain, is judged on TP=4 x PP=4, also 16 GPUs: see the tests below).
  - name: llama405b
    principal: Team::"research"
    topology: {scope: any}
    model: {parameters: 405B, weight_precision: bf16, layers: 126, attention_heads: 128, kv_heads: 8,
            head_dim: 128, context: 8192}
  # The same 405B, but it must fit one node: 16 GPUs cannot, so it fits nowhere.
  - name: llama405b-one-node
    principal: Team::"research"
    topology: {scope: node}
    model: {parameters: 405B, weight_precision: bf16, layers: 126, attention_heads: 128, kv_heads: 8,
            head_dim: 128, context: 8192}
  # 1.8T parameters in bf16, no heads and no layers: TP any power of two up to the 8-GPU domain,
  # PP any stage count: TP=8 x PP=7 = 56 GPUs of the pod's 64 (see the test below).
  - name: huge
    principal: Team::"research"
    topology: {scope: any}
    model: {parameters: 1.8T, weight_precision: bf16}
"""


@pytest.fixture(scope="module")
def pod_jobs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("layout") / "jobs.yaml"
    path.write_text(JOBS)
    return path


@pytest.fixture(scope="module")
def pod(pod_jobs: Path) -> PlaceReport:
    return place([POD], [pod_jobs], why_not=True, limit=1)


def _job(report: PlaceReport, name: str) -> JobPlacements:
    return next(j for j in report.jobs if j.job.name == name)


# llama405b's best placement is on the whole pod (scope any). Its members are the first 16 GPUs
# by name, dgx00 and dgx01, each one 8-GPU NVLink domain: the layout they run is the one for
# 8-GPU domains, TP=8 x PP=2 = 16 GPUs (see the job), not the pod's (next test).
@pytest.mark.parametrize(
    ("name", "tp", "pp", "gpus", "scaleup"),
    [("llama70b-32k", 8, 1, 8, 8), ("phi3-medium", 2, 2, 4, 8), ("llama405b", 8, 2, 16, 8)],
)
def test_rules_choose_the_hand_derived_layout(
    pod: PlaceReport, name: str, tp: int, pp: int, gpus: int, scaleup: int
) -> None:
    jp = _job(pod, name)
    (p,) = jp.placements
    assert p.layout is not None and (p.layout.tp, p.layout.pp, p.layout.gpus) == (tp, pp, gpus)
    assert (p.layout.hbm_mb, p.layout.scaleup_gpus) == (80_000, scaleup) and len(p.gpus) == gpus
    model = jp.job.model
    assert model is not None
    reference = choose(model, 80_000, scaleup)
    assert reference is not None and (reference.tp, reference.pp) == (tp, pp)


def test_the_pod_is_judged_on_its_smallest_domain_and_the_placement_shows_its_own(pod: PlaceReport) -> None:
    # The pod as a candidate must fit any eligible node: dgx03's degraded NVSwitch link takes its
    # gpu2 out of NVLink (the fabric manager's default, inventories/README.md), so dgx03's largest
    # scale-up domain is 7 GPUs and TP <= 7: TP=4. Then 895,228 MB / (4 x PP) / 0.9 <= 80,000
    # needs PP >= 3.11: PP=4, 16 GPUs, the need. The members (dgx00, dgx01: 8-GPU domains) hold
    # TP=8 x PP=2, 16 GPUs too: both derivations are shown, the placement names its members' own.
    jp = _job(pod, "llama405b")
    shapes = {(lay.scaleup_gpus, lay.tp, lay.pp) for lay in jp.layouts}
    assert shapes == {(7, 4, 4), (8, 8, 2)}
    (p,) = jp.placements
    assert {g.split("/")[0] for g in p.gpus} == {"dgx00", "dgx01"}
    assert p.layout is not None and (p.layout.scaleup_gpus, p.layout.tp, p.layout.pp) == (8, 8, 2)
    text = render_text(pod)
    assert "  1. pod0: bottleneck 50 GB/s, 2 nodes, $65.60/h, TP=8 x PP=2 per replica\n" in text
    # 895,228 / 16 = 55,951.75 -> 55,952 MB a GPU; / 0.9 = 62,168.6 -> 62,169 MB.
    assert "TP=8 x PP=2 = 16 GPUs per replica x 1 replica; 55,952 MB per GPU / 0.9 = 62,169 MB" in text
    assert "TP=8 fits the 8-GPU scale-up domains" in text and "TP=4 fits the 7-GPU scale-up domains" in text
    doc = json.loads(render_json(pod))
    (shown,) = next(j for j in doc["jobs"] if j["job"] == "llama405b")["placements"]
    assert shown["layout"] == {"tp": 8, "pp": 2, "gpus_per_replica": 16, "gpu_hbm_mb": 80_000, "scaleup_gpus": 8}


WHOLE_POD = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  # 70B, Adam mixed precision: 70e9 x 16 B = 1,120,000 MB + 100 GB activations = 1,220,000 MB
  # (no heads, no layers: any power-of-two TP, any PP). On the pod (smallest domain dgx03's 7):
  # TP=4 x PP=4 needs 1,220,000 / 16 / 0.9 = 84,723 MB > 80,000; PP=5: 61,000 / 0.9 = 67,778 MB
  # fits: 20 GPUs, dgx00, dgx01 and dgx02/gpu0-3, all on 8-GPU domains. There TP=8 x PP=3 would be
  # chosen (PP=2 needs 84,723 MB; TP=4 x PP=3 101,667 / 0.9 = 112,963), but it needs 24 GPUs,
  # more than the 20 counted: the placement keeps TP=4 x PP=5, which those GPUs hold as well.
  - name: count-differs
    principal: Team::"research"
    topology: {scope: any}
    model: {parameters: 70B, mode: training, optimizer: adam, weight_precision: bf16, activations: 100 GB}
"""


def test_a_placement_keeps_the_domain_layout_when_its_own_needs_another_count(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(WHOLE_POD)
    (jp,) = place([POD], [jobs], limit=1).jobs
    (p,) = jp.placements
    assert len(p.gpus) == 20 and p.gpus[-1] == "dgx02/gpu3"
    assert p.layout is not None and (p.layout.tp, p.layout.pp, p.layout.scaleup_gpus) == (4, 5, 7)
    assert [(lay.scaleup_gpus, lay.tp, lay.pp) for lay in jp.layouts] == [(7, 4, 5)]


def test_pipeline_stages_cross_nodes_tensor_parallel_does_not(pod: PlaceReport) -> None:
    (p,) = _job(pod, "llama405b").placements
    assert p.nodes == 2 and p.gpus[:8] == tuple(f"dgx00/gpu{i}" for i in range(8))
    one_node = _job(pod, "llama405b-one-node")
    assert not one_node.placements
    assert {(w.requirement, w.have, w.need) for w in one_node.why_not} == {("gpus", 8, 16)}
    assert "llama405b-one-node" in pod.unplaceable


def test_no_job_is_sized_to_a_count_its_heads_cannot_split(pod: PlaceReport) -> None:
    for jp in pod.jobs:
        for lay in jp.layouts:
            assert lay.tp & (lay.tp - 1) == 0  # a power of two
            model = jp.job.model
            assert model is not None
            assert model.attention_heads is None or model.attention_heads % lay.tp == 0


def test_huge_model_wants_more_gpus_than_the_pod(pod: PlaceReport) -> None:
    # 3,960,000 MB, TP <= 7 (dgx03's largest scale-up domain, see above): TP=4. PP = the fewest
    # stages with 3,960,000 / (4 * PP) / 0.9 <= 80,000: PP=13 -> 76,154 / 0.9 = 84,615, too much;
    # PP=14 -> 70,715 / 0.9 = 78,572 fits: 56 GPUs <= 64.
    (p,) = _job(pod, "huge").placements
    assert p.layout is not None and (p.layout.tp, p.layout.pp) == (4, 14) and len(p.gpus) == 56


def test_text_and_json_show_memory_and_derivation(pod: PlaceReport) -> None:
    text = render_text(pod)
    assert (
        "  memory: 70B parameters, bf16 weights 140,000 MB + KV cache 171,799 MB + activations 14,000 MB "
        "= 325,799 MB per replica; each GPU keeps 10% free (gpu_memory_utilization 0.9)"
    ) in text
    assert (
        "  layout on 80,000 MB GPUs: TP=8 x PP=1 = 8 GPUs per replica x 1 replica; 40,725 MB per GPU / 0.9 "
        "= 45,250 MB <= 80,000 MB (TP may be 1, 2, 4, 8, 16, 32, 64: powers of two dividing the 64 attention "
        "heads and dividing or multiplying the 8 KV heads; TP=8 fits the 8-GPU scale-up domains; "
        "TP=4 x PP=1 would need 90,500 MB)"
    ) in text
    assert "TP may be 1, 2: " in text  # phi3-medium's KV heads
    doc = json.loads(render_json(pod))
    phi = next(j for j in doc["jobs"] if j["job"] == "phi3-medium")
    assert phi["model"]["tp_sizes"] == [1, 2] and phi["model"]["replica_mb"] == 165_018
    assert phi["placements"][0]["layout"] == {
        "tp": 2,
        "pp": 2,
        "gpus_per_replica": 4,
        "gpu_hbm_mb": 80_000,
        "scaleup_gpus": 8,
    }
    # The memory line, and one layout line per scale-up size met: 8-GPU nodes and dgx03's 7.
    assert len(phi["model"]["derivation"]) == 3


def test_reference_engine_agrees(pod_jobs: Path, pod: PlaceReport) -> None:
    reference = place([POD], [pod_jobs], why_not=True, limit=1, engine="pydatalog")
    assert render_json(reference) == render_json(pod)


def test_shipped_serving_job_is_tp4_on_h100_and_pcie_gpus_never_split_tp() -> None:
    report = place([MIXED], [SERVING], why_not=True)
    (jp,) = report.jobs
    assert [p.domain for p in jp.placements] == ["h100-n0", "h100-n1"]
    for p in jp.placements:
        assert p.layout is not None and (p.layout.tp, p.layout.pp) == (4, 1) and len(p.gpus) == 8
    reference = place([MIXED], [SERVING], why_not=True, engine="pydatalog")
    assert render_json(reference) == render_json(report)
    # Without authorization every kind of GPU is judged: RTX 4090s (24,000 MB, domains of one GPU)
    # get pipeline stages only: PP=8, 22,881 MB a GPU (test_job_layout.py); MI300X TP=1.
    open_report = place([MIXED], [SERVING], authorize=False)
    shapes = {(lay.hbm_mb, lay.scaleup_gpus): (lay.tp, lay.pp) for lay in open_report.jobs[0].layouts}
    assert shapes[(24_000, 1)] == (1, 8) and shapes[(80_000, 8)] == (4, 1) and shapes[(192_000, 8)] == (1, 1)
    model = load_jobs([SERVING]).jobs["llama-70b-serving"].model
    assert model is not None
    for (hbm, domain), (tp, pp) in shapes.items():
        reference_layout = choose(model, hbm, domain)
        assert reference_layout is not None and (reference_layout.tp, reference_layout.pp) == (tp, pp)


MIXED_LAYOUT = REPO / "tests" / "placement" / "fixtures" / "mixed_layout.yaml"

LAYOUT_JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  # 70B bf16 with 2 layers (PP <= 2) and a 1-token KV cache: 154,000 MB + 1 MB (2 * 2 * 8 * 128
  # * 1 * 2 B = 8,192 B). On big0 (200 GB, TP 1): TP=1 x PP=1 needs 154,001 / 0.9 = 171,112 MB,
  # fits. On nv0 (80 GB, TP <= 4): TP=4 needs 42,778 MB, fits. Together (80 GB and TP 1): TP=1 x
  # PP=2 needs 85,556 MB, too much: each GPU holds a layout, the rack shares none.
  - name: shared-none
    principal: x
    topology: {scope: rack}
    model: {parameters: 70B, weight_precision: bf16, attention_heads: 64, layers: 2, kv_heads: 8,
            head_dim: 128, context: 1}
  # 1.8T bf16 with 2 layers: 3,960,000 MB; at most TP=4 x PP=2 on nv0: 495,000 / 0.9 = 550,000 MB,
  # and TP=1 x PP=2 on big0 1,100,000 MB: no GPU holds a layout (stage `layout`).
  - name: too-big
    principal: x
    topology: {scope: rack}
    model: {parameters: 1.8T, weight_precision: bf16, attention_heads: 64, layers: 2, kv_heads: 8,
            head_dim: 128, context: 1}
"""


@pytest.mark.parametrize("engine", ["duckdb", "pydatalog"])
def test_layouts_that_fit_nowhere_are_refused_with_reasons(tmp_path: Path, engine: str) -> None:
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(LAYOUT_JOBS)
    report = place([MIXED_LAYOUT], [jobs], why_not=True, authorize=False, engine=engine)
    assert report.unplaceable == ["shared-none", "too-big"] and report.exit_code == 1
    (mixed,) = _job(report, "shared-none").why_not
    assert (mixed.requirement, mixed.have) == ("layout_mixed", 6)
    assert "share none" in mixed.message
    (big,) = _job(report, "too-big").why_not
    assert (big.requirement, big.have, big.need) == ("layout", 0, 1)
    assert big.message.startswith(
        "r0: 0 GPUs whose memory and scale-up domain hold a TP x PP layout of the model (TP may be 1, 2, 4, 8, 16,"
    )
    # TP=64 x PP=2: 3,960,000.01 MB / 128 = 30,937.5 MB / 0.9 = 34,375.0 -> 34,376 MB
    assert big.message.endswith("the least any layout needs is 34.376 GB a GPU, at TP=64 x PP=2), job needs 1")
