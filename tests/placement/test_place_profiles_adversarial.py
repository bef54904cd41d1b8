"""Attacks on place's shortcuts (fixtures/profiles_adversarial.yaml): what held.

`place` names a node's only profile by its node class and figures, without reading its GPUs
(verifier/placement/place.py, Profiles), and takes an NVLink domain whose eligible count of its one
eligible profile equals that profile's GPU count to hold all of them (_Picker.ranked); a profile's
GPUs are read one node per query up to a limit, then all at once (profile_gpus.GpusByProfile), and
a domain's GPUs one domain per query up to a limit, then all at once (Profiles.domain_gpus_of).
Each attack below was also compared byte for byte (`place --why-not --format json`, memory and
duckdb) with the start of this round's work, which read every GPU: the same output.

By hand, from the fixture (every pair of a 4-GPU node joined by 6 NVLink 4 links: 6 x 25 = 150 GB/s
per direction; NodePairs.worst: with every pair on NVLink, the smaller of a member's pairs summed
and its scale-up links together, so 2 members 150 GB/s, 3 members 2 x 150 = 300, 4 members 3 x 150
= 450, and a 4-GPU node's GPU has 3 x 150 = 450 of links, t1's 2 x 150 = 300):
- t0 and t2 are one class (an HBM size is no structure) but t2's gpu2 has 40 GB: t2 has two
  profiles, its GPUs read, not its class's; t1 lost gpu0, so it is a class of its own (gpu1-gpu3):
  its first two are gpu1 and gpu2, never the template's gpu0.
- a0 (GPUs g0-g3) and a1 (gpu0-gpu3 written gpu3 first) are built like the template but are
  classes of their own: local names, and their order, are part of a class.
- c0 and c1 are one class; the NVLink domain c0/gpu0 spans both through sw0/chip0 (4 NVLink 5
  links per GPU: 4 x 50 = 200 GB/s, each GPU's only scale-up links, so a pair's worst is 200). c1
  is drained: the domain's one eligible profile is c0's, whose 2 GPUs are all in the domain (the
  count shortcut): two-nvl takes c0/gpu0 and c0/gpu1; three-nvl finds only those 2 in service.
- s0's one profile (4 GPUs) is split over two NVLink domains of 2 (gpu0-gpu1, gpu2-gpu3): equal
  counts, yet neither holds the whole profile, so s0/gpu2 takes its own gpu2 and gpu3, never the
  profile's first two. Inside s0, gpu0 and gpu2 meet only over PCIe 5 x16 through cpu0 (16 x 3,938 =
  63,008 MB/s): a set with such a pair is as slow as it (NodePairs.worst); gpu0+gpu1 is 150 GB/s.
Ranking: best bottleneck first, then fewest nodes, then name.
- two-node: c0 (200) first, then a0, a1, s0, t0, t1, t2 at 150; c1 is drained (0 of 2 healthy).
- four-node: a0, a1, t0, t2 at 450 (t2: its 40 GB GPU is eligible: no memory asked), then s0 at
  63,008; c0, c1 and t1 have too few GPUs (2, 2, 3).
- three-big (60 GB each): t2's gpu2 (40 GB) is out, so t2 gives gpu0, gpu1, gpu3; 300 each, s0
  (gpu0-gpu2: a PCIe pair) 63,008 last. c0 and c1 have 2 GPUs.
- two-nvl / three-nvl: each other 4-GPU node is one NVLink domain named by its smallest GPU id;
  s0's two domains have 2 GPUs each, too few for three.
Prices per GPU-hour: $2.00 on the template's nodes, $1.00 on a0, none on a1, s0 and the trays.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verifier.placement import profile_gpus
from verifier.placement.place import PlaceReport
from verifier.service import placing
from verifier.service.config import ServeConfig
from verifier.service.revision import build_revision
from verifier.session.place_run import jobs_to_place, place
from verifier.sources.jobs.principal_rules import parse_rules

HERE = Path(__file__).resolve().parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
INVENTORY, JOBS = HERE / "profiles_adversarial.yaml", HERE / "profiles_adversarial_jobs.yaml"

Placed = list[tuple[str, tuple[str, ...], int | None]]

NODE_TWO: Placed = [
    ("c0", ("c0/gpu0", "c0/gpu1"), 200_000),
    ("a0", ("a0/g0", "a0/g1"), 150_000),
    ("a1", ("a1/gpu0", "a1/gpu1"), 150_000),
    ("s0", ("s0/gpu0", "s0/gpu1"), 150_000),
    ("t0", ("t0/gpu0", "t0/gpu1"), 150_000),
    ("t1", ("t1/gpu1", "t1/gpu2"), 150_000),
    ("t2", ("t2/gpu0", "t2/gpu1"), 150_000),
]
EXPECTED: dict[str, Placed] = {
    "two-node": NODE_TWO,
    "four-node": [
        ("a0", ("a0/g0", "a0/g1", "a0/g2", "a0/g3"), 450_000),
        ("a1", ("a1/gpu0", "a1/gpu1", "a1/gpu2", "a1/gpu3"), 450_000),
        ("t0", ("t0/gpu0", "t0/gpu1", "t0/gpu2", "t0/gpu3"), 450_000),
        ("t2", ("t2/gpu0", "t2/gpu1", "t2/gpu2", "t2/gpu3"), 450_000),
        ("s0", ("s0/gpu0", "s0/gpu1", "s0/gpu2", "s0/gpu3"), 63_008),
    ],
    "three-big": [
        ("a0", ("a0/g0", "a0/g1", "a0/g2"), 300_000),
        ("a1", ("a1/gpu0", "a1/gpu1", "a1/gpu2"), 300_000),
        ("t0", ("t0/gpu0", "t0/gpu1", "t0/gpu2"), 300_000),
        ("t1", ("t1/gpu1", "t1/gpu2", "t1/gpu3"), 300_000),
        ("t2", ("t2/gpu0", "t2/gpu1", "t2/gpu3"), 300_000),
        ("s0", ("s0/gpu0", "s0/gpu1", "s0/gpu2"), 63_008),
    ],
    "two-nvl": [
        ("c0/gpu0", ("c0/gpu0", "c0/gpu1"), 200_000),
        ("a0/g0", ("a0/g0", "a0/g1"), 150_000),
        ("a1/gpu0", ("a1/gpu0", "a1/gpu1"), 150_000),
        ("s0/gpu0", ("s0/gpu0", "s0/gpu1"), 150_000),
        ("s0/gpu2", ("s0/gpu2", "s0/gpu3"), 150_000),
        ("t0/gpu0", ("t0/gpu0", "t0/gpu1"), 150_000),
        ("t1/gpu1", ("t1/gpu1", "t1/gpu2"), 150_000),
        ("t2/gpu0", ("t2/gpu0", "t2/gpu1"), 150_000),
    ],
    "three-nvl": [
        ("a0/g0", ("a0/g0", "a0/g1", "a0/g2"), 300_000),
        ("a1/gpu0", ("a1/gpu0", "a1/gpu1", "a1/gpu2"), 300_000),
        ("t0/gpu0", ("t0/gpu0", "t0/gpu1", "t0/gpu2"), 300_000),
        ("t1/gpu1", ("t1/gpu1", "t1/gpu2", "t1/gpu3"), 300_000),
        ("t2/gpu0", ("t2/gpu0", "t2/gpu1", "t2/gpu2"), 300_000),
    ],
}
# The domains that fail, with the first requirement they miss and (have, need), by hand as above.
WHY_NOT = {
    "two-node": [("c1", "healthy", 0, 2)],
    "four-node": [("c0", "gpus", 2, 4), ("c1", "gpus", 2, 4), ("t1", "gpus", 3, 4)],
    "three-big": [("c0", "gpus", 2, 3), ("c1", "gpus", 2, 3)],
    "two-nvl": [],
    "three-nvl": [("c0/gpu0", "healthy", 2, 3), ("s0/gpu0", "gpus", 2, 3), ("s0/gpu2", "gpus", 2, 3)],
}


def _placed(report: PlaceReport) -> dict[str, Placed]:
    return {j.job.name: [(p.domain, p.gpus, p.bottleneck_mbps) for p in j.placements] for j in report.jobs}


def _why_not(report: PlaceReport) -> dict[str, list[tuple[str, str, int, int]]]:
    return {j.job.name: [(w.domain, w.requirement, w.have, w.need) for w in j.why_not] for j in report.jobs}


@pytest.mark.parametrize("engine", ["memory", "duckdb", "pydatalog"])
def test_classes_names_and_counts_place_on_each_nodes_own_gpus(engine: str) -> None:
    report = place([INVENTORY], [JOBS], authorize=False, engine=engine, why_not=True)
    assert _placed(report) == EXPECTED
    assert _why_not(report) == WHY_NOT


def test_read_all_at_once_from_the_first_node_and_domain_the_answers_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    # No node's GPUs and no domain's read alone: the first ask reads every GPU's (the one limit, 0,
    # that both ways of reading share: profile_gpus.AloneFirst).
    monkeypatch.setattr(profile_gpus, "READ_ALONE", 0)
    report = place([INVENTORY], [JOBS], authorize=False, engine="duckdb", why_not=True)
    assert _placed(report) == EXPECTED
    assert _why_not(report) == WHY_NOT


def test_the_rank_by_cost_keeps_each_nodes_members() -> None:
    # Cost = price per GPU-hour x members ($1 = 100,000 millicents): a0 2 x $1.00 = 200,000; t0, t1,
    # t2 2 x $2.00 = 400,000 each (then by bottleneck, all 150 GB/s, then name); c0, a1 and s0 have
    # no price and rank last, c0 (200 GB/s) before a1 and s0 (150 GB/s, by name). Members are those
    # by bandwidth.
    report = place([INVENTORY], [JOBS], authorize=False, engine="duckdb", rank="cost")
    (two, *_rest) = report.jobs
    order = ["a0", "t0", "t1", "t2", "c0", "a1", "s0"]
    assert [(p.domain, p.cost_millicents_per_hour) for p in two.placements] == list(
        zip(order, [200_000, 400_000, 400_000, 400_000, None, None, None], strict=True)
    )
    by_domain = {d: (g, b) for d, g, b in NODE_TWO}
    assert [(p.domain, p.gpus, p.bottleneck_mbps) for p in two.placements] == [(d, *by_domain[d]) for d in order]


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_the_service_answers_the_same(engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `topolog serve` keeps every profile's GPUs read (no class shortcut) and judges plain jobs
    # without the eligible counts (rank_judged): the same placements, now with authorization, which
    # lets alice (team-nlp) use every GPU of the fixture. Each job alone too (a plain job's path).
    monkeypatch.setattr(placing, "ENGINE", engine)
    monkeypatch.setattr(placing, "ANSWERS", 0)
    inventory = tmp_path / INVENTORY.name
    shutil.copy(INVENTORY, inventory)
    shutil.copy(ROOT / "inventories" / "principals.yml", tmp_path / "principals.yml")
    shutil.copytree(ROOT / "policies", tmp_path / "policies", ignore=shutil.ignore_patterns("ALLOW", "DENY", "*.py"))
    revision = build_revision(ServeConfig((inventory,)))  # held: its copy of the files lives with it
    prepared = revision.placing.get()
    assert prepared is not None, revision.placing.error
    jobs = jobs_to_place([JOBS], True, parse_rules(())).jobs
    report = prepared.place(jobs)
    assert report is not None and report.authorization_checked
    assert _placed(report) == EXPECTED
    assert _why_not(report) == WHY_NOT
    for name in EXPECTED:
        one = prepared.place(type(jobs)({name: jobs.jobs[name]}, jobs.files))
        assert one is not None and _placed(one) == {name: EXPECTED[name]}
    assert prepared.plain > 0  # some job took the plain path
