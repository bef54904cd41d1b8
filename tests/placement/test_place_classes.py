"""Jobs whose facts match but for the name are judged once and get the same answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.placement.place import job_classes
from verifier.session.place_run import place
from verifier.sources.jobs.loader import load_jobs

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


def test_placement_program_still_gives_cedar_the_nvlink_domains() -> None:
    """place reads scaleup_domain, not the rules' nvlink_domain: the entities Cedar decides on
    must still have every GPU under its NvlinkDomain (8 per DGX H100 node of the pod, but
    dgx03/gpu2, which the fabric manager's default takes out of NVLink for its degraded link:
    it is a domain of its own)."""
    from verifier.session.api import load_authorization

    graph = load_authorization([REPO / "inventories" / "dgx-h100-pod.yaml"]).graph
    domains = graph.of_type("NvlinkDomain")
    assert [d.id for d in domains] == sorted([f"dgx0{i}/gpu0" for i in range(8)] + ["dgx03/gpu2"])
    assert 'NvlinkDomain::"dgx03/gpu0"' in graph.entities['Gpu::"dgx03/gpu7"'].parents
    assert 'NvlinkDomain::"dgx03/gpu2"' in graph.entities['Gpu::"dgx03/gpu2"'].parents


@pytest.mark.parametrize("inventory", sorted((REPO / "inventories").glob("*.yaml")), ids=lambda p: p.stem)
def test_loading_only_gpus_and_ancestors_changes_no_answer(inventory: Path) -> None:
    """place loads the facts of GPUs and their ancestors only; every answer must be the same
    as with the whole inventory loaded (every shipped job, why-not included)."""
    from verifier.reports.place_report import render_json

    narrow = place([inventory], [JOBS], why_not=True)
    whole = place([inventory], [JOBS], why_not=True, whole_inventory=True)
    assert render_json(narrow) == render_json(whole)
    # The fixture's jobs name a principal of no principals file: judged without authorization.
    uneven = [REPO / "tests" / "placement" / "fixtures" / "uneven_jobs.yaml"]
    narrow = place([inventory], uneven, why_not=True, authorize=False)
    whole = place([inventory], uneven, why_not=True, whole_inventory=True, authorize=False)
    assert render_json(narrow) == render_json(whole)
    assert any(j.placements or j.why_not for j in whole.jobs)  # something was judged
