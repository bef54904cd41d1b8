"""`place` after the lead's fixes 8095411 + 6b37e06 (an NVLink domain's members are its own GPUs) and
99e66fe (a GPU outside nodes is a machine of its own), attacked. Every case below held; the answers
that changed from the start commit (ffe2ae7, its installed wheel) are marked "(ffe2ae7: ...)".

Inventories, by hand:
- ISLANDS: nodes n0, n1, n2 alike (8 H100-SXM5-80GB each on PCIe to one CPU), each with two NVLink
  islands joined by 6 NVLink 4 links a pair, none between them. n0 and n1: gpu0-gpu3 and gpu4-gpu7;
  n2: the even GPUs and the odd ones. Scope nvlink_domain: 6 domains, each named by its smallest GPU
  (n0/gpu0, n0/gpu4, n1/gpu0, n1/gpu4, n2/gpu0, n2/gpu1), 4 GPUs each. A pair inside an island has
  its own 6 links: 6 x 25 GB/s = 150,000 MB/s; 4 GPUs of an island, a sum over 3 peers of a member,
  450,000 MB/s (as tests/placement/test_place_nvlink_islands.py derives for one node). n0 and n1 are
  alike (one shape for the cache); n2 differs only in which GPUs each island holds: its members
  must not be n0's local names.
- tests/placement/fixtures/loose_gpus.yaml: pod p0 holds rack r0 (node n0: gpu0, gpu1; g9 straight in
  the rack) and g8 straight in the pod; outside every pod g7 and node n5 (one GPU). No links.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.placement.place import JobPlacements, PlaceReport
from verifier.reports.place_report import render_json
from verifier.service import placing
from verifier.service.config import ServeConfig
from verifier.service.revision import build_revision
from verifier.session.place_run import jobs_to_place, place

ROOT = Path(__file__).resolve().parents[2]
LOOSE = Path(__file__).resolve().parent / "fixtures" / "loose_gpus.yaml"


def _islands_inventory() -> str:
    islands = {0: ((0, 1, 2, 3), (4, 5, 6, 7)), 1: ((0, 1, 2, 3), (4, 5, 6, 7)), 2: ((0, 2, 4, 6), (1, 3, 5, 7))}
    lines = ["apiVersion: topolog.dev/v1", "kind: Inventory", "metadata: {name: islands}", "objects:"]
    for n in islands:
        lines += [
            f"  - name: n{n}",
            "    kind: node",
            "    labels: {tenant: research}",
            "    children:",
            "      - {name: cpu0, kind: cpu, model: Xeon-8480C}",
            '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 8}',
        ]
    lines.append("links:")
    for n, pair in islands.items():
        for island in pair:
            for i, a in enumerate(island):
                lines += [
                    f"  - {{a: n{n}/gpu{a}, b: n{n}/gpu{b}, kind: nvlink, generation: 4, count: 6}}"
                    for b in island[i + 1 :]
                ]
        lines.append(
            f'  - {{a: "n{n}/gpu{{g}}", b: n{n}/cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {{g: "0..7"}}}}'
        )
    return "\n".join(lines) + "\n"


# 35B parameters, fp16 weights: 70,000 MB + activations (10%) 7,000 MB = 77,000 MB a replica; with
# 10% of an 80,000 MB GPU kept free, TP=1 needs 85,556 MB (too much), TP=2 42,778 MB a GPU: a model
# job of 2 GPUs is one TP group of 2, one of 4 GPUs two groups, each inside one scale-up domain.
MODEL = "model: {parameters: 35B, weight_precision: fp16, attention_heads: 32}"
JOBS = f"""\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {{name: two-nvl, principal: dan, gpus: 2, topology: {{scope: nvlink_domain}}}}
  - {{name: four-nvl, principal: dan, gpus: 4, topology: {{scope: nvlink_domain}}}}
  - {{name: tp2-nvl, principal: dan, gpus: 2, topology: {{scope: nvlink_domain}}, {MODEL}}}
  - {{name: tp2x2-nvl, principal: dan, gpus: 4, topology: {{scope: nvlink_domain}}, {MODEL}}}
