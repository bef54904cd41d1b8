"""Placement on a revision's fleet evaluated once: an admitted job adds only what depends on it.

`topolog place` evaluates the placement rules on the inventory and the jobs together, but most
of that evaluation reads no job: every GPU's profile (model, memory, health, fabric bandwidth,
authorization class), the candidate domains and the profiles each holds, the authorization
decisions and the graph summaries. At 131,072 GPUs that is seconds (benchmarks/serve_bench.py);
what a job adds (its stages judged per profile, its candidate domains counted, ranked) is a
fraction of it.

So a revision keeps one evaluation of the placement rules on its fleet with no job (in DuckDB
for a fleet). The rule `placing(1) :- job(_, _, _)` (it keeps the per-GPU relations empty in a
plain verify) is replaced there by the fact `placing(1)`, which is what the rule derives
whenever some job is loaded, and only then is this evaluation asked. Each admit adds its jobs'
facts, evaluates again (the engine derives only the relations downstream of the facts it was
given, verifier.engine.strata.downstream), ranks with `place`'s own ranking, and retracts the facts.
The relations the job's rules read are loaded whole (`also_read`), where `place` loads only the
rows some rule can match: the rows left out match nothing, so nothing derived differs (a test
compares the answers with the CLI's on the shipped jobs).

One admit at a time uses an evaluation (a lock: DuckDB and the authorizer's memo are not for two
threads); each revision builds its own, once, and drops it with itself, so no evaluation is
ever shared by two revisions. Jobs are entered under names of their own (`job-0`, ...): the
engine keeps every symbol it was given, and Kubernetes names every Pod anew.

A revision's answers never change, so each ranked report is kept (up to ANSWERS of them) under
what was asked: the jobs as they compare (what they ask, under this evaluation's names, not where
they were written) and the limit. A job asked again, as every Pod of one Kubernetes Job is, is
answered without evaluating (at 131,072 GPUs an 8-GPU job's evaluation and ranking take about a
quarter of a second); its notes and names are its own (the report is made per job from it).

Most jobs do not even need that: a plain job (a GPU count, a principal, a scope, accepted
models, memory, FP64, excluded labels) is judged from this evaluation per class of identical
domains, in Python, with no facts added (verifier/placement/plain.py: what it covers, and why
the answer is the rules'); at 131,072 GPUs that is about a millisecond.

An inventory small enough for the memory engine (`--engine auto`'s choice) is evaluated there,
and each admit restores what it derived into an engine of its own: DuckDB's fixed cost per
statement would take longer than the whole memory evaluation of a small fleet's jobs.

Not for this path (the caller runs `place_run.placements` instead, the same answer): a job that
asks for rail alignment (it reads the NICs and cables, left out here as `place` leaves them out
for every other job), a body with no job, or an evaluation that failed.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import replace

from verifier.authorization.setup import AuthzSetup
from verifier.engine.ast import Atom, Const, Head, Program, Rule, Wildcard
from verifier.engine.backend import OutgrewEngine
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.engines import AUTO_MAX_BINDINGS, AUTO_MAX_ROUNDS
from verifier.engine.memory_backend import MemoryBackend, State
from verifier.engine.queries import program_for
from verifier.engine.strata import downstream
from verifier.facts.jobs import JOB_RELATIONS, job_facts
from verifier.placement.place import (
    PlaceReport,
    Profiles,
    for_every_job,
    gpus_and_ancestors,
    job_classes,
    placement_relations,
    rank_placements,
)
from verifier.placement.plain import PlainPlacement, is_plain
from verifier.session.inputs import Inputs
from verifier.session.observed_input import ObservedRun, observed_rows
from verifier.session.session import evaluate, load_rules, model_families, require_job_principals
from verifier.sources.jobs.spec import Job, Jobs

JOB_INPUTS = frozenset(JOB_RELATIONS | {"model_family"})
"""The input relations an admitted job brings (model_family: the catalogue models its accepts words name)."""
ENGINE = "auto"
"""How the fleet is evaluated: `auto` picks by its size as `place` does (tests set each engine,
to hold both paths' answers on the small shipped inventories)."""
ANSWERS = 256
"""Ranked reports a prepared evaluation keeps, by what was asked; when full it starts over (a bound on memory)."""
PLAIN = True
"""Whether plain jobs skip the evaluation (tests turn it off to compare both ways)."""
GUARD = "placing"
"""The relation that holds 1 while any job is loaded (rules/placement/lib/candidates.dl)."""


def assuming_jobs(program: Program) -> Program:
    """`program` with the rule `placing(1) :- job(_, _, _)` replaced by the fact `placing(1)`.

    Equivalent whenever some job is loaded, and it frees every per-GPU relation from the jobs: the
    evaluation without jobs then holds them. A rule for `placing` of another shape is kept as it
    is (everything then depends on the jobs: slower, never wrong).
    """
    rules = tuple(Rule(Head(GUARD, (Const(1),), r.head.loc), (), r.loc) if _is_guard(r) else r for r in program.rules)
    return Program(program.declarations, rules, program.metadata)


def _is_guard(rule: Rule) -> bool:
    if rule.head.relation != GUARD or rule.head.args != (Const(1),) or len(rule.body) != 1:
        return False
    (only,) = rule.body
    return isinstance(only, Atom) and only.relation == "job" and all(isinstance(a, Wildcard) for a in only.args)


class PreparedPlacement:
    """The placement rules evaluated on one revision's fleet with no job, and what ranking reads of it.

    Built from `inputs` (the revision's inventory and principals, its copy of the thresholds) and
    `setup` (authorization with the revision's copy of the policies, used by this object alone),
    evaluated by `engine` (`auto`: as `place` would pick for the fleet). TopologError when the
    evaluation fails.

    A fleet evaluated in DuckDB keeps its engine: each admit adds its facts and retracts them. One
    evaluated in memory keeps what it derived (MemoryBackend.state): each admit restores it into an
    engine of its own, which shares the rows and never writes them (it derives afresh, in new
    tables, only what depends on the jobs), and drops it after.
    """

    def __init__(
        self, inputs: Inputs, setup: AuthzSetup, engine: str = "auto", observed: ObservedRun | None = None
    ) -> None:
        started = time.perf_counter()
        self.program = assuming_jobs(program_for(load_rules(), placement_relations(True)))
        dependent = downstream(self.program, JOB_INPUTS)
        # What the job's rules read besides the jobs: loaded whole now, since no job is there yet
        # to make those rules live (the rows `place` would leave out match no atom of them).
        reads = {
            a.relation
            for r in self.program.rules
            if r.head.relation in dependent
            for a in (*r.positive_atoms(), *r.negated_atoms())
        }
        keep: set[str] | None = gpus_and_ancestors(inputs.inventory)
        facts = None
        if observed is not None:
            # As `place --observed` (session.place_run): the observed rows join the facts, and a GPU
            # whose NIC has a port observed down (OBS103) has no fabric share, which reads the NICs
            # and cables as well as the GPUs.
            observations = observed.read()
            facts = observed_rows(observed, observations, inputs)
            if observations.nic_ports:
                keep = None
        evaluation = evaluate(
            self.program,
            inputs,
            engine=engine,
            authorization=setup,
            extra_facts=facts,
            also_read=reads - JOB_INPUTS - dependent,
            keep_objects=keep,
            rank_pairs=True,
            judge_checks=False,
        )
        backend = evaluation.engine
        self.profiles = Profiles(backend, self.program, evaluation.pairs)
        # Read now, not on the first job of scope nvlink_domain: a memory evaluation is closed below.
        self.profiles.domain_gpus()
        self._duckdb: DuckDBBackend | None = None
        self._state: State | None = None
        plain = PlainPlacement(backend, self.program, self.profiles)
        self._plain = plain if plain.usable and PLAIN else None
        """Plain jobs judged without evaluating the rules again (verifier/placement/plain.py)."""
        if isinstance(backend, DuckDBBackend):
            self._duckdb = backend
            weakref.finalize(self, evaluation.close)
        elif isinstance(backend, MemoryBackend):
            self._state = backend.state()
            evaluation.close()
        else:  # pragma: no cover - evaluate() runs memory or duckdb for `auto` and `duckdb`
            evaluation.close()
            raise TypeError(f"a prepared placement keeps no {backend.name} evaluation")
        self.engine = backend.name
        self._inventory = inputs.inventory
        self._setup = setup
        self._lock = threading.Lock()
        self.broken = False
        """Set when an admit's evaluation failed in DuckDB: that engine's state is not trusted again."""
        self.admits = 0
        self.reused = 0
        """Admits answered from `_answers`."""
        self.plain = 0
        """Admits of plain jobs, judged without evaluating (PlainPlacement)."""
        self._answers: dict[tuple[int, tuple[Job, ...]], PlaceReport] = {}
        """Ranked reports by what was asked (see `place`): this revision's answers, which nothing changes."""
        self.seconds = time.perf_counter() - started

    def place(self, jobs: Jobs, limit: int = 0) -> PlaceReport | None:
        """`place --why-not --limit LIMIT` of `jobs` on this fleet (ranked by bandwidth; 0: every
        placement), as verifier.session.place_run.placements gives it; None when these jobs are
        not for this path.

        TopologError as `placements` raises it (a principal in no file, a limit exceeded).
        """
        classes, of = job_classes(jobs)
        if not classes.jobs or any(job.rail_aligned for job in classes):
            return None
        # The look-alike hint alone: a did-you-mean over every principal per unknown name is the
        # body's to multiply (session.require_job_principals).
        require_job_principals(jobs, self._setup.principals, nearest=False)
        # Each class under a name of this evaluation's own (see the module's docstring); no
        # answer names its job (the report is made per original job below).
        own = {name: f"job-{i}" for i, name in enumerate(classes.jobs)}
        named = Jobs({own[name]: replace(job, name=own[name]) for name, job in classes.jobs.items()}, classes.files)
        # Jobs compare by what they ask (not where they were written, nor their notes): with the
        # names made this evaluation's own, equal keys are equal inputs to the rules and ranking.
        key = (limit, tuple(named))
        with self._lock:  # one admit at a time: DuckDB and the authorizer's memo are not for two threads
            if self.broken:
                return None
            report = self._answers.get(key) if ANSWERS else None  # 0: none kept (tests)
            if report is None:
                report = self._evaluated(named, limit)
                if report is None:
                    return None
                if len(self._answers) >= ANSWERS:
                    self._answers.clear()
                if ANSWERS:
                    self._answers[key] = report
            else:
                self.reused += 1
            self.admits += 1
        result = for_every_job(report, jobs, {name: own[rep] for name, rep in of.items()})
        result.authorization_checked = True
        return result

    def _evaluated(self, named: Jobs, limit: int) -> PlaceReport | None:
        """The ranked report of `named` from this evaluation with their facts added (under the lock)."""
        families = model_families(self._inventory, named)
        facts = job_facts(named)
        facts["model_family"] = families
        loaded = [relation for relation, rows in facts.items() if rows]
        engine: DuckDBBackend | MemoryBackend
        if self._state is not None:
            # Bounded as `--engine auto` bounds it: a job too big for memory is placed from
            # scratch, where `place` starts it over in DuckDB (OutgrewEngine below).
            engine = MemoryBackend(AUTO_MAX_BINDINGS, AUTO_MAX_ROUNDS)
            engine.load(self.program)
            engine.restore(self._state)
        else:
            assert self._duckdb is not None
            engine = self._duckdb
        if self._plain is not None and all(is_plain(job) for job in named):
            # Read-only queries of the evaluation with no job (nothing added, nothing to retract).
            plain = self._plain.report(engine, named, families, "bandwidth", limit, self._setup)
            if plain is not None:
                self.plain += 1
                return plain
        try:
            for relation in loaded:
                engine.add_facts(relation, facts[relation])
            engine.evaluate()
            report = rank_placements(
                engine,
                self.program,
                named,
                "bandwidth",
                self.profiles.pairs,
                why_not=True,
                limit=limit,
                authorization=self._setup,
                profiles=self.profiles,
            )
            if isinstance(engine, DuckDBBackend):
                for relation in loaded:
                    engine.retract(relation)
        except OutgrewEngine:
            if isinstance(engine, DuckDBBackend):  # pragma: no cover - only the memory engine outgrows
                self.broken = True
                raise
            return None
        except BaseException:
            # DuckDB: whatever failed, the next admit starts from a fresh evaluation. Memory:
            # the kept state was only read; this admit's engine goes with it.
            self.broken = isinstance(engine, DuckDBBackend)
            raise
        return report


class PlacingSlot:
    """A revision's PreparedPlacement: built once, by the first admit or ahead of it (`prepare`).

    Built again when an admit broke it; never shared with another revision.
    """

    def __init__(self, inputs: Inputs, setup: Callable[[], AuthzSetup], observed: ObservedRun | None = None) -> None:
        self._inputs = inputs
        self._setup = setup
        """Authorization for the placement alone (its own authorizer and memo), built with it."""
        self.observed = observed
        """The revision's observations (revision.KeptObservations), read by every placement (`place --observed`)."""
        self._lock = threading.Lock()
        self._prepared: PreparedPlacement | None = None
        self._tried = False
        self.error: str | None = None
        """Why there is none (admits then place as `place` does, from the files in memory)."""

    def get(self) -> PreparedPlacement | None:
        """The prepared placement, built now if it is not yet (None: it could not be built)."""
        with self._lock:
            prepared = self._prepared
            if prepared is None and self._tried:
                return None  # built once and refused: not tried at every admit
            if prepared is None or prepared.broken:
                self._tried = True
                try:
                    prepared = self._prepared = PreparedPlacement(self._inputs, self._setup(), ENGINE, self.observed)
                    self.error = None
                except Exception as err:  # the admit places without it: slower, the same answer
                    prepared = self._prepared = None
                    self.error = f"{type(err).__name__}: {err}"
            return prepared

    def prepare(self) -> None:
        """Build it ahead of the first admit (from a worker thread; an admit meanwhile waits for it)."""
        self.get()

    def describe(self) -> dict[str, object]:
        prepared = self._prepared
        if prepared is None:
            return {"prepared": False, "error": self.error}
        return {
            "prepared": True,
            "engine": prepared.engine,
            "seconds": round(prepared.seconds, 3),
            "admits": prepared.admits,
            "reused": prepared.reused,
            "plain": prepared.plain,
        }
