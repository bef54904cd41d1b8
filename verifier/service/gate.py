"""The gate: the live revision, its reloads, and the decisions made on it.

The live revision is one reference, replaced in one assignment once a new revision is wholly
built; a decision takes the reference once at its start and decides everything on it, so no
decision is made on a mix of two. A reload that fails keeps the live revision and records why
(each problem as the CLI prints it: file:line: what was wrong).

Every decision fails closed: a name that is in no file, an evaluation error, anything
unexpected is a Deny with the reason. Only the request itself can be refused outright (a
malformed body: verifier.service.bodies).
"""

from __future__ import annotations

import gc
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from verifier.authorization.requests import decide
from verifier.core.errors import TopologError
from verifier.reports.authorize_report import decision_doc
from verifier.reports.place_report import place_doc
from verifier.service.bodies import AuthorizeRequest, BadRequest
from verifier.service.config import ServeConfig, read_token
from verifier.service.revision import Revision, build_revision
from verifier.session.place_run import PlaceSettings, jobs_to_place, placements
from verifier.sources.jobs.principal_rules import PrincipalRule
from verifier.sources.jobs.read import NoGpuRequested, read_jobs

JOB_FILE = "request-body"
"""The name an admitted body is written under. No suffix: the job loading then tells a Slurm batch
script from YAML by its text (a `.yaml` name would force YAML)."""


class NothingToGate(BadRequest):
    """A job file in which no workload asks for a GPU (verifier.sources.jobs.read.NoGpuRequested):
    no job to place. `/v1/admit` answers it as any body that is no job (422); the admission
    webhook allows the object, since a CPU-only Job or Deployment asks for nothing the gate judges.
    """


@dataclass
class ReloadStatus:
    at: float
    trigger: str
    ok: bool
    revision: str | None
    """The revision live after this reload."""
    changed: bool = False
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    """The live revision's warnings (Revision.warnings) when this reload made it live."""

    def describe(self) -> dict[str, object]:
        return {
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.at)),
            "trigger": self.trigger,
            "ok": self.ok,
            "changed": self.changed,
            "revision": self.revision,
            "errors": self.errors,
            "seconds": round(self.seconds, 3),
            "warnings": self.warnings,
        }


def _settle() -> None:
    """Move what a revision build left alive out of the cyclic collector's reach (`gc.freeze`).

    A fleet's revision is millions of long-lived objects: left to the collector, each full
    collection walks all of them, a pause of hundreds of milliseconds in the middle of some
    decision (the p99 of benchmarks/serve_bench.py at 131,072 GPUs). Frozen objects are still
    freed by reference counting when a later revision replaces theirs.
    """
    gc.collect()
    gc.freeze()


def problems(err: TopologError) -> list[str]:
    """Each problem as the CLI prints it (`file:line: what was wrong`)."""
    return [str(d) for d in err.diagnostics]


