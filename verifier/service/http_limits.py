"""The HTTP connection of the gate, with the head of each request bounded in time and in size.

uvicorn bounds neither for its C parser: a client that opens a connection and sends a request's
headers a byte now and then (slowloris), or nothing at all, held it open for ever; one that sent a
200 MB header had it all kept in memory (the gate's resident size went from 113 MB to 338 MB for
one request). The body already is bounded (app._body: --max-body bytes within the authorize
timeout). Here, a request's head (request line and headers) must arrive within
`--request-head-timeout` seconds (HEAD_S unless set) of the connection or of its first byte, and
be at most HEAD_BYTES long: else a JSON 408 or 431 is sent and the connection closed, as a
reverse proxy in front of it would (nginx's client_header_timeout and large_client_header_buffers
are such bounds).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from verifier.service.config import HEAD_TIMEOUT_S

HEAD_S = HEAD_TIMEOUT_S
"""Seconds a request's head may take to arrive unless `--request-head-timeout` says otherwise: a
client sends it in one packet or a few."""
HEAD_BYTES = 64 * 1024
"""The longest request head read: a bearer token or a cookie of several KiB fits many times."""


class BoundedHeadProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, refusing a request head that is too slow or too long."""

    head_s = HEAD_S
    """Seconds the head may take (bounded_head: a subclass per configured value, as uvicorn makes
    the protocol from its class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._in_head = True  # from the connection on: a client that sends nothing is bounded too
        self._head_bytes = 0
        self._tail = b""  # the last bytes of the head read so far: its end may straddle two reads
        self._codings = 0  # Transfer-Encoding headers of the request being read
        self._refusal: tuple[int, str] | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._in_head:
            seen = self._head_bytes
            self._head_bytes += len(data)
            if self._head_bytes > HEAD_BYTES and self._head_end(seen, data) > HEAD_BYTES:
                # Refused before the parser reads it: what it has not read, it does not keep.
                self._refuse(431, f"the request head is over {HEAD_BYTES} bytes; expected at most {HEAD_BYTES}")
                return
            self._tail = (self._tail + data)[-3:]  # a read shorter than 3 bytes keeps the ones before it
        super().data_received(data)

    def _head_end(self, seen: int, data: bytes) -> int:
        """How long the head is, `seen` bytes of it read before `data` (the end: an empty line); past
        HEAD_BYTES where `data` does not end it. The read that ends a head may hold a body too.
        """
        end = (self._tail + data).find(b"\r\n\r\n")
        return HEAD_BYTES + 1 if end < 0 else seen - len(self._tail) + end + 4

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"transfer-encoding":
            # Only `chunked`, once: llhttp frames the body by the last coding and passes the others
            # by unread, so `gzip, chunked` was answered as if plain (200), where a proxy in front
            # that reads the codings frames or decodes it otherwise, the two then disagreeing on
            # where the request ends (smuggling). RFC 9112 6.1: a coding not understood is 501.
            self._codings += 1
            if self._codings > 1 or value.strip(b" \t").lower() != b"chunked":
                self._refusal = (
                    501,
                    f"the request's Transfer-Encoding {value.decode('latin-1')!r} is not understood "
                    "(only one 'chunked' is); expected Content-Length or Transfer-Encoding: chunked",
                )
                raise ValueError(self._refusal[1])  # stops the parser: uvicorn answers 400 through us
        super().on_header(name, value)

    def send_400_response(self, msg: str) -> None:
        if self._refusal is not None:
            self._refuse(*self._refusal)
            return
        super().send_400_response(msg)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        if not self._in_head:  # the next request on a kept-alive connection
            self._in_head = True
            self._head_bytes = 0
            self._tail = b""
            self._codings = 0
            self._arm()

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._disarm()
        super().on_headers_complete()

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self.head_s, self._too_slow)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _too_slow(self) -> None:
        self._head_timer = None
        if self._in_head and not self.transport.is_closing():
            self._refuse(408, f"the request head did not arrive within {self.head_s:g} s")

    def _refuse(self, status: int, message: str) -> None:
        self._disarm()
        body = json.dumps({"error": message, "status": status}).encode()
        reason = {408: b"Request Timeout", 431: b"Request Header Fields Too Large", 501: b"Not Implemented"}[status]
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s"
            % (status, reason, len(body), body)
        )
        self.transport.close()


def bounded_head(head_s: float) -> type[BoundedHeadProtocol]:
    """BoundedHeadProtocol with a head given `head_s` seconds to arrive."""
    return type("BoundedHeadProtocol", (BoundedHeadProtocol,), {"head_s": head_s})
