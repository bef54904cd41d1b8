"""rail_aligned: a node with any GPU whose nearest NIC is off the GPU's rail fails the stage."""

from __future__ import annotations

from pathlib import Path

from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"


def test_rail_aligned_job_skips_the_crossed_node() -> None:
    report = place([HERE / "rails.yaml"], [HERE / "rail_jobs.yaml"], why_not=True, authorize=False)
    railed, anywhere = report.jobs
    assert [p.domain for p in railed.placements] == ["n0"]
    assert railed.placements[0].gpus == ("n0/gpu0", "n0/gpu1")
    assert [(w.domain, w.requirement, w.have, w.need) for w in railed.why_not] == [("n1", "rail_aligned", 0, 2)]
    assert railed.why_not[0].message.startswith("n1: 0 GPUs on nodes whose GPUs each reach the fabric")
    assert [p.domain for p in anywhere.placements] == ["n0", "n1"]  # without the need both nodes host it
    assert report.exit_code == 0
