"""The gate's authorize answer is `topolog authorize --format json`'s document, built once; its time bounds.

The answers are those of `topolog authorize --format json` (plus the revision), decided by Cedar
every time: ivan is an intern (inventories/principals.yml) and a100-n0/gpu0 an A100 with ECC, which
policies/interns.cedar forbids ("interns-consumer-only"); alice (team-nlp) on a100-n0 (tenant
team-nlp) is allowed by tenant-own-hardware (test_serve_authorize.py derives both), on its
gpu1 too, and during an incident too (the incident context only opens quarantined hardware).
"""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from cli_helpers import run_cli
from service.serve_helpers import copy_inputs
from starlette.requests import Request

from verifier.service.admission import timed_out_review
from verifier.service.app import Service, _body
from verifier.service.bodies import BadRequest, authorize_request
from verifier.service.config import ServeConfig
from verifier.service.gate import admit_timed_out, authorize_doc
from verifier.service.revision import Revision, build_revision

ASKED: list[dict[str, object]] = [
    {"principal": "ivan", "action": "schedule", "resource": "a100-n0/gpu0"},
    {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"},
    {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu1", "context": {"incident": True}},
]


def test_the_gate_decides_as_the_cli(tmp_path: Path) -> None:
    inventory = copy_inputs(tmp_path / "fleet")
    revision = build_revision(ServeConfig((inventory,)))
    docs = [authorize_doc(revision, authorize_request(asked)) for asked in ASKED]
    assert [d["decision"] for d in docs] == ["DENY", "ALLOW", "ALLOW"]
    assert docs[0]["policies"] == [{"effect": "forbid", "id": "interns-consumer-only"}]
    for asked, doc in zip(ASKED, docs, strict=True):
        flags = [x for key in ("principal", "action", "resource") for x in (f"--{key}", str(asked[key]))]
        flags += ["--context", json.dumps(asked.get("context", {}))]
        _code, out, err = run_cli("authorize", str(inventory), *flags, "--format", "json")
        assert out, err
        # The same document, its keys in the same (sorted) order, nested ones too.
        assert json.dumps({k: v for k, v in doc.items() if k != "revision"}) == json.dumps(json.loads(out))
        assert doc["revision"] == revision.id


def test_a_body_that_never_arrives_is_a_408_and_a_decision_past_its_time_a_timeout() -> None:
    # The receive channel never delivers: the body's time bound ends the wait (asyncio.timeout).
    async def never() -> dict[str, object]:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")  # pragma: no cover

    scope = {"type": "http", "method": "POST", "path": "/v1/authorize", "headers": [], "query_string": b""}
    with pytest.raises(BadRequest) as refused:
        asyncio.run(_body(Request(scope, never), 1024, 0.05))
    assert refused.value.status == 408 and "did not arrive within 0.05 s" in refused.value.message

    # A decision still running when its time is up: TimeoutError to the caller, who denies.
    gate_less = Service.__new__(Service)
    release = threading.Event()
    pool = ThreadPoolExecutor(1)
    try:
        with pytest.raises(TimeoutError):
            asyncio.run(Service.run(gate_less, pool, lambda: release.wait(30), 0.05))
    finally:
        release.set()
        pool.shutdown(wait=True)


def test_an_admit_or_review_past_its_time_is_refused_naming_the_bound() -> None:
    # admit_doc's answer, refused: not admitted, no placement, the bound ({seconds:g}: 2.5) as the reason.
    revision = cast("Revision", SimpleNamespace(id="rev-1"))
    assert admit_timed_out(revision, 2.5, 3) == {
        "admitted": False,
        "revision": "rev-1",
        "limit": 3,
        "errors": ["not placed within 2.5 s (--admit-timeout); refused"],
        "placement": None,
    }
    # The webhook's answer says the same, refused (403) under the request's uid and the revision.
    assert timed_out_review("uid-7", revision, 2.5) == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {
            "uid": "uid-7",
            "allowed": False,
            "status": {
                "code": 403,
                "message": "topolog (revision rev-1): not placed within 2.5 s (--admit-timeout); refused",
            },
        },
    }
