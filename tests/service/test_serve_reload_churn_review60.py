"""A reload at the quiet wait's deadline must not go live on a file caught half-written (review 60 of ad493db).

ad493db reads the files at the 20 s deadline of the quiet wait when they never rest. A policy
file rewritten in place in two writes (a tool writing its permit, then, a moment later, the
forbid after it) is half-written for part of every period: read at the deadline in that part, the
build parsed the permit alone, read the same bytes again after the build (milliseconds for a
policy edit), and the revision went live: alice ALLOW (the real server below, on ad493db). A file
written in place that never rests is never known whole, so that reload is refused, naming it, and
the live revision is kept; a file replaced whole by rename every second is still read at the
deadline (what ad493db was for).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from service.serve_helpers import copy_inputs, serving

from verifier.core.errors import TopologError
from verifier.service.bodies import AuthorizeRequest
from verifier.service.config import ServeConfig
from verifier.service.gate import authorize_doc
from verifier.service.revision import build_revision

PERMIT = '@id("allow-all")\npermit (principal, action, resource);\n'
FORBID = '\n@id("stop-alice")\nforbid (principal == User::"alice", action, resource);\n'


def _policies(tmp_path: Path) -> tuple[ServeConfig, Path]:
    """The mixed fleet served with one policy file, site.cedar: allow all but alice.

    Deterministic whatever the load: every file counts as just written (a quiet of an hour), and
    the deadline is 0.3 s away (see _churn).
    """
    config = ServeConfig((copy_inputs(tmp_path),), reload_quiet_s=3600.0, reload_quiet_max_s=0.3)
    for f in (tmp_path / "policies").glob("*.cedar"):
        f.unlink()
    site = tmp_path / "policies" / "site.cedar"
    site.write_text(PERMIT + FORBID)
    return config, site


def _churn(monkeypatch: pytest.MonkeyPatch, write: Callable[[int], None]) -> list[float]:
    # Each of the wait's sleeps writes site.cedar once more (whole, as `write` does it), then
    # sleeps 20 ms for real, so the deadline (0.3 s: _policies) comes after a few looks.
    real_sleep = time.sleep
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        write(len(waits))
        real_sleep(0.02)

    monkeypatch.setattr("verifier.service.revision.time.sleep", sleep)
    return waits


def test_a_file_written_in_place_without_rest_refuses_the_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, site = _policies(tmp_path)
    first = build_revision(config)

    def in_place(n: int) -> None:
        with site.open("w") as handle:  # truncated and written again: the same file
            handle.write(PERMIT + f"// write {n}\n" + FORBID)

    waits = _churn(monkeypatch, in_place)
    with pytest.raises(TopologError) as caught:
        build_revision(config, first)
    monkeypatch.undo()
    assert len(waits) >= 2  # looked at it more than once: the same file was seen written again
    (diag,) = caught.value.diagnostics
    assert str(diag.location) == str(site)
    assert "written in place again and again" in diag.message and "renamed over it" in diag.message


def test_a_file_replaced_by_rename_without_rest_is_read_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, site = _policies(tmp_path)
    first = build_revision(config)

    def renamed(n: int) -> None:
        # Written whole under another name, then renamed over site.cedar (a new file each time;
        # ext4 hands the two in turn the same inode numbers, which must not read as in place).
        part = site.with_name("site.cedar.part")
        part.write_text(PERMIT + f"// write {n}\n" + FORBID)
        os.replace(part, site)

    waits = _churn(monkeypatch, renamed)
    second = build_revision(config, first)
    monkeypatch.undo()
    assert len(waits) >= 2
    # The last version written (write n of the n sleeps) is the one built from, and alice is
    # denied by its forbid.
    assert f"// write {len(waits)}\n" in site.read_text()
    assert second.files["policies"][str(site)] != first.files["policies"][str(site)]
    doc = authorize_doc(second, AuthorizeRequest("alice", "schedule", "a100-n0/gpu0"))
    assert doc["decision"] == "DENY"


# The real server's deadline lowered from its default (20 s) to keep the test short (the file never
# rests, so the test lasts the deadline, whatever the quiet). The quiet stays 2.5 s, above the
# default 2 s: the writer's pause (0.45 s, half-written for 9 tenths of each period) would have to
# stretch by 2 s on a loaded machine before the file rested a quiet and was read half-written
# (review R-ST61: a quiet of 1 s left 0.55 s).
QUIET = ("--reload-quiet", "2.5", "--reload-quiet-max", "3")


def test_a_real_server_never_serves_a_policy_caught_between_two_writes(tmp_path: Path) -> None:
    _config, site = _policies(tmp_path)
    with serving(tmp_path, "--no-watch", *QUIET) as server, server.client() as c:
        first = server.revision()["revision"]
        assert server.authorize("alice", "schedule", "a100-n0/gpu0")["decision"] == "DENY"
        done = threading.Event()

        def rewrite() -> None:
            # Every half second, in place: the permit alone for 0.45 s, then the forbid after it.
            n = 0
            while not done.is_set():
                n += 1
                with site.open("w") as handle:
                    handle.write(PERMIT + f"// write {n}\n")
                    handle.flush()
                    done.wait(0.45)
                    handle.write(FORBID)
                done.wait(0.05)

        writer = threading.Thread(target=rewrite)
        writer.start()
        try:
            time.sleep(1.0)  # the writer under way
            r = c.post("/v1/reload", timeout=60)
            decision = server.authorize("alice", "schedule", "a100-n0/gpu0")["decision"]
        finally:
            done.set()
            writer.join()
        status = r.json()
        # On ad493db: 200, and alice ALLOW (the permit alone went live, 9 times in 10).
        assert decision == "DENY", (r.status_code, status)
        assert r.status_code == 422 and server.revision()["revision"] == first, status
        assert "written in place again and again" in str(status["errors"]), status
