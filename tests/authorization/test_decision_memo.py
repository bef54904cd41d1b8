"""`Authorizer.decide_one` answers from a memo keyed by the resource's equivalence class: the same answers.

The memo (verifier/authorization/evaluate.py) keeps one revision's clean decisions under the
principal, the action, the context and the resource's class (verifier/authorization/classes.py).
These tests hold its answers to Cedar's, asked afresh, on the shipped mixed fleet, and check what
it must never keep.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.authorization.classes import contexts, policy_reads
from verifier.authorization.entities import DOMAIN_TYPE, HARDWARE_TYPES, uid
from verifier.authorization.evaluate import Authorizer, Request
from verifier.session.api import load_authorization as load_setup

ROOT = Path(__file__).resolve().parents[2]
MIXED = ROOT / "inventories" / "mixed-fleet.yaml"
OVERFLOW = ROOT / "tests" / "rules" / "fixtures" / "AUTHZ002"


@pytest.mark.parametrize(
    "actions", [("schedule",), pytest.param(("reserve", "drain", "administer"), marks=pytest.mark.slow)]
)
def test_every_memo_answer_is_cedars_on_the_mixed_fleet(actions: tuple[str, ...]) -> None:
    # Every principal of inventories/principals.yml, every GPU, node, rack, pod and NVLink domain,
    # in every context the shipped policies distinguish (none, incident false, incident true), for
    # `schedule` (and the other actions in the slow run): decided one at a time through the memo,
    # and again in one batch by a fresh Authorizer that keeps nothing.
    setup = load_setup([MIXED])
    graph = setup.graph
    hardware = [uid(HARDWARE_TYPES[o.kind], o.id) for o in setup.inventory.objects.values() if o.kind in HARDWARE_TYPES]
    resources = [*hardware, *graph.uids_of_type(DOMAIN_TYPE)]
    principals = [p.uid for p in setup.principals.principals.values()]
    requests = [
        Request(p, action, r, context)
        for context in contexts(policy_reads(setup.bundle))
        for p in principals
        for action in actions
        for r in resources
    ]
    memo = Authorizer(setup.bundle, graph)
    one_by_one = [memo.decide_one(r) for r in requests]
    assert one_by_one == Authorizer(setup.bundle, graph).decide(requests)
    # Both answers occur (schedule: alice on team-nlp's hardware is allowed, ivan on an A100 is
    # not; test_cli_authz.py), and most requests were answered from the memo (the fleet's GPUs fall
    # into far fewer classes than there are GPUs), so the comparison above is of memo answers.
    assert {d.allowed for d in one_by_one} == {True, False}
    assert memo.memo_hits > len(requests) // 2


def test_gpus_no_policy_can_tell_apart_are_decided_once() -> None:
    # a100-n0's eight A100s share model, tenant (team-nlp), zone, owner and state (mixed-fleet.yaml),
    # and the shipped policies name no hardware: one class. alice (team-nlp) may schedule on them
    # by tenant-own-hardware; the first question asks Cedar, the other seven are the memo's.
    setup = load_setup([MIXED])
    memo = Authorizer(setup.bundle, setup.graph)
    decisions = [memo.decide_one(Request('User::"alice"', "schedule", f'Gpu::"a100-n0/gpu{g}"')) for g in range(8)]
    assert memo.memo_hits == 7 and memo.calls == 1
    assert {(d.allowed, d.reasons) for d in decisions} == {(True, ("tenant-own-hardware",))}


def test_a_decision_with_an_error_is_asked_again_every_time() -> None:
    # tests/rules/fixtures/AUTHZ002: the power-cap forbid overflows a Long on every GPU, so the
    # decision is a Deny with that error (test_fail_closed.py); it is never kept.
    setup = load_setup([OVERFLOW / "fail.yaml"])
    memo = Authorizer(setup.bundle, setup.graph)
    request = Request('Team::"sim"', "schedule", 'Gpu::"n0/gpu0"')
    first, second = memo.decide_one(request), memo.decide_one(request)
    assert first == second and not first.allowed and [p for p, _ in first.errors] == ["power-cap"]
    assert memo.memo_hits == 0 and memo.calls == 2


def test_a_context_naming_an_entity_is_asked_again_every_time() -> None:
    # An entity in the context joins what Cedar is given and may be compared with the resource
    # itself, which the classes do not account for.
    setup = load_setup([MIXED])
    memo = Authorizer(setup.bundle, setup.graph)
    context = {"on_behalf_of": {"__entity": {"type": "User", "id": "bob"}}}
    for gpu in ("a100-n0/gpu0", "a100-n0/gpu1"):
        memo.decide_one(Request('User::"alice"', "schedule", f'Gpu::"{gpu}"', context))
    assert memo.memo_hits == 0 and memo.calls == 2
