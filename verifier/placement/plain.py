"""A plain job placed without evaluating the rules again: judged per domain class, in Python.

The service (verifier/service/placing.py) keeps the placement rules evaluated on its fleet with
no job. For the jobs a scheduler sends most (a GPU count, a principal, a scope, and at most
accepted models, memory, memory bandwidth, FP64 and excluded labels) what the rules in
rules/placement/lib/ derive from the job's facts reduces to this, per GPU profile
(place_profile_key) and candidate domain (place_domain_profile, both evaluated with no job):

- the first stage a profile fails (place_first_fail), in place_stage's order: 2 `model` when the
  job accepts models and none of its names, families (model_family) or vendors (model_info) is
  the profile's model; 4 `hbm` under min_hbm_mb; 5 `hbm_bandwidth` under min_hbm_mbps; 6 `fp64`
  without full-rate FP64 when asked; 7 `excluded` when an excluded label sits on the profile's
  node or its tag (the GPU's own id) or on an ancestor of either (job_excluded_node,
  job_excluded_tag: `label` and `within`); 8 `healthy` when its `ok` is 0; 10 `authorization`
  when Cedar does not permit the job's principal to schedule on its class (job_class_ok:
  `permitted`, or only the class "-" when no principals were loaded); else 13, eligible. The
  other stages (MIG, software, rail alignment, layout) need job facts a plain job has not;
- a candidate domain is every domain of the job's scope (place_candidate); it hosts the job when
  its eligible GPUs of one model are at least the job's GPUs (place_need is the job's gpus;
  max_nodes, min_fabric_mbps and min_pair_mbps are not asked, so every topology need holds for
  a model whose count is enough: place_try_host). In a domain where several models have enough
  (place_host_kind) the job is placed on the one whose members rank best, as `place` picks it
  (rank_judged, given those models the most eligible first, then by name); a domain that hosts
  it on none is judged on the model with the most (place_kind, the smallest name among equals);
- a domain that does not host it is short first (place_first_short) at the first stage K after
  which fewer GPUs than needed are left (place_stage_gpus: those whose first failure is after K),
  else at `one_model` (enough eligible GPUs in all, too few of the domain's one model).

A job is plain when its facts (verifier.facts.jobs.job_facts) are only in `job`, `job_scope`,
`job_unit` (which only PLACE001's finding reads), `job_accepts`, `job_exclude` and `job_need` with
min_hbm_mb, min_hbm_mbps or fp64, and it asks at least one GPU. Anything more (MIG, software,
rail alignment, a model and its layouts, replicas, max_nodes, min_fabric_mbps, min_pair_mbps) is
placed by the rules; so is a job excluding a label that more than MAX_LABELLED objects carry, a
job whose accepted models name no accelerator of the catalogue (it can never run: PLACE002, with
the reason `job_never` gives, rules/placement/lib/never.dl), and
every job when some GPU has no placement profile or more than one (then a domain's GPUs would not
be counted as the rules count them; never so for an inventory the loader accepts, but it is
checked, not assumed).

Domains are grouped into classes (their profiles' figures, GPU counts, node class and which GPUs,
and whether they lie inside one node): a class passes the same stages for every job, so each is
judged once per job. Members, bottleneck, cost and ranking are `place`'s own (rank_judged), given
only the domains that can be among the best `limit` (see PlainPlacement._placed), and why-not
messages too (why_not_message). Tests compare the answers with `topolog place --why-not --format
json` (tests/service/test_serve_plain_admit.py).

Read-only once built: each report makes its own dictionaries.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from operator import itemgetter

from verifier.core.gc_pause import collector_paused
from verifier.engine.ast import Program, Row, Value
from verifier.engine.backend import Backend
from verifier.engine.records import Columns
from verifier.facts.jobs import job_facts, job_needs
from verifier.placement.place import (
    Deniers,
    DomainProfile,
    JobPlacements,
    KindOption,
    PlaceReport,
    PolicyReasons,
    ProfileKey,
    Profiles,
    WhyNot,
    rank_judged,
    why_not_message,
)
from verifier.sources.jobs.spec import Job, Jobs

PLAIN_FACTS = frozenset({"job", "job_scope", "job_unit", "job_accepts", "job_exclude", "job_need"})
"""The job relations a plain job may have rows in (job_unit is read by PLACE001's finding alone)."""
PLAIN_NEEDS = frozenset({"min_hbm_mb", "min_hbm_mbps", "fp64"})
"""The job_need keys a plain job may have: each judged on a profile's own figures."""
ELIGIBLE = 13
"""place_first_fail's stage of a profile that passes every stage."""
ONE_MODEL = 14
"""In a judged domain's failures: eligible GPUs of another model than the domain's (place_kind);
after every stage, so no stage's why-not subtracts them."""
MODEL, HBM, HBM_BANDWIDTH, FP64, EXCLUDED, HEALTHY, AUTHORIZATION = 2, 4, 5, 6, 7, 8, 10
"""The stages (place_stage) a plain job's profiles can fail."""
MAX_LABELLED = 256
"""Objects carrying one excluded label, at most, whose descendants are looked up (one query each);
beyond, the job goes to the rules."""

_Entry = tuple[tuple[Value, ...], str, str, int, DomainProfile]
"""A profile of a domain: its figures (model, hbm_mb, hbm_mbps, fp64, ok, class), node, tag, GPUs, info."""
_Domain = tuple[str, int, list[_Entry], bool]
"""A candidate domain: its name, class (see PlainPlacement), profiles, and whether it lies inside one node."""
_Judged = tuple[int, tuple[bool, ...], list[tuple[int, int]], tuple[str, ...]]
"""A domain judged: the eligible GPUs of its model with the most, which of its profiles are
eligible (of the models that host the job, or of that model), (stage, GPUs) of the others, and
the models that host the job where several do (the most eligible first, then by name)."""
FIGURES = ("model", "hbm_mb", "hbm_mbps", "fp64", "ok", "class")


def is_plain(job: Job) -> bool:
    """Whether the rules ask nothing of `job` that PlainPlacement does not judge (see the module)."""
    if job.gpus < 1:  # a domain with no eligible GPU has no place_eligible_count: it hosts not even 0
        return False
    facts = job_facts(Jobs({job.name: job}))
    if any(rows for relation, rows in facts.items() if relation not in PLAIN_FACTS):
        return False
    return all(key in PLAIN_NEEDS for key, _value in job_needs(job))


class PlainPlacement:
    """What plain jobs read of an evaluation of the placement rules with no job.

    Built from the evaluation `engine` once; each report queries an engine holding that
    evaluation (the same, or a copy restored from it) for `permitted`, `label` and `within` of
    its jobs, and for why-not messages `place_domain_gpu`. `usable` is False when some GPU has no
    placement profile.
    """

    def __init__(self, engine: Backend, program: Program, profiles: Profiles) -> None:
        self.program, self.profiles = program, profiles
        key_columns = profiles.key_columns
        per_domain = Columns.of(program, "place_domain_profile", ("scope", "domain", *key_columns, "gpus"))
        s_at, d_at, c_at = per_domain.index["scope"], per_domain.index["domain"], per_domain.index["gpus"]
        key_of = itemgetter(*(per_domain.index[c] for c in key_columns))
        figures_of = itemgetter(*(key_columns.index(c) for c in FIGURES))
        node_at, tag_at = key_columns.index("node"), key_columns.index("tag")
        # Per scope, its domains sorted (place_host's order), each with its profiles: what a
        # plain job's stages read. Figures are interned: a job judges each distinct one once.
        grouped: dict[str, dict[str, list[_Entry]]] = defaultdict(lambda: defaultdict(list))
        info = profiles.info
        interned: dict[tuple[Value, ...], tuple[Value, ...]] = {}
        for row in engine.query("place_domain_profile", None, False):
            key: ProfileKey = key_of(row)
            figures = figures_of(key)
            figures = interned.setdefault(figures, figures)
            entry = (figures, str(key[node_at]), str(key[tag_at]), int(row[c_at]), info[key])
            grouped[str(row[s_at])][str(row[d_at])].append(entry)
        # A domain's class: per profile its figures, GPUs, local id and node class (Profiles.info),
        # and whether it lies inside one node. Domains of one class (thousands of identical
        # nodes) pass the same stages for any job, and `place` ranks those inside one node by
        # that shape: each class is judged once per job. Exclusions name nodes and tags, so a
        # domain holding one excluded is judged by itself (`named`: its positions by node and tag).
        classes: dict[tuple[object, ...], int] = {}
        self.domains: dict[str, list[_Domain]] = {}
        self.by_class: dict[str, dict[int, list[int]]] = {}
        self.named: dict[str, dict[str, list[int]]] = {}
        for scope, domains in grouped.items():
            listed: list[_Domain] = []
            by_class: dict[int, list[int]] = defaultdict(list)
            named: dict[str, list[int]] = defaultdict(list)
            for position, (domain, entries) in enumerate(sorted(domains.items())):
                one_node = len({e[1] for e in entries}) == 1
                shape = (tuple((e[0], e[3], e[4][1], e[4][2]) for e in entries), one_node)
                cls = classes.setdefault(shape, len(classes))
                listed.append((domain, cls, entries, one_node))
                by_class[cls].append(position)
                for name in {*(e[1] for e in entries), *(e[2] for e in entries if e[2])}:
                    named[name].append(position)
            self.domains[scope], self.by_class[scope], self.named[scope] = listed, dict(by_class), dict(named)
        self.stages = {int(k): str(name) for k, name in engine.query("place_stage")}
        self.authorizing = bool(engine.query("authz_on"))
        self.vendors = {(str(m), str(v)) for m, v, _kind in engine.query("model_info")}
        # never_accelerator: the catalogue models a job can be placed on, and their vendors.
        made = {(str(m), str(v)) for m, v, kind in engine.query("model_info") if kind in ("gpu", "hpu")}
        self.accelerators = frozenset(m for m, _v in made)
        self.accelerator_words = self.accelerators | {v for _m, v in made}
        self.nodes = {str(row[0]) for row in engine.query("object", {1: "node"}, False)}
        # Every GPU a domain holds (place_domain_gpu asks place_gpu_model) in exactly one profile:
        # then each candidate domain is in place_domain_profile and counts its GPUs once.
        profiled = [gpu for gpus in profiles.by_profile.values() for gpu in gpus]
        placed = {row[0] for row in engine.query("place_gpu_model", None, False)}
        self.usable = len(profiled) == len(placed) and placed.issuperset(profiled)
        permitted = Columns.of(program, "permitted", ("principal", "action", "class"))
        self._p_principal, self._p_action, self._p_class = (
            permitted.index[c] for c in ("principal", "action", "class")
        )

    def report(
        self,
        engine: Backend,
        jobs: Jobs,
        families: list[Row],
        rank: str,
        limit: int,
        authorization: PolicyReasons | None,
    ) -> PlaceReport | None:
        """`rank_placements`' report with why-not of `jobs` (every one plain: see is_plain), with
        `families` the model_family rows of their accepts; None when one is for the rules after all
        (an excluded label on more than MAX_LABELLED objects, or accepts that can never be met).
        """
        if any(self._never(job, families) for job in jobs):
            return None
        out = []
        deniers = Deniers(engine, self.program, authorization)
        # A fleet's worth of small lists and no cycles: the cyclic collector would only walk them
        # (as rank_placements, verifier.core.gc_pause).
        with collector_paused():
            for job in jobs:
                excluded = self._excluded(engine, job)
                if excluded is None:
                    return None
                out.append(self._placed(engine, job, families, excluded, rank, limit, deniers))
        return PlaceReport(rank, out)

    def _placed(
        self,
        engine: Backend,
        job: Job,
        families: list[Row],
        excluded: frozenset[str],
        rank: str,
        limit: int,
        deniers: Deniers,
    ) -> JobPlacements:
        stage_of = self._judge(engine, job, families)
        need = job.gpus
        scope = job.scope
        domains = self.domains.get(scope, [])
        memo: dict[tuple[Value, ...], int] = {}

        def judge(entries: list[_Entry], excluding: bool) -> _Judged:
            stages: list[int] = []
            per_model: dict[str, int] = defaultdict(int)
            for figures, node, tag, gpus, _profile in entries:
                stage = memo.get(figures)
                if stage is None:
                    stage = memo[figures] = stage_of(figures)
                if excluding and stage > EXCLUDED and ((node in excluded and node in self.nodes) or tag in excluded):
                    stage = EXCLUDED
                stages.append(stage)
                if stage == ELIGIBLE:
                    per_model[str(figures[0])] += gpus
            # place_kind: the domain is judged on one model, the one with the most eligible GPUs
            # (the smallest name among equals); another model's eligible GPUs count as ONE_MODEL's.
            # Where several models have the job's GPUs, each hosts it (place_host_kind): all of
            # theirs stay eligible, and rank_judged places the job on the best-ranked of them.
            kinds = sorted(per_model, key=lambda m: (-per_model[m], m))
            kind = kinds[0] if kinds else ""
            passed = per_model.get(kind, 0)
            hosting = {m for m in kinds if per_model[m] >= need} or {kind}
            mask: list[bool] = []
            failed: list[tuple[int, int]] = []
            for (figures, _node, _tag, gpus, _profile), stage in zip(entries, stages, strict=True):
                mine = stage == ELIGIBLE and str(figures[0]) in hosting
                mask.append(mine)
                if not mine:
                    failed.append((ONE_MODEL if stage == ELIGIBLE else stage, gpus))
            options = tuple(m for m in kinds if m in hosting) if len(hosting) > 1 else ()
            return passed, tuple(mask), failed, options

        # Domains holding an excluded node or tag, judged one by one.
        named = self.named.get(scope, {})
        alone_set = {p for name in excluded for p in named.get(name, ())}
        alone = sorted(alone_set)
        hosting = 0
        ranked: list[tuple[int, _Judged]] = []
        rejected: list[tuple[int, _Judged]] = []
        shapes = rank == "bandwidth" and limit > 0
        for positions in self.by_class.get(scope, {}).values():
            if alone:
                positions = [p for p in positions if p not in alone_set]
                if not positions:
                    continue
            judged = judge(domains[positions[0]][2], False)
            if judged[0] < need:
                rejected.extend((p, judged) for p in positions)
                continue
            hosting += len(positions)
            if shapes and self._one_shape(domains[positions[0]], judged[1]):
                # place ranks by the bottleneck, then the nodes used, then the name: domains of
                # one shape tie but for the name, so only the first `limit` of them can be shown.
                positions = positions[:limit]
            ranked.extend((p, judged) for p in positions)
        for p in alone:
            judged = judge(domains[p][2], True)
            if judged[0] >= need:
                hosting += 1
                ranked.append((p, judged))
            else:
                rejected.append((p, judged))
        hosts: list[tuple[str, int]] = []
        eligible: dict[Value, list[DomainProfile]] = {}
        kinds: dict[Value, list[KindOption]] = {}
        for p, (_passed, mask, _failed, options) in sorted(ranked, key=itemgetter(0)):
            domain, _cls, entries, _one = domains[p]
            hosts.append((domain, need))
            eligible[domain] = [e[4] for e, m in zip(entries, mask, strict=True) if m]
            if options:
                kinds[domain] = [(model, need, 1) for model in options]
        jp = JobPlacements(job, len(domains))
        _counted, jp.placements = rank_judged(
            engine, self.program, self.profiles, job, hosts, eligible, rank, limit, kinds or None
        )
        jp.hosting = hosting
        jp.why_not = [
            self._why_not(job, domains[p][0], judged, need, deniers)
            for p, judged in sorted(rejected, key=itemgetter(0))
        ]
        return jp

    def _never(self, job: Job, families: list[Row]) -> bool:
        """Whether `job` accepts models and none of its words names a catalogue accelerator by
        name, vendor or family (never.dl's first `job_never`): the rules say why, as PLACE002.
        """
        if not job.accepts:
            return False
        words = set(job.accepts)
        if words & self.accelerator_words:
            return False
        return not any(str(w) in words and str(m) in self.accelerators for m, w in families)

    @staticmethod
    def _one_shape(domain: _Domain, mask: tuple[bool, ...]) -> bool:
        """Whether `place` judges the domain by a shape its class fixes: inside one node, with a
        node class and a local id for each eligible profile (verifier.placement.place._Picker).
        """
        _name, _cls, entries, one_node = domain
        return one_node and all(
            e[4][1] is not None and e[4][2] is not None for e, m in zip(entries, mask, strict=True) if m
        )

    def _why_not(self, job: Job, domain: str, judged: _Judged, need: int, deniers: Deniers) -> WhyNot:
        """place_stage_gpus: the GPUs past stage K (those that first fail later); the first stage
        that leaves fewer than needed is the domain's why-not (place_first_short).
        """
        passed, _mask, failed, _options = judged
        left = passed + sum(gpus for _stage, gpus in failed)
        for k in sorted(self.stages):
            left -= sum(gpus for stage, gpus in failed if stage == k)
            if left < need:
                what = self.stages[k]
                return WhyNot(domain, what, left, need, why_not_message(job, domain, what, left, need, deniers))
        if passed < need:  # enough eligible GPUs, too few of one model (place_short's one_model)
            return WhyNot(domain, "one_model", passed, need, why_not_message(job, domain, "one_model", passed, need))
        raise AssertionError(f"{domain} does not host {job.name} and is short at no stage")  # pragma: no cover

    def _judge(self, engine: Backend, job: Job, families: list[Row]) -> Callable[[tuple[Value, ...]], int]:
        """The first stage a profile of these figures fails for `job` (place_first_fail; ELIGIBLE
        when none), but for excluded labels, which depend on the node and tag.
        """
        needs = dict(job_needs(job))
        min_hbm, min_hbm_mbps, fp64 = needs.get("min_hbm_mb"), needs.get("min_hbm_mbps"), needs.get("fp64") == 1
        accepts = set(job.accepts)
        named = {str(m) for m, w in families if w in accepts}
        allowed = self._allowed(engine, job.principal)

        def stage_of(figures: tuple[Value, ...]) -> int:
            model, hbm, hbm_mbps, has_fp64, ok, cls = figures
            # job_model_ok: accepted by name, by family (name prefix) or by vendor; any without accepts.
            if accepts and not (
                model in accepts or model in named or any((str(model), w) in self.vendors for w in accepts)
            ):
                return MODEL
            if min_hbm is not None and int(hbm) < min_hbm:
                return HBM
            if min_hbm_mbps is not None and int(hbm_mbps) < min_hbm_mbps:
                return HBM_BANDWIDTH
            if fp64 and has_fp64 == 0:
                return FP64
            if ok == 0:
                return HEALTHY
            if cls not in allowed:
                return AUTHORIZATION
            return ELIGIBLE

        return stage_of

    def _excluded(self, engine: Backend, job: Job) -> frozenset[str] | None:
        """Nodes and tagged GPUs a label the job excludes sits on or above (job_excluded_node,
        job_excluded_tag); None when one label is on more than MAX_LABELLED objects.
        """
        out: set[str] = set()
        for key, value in job.exclude:
            labelled = [str(row[0]) for row in engine.query("label", {1: key, 2: value}, False)]
            if len(labelled) > MAX_LABELLED:
                return None
            for x in labelled:
                out.add(x)
                out.update(str(row[0]) for row in engine.query("within", {1: x}, False))
        # job_excluded_node asks that the node be an object of kind node (checked where it is
        # read); job_excluded_tag that the tag be the GPU's own id (a tag is one or "").
        return frozenset(out)

    def _allowed(self, engine: Backend, principal: str) -> frozenset[Value]:
        """The classes `principal` may schedule on (job_class_ok): without principals only "-", the
        class of every GPU then.
        """
        if not self.authorizing:
            return frozenset({"-"})
        bound = {self._p_principal: principal, self._p_action: "schedule"}
        return frozenset(row[self._p_class] for row in engine.query("permitted", bound, False))
