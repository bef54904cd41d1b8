"""Jobs whose facts match but for the name are judged once and get the same answers."""

from __future__ import annotations

from pathlib import Path

from verifier.jobs.loader import load_jobs
from verifier.placement import job_classes, place

REPO = Path(__file__).resolve().parents[2]
MIXED = REPO / "inventories" / "mixed-fleet.yaml"
JOBS = REPO / "inventories" / "jobs"

TWINS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: a, principal: User::"carol", gpus: 8, gpu: {min_hbm: 80 GB}, topology: {scope: node}}
  - {name: b, principal: User::"carol", gpus: 8, gpu: {min_hbm: 80 GB}, topology: {scope: node}}
  - {name: c, principal: User::"carol", gpus: 4, gpu: {min_hbm: 80 GB}, topology: {scope: node}}
"""


def test_twins_share_a_class_and_answers(tmp_path: Path) -> None:
    path = tmp_path / "twins.yaml"
    path.write_text(TWINS)
    classes, of = job_classes(load_jobs([path]))
    assert list(classes.jobs) == ["a", "c"] and of == {"a": "a", "b": "a", "c": "c"}
    report = place([MIXED], [path], why_not=True)
    a, b, c = report.jobs
    assert [j.job.name for j in report.jobs] == ["a", "b", "c"]
    assert a.placements == b.placements and a.why_not == b.why_not and a.candidates == b.candidates
    assert a.placements and len(c.placements[0].gpus) == 4


def test_classes_leave_shipped_answers_alone() -> None:
    files = [JOBS / "portable.yaml", JOBS / "hpc.yaml", JOBS / "inference.yaml"]
    classes, _of = job_classes(load_jobs(files))
    assert len(classes) == len(load_jobs(files))
