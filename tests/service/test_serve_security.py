"""Who may talk to the gate: loopback by default; beyond it TLS and a token or client certificates, or no start."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trustme
from cli_helpers import run_cli
from service.serve_helpers import ROOT, copy_inputs, serving, start, stop

TOKEN = "s3cret-token-for-the-gate-0123456789"


def _certs(folder: Path) -> tuple[trustme.CA, Path, Path, Path]:
    """A CA, and the server's certificate and key for 127.0.0.1, written as PEM files; the CA's file."""
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    chain, key, ca_file = folder / "server.pem", folder / "server.key", folder / "ca.pem"
    cert.private_key_and_cert_chain_pem.write_to_path(str(chain))
    cert.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(ca_file))
    return ca, chain, key, ca_file


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--host", "0.0.0.0"], "needs TLS"),
        (["--host", "0.0.0.0"], "needs authentication"),
        (["--host", "10.1.2.3", "--tls-cert", "{chain}", "--tls-key", "{key}"], "needs authentication"),
        (["--host", "0.0.0.0", "--token-file", "{token}"], "needs TLS"),
        (["--tls-cert", "{chain}"], "go together"),
        (["--token-file", "{short}"], "expected at least 16"),
    ],
)
def test_serve_refuses_to_start_open_or_misconfigured(tmp_path: Path, args: list[str], says: str) -> None:
    inventory = copy_inputs(tmp_path)
    _ca, chain, key, _ca_file = _certs(tmp_path)
    (tmp_path / "token").write_text(TOKEN + "\n")
    (tmp_path / "short").write_text("abc\n")
    names = {"chain": chain, "key": key, "token": tmp_path / "token", "short": tmp_path / "short"}
    code, out, err = run_cli("serve", str(inventory), *(a.format(**names) for a in args))
    assert code == 2, out + err
    assert says in err and "Traceback" not in err


def test_a_bad_first_revision_is_exit_2_with_the_place(tmp_path: Path) -> None:
    inventory = copy_inputs(tmp_path)
    (tmp_path / "policies" / "broken.cedar").write_text("forbid (principal\n")
    code, _out, err = run_cli("serve", str(inventory), "--port", "0")
    assert code == 2
    assert "broken.cedar:" in err and "Traceback" not in err


def test_without_the_serve_extra_it_says_which_pip_command(tmp_path: Path) -> None:
    inventory = copy_inputs(tmp_path)
    # starlette made unimportable, as in an install without the extra.
    code = "import sys; sys.modules['starlette'] = None; from verifier.cli.main import main; main()"
    result = subprocess.run(
        [sys.executable, "-c", code, "serve", str(inventory)],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert 'pip install "topolog[serve] @ git+' in result.stderr and "Traceback" not in result.stderr


def test_token_required_on_every_endpoint_but_the_probes(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    (tmp_path / "token").write_text(TOKEN + "\n")
    with serving(tmp_path, "--token-file", str(tmp_path / "token"), token=TOKEN) as server:
        body = {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}
        for bad in ("", "wrong-token-wrong-token-wrong"):
            with server.client(token=bad) as c:
                refused = c.post("/v1/authorize", json=body)
                # RFC 6750's challenge, and the service's problem document (error, status).
                assert refused.status_code == 401
                assert refused.headers["WWW-Authenticate"] == 'Bearer realm="topolog"'
                assert refused.json() == {
                    "error": "authentication required: send Authorization: Bearer <token>",
                    "status": 401,
                }
                assert c.post("/v1/reload").status_code == 401
                assert c.get("/v1/revision").status_code == 401
                assert c.get("/metrics").status_code == 401
                assert c.get("/healthz").status_code == 200
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Basic {TOKEN}"}) as c:
            assert c.post("/v1/authorize", json=body).status_code == 401
        assert server.authorize("alice", "schedule", "a100-n0/gpu0")["decision"] == "ALLOW"


def test_tls_with_client_certificates(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    ca, chain, key, ca_file = _certs(tmp_path)
    client_cert = ca.issue_cert("scheduler.example")
    client_pem = tmp_path / "client.pem"
    client_cert.private_key_and_cert_chain_pem.write_to_path(str(client_pem))
    args = ("--tls-cert", str(chain), "--tls-key", str(key), "--client-ca", str(ca_file))
    with_cert = ssl.create_default_context(cafile=str(ca_file))
    with_cert.load_cert_chain(str(client_pem))
    without_cert = ssl.create_default_context(cafile=str(ca_file))
    with serving(tmp_path, *args, verify=with_cert) as server:
        assert server.url.startswith("https://")
        body = {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}
        assert server.authorize("alice", "schedule", "a100-n0/gpu0")["decision"] == "ALLOW"
        no_cert = httpx.Client(base_url=server.url, verify=without_cert, timeout=30)
        with no_cert as c, pytest.raises(httpx.TransportError):
            c.post("/v1/authorize", json=body)  # no client certificate: the handshake fails
        plain = httpx.Client(base_url=server.url.replace("https", "http"), timeout=30)
        with plain as c, pytest.raises(httpx.TransportError):
            c.get("/healthz")  # plain HTTP to a TLS port gets no answer


def test_beyond_loopback_with_tls_and_a_token_serves_and_refuses_the_unauthenticated(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    _ca, chain, key, ca_file = _certs(tmp_path)
    (tmp_path / "token").write_text(TOKEN + "\n")
    args = (
        "--host",
        "0.0.0.0",
        "--tls-cert",
        str(chain),
        "--tls-key",
        str(key),
        "--token-file",
        str(tmp_path / "token"),
    )
    trust = ssl.create_default_context(cafile=str(ca_file))
    server = start(tmp_path, *args, token=TOKEN, verify=trust, url_host="127.0.0.1")
    try:
        assert "beyond loopback, TLS and authentication on" in server.stderr()
        body = {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}
        with server.client(token="") as c:
            assert c.post("/v1/authorize", json=body).status_code == 401
        assert server.authorize("alice", "schedule", "a100-n0/gpu0")["decision"] == "ALLOW"
    finally:
        stop(server)
