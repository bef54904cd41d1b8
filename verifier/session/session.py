"""One run: its side files found once, its inputs read once, its rules evaluated once.

The order is the pipeline's: the program is parsed and checked; the inventory (and jobs,
principals and policies) are read; the facts of the inventory, the thresholds, the jobs
and the authorization decisions (Cedar asked about entities built from the inventory) are
all computed; the engine loads the rows that some rule that can fire reads, and evaluates
once. `verify`, `place`, `query`, `explain` and `diff` all start from an `Evaluation`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from verifier.authorization.relations import AUTHZ_RELATIONS
from verifier.checks.check import Check, checks_from_program
from verifier.core.errors import Diagnostic, ProgramError, SourceLocation, TopologError
from verifier.core.frozen import Record
from verifier.core.resources import display_path, shipped_rules_dir
from verifier.core.suggest import did_you_mean, look_alike_hint
from verifier.engine.ast import Program, Query, Row, Rule
from verifier.engine.backend import Backend, OutgrewEngine, load_order
from verifier.engine.engines import choose_engine, make_backend
from verifier.engine.pruning import constant_filters, filter_rows, live_rules
from verifier.engine.queries import prepare_query, program_for, query_relations
from verifier.engine.rule_pack import load_rule_pack, outside_shipped
from verifier.facts.graph import NodePairs, graph_facts
from verifier.facts.inventory import inventory_facts
from verifier.facts.relation_sources import GRAPH_RELATIONS
from verifier.session.inputs import Inputs, authorization_for, read_inventory
from verifier.session.side_files import SideFiles, discover
from verifier.sources.inventory.model import Inventory
from verifier.sources.principals import Principals
from verifier.sources.thresholds import load_thresholds, threshold_facts

if TYPE_CHECKING:
    from verifier.authorization.setup import AuthzSetup
    from verifier.engine.memory_backend import MemoryBackend
    from verifier.sources.jobs.spec import Jobs


class PhaseListener(Protocol):
    """Told when each phase starts: progress on stderr, or a benchmark's stopwatch."""

    def step(self, phase: str) -> None: ...


class _Silent:
    def step(self, phase: str) -> None:
        pass


def default_rules() -> list[Path]:
    """The shipped rule pack, named relative to the working directory when inside it (stable output)."""
    return [display_path(shipped_rules_dir())]


def load_rules(rules_paths: Sequence[Path] | None = None) -> Program:
    """The checked program of exactly `rules_paths`, by default the shipped pack.

    The CLI's --rules adds to the shipped pack: it passes verifier.engine.rule_pack.shipped_first(...)
    here. See verifier.engine.rule_pack.load_rule_pack for copies of shipped files.
    """
    return load_rule_pack(list(rules_paths) if rules_paths else default_rules())