class Gate:
    """The live revision and what replaces it. The first is built here (TopologError: nothing to serve)."""

    def __init__(
        self, config: ServeConfig, build: Callable[[ServeConfig, Revision | None], Revision] = build_revision
    ) -> None:
        self.config = config
        self._build = build
        self._reload_lock = threading.Lock()
        started = time.perf_counter()
        self._live = build(config, None)
        _settle()
        self.token = read_token(config.token_file) if config.token_file is not None else None
        self.last_reload = ReloadStatus(
            time.time(), "start", True, self._live.id, True, [], time.perf_counter() - started, self._live.warnings()
        )
        self.listeners: list[Callable[[ReloadStatus], None]] = []

    @property
    def live(self) -> Revision:
        """The revision that decides: read once per decision."""
        return self._live

    def reload(self, trigger: str) -> ReloadStatus:
        """Build a new revision beside the live one; swap it in only when wholly valid. One reload at a time."""
        with self._reload_lock:
            started = time.perf_counter()
            errors: list[str] = []
            new: Revision | None = None
            token = self.token
            try:
                new = self._build(self.config, self._live)
                if self.config.token_file is not None:
                    token = read_token(self.config.token_file)
            except TopologError as err:
                errors = problems(err)
            except Exception as err:  # a bug must not take the gate down: the old revision stays
                errors = [f"the revision could not be built ({type(err).__name__}: {err}); this is a bug in topolog"]
            old = self._live
            swap = new is not None and not errors and new.id != old.id  # the same bytes: old stays, memos warm
            live = new if swap and new is not None else old
            status = ReloadStatus(
                time.time(),
                trigger,
                not errors,
                live.id,
                live.id != old.id,
                errors,
                time.perf_counter() - started,
                live.warnings() if live.id != old.id else [],
            )
            # The status first, then the revision: /v1/revision reads the revision before the status,
            # so whoever sees the new revision sees the reload that made it.
            self.last_reload = status
            if new is not None and not errors:
                if swap:
                    self._live = live  # one assignment: a decision sees the old revision or the new one
                    _settle()
                self.token = token
        for listener in self.listeners:
            listener(status)
        return status

    def describe(self) -> dict[str, object]:
        doc = self.live.describe()  # before the status: see reload()
        doc["last_reload"] = self.last_reload.describe()
        return doc


def authorize_doc(revision: Revision, request: AuthorizeRequest) -> dict[str, object]:
    """The decision on `request`, as `topolog authorize --format json` gives it, and the revision.

    A name in no file or a context off the schema is a Deny with the reason (the CLI exits 2:
    there the user can retype; a scheduler cannot, so the gate answers, closed).
    """
    try:
        report = decide(revision.setup, request.principal, request.action, request.resource, request.context)
    except TopologError as err:
        return _denied(revision, request, problems(err))
    except Exception as err:  # fail closed: nothing unexpected is ever an allow
        return _denied(revision, request, [f"the request could not be evaluated ({type(err).__name__}: {err})"])
    doc = decision_doc(report)  # render(report, "json")'s document, not written out and read back
    doc["revision"] = revision.id
    return doc


def _denied(revision: Revision, request: AuthorizeRequest, reasons: list[str]) -> dict[str, object]:
    return {
        "action": request.action,
        "context": request.context,
        "decision": "DENY",
        "errors": [{"policy": "", "message": r} for r in reasons],
        "policies": [],
        "principal": request.principal,
        "resource": request.resource,
        "revision": revision.id,
    }


def timed_out(revision: Revision, request: AuthorizeRequest, seconds: float) -> dict[str, object]:
    """The Deny of a request that was not decided within `seconds`."""
    return _denied(revision, request, [f"not decided within {seconds:g} s (--authorize-timeout); denied"])


def not_placed_in_time(seconds: float) -> str:
    """Why an admit (or an admission review) not placed within `seconds` is refused."""
    return f"not placed within {seconds:g} s (--admit-timeout); refused"


def admit_timed_out(revision: Revision, seconds: float, limit: int) -> dict[str, object]:
    """The refusal of an admit that was not placed within `seconds`."""
    return _refused(revision, [not_placed_in_time(seconds)], limit)


