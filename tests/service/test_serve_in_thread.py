"""The real uvicorn server in a thread, for what a subprocess cannot be made to do: a decision that crashes.

The process must answer closed (a Deny, never a 5xx, never an allow) and keep serving.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from service.serve_helpers import copy_inputs, wait_for

from verifier.service import app as app_module
from verifier.service import gate as gate_module
from verifier.service.app import Service, create_app
from verifier.service.config import ServeConfig
from verifier.service.decision_log import DecisionLog
from verifier.service.gate import Gate


@pytest.fixture(params=[0.5])
def url(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """The server, with --authorize-timeout the test's parameter (0.5 s unless it asks otherwise)."""
    gate = Gate(ServeConfig((copy_inputs(tmp_path),), watch=False, authorize_timeout_s=float(request.param)))
    service = Service(gate, DecisionLog(None, 1024, 1))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(uvicorn.Config(create_app(service), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    wait_for("the server", lambda: server.started)
    try:
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        service.close()


# A bound far past any decision's time: the crash, not a slow first decision on a loaded
# machine (a Deny for time, seen once in a clean-clone run), must be what denies.
@pytest.mark.parametrize("url", [60.0], indirect=True)
def test_a_crash_while_deciding_is_a_deny_and_the_server_keeps_serving(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_args: object) -> dict[str, object]:
        raise RuntimeError("simulated bug")

    monkeypatch.setattr(app_module, "authorize_doc", boom)
    # alice on a100-n0/gpu0 is an ALLOW when nothing crashes (test_serve_authorize.py derives it).
    body = {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}
    with httpx.Client(base_url=url, timeout=30) as c:
        r = c.post("/v1/authorize", json=body)
        assert r.status_code == 200 and r.json()["decision"] == "DENY"
        assert "RuntimeError" in r.json()["errors"][0]
        monkeypatch.undo()
        assert c.post("/v1/authorize", json=body).json()["decision"] == "ALLOW"
        assert c.get("/healthz").status_code == 200


def test_a_decision_not_made_in_time_is_a_deny_saying_so(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The decision blocks until the answer is in: it cannot finish within the 0.5 s bound, however
    # fast or slow the machine. Then the worker is released, and the next decision is made (asked once
    # the held one has returned: queued behind it, its own bound would count a wait that depends on load).
    release = threading.Event()
    returned = threading.Event()
    real = gate_module.authorize_doc

    def stuck(*args: Any) -> dict[str, object]:
        release.wait(timeout=60)
        try:
            return real(*args)
        finally:
            returned.set()

    monkeypatch.setattr(app_module, "authorize_doc", stuck)
    body = {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}
    with httpx.Client(base_url=url, timeout=30) as c:
        doc = c.post("/v1/authorize", json=body).json()
        release.set()
        assert doc["decision"] == "DENY" and "not decided within 0.5 s" in doc["errors"][0]["message"]
        monkeypatch.undo()
        assert returned.wait(timeout=60)
        assert c.post("/v1/authorize", json=body).json()["decision"] == "ALLOW"
