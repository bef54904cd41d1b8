"""`place` after its rules were cut to what placement reads (issue 46): odd hierarchies, faults, policies.

This round `place` evaluates only the live rules the relations it reads depend on, counts a rack's
and a pod's GPUs from their nodes' profiles (place_node_profile) instead of per GPU, and finds a
GPU without a model, fabric share, class or node by negating the input itself. Each of those is
safe only if the loader's hierarchy holds (a GPU in one node, nodes only in racks and pods) and
nothing placement reads (the report, --why-not, what-if, `verify --jobs`, the service's prepared
path) is left unevaluated. The inventory below is built to break that if it can: nested pods, a
node straight in a pod with no rack, a GPU under a PCIe switch, GPUs outside nodes in a rack, in
a pod and outside everything, a quarantined rack whose drained node sits on a fabric island of its
own, a down GPU, labels on GPUs, nodes, racks and pods. The same answers were compared byte for
byte with the start commit's (ffe2ae7) over the shipped inventories, these and generated fleets.

By hand, from INVENTORY and inventories/principals.yml + the shipped policies: dan is team
research (tenant research: permitted on hardware labelled so, on it or an ancestor); alice is
team-nlp (no policy permits her here); `quarantine: "true"` on a resource or an ancestor closes it
to everyone (policy quarantine-closed). Stages in order: gpus (count), ..., excluded (7), healthy
(8: not down, drained or cut off from its host), authorization (10).

- GPUs per domain: na holds gpu0, gpu1 (quarantined) and gpu2 (under PCIe switch sw): 3; nb holds
  gpu0 (down) and gpu1: 2; nc (drained, in rack rb, quarantined) 2; nd 2; loose gl (in rack ra),
  go (in pod outer), gx (outside every pod). Eligible for dan: na/gpu0, na/gpu2, nb/gpu1, nd/gpu0,
  nd/gpu1, gl, go, gx (na/gpu1 and nc's are quarantined, nb/gpu0 down, nc drained).
- Scope any: nc's NIC is cabled to leaf1, na's and nb's to leaf0: in pod outer the main island is
  leaf0's (2 nodes to 1), so nc is cut off into a domain of its own named by its island, "leaf1".
  outer = na(3) + gl + nb(2) + go = 7 GPUs (eligible 5); inner (inside outer) = na(3) + gl + nb(2)
  = 6 (eligible 4); "inventory" (outside every pod) = nd(2) + gx = 3 (eligible 3; nd reaches no
  fabric, but the inventory scope has no island, so nd is not cut off); leaf1 = nc(2) (eligible 0).
- Scope rack: ra = na(3) + gl = 4 (eligible 3: gl, na/gpu0, na/gpu2); rb = nc(2) (eligible 0).
  nb sits in no rack: no rack domain of it.
- Scope node: na, nb, nc, nd. Scope nvlink_domain: na/gpu0 and na/gpu1 share nvsw0 (one domain of
  2), every other GPU is a domain of its own: 1 + 9 = 10 more, 11 in all.
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
from verifier.session.place_run import jobs_to_place, place, what_if
from verifier.sources.scenario import scenario_from

ROOT = Path(__file__).resolve().parents[2]

INVENTORY = """\
apiVersion: topolog.dev/v1
kind: Inventory
objects:
  - name: outer
    kind: pod
    labels: {tenant: research}
    children:
      - name: inner
        kind: pod
        children:
          - name: ra
            kind: rack
            children:
              - name: na
                kind: node
                model: DGX-H100
                children:
                  - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
                  - {name: gpu1, kind: gpu, model: H100-SXM5-80GB, labels: {quarantine: "true"}}
                  - name: sw
                    kind: pcie_switch
                    model: PEX89104
                    children:
                      - {name: gpu2, kind: gpu, model: H100-SXM5-80GB}
                  - {name: nvsw0, kind: nvswitch, model: NVSwitch-Gen3}
                  - {name: nic0, kind: nic, model: ConnectX-7}
                links:
                  - {a: gpu0, b: nvsw0, kind: nvswitch, bandwidth: 50 GB/s, count: 2}
                  - {a: gpu1, b: nvsw0, kind: nvswitch, bandwidth: 50 GB/s, count: 2}
              - {name: gl, kind: gpu, model: H100-SXM5-80GB}
          - name: nb
            kind: node
            model: DGX-H100
            children:
              - {name: gpu0, kind: gpu, model: H100-SXM5-80GB, state: down}
              - {name: gpu1, kind: gpu, model: H100-SXM5-80GB}
              - {name: nic0, kind: nic, model: ConnectX-7}
      - {name: go, kind: gpu, model: H100-SXM5-80GB}
      - name: rb
        kind: rack
        labels: {quarantine: "true"}
        children:
          - name: nc
            kind: node
            model: DGX-H100
            state: drained
            children:
              - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
              - {name: gpu1, kind: gpu, model: H100-SXM5-80GB}
              - {name: nic0, kind: nic, model: ConnectX-7}
      - {name: leaf0, kind: switch, model: QM9700}
      - {name: leaf1, kind: switch, model: QM9700}
  - name: nd
    kind: node
    model: DGX-H100
    labels: {tenant: research}
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
      - {name: gpu1, kind: gpu, model: H100-SXM5-80GB, labels: {tenant: research}}
      - {name: nic0, kind: nic, model: ConnectX-7}
  - {name: gx, kind: gpu, model: H100-SXM5-80GB, labels: {tenant: research}}