"""

LOOSE_JOBS = f"""\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {{name: three-rack-mn1, principal: alice, gpus: 3, topology: {{scope: rack, max_nodes: 1}}}}
  - {{name: three-rack-mn2, principal: alice, gpus: 3, topology: {{scope: rack, max_nodes: 2}}}}
  - {{name: four-any-mn2, principal: alice, gpus: 4, topology: {{scope: any, max_nodes: 2}}}}
  - {{name: four-any-mn3, principal: alice, gpus: 4, topology: {{scope: any, max_nodes: 3}}}}
  - {{name: two-any-pair, principal: alice, gpus: 2, topology: {{scope: any, min_gpu_bandwidth: 1GB/s}}}}
  - {{name: model-any, principal: alice, gpus: 2, topology: {{scope: any, max_nodes: 2}}, {MODEL}}}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("lead-fixes")
    (here / "islands.yaml").write_text(_islands_inventory())
    (here / "jobs.yaml").write_text(JOBS)
    (here / "loose_jobs.yaml").write_text(LOOSE_JOBS)
    shutil.copy(ROOT / "inventories" / "principals.yml", here / "principals.yml")
    (here / "policies").mkdir()
    for f in [*(ROOT / "policies").glob("*.cedar"), ROOT / "policies" / "schema.cedarschema"]:
        shutil.copy(f, here / "policies" / f.name)
    return here


def _job(report: PlaceReport, name: str) -> JobPlacements:
    (found,) = [j for j in report.jobs if j.job.name == name]
    return found


def _members(report: PlaceReport, name: str) -> list[tuple[str, tuple[str, ...], int, int | None]]:
    return [(p.domain, p.gpus, p.nodes, p.bottleneck_mbps) for p in _job(report, name).placements]


def _island(node: int, *gpus: int) -> tuple[str, ...]:
    return tuple(f"n{node}/gpu{g}" for g in gpus)


@pytest.mark.parametrize("engine", ["memory", "duckdb", "pydatalog"])
def test_islands_of_alike_nodes_and_of_a_node_wired_otherwise(folder: Path, engine: str) -> None:
    # Each domain's first GPUs by id among its own (ffe2ae7: n0/gpu4's members were n0/gpu0, gpu1,
    # the node's first GPUs, and so for every second island). n2/gpu0: gpu0, gpu2 (its evens);
    # n2/gpu1: gpu1, gpu3: the shape cached for n0 and n1 (gpu0-3 / gpu4-7) must not be reused.
    report = place([folder / "islands.yaml"], [folder / "jobs.yaml"], authorize=False, engine=engine)
    firsts = {"n0/gpu0": (0, 1, 2, 3), "n0/gpu4": (4, 5, 6, 7), "n1/gpu0": (0, 1, 2, 3), "n1/gpu4": (4, 5, 6, 7)}
    firsts |= {"n2/gpu0": (0, 2, 4, 6), "n2/gpu1": (1, 3, 5, 7)}
    for name, size, mbps in (("two-nvl", 2, 150_000), ("four-nvl", 4, 450_000)):
        # Plain and model jobs alike: a model job's TP groups of 2 sit inside one island (4 GPUs:
        # two groups, the whole island), so its members are the plain job's.
        for job in (name, "tp2-nvl" if size == 2 else "tp2x2-nvl"):
            assert _members(report, job) == [
                (domain, _island(int(domain[1]), *gpus[:size]), 1, mbps) for domain, gpus in firsts.items()
            ], job
    assert [p.layout.tp if p.layout else None for p in _job(report, "tp2x2-nvl").placements] == [2] * 6


