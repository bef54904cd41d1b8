"""`who` and `what`: answers derived by hand from the inventories, the principals files and the policies.

Inputs read by hand:
- inventories/mixed-fleet.yaml: racks euw-a100 (2 HGX A100 nodes, tenant team-nlp), euw-h100 (2 HGX
  H100, tenant team-vision), euw-mi300x (2 MI300X nodes, tenant team-nlp), euw-rtx (4 RTX 4090
  workstations, 2 GPUs each, tenant students; rtx-n0 and rtx-n1 quarantined, rtx-n2 tenant robotics);
  the fleet `acme` is labelled owner infra-eu, inherited by everything.
- inventories/principals.yml: hpc team = {carol, hana}; olga in infra-eu (in sre), on call; alice in
  team-nlp (tenant team-nlp); the teams attribute lists every team, nested ones too.
- tests/authorization/small: rack ra (tenant a, node na0, 4 H100), rack rb (tenant b, quarantined,
  node nb0, 2 RTX 4090); teams a, b, sre; u1 in a, u2 (intern) in b, oc in sre (on call).
- policies/: the shipped policies (their rules are quoted where used).
The policies read one context attribute, `incident`, tested with `has`: the contexts asked are
{} (absent), {"incident": false} and {"incident": true}.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.authorization.analysis.questions import what, who
from verifier.authorization.evaluate import ACTIONS
from verifier.session.api import load_authorization

ROOT = Path(__file__).resolve().parents[3]
MIXED = ROOT / "inventories" / "mixed-fleet.yaml"
SMALL = ROOT / "tests" / "authorization" / "small" / "cluster.yaml"
SCHEMA = (ROOT / "policies" / "schema.cedarschema").read_text(encoding="utf-8")
EVERY = (0, 1, 2)  # the indexes of the three contexts: {}, {"incident": false}, {"incident": true}
INCIDENT = 2


def _everywhere(*policies: str) -> tuple[tuple[int, tuple[str, ...]], ...]:
    return tuple((ci, tuple(policies)) for ci in EVERY)


def _allowed(result: object) -> dict[str, object]:
    return {e.principal: e.allowed for e in result.allowed}  # type: ignore[attr-defined]


def test_contexts_are_every_one_the_policies_tell_apart() -> None:
    r = who(load_authorization([MIXED]), "schedule", 'Gpu::"mi300x-n0/gpu0"')
    assert r.coverage.contexts == [{}, {"incident": False}, {"incident": True}]
    assert r.coverage.complete  # a boolean read with `has`: absent, false, true is every case


def test_only_the_hpc_team_may_schedule_on_an_mi300x_gpu() -> None:
    # MI300X: 81.7 FP64 TFLOPS (catalogue), so fp64 && fp64_tflops >= 50 holds. fp64-reserved-for-hpc
    # forbids schedule to every principal not in Team::"hpc" (alice and Team::"team-nlp" would have
    # tenant-own-hardware: euw-mi300x nodes are tenant team-nlp; the forbid wins). hpc-fp64-hardware
    # permits principals in Team::"hpc": the team itself (an entity is in itself), carol (teams
    # [hpc]) and hana (teams [team-vision, hpc]). None of the three has tenant team-nlp, so
    # tenant-own-hardware is not among the reasons; the GPU is not quarantined, so no context
    # changes anything.
    r = who(load_authorization([MIXED]), "schedule", 'Gpu::"mi300x-n0/gpu0"')
    assert _allowed(r) == {
        'Team::"hpc"': _everywhere("hpc-fp64-hardware"),
        'User::"carol"': _everywhere("hpc-fp64-hardware"),
        'User::"hana"': _everywhere("hpc-fp64-hardware"),
    }
    assert r.errors == []
    assert r.principals == 11 + 10 + 2  # principals.yml: 11 teams, 10 users, 2 service accounts


def test_only_on_call_olga_may_drain_a_quarantined_node_and_only_during_an_incident() -> None:
    # rtx-n0 is quarantined: quarantine-closed forbids every action unless
    # `context has incident && context.incident && principal.on_call`. Only olga is on call, so in
    # {} and {"incident": false} nobody may, and in {"incident": true} only olga, whom three
    # permits allow to drain: sre-drain (in sre through infra-eu), owners-administer (owner
    # infra-eu is in her teams) and oncall-incident-access (quarantined, incident, on call).
    r = who(load_authorization([MIXED]), "drain", 'Node::"rtx-n0"')
    assert _allowed(r) == {
        'User::"olga"': ((INCIDENT, ("oncall-incident-access", "owners-administer", "sre-drain")),),
    }


def test_a_context_given_asks_that_context_only() -> None:
    r = who(load_authorization([MIXED]), "drain", 'Node::"rtx-n0"', {"incident": False})
    assert r.coverage.contexts == [{"incident": False}]
    assert not r.coverage.complete
    assert r.allowed == []  # quarantine-closed forbids everyone outside an incident (above)


def test_what_alice_may_do_on_the_mixed_fleet() -> None:
    # alice: team-nlp (tenant team-nlp), engineer, not on call. tenant-own-hardware lets her
    # schedule and reserve on team-nlp hardware: euw-a100 (2 nodes x 8 = 16 GPUs) and euw-mi300x;
    # the MI300X GPUs are taken away by fp64-reserved-for-hpc (she is not in hpc). She drains and
    # administers nothing: sre-drain needs Team::"sre", owners-administer needs infra-eu in her
    # teams, oncall-incident-access needs on call.
    r = what(load_authorization([MIXED]), 'User::"alice"', ACTIONS)
    assert r.groups == {"euw-a100": 16, "euw-h100": 16, "euw-mi300x": 16, "euw-rtx": 8}
    assert [(row.action, row.group, row.gpus, row.allowed) for row in r.rows] == [
        ("schedule", "euw-a100", 16, _everywhere("tenant-own-hardware")),
        ("reserve", "euw-a100", 16, _everywhere("tenant-own-hardware")),
    ]


def test_what_olga_may_drain_node_by_node() -> None:
    # Nodes of mixed-fleet: a100-n0/1, h100-n0/1, mi300x-n0/1, rtx-n0..3. olga drains every node by
    # sre-drain and owners-administer (owner infra-eu everywhere), except the quarantined rtx-n0
    # and rtx-n1 (quarantine-closed), which she drains only during an incident, where
    # oncall-incident-access allows her too. Per rack: 2 nodes each; euw-rtx splits in two rows,
    # rtx-n2 and rtx-n3 (2 GPUs each) in every context, rtx-n0 and rtx-n1 in the incident only.
    r = what(load_authorization([MIXED]), 'User::"olga"', ["drain"], "Node")
    both = _everywhere("owners-administer", "sre-drain")
    incident = ((INCIDENT, ("oncall-incident-access", "owners-administer", "sre-drain")),)
    assert sorted((row.group, row.resources, row.gpus, row.allowed) for row in r.rows) == sorted(
        [
            ("euw-a100", 2, 16, both),
            ("euw-h100", 2, 16, both),
            ("euw-mi300x", 2, 16, both),
            ("euw-rtx", 2, 4, both),
            ("euw-rtx", 2, 4, incident),
        ]
    )


def test_what_on_the_small_cluster() -> None:
    # u1 (team a, tenant a): tenant-own-hardware gives schedule and reserve on rack ra (4 H100,
    # 34 FP64 TFLOPS: not reserved); rb is tenant b. Nothing to drain or administer (no sre, no
    # owner label).
    r = what(load_authorization([SMALL]), 'User::"u1"', ACTIONS)
    assert [(row.action, row.group, row.resources, row.gpus) for row in r.rows] == [
        ("schedule", "ra", 4, 4),
        ("reserve", "ra", 4, 4),
    ]
    assert r.resources == 6 and r.resource_classes == 2  # the H100s alike, the RTXs alike
    assert r.requests == 2 * 4 * 3  # resource classes x actions x contexts: one Cedar request each


def _policies(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "schema.cedarschema").write_text(SCHEMA, encoding="utf-8")
    (folder / "policies.cedar").write_text(text, encoding="utf-8")
    return folder


OVERFLOWS = """
@id("drain-small-things")
permit (principal, action == Action::"drain", resource)
when { resource.gpus * 4611686018427387904 > 0 };
"""


def test_a_request_that_errors_is_listed_and_never_allowed(tmp_path: Path) -> None:
    # gpus * 2^62: for a GPU (gpus = 1) 2^62 > 0 holds, so every principal may drain it; for node
    # na0 (gpus = 4) the product is 2^64, past a Long: the permit raises, the request is denied
    # (fail closed). The policy reads no principal attribute and names no entity, so principals
    # differ only in their type: two classes, the teams a, b, sre (representative Team::"a", the
    # smallest uid) and the users oc, u1, u2 (User::"oc"), each asked once; it reads no context
    # either, so {} is the only context.
    setup = load_authorization([SMALL], _policies(tmp_path, OVERFLOWS))
    on_gpu = who(setup, "drain", 'Gpu::"na0/gpu0"')
    assert sorted(_allowed(on_gpu)) == sorted(
        ['Team::"a"', 'Team::"b"', 'Team::"sre"', 'User::"oc"', 'User::"u1"', 'User::"u2"']
    )
    assert on_gpu.exit_code == 0
    on_node = who(setup, "drain", 'Node::"na0"')
    assert on_node.allowed == []
    assert on_node.exit_code == 1
    assert [(f.principal, f.resource, f.context, f.policy, f.requests) for f in on_node.errors] == [
        ('Team::"a"', 'Node::"na0"', {}, "drain-small-things", 3),
        ('User::"oc"', 'Node::"na0"', {}, "drain-small-things", 3),
    ]
    assert "overflow" in on_node.errors[0].message


@pytest.mark.parametrize("bad", ['{"incident": 3}', '{"surprise": true}'])
def test_a_context_the_schema_refuses_is_bad_input(bad: str) -> None:
    import json

    from verifier.core.errors import TopologError

    with pytest.raises(TopologError, match="does not match the schema"):
        who(load_authorization([SMALL]), "schedule", 'Gpu::"na0/gpu0"', json.loads(bad))


def test_coverage_says_when_the_contexts_are_not_every_context() -> None:
    from verifier.authorization.analysis.questions import coverage
    from verifier.authorization.classes import ABSENT, MAX_CONTEXTS, OTHER_TEXT, PolicyReads

    def reads(values: dict[str, tuple[object, ...]]) -> PolicyReads:
        return PolicyReads(frozenset(), frozenset(), values)

    # Booleans (and absent, for `has`): every value is asked, the answer covers every context.
    full = coverage(reads({"incident": (ABSENT, False, True)}))
    assert full.complete and full.contexts == [{}, {"incident": False}, {"incident": True}]
    # A Long compared with 5 is asked with 4, 5 and 6 (`context.n > 5` holds for 6 only, `>= 5` for 5
    # and 6); a text compared with "lab" with "lab" and one text equal to no literal (`!= "lab"`):
    # 2 x 3 x 2 = 12 contexts, every outcome of those comparisons.
    numbers = coverage(reads({"incident": (False, True), "n": (5,), "site": ("lab",)}))
    assert numbers.complete and len(numbers.contexts) == 12
    assert {c["n"] for c in numbers.contexts} == {4, 5, 6}
    assert {c["site"] for c in numbers.contexts} == {"lab", OTHER_TEXT}
    # 9 booleans read with `has`: 3^9 = 19,683 combinations, more than MAX_CONTEXTS (256) are cut.
    many = coverage(reads({f"b{i}": (ABSENT, False, True) for i in range(9)}))
    assert len(many.contexts) == MAX_CONTEXTS == 256
    assert many.note == "the first 256 of 19683 context combinations"


def test_ever_includes_a_text_no_policy_names(tmp_path: Path) -> None:
    # A permit for any site but "lab": only a text other than "lab" satisfies it. The contexts asked
    # must hold one (the enumeration's text equal to no literal); asking "lab" alone, as before, gave
    # "nobody" with the answer marked incomplete. By hand: every one of the 6 principals of the small
    # inventory (teams a, b, sre; users oc, u1, u2) may drain na0/gpu0 when the site is not "lab".
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "schema.cedarschema").write_text(
        SCHEMA.replace("context: { incident?: Bool }", "context: { incident?: Bool, site?: String }"),
        encoding="utf-8",
    )
    (folder / "policies.cedar").write_text(
        '@id("not-the-lab")\npermit (principal, action == Action::"drain", resource)\n'
        'when { context has site && context.site != "lab" };\n',
        encoding="utf-8",
    )
    r = who(load_authorization([SMALL], folder), "drain", 'Gpu::"na0/gpu0"')
    other = {"site": "topolog-none-of-the-literals"}
    assert r.coverage.complete and r.coverage.contexts == [{}, {"site": "lab"}, other]
    assert sorted(_allowed(r)) == ['Team::"a"', 'Team::"b"', 'Team::"sre"', 'User::"oc"', 'User::"u1"', 'User::"u2"']
    assert set(_allowed(r).values()) == {((2, ("not-the-lab",)),)}
    assert r.errors == []


def test_an_action_asked_twice_is_one_question() -> None:
    # `--action schedule --action schedule`: once, as `--action schedule` (before: each request
    # counted twice, each context listed twice).
    setup = load_authorization([MIXED])
    once = what(setup, 'User::"ivan"', ["schedule"])
    twice = what(setup, 'User::"ivan"', ["schedule", "schedule"])
    assert twice.actions == once.actions == ("schedule",)
    assert twice.rows == once.rows
