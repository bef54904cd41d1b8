"""A request whose Transfer-Encoding is not one `chunked` is refused 501 (round 16).

llhttp frames a body by the last transfer coding and lets the others by unread: `gzip, chunked`
was answered 200 as if the body were plain chunked. A proxy in front that decodes or frames by
the codings reads the same bytes otherwise, and the two disagree on where a request ends (request
smuggling). RFC 9112 section 6.1: a server answers 501 to a transfer coding it does not understand.
"""

from __future__ import annotations

import socket
from pathlib import Path

from service.serve_helpers import copy_inputs, serving

ASKED = b'{"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}'
CHUNKED = b"%x\r\n" % len(ASKED) + ASKED + b"\r\n0\r\n\r\n"


def _answer(url: str, request: bytes) -> bytes:
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as s:
        s.sendall(request)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    return answer


def test_transfer_codings(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    head = b"POST /v1/authorize HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
    with serving(tmp_path) as server:
        refused = {
            coding: _answer(server.url, head + b"Transfer-Encoding: " + coding + b"\r\n\r\n" + CHUNKED)
            for coding in (b"gzip, chunked", b"identity")
        }
        # Chunked twice, in one header or two: refused (by llhttp, 400, or by us, 501), never decided.
        twice = [
            _answer(server.url, head + b"Transfer-Encoding: chunked, chunked\r\n\r\n" + CHUNKED),
            _answer(server.url, head + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKED),
        ]
        # `Chunked` (case does not matter to HTTP) is read: alice on her own team's a100-n0/gpu0.
        plain = _answer(server.url, head + b"Transfer-Encoding: Chunked\r\n\r\n" + CHUNKED)
    for coding, answer in refused.items():
        assert answer.startswith(b"HTTP/1.1 501 "), (coding, answer[:200])
        assert b"is not understood" in answer and b"DECISION" not in answer.upper(), answer[:300]
    assert plain.startswith(b"HTTP/1.1 200 ") and b'"decision":"ALLOW"' in plain, plain[:300]
    for answer in twice:
        assert answer.split(b" ", 2)[1] in (b"400", b"501") and b"decision" not in answer, answer[:200]
