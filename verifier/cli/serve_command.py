"""`topolog serve`: the scheduling gate over HTTP (verifier.service; docs/serve.md).

The web stack is the extra `topolog[serve]`: without it the command says which
pip command installs it and exits 2, and no other command needs it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.cli.errors import guard
from verifier.cli.job_options import PRINCIPAL_FROM_OPTION
from verifier.cli.options import FiniteRange, WholeRange, _missing_files, side_file_options
from verifier.service.config import (  # imports no web framework: --help works without the extra
    ADMIT_LIMIT,
    ADMIT_TIMEOUT_S,
    AUTHORIZE_TIMEOUT_S,
    DECISION_LOG_BYTES,
    DECISION_LOG_KEEP,
    DEFAULT_HOST,
    DEFAULT_PORT,
    HEAD_TIMEOUT_S,
    MAX_BATCH,
    MAX_BODY,
    RELOAD_QUIET_MAX_S,
    RELOAD_QUIET_S,
    ServeConfig,
)
from verifier.sources.jobs.principal_rules import PrincipalRule

FILE = click.Path(path_type=Path, dir_okay=False)
SERVE_EXTRA = frozenset({"starlette", "uvicorn", "httptools", "uvloop", "watchfiles", "prometheus_client"})
"""The import names of pyproject.toml's serve extra: only one of these missing means the extra is not installed."""
INSTALL = 'pip install "topolog[serve] @ git+<repository>@<tag>" (README.md, Install)'


def missing_package(err: ImportError) -> str | None:
    """What the serve extra lacks, as `serve` says it, when `err` is an installed package's import
    failing; None for our own modules (a broken install of topolog, an internal error).

    A package of the extra not installed is named as such. A module none of them is (anyio, h11:
    what starlette and uvicorn import) missing is named with its reason, since installing the
    extra again installs it too. A name a package does not hold (`cannot import name`) is a
    version other than the extra asks for.
    """
    name = err.name or ""
    top = name.partition(".")[0]
    if not top or top == "verifier":
        return None
    if not isinstance(err, ModuleNotFoundError):
        return f"needs the serve extra at the versions it names ({top} is installed but {err})"
    if top in SERVE_EXTRA:
        return f"needs the serve extra ({name} is not installed)"
    return f"needs the serve extra ({top} is not installed; the extra's packages need it)"


class Seconds(FiniteRange):
    """A number of seconds above 0 and at most a day, finite and in ASCII digits (FiniteRange): a wait
    of NaN seconds would never end nor begin; one of 1e300 seconds is past what a sleep or timer takes
    (OverflowError in the reload's thread).
    """

    name = "seconds"
    what = "number of seconds"
    expected = "one above 0 in ASCII digits, such as 2 or 0.5"

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True, max=86400)