def admit_doc(
    revision: Revision,
    body: bytes,
    principal_from: tuple[PrincipalRule, ...] = (),
    limit: int = 0,
    given_up: Callable[[], bool] = lambda: False,
) -> dict[str, object]:
    """`place --why-not --limit LIMIT --format json` on the job file `body`, on the revision, and the verdict.

    `limit`: the best placements listed per job (0: all); each job's `hosting` still counts them
    all. At 131,072 GPUs an 8-GPU job has 16,384 (4.9 MB of JSON): a scheduler needs the verdict
    and the best few, and only those are named and rendered (verifier.placement.place ranks the
    rest by their figures alone).

    The body is read by `place`'s own job loading (topolog's format, Kubernetes and Slurm alike;
    `principal_from` says whom the latter act as), and placed on the revision's evaluation of
    the placement rules (verifier.service.placing), or where that cannot take it by `place`'s
    own `placements`, on the revision's inventory and principals and its copy of the policies:
    the same answer either way. A body that loading refuses is a BadRequest (the scheduler sent
    something that is no job); anything else that stops the placement (a principal in no file,
    ...) is a refusal with the reason.

    `given_up`: true once the caller has answered without this admit (--admit-timeout). The
    admit thread runs one admit at a time, so a body that was answered as timed out kept it
    until its placement ended (a 1 MiB body of plain jobs: seconds of reading, then placing);
    it is asked between the stages, and an admit given up stops there, its answer unsent.
    """
    folder = Path(tempfile.mkdtemp(prefix="topolog-admit-"))
    try:
        job = folder / JOB_FILE
        job.write_bytes(body)
        try:
            # The jobs alone, as `place` reads them; the placement program is made only for a
            # placement from scratch (reading the rule pack for it is 10-40 ms of every admit).
            jobs = read_jobs([job], principal_from)
            if given_up():
                return _refused(revision, [GIVEN_UP], limit)
        except NoGpuRequested as err:
            raise NothingToGate("; ".join(_named(p, folder, {}) for p in problems(err)), 422) from None
        except TopologError as err:
            raise BadRequest("; ".join(_named(p, folder, {}) for p in problems(err)), 422) from None
        snapshot = revision.snapshot
        try:
            prepared = revision.placing.get()  # built for the revision's later admits too: not given up
            if given_up():
                return _refused(revision, [GIVEN_UP], limit)
            report = prepared.place(jobs, limit) if prepared is not None else None
            if report is None:
                observed = revision.placing.observed  # the revision's observations, as read when it was built
                how = PlaceSettings(
                    why_not=True,
                    limit=limit,
                    principal_from=principal_from,
                    observed=observed,
                    nearest_principal=False,  # no comparison with every principal per request
                )
                report, _allowed = placements(revision.placing_inputs, jobs_to_place([job], True, principal_from), how)
        except TopologError as err:
            return _refused(revision, [_named(p, folder, snapshot.names) for p in problems(err)], limit)
        except Exception as err:  # fail closed
            return _refused(revision, [f"the job could not be placed ({type(err).__name__}: {err})"], limit)
        if given_up():  # the document of a large body's report is seconds of its own
            return _refused(revision, [GIVEN_UP], limit)
        placement = place_doc(report)
        # Notes name where in the job file they are: the body, not the temporary file it was
        # written to. Only notes name a file (the rest names jobs, principals, domains and GPUs).
        for entry in cast("list[dict[str, object]]", placement["jobs"]):
            entry["notes"] = [_named(n, folder, {}) for n in cast("list[str]", entry["notes"])]
        placement["notes"] = [_named(n, folder, {}) for n in cast("list[str]", placement["notes"])]
        return {
            "admitted": report.exit_code == 0,
            "revision": revision.id,
            "limit": limit,
            "errors": [],
            "placement": placement,
        }
    finally:
        shutil.rmtree(folder, True)


GIVEN_UP = "given up: already answered as not placed within --admit-timeout"
"""The reason of an admit stopped between its stages (never sent: its caller has answered)."""


def _named(problem: str, folder: Path, names: dict[str, str]) -> str:
    # The body was written to a temporary file, the revision's files copied: a problem names
    # the request body, and the files the user wrote.
    for copy in sorted(names, key=len, reverse=True):
        problem = problem.replace(copy, names[copy])
    return problem.replace(str(folder / JOB_FILE), "<request body>").replace(str(folder), "<request>")


def _refused(revision: Revision, reasons: list[str], limit: int) -> dict[str, object]:
    return {"admitted": False, "revision": revision.id, "limit": limit, "errors": reasons, "placement": None}
