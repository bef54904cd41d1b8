"""The gate over a real loopback socket, round 13: what a client sends that it should not.

- A JSON number below the smallest float (1e-400) was read as 0: a value the request did not
  write. It is a 400 now, like 1e400 (past the largest) already was.
- `POST /v1/authorize/` (a slash more) was answered 307 to /v1/authorize: a scheduler's POST sent
  on with its body, or not, as each client does. It is the JSON 404 of any unknown path now.
- A request's head (request line and headers) was bounded neither in time nor in size: a client
  sending a header now and then held its connection open for ever, and a 200 MB header was kept
  whole in memory. Now a JSON 408 after verifier.service.http_limits.HEAD_S seconds, a 431 past
  HEAD_BYTES.
- A policy file rewritten in place with a pause between two writes was reloaded half-written: the
  half parsed, and the gate allowed what the missing forbid denies.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest
from service.serve_helpers import copy_inputs, new_revision, serving, wait_for

from verifier.service.http_limits import HEAD_BYTES, HEAD_S

ENDPOINTS = "/v1/authorize, /v1/authorize/batch, /v1/admit, /v1/admission, /v1/reload, /v1/revision"
ASKED = b'{"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0", "context": {"n": %s}}'


def _exchange(url: str, data: bytes, drip: list[bytes] | None = None, limit_s: float = 60.0) -> bytes:
    """Send `data` (then each of `drip`, a second apart, while the connection is open) and read all
    that comes back until the server closes, over a raw socket: an HTTP client would fix the request.
    """
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=limit_s) as s:
        s.sendall(data)
        for piece in drip or ():
            time.sleep(1.0)
            try:
                s.sendall(piece)
            except OSError:  # closed by the server meanwhile: what it said is read below
                break
        out = b""
        while True:
            try:
                got = s.recv(65536)
            except ConnectionResetError:
                break
            if not got:
                break
            out += got
    return out


def _status_and_body(answer: bytes) -> tuple[int, bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


def test_numbers_paths_and_heads_a_client_should_not_send(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    with serving(tmp_path) as server, server.client() as c:
        # 1e-400 and -1e-400 are below 4.9e-324, the smallest double: json reads both as 0.
        for number in (b"1e-400", b"-1e-400"):
            r = c.post("/v1/authorize", content=ASKED % number)
            assert r.status_code == 400
            assert r.json()["error"] == (
                f"the request body: {number.decode()} is not 0 but below the smallest number a float holds "
                "(about 4.9e-324), so it would be read as 0; expected 0 or a number a float holds"
            )
        # 5e-324 is that smallest double itself, and 0e-400 is 0 written with an exponent: both read
        # (and denied: `n` is not in the context's schema).
        for number in (b"5e-324", b"0e-400"):
            r = c.post("/v1/authorize", content=ASKED % number)
            assert r.status_code == 200 and r.json()["decision"] == "DENY"

        # A slash more: no redirect (no Location), the 404 of any path that is not served.
        r = c.post("/v1/authorize/", content=ASKED % b"1")
        assert r.status_code == 404 and "location" not in r.headers
        assert r.json()["error"] == (
            f"no endpoint '/v1/authorize/'; expected one of {ENDPOINTS}, /healthz, /readyz, /metrics"
        )
        # A probe or scraper with a slash more gets what the path without it answers (a GET that
        # changes nothing: no redirect needed; a 404 would fail a readiness probe that worked).
        for probe in ("/healthz", "/readyz", "/metrics"):
            plain, slashed = c.get(probe), c.get(probe + "/")
            assert slashed.status_code == plain.status_code == 200 and "location" not in slashed.headers
            assert slashed.headers["content-type"] == plain.headers["content-type"]
        # A path past 200 characters is shown cut, saying how long it was: "/" and 300 x = 301.
        r = c.get("/" + "x" * 300)
        assert r.status_code == 404
        assert r.json()["error"].startswith(f"no endpoint {'/' + 'x' * 199!r}... (301 characters); expected")

    # A head of exactly HEAD_BYTES with a body after it, sent in one write, is served; HEAD_BYTES + 1
    # bytes of a head not ended (the pad 4 + 1 bytes longer, no \r\n\r\n) are refused at once
    # with 431, not read to their end.
    body = ASKED % b"1"
    start = b"POST /v1/authorize HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: %d\r\nX-Pad: " % len(body)
    pad = HEAD_BYTES - len(start) - 4  # the head ends with the pad's \r\n and an empty line's \r\n
    with serving(tmp_path) as server:
        status, answer = _status_and_body(_exchange(server.url, start + b"p" * pad + b"\r\n\r\n" + body))
        assert status == 200 and b'"decision":"DENY"' in answer
        status, answer = _status_and_body(_exchange(server.url, start + b"p" * (pad + 5)))
        assert status == 431
        assert answer == (
            b'{"error": "the request head is over %d bytes; expected at most %d", "status": 431}'
            % (HEAD_BYTES, HEAD_BYTES)
        )
        assert server.get("/healthz").status_code == 200


@pytest.mark.parametrize("drip", [False, True], ids=["silent", "a header a second"])
def test_a_head_that_never_ends_is_closed_with_408(tmp_path: Path, drip: bool) -> None:
    copy_inputs(tmp_path)
    # The bound is HEAD_S (10 s) unless --request-head-timeout is given: 2 s here, still two of
    # the drip's lines, so a head kept coming line by line is timed from its first byte, not from
    # its last.
    head_s = 2.0
    assert HEAD_S == 10.0
    expected = b'{"error": "the request head did not arrive within 2 s", "status": 408}'
    with serving(tmp_path, "--request-head-timeout", f"{head_s:g}") as server:
        # Slowloris: the head started and never ended, silent or one header line a second (each
        # keeps a connection busy for ever where only idle connections time out). 30 lines take
        # 30 s, more than head_s: the 408 comes while they are being sent.
        assert head_s < 30
        lines = [b"X-%d: a\r\n" % i for i in range(30)] if drip else None
        answer = _exchange(server.url, b"GET /healthz HTTP/1.1\r\nHost: t\r\n", lines)
        status, body = _status_and_body(answer)
        assert (status, body) == (408, expected)
        assert server.get("/healthz").status_code == 200


SITE_FIRST = '@id("allow-all")\npermit (principal, action, resource);\n\n'
SITE_FORBID = '@id("stop-alice")\nforbid (principal == User::"alice", action, resource);\n'


def test_a_policy_file_written_in_place_in_two_writes_is_never_half_live(tmp_path: Path) -> None:
    # site.cedar alone decides: a permit of everything and a forbid of alice. Rewritten in place
    # (truncated, the permit written, a pause, then the forbid): in between, the file parses and
    # holds the permit only. The watcher reloads after 0.4 s of silence, so the gate built that
    # half and allowed alice for a second. It reads a file once nothing changed for
    # --reload-quiet (2 s by default, 2.5 s here: longer than the pause, now 0.6 s, still longer
    # than the watcher's 0.4 s, by 1.9 s, so that a pause stretched on a loaded machine is still
    # caught; review R-ST61): every answer, before, during and after, is alice denied by stop-alice.
    pause, quiet = 0.6, 2.5
    assert 0.4 < pause < quiet
    copy_inputs(tmp_path)
    for f in (tmp_path / "policies").glob("*.cedar"):
        f.unlink()
    site = tmp_path / "policies" / "site.cedar"
    site.write_text(SITE_FIRST + SITE_FORBID)
    asked = {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}
    with serving(tmp_path, "--reload-quiet", f"{quiet:g}") as server:
        first = server.revision()["revision"]
        answers: list[tuple[str, list[str], str]] = []
        done = threading.Event()

        def ask() -> None:
            with server.client() as c:
                while not done.is_set():
                    doc = c.post("/v1/authorize", json=asked).json()
                    answers.append((doc["decision"], [p["id"] for p in doc["policies"]], doc["revision"]))
                    time.sleep(0.02)

        asking = threading.Thread(target=ask)
        asking.start()
        try:
            with site.open("w") as handle:
                handle.write(SITE_FIRST)
                handle.flush()
                os.fsync(handle.fileno())
                time.sleep(pause)
                handle.write(SITE_FORBID + "// v2: the same policies, another revision\n")
            new_revision(server, first)
            wait_for("answers from the new revision", lambda: any(r != first for _d, _p, r in answers))
        finally:
            done.set()
            asking.join()
    assert {(d, tuple(p)) for d, p, _r in answers} == {("DENY", ("stop-alice",))}