@dataclass(repr=False, eq=False)
class Evaluation(Record):
    """A program evaluated on one inventory: the engine holds every derived relation until `close()`
    (with evaluate()'s `reads_reports_only`, those the checks' reports depend on).
    """

    program: Program
    checks: list[Check]
    inputs: Inputs
    engine: Backend
    pairs: NodePairs
    """GPU pair bottlenecks per node class, for placement's ranking (empty unless evaluate() was given rank_pairs)."""
    authorization: AuthzSetup | None = None
    jobs: Jobs | None = None
    not_applicable: frozenset[str] = frozenset()
    """Checks that had no data to judge: no rule that can fire on these inputs derives what they report."""

    @property
    def inventory(self) -> Inventory:
        return self.inputs.inventory

    def close(self) -> None:
        self.engine.close()

    def __enter__(self) -> Evaluation:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def evaluate(
    program: Program,
    inputs: Inputs,
    *,
    engine: str = "auto",
    authorization: AuthzSetup | None = None,
    jobs: Jobs | None = None,
    extra_facts: dict[str, list[Row]] | None = None,
    also_read: Iterable[str] = (),
    keep_objects: set[str] | None = None,
    progress: PhaseListener | None = None,
    rank_pairs: bool = False,
    judge_checks: bool = True,
    reads_reports_only: bool = False,
) -> Evaluation:
    """Every fact computed, then one evaluation (TopologError on bad input).

    Only the input relations that some rule that can fire reads, plus `also_read` (a
    query's relations), are loaded: at fleet scale the unread ones cost about half of a
    verification. `keep_objects` names the only objects whose facts the program needs
    (placement without rail alignment reads GPUs and their ancestors); graph summaries
    still see the whole inventory. Authorization decisions are asked for only when a rule
    that can fire reads them. Without `judge_checks` (a run that reports no check: a query, a
    placement) the checks' `@needs` are still parsed and checked, but what they read is not loaded
    and none is asked whether it holds. With `reads_reports_only` (a verification, which reads the
    checks' reports and nothing else once evaluated) only the rules those reports, the `@needs` and
    `also_read` depend on are evaluated (queries.program_for), and only what those rules read is loaded.
    """
    step = (progress or _Silent()).step
    also = set(also_read)
    inventory = inputs.inventory
    step("generating facts")
    facts = inventory_facts(inventory, keep_objects)
    facts["threshold"] = threshold_facts(load_thresholds(inputs.paths, inputs.side.thresholds))
    if jobs is not None:
        from verifier.facts.jobs import job_facts
        from verifier.sources.jobs.mig import require_known_mig_profiles

        require_known_mig_profiles(jobs, inventory.models)  # a profile no model offers is bad input
        facts.update(job_facts(jobs))
        facts["model_family"] = model_families(inventory, jobs)
    if extra_facts:
        facts.update(extra_facts)
    # Graph summaries are computed on demand and decisions asked for only when read: until
    # then both count as rows that may match anything.
    checks, needs, written = _checks_needs_written(program)
    reports = {c.id: c.reports for c in checks}
    if not judge_checks:
        needs = {}
    # What a check's @needs asks about is loaded even when no rule reads it.
    needed = {rel for q in needs.values() for rel in query_relations(q)}
    # A rule the user wrote is evaluated even when no report reads it: its mistakes (a recursion
    # that never ends) fail the run instead of passing unseen.
    mine = {r.head.relation for r in program.rules if r.loc.file in written}
    roots = {c.reports for c in checks} | needed | also | mine if reads_reports_only else None

    def runnable(facts: dict[str, Sequence[Row]], pending: set[str]) -> tuple[Program, list[Rule], set[str]]:
        """The program to evaluate, the rules of it that can fire, and the relations they read."""
        live = live_rules(program, facts, pending)
        evaluated = program
        if roots is not None:
            evaluated = program_for(program, roots, live)
            live = list(evaluated.rules)
        reads = {a.relation for r in live for a in (*r.positive_atoms(), *r.negated_atoms())}
        return evaluated, live, reads | also

    evaluated, live, wanted = runnable(facts, set(GRAPH_RELATIONS) | set(AUTHZ_RELATIONS) | also)
    if authorization is not None and wanted & AUTHZ_RELATIONS:
        step("authorizing")
        from verifier.authorization.facts import authz_facts

        facts.update(authz_facts(authorization))
        evaluated, live, wanted = runnable(facts, set(GRAPH_RELATIONS) | also)
    wanted |= needed
    # The GPU pair bottlenecks of every node class are for ranking placements only: computing
    # them needs networkx and a pass over every node, which a verification does not.
    pairs = NodePairs()
    facts.update(graph_facts(inventory, wanted, pairs if rank_pairs else None))
    filters = constant_filters(program, also | needed, live)  # a rule that cannot fire asks for no rows
    loads = {r: filter_rows(rows, filters.get(r, ())) for r, rows in sorted(facts.items()) if r in wanted}
    del facts  # only `loads` holds the rows now, so _run_engine can let each go once it is loaded
    chosen = choose_engine(engine, sum(len(rows) for rows in loads.values()))
    try:
        backend, not_applicable = _run_engine(chosen, evaluated, loads, needs, reports, step, bounded=engine == "auto")
        outgrown = False
    except OutgrewEngine:
        if engine != "auto":
            raise
        outgrown = True
    if outgrown:
        # Small input, but a big join, a deep recursion or many tuples: the memory engine would only get
        # slower (and bigger) from here on. Started outside the handler, so that the traceback no longer
        # holds the memory engine and what it derived.
        step("too big a job for the memory engine; starting over in duckdb")
        backend, not_applicable = _run_engine("duckdb", evaluated, loads, needs, reports, step, bounded=False)
    return Evaluation(program, checks, inputs, backend, pairs, authorization, jobs, not_applicable)


_DESCRIBED_KEPT = 8


@dataclass(eq=False)
class _Described:
    """What evaluate() reads off one program, each part worked out when first asked for."""

    program: Program
    where: tuple[str, str]
    checks: list[Check]
    needs: dict[str, Query] | None = None
    written: frozenset[str] | None = None


_described_last: list[_Described] = []
"""What evaluate() read off the programs it was given last, newest first, with the working directory
(and the shipped pack's place) the files were judged from. A process that verifies again (the REPL,
`serve`, `topolog test`, a library user, the test suite) is given the same program object by
load_rules (rule_pack._last): its checks, its parsed `@needs` and which of its files are the user's
(paths resolved folder by folder) cost about 15 ms of CPU for the shipped pack, the same each time."""


