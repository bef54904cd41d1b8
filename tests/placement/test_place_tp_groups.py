"""A model job's GPUs on a domain must split into whole TP groups, each inside one NVLink domain.

inventories/dgx-h100-pod.yaml: 8 DGX H100 nodes, each one 8-GPU NVLink domain (HGX H100 board,
every GPU bonded to the 4 NVSwitches), except dgx03: one of the four NVLinks between its gpu2
and nvsw1 failed link training (`state: degraded`), and the fabric manager's default
(ACCESS_LINK_FAILURE_MODE=0, inventories/README.md) takes a GPU with a failed NVSwitch link out
of NVLink peer-to-peer: TOPO005 says so. So dgx03 has two NVLink domains:
{gpu0, gpu1, gpu3, gpu4, gpu5, gpu6, gpu7} (7 GPUs) and {gpu2} (1 GPU).

The job is Llama-3-70B as inventories/jobs/serving.yaml sizes it (its comment): 164,738 MB a
replica; TP=2 needs 82,369 / 0.9 = 91,521 MB > 80,000 a GPU, TP=4 41,185 / 0.9 = 45,761 MB fits:
TP=4 x PP=1, 4 GPUs a replica, one TP group of 4 that all-reduces every layer over NVLink.

TP=4 groups on dgx03: floor(7 / 4) = 1 group from the 7-GPU domain (3 GPUs left over) and
floor(1 / 4) = 0 from gpu2's: at most 1 x 4 = 4 GPUs of dgx03 run in TP=4 groups, never gpu2.
On every other node floor(8 / 4) = 2 groups: 8 GPUs.

Before the fix the rules judged a domain on its nodes' largest NVLink domain (7 for dgx03) and
counted all 8 eligible GPUs: dgx03 was said to host two replicas (8 GPUs, gpu2 among them) and
one replica's members were gpu0-gpu3, gpu2 in a TP group whose other members cannot reach it
over NVLink. Every engine must now agree (the rules count whole groups: hosts.dl
`place_tp_gpus`; the members are whole groups: verifier/placement/tp_groups.py).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from verifier.placement.place import JobPlacements, PlaceReport
from verifier.placement.tp_groups import tp_members, whole_groups
from verifier.session.inputs import read_inventory
from verifier.session.place_run import PlaceSettings, jobs_to_place, place, placements
from verifier.session.side_files import discover
from verifier.sources.scenario import apply_scenario, scenario_from

REPO = Path(__file__).resolve().parents[2]
POD = REPO / "inventories" / "dgx-h100-pod.yaml"

MODEL = (
    "model: {parameters: 70B, weight_precision: bf16, kv_precision: fp16, layers: 80, attention_heads: 64,\n"
    "            kv_heads: 8, head_dim: 128, context: 8192, batch: 4, gpu_memory_utilization: 0.9}"
)

JOBS = f"""\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  # Two replicas on one node: 2 x TP=4 x PP=1 = 8 GPUs in two TP=4 groups.
  - name: two-replicas
    principal: Team::"research"
    replicas: 2
    topology: {{scope: node}}
    {MODEL}
  # One replica on one node: one TP=4 group.
  - name: one-replica
    principal: Team::"research"
    topology: {{scope: node}}
    {MODEL}
