"""`authorize` with no cache expands only the part of a fleet a request names (issue 46).

verifier/sources/inventory/partial.py expands a counted top-level entry's instances that the
request or the policies name, plus two representatives, and checks every other instance as a
copy of them; verifier/authorization/lazy.py builds the entities from that. Held here: (1) the
partial inventory is what the whole load makes, minus the plain instances; (2) every decision,
its reasons, errors and effects are the whole load's, over many requests, on a generated
templated fleet and on every shipped inventory; (3) a fleet broken only far from the request
(a `foreach` value out of range, an override naming no instance, a label the policies cannot
read, a duplicate id, a top-level cable to a missing leaf) is refused like the whole load
refuses it.
"""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import pytest
from fleet_helpers import POLICIES, PRINCIPALS, ROOT, Request, answer, authorize_cli, lazy, place, pod_fleet, whole

from benchmarks.verify_bench import Layout, inventory_yaml
from verifier.authorization.lazy import lazy_setup
from verifier.authorization.requests import decide
from verifier.authorization.setup import build_setup
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.partial import partial_inventory
from verifier.sources.inventory.raw_files import read_files
from verifier.sources.principals import load_principals

SHIPPED = sorted((ROOT / "inventories").glob("*.yaml"))

# 5 pods (p0..p4) x 2 racks x 2 nodes of 2 GPUs and 2 NICs, NIC l of every node to its pod's
# leaf l, every leaf to the one spine (leaf 0 twice: once written in the pod), and each pod's
# node r1-n1's NIC 1 to the spine too (written at the top); one override in p0 and one in p3.
FLEET = pod_fleet(5)

# Each breaks FLEET once, away from a request about p0 (worked out by hand from FLEET):
BREAKS = [
    # every pod's cabling names leaf 2 of 0..1: the representatives p1, p2 have it too
    ("foreach value out of range", 'l: 0..1}}\n      - {a: "{pod}-leaf0"', 'l: 0..2}}\n      - {a: "{pod}-leaf0"'),
    # no node p4-r0-n7: p4 is expanded for its override key, which then matches nothing
    ("override naming no instance", "p3-r1-n0:", "p4-r0-n7:"),
    # the far pod p3's node p3-r1-n0 carries a quarantine label Cedar cannot read as a Bool
    ("bad label far from the request", "labels: {tenant: team-nlp}", 'labels: {quarantine: "maybe"}'),
    # a top-level object takes the id of plain pod p4's rack p4-r1 (a stand-in)
    ("duplicate id of a plain instance", "  - {name: spine0,", "  - {name: p4-r1, kind: rack}\n  - {name: spine0,"),
    # the top-level cabling names pods 0..5: there is no p5
    ("top-level cable to a missing pod", "foreach: {p: 0..4,", "foreach: {p: 0..5,"),
    # a top-level cable from p1-leaf0 to p{q}-leaf0 for q in 0..4: q = 1 joins p1-leaf0 to itself
    (
        "top-level cable from a leaf to itself",
        'links:\n  - {a: "p{p}',
        'links:\n  - {a: p1-leaf0, b: "p{q}-leaf0", kind: infiniband, bandwidth: 400 Gb/s, foreach: {q: 0..4}}\n'
        '  - {a: "p{p}',
    ),
    # every pod's leaf 0 cabled to a spine9 that is not there (written in the pod)
    ("pod cable to a missing spine", "b: /spine0,", "b: /spine9,"),
    # the cable written at the top names NIC 5 of the plain pod p4's node r1-n1 alone: the
    # template makes NICs 0..1 (every other pod's cable is gone: only the plain pod is wrong)
    (
        "top-level cable to a missing NIC",
        '-r1-n1/nic1", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: 0..4}}',
        '-r1-n1/nic5", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: 4..4}}',
    ),
    # an unknown model on the plain pods' leaves (and every other pod's)
    ("unknown model", "model: QM9700, count: 2}", "model: QM9701, count: 2}"),
]