def _described(program: Program) -> _Described:
    """The remembered record of `program`, kept by its identity (a Program is immutable); nothing is
    kept for a program whose metadata is bad (ProgramError each time).
    """
    here = (os.getcwd(), str(shipped_rules_dir()))  # relative file names resolve from the working directory
    for i, known in enumerate(_described_last):
        if known.program is program and known.where == here:
            _described_last.insert(0, _described_last.pop(i))
            return known
    known = _Described(program, here, checks_from_program(program))
    _described_last.insert(0, known)
    del _described_last[_DESCRIBED_KEPT:]
    return known


def program_checks(program: Program) -> list[Check]:
    """checks_from_program(program), remembered as evaluate() remembers it: a verification with
    --check reads the whole program's checks, then evaluates a slice of it.
    """
    return list(_described(program).checks)


def _checks_needs_written(program: Program) -> tuple[list[Check], dict[str, Query], frozenset[str]]:
    """`program`'s checks, their parsed `@needs` (ProgramError, not remembered, when one is bad), and
    its rule files outside the shipped pack.
    """
    known = _described(program)
    if known.needs is None:
        known.needs = needs_queries(known.checks, program)
    if known.written is None:
        known.written = frozenset(outside_shipped(r.loc.file for r in program.rules))
    return list(known.checks), dict(known.needs), known.written


def _run_engine(
    engine: str,
    program: Program,
    loads: dict[str, Sequence[Row]],
    needs: dict[str, Query],
    reports: dict[str, str],
    step: Callable[[str], None],
    bounded: bool,
) -> tuple[Backend, frozenset[str]]:
    """A loaded and evaluated engine, and the checks whose @needs have no answer."""
    backend = make_backend(engine, chosen_by_auto=bounded)
    try:
        backend.load(program)
        if engine == "memory":
            _evaluate_in_memory(cast("MemoryBackend", backend), program, loads, step)
        else:
            step(f"loading facts into {engine}")
            # Each relation's rows are dropped once loaded: at fleet scale the Python tuples take
            # about as much memory as the engine's tables. The inventory's objects first (load_order
            # says why): place at 131,072 GPUs loads in 0.23-0.27 s CPU instead of 0.29-0.33.
            for relation in load_order(loads):
                backend.add_facts(relation, loads.pop(relation))
            step("evaluating rules")
            backend.evaluate()
        not_applicable = _unjudged(backend, needs, reports)
    except BaseException:
        backend.close()
        raise
    return backend, not_applicable


def _unjudged(backend: Backend, needs: dict[str, Query], reports: dict[str, str]) -> frozenset[str]:
    """The checks whose @needs has no answer: they had nothing to judge (not applicable, not passed).

    Checks often need the same thing (`object(_, "gpu")`: 88 @needs in the shipped pack, 47 of them
    different): each body is asked once, a query of its own in DuckDB (0.5 ms at 131,072 GPUs).
    A check whose @needs has no answer but whose report has rows found something (a @needs written
    narrower than its rule): it was judged, and a report never calls a check with findings "not
    applicable".
    """
    held: dict[tuple[object, ...], bool] = {}
    for query in needs.values():
        if query.body not in held:
            held[query.body] = backend.holds(query)
    return frozenset(cid for cid, query in needs.items() if not held[query.body] and not backend.count(reports[cid]))


def _evaluate_in_memory(
    backend: MemoryBackend, program: Program, loads: dict[str, Sequence[Row]], step: Callable[[str], None]
) -> None:
    """Load and evaluate, or read back the evaluation of the same program on the same facts
    (verifier.engine.eval_cache). `loads` is kept whole: a run that outgrows the memory engine
    starts over in DuckDB from it.
    """
    from verifier.engine.eval_cache import cached_state, evaluation_key, remember_state

    for relation, rows in loads.items():
        if type(rows) is not list:  # read once (stamped rows are made on iteration), by the key and the engine
            loads[relation] = list(rows)
    key = evaluation_key(program, loads)
    state = cached_state(key) if key is not None else None
    if state is not None:
        step("reading the evaluation from the cache")
        backend.restore(state)
        return
    step("loading facts into memory")
    for relation, rows in loads.items():
        backend.add_facts(relation, rows)
    step("evaluating rules")
    backend.evaluate()
    if key is not None:
        remember_state(key, backend.state())


