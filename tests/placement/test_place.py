"""`topolog place` on the shipped inventories and jobs, against hand-derived expectations.

mixed-fleet.yaml (see its comments and inventories/principals.yml): two HGX A100 nodes
(CUDA 12.0, tenant team-nlp), two HGX H100 nodes (CUDA 12.4, tenant team-vision), two MI300X
nodes (ROCm 6.1.2, FP64 >= 50 TFLOPS: team hpc only) and four 2-GPU RTX workstations
(rtx-n0 and rtx-n1 quarantined, rtx-n2 lent to robotics with gpu1 down, rtx-n3 open to
students). gb200-nvl72.yaml: one 72-GPU NVLink domain, $6.20/GPU-h.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main
from verifier.placement.place import JobPlacements, PlaceReport
from verifier.reports.place_report import render_json
from verifier.session.place_run import place

REPO = Path(__file__).resolve().parents[2]
MIXED = REPO / "inventories" / "mixed-fleet.yaml"
NVL72 = REPO / "inventories" / "gb200-nvl72.yaml"
JOBS = REPO / "inventories" / "jobs"


@pytest.fixture(scope="module")
def mixed() -> PlaceReport:
    return place([MIXED], [JOBS / "portable.yaml", JOBS / "hpc.yaml", JOBS / "inference.yaml"], why_not=True)


def _job(report: PlaceReport, name: str) -> JobPlacements:
    return next(j for j in report.jobs if j.job.name == name)


def test_portable_job_fits_nvidia_and_amd_nodes_ranked(mixed: PlaceReport) -> None:
    jp = _job(mixed, "finetune-portable")  # hana: team-vision (H100 tenant) and hpc (MI300X)
    assert [p.domain for p in jp.placements] == ["h100-n0", "h100-n1", "mi300x-n0", "mi300x-n1"]
    h100, _h, mi300x, _m = jp.placements
    assert h100.gpus == tuple(f"h100-n0/gpu{i}" for i in range(8)) and h100.nodes == 1
    assert h100.bottleneck_mbps == 450_000  # 18 NVLink 4 links x 25 GB/s through 4 NVSwitches
    assert h100.cost_millicents_per_hour == 8 * 340_000  # $3.40 per GPU-hour
    assert mi300x.gpus == tuple(f"mi300x-n0/gpu{i}" for i in range(8))
    # Like with like (NodePairs.worst): what each GPU sends to its 7 peers at once, one xGMI gen 4 link
    # (64 GB/s) to each: 7 x 64000 = 448000, which is also its 7 links together; the H100's 450000 is
    # its NVLink bandwidth through the NVSwitches, which its 7 peers share.
    assert mi300x.bottleneck_mbps == 448_000
    assert mi300x.cost_millicents_per_hour == 8 * 220_000  # $2.20 per GPU-hour
    reasons = {w.domain: (w.requirement, w.have, w.need) for w in jp.why_not}
    assert reasons == {
        "a100-n0": ("software", 0, 8),
        "a100-n1": ("software", 0, 8),  # CUDA 12.0 < 12.4, no ROCm
        "rtx-n0": ("gpus", 2, 8),
        "rtx-n1": ("gpus", 2, 8),
        "rtx-n2": ("gpus", 2, 8),
        "rtx-n3": ("gpus", 2, 8),
    }


def test_portable_job_by_cost_puts_the_cheaper_amd_nodes_first() -> None:
    report = place([MIXED], [JOBS / "portable.yaml"], rank="cost")
    assert [p.domain for p in report.jobs[0].placements] == ["mi300x-n0", "mi300x-n1", "h100-n0", "h100-n1"]


def test_carol_gets_only_the_mi300x_nodes(tmp_path: Path) -> None:
    """The same job as carol (hpc only): Cedar closes the H100 nodes, and says which policy does not open them."""
    jobs = tmp_path / "carol.yaml"
    jobs.write_text((JOBS / "portable.yaml").read_text().replace('User::"hana"', 'User::"carol"'))
    jp = place([MIXED], [jobs], why_not=True).jobs[0]
    assert [p.domain for p in jp.placements] == ["mi300x-n0", "mi300x-n1"]
    reasons = {w.domain: (w.requirement, w.have, w.need) for w in jp.why_not}
    assert reasons["h100-n0"] == ("authorization", 0, 8) and reasons["h100-n1"] == ("authorization", 0, 8)


def test_fp64_job_and_policy_names(mixed: PlaceReport) -> None:
    jp = _job(mixed, "cfd-fp64")
    assert [p.domain for p in jp.placements] == ["mi300x-n0", "mi300x-n1"]
    msg = {w.domain: w.message for w in jp.why_not}
    assert msg["a100-n0"].startswith("a100-n0: no policy permits hpc")
    assert msg["rtx-n0"] == "rtx-n0: 2 GPUs, job needs 8"


def test_inference_fits_the_one_open_consumer_workstation(mixed: PlaceReport) -> None:
    jp = _job(mixed, "chat-8b-serving")
    (p,) = jp.placements
    assert (p.domain, p.gpus, p.nodes) == ("rtx-n3", ("rtx-n3/gpu0", "rtx-n3/gpu1"), 1)
    assert p.bottleneck_mbps == 8 * 1969  # both GPUs on the CPU's Gen4 x8 lanes: 15,752 MB/s
    assert p.cost_millicents_per_hour == 2 * 45_000  # $0.45 per GPU-hour
    msg = {w.domain: w.message for w in jp.why_not}
    assert msg["rtx-n2"] == "rtx-n2: 1 GPU in service (not down, drained or cut off from its host), job needs 2"
    assert msg["rtx-n0"].startswith("rtx-n0: policy quarantine-closed denies students")
    assert msg["rtx-n1"].startswith("rtx-n1: policy quarantine-closed denies students")
    assert msg["h100-n0"] == "h100-n0: 0 GPUs of an accepted model (RTX-4090), job needs 2"
    assert "rtx-n3" not in msg and "chat-8b-serving" not in mixed.unplaceable


def test_nvl72_domain_and_replica_memory() -> None:
    report = place([NVL72], [JOBS / "training.yaml", JOBS / "impossible.yaml"], why_not=True, rank="cost")
    train = _job(report, "llm-pretrain-400b")
    (p,) = train.placements
    assert p.domain == "tray00/gpu0" and len(p.gpus) == 64 and p.nodes == 16
    assert p.gpus[:5] == ("tray00/gpu0", "tray00/gpu1", "tray00/gpu2", "tray00/gpu3", "tray01/gpu0")
    assert p.bottleneck_mbps == 900_000
    assert p.cost_millicents_per_hour == 64 * 620_000
    moe = _job(report, "moe-train-128")
    # 30,800,000 MB per replica, no heads or layers given: TP any power of two up to 64 (inside
    # the 72-GPU domain), PP any. Each B200 (186,000 MB) may use 90%: 167,400 MB.
    # PP=1: TP=64 -> 481,250 MB / 0.9 = 534,723 MB, too much; PP=2: 267,362 MB, too much;
    # PP=3: 30,800,000 / 192 = 160,417 MB / 0.9 = 178,241 MB <= 186,000: TP=64 x PP=3 = 192 GPUs,
    # more than the 128 declared and more than the domain's 72.
    assert [(w.requirement, w.have, w.need) for w in moe.why_not] == [("gpus", 72, 192)]
    (moe_layout,) = moe.layouts
    assert (moe_layout.tp, moe_layout.pp, moe_layout.hbm_mb, moe_layout.scaleup_gpus) == (64, 3, 186_000, 72)
    # 7,000,000 MB: TP=64 x PP=1 -> 109,375 MB / 0.9 = 121,528 MB <= 186,000 (TP=32: 243,056, too
    # much), so 64 GPUs per replica, as many as declared.
    layout = train.placements[0].layout
    assert layout is not None and (layout.tp, layout.pp) == (64, 1)
    doc = json.loads(render_json(report))
    assert doc["unplaceable"] == ["moe-train-128"] and doc["rank"] == "cost"


def test_cli_place_and_verify_jobs() -> None:
    runner = CliRunner()
    ok = runner.invoke(main, ["place", str(MIXED), str(JOBS / "portable.yaml"), "--format", "json", "--limit", "1"])
    assert ok.exit_code == 0, ok.output
    doc = json.loads(ok.stdout)
    assert [p["domain"] for p in doc["jobs"][0]["placements"]] == ["h100-n0"]
    good = runner.invoke(main, ["verify", str(MIXED), "--jobs", str(JOBS / "inference.yaml")])
    assert good.exit_code == 0 and "PLACE001" not in good.stdout
    bad = runner.invoke(main, ["verify", str(NVL72), "--jobs", str(JOBS / "impossible.yaml")])
    assert bad.exit_code == 1
    assert "PLACE001" in bad.stdout and "moe-train-128" in bad.stdout


def test_mig_job_counts_instances() -> None:
    """12 MIG 1g.10gb instances, 7 per H100/A100 (catalogue): ceil(12 / 7) = 2 GPUs of one node."""
    pod = place([REPO / "inventories" / "dgx-h100-pod.yaml"], [JOBS / "notebooks.yaml"], limit=1)
    (p,) = pod.jobs[0].placements
    assert (p.domain, p.gpus, p.cost_millicents_per_hour) == ("dgx00", ("dgx00/gpu0", "dgx00/gpu1"), 2 * 410_000)
    mixed = place([MIXED], [JOBS / "notebooks.yaml"], why_not=True)
    reasons = {w.domain: (w.requirement, w.have, w.need) for w in mixed.jobs[0].why_not}
    assert reasons["mi300x-n0"] == ("mig", 0, 2) and reasons["rtx-n3"] == ("mig", 0, 2)  # no MIG at all
    assert reasons["h100-n0"] == ("authorization", 0, 2)  # research is no tenant here
    assert mixed.jobs[0].why_not[4].message == (
        "mi300x-n0: 0 GPUs that can be cut into MIG 1g.10gb instances, job needs 2"
    )


def test_mig_instance_memory_is_what_min_hbm_judges(tmp_path: Path) -> None:
    jobs = tmp_path / "mig.yaml"
    jobs.write_text(
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        "  - {name: fits, principal: research, gpus: 3, gpu: {mig: 3g.40gb, min_hbm: 40 GB}}\n"
        "  - {name: small, principal: research, gpus: 3, gpu: {mig: 1g.10gb, min_hbm: 20 GB}}\n"
    )
    report = place([REPO / "inventories" / "dgx-h100-pod.yaml"], [jobs], why_not=True, limit=1)
    fits, small = report.jobs
    assert len(fits.placements[0].gpus) == 2  # 3 instances, 2 per GPU
    assert small.placements == [] and small.why_not[0].message == (
        "pod0: 0 GPUs whose MIG 1g.10gb instances have at least 20 GB, job needs 1"
    )  # scope any: the pod


def test_verify_jobs_names_mig_instances() -> None:
    out = CliRunner().invoke(main, ["verify", str(MIXED), "--jobs", str(JOBS / "notebooks.yaml")])
    assert out.exit_code == 1
    assert "PLACE001: Job notebooks-mig (12 MIG 1g.10gb instances, scope node) fits in none of 10" in out.stdout
    # Located at the job's own line in its job file (its `name:` key), not at the inventory.
    line = next(x for x in out.stdout.splitlines() if "PLACE001" in x)
    assert line.startswith(f"{JOBS / 'notebooks.yaml'}:9:5: error PLACE001")


def test_limit_keeps_the_best_and_counts_the_rest() -> None:
    report = place([MIXED], [JOBS / "portable.yaml"], limit=1)
    (jp,) = report.jobs
    assert (jp.hosting, [p.domain for p in jp.placements]) == (4, ["h100-n0"])
    from verifier.reports.place_report import render_text

    assert "4 placements of 10 candidate domains (the best 1 shown)" in render_text(report)
