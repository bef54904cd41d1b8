"""What `topolog serve` is started with, and the refusal to start it open to the network.

A gate bound beyond loopback is reachable by anyone on the network: it must speak TLS and
authenticate every request (a bearer token read from a file, or client certificates checked
against a CA), or it does not start (exit 2 at the CLI). Bounds on bodies, batches and request
time hold on every bind (docs/limits.md).
"""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.limits import read_regular
from verifier.sources.jobs.principal_rules import PrincipalRule

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8181
"""OPA's port is 8181 too: a scheduler's gate, where operators look for one."""
MAX_BODY = 1024 * 1024
"""Bytes of one request body: a job file or a batch of 1,000 requests is far smaller."""
MAX_BATCH = 1000
"""Requests in one /v1/authorize/batch call (AWS Verified Permissions allows 30; a scheduler
asking for every GPU of a node group needs more)."""
AUTHORIZE_TIMEOUT_S = 2.0
"""Seconds one authorize (or batch) may take before it is denied as timed out."""
ADMIT_TIMEOUT_S = 60.0
"""Seconds one admit may take before it is denied as timed out (placement at 131,072 GPUs reads the fleet)."""
ADMIT_LIMIT = 10
"""Placements listed per job in an admit's answer (`--admit-limit`, `?limit=`); its `hosting` counts them all."""
DECISION_LOG_BYTES = 64 * 1024 * 1024
"""Size at which the decision log is rotated (`--decision-log-max-bytes`)."""
DECISION_LOG_KEEP = 5
"""Rotated decision logs kept (`--decision-log-keep`)."""
HEAD_TIMEOUT_S = 10.0
"""Seconds a request's head (request line and headers) may take to arrive (`--request-head-timeout`)."""
TOKEN_MIN_LENGTH = 16
"""Characters a bearer token must have: a short one can be guessed."""
RELOAD_QUIET_S = 2.0
"""A reload reads the files once none has changed for this long (`--reload-quiet`): a file written
in place, in two writes with a pause between them, is then not read half-written. (Replacing a file
by renaming another over it, as editors and the kubelet do, is whole at once.)"""
RELOAD_QUIET_MAX_S = 20.0
"""The longest a reload waits for that quiet (`--reload-quiet-max`): a file replaced without end
(renamed over) is read as it is then (a change while it is read still refuses the build, see
verifier.service.revision.build_revision); one written in place without end refuses the reload."""


@dataclass(frozen=True)
class ServeConfig:
    """Everything the service is started with (flags of `topolog serve`)."""

    inventory: tuple[Path, ...]
    principals: Path | None = None
    """None: principals.yml found as the other commands find it."""
    policies: Path | None = None
    """None: policies/ found as the other commands find it, else the shipped policies."""
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    tls_cert: Path | None = None
    tls_key: Path | None = None
    client_ca: Path | None = None
    """Client certificates are required and checked against this CA bundle."""
    token_file: Path | None = None
    """A bearer token every request must carry (read once at start and on each reload)."""
    decision_log: Path | None = None
    decision_log_bytes: int = DECISION_LOG_BYTES
    decision_log_keep: int = DECISION_LOG_KEEP
    max_body: int = MAX_BODY
    max_batch: int = MAX_BATCH
    authorize_timeout_s: float = AUTHORIZE_TIMEOUT_S
    admit_timeout_s: float = ADMIT_TIMEOUT_S
    head_timeout_s: float = HEAD_TIMEOUT_S
    admit_limit: int = ADMIT_LIMIT
    """The best placements an admit lists per job unless the request asks otherwise (0: all)."""
    watch: bool = True
    reload_quiet_s: float = RELOAD_QUIET_S
    reload_quiet_max_s: float = RELOAD_QUIET_MAX_S
    principal_from: tuple[PrincipalRule, ...] = ()
    """Whom a Kubernetes or Slurm job acts as (`--principal-from`, as for `topolog place`)."""


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address or `localhost` (anything else is beyond loopback)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_config(config: ServeConfig) -> None:
    """TopologError (exit 2) for a configuration the service must not start with."""
    problems: list[str] = []
    if (config.tls_cert is None) != (config.tls_key is None):
        problems.append("--tls-cert and --tls-key go together: give both or neither")
    if config.client_ca is not None and config.tls_cert is None:
        problems.append("--client-ca checks client certificates over TLS: give --tls-cert and --tls-key too")
    for path, flag in (
        (config.tls_cert, "--tls-cert"),
        (config.tls_key, "--tls-key"),
        (config.client_ca, "--client-ca"),
    ):
        if path is not None and not path.is_file():
            problems.append(f"{flag} {path}: no such file")
    if not config.reload_quiet_s <= config.reload_quiet_max_s:
        problems.append(
            f"--reload-quiet {config.reload_quiet_s:g} is longer than "
            f"--reload-quiet-max {config.reload_quiet_max_s:g}: the wait would always end at its deadline, "
            "never at a quiet; expected --reload-quiet <= --reload-quiet-max"
        )
    if not is_loopback(config.host):
        if config.tls_cert is None:
            problems.append(
                f"--host {config.host} is beyond loopback: it needs TLS (--tls-cert and --tls-key); "
                "expected --host 127.0.0.1, or TLS and authentication"
            )
        if config.token_file is None and config.client_ca is None:
            problems.append(
                f"--host {config.host} is beyond loopback: it needs authentication "
                "(--token-file FILE, or --client-ca FILE for client certificates)"
            )
    if problems:
        raise TopologError.at(SourceLocation("topolog serve"), "; ".join(problems))
    if config.token_file is not None:
        read_token(config.token_file)


def read_token(path: Path) -> str:
    """The bearer token in `path` (its first line, stripped); TopologError when missing or too short."""
    # Only a regular file (a link to one followed, as a Kubernetes Secret mounts it), never waited on:
    # the token is read at the start and at every reload, so a pipe could hold it once at most, and a
    # fifo that a process held open without writing had the reload, and every reload queued behind
    # it, wait for ever (the gate kept its old policies whatever changed).
    data = read_regular(path, str(path), "the token file")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TopologError.at(SourceLocation(str(path)), f"cannot read the token file: {err}") from None
    token = text.strip().splitlines()[0].strip() if text.strip() else ""
    if len(token) < TOKEN_MIN_LENGTH:
        raise TopologError.at(
            SourceLocation(str(path), 1),
            f"the bearer token is {len(token)} characters; expected at least {TOKEN_MIN_LENGTH} "
            f"(e.g. `python -c 'import secrets; print(secrets.token_urlsafe(32))' > {path}`)",
        )
    return token


def token_matches(expected: str, header: str | None) -> bool:
    """Whether an Authorization header carries `expected` as a bearer token (compared in constant time)."""
    if header is None:
        return False
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return secrets.compare_digest(given.strip().encode(), expected.encode())
