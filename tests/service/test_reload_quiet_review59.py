"""Review of the reload's quiet wait (3705678): a reload lists the files it is built from, then
waits until none changed for --reload-quiet (up to --reload-quiet-max) before reading them.

A policy file added while it waited (a second file copied into policies/ a moment after the first)
was not in the list it had made: the files it read were not the folder's any more, and the build
was refused as "changed while the revision was built", the reload answering ok: false for files
that were whole and valid. The wait was milliseconds before (a build's own time), seconds now.
The quiet wait is made deterministic here: the file is added by the wait itself (its first sleep).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from service.serve_helpers import copy_inputs

from verifier.service.bodies import AuthorizeRequest
from verifier.service.config import ServeConfig
from verifier.service.gate import authorize_doc
from verifier.service.revision import build_revision

SUSPEND = '@id("alice-suspended")\nforbid (principal == User::"alice", action, resource);\n'
LATER = '@id("bob-suspended")\nforbid (principal == User::"bob", action, resource);\n'


def test_a_policy_file_added_while_a_reload_waits_is_read_not_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Deterministic, whatever the machine's load: any file written within the hour is waited for
    # (so suspend.cedar, just written, is), and the wait itself adds later.cedar, then ages every
    # file by two hours, as if the quiet had come: the next look finds it and the reload reads.
    config = ServeConfig((copy_inputs(tmp_path),), reload_quiet_s=3600.0, reload_quiet_max_s=7200.0)
    first = build_revision(config)
    policies = tmp_path / "policies"
    (policies / "suspend.cedar").write_text(SUSPEND)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 1:
            (policies / "later.cedar").write_text(LATER)
            old = time.time() - 7200
            for f in tmp_path.rglob("*"):
                os.utime(f, (old, old))

    monkeypatch.setattr("verifier.service.revision.time.sleep", sleep)
    second = build_revision(config, first)
    monkeypatch.undo()
    assert waits, "the reload did not wait for quiet after a file was just written"
    # Both new files are part of the revision: two more policy files than the first one.
    assert set(second.files["policies"]) - set(first.files["policies"]) == {
        str(policies / "suspend.cedar"),
        str(policies / "later.cedar"),
    }
    # alice (team-nlp) and bob (team-vision) may schedule on their own team's nodes under the shipped
    # policies (tenant-own-hardware): a100-n0 is team-nlp's, h100-n0 team-vision's. Each is denied
    # by the one forbid naming them, so both new files are live.
    for who, gpu, forbid in (("alice", "a100-n0/gpu0", "alice-suspended"), ("bob", "h100-n0/gpu0", "bob-suspended")):
        asked = AuthorizeRequest(who, "schedule", gpu)
        assert authorize_doc(first, asked)["decision"] == "ALLOW", who
        doc = authorize_doc(second, asked)
        named = doc["policies"]
        assert isinstance(named, list)
        assert (doc["decision"], [p["id"] for p in named]) == ("DENY", [forbid]), who
