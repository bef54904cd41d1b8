"""The HTTP surface of the gate (a Starlette app): routes, authentication, bounds, metrics, the decision log.

Decisions run on one worker thread each for authorize and admit (Cedar handles and the
setup's decision memo are used by one thread at a time; a slow placement never holds up an
authorize), awaited with a time bound: a request not decided in time is a Deny that says so.
The event loop only reads bodies and writes answers, so the process keeps serving whatever
a request holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import TypeVar

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from verifier.service.admission import read_review, review_doc, timed_out_review
from verifier.service.bodies import (
    AuthorizeRequest,
    BadRequest,
    admit_limit,
    authorize_request,
    batch_requests,
    read_json,
)
from verifier.service.config import token_matches
from verifier.service.decision_log import DecisionLog
from verifier.service.gate import Gate, ReloadStatus, admit_doc, admit_timed_out, authorize_doc, timed_out
from verifier.service.metrics import CONTENT_TYPE, Metrics
from verifier.service.revision import Revision

T = TypeVar("T")
LOG = logging.getLogger("topolog.serve")
PREPARE_AFTER_RELOAD_S = 2.0
"""Quiet time after a reload before the new revision's placement is evaluated ahead of admits."""
ENDPOINTS = (
    "/v1/authorize",
    "/v1/authorize/batch",
    "/v1/admit",
    "/v1/admission",
    "/v1/reload",
    "/v1/revision",
    "/healthz",
    "/readyz",
    "/metrics",
)
"""Every path the gate answers, named in the 404 for any other."""
OPEN_PATHS = frozenset({"/healthz", "/readyz"})
"""Probes answer without a token (kubelet probes carry none); they tell nothing about a decision."""


class Service:
    """What the routes share: the gate, the bounds, the metrics, the log and the worker threads."""

    def __init__(self, gate: Gate, log: DecisionLog, metrics: Metrics | None = None) -> None:
        self.gate = gate
        self.config = gate.config
        self.log = log
        self.metrics = metrics or Metrics()
        self.metrics.live(gate.live.id)
        self.deciding = ThreadPoolExecutor(1, thread_name_prefix="topolog-authorize")
        self.admitting = ThreadPoolExecutor(1, thread_name_prefix="topolog-admit")
        self.reloading = ThreadPoolExecutor(1, thread_name_prefix="topolog-reload")
        gate.listeners.append(self.reloaded)
        self._timer_lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self.prepare()

    def prepare(self) -> None:
        """Evaluate the live revision's placement rules ahead of its first admit (verifier.service.placing).

        On the admit thread, queued as an admit is: placements never run beside one another
        (DuckDB, the rule loading and networkx's lazy imports are not for two threads at once), and
        an admit that comes meanwhile waits for it. A revision already replaced when its turn
        comes is skipped: the one live then is prepared.
        """

        def ahead() -> None:
            self.gate.live.placing.prepare()
            # Long-lived, as the revision is: frozen, out of the cyclic collector's walks (gate._settle).
            # What a replaced revision and its evaluation leave is garbage by now, and some of it is in
            # reference cycles (an engine keeps bound methods of itself) that frozen would never be
            # collected (measured: memory grew with every reload): thawed and collected first, once
            # per prepared revision (0.3 s at 131,072 GPUs, on the admit thread).
            gc.unfreeze()
            gc.collect()
            gc.freeze()

        with contextlib.suppress(RuntimeError):  # closed (a timer that fired late): no admit will come
            self.admitting.submit(ahead)

    def prepare_soon(self) -> None:
        """`prepare` once no reload has come for PREPARE_AFTER_RELOAD_S: a burst of reloads (ten
        edits in ten seconds) evaluates the placement once, for the last revision, instead of
        beside each next reload (4 s each at 131,072 GPUs). An admit before then evaluates it itself.
        """
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(PREPARE_AFTER_RELOAD_S, self.prepare)
            self._timer.daemon = True
            self._timer.start()

    def reloaded(self, status: ReloadStatus) -> None:
        self.metrics.reloads.labels(trigger=status.trigger).inc()
        self.metrics.reload_seconds.set(status.seconds)
        if not status.ok:
            self.metrics.reload_failures.labels(trigger=status.trigger).inc()
        self.metrics.live(self.gate.live.id)
        if status.changed:
            self.prepare_soon()

    async def run(self, pool: ThreadPoolExecutor, fn: Callable[[], T], timeout: float) -> T:
        # asyncio.timeout, not wait_for: the same TimeoutError, without a task made around each
        # await (an event-loop turn per request, on every authorize).
        async with asyncio.timeout(timeout):
            return await asyncio.get_running_loop().run_in_executor(pool, fn)

    def close(self) -> None:
        with self._timer_lock:
            if self._timer is not None:
                self._timer.cancel()
        for pool in (self.deciding, self.admitting, self.reloading):
            pool.shutdown(wait=False, cancel_futures=True)
        self.log.close()


