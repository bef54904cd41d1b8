"""Start the gate: check the configuration, build the first revision, listen, serve until stopped.

uvicorn serves the app; the socket is bound here first, so that `--port 0` (a free port, as
the tests use) is told on stderr with the port the system gave, and a port in use is an
error with the address, not a traceback.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import ssl
import sys
import threading
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette

from verifier.core.cache import ENV_DIR
from verifier.core.errors import SourceLocation, TopologError
from verifier.service.app import Service, create_app
from verifier.service.config import ServeConfig, check_config, is_loopback
from verifier.service.decision_log import DecisionLog
from verifier.service.gate import Gate, ReloadStatus
from verifier.service.http_limits import bounded_head
from verifier.service.revision import remove_snapshots
from verifier.service.watch import start_watching

LOG = logging.getLogger("topolog.serve")


def _log_reload(status: ReloadStatus) -> None:
    if status.ok:
        what = "a new revision" if status.changed else "no change"
        LOG.info("topolog serve: reload (%s): %s, revision %s live", status.trigger, what, status.revision)
        for warning in status.warnings:
            LOG.warning("warning: %s", warning)
        return
    LOG.error("topolog serve: reload (%s) refused, revision %s stays live:", status.trigger, status.revision)
    for problem in status.errors:
        LOG.error("error: %s", problem)


def _listen(host: str, port: int) -> socket.socket:
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as err:
        raise TopologError.at(
            SourceLocation("--host/--port"), f"cannot listen on {host}:{port}: {err.strerror or err}"
        ) from None
    sock.setblocking(False)
    return sock


def serve(config: ServeConfig) -> None:
    """Serve until SIGINT or SIGTERM. TopologError (exit 2) when the configuration or the first revision is bad."""
    try:
        _serve(config)
    finally:
        remove_snapshots()  # the process may end without the interpreter's teardown, which would remove them


def _serve(config: ServeConfig) -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(message)s")
    # watchfiles says "N changes detected" at INFO for every batch in a watched folder, files the gate
    # does not read included: with stderr (or the decision log) written into the inventory's folder,
    # each such line is itself a change, and the log grew by a line a second while nothing happened.
    # What the gate does about a change (a reload, refused or not) is logged by _log_reload.
    logging.getLogger("watchfiles").setLevel(logging.WARNING)
    check_config(config)
    # No disk cache in a long-running gate: it would write an entry per new decision (and evict
    # others) on the request path, making each decision several times slower (docs/serve.md);
    # the revision lives in memory instead.
    os.environ[ENV_DIR] = ""
    gate = Gate(config)
    gate.listeners.append(_log_reload)
    service = Service(gate, DecisionLog(config.decision_log, config.decision_log_bytes, config.decision_log_keep))
    stop = threading.Event()
    sock = _listen(config.host, config.port)
    host, port = sock.getsockname()[:2]
    scheme = "https" if config.tls_cert is not None else "http"
    shown = f"[{host}]" if ":" in host else host
    where = "loopback only" if is_loopback(config.host) else "beyond loopback, TLS and authentication on"

    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if config.watch:
            start_watching(config, gate.reload, stop)
        loop = asyncio.get_running_loop()
        if threading.current_thread() is threading.main_thread():
            # SIGHUP, as OPA, nginx and most daemons read it: build the files again.
            loop.add_signal_handler(
                signal.SIGHUP, lambda: loop.run_in_executor(service.reloading, gate.reload, "signal")
            )
        # Said once SIGHUP is handled: a signal sent on reading this line reloads, where before
        # it could still find the default action (the process ended).
        LOG.info(
            "topolog serve: revision %s built in %.2f s; listening on %s://%s:%d (%s)",
            gate.live.id,
            gate.live.build_seconds,
            scheme,
            shown,
            port,
            where,
        )
        for warning in gate.live.warnings():  # observations it does not use: said, never silently passed over
            LOG.warning("warning: %s", warning)
        yield
        stop.set()
        service.close()

    app = create_app(service, lifespan)
    server = uvicorn.Server(
        uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_keep_alive=5,
            http=bounded_head(config.head_timeout_s),  # a request's head bounded in time and size (http_limits.py)
            ssl_certfile=str(config.tls_cert) if config.tls_cert else None,
            ssl_keyfile=str(config.tls_key) if config.tls_key else None,
            ssl_ca_certs=str(config.client_ca) if config.client_ca else None,
            ssl_cert_reqs=ssl.CERT_REQUIRED if config.client_ca else ssl.CERT_NONE,
        )
    )
    if threading.current_thread() is threading.main_thread():
        # uvicorn stops gracefully on SIGTERM, then sends the signal again to the handler it found
        # before: this one, so that a stopped gate exits 0, as its help says, having run serve's
        # `finally`, rather than being killed by the signal's default action.
        signal.signal(signal.SIGTERM, _stopped)
    server.run(sockets=[sock])


def _stopped(signum: int, frame: object) -> None:
    sys.exit(0)
