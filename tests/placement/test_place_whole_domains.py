"""NVLink domains that hold all of their profile's GPUs, and those that hold part (fixtures/whole_and_split.yaml).

Ranking judges a domain by its node class and its one eligible profile; a domain of scope
nvlink_domain that holds every GPU of that profile (place_eligible_profile's count equals the
profile's GPUs) is judged so without reading which GPUs are the domain's, the others read theirs
(one query each while few, every domain's at once past profile_gpus.READ_ALONE). Both ways must name the
same members.

By hand, from the fixture: n0's four GPUs are one domain, n0/gpu0 (every pair NVLinked); n1's
gpu0-gpu2 are the domain n1/gpu0 and gpu3, with no NVLink, the domain n1/gpu3. Each node's four
GPUs share one placement profile, so only n0/gpu0 holds all of its profile's GPUs.
- one-nvl (1 GPU): every domain hosts; members are each domain's first GPU by id: n0/gpu0,
  n1/gpu0, n1/gpu3 (not n1/gpu0 again: n1/gpu3's own GPU). One member has no pair: no bottleneck.
- two-nvl (2 GPUs): n1/gpu3 has one GPU; n0/gpu0 takes gpu0, gpu1 and n1/gpu0 takes n1/gpu0,
  n1/gpu1. Their pair has its own 6 NVLink 4 links, 6 x 25 GB/s = 150 GB/s per direction.
- four-nvl (4 GPUs): only n0/gpu0 (n1/gpu0 has three). Each member reaches the three others over
  150 GB/s each, 450 GB/s together, and its scale-up links together are 3 x 150 = 450 GB/s: 450 GB/s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.placement import profile_gpus
from verifier.placement.place import PlaceReport, Profiles
from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"
INVENTORY, JOBS = HERE / "whole_and_split.yaml", HERE / "whole_and_split_jobs.yaml"

EXPECTED = {
    "one-nvl": [
        ("n0/gpu0", ("n0/gpu0",), None),
        ("n1/gpu0", ("n1/gpu0",), None),
        ("n1/gpu3", ("n1/gpu3",), None),
    ],
    "two-nvl": [
        ("n0/gpu0", ("n0/gpu0", "n0/gpu1"), 150_000),
        ("n1/gpu0", ("n1/gpu0", "n1/gpu1"), 150_000),
    ],
    "four-nvl": [("n0/gpu0", ("n0/gpu0", "n0/gpu1", "n0/gpu2", "n0/gpu3"), 450_000)],
}
HOSTING = {"one-nvl": 3, "two-nvl": 2, "four-nvl": 1}


def _answers(report: PlaceReport) -> tuple[dict[str, list[tuple[str, tuple[str, ...], int | None]]], dict[str, int]]:
    placed = {j.job.name: [(p.domain, p.gpus, p.bottleneck_mbps) for p in j.placements] for j in report.jobs}
    return placed, {j.job.name: j.hosting for j in report.jobs}


@pytest.mark.parametrize("engine", ["memory", "duckdb", "pydatalog"])
def test_whole_and_partial_domains_name_their_own_gpus(engine: str) -> None:
    report = place([INVENTORY], [JOBS], authorize=False, engine=engine)
    assert _answers(report) == (EXPECTED, HOSTING)
    assert all(j.candidates == 3 for j in report.jobs)


def _counting_full_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times every domain's GPUs are read at once (Profiles.domain_gpus building its map)."""
    reads: list[int] = []
    full = Profiles.domain_gpus

    def counted(self: Profiles) -> object:
        if self._domain_gpus is None:
            reads.append(1)
        return full(self)

    monkeypatch.setattr(Profiles, "domain_gpus", counted)
    return reads


def test_few_partial_domains_are_read_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # n1/gpu0 and n1/gpu3 are partial (2 domains, under READ_ALONE): each read alone, no full read.
    reads = _counting_full_reads(monkeypatch)
    assert _answers(place([INVENTORY], [JOBS], authorize=False, engine="duckdb")) == (EXPECTED, HOSTING)
    assert reads == []


def test_past_the_limit_every_domain_is_read_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # With no domain read alone, the first partial one reads every domain's GPUs, once: same members.
    monkeypatch.setattr(profile_gpus, "READ_ALONE", 0)
    reads = _counting_full_reads(monkeypatch)
    assert _answers(place([INVENTORY], [JOBS], authorize=False, engine="duckdb")) == (EXPECTED, HOSTING)
    assert reads == [1]