def _problem(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message, "status": status}, status_code=status, headers=headers)


async def _body(request: Request, limit: int, timeout: float) -> bytes:
    """The request body, refused past `limit` bytes (413) or when it does not arrive within `timeout` (408)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise BadRequest(f"Content-Length {declared!r} is not a number of bytes")
        if int(declared) > limit:
            raise BadRequest(f"the body is {declared} bytes; expected at most {limit} (--max-body)", 413)

    async def read() -> bytes:
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BadRequest(f"the body is over {limit} bytes; expected at most {limit} (--max-body)", 413)
            chunks.append(chunk)
        return b"".join(chunks)

    try:
        async with asyncio.timeout(timeout):
            return await read()
    except TimeoutError:
        raise BadRequest(f"the body did not arrive within {timeout:g} s", 408) from None


Handler = Callable[[Service, Request], Awaitable[Response]]


def _route(service: Service, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """A route: authenticated (401 without the token), a BadRequest answered as its 4xx."""

    async def endpoint(request: Request) -> Response:
        token = service.gate.token
        needs_token = token is not None and request.url.path not in OPEN_PATHS
        if needs_token and not token_matches(token or "", request.headers.get("authorization")):
            service.metrics.rejected.labels(status="401").inc()
            return _problem(
                401,
                "authentication required: send Authorization: Bearer <token>",
                {"WWW-Authenticate": 'Bearer realm="topolog"'},
            )
        try:
            return await handler(service, request)
        except BadRequest as err:
            service.metrics.rejected.labels(status=str(err.status)).inc()
            return _problem(err.status, err.message)
        except Exception as err:  # a bug: answered closed, and the process keeps serving
            LOG.exception("topolog serve: %s %s failed; answered as denied", request.method, request.url.path)
            reason = f"the request could not be handled ({type(err).__name__}); denied (a bug in topolog)"
            return JSONResponse({"decision": "DENY", "admitted": False, "allowed": False, "errors": [reason]})

    return endpoint


def _record(
    service: Service, endpoint: str, request: object, doc: dict[str, object], started: float, allowed: bool
) -> None:
    elapsed = time.perf_counter() - started
    service.metrics.decisions.labels(endpoint=endpoint, result="allow" if allowed else "deny").inc()
    service.metrics.latency.labels(endpoint=endpoint).observe(elapsed)
    service.log.write(
        {
            "endpoint": endpoint,
            "request": request,
            "decision": "ALLOW" if allowed else "DENY",
            "policies": doc.get("policies", []),
            "errors": doc.get("errors", []),
            "revision": doc.get("revision"),
            "latency_ms": round(elapsed * 1000, 3),
        }
    )


async def _decide(service: Service, revision: Revision, asked: list[AuthorizeRequest]) -> list[dict[str, object]]:
    timeout = service.config.authorize_timeout_s
    try:
        return await service.run(service.deciding, lambda: [authorize_doc(revision, r) for r in asked], timeout)
    except TimeoutError:
        return [timed_out(revision, r, timeout) for r in asked]


async def authorize(service: Service, request: Request) -> Response:
    started = time.perf_counter()
    body = await _body(request, service.config.max_body, service.config.authorize_timeout_s)
    asked = authorize_request(read_json(body))
    revision = service.gate.live  # read once: the whole decision is made on this revision
    (doc,) = await _decide(service, revision, [asked])
    _record(service, "authorize", asked.to_log(), doc, started, doc["decision"] == "ALLOW")
    return JSONResponse(doc)


async def authorize_batch(service: Service, request: Request) -> Response:
    started = time.perf_counter()
    body = await _body(request, service.config.max_body, service.config.authorize_timeout_s)
    asked = batch_requests(read_json(body), service.config.max_batch)
    revision = service.gate.live
    docs = await _decide(service, revision, asked)
    for r, doc in zip(asked, docs, strict=True):
        _record(service, "authorize_batch", r.to_log(), doc, started, doc["decision"] == "ALLOW")
    return JSONResponse({"revision": revision.id, "results": docs})


async def admit(service: Service, request: Request) -> Response:
    started = time.perf_counter()
    timeout = service.config.admit_timeout_s
    body = await _body(request, service.config.max_body, timeout)
    if not body.strip():
        raise BadRequest("the request body is empty; expected a job file (kind: Jobs)")
    limit = admit_limit(request.query_params.getlist("limit"), service.config.admit_limit)
    revision = service.gate.live
    given_up = threading.Event()  # set once answered as timed out: the admit thread stops at its next stage
    try:
        doc = await service.run(
            service.admitting,
            lambda: admit_doc(revision, body, service.config.principal_from, limit, given_up.is_set),
            timeout,
        )
    except TimeoutError:
        given_up.set()
        doc = admit_timed_out(revision, timeout, limit)
    _record(service, "admit", {"bytes": len(body), "limit": limit}, doc, started, doc["admitted"] is True)
    return JSONResponse(doc)


async def admission(service: Service, request: Request) -> Response:
    started = time.perf_counter()
    timeout = service.config.admit_timeout_s
    review = read_review(read_json(await _body(request, service.config.max_body, timeout)))
    revision = service.gate.live
    given_up = threading.Event()  # as in admit
    try:
        doc, allowed = await service.run(
            service.admitting,
            lambda: review_doc(revision, review, service.config.principal_from, given_up.is_set),
            timeout,
        )
    except TimeoutError:
        given_up.set()
        doc, allowed = timed_out_review(review.uid, revision, timeout), False
    logged: dict[str, object] = {"revision": revision.id, "errors": [] if allowed else [doc["response"]]}
    _record(service, "admission", {"uid": review.uid, "operation": review.operation}, logged, started, allowed)
    return JSONResponse(doc)


async def reload(service: Service, request: Request) -> Response:
    status = await asyncio.get_running_loop().run_in_executor(service.reloading, service.gate.reload, "api")
    return JSONResponse(status.describe(), status_code=200 if status.ok else 422)


async def revision(service: Service, request: Request) -> Response:
    return JSONResponse(service.gate.describe())


async def healthz(service: Service, request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def readyz(service: Service, request: Request) -> Response:
    # Ready whenever a revision is live: a failed reload keeps the last good one answering.
    return JSONResponse({"status": "ready", "revision": service.gate.live.id})


async def metrics(service: Service, request: Request) -> Response:
    return Response(service.metrics.exposition(), media_type=CONTENT_TYPE)


async def _http_problem(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such path 404, a method the path does not take 405) as the
    gate's other refusals are: a JSON error a client can read, not Starlette's plain text.
    """
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404:
        path = request.url.path
        shown = repr(path) if len(path) <= 200 else f"{path[:200]!r}... ({len(path)} characters)"
        message = f"no endpoint {shown}; expected one of {', '.join(ENDPOINTS)}"
    elif status == 405:
        given = (exc.headers or {}).get("Allow", "") if isinstance(exc, HTTPException) else ""
        allowed = ", ".join(sorted(m.strip() for m in given.split(",") if m.strip()))  # Starlette's is set order
        message = f"{request.method} is not taken by {request.url.path}; expected {allowed or 'another method'}"
    else:
        message = exc.detail if isinstance(exc, HTTPException) else "the request could not be handled"
    headers = dict(exc.headers) if isinstance(exc, HTTPException) and exc.headers else None
    return _problem(status, message, headers)


