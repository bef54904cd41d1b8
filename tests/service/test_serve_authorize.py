"""POST /v1/authorize and /v1/authorize/batch on the real server: the CLI's answers, closed on bad names.

Expected decisions, derived by hand from inventories/principals.yml, inventories/mixed-fleet.yaml
and policies/:
- alice is in team-nlp (tenant team-nlp); a100-n0's template mf-hgx-a100 is labelled tenant
  team-nlp, and an A100 is neither consumer, quarantined nor FP64 >= 50 TFLOPS (19.5): permitted
  by tenant-own-hardware, nothing forbids -> ALLOW, [tenant-own-hardware].
- ivan is an intern in team interns, whose parent team students has tenant students; a100-n0 is
  team-nlp's: no permit, and interns-consumer-only forbids a non-consumer GPU -> DENY,
  [interns-consumer-only].
- ivan on rtx-n3/gpu0: the workstation template is labelled tenant students, an RTX 4090 is a
  consumer GPU, rtx-n3 has no quarantine override -> ALLOW, [tenant-own-hardware].
- bob (team-vision) on a100-n0/gpu0: tenant team-nlp is not his, no other permit, no forbid
  matches -> DENY with no policy (default deny).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from service.serve_helpers import Server, copy_inputs, serving

CASES = [
    ("alice", "a100-n0/gpu0", "ALLOW", ["tenant-own-hardware"]),
    ("ivan", "a100-n0/gpu0", "DENY", ["interns-consumer-only"]),
    ("ivan", "rtx-n3/gpu0", "ALLOW", ["tenant-own-hardware"]),
    ("bob", "a100-n0/gpu0", "DENY", []),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve-authorize")
    copy_inputs(folder)
    with serving(folder) as s:
        yield s


@pytest.mark.parametrize(("principal", "resource", "decision", "policies"), CASES)
def test_authorize_gives_the_hand_derived_decision_and_the_clis_answer(
    server: Server, principal: str, resource: str, decision: str, policies: list[str]
) -> None:
    doc = server.authorize(principal, "schedule", resource)
    assert doc["decision"] == decision
    assert [p["id"] for p in doc["policies"]] == policies
    assert doc["revision"] == server.revision()["revision"]
    inventory = str(server.folder / "mixed-fleet.yaml")
    code, out, _err = run_cli(
        "authorize", inventory, "--principal", principal, "--action", "schedule", "--resource", resource,
        "--principals", str(server.folder / "principals.yml"), "--policies", str(server.folder / "policies"),
        "--format", "json",
    )  # fmt: skip
    assert code == (0 if decision == "ALLOW" else 1)
    cli = json.loads(out)
    assert {k: v for k, v in doc.items() if k != "revision"} == cli


def test_unknown_principal_or_resource_is_a_deny_with_the_reason(server: Server) -> None:
    nobody = server.authorize("nobody", "schedule", "a100-n0/gpu0")
    assert nobody["decision"] == "DENY" and nobody["policies"] == []
    assert "'nobody' is not in" in nobody["errors"][0]["message"]
    nowhere = server.authorize("alice", "schedule", "a100-n9/gpu0")
    assert nowhere["decision"] == "DENY"
    assert "'a100-n9/gpu0' is not a GPU" in nowhere["errors"][0]["message"]
    typed = server.authorize('User::"mallory"', "schedule", 'Gpu::"a100-n0/gpu0"')
    assert typed["decision"] == "DENY" and "no such entity" in typed["errors"][0]["message"]


def test_a_context_off_the_schema_is_a_deny(server: Server) -> None:
    # The schema's context has incident: Bool; a string there cannot be evaluated -> closed.
    doc = server.authorize("olga", "schedule", "rtx-n0/gpu0", incident="yes")
    assert doc["decision"] == "DENY" and doc["errors"]


def test_batch_decides_each_request_on_one_revision(server: Server) -> None:
    asked = [{"principal": p, "action": "schedule", "resource": r} for p, r, _d, _p in CASES]
    r = server.post("/v1/authorize/batch", {"requests": asked})
    assert r.status_code == 200, r.text
    doc: dict[str, Any] = r.json()
    assert [x["decision"] for x in doc["results"]] == [d for _p, _r, d, _pol in CASES]
    assert {x["revision"] for x in doc["results"]} == {doc["revision"]}


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        (b"", 400, "empty"),
        (b"\xff\xfe", 400, "not UTF-8"),
        (b"{", 400, "not JSON"),
        (b"[]", 400, "expected an object"),
        (b'{"principal": "alice", "action": "schedule"}', 400, "no 'resource'"),
        (b'{"principal": "alice", "action": "fly", "resource": "a100-n0/gpu0"}', 400, "expected one of"),
        (b'{"principal": 1, "action": "schedule", "resource": "x"}', 400, "non-empty string"),
        (b'{"principal": "a", "principal": "b", "action": "schedule", "resource": "x"}', 400, "twice"),
        (b'{"principal": "a", "action": "schedule", "resource": "x", "extra": 1}', 400, "unknown field"),
        (b'{"principal": "a", "action": "schedule", "resource": "x", "context": {"n": 99999999999999999999}}',
         400, "64 bits"),
        (b'{"principal": "a", "action": "schedule", "resource": "x", "context": NaN}', 400, "NaN"),
    ],
)  # fmt: skip
def test_malformed_bodies_get_a_4xx_saying_what_was_expected(
    server: Server, body: bytes, status: int, says: str
) -> None:
    r = server.post("/v1/authorize", body)
    assert r.status_code == status, r.text
    assert says in r.json()["error"]


def test_bounds_on_body_and_batch(server: Server) -> None:
    big = b'{"principal": "' + b"a" * (1024 * 1024) + b'", "action": "schedule", "resource": "x"}'
    r = server.post("/v1/authorize", big)
    assert r.status_code == 413 and "--max-body" in r.json()["error"]
    many = {"requests": [{"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}] * 1001}
    r = server.post("/v1/authorize/batch", many)
    assert r.status_code == 413 and "at most 1000" in r.json()["error"]
    assert server.get("/healthz").status_code == 200


def test_probes_revision_and_metrics(server: Server) -> None:
    assert server.get("/healthz").json() == {"status": "ok"}
    ready = server.get("/readyz").json()
    rev = server.revision()
    assert ready["revision"] == rev["revision"]
    assert set(rev["files"]) == {"inventory", "principals", "policies", "thresholds", "observed"}
    assert rev["files"]["thresholds"] == {}  # no topolog.thresholds.yaml beside the copied fleet
    assert rev["files"]["observed"] == {}  # no topolog.observed/ folder beside it either
    assert sorted(Path(p).name for p in rev["files"]["policies"]) == sorted(
        [*(p.name for p in (server.folder / "policies").glob("*.cedar")), "schema.cedarschema"]
    )
    server.authorize("alice", "schedule", "a100-n0/gpu0")
    text = server.get("/metrics").text
    assert 'topolog_decisions_total{endpoint="authorize",result="allow"}' in text
    assert 'topolog_decision_seconds_bucket{endpoint="authorize",le="0.001"}' in text
    assert f'topolog_revision_info{{revision="{rev["revision"]}"}} 1.0' in text
