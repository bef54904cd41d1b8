"""The real `topolog serve` in a subprocess on a free loopback port, and a client that talks to it over a socket.

Each server serves a copy of the mixed fleet, its principals and the shipped policies in a
folder of its own, so a test may edit them. Waits are bounded polling loops, never sleeps
taken for timing.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[2]
LISTENING = re.compile(r"listening on (https?)://(\S+):(\d+)")
START_S = 60.0
"""The longest a server may take to start (a loaded 2-core machine), polled every 50 ms."""
QUICK_S = 0.05
"""A reload's quiet wait (ServeConfig.reload_quiet_s, `--reload-quiet`) for the tests whose files are
written whole before the reload asks: the default 2 s only waited out their own last write."""


def copy_inputs(folder: Path, inventory: str = "mixed-fleet.yaml") -> Path:
    """A shipped inventory (the mixed fleet), principals.yml and policies/ copied into `folder`; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "inventories" / inventory, folder / inventory)
    shutil.copy(ROOT / "inventories" / "principals.yml", folder / "principals.yml")
    (folder / "policies").mkdir()
    for f in [*(ROOT / "policies").glob("*.cedar"), ROOT / "policies" / "schema.cedarschema"]:
        shutil.copy(f, folder / "policies" / f.name)
    return folder / inventory


def wait_for(what: str, check: Callable[[], bool], limit_s: float = 30.0) -> None:
    """Poll `check` every 50 ms until true; AssertionError naming `what` after `limit_s`."""
    deadline = time.monotonic() + limit_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {limit_s} s")
        time.sleep(0.05)


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    log: Path
    folder: Path
    token: str | None = None
    verify: ssl.SSLContext | bool = True
    """How a client checks the server over TLS (a context holding the CA, and a client certificate)."""

    def client(self, token: str | None = None) -> httpx.Client:
        use = token if token is not None else self.token
        headers = {"Authorization": f"Bearer {use}"} if use else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30.0, verify=self.verify)

    def post(self, path: str, body: object | bytes) -> httpx.Response:
        with self.client() as c:
            if isinstance(body, bytes):
                return c.post(path, content=body)
            return c.post(path, json=body)

    def get(self, path: str) -> httpx.Response:
        with self.client() as c:
            return c.get(path)

    def authorize(self, principal: str, action: str, resource: str, **context: Any) -> dict[str, Any]:
        r = self.post(
            "/v1/authorize", {"principal": principal, "action": action, "resource": resource, "context": context}
        )
        assert r.status_code == 200, r.text
        doc: dict[str, Any] = r.json()
        return doc

    def revision(self) -> dict[str, Any]:
        doc: dict[str, Any] = self.get("/v1/revision").json()
        return doc

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None


def start(
    folder: Path,
    *args: str,
    token: str | None = None,
    verify: ssl.SSLContext | bool = True,
    inventory: str = "mixed-fleet.yaml",
    url_host: str | None = None,
) -> Server:
    """`topolog serve FOLDER/INVENTORY --port 0 ARGS...`, waited for until it answers /healthz.

    `url_host`: the address to talk to it at, when it listens on all of them (0.0.0.0).
    """
    log = folder / "serve.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "verifier.cli.main",
                "serve",
                str(folder / inventory),
                "--port",
                "0",
                *args,
            ],
            cwd=folder,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    found: list[re.Match[str]] = []

    def listening() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"topolog serve exited {process.returncode}:\n{log.read_text()}")
        m = LISTENING.search(log.read_text(errors="replace"))
        if m:
            found.append(m)
        return m is not None

    wait_for("topolog serve listening", listening, START_S)
    scheme, host, port = found[0].groups()
    server = Server(process, f"{scheme}://{url_host or host}:{port}", log, folder, token, verify)
    wait_for("/healthz", lambda: _healthy(server), START_S)
    return server


def _healthy(server: Server) -> bool:
    try:
        return server.get("/healthz").status_code == 200
    except httpx.TransportError:
        return False


def stop(server: Server) -> None:
    if server.alive():
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=30)


@contextmanager
def serving(
    folder: Path,
    *args: str,
    token: str | None = None,
    verify: ssl.SSLContext | bool = True,
    inventory: str = "mixed-fleet.yaml",
) -> Iterator[Server]:
    server = start(folder, *args, token=token, verify=verify, inventory=inventory)
    try:
        yield server
    finally:
        stop(server)


def new_revision(server: Server, old: str, limit_s: float = 30.0) -> dict[str, Any]:
    """/v1/revision once its revision is no longer `old` (polled)."""
    seen: list[dict[str, Any]] = []

    def changed() -> bool:
        doc = server.revision()
        seen[:] = [doc]
        return bool(doc["revision"] != old)

    wait_for(f"a revision other than {old}", changed, limit_s)
    return seen[0]


def reload_failed(server: Server, limit_s: float = 30.0) -> dict[str, Any]:
    """/v1/revision once its last reload failed (polled)."""
    seen: list[dict[str, Any]] = []

    def failed() -> bool:
        doc = server.revision()
        seen[:] = [doc]
        return doc["last_reload"]["ok"] is False

    wait_for("a failed reload", failed, limit_s)
    return seen[0]
