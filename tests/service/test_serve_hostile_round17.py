"""serve under hostile bodies, round 17 (HJ): a megabyte context is not logged whole; an admit
answered as timed out stops at its next stage instead of holding the admit thread to its end.

HI2 (round 16) left both: an authorize `context` of up to --max-body was written whole to the
decision log (each such request a megabyte of the rotation), and a timed-out admit ran on to the
end of its placement on the single admit thread while the admits queued behind it waited.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from service.serve_helpers import copy_inputs, serving

from verifier.service import gate
from verifier.service.bodies import LOGGED_CONTEXT, AuthorizeRequest
from verifier.service.config import ServeConfig
from verifier.service.revision import build_revision

JOB = b"apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: j, principal: alice, gpus: 1}\n"


def test_a_long_context_is_logged_cut_with_its_length() -> None:
    # {"note":"xxx..."} with 5,000 x: its JSON text is 8 (`{"note":`) + 5,002 (the quoted string)
    # + 1 (`}`) = 5,011 characters, over 4,096: the log keeps the first 4,096 and says 5,011.
    asked = AuthorizeRequest("alice", "schedule", "a100-n0/gpu0", {"note": "x" * 5000})
    logged = asked.to_log()
    assert "context" not in logged
    assert logged["context_cut"] == '{"note":"' + "x" * (LOGGED_CONTEXT - 9) + "... (5,011 characters of JSON)"
    # A context of real size ({"incident":true}, 17 characters) is logged whole, as before.
    small = AuthorizeRequest("alice", "schedule", "a100-n0/gpu0", {"incident": True}).to_log()
    assert small["context"] == {"incident": True} and "context_cut" not in small


def test_the_decision_log_line_of_a_megabyte_context_is_bounded(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    log = tmp_path / "decisions.jsonl"
    with serving(tmp_path, "--decision-log", str(log)) as server:
        doc = server.authorize("alice", "schedule", "a100-n0/gpu0", note="y" * 900_000)
    assert doc["decision"] == "DENY"  # `note` is off the schema: denied, with the reason
    (line,) = log.read_text().splitlines()
    # The line: the cut context (4,096 + its length note), the principal, the reason (Cedar's own
    # message, which the gate already shortens) and the fixed fields: far under the 900,000 sent.
    assert len(line) < 8_000, len(line)
    assert json.loads(line)["request"]["context_cut"].endswith("... (900,011 characters of JSON)")


def test_an_admit_given_up_stops_before_placing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    revision = build_revision(ServeConfig((copy_inputs(tmp_path),)))
    asked: list[str] = []

    def no_placing(*args: object, **kwargs: object) -> None:
        asked.append("placed")
        raise AssertionError("a given-up admit was placed")

    monkeypatch.setattr(gate, "placements", no_placing)
    monkeypatch.setattr(revision.placing, "get", lambda: asked.append("prepared"))  # None: the fallback path
    doc = gate.admit_doc(revision, JOB, given_up=lambda: True)
    # Given up right after reading: neither the prepared evaluation nor `place` is reached.
    assert asked == [] and doc["admitted"] is False and doc["errors"] == [gate.GIVEN_UP]
    # Given up while the revision's evaluation was being made: that evaluation is kept for later
    # admits (it is the revision's), but this admit places nothing.
    calls = iter([False, True])
    doc = gate.admit_doc(revision, JOB, given_up=lambda: next(calls))
    assert asked == ["prepared"] and doc["errors"] == [gate.GIVEN_UP]
