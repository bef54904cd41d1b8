"""The inventory analysis (verifier/authorization/analysis/inventory.py): answers derived by hand.

The inventory is tests/authorization/small/cluster.yaml: pod p0 holds rack ra (tenant a: node na0,
4 H100-SXM5-80GB, 34 FP64 TFLOPS each, NVLinked) and rack rb (tenant b, quarantined: node nb0, 2
RTX-4090). Principals (small/principals.yml): teams a (tenant a), b (tenant b), sre; users u1 (in a,
engineer), u2 (in b, intern), oc (in sre, on call). No policy below reads the context: one context, {}.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import cedarpy
import pytest

from verifier.authorization.analysis.inventory import InventoryFinding, analyse_inventory, analysis_contexts
from verifier.authorization.analysis.probe import Prober
from verifier.authorization.classes import ABSENT, PolicyReads
from verifier.authorization.evaluate import Request
from verifier.core.errors import TopologError
from verifier.session.api import load_authorization

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "tests" / "authorization" / "small" / "cluster.yaml"

POLICIES = """
@id("tenant-own")
permit (principal, action == Action::"schedule", resource)
when { principal.tenant != "" && resource.tenant == principal.tenant };

@id("quarantine-closed")
forbid (principal, action, resource) when { resource.quarantined };

@id("b-on-quarantined")
permit (principal in Team::"b", action == Action::"schedule", resource) when { resource.quarantined };

@id("fp64-hpc")
permit (principal, action == Action::"schedule", resource) when { resource.fp64 && resource.fp64_tflops >= 50 };

@id("a-own")
permit (principal in Team::"a", action == Action::"schedule", resource) when { resource.tenant == "a" };

@id("interns-no-h100")
forbid (principal, action == Action::"schedule", resource)
when { principal.role == "intern" && resource.model == "H100-SXM5-80GB" };