def create_app(service: Service, lifespan: Callable[[Starlette], AsyncIterator[None]] | None = None) -> Starlette:
    """The ASGI app of `service`; `lifespan` runs around serving (the file watcher, SIGHUP)."""
    routes = [
        Route("/v1/authorize", _route(service, authorize), methods=["POST"]),
        Route("/v1/authorize/batch", _route(service, authorize_batch), methods=["POST"]),
        Route("/v1/admit", _route(service, admit), methods=["POST"]),
        Route("/v1/admission", _route(service, admission), methods=["POST"]),
        Route("/v1/reload", _route(service, reload), methods=["POST"]),
        Route("/v1/revision", _route(service, revision), methods=["GET"]),
        Route("/healthz", _route(service, healthz), methods=["GET"]),
        Route("/readyz", _route(service, readyz), methods=["GET"]),
        Route("/metrics", _route(service, metrics), methods=["GET"]),
        # Probes and scrapers configured with a slash more (`/healthz/`, Prometheus `metrics_path:
        # /metrics/`) were followed through Starlette's redirect before it was turned off below: a
        # GET that changes nothing is answered the same at both paths, so no probe starts failing.
        Route("/healthz/", _route(service, healthz), methods=["GET"]),
        Route("/readyz/", _route(service, readyz), methods=["GET"]),
        Route("/metrics/", _route(service, metrics), methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: _http_problem},
        lifespan=asynccontextmanager(lifespan) if lifespan is not None else None,
    )
    # Starlette answers `/v1/authorize/` with a 307 to `/v1/authorize`: a scheduler's POST would be
    # sent on (or not: clients differ) with its body to a place it did not name. A path with a
    # slash more is no endpoint: a JSON 404 naming them, as for any other path.
    app.router.redirect_slashes = False
    return app