"""

NODES = [f"dgx{i:02d}" for i in range(8)]


@pytest.fixture(scope="module", params=["memory", "duckdb", "pydatalog"])
def report(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> PlaceReport:
    path = tmp_path_factory.mktemp("tp_groups") / "jobs.yaml"
    path.write_text(JOBS)
    return place([POD], [path], limit=0, why_not=True, engine=str(request.param))


def _job(report: PlaceReport, name: str) -> JobPlacements:
    return next(j for j in report.jobs if j.job.name == name)


def test_full_nodes_host_two_tp4_replicas(report: PlaceReport) -> None:
    # Every node but dgx03 is one 8-GPU NVLink domain: 2 TP=4 groups, its 8 GPUs, TP=4 x PP=1.
    jp = _job(report, "two-replicas")
    by_domain = {p.domain: p for p in jp.placements}
    for node in NODES:
        if node == "dgx03":
            continue
        p = by_domain[node]
        assert p.gpus == tuple(f"{node}/gpu{i}" for i in range(8))
        assert p.layout is not None and (p.layout.tp, p.layout.pp) == (4, 1)


def test_dgx03_cannot_host_two_tp4_replicas(report: PlaceReport) -> None:
    # Two replicas need 2 TP=4 groups = 8 GPUs; dgx03 has 4 GPUs in whole TP=4 groups (see the
    # module docstring): it hosts nothing, the 7 other nodes host the job.
    jp = _job(report, "two-replicas")
    assert sorted(p.domain for p in jp.placements) == [n for n in NODES if n != "dgx03"]
    assert jp.hosting == 7
    # Why not: all 8 GPUs pass every stage (8 >= 8), only 4 fill whole groups.
    (why,) = [w for w in jp.why_not if w.domain == "dgx03"]
    assert (why.requirement, why.have, why.need) == ("tp_groups", 4, 8)
    assert why.message == "dgx03: 4 GPUs in whole TP groups, each inside one scale-up domain, job needs 8"


def test_dgx03_tp4_group_is_inside_its_7_gpu_domain(report: PlaceReport) -> None:
    # One replica: one TP=4 group, from the 7-GPU domain only; the first 4 of it by name are
    # gpu0, gpu1, gpu3, gpu4 (gpu2 is alone in its domain and fills no group).
    jp = _job(report, "one-replica")
    assert jp.hosting == 8
    p = next(p for p in jp.placements if p.domain == "dgx03")
    assert p.gpus == ("dgx03/gpu0", "dgx03/gpu1", "dgx03/gpu3", "dgx03/gpu4")


def test_tp_members_take_whole_groups_inside_domains() -> None:
    # n0's 8 GPUs: g2 alone in its domain "n0/g2", the other 7 in "n0/g0". TP=4, 4 needed: the
    # 7-GPU domain gives the group g0, g1, g3, g4 (the first 4 by name), g2 none.
    gpus = [f"n0/g{i}" for i in range(8)]
    scaleup = {g: ("n0/g2" if g == "n0/g2" else "n0/g0") for g in gpus}
    node = dict.fromkeys(gpus, "n0")
    assert tp_members(gpus, 4, 4, node, scaleup, fullest=False) == ["n0/g0", "n0/g1", "n0/g3", "n0/g4"]
    # 8 needed: 7 // 4 = 1 group and 1 // 4 = 0: no whole groups enough, nothing.
    assert tp_members(gpus, 8, 4, node, scaleup, fullest=False) == []
    assert whole_groups(["n0/g0", "n0/g1", "n0/g3", "n0/g4"], 4, scaleup)
    assert not whole_groups(["n0/g0", "n0/g1", "n0/g2", "n0/g3"], 4, scaleup)


def test_tp_members_fullest_nodes_first_and_groups_across_nodes() -> None:
    # a has 4 GPUs (domain "a"), b has 8 (domain "b"); TP=4, 8 needed. By name: a's group, then
    # b's first. Fullest first (max_nodes): b's two groups, one node.
    a = [f"a/g{i}" for i in range(4)]
    b = [f"b/g{i}" for i in range(8)]
    gpus = a + b
    node = {g: g.split("/")[0] for g in gpus}
    scaleup = dict(node)
    assert tp_members(gpus, 8, 4, node, scaleup, fullest=False) == a + b[:4]
    assert tp_members(gpus, 8, 4, node, scaleup, fullest=True) == b
    # Two 4-GPU trays in one 72-GPU-like domain "r" (GB200): TP=8 fits no tray alone, so a group
    # spans both, the only whole group there is.
    trays = [f"t{n}/g{i}" for n in range(2) for i in range(4)]
    tray_node = {g: g.split("/")[0] for g in trays}
    assert tp_members(trays, 8, 8, tray_node, dict.fromkeys(trays, "r"), fullest=True) == trays


MAX_NODES = f"""\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  # Four replicas: 4 TP=4 groups, 16 GPUs, on the pod (scope any) within max_nodes nodes.
  - name: two-nodes
    principal: Team::"research"
    replicas: 4
    topology: {{scope: any, max_nodes: 2}}
    {MODEL}
  - name: three-nodes
    principal: Team::"research"
    replicas: 4
    topology: {{scope: any, max_nodes: 3}}
    {MODEL}
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_max_nodes_counts_whole_groups_per_node(tmp_path: Path, engine: str) -> None:
    # Drain every node but dgx03, dgx04 and dgx05, and dgx05's gpu4-gpu7. Eligible GPUs: dgx03 8,
    # dgx04 8, dgx05 4 (gpu0-gpu3, one 8-GPU domain); in whole TP=4 groups: dgx03 4 (above),
    # dgx04 8, dgx05 4: 16 in all, the 16 needed, so the count passes.
    # max_nodes 2: the two fullest nodes hold 8 + 8 = 16 eligible GPUs, but only 8 + 4 = 12 in
    # whole groups (dgx04 and dgx03 or dgx05): refused on max_nodes, 12 < 16.
    # max_nodes 3: dgx04's 2 groups, then dgx03's and dgx05's (4 GPUs each, by name): dgx03's
    # group is gpu0, gpu1, gpu3, gpu4 (never gpu2), dgx05's gpu0-gpu3.
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(MAX_NODES)
    drain = [f"dgx{n:02d}" for n in (0, 1, 2, 6, 7)] + [f"dgx05/gpu{g}" for g in range(4, 8)]
    how = PlaceSettings(why_not=True, engine=engine)
    inputs = read_inventory([POD], discover([POD]))
    drained = replace(inputs, inventory=apply_scenario(inputs.inventory, scenario_from(drain=drain)), digest_parts=None)
    report, _allowed = placements(drained, jobs_to_place([jobs], True, ()), how)
    two = _job(report, "two-nodes")
    assert two.hosting == 0
    assert [(w.domain, w.requirement, w.have, w.need) for w in two.why_not] == [("pod0", "max_nodes", 12, 16)]
    three = _job(report, "three-nodes")
    (p,) = three.placements
    assert p.domain == "pod0" and p.nodes == 3
    assert p.gpus == (
        *(f"dgx03/gpu{g}" for g in (0, 1, 3, 4)),
        *(f"dgx04/gpu{g}" for g in range(8)),
        *(f"dgx05/gpu{g}" for g in range(4)),
    )