@id("sre-drain")
permit (principal in Team::"sre", action == Action::"drain", resource);
"""


def _policies(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    shutil.copy(ROOT / "policies" / "schema.cedarschema", folder / "schema.cedarschema")
    (folder / "set.cedar").write_text(text, encoding="utf-8")
    return folder


def test_findings_by_hand(tmp_path: Path) -> None:
    analysis = analyse_inventory(load_authorization([SMALL], _policies(tmp_path, POLICIES)))
    asked = (
        f"{analysis.principal_classes} principal classes x 4 actions x 1 contexts x "
        f"{analysis.resource_classes} resource classes"
    )
    assert analysis.findings == [
        # a-own: Team a and u1 (tenant a) on what is labelled tenant a; tenant-own allows every one of
        # those requests too (principal.tenant == "a" == resource.tenant), and ra is not quarantined.
        InventoryFinding("redundant", "a-own", ("tenant-own",), 'Team::"a" schedule Gpu::"na0/gpu0" context {}'),
        # b-on-quarantined: Team b and u2 on rb's quarantined hardware, where quarantine-closed always holds.
        InventoryFinding(
            "shadowed", "b-on-quarantined", ("quarantine-closed",), 'Team::"b" schedule Gpu::"nb0/gpu0" context {}'
        ),
        # fp64-hpc: H100s have 34 FP64 TFLOPS and RTX-4090s no full-rate FP64: nothing reaches 50.
        InventoryFinding("dead", "fp64-hpc", (), asked),
        # interns-no-h100: u2 is the only intern; its tenant b gives it no permit on ra's H100s
        # (tenant-own needs tenant a there, a-own needs Team a): denied anyway, by no permit.
        InventoryFinding(
            "redundant",
            "interns-no-h100",
            ("(no permit)",),
            'User::"u2" schedule Gpu::"na0/gpu0" context {}',
            ("(no permit)",),
        ),
        # tenant-own: on tenant a's hardware Team a and u1 (the only principals of tenant a, both in Team a)
        # are allowed by a-own as well; on tenant b's (rb, all quarantined) quarantine-closed denies; the
        # pod has no tenant. So removing it alone changes nothing either: redundancy is of one policy at
        # a time, and a-own and tenant-own are each redundant while the other stays.
        # a-own allows in its place, quarantine-closed denies: `denying` tells them apart.
        InventoryFinding(
            "redundant",
            "tenant-own",
            ("a-own", "quarantine-closed"),
            'Team::"a" schedule Gpu::"na0/gpu0" context {}',
            ("quarantine-closed",),
        ),
    ]
    # quarantine-closed decides (u2 would schedule on rb without it: tenant-own allows b on b's
    # hardware); sre-drain is the only drain permit: no finding for either.
    assert analysis.errors == {}
    assert analysis.contexts == 1


def test_requests_are_the_audits_class_pairs(tmp_path: Path) -> None:
    setup = load_authorization([SMALL], _policies(tmp_path, POLICIES))
    analysis = analyse_inventory(setup)
    # Six principals, none alike to these policies: teams a and b are named, sre is not; u1, u2 and oc
    # differ in tenant, role or team. One request per class pair, action and context, never per GPU.
    assert analysis.principal_classes == 6
    assert analysis.requests == 6 * 4 * 1 * analysis.resource_classes
    gpus_and_groups = len(setup.graph.uids_of_type("Gpu", "Node", "Rack", "Pod", "NvlinkDomain"))
    assert analysis.resource_classes < gpus_and_groups


def test_probe_lists_every_satisfied_policy_where_cedar_names_the_deciding_ones(tmp_path: Path) -> None:
    # u2 (tenant b) scheduling on rb's gpu0 satisfies tenant-own (b == b), quarantine-closed and
    # b-on-quarantined (u2 is in Team b). Cedar's own answer names only what decided it: the forbid.
    setup = load_authorization([SMALL], _policies(tmp_path, POLICIES))
    request = Request('User::"u2"', "schedule", 'Gpu::"nb0/gpu0"')
    real = setup.authorizer.decide_one(request)
    assert (real.allowed, real.reasons) == (False, ("quarantine-closed",))
    (probed,) = Prober(setup.bundle, setup.graph).probe([request])
    assert probed.satisfied == {"tenant-own", "quarantine-closed", "b-on-quarantined"}
    assert probed.errored == set()


def test_probe_against_cedarpy_directly() -> None:
    # The claim the probe rests on, asked of cedarpy without topolog: with every policy a permit,
    # diagnostics.reasons is every satisfied policy and diagnostics.errors every raising one.
    text = """
    @id("f") forbid (principal, action, resource) when { resource.x > 1 };
    @id("p") permit (principal, action, resource) when { resource.x > 0 };
    @id("raises") forbid (principal, action, resource) when { resource.x + 9223372036854775807 > 0 };
    @id("unmet") permit (principal, action, resource) when { resource.x > 5 };
    """
    real = cedarpy.PolicySet.from_str(text).to_pst()
    static = {
        t.annotations["id"]: dataclasses.replace(t, id=t.annotations["id"], effect="permit")
        for t in real.static_policies.values()
    }
    probe = cedarpy.PolicySet.from_pst(cedarpy.pst.PolicySet(templates={}, static_policies=static, template_links=()))
    entities = json.dumps(
        [
            {"uid": {"type": "R", "id": "r"}, "attrs": {"x": 2}, "parents": []},
            {"uid": {"type": "P", "id": "p"}, "attrs": {}, "parents": []},
        ]
    )
    request = {"principal": 'P::"p"', "action": 'Action::"a"', "resource": 'R::"r"', "context": {}}
    (answer,) = cedarpy.is_authorized_batch([request], probe, entities)
    # x = 2: f (2 > 1) and p (2 > 0) hold; raises overflows (2 + max); unmet (2 > 5) does not hold.
    assert sorted(answer.diagnostics.reasons) == ["f", "p"]
    assert [e.split("`")[1] for e in answer.diagnostics.errors] == ["raises"]


def test_a_policy_that_only_raises_is_not_dead(tmp_path: Path) -> None:
    # gpus * max: a GPU (gpus 1) gives max, not < 0, so never satisfied; a node, rack or pod (gpus >= 2)
    # overflows. It never applies, yet it denies every request on a group: fail closed, not dead.
    text = (
        POLICIES
        + """
    @id("overflows")
    forbid (principal, action, resource) when { resource.gpus * 9223372036854775807 < 0 };
    """
    )
    analysis = analyse_inventory(load_authorization([SMALL], _policies(tmp_path, text)))
    assert "overflows" not in {f.policy for f in analysis.findings}
    assert "overflows" in analysis.errors


def test_contexts_cover_every_value_a_policy_can_tell_apart() -> None:
    # incident tested with `has`: absent, false, true; zone compared with "eu": "eu" and a text that is
    # no literal; level compared with 3: 2, 3, 4. 3 x 2 x 3 = 18 contexts.
    reads = PolicyReads(
        frozenset(),
        frozenset(),
        {"incident": (ABSENT, False, True), "zone": ("eu",), "level": (3,)},
    )
    ctxs = analysis_contexts(reads, "policies")
    assert len(ctxs) == 18
    assert {c.get("zone") for c in ctxs} == {"eu", "topolog-none-of-the-literals"}
    assert {c.get("level") for c in ctxs} == {2, 3, 4}
    assert {c.get("incident", "absent") for c in ctxs} == {"absent", False, True}


def test_too_many_contexts_are_refused() -> None:
    # 9 booleans: 2**9 = 512 combinations, past the 256 asked at most.
    reads = PolicyReads(frozenset(), frozenset(), {f"b{i}": (False, True) for i in range(9)})
    with pytest.raises(TopologError, match="512 combinations"):
        analysis_contexts(reads, "policies")