def test_the_service_answers_as_the_cli_on_islands(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # dan (team research) may schedule on hardware labelled tenant: research (every node here). The
    # revision's prepared placement reads the domains' GPUs before a memory evaluation is closed; its
    # answers must be `place --why-not --format json`'s bytes, on memory and duckdb revisions.
    code, cli, err = run_cli(
        "place", str(folder / "islands.yaml"), str(folder / "jobs.yaml"), "--why-not", "--format", "json"
    )
    assert code == 0, err
    members = {j["job"]: [p["gpus"] for p in j["placements"]] for j in json.loads(cli)["jobs"]}
    assert members["two-nvl"][:2] == [["n0/gpu0", "n0/gpu1"], ["n0/gpu4", "n0/gpu5"]]
    assert members["four-nvl"][-1] == ["n2/gpu1", "n2/gpu3", "n2/gpu5", "n2/gpu7"]
    for engine in ("memory", "duckdb"):
        monkeypatch.setattr(placing, "ENGINE", engine)
        monkeypatch.setattr(placing, "ANSWERS", 0)
        revision = build_revision(ServeConfig((folder / "islands.yaml",)))
        prepared = revision.placing.get()
        assert prepared is not None, revision.placing.error
        answer = prepared.place(jobs_to_place([folder / "jobs.yaml"], True).jobs, 0)
        assert answer is not None
        assert render_json(answer) == cli, engine


def test_what_if_fail_one_gpu_of_an_island(folder: Path) -> None:
    # --fail n0/gpu0: island n0/gpu0 keeps gpu1-gpu3 (3 GPUs), named now by its smallest, n0/gpu1.
    # two-nvl's best moves there (gpu1, gpu2; ranked first by bandwidth, then name); four-nvl's to
    # n0/gpu4 (the whole other island), 5 domains hosting of 6.
    code, out, err = run_cli(
        "place", str(folder / "islands.yaml"), str(folder / "jobs.yaml"), "--no-authorization", "--fail", "n0/gpu0",
        "--format", "json",
    )  # fmt: skip
    assert code == 0, err  # no job loses its placement
    jobs = {j["job"]: j for j in json.loads(out)["jobs"]}
    assert (jobs["two-nvl"]["after"]["domain"], jobs["two-nvl"]["after"]["gpus"]) == ("n0/gpu1", ["n0/gpu1", "n0/gpu2"])
    four = jobs["four-nvl"]
    assert (four["after"]["domain"], four["after"]["gpus"]) == ("n0/gpu4", [f"n0/gpu{g}" for g in (4, 5, 6, 7)])
    assert (four["hosting_before"], four["hosting_after"]) == (6, 5)


def test_a_gpu_that_left_its_domain_per_observed_state() -> None:
    # inventories/observed/dgx-h100-pod (see its README) at 2026-12-06T09:00:00Z: dgx03/gpu5 reports
    # 16 of 18 NVLinks (OBS002: it leaves dgx03's NVLink domain, a domain of its own, dgx03/gpu5);
    # dgx03/gpu0 (XID 95), gpu6 (row remapping pending) and gpu7 (missing) are out of service. A
    # 1-GPU nvlink_domain job: domain dgx03/gpu0's first in-service GPU is gpu1; dgx03/gpu2 (a
    # domain of its own in the inventory) holds gpu2 alone; dgx03/gpu5 holds gpu5 alone
    # (ffe2ae7: both gave dgx03/gpu1, a GPU of another domain).
    code, out, err = run_cli(
        "place", str(ROOT / "inventories" / "dgx-h100-pod.yaml"), str(LOOSE.parent / "loose_gpus_jobs.yaml"),
        "--no-authorization", "--observed", str(ROOT / "inventories" / "observed" / "dgx-h100-pod"),
        "--observed-now", "2026-12-06T09:00:00Z", "--limit", "100", "--format", "json",
    )  # fmt: skip
    assert code in (0, 1), err
    (one,) = [j for j in json.loads(out)["jobs"] if j["job"] == "one-nvl"]
    dgx03 = [(p["domain"], p["gpus"]) for p in one["placements"] if p["domain"].startswith("dgx03/")]
    assert dgx03 == [("dgx03/gpu0", ["dgx03/gpu1"]), ("dgx03/gpu2", ["dgx03/gpu2"]), ("dgx03/gpu5", ["dgx03/gpu5"])]


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_loose_gpus_with_max_nodes_pair_bandwidth_and_a_model(folder: Path, engine: str) -> None:
    report = place([LOOSE], [folder / "loose_jobs.yaml"], authorize=False, why_not=True, engine=engine)
    why = {j.job.name: [(w.domain, w.requirement, w.have, w.need) for w in j.why_not] for j in report.jobs}
    # Rack r0: n0 (2) and g9 (1). max_nodes 1: at most n0's 2 < 3; max_nodes 2: all 3 on 2 machines,
    # no link between them: 0 MB/s.
    assert _members(report, "three-rack-mn1") == []
    assert why["three-rack-mn1"] == [("r0", "max_nodes", 2, 3)]
    assert _members(report, "three-rack-mn2") == [("r0", ("g9", "n0/gpu0", "n0/gpu1"), 2, 0)]
    # Pod p0: n0 (2), g9 (1), g8 (1): the 2 fullest machines hold 3 < 4 (ffe2ae7 counted g8 and g9 as
    # one node "" of 2 and placed it on "2 nodes"); with 3 machines all 4, on 3 nodes at 0 MB/s.
    # "inventory" (outside every pod): g7 and n5/gpu0, 2 GPUs < 4.
    assert _members(report, "four-any-mn2") == []
    assert why["four-any-mn2"] == [("inventory", "gpus", 2, 4), ("p0", "max_nodes", 3, 4)]
    assert _members(report, "four-any-mn3") == [("p0", ("g8", "g9", "n0/gpu0", "n0/gpu1"), 3, 0)]
    # min_gpu_bandwidth 1 GB/s on p0: the most any machine offers is n0's 2 = the need, so the pair
    # check reads in-node pairs only (n0's pair has no link: no figure, not a fail) and the members
    # are n0's pair on 1 node (ffe2ae7: g8 and g9, shown as 1 node: two machines with no link).
    # "inventory": g7 and n5/gpu0 are 1 GPU a machine, so members span machines: 0 MB/s < 1,000.
    assert _members(report, "two-any-pair") == [("p0", ("n0/gpu0", "n0/gpu1"), 1, None)]
    assert why["two-any-pair"] == [("inventory", "min_pair_mbps", 0, 1000)]
    # The model job (77,000 MB a replica, TP=1 too big for one GPU): each GPU here is a scale-up
    # domain of its own, so TP=1 x PP=2. p0: n0's 2 on one node; "inventory": g7 and n5/gpu0, 2 nodes.
    model = _job(report, "model-any")
    assert [(p.domain, p.gpus, p.nodes) for p in model.placements] == [
        ("p0", ("n0/gpu0", "n0/gpu1"), 1),
        ("inventory", ("g7", "n5/gpu0"), 2),
    ]
    assert [(p.layout.tp, p.layout.pp) if p.layout else None for p in model.placements] == [(1, 2), (1, 2)]


# A rack promised to be one NVLink domain (as inventories/gb200-nvl72.yaml's): trays t0 (gpu0-gpu2)
# and t1 (gpu0, gpu1), each GPU but t0/gpu2 with one NVLink 5 link (50 GB/s a direction) to the
# switch tray's chip. By hand: domain t0/gpu0 spans two nodes with t0/gpu0, t0/gpu1, t1/gpu0,
# t1/gpu1; t0/gpu2 is a domain of its own, in a node that holds GPUs of the other domain (one
# placement profile for t0's three GPUs).
SPAN = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: span}
objects:
  - name: r0
    kind: rack
    promises: [nvlink_domain]
    children:
      - name: t0
        kind: node
        children:
          - {name: "gpu{i}", kind: gpu, model: B200-GB200-186GB, count: 3}
      - name: t1
        kind: node
        children:
          - {name: "gpu{i}", kind: gpu, model: B200-GB200-186GB, count: 2}
      - name: sw
        kind: node
        children:
          - {name: chip0, kind: nvswitch, model: NVLink-Switch-Gen4}