def test_the_partial_inventory_leaves_out_the_plain_pods(tmp_path: Path) -> None:
    # A request about p0-r0-n0/gpu0 names pod p0 (also an override key's pod, as is p3);
    # p1 and p2 are the first two others, the representatives; p4 alone is plain. So the
    # partial inventory holds p0..p3 as the whole load has them, and only the ids of p4's
    # objects outside its stamped nodes are written out (the pod, 2 racks, 2 leaves, 4 nodes).
    path = place(tmp_path, FLEET)
    part = partial_inventory(read_files([path]), ["dan", "p0-r0-n0/gpu0", "{}"])
    assert part is not None
    whole = load_inventory([path])
    expected_plain = {"p4", "p4-r0", "p4-r1", "p4-leaf0", "p4-leaf1"} | {
        f"p4-r{r}-n{n}" for r in (0, 1) for n in (0, 1)
    }
    assert part.plain_ids == expected_plain
    assert not any(oid.startswith("p4") for oid in part.inventory.objects)
    kept = {oid: o for oid, o in whole.objects.items() if not oid.startswith("p4")}
    assert part.inventory.objects == kept


def _requests() -> list[Request]:
    """Principals of every kind, every action, and resources in expanded and plain pods."""
    out: list[Request] = []
    resources = [
        "p0-r0-n0/gpu0",
        "p0-r0-n1/gpu1",  # quarantined by its override
        "p3-r1-n0/gpu0",  # tenant team-nlp by its override
        "p4-r1-n1/gpu1",  # a plain pod's GPU: its pod is then named, so expanded
        "p4-r1-n1",
        "p2-r0",
        "p1",
        'Gpu::"p4-r0-n0/gpu1"',
        "p9-r0-n0/gpu0",  # nowhere with 5 pods: refused alike; with 12, a plain pod's GPU
        "p11-r1-n1/gpu1",
        "p10-r0",
    ]
    for who in ("dan", "olga", "node-drainer", 'Team::"research"'):
        for action in ("schedule", "drain"):
            for res in resources:
                out.append((who, action, res, {}))
    out.append(("olga", "drain", "p4-r0-n0", {"incident": True}))
    return out


# FLEET with 12 pods (p0..p11): names of two lengths, and "p1" is part of "p10" and "p11".
FLEET12 = pod_fleet(12)


@pytest.mark.parametrize("fleet", [FLEET, FLEET12], ids=["5 pods", "12 pods"])
def test_decisions_match_the_whole_load_on_a_generated_fleet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fleet: str
) -> None:
    monkeypatch.setenv("TOPOLOG_CACHE_DIR", "")
    path = place(tmp_path, fleet)
    assert partial_inventory(read_files([path]), ["dan", "p0-r0-n0/gpu0", "{}"]) is not None  # the lazy way
    for request in _requests():
        assert lazy(path, request) == whole(path, request), request


def test_decisions_match_on_the_benchmark_fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # benchmarks/verify_bench.py's fleet at 2,048 GPUs: 8 scalable units su0000..su0007 of 8
    # racks of 4 DGX H100, overrides in su0000. A request about su0003 expands su0000 (override
    # keys) and su0003; su0001 and su0002 are the representatives; su0004..su0007 are plain.
    monkeypatch.setenv("TOPOLOG_CACHE_DIR", "")
    path = place(tmp_path, inventory_yaml(Layout(2048)))
    part = partial_inventory(read_files([path]), ["dan", "su0003-r7-n3/gpu7", "{}"])
    assert part is not None
    assert {oid for oid in part.plain_ids if len(oid) == 6} == {"su0004", "su0005", "su0006", "su0007"}
    assert not any(oid.startswith(("su0004", "su0005", "su0006", "su0007")) for oid in part.inventory.objects)
    for who in ("dan", "alice", "olga"):
        for res in ("su0003-r7-n3/gpu7", "su0000-r2-n0/gpu6", "su0001-r0", 'Pod::"su0006"', "su0005-r1-n2/gpu3"):
            for action in ("schedule", "drain"):
                request: Request = (who, action, res, {})
                assert lazy(path, request) == whole(path, request), request