links:
  - {a: na/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: nb/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: nc/nic0, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
"""

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: any1, principal: dan, gpus: 1, topology: {scope: any}}
  - {name: any4, principal: dan, gpus: 4, topology: {scope: any}}
  - {name: any5, principal: dan, gpus: 5, topology: {scope: any}}
  - {name: any6, principal: dan, gpus: 6, topology: {scope: any}}
  - {name: rack1, principal: dan, gpus: 1, topology: {scope: rack}}
  - {name: rack3, principal: dan, gpus: 3, topology: {scope: rack}}
  - {name: rack4, principal: dan, gpus: 4, topology: {scope: rack}}
  - {name: node2, principal: dan, gpus: 2, topology: {scope: node}}
  - {name: node3, principal: dan, gpus: 3, topology: {scope: node}}
  - {name: nvl2, principal: dan, gpus: 2, topology: {scope: nvlink_domain}}
  - {name: nvl1, principal: dan, gpus: 1, topology: {scope: nvlink_domain}}
  - {name: anyq, principal: dan, gpus: 3, topology: {scope: any}, exclude: {quarantine: "true"}}
  - {name: anyt, principal: dan, gpus: 2, topology: {scope: any}, exclude: {tenant: research}}
  - {name: alice2, principal: alice, gpus: 2, topology: {scope: any}}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("odd-hierarchy")
    (here / "odd.yaml").write_text(INVENTORY)
    (here / "jobs.yaml").write_text(JOBS)
    shutil.copy(ROOT / "inventories" / "principals.yml", here / "principals.yml")
    (here / "policies").mkdir()
    for f in [*(ROOT / "policies").glob("*.cedar"), ROOT / "policies" / "schema.cedarschema"]:
        shutil.copy(f, here / "policies" / f.name)
    return here


@pytest.fixture(scope="module", params=["memory", "duckdb"])
def report(request: pytest.FixtureRequest, folder: Path) -> PlaceReport:
    return place([folder / "odd.yaml"], [folder / "jobs.yaml"], why_not=True, engine=request.param)


def _job(report: PlaceReport, name: str) -> JobPlacements:
    (found,) = [j for j in report.jobs if j.job.name == name]
    return found


def _why(job: JobPlacements) -> list[tuple[str, str, int, int]]:
    return [(w.domain, w.requirement, w.have, w.need) for w in job.why_not]


def test_scope_any_counts_nested_pods_loose_gpus_and_the_cut_off_node(report: PlaceReport) -> None:
    any1, any5, any6 = (_job(report, n) for n in ("any1", "any5", "any6"))
    # leaf1 (nc alone) has no eligible GPU; the other three host one GPU each.
    assert (any1.candidates, any1.hosting) == (4, 3)
    assert _why(any1) == [("leaf1", "healthy", 0, 1)]
    # 5 GPUs: only outer's 5 eligible; members are the first eligible by id.
    assert [(p.domain, p.gpus) for p in any5.placements] == [("outer", ("gl", "go", "na/gpu0", "na/gpu2", "nb/gpu1"))]
    # inner: 6 GPUs, 5 in service (nb/gpu0 down), 4 permitted -> authorization; inventory 3 < 5; leaf1 2 < 5.
    assert _why(any5) == [
        ("inner", "authorization", 4, 5),
        ("inventory", "gpus", 3, 5),
        ("leaf1", "gpus", 2, 5),
    ]
    # 6 GPUs: inner's 5 in service fall short first; outer's 7 -> 6 in service -> 5 permitted.
    assert any6.placements == []
    assert _why(any6) == [
        ("inner", "healthy", 5, 6),
        ("inventory", "gpus", 3, 6),
        ("leaf1", "gpus", 2, 6),
        ("outer", "authorization", 5, 6),
    ]


def test_a_rack_counts_its_node_with_a_gpu_under_a_switch_and_its_loose_gpu(report: PlaceReport) -> None:
    rack1, rack3, rack4 = (_job(report, n) for n in ("rack1", "rack3", "rack4"))
    assert (rack1.candidates, rack1.hosting) == (2, 1)  # ra and rb; nb is in no rack
    assert _why(rack1) == [("rb", "healthy", 0, 1)]  # nc drained
    assert [(p.domain, p.gpus) for p in rack3.placements] == [("ra", ("gl", "na/gpu0", "na/gpu2"))]
    # ra: 4 GPUs, all in service, 3 permitted (na/gpu1 quarantined); rb 2 < 4.
    assert _why(rack4) == [("ra", "authorization", 3, 4), ("rb", "gpus", 2, 4)]


def test_nodes_and_nvlink_domains(report: PlaceReport) -> None:
    node2, node3, nvl2 = (_job(report, n) for n in ("node2", "node3", "nvl2"))
    assert [(p.domain, p.gpus) for p in node2.placements] == [
        ("na", ("na/gpu0", "na/gpu2")),
        ("nd", ("nd/gpu0", "nd/gpu1")),
    ]
    assert _why(node2) == [("nb", "healthy", 1, 2), ("nc", "healthy", 0, 2)]
    assert _why(node3) == [
        ("na", "authorization", 2, 3),
        ("nb", "gpus", 2, 3),
        ("nc", "gpus", 2, 3),
        ("nd", "gpus", 2, 3),
    ]
    # 11 domains, none with 2 GPUs to give: na/gpu0's pair has 1 permitted, the rest hold 1 GPU.
    assert (nvl2.candidates, nvl2.hosting) == (11, 0)
    assert ("na/gpu0", "authorization", 1, 2) in _why(nvl2)
    assert sum(1 for w in nvl2.why_not if (w.requirement, w.have) == ("gpus", 1)) == 10


def test_exclusions_reach_gpus_through_their_node_or_their_own_ancestors(report: PlaceReport) -> None:
    anyq, anyt = _job(report, "anyq"), _job(report, "anyt")
    # quarantine: na/gpu1 (its own label, so its own profile tag) and nc (rack rb's, through its node)
    # are excluded. inner 6 -> 5 -> 4 in service; outer 7 -> 6 -> 5; inventory 3; leaf1 (nc) 2 < 3.
    # Every best trio has a GPU outside nodes (no pair bandwidth: 0) over 2 "nodes": ties go by name.
    assert [p.domain for p in anyq.placements] == ["inner", "inventory", "outer"]
    assert _why(anyq) == [("leaf1", "gpus", 2, 3)]
    # tenant research sits on pod outer (every GPU in it), on node nd and on GPUs nd/gpu1 and gx:
    # every GPU is excluded, in every domain, whether it is in a node or not.
    assert anyt.placements == []
    assert _why(anyt) == [
        ("inner", "excluded", 0, 2),
        ("inventory", "excluded", 0, 2),
        ("leaf1", "excluded", 0, 2),
        ("outer", "excluded", 0, 2),
    ]


def test_a_principal_no_policy_permits_is_refused_everywhere(report: PlaceReport) -> None:
    alice = _job(report, "alice2")
    assert alice.placements == []
    assert _why(alice) == [
        ("inner", "authorization", 0, 2),
        ("inventory", "authorization", 0, 2),
        ("leaf1", "healthy", 0, 2),
        ("outer", "authorization", 0, 2),
    ]


def test_what_if_a_drained_rack_costs_the_jobs_that_needed_it(folder: Path) -> None:
    # Draining ra drains na (3 GPUs) and gl: outer keeps go and nb/gpu1 (2), inner nb/gpu1 (1),
    # inventory 3. any4 (best: outer) and rack3 (only ra) lose their placement; any1 and node2 keep one.
    (folder / "few.yaml").write_text(
        JOBS.split("jobs:\n")[0]
        + "jobs:\n"
        + "".join(
            line + "\n"
            for line in JOBS.splitlines()
            if any(f"name: {n}," in line for n in ("any1", "any4", "rack3", "node2"))
        )
    )
    report = what_if([folder / "odd.yaml"], [folder / "few.yaml"], scenario_from(drain=["ra"]))
    assert report.lost == ["any4", "rack3"]
    assert {c.job: (c.hosting_before, c.hosting_after) for c in report.jobs} == {
        "any1": (3, 3),
        "any4": (2, 0),
        "rack3": (1, 0),
        "node2": (2, 1),
    }


def test_verify_jobs_quotes_the_denying_policy_of_the_closest_domain(folder: Path) -> None:
    # rack4's closest domain is ra (3 GPUs pass before authorization, rb 2): its why-not names the
    # policy that denies, read from the GPUs of ra (place_domain_gpu), which verify must evaluate.
    code, out, err = run_cli(
        "verify", str(folder / "odd.yaml"), "--jobs", str(folder / "jobs.yaml"), "--format", "json"
    )
    assert code == 1, err
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "PLACE001" and f["subjects"][:1] == ["rack4"]]
    assert len(found) == 1
    assert found[0]["message"].endswith(
        "Closest: ra: policy quarantine-closed denies dan (3 GPUs it may schedule on, job needs 4)."
    )


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_the_service_answers_as_place_why_not(folder: Path, engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The revision's prepared placement (the plain path judged in Python for these jobs) must give
    # `place --why-not --format json`'s bytes for each job on its own. nvl1: an NVLink domain's own
    # GPUs are read from the admit's engine; a memory revision's evaluation is closed once its state
    # is kept, so reading them from that one gives none (placements of 0 GPUs: admitted on nothing).
    monkeypatch.setattr(placing, "ENGINE", engine)
    monkeypatch.setattr(placing, "ANSWERS", 0)
    revision = build_revision(ServeConfig((folder / "odd.yaml",)))
    prepared = revision.placing.get()
    assert prepared is not None, revision.placing.error
    for name in ("any5", "rack4", "node3", "anyt", "alice2", "nvl1"):
        line = next(x for x in JOBS.splitlines() if f"name: {name}," in x)
        job = folder / f"one-{name}.yaml"
        job.write_text(JOBS.split("jobs:\n")[0] + "jobs:\n" + line + "\n")
        code, cli, err = run_cli("place", str(folder / "odd.yaml"), str(job), "--why-not", "--format", "json")
        # any5 fits outer, nvl1 8 NVLink domains (each on its own GPU); the others fit nowhere (above).
        assert code == (0 if name in ("any5", "nvl1") else 1), err
        answer = prepared.place(jobs_to_place([job], True).jobs, 0)
        assert answer is not None
        assert render_json(answer) == cli, name


def test_without_a_principals_file_nothing_is_placed(tmp_path: Path) -> None:
    # Fail closed: no principals.yml beside the inventory (nor in the working directory) is bad input.
    (tmp_path / "odd.yaml").write_text(INVENTORY)
    (tmp_path / "jobs.yaml").write_text(JOBS)
    code, out, err = run_cli("place", str(tmp_path / "odd.yaml"), str(tmp_path / "jobs.yaml"))
    assert code == 2
    assert out == ""
    assert "principals" in err


def test_gpus_outside_nodes_are_not_one_node_for_max_nodes(folder: Path) -> None:
    # Once (also at ffe2ae7) GPUs outside nodes were pooled as one node ("" in place_node_gpus) for
    # max_nodes and the member pick, so two GPUs in different places passed max_nodes: 1.
    # A 2-GPU job of scope any with max_nodes 1. In outer, the eligible GPUs are gl (in rack ra, in no
    # node), go (straight in the pod, in no node), na/gpu0 and na/gpu2 (node na) and nb/gpu1 (node nb):
    # the only node holding 2 of them is na, so outer's placement is na/gpu0 + na/gpu2 on 1 node, never
    # gl + go (two GPUs that share no node, each a machine of its own as the domains count them).
    (folder / "one-node.yaml").write_text(
        JOBS.split("jobs:\n")[0]
        + "jobs:\n  - {name: mn1, principal: dan, gpus: 2, topology: {scope: any, max_nodes: 1}}\n"
    )
    report = place([folder / "odd.yaml"], [folder / "one-node.yaml"])
    outer = [p for p in _job(report, "mn1").placements if p.domain == "outer"]
    assert [(p.gpus, p.nodes) for p in outer] == [(("na/gpu0", "na/gpu2"), 1)]


def test_an_nvlink_domain_is_placed_on_its_own_gpus(report: PlaceReport) -> None:
    # nvl1 (1 GPU, scope nvlink_domain). na/gpu2 (under PCIe switch sw, no NVLink) is a domain of its
    # own beside na/gpu0's (gpu0 + gpu1 on nvsw0), with the same profile as na/gpu0 (node na, no
    # label): its member must be na/gpu2 itself, not the first GPU of the profile (na/gpu0, another
    # domain's; so it was at ffe2ae7). Eligible per domain: na/gpu0's pair gives gpu0 (gpu1 is
    # quarantined), nb/gpu0 is down, nc's are drained: 8 of the 11 domains host it, each on its own GPU.
    nvl1 = _job(report, "nvl1")
    assert (nvl1.candidates, nvl1.hosting) == (11, 8)
    assert {p.domain: p.gpus for p in nvl1.placements} == {
        "gl": ("gl",),
        "go": ("go",),
        "gx": ("gx",),
        "na/gpu0": ("na/gpu0",),
        "na/gpu2": ("na/gpu2",),
        "nb/gpu1": ("nb/gpu1",),
        "nd/gpu0": ("nd/gpu0",),
        "nd/gpu1": ("nd/gpu1",),
    }
