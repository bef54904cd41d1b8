"""A served file that never rests must not stop every reload (round 14, a real server on loopback).

A reload reads the files once none changed for --reload-quiet (2 s), waiting at most
--reload-quiet-max (20 s).
A policy file replaced every second (written whole, renamed over it) never gives 2 s of quiet,
and each wait ended at a wake-up timed newest write + 2 s: on the writer's next write. The files
were read then, the build saw them change under it, and the reload was refused, every time
(measured with a writer in place: 3 of 3, each after 20 s), so no change went live while the
writer ran. The wait now ends at its deadline, which falls
between two writes, and the reload builds. The test waits for a deadline of 4 s, not 20: the
quiet and the writer's period are the ones measured (2 s, 1 s), as a shorter period would leave
the build (some 50 ms) less room between two writes.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from service.serve_helpers import copy_inputs, serving

QUIET_S = 2.0
QUIET_MAX_S = 4.0

SITE = (
    '@id("allow-all")\npermit (principal, action, resource);\n\n'
    '@id("stop-alice")\nforbid (principal == User::"alice", action, resource);\n'
)


def test_a_policy_file_rewritten_every_second_still_reloads(tmp_path: Path) -> None:
    period = 1.0
    # The period divides QUIET_S: the old wait's every wake-up fell on a write.
    assert QUIET_S % period == 0
    copy_inputs(tmp_path)
    for f in (tmp_path / "policies").glob("*.cedar"):
        f.unlink()
    site = tmp_path / "policies" / "site.cedar"
    site.write_text(SITE)
    # --no-watch: only the reload asked for below runs (the watcher's would queue before it).
    quiet = ("--reload-quiet", f"{QUIET_S:g}", "--reload-quiet-max", f"{QUIET_MAX_S:g}")
    with serving(tmp_path, "--no-watch", *quiet) as server, server.client() as c:
        first = server.revision()["revision"]
        done = threading.Event()
        writes = [0]

        def rewrite() -> None:
            # Whole, renamed over site.cedar, each time with another comment: another revision.
            # (One written in place without rest is refused at the deadline instead: it may be
            # read between two of its writes; test_serve_reload_churn_review60.)
            part = site.with_name("site.cedar.part")
            while not done.is_set():
                writes[0] += 1
                part.write_text(SITE + f"// write {writes[0]}\n")
                os.replace(part, site)
                time.sleep(period)

        writer = threading.Thread(target=rewrite)
        writer.start()
        try:
            time.sleep(1.5 * period)  # the writer under way
            started = time.monotonic()
            r = c.post("/v1/reload", timeout=QUIET_MAX_S + 60)
            took = time.monotonic() - started
        finally:
            done.set()
            writer.join()
        status = r.json()
        assert (r.status_code, status["ok"], status["errors"]) == (200, True, [])
        assert status["revision"] != first
        # Read at the deadline: no sooner (the file never rested QUIET_S), not much later.
        assert QUIET_MAX_S - 1 <= took < QUIET_MAX_S + 30
        # Every version of the file holds the forbid: alice is denied by it.
        doc = server.authorize("alice", "schedule", "a100-n0/gpu0")
        assert (doc["decision"], [p["id"] for p in doc["policies"]]) == ("DENY", ["stop-alice"])
