"""A request naming a principal or resource longer than any id is refused, not decided and logged (HI2, round 16).

A principal of 1,000,000 characters to /v1/authorize was decided (DENY: no such principal) and kept
whole in the answer and in the decision log: each such request wrote a megabyte of the log, whose
rotation (--decision-log-max-bytes, 64 MiB kept 5 times) it then filled with them, pushing the real
decisions out. No id is longer than the id_length limit (1024 characters; the loaders refuse a longer
one), and a `Type::"id"` uid adds at most UID_EXTRA (32) to it: 1,056 characters in all. An
AdmissionReview's request.uid (a UUID, 36 characters) was echoed and logged whole too: over 256 is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

from service.serve_helpers import copy_inputs, serving


def test_a_principal_longer_than_any_id_is_refused_unlogged(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    log = tmp_path / "decisions.jsonl"
    at_limit = "u" * 1024  # an id as long as one may be: decided (no such principal), logged
    too_long = "u" * 1_000_000
    with serving(tmp_path, "--decision-log", str(log)) as server:
        long_one = server.post(
            "/v1/authorize", {"principal": too_long, "action": "schedule", "resource": "rtx-n3/gpu0"}
        )
        long_resource = server.post(
            "/v1/authorize/batch",
            {
                "requests": [
                    {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"},
                    {"principal": "alice", "action": "schedule", "resource": "r" * 1057},  # 1,056 + 1
                ]
            },
        )
        decided = server.authorize(at_limit, "schedule", "rtx-n3/gpu0")
        # An AdmissionReview's uid is echoed and logged too; the API server sends a 36-character UUID.
        review = server.post(
            "/v1/admission",
            {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {"uid": "x" * 1_000_000, "operation": "DELETE"},
            },
        )
    assert long_one.status_code == 400, long_one.text[:300]
    assert long_one.json()["error"] == (
        "the request.principal is 1,000,000 characters long; expected an id of at most 1,024 characters "
        '(id_length), or its Type::"id" uid'
    )
    assert long_resource.status_code == 400 and "requests[1].resource is 1,057 characters long" in long_resource.text
    assert len(long_one.content) < 1000 and len(long_resource.content) < 1000  # nothing echoed
    assert decided["decision"] == "DENY"
    assert review.status_code == 400 and len(review.content) < 1000, review.text[:300]
    assert "request.uid is 1,000,000 characters long; expected at most 256" in review.text
    # One line, for the request at the limit: the refused ones were never decided.
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [x["request"]["principal"] for x in lines] == [at_limit]