links:
  - {a: "t{t}/gpu{g}", b: sw/chip0, kind: nvswitch, generation: 5, count: 1, foreach: {t: [0, 1], g: [0, 1]}}
"""

SPAN_JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: one, principal: alice, gpus: 1, topology: {scope: nvlink_domain}}
  - {name: three, principal: alice, gpus: 3, topology: {scope: nvlink_domain}}
  - {name: three-mn1, principal: alice, gpus: 3, topology: {scope: nvlink_domain, max_nodes: 1}}
  - {name: four, principal: alice, gpus: 4, topology: {scope: nvlink_domain}}
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_domain_across_nodes_beside_a_gpu_of_its_own(tmp_path: Path, engine: str) -> None:
    (tmp_path / "span.yaml").write_text(SPAN)
    (tmp_path / "jobs.yaml").write_text(SPAN_JOBS)
    report = place([tmp_path / "span.yaml"], [tmp_path / "jobs.yaml"], authorize=False, why_not=True, engine=engine)
    why = {j.job.name: [(w.domain, w.requirement, w.have, w.need) for w in j.why_not] for j in report.jobs}
    # one: t0/gpu2's member is t0/gpu2 (ffe2ae7: t0/gpu0, a GPU of the other domain).
    assert [(p.domain, p.gpus) for p in _job(report, "one").placements] == [
        ("t0/gpu0", ("t0/gpu0",)),
        ("t0/gpu2", ("t0/gpu2",)),
    ]
    # three: the fewest nodes from the domain's own GPUs: t0's 2 and t1/gpu0, 2 nodes, a pair across
    # nodes through the switch at 50,000 MB/s (ffe2ae7: t0/gpu0-gpu2, t0/gpu2 outside the domain).
    assert _members(report, "three") == [("t0/gpu0", ("t0/gpu0", "t0/gpu1", "t1/gpu0"), 2, 50_000)]
    assert why["three"] == [("t0/gpu2", "gpus", 1, 3)]
    # max_nodes 1: the domain's fullest node holds 2 of its GPUs (t0/gpu2 is not one) < 3.
    assert why["three-mn1"] == [("t0/gpu0", "max_nodes", 2, 3), ("t0/gpu2", "gpus", 1, 3)]
    # four: the whole domain (ffe2ae7: t0/gpu0-gpu2 and t1/gpu0).
    assert _members(report, "four") == [("t0/gpu0", ("t0/gpu0", "t0/gpu1", "t1/gpu0", "t1/gpu1"), 2, 50_000)]
