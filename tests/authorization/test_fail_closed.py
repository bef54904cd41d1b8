"""cedarpy 4.12.2 fails open in two ways (reproduced here); topolog turns both into Deny / exit 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cedarpy
import pytest

from verifier.authorization.entities import Entity, check_parents
from verifier.authorization.evaluate import Authorizer, Request
from verifier.core.errors import SourceLocation, TopologError
from verifier.session.api import load_authorization as load_setup
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = (ROOT / "policies" / "schema.cedarschema").read_text()
OVERFLOW = ROOT / "tests" / "rules" / "fixtures" / "AUTHZ002"
HW: dict[str, str | bool | int] = {
    "tenant": "sim",
    "zone": "",
    "owner": "",
    "quarantined": False,
    "model": "MI300X",
    "fp64": True,
    "fp64_tflops": 81,
    "consumer": False,
    "gpus": 1,
    "state": "ok",
}
PERSON = {"tenant": "sim", "role": "engineer", "on_call": False, "teams": []}


def test_cedarpy_accepts_a_parent_that_does_not_exist() -> None:
    entities = [{"uid": {"type": "Gpu", "id": "g0"}, "attrs": HW, "parents": [{"type": "Node", "id": "ghost"}]}]
    # No error, even with the schema: `resource in Node::"ghost"` would silently never match.
    cedarpy.Entities.from_json_str(json.dumps(entities), SCHEMA)
    gpu = Entity("Gpu", "g0", HW, ('Node::"ghost"',), SourceLocation("inv.yaml", 7))
    with pytest.raises(TopologError, match=r'inv.yaml:7: entity Gpu::"g0" has parent Node::"ghost", which does not'):
        check_parents({gpu.uid: gpu})


def test_cedarpy_skips_an_erroring_forbid_and_allows() -> None:
    policies = (OVERFLOW / "policies" / "broken.cedar").read_text()
    entities = [
        {"uid": {"type": "Gpu", "id": "g0"}, "attrs": HW, "parents": []},
        {"uid": {"type": "Team", "id": "sim"}, "attrs": PERSON, "parents": []},
    ]
    request = {"principal": 'Team::"sim"', "action": 'Action::"schedule"', "resource": 'Gpu::"g0"', "context": {}}
    raw = cedarpy.is_authorized(request, policies, json.dumps(entities), schema=SCHEMA)
    assert raw.decision == cedarpy.Decision.Allow and raw.diagnostics.errors  # fail open
    setup = load_setup([OVERFLOW / "fail.yaml"])
    d = setup.authorizer.decide_one(Request('Team::"sim"', "schedule", 'Gpu::"n0/gpu0"'))
    assert not d.allowed
    assert d.reasons == ("tenant-own-hardware",)  # the permit matched; the error still denies
    assert [p for p, _ in d.errors] == ["power-cap"]
    assert "integer overflow" in d.errors[0][1]


def test_unknown_entities_in_a_request_are_denied() -> None:
    setup = load_setup([OVERFLOW / "pass.yaml"])
    d = setup.authorizer.decide_one(Request('Team::"ghost"', "schedule", 'Gpu::"n0/gpu0"'))
    assert not d.allowed and d.errors == (("", 'Team::"ghost" is not an entity of this inventory'),)
    assert isinstance(setup.authorizer, Authorizer) and setup.authorizer.requests == 0  # never sent to Cedar


def test_error_messages_are_short(tmp_path: Path) -> None:
    from verifier.authorization.policies import MAX_MESSAGE, short

    assert len(short("x" * 5_000_000)) == MAX_MESSAGE
    assert short("a\n  b") == "a b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("teams: [{id: a, teams: [nope]}]", "principals.yml:4:25: a is a member of 'nope', which is not a team"),
        ("teams: [{id: a, teams: [b]}, {id: b, teams: [a]}]", "team 'a' is a member of itself"),
        ("users: [{id: a}]\nteams: [{id: a}]", "principal id 'a' is already used"),
        ("users: [{id: u, on_call: yes}]", "'on_call' must be true or false"),
        # A Cyrillic a (U+0430) where alice has a Latin one: two principals that read as one. Reported
        # at the second entry (column 22), naming the first (column 9).
        (
            'users: [{id: alice}, {id: "\u0430lice"}]',
            r"principals.yml:4:22: principal id '\u0430lice' looks like 'alice' \(\S+principals.yml:4:9\) but is "
            r"another id \(it holds U\+0430 CYRILLIC SMALL LETTER A\)",
        ),
        # A misspelt section: named at its line with the keys a principals file has and the one meant.
        (
            "user: [{id: u}]",
            r"principals.yml:4:1: unknown key 'user'; expected one of: apiVersion, kind, metadata, teams, users, "
            r"service_accounts; did you mean 'users'\?",
        ),
    ],
)
def test_bad_principals_files(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "principals.yml"
    path.write_text(f"apiVersion: topolog.dev/v1\nkind: Principals\n\n{text}\n")
    with pytest.raises(TopologError, match=expected):
        load_principals(path)


def test_entities_that_do_not_match_the_schema_are_refused(tmp_path: Path) -> None:
    d = tmp_path / "p"
    shutil.copytree(OVERFLOW / "policies", d)
    (d / "schema.cedarschema").write_text(SCHEMA.replace("gpus: Long", "gpus: String"))
    with pytest.raises(TopologError, match="the entities do not match the schema"):
        load_setup([OVERFLOW / "pass.yaml"], d)


def test_ids_that_differ_only_in_case_are_not_look_alikes(tmp_path: Path) -> None:
    # Alice and alice: any reader tells them apart (and Cedar too); both load, as two users.
    path = tmp_path / "principals.yml"
    path.write_text("apiVersion: topolog.dev/v1\nkind: Principals\n\nusers: [{id: alice}, {id: Alice}]\n")
    assert sorted(load_principals(path).principals) == ["Alice", "alice"]
