"""The library API: what the commands do, as functions (`from verifier import load, verify, ...`).

    from verifier import audit, explain, load, place, query, verify

    report = verify(["inventories/dgx-h100-pod.yaml"])
    for finding in report.findings:
        print(finding.rule, finding.subjects, finding.message)

    with load(["inventories/dgx-h100-pod.yaml"]) as model:
        slow = query(model, 'link(L, A, B, "nvlink", M), M < 400000')
        why = explain(model, 'within("dgx00/gpu0", "pod0")')

Every function raises verifier.TopologError (file:line and what was expected) on bad input;
reports render with `verifier.reports.render(report, fmt)`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.authorization.evaluate import ACTIONS, parse_context
from verifier.core.errors import SourceLocation, TopologError
from verifier.session.side_files import discover

# Each function imports the stages it runs: `authorize` needs no engine, no rules and no
# placement, and a library user who only loads one model pays for no audit.
if TYPE_CHECKING:
    from verifier.authorization.audit import AuditResult
    from verifier.authorization.requests import AuthorizeReport
    from verifier.authorization.setup import AuthzSetup
    from verifier.checks.explain import ExplainReport
    from verifier.checks.findings import Severity
    from verifier.checks.verify import VerifyReport
    from verifier.engine.queries import QueryResult
    from verifier.placement.place import PlaceReport
    from verifier.placement.whatif import WhatIfReport
    from verifier.session.session import Evaluation, PhaseListener
    from verifier.session.verify_run import SideFileFlags

PathLike = str | Path


def _paths(paths: PathLike | Sequence[PathLike]) -> list[Path]:
    if isinstance(paths, str | Path):
        return [Path(paths)]
    return [Path(p) for p in paths]


def load(
    inventory: PathLike | Sequence[PathLike],
    *,
    rules: Sequence[PathLike] | None = None,
    engine: str = "auto",
    from_kind: str | None = None,
    principals: PathLike | None = None,
    policies: PathLike | None = None,
    progress: PhaseListener | None = None,
) -> Evaluation:
    """The inventory loaded and every rule evaluated, ready for `query` and `explain`.

    Every input relation is kept, so any query can be answered. Close it (or use `with`) to
    free the engine.
    """
    from verifier.session.session import load_rules, open_evaluation
    from verifier.session.verify_run import SideFileFlags

    paths = _paths(inventory)
    flags = SideFileFlags(
        principals=Path(principals) if principals is not None else None,
        policies=Path(policies) if policies is not None else None,
    )
    program = load_rules([Path(r) for r in rules] if rules else None)
    inputs_read = {d.name for d in program.declarations if d.is_input}
    return open_evaluation(
        paths,
        program,
        engine=engine,
        side=flags.discover(paths),
        from_kind=from_kind,
        also_read=inputs_read,
        progress=progress,
    )


def verify(
    inventory: PathLike | Sequence[PathLike],
    *,
    rules: Sequence[PathLike] | None = None,
    engine: str = "auto",
    fail_on: Severity = "error",
    proofs: bool = False,
    jobs: Sequence[PathLike] = (),
    authorize: bool = True,
    from_kind: str | None = None,
    flags: SideFileFlags | None = None,
    progress: PhaseListener | None = None,
) -> VerifyReport:
    """Every check on every cluster in `inventory` (the shipped rules, plus `rules`)."""
    from verifier.session.verify_run import SideFileFlags, VerifyRun
    from verifier.session.verify_run import verify as verify_run

    run = VerifyRun(
        rules=[Path(r) for r in rules] if rules else None,
        engine=engine,
        fail_on=fail_on,
        with_proofs=proofs,
        flags=flags or SideFileFlags(),
        from_kind=from_kind,
        jobs=[Path(j) for j in jobs],
        authorize=authorize,
    )
    return verify_run(_paths(inventory), run, progress)


def query(model: Evaluation, text: str) -> QueryResult:
    """The sorted answers of a Datalog query (a rule body) on a loaded model."""
    from verifier.engine.queries import QueryResult, prepare_query

    parsed = prepare_query(text, model.program)
    return QueryResult(parsed.variables, model.engine.answer(parsed))


def explain(model: Evaluation, what: str) -> ExplainReport:
    """How a fact or a finding (a fingerprint, or RULE:SUBJECT) follows from the inventory."""
    from verifier.checks.explain import ExplainReport
    from verifier.checks.explain import explain as explain_in

    return ExplainReport(explain_in(model, what), model.inventory, model.inputs.principals)


def place(
    inventory: PathLike,
    jobs: Sequence[PathLike],
    *,
    rank: str = "bandwidth",
    why_not: bool = False,
    limit: int = 0,
    engine: str = "auto",
    authorize: bool = True,
    flags: SideFileFlags | None = None,
    progress: PhaseListener | None = None,
) -> PlaceReport:
    """Valid placements of every job, ranked; fails closed without principals unless `authorize=False`."""
    from verifier.session.place_run import place as place_run

    return place_run(
        [Path(inventory)],
        [Path(j) for j in jobs],
        rank=rank,
        why_not=why_not,
        engine=engine,
        progress=progress,
        limit=limit,
        flags=flags,
        authorize=authorize,
    )


def what_if(
    inventory: PathLike,
    jobs: Sequence[PathLike],
    *,
    drain: Sequence[str] = (),
    fail: Sequence[str] = (),
    fail_links: Sequence[str] = (),
    scenarios: Sequence[PathLike] = (),
    rank: str = "bandwidth",
    engine: str = "auto",
    authorize: bool = True,
    flags: SideFileFlags | None = None,
    progress: PhaseListener | None = None,
) -> WhatIfReport:
    """What draining `drain`, failing the devices `fail` and the links `fail_links` (and the scenario
    files `scenarios`) does to each job: `place --drain ...` as a function.
    """
    from verifier.session.place_run import PlaceSettings
    from verifier.session.place_run import what_if as what_if_run
    from verifier.sources.scenario import scenario_from

    scenario = scenario_from(drain, fail, fail_links, [Path(p) for p in scenarios])
    if not scenario:
        raise TopologError.at(
            SourceLocation("what_if"), "the scenario changes nothing; expected drain, fail or fail_links"
        )
    how = PlaceSettings(rank=rank, engine=engine, limit=1, authorize=authorize)
    return what_if_run([Path(inventory)], [Path(j) for j in jobs], scenario, how, progress, flags)


def load_authorization(
    inventory: PathLike | Sequence[PathLike],
    policies: PathLike | None = None,
    principals: PathLike | None = None,
    from_kind: str | None = None,
    wanted: Sequence[str] | None = None,
) -> AuthzSetup:
    """Policies, principals and the inventory's entities: built from the inventory, no rule is evaluated.

    The setup's `inventory` may be the inventory's hardware view, read from the cache
    (verifier.authorization.hardware): its GPUs, nodes, racks and pods only.
    """
    from verifier.session.inputs import authorization_inputs

    paths = _paths(inventory)
    side = discover(
        paths,
        principals=Path(principals) if principals is not None else None,
        policies=Path(policies) if policies is not None else None,
    )
    return authorization_inputs(paths, side, from_kind, wanted)


def audit(
    inventory: PathLike | Sequence[PathLike],
    *,
    actions: Sequence[str] = ACTIONS,
    resource_type: str = "Gpu",
    teams_only: bool = False,
    policies: PathLike | None = None,
    principals: PathLike | None = None,
) -> AuditResult:
    """Who may do what where: principals by hardware group, with GPU counts."""
    from verifier.authorization.audit import audit as audit_setup

    setup = load_authorization(inventory, policies, principals)
    return audit_setup(setup, list(actions), resource_type, teams_only)


def authorize(
    inventory: PathLike | Sequence[PathLike],
    principal: str,
    action: str,
    resource: str,
    context: str | dict[str, object] | None = None,
    *,
    policies: PathLike | None = None,
    principals: PathLike | None = None,
) -> AuthorizeReport:
    """One request decided by the Cedar policies, with the policies that decided it."""
    from verifier.authorization.requests import decide

    if isinstance(context, str):
        try:
            context = parse_context(context)
        except ValueError as err:
            raise TopologError.at(SourceLocation("--context"), str(err)) from None
    # The request's names as written: only the part of a fleet they (or the policies) name is expanded.
    wanted = [principal, resource, json.dumps(context or {}, ensure_ascii=False)]
    setup = load_authorization(inventory, policies, principals, wanted=wanted)
    return decide(setup, principal, action, resource, context or {})
