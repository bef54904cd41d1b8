"""Review of the request head bound (3705678, verifier/service/http_limits.py).

The end of a head (an empty line, `\\r\\n\\r\\n`) may straddle reads: the protocol kept the last 3
bytes of the previous read to find it. It kept the last 3 bytes of that read alone, so a read of
1 or 2 bytes dropped the ones before it: a head of exactly HEAD_BYTES (within the bound) whose end
came as `...\\r\\n`, `\\r`, `\\n` + body was refused 431 "over 65536 bytes".
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

from service.serve_helpers import copy_inputs, serving

from verifier.service.http_limits import HEAD_BYTES

ASKED = b'{"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}'


def test_a_head_at_the_bound_whose_end_comes_in_short_reads_is_served(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    start = b"POST /v1/authorize HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: %d\r\nX-Pad: " % len(ASKED)
    # The pad's line ends with \r\n and the head with an empty line's \r\n: HEAD_BYTES in all.
    head = start + b"p" * (HEAD_BYTES - len(start) - 4) + b"\r\n\r\n"
    assert len(head) == HEAD_BYTES
    with serving(tmp_path) as server:
        host, port = server.url.rsplit("/", 1)[-1].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=60) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # The head but its last two bytes, then "\r" alone, then "\n" with the body: the last
            # read takes the bytes past HEAD_BYTES (the body), so the head's end is looked for.
            # The pauses (and no Nagle) keep the three pieces three reads: read as one, the old
            # code would have served the head too.
            for piece in (head[:-2], head[-2:-1], head[-1:] + ASKED):
                s.sendall(piece)
                time.sleep(0.3)
            answer = b""
            while chunk := s.recv(65536):
                answer += chunk
    status = int(answer.split(b" ", 2)[1])
    # alice on her own team's a100-n0/gpu0 under the shipped policies (tenant-own-hardware).
    assert status == 200, answer[:300]
    assert b'"decision":"ALLOW"' in answer
