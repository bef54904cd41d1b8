"""Requests go to cedarpy with their uids as {"type", "id"} (no uid parsed per request, issue 46):
the same decisions as the uids written as text, and text kept wherever the two could differ."""

from __future__ import annotations

from pathlib import Path

import cedarpy

from verifier.authorization.entities import HARDWARE_TYPES, uid
from verifier.authorization.evaluate import Authorizer, Request, _decision, _structured
from verifier.session.api import load_authorization as load_setup

ROOT = Path(__file__).resolve().parents[2]
MIXED = ROOT / "inventories" / "mixed-fleet.yaml"


def test_a_plain_uid_goes_as_type_and_id_an_escaped_or_unreadable_one_as_written() -> None:
    # By hand: the type is the text before ::, the id the text between the quotes.
    assert _structured('Gpu::"dgx00/gpu3"') == {"type": "Gpu", "id": "dgx00/gpu3"}
    assert _structured('Action::"schedule"') == {"type": "Action", "id": "schedule"}
    assert _structured('Topolog::Team::"ml-a"') == {"type": "Topolog::Team", "id": "ml-a"}
    # An escape (a quote or backslash in the id) is Cedar's to read: the text as it is.
    assert _structured(uid("User", 'a"b')) == 'User::"a\\"b"'
    assert _structured(uid("User", "a\\b")) == 'User::"a\\\\b"'
    # Not a uid as `uid` writes it: as written, for Cedar to refuse.
    assert _structured("User::alice") == "User::alice"
    assert _structured('Action::"sch"edule"') == 'Action::"sch"edule"'
    assert Request('User::"alice"', "drain", 'Node::"n1"').to_cedar() == {
        "principal": {"type": "User", "id": "alice"},
        "action": {"type": "Action", "id": "drain"},
        "resource": {"type": "Node", "id": "n1"},
        "context": {},
    }


def test_the_decisions_are_those_of_the_uids_as_text() -> None:
    # Every principal of inventories/principals.yml on every GPU and node of the shipped mixed fleet,
    # schedule and drain, with and without an incident: Cedar asked once with the uids as text (as
    # before) and once through to_cedar; allow, reasons and errors must agree request by request.
    setup = load_setup([MIXED])
    kinds = {"gpu", "node"}
    hardware = [uid(HARDWARE_TYPES[o.kind], o.id) for o in setup.inventory.objects.values() if o.kind in kinds]
    principals = [p.uid for p in setup.principals.principals.values()]
    requests = [
        Request(p, action, r, context)
        for context in ({}, {"incident": True})
        for p in principals
        for action in ("schedule", "drain")
        for r in hardware
    ]
    authorizer = Authorizer(setup.bundle, setup.graph)
    document = authorizer._document(requests)
    as_text = [
        {"principal": r.principal, "action": f'Action::"{r.action}"', "resource": r.resource, "context": r.context}
        for r in requests
    ]
    entities = authorizer._load(document)
    policies, schema = setup.bundle.policy_set, setup.bundle.schema
    before = [_decision(x) for x in cedarpy.is_authorized_batch(as_text, policies, entities, schema)]
    now = [
        _decision(x) for x in cedarpy.is_authorized_batch([r.to_cedar() for r in requests], policies, entities, schema)
    ]
    assert len(before) == len(requests) > 100
    assert any(d.allowed for d in before) and not all(d.allowed for d in before)
    for r, a, b in zip(requests, before, now, strict=True):
        assert (a.allowed, a.reasons, a.errors) == (b.allowed, b.reasons, b.errors), r