@click.command("serve")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@side_file_options()
@click.option(
    "--host", default=DEFAULT_HOST, show_default=True, help="Address to bind; beyond loopback needs TLS and auth."
)
@click.option(
    "--port", type=WholeRange(0, 65535), default=DEFAULT_PORT, show_default=True, help="Port (0: any free one)."
)
@click.option("--tls-cert", type=FILE, default=None, help="TLS certificate chain (PEM).")
@click.option("--tls-key", type=FILE, default=None, help="TLS private key (PEM).")
@click.option("--client-ca", type=FILE, default=None, help="Require client certificates signed by this CA (PEM).")
@click.option(
    "--token-file", type=FILE, default=None, help="Require `Authorization: Bearer` with the token in this file."
)
@click.option(
    "--decision-log",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write one JSON line per decision to this file (rotated by size).",
)
@click.option(
    "--decision-log-max-bytes",
    type=WholeRange(min=1024),
    default=DECISION_LOG_BYTES,
    show_default=True,
    help="Rotate the decision log at this size.",
)
@click.option(
    "--decision-log-keep",
    type=WholeRange(min=1),
    default=DECISION_LOG_KEEP,
    show_default=True,
    help="Rotated decision logs kept.",
)
@click.option(
    "--max-body",
    type=WholeRange(min=1),
    default=MAX_BODY,
    show_default=True,
    help="Largest request body in bytes (413 above).",
)
@click.option(
    "--max-batch",
    type=WholeRange(min=1),
    default=MAX_BATCH,
    show_default=True,
    help="Most requests in one /v1/authorize/batch (413 above).",
)
@click.option(
    "--authorize-timeout",
    type=FiniteRange(min=0.001),
    default=AUTHORIZE_TIMEOUT_S,
    show_default=True,
    help="Seconds before an undecided authorize is denied.",
)
@click.option(
    "--admit-timeout",
    type=FiniteRange(min=0.001),
    default=ADMIT_TIMEOUT_S,
    show_default=True,
    help="Seconds before an unplaced admit is refused.",
)
@click.option(
    "--request-head-timeout",
    type=Seconds(),
    default=HEAD_TIMEOUT_S,
    show_default=True,
    help="Seconds a request's head (request line and headers) may take to arrive (408 after).",
)
@click.option(
    "--admit-limit",
    type=WholeRange(min=0),
    default=ADMIT_LIMIT,
    show_default=True,
    help="Best placements an admit lists per job unless it asks ?limit=N (0: all); hosting counts all.",
)
@click.option(
    "--reload-quiet",
    type=Seconds(),
    default=RELOAD_QUIET_S,
    show_default=True,
    help="Seconds without a change to any served file before a reload reads them (a file written in place "
    "in two writes is not read half-written).",
)
@click.option(
    "--reload-quiet-max",
    type=Seconds(),
    default=RELOAD_QUIET_MAX_S,
    show_default=True,
    help="Longest a reload waits for that quiet (at least --reload-quiet): files renamed over are then read, "
    "one written in place all the while refuses the reload.",
)
@PRINCIPAL_FROM_OPTION
@click.option("--no-watch", is_flag=True, help="Do not reload on file changes (SIGHUP and POST /v1/reload still do).")
def serve_cmd(
    inventory: tuple[Path, ...],
    principals_path: Path | None,
    policies_path: Path | None,
    host: str,
    port: int,
    tls_cert: Path | None,
    tls_key: Path | None,
    client_ca: Path | None,
    token_file: Path | None,
    decision_log: Path | None,
    decision_log_max_bytes: int,
    decision_log_keep: int,
    max_body: int,
    max_batch: int,
    authorize_timeout: float,
    admit_timeout: float,
    request_head_timeout: float,
    admit_limit: int,
    reload_quiet: float,
    reload_quiet_max: float,
    principal_from: tuple[PrincipalRule, ...],
    no_watch: bool,
) -> None:
    """Serve the scheduling gate over HTTP: authorize, admit, live reload, never failing open.

    Keeps one revision of the inventory, policies and principals in memory (found as the
    other commands find them) and answers POST /v1/authorize, /v1/authorize/batch and
    /v1/admit, GET /v1/revision, /healthz, /readyz and /metrics. A change to any of those
    files (or SIGHUP, or POST /v1/reload) builds a new revision beside the live one, swapped
    in only when wholly valid. Binds to loopback; beyond it, TLS and a token or client
    certificates are required. Needs the serve extra topolog[serve] (README.md, Install).
    Exit status: 0 stopped, 2 bad configuration or input (nothing is served).

    \b
    Example:
      topolog serve inventories/mixed-fleet.yaml
      curl -s localhost:8181/v1/authorize \\
          -d '{"principal": "ivan", "action": "schedule", "resource": "rtx-n3/gpu0"}'
      curl -s localhost:8181/v1/admit --data-binary @inventories/jobs/inference.yaml
      curl -s 'localhost:8181/v1/admit?limit=3' --data-binary @inventories/jobs/portable.yaml
    """
    try:
        from verifier.service.server import serve
    except ImportError as err:
        said = missing_package(err)
        if said is None:
            raise
        click.echo(f"error: topolog serve {said}: run {INSTALL}", err=True)
        sys.exit(2)

    def body() -> int:
        _missing_files([*inventory, *(p for p in (principals_path, policies_path) if p is not None)])
        serve(
            ServeConfig(
                inventory=inventory,
                principals=principals_path,
                policies=policies_path,
                host=host,
                port=port,
                tls_cert=tls_cert,
                tls_key=tls_key,
                client_ca=client_ca,
                token_file=token_file,
                decision_log=decision_log,
                decision_log_bytes=decision_log_max_bytes,
                decision_log_keep=decision_log_keep,
                max_body=max_body,
                max_batch=max_batch,
                authorize_timeout_s=authorize_timeout,
                admit_timeout_s=admit_timeout,
                head_timeout_s=request_head_timeout,
                admit_limit=admit_limit,
                watch=not no_watch,
                reload_quiet_s=reload_quiet,
                reload_quiet_max_s=reload_quiet_max,
                principal_from=principal_from,
            )
        )
        return 0

    sys.exit(guard(body, "nothing is served"))