@pytest.mark.parametrize("inventory", SHIPPED, ids=lambda p: p.name)
def test_decisions_match_on_every_shipped_inventory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inventory: Path
) -> None:
    monkeypatch.setenv("TOPOLOG_CACHE_DIR", "")
    whole_inv = load_inventory([inventory])
    gpus = sorted(o.id for o in whole_inv.objects.values() if o.kind == "gpu")
    nodes = sorted(o.id for o in whole_inv.objects.values() if o.kind == "node")
    setup = build_setup(whole_inv, [inventory], POLICIES, load_principals(PRINCIPALS))
    for who in ("dan", "olga"):
        for res in (gpus[0], gpus[-1], nodes[-1]):
            request: Request = (who, "schedule", res, {})
            expected = answer(partial(decide, setup, who, "schedule", res, {}))
            assert lazy(inventory, request, principals=PRINCIPALS) == expected, (inventory.name, who, res)


@pytest.mark.parametrize(("what", "old", "new"), BREAKS, ids=[b[0] for b in BREAKS])
def test_a_fleet_broken_far_from_the_request_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, old: str, new: str
) -> None:
    monkeypatch.setenv("TOPOLOG_CACHE_DIR", "")
    assert FLEET.count(old) == 1, what
    path = place(tmp_path, FLEET.replace(old, new))
    request: Request = ("dan", "schedule", "p0-r0-n0/gpu0", {})
    files = read_files([path])
    principals = load_principals(tmp_path / "principals.yml")
    # Neither the partial inventory nor the lazy setup answers: the whole load is what refuses.
    assert (
        lazy_setup(
            files, [path], POLICIES, lambda: principals, ["dan", "p0-r0-n0/gpu0", "{}"], lambda: load_inventory([path])
        )
        is None
    )
    truth = whole(path, request)
    assert truth[0] == "refused", what
    assert lazy(path, request) == truth, what
    # From the CLI, with the cache off, and on (twice: a second run may not read a first run's view).
    for cache in ("", str(tmp_path / "cache"), str(tmp_path / "cache")):
        code, out, err = authorize_cli(path, "p0-r0-n0/gpu0", cache=cache)
        assert code == 2, (what, cache, out, err)
        assert "fleet.yaml:" in err and "Traceback" not in err, (what, err)


def test_the_unbroken_fleet_is_answered_from_the_cli(tmp_path: Path) -> None:
    # dan is in team research, p0-r0-n0 is labelled tenant: research: tenant-own-hardware allows.
    path = place(tmp_path, FLEET)
    code, out, err = authorize_cli(path, "p0-r0-n0/gpu0", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["decision"] == "ALLOW"
    assert [p["id"] for p in doc["policies"]] == ["tenant-own-hardware"]


def test_a_policy_naming_a_rack_of_a_plain_pod_reads_its_real_count(tmp_path: Path) -> None:
    # The shipped policies plus one that forbids everything while rack p4-r1 holds 4 GPUs. By
    # hand: p4-r1 holds p4-r1-n0 and p4-r1-n1 of 2 GPUs each = 4, so dan's request about
    # p0-r0-n0/gpu0 (otherwise allowed by tenant-own-hardware) is denied by the new policy. Pod
    # p4 would be plain for that request, but the policy names it, so it is expanded: as a
    # stand-in its rack would hold no GPU and the request would be allowed.
    policies = tmp_path / "policies"
    shutil.copytree(POLICIES, policies)
    (policies / "far-rack.cedar").write_text(
        '@id("far-rack-full")\nforbid (principal, action, resource)\nwhen { Rack::"p4-r1".gpus == 4 };\n'
    )
    path = place(tmp_path, FLEET)
    code, out, err = authorize_cli(path, "p0-r0-n0/gpu0", "--policies", str(policies), "--format", "json")
    assert code == 1, (out, err)
    doc = json.loads(out)
    assert doc["decision"] == "DENY"
    assert [p["id"] for p in doc["policies"]] == ["far-rack-full"]
