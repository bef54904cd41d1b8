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


ASK = b'{"principal":"alice","action":"schedule","resource":"a100-n0/gpu0","context":{"incident":%s}}'
JOBS = b"apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - %s\n"


def test_hostile_bodies_are_refused_or_denied_and_the_log_stays_bounded(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    log = tmp_path / "decisions.jsonl"
    with serving(tmp_path, "--decision-log", str(log)) as server:
        big = server.authorize("alice", "schedule", "a100-n0/gpu0", note="y" * 900_000)
        # Bodies no decision is made on (400, nothing echoed): JSON nested 200,000 deep, a Long of
        # 100,000 digits, a number past a float's range, half a surrogate pair.
        deep = server.post("/v1/authorize", b'{"principal":' + b"[" * 200_000 + b"]" * 200_000 + b"}")
        digits = server.post("/v1/authorize", ASK % (b"9" * 100_000))
        huge = server.post("/v1/authorize", ASK % b"1e999999")
        half = server.post("/v1/authorize", b'{"principal":"\\ud800","action":"schedule","resource":"a100-n0/gpu0"}')
        # Names no principal holds: decided, DENY. U+0130 (capital I with a dot) reads as no principal's
        # first letter; U+0131 (dotless i) beside ivan's `i` is a look-alike, and is named so.
        nul = server.authorize("ali\u0000ce", "schedule", "a100-n0/gpu0")
        dotted = server.authorize("\u0130van", "schedule", "a100-n0/gpu0")
        dotless = server.authorize("\u0131van", "schedule", "a100-n0/gpu0")
        # Admit bodies: a NUL in the YAML and YAML nested 50,000 deep are refused at their line (422).
        admit_nul = server.post("/v1/admit", JOBS % b"{name: j\x00, principal: alice, gpus: 1}")
        admit_deep = server.post("/v1/admit", JOBS % (b"[" * 50_000 + b"]" * 50_000))
        alive = server.alive()
    assert big["decision"] == "DENY"  # `note` is off the schema: denied, with the reason
    for refused in (deep, digits, huge, half):
        assert refused.status_code == 400 and len(refused.content) < 300, refused.text[:300]
    assert "nested too deeply" in deep.text and "100,000 digits" in digits.text and "1e999999" in huge.text
    assert [d["decision"] for d in (nul, dotted, dotless)] == ["DENY"] * 3
    assert "did you mean" not in dotted["errors"][0]["message"]
    assert "did you mean 'ivan'? (it looks the same but holds U+0131" in dotless["errors"][0]["message"]
    assert admit_nul.status_code == 422 and "<request body>:4:13:" in admit_nul.text, admit_nul.text
    assert admit_deep.status_code == 422 and "nesting_depth" in admit_deep.text, admit_deep.text[:300]
    assert alive
    # Four lines: the decided requests alone (the megabyte context and the three names). The first:
    # the cut context (4,096 + its length note), the principal, Cedar's reason (the gate already
    # shortens it) and the fixed fields: far under the 900,000 characters sent.
    lines = log.read_text().splitlines()
    assert len(lines) == 4 and max(len(line) for line in lines) < 8_000
    assert json.loads(lines[0])["request"]["context_cut"].endswith("... (900,011 characters of JSON)")


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