def model_families(inventory: Inventory, jobs: Jobs) -> list[Row]:
    """`model_family(model, word)`: each word a job accepts that is a proper prefix of a catalogue model's
    name, and the Gaudi family word (a `habana.ai/gaudi` request) for every model whose entry makes it
    an Intel HPU, whatever its name (an inventory's own `HL-325L`: pod_spec.GAUDI_FAMILY).
    """
    from verifier.sources.jobs.pod_spec import GAUDI_FAMILY, is_gaudi

    words = sorted({w for job in jobs for w in job.accepts})
    models = sorted(inventory.models)
    # A word that is itself a model's name names that model alone: L4 is no family of L40S (a pod
    # selecting GFD's NVIDIA-L4 never lands on an L40S node).
    rows = {(m, w) for m in models for w in words if m != w and m.startswith(w) and w not in inventory.models}
    if GAUDI_FAMILY in words:
        rows.update((m, GAUDI_FAMILY) for m in models if m != GAUDI_FAMILY and is_gaudi(inventory.models[m]))
    return sorted(rows)


def require_job_principals(jobs: Jobs, principals: Principals, *, nearest: bool = True) -> None:
    """Every job's principal is in the principals file, of the type the job names (TopologError otherwise).

    A principal that is not there would be denied everywhere by Cedar, which reads as "fits
    nowhere": a typo must be bad input instead.

    `nearest`: an unknown name is also compared with every principal for the nearest (difflib), as
    the CLI does. `serve` asks for the look-alike hint alone (core.suggest.look_alike_hint): an
    admitted body is anyone's, and one naming a thousand unknown principals at a thousand
    principals cost seconds of comparisons, past --admit-timeout for its own and others' jobs.
    Each name is looked up once, however many jobs name it.
    """
    problems = []
    hints: dict[str, str] = {}
    for job in jobs:
        known = principals.principals.get(job.principal)
        if known is None:
            hint = hints.get(job.principal)
            if hint is None:
                hint = (
                    did_you_mean(job.principal, principals.principals)
                    if nearest
                    else look_alike_hint(job.principal, principals.principals)
                )
                hints[job.principal] = hint
            problems.append(
                Diagnostic(job.loc, f"job {job.name}: principal {job.principal!r} is not in {principals.file}{hint}")
            )
        elif job.principal_type is not None and known.type != job.principal_type:
            problems.append(
                Diagnostic(
                    job.loc,
                    f"job {job.name}: principal {job.principal!r} is a {known.type} in {principals.file}, "
                    f"not a {job.principal_type}",
                )
            )
    if problems:
        raise TopologError(problems)


def open_evaluation(
    paths: Sequence[Path],
    program: Program | None = None,
    *,
    engine: str = "auto",
    side: SideFiles | None = None,
    from_kind: str | None = None,
    authorize: bool = True,
    also_read: Iterable[str] = (),
    progress: PhaseListener | None = None,
    judge_checks: bool = True,
) -> Evaluation:
    """Side files found, inventory read, authorization built (when there are principals), evaluated once.

    `program` defaults to the shipped pack; without `authorize` no decision is asked for; without
    `judge_checks` no check is judged applicable or not (see `evaluate`).
    """
    paths = list(paths)
    program = program if program is not None else load_rules()
    also_read = set(also_read)
    inputs = read_inventory(paths, side if side is not None else discover(paths), from_kind, principals=authorize)
    # Cedar is asked only when something reads its decisions (evaluate() would drop them otherwise):
    # `topolog query ... 'within(G, R)'` loads no policy.
    asks = authorize and reads_authorization(program, also_read)
    return evaluate(
        program,
        inputs,
        engine=engine,
        authorization=authorization_for(inputs) if asks else None,
        also_read=also_read,
        progress=progress,
        judge_checks=judge_checks,
    )


def reads_authorization(program: Program, also_read: set[str]) -> bool:
    """Whether a rule of `program`, or the caller, reads a relation that authorization emits."""
    if also_read & AUTHZ_RELATIONS:
        return True
    return any(a.relation in AUTHZ_RELATIONS for r in program.rules for a in (*r.positive_atoms(), *r.negated_atoms()))


def needs_queries(checks: Iterable[Check], program: Program) -> dict[str, Query]:
    """Each check's `@needs`, parsed and checked (ProgramError at the metadata line when it is not a valid query)."""
    out: dict[str, Query] = {}
    problems: list[Diagnostic] = []
    for check in checks:
        if check.needs is None:
            continue
        where = check.needs_at or SourceLocation(check.file)
        try:
            out[check.id] = prepare_query(check.needs, program, where.file)
        except (ProgramError, TopologError) as err:
            problems.extend(Diagnostic(where, f"'@needs' of {check.id}: {d.message}") for d in err.diagnostics)
    if problems:
        raise ProgramError(problems)
    return out
