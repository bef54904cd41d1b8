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

Deterministic whatever the load (review R-ST61): a rename that still lands inside the build (its
share of the period: about 5 % at rest, far more on a loaded machine) is refused as "changed while
the revision was built", which is the gate failing closed, not the bug: that reload is asked
again, up to ATTEMPTS times. Every reload, built or refused, must have read at the deadline, not
before it (the bug read at the wake-up before it, on a write: refused, or at best read early).
A reload during which the writer itself stalled (the file rested QUIET_S: its wait could end at
a quiet) proves nothing of the deadline and is asked again too: the files' own modification
times say so, not a guess at the machine's speed.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from pathlib import Path

from service.serve_helpers import copy_inputs, serving

QUIET_S = 2.0
QUIET_MAX_S = 4.0
ATTEMPTS = 6
RACED = "changed while the revision was built"
STALL_S = QUIET_S - 0.1
"""A rest this long is taken as QUIET_S: the clock that stamps a file may be some ms behind time.time()."""

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
        mtimes: list[float] = []  # of each version renamed over site.cedar, as the server sees them

        def rewrite() -> None:
            # Whole, renamed over site.cedar, each time with another comment: another revision.
            # (One written in place without rest is refused at the deadline instead: it may be
            # read between two of its writes; test_serve_reload_churn_review60.)
            part = site.with_name("site.cedar.part")
            while not done.is_set():
                writes[0] += 1
                part.write_text(SITE + f"// write {writes[0]}\n")
                mtimes.append(part.stat().st_mtime)  # a rename keeps it
                os.replace(part, site)
                time.sleep(period)

        def longest_rest(since: float, until: float) -> float:
            # The longest site.cedar went unwritten between `since` and `until` (time.time(), the
            # server's clock for a file's age; a list appended to by one thread, read by this one:
            # a copy of it).
            times = [t for t in list(mtimes) if t <= until]
            before = [t for t in times if t <= since]
            inside = [t for t in times if t > since]
            points = ([before[-1]] if before else [since]) + inside + [until]
            return max(b - a for a, b in itertools.pairwise(points))

        writer = threading.Thread(target=rewrite)
        writer.start()
        outcomes: list[tuple[int, object, float, float]] = []
        try:
            time.sleep(1.5 * period)  # the writer under way
            for _ in range(ATTEMPTS):
                started, since = time.monotonic(), time.time()
                r = c.post("/v1/reload", timeout=QUIET_MAX_S + 60)
                took, rest = time.monotonic() - started, longest_rest(since, time.time())
                status = r.json()
                outcomes.append((r.status_code, status["errors"], round(took, 2), round(rest, 2)))
                if rest >= STALL_S:
                    continue  # the writer stalled: the file rested, this reload proves nothing
                # Read at the deadline, built or not: no sooner (the file never rested QUIET_S;
                # the server's wait began after `started`), not much later.
                assert QUIET_MAX_S <= took < QUIET_MAX_S + 30, outcomes
                if r.status_code == 422 and status["errors"] and all(RACED in e for e in status["errors"]):
                    continue  # a rename inside the build, refused (closed): asked again
                break
        finally:
            done.set()
            writer.join()
        assert (r.status_code, status["ok"], status["errors"]) == (200, True, []), outcomes
        assert rest < STALL_S, outcomes
        assert status["revision"] != first
        # Every version of the file holds the forbid: alice is denied by it.
        doc = server.authorize("alice", "schedule", "a100-n0/gpu0")
        assert (doc["decision"], [p["id"] for p in doc["policies"]]) == ("DENY", ["stop-alice"])
