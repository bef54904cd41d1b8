"""`topolog place`: valid placements of jobs, ranked, with why-not answers (docs/placement.md).

The rules in rules/placement/ decide which candidate domains (NVLink domains, nodes, racks,
pods) host each job, per GPU profile and never per subset of GPUs. This module loads the
jobs as facts, picks the members of each hosting domain (the first eligible GPUs by name),
works out each placement's bottleneck bandwidth and hourly cost, ranks them, and renders
the why-not of every rejected domain.
"""

from __future__ import annotations

import heapq
import itertools
import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TYPE_CHECKING, Protocol, cast

from verifier.core.errors import Diagnostic
from verifier.core.gc_pause import collector_paused
from verifier.core.stamped_rows import names_at
from verifier.engine.ast import Program, Row, Value
from verifier.engine.backend import Backend
from verifier.engine.records import Columns
from verifier.facts.graph import _global, _local  # a GPU's name local to its node (node classes') and back
from verifier.facts.inventory import node_of
from verifier.facts.jobs import job_facts
from verifier.placement.profile_gpus import AloneFirst, GpusByProfile, profile_counts, row_getter
from verifier.placement.profile_gpus import ProfileKey as ProfileKey  # re-exported: plain.py, the service
from verifier.placement.tp_groups import ScaleupOf, signature, tp_members, whole_groups
from verifier.sources.inventory.model import Inventory, Obj, ObjectRow
from verifier.sources.jobs.layout import choose, heads_text, layouts, pp_sizes, tp_sizes
from verifier.sources.jobs.spec import Job, Jobs

if TYPE_CHECKING:  # only a type here: the summaries are computed (with networkx) by the session
    from verifier.facts.graph import NodePairs

RANKS = ("bandwidth", "cost")


class PolicyReasons(Protocol):
    """Why authorization refuses (verifier.authorization.setup.AuthzSetup is one)."""

    def denying(self, principal: str, gpus: Sequence[str]) -> tuple[str, ...]:
        """The ids of the policies that deny `principal` scheduling on some of `gpus` ("(no permit)": default deny)."""
        ...


PLACEMENT_RELATIONS = (
    "place_host",
    "place_eligible_profile",
    "place_profile",
    "place_node_profile",
    "place_node_price",
    "job_candidate_count",
    "place_layout",
    "place_host_kind",
    "place_host_kind_layout",
    "place_node_scaleup",
    "place_gpu_scaleup",
    "place_gpu_left_domain",
    "job_never",
)
"""The relations `place` reads; only the rules they depend on are evaluated."""

WHY_NOT_RELATIONS = ("place_why_not", "place_domain_gpu", "place_why_kind")
"""What `place --why-not` reads besides. Only it needs the GPUs that pass each stage counted
per rejected domain (place_stage_sum and the rules that read it): about a fifth of the
evaluation at fleet scale, skipped without it."""


def placement_relations(why_not: bool) -> tuple[str, ...]:
    """The relations a `place` run reads, with or without why-not answers."""
    return PLACEMENT_RELATIONS + WHY_NOT_RELATIONS if why_not else PLACEMENT_RELATIONS


@dataclass(frozen=True)
class ReplicaLayout:
    """The TP x PP layout the rules chose for one replica on a domain, and what they judged it on."""

    tp: int
    pp: int
    hbm_mb: int
    """The smallest memory among the domain's eligible GPUs."""
    scaleup_gpus: int
    """The smallest scale-up domain (GPUs) among them: TP stays inside one."""

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    def to_dict(self) -> dict[str, object]:
        return {
            "tp": self.tp,
            "pp": self.pp,
            "gpus_per_replica": self.gpus,
            "gpu_hbm_mb": self.hbm_mb,
            "scaleup_gpus": self.scaleup_gpus,
        }


@dataclass(frozen=True)
class Placement:
    domain: str
    gpus: tuple[str, ...]
    nodes: int
    bottleneck_mbps: int | None
    """Worst GPU-GPU bandwidth among the members: NVLink/PCIe pairs inside a node, the fabric between nodes."""
    cost_millicents_per_hour: int | None
    layout: ReplicaLayout | None = None
    """Jobs with a model: each replica's layout on this domain."""

    def to_dict(self) -> dict[str, object]:
        return {
            "domain": self.domain,
            "gpus": list(self.gpus),
            "nodes": self.nodes,
            "bottleneck_mbps": self.bottleneck_mbps,
            "cost_millicents_per_hour": self.cost_millicents_per_hour,
            "layout": self.layout.to_dict() if self.layout is not None else None,
        }


@dataclass(frozen=True)
class WhyNot:
    domain: str
    requirement: str
    have: int
    need: int
    message: str

    def to_dict(self) -> dict[str, object]:
        return {
            "domain": self.domain,
            "requirement": self.requirement,
            "have": self.have,
            "need": self.need,
            "message": self.message,
        }


@dataclass
class JobPlacements:
    job: Job
    candidates: int
    placements: list[Placement] = field(default_factory=list)
    why_not: list[WhyNot] = field(default_factory=list)
    hosting: int = 0
    """Candidate domains that host the job; `placements` keeps the first `--limit` of them."""
    layouts: list[ReplicaLayout] = field(default_factory=list)
    """Jobs with a model: the distinct layouts chosen on its candidate domains (hosting or not) and
    on the GPUs of the placements shown, sorted."""
    never: list[str] = field(default_factory=list)
    """Why the job can never run on any node (PLACE002, rules/placement/lib/never.dl `job_never`),
    sorted; empty when it could, were the right hardware up and permitted."""


@dataclass
class PlaceReport:
    rank: str
    jobs: list[JobPlacements]
    authorization_checked: bool = True
    """False under `--no-authorization`: every principal was treated as allowed everywhere."""
    notes: tuple[Diagnostic, ...] = ()
    """What the job files hold besides jobs (Jobs.notes); each job's own notes are on its Job."""

    @property
    def unplaceable(self) -> list[str]:
        return [j.job.name for j in self.jobs if not j.placements]

    @property
    def exit_code(self) -> int:
        return 1 if self.unplaceable else 0


def rank_placements(
    engine: Backend,
    program: Program,
    jobs: Jobs,
    rank: str,
    pairs: NodePairs,
    *,
    why_not: bool = False,
    limit: int = 0,
    authorization: PolicyReasons | None = None,
    profiles: Profiles | None = None,
) -> PlaceReport:
    """Each job's hosting domains (from the evaluated placement rules), members picked and ranked.

    `authorization` names the policies behind a why-not for authorization. `profiles`: the GPU
    profiles of this evaluation, already read (Profiles); read here when None.
    """
    # Ranking reads a fleet's worth of rows into small tuples and makes no reference cycles: the
    # cyclic collector would only walk them, and the older heap, again and again (a fifth of
    # the phase at 32,768 GPUs). What outlives the pause is the report; the rest is freed by
    # reference counting on return, so nothing is left for later collections to walk.
    with collector_paused():
        read = profiles if profiles is not None else Profiles(engine, program, pairs, on_demand=True)
        return _rank(engine, program, jobs, rank, read, why_not, limit, authorization)


def _rank(
    engine: Backend,
    program: Program,
    jobs: Jobs,
    rank: str,
    profiles: Profiles,
    why_not: bool,
    limit: int,
    authorization: PolicyReasons | None,
) -> PlaceReport:
    q = engine.query
    count = Columns.of(program, "job_candidate_count", ("job", "candidates"))
    c_job, c_count = count.index["job"], count.index["candidates"]
    candidates = {str(r[c_job]): int(r[c_count]) for r in q("job_candidate_count")}
    host = Columns.of(program, "place_host", ("job", "domain", "need"))
    h_job, h_domain, h_need = host.index["job"], host.index["domain"], host.index["need"]
    # Read unordered and sorted per job, which gives each job's rows the order of an ordered
    # read (the domains of a job are distinct, so only ties between duplicates would see it)
    # without sorting a fleet's worth of rows by the job first.
    host_rows: dict[str, list[Row]] = defaultdict(list)
    read = q("place_host", None, False)
    # By runs of one job (the engine hands a job's rows together, a fleet's 53,000 of them in a
    # few runs), found column-wise in C calls, not a dictionary append per row.
    of_job = list(map(itemgetter(h_job), read))
    runs = [0, *itertools.compress(range(1, len(read)), map(operator.ne, of_job[1:], of_job)), len(read)]
    for start, end in itertools.pairwise(runs):
        if start < end:
            host_rows[str(of_job[start])].extend(read[start:end])
    hosts: dict[str, list[tuple[str, int]]] = {}
    pick = cast("Callable[[Row], tuple[str, int]]", itemgetter(h_domain, h_need))  # a symbol and a number
    for name, rows in host_rows.items():
        rows.sort()
        hosts[name] = list(map(pick, rows))
    lay = Columns.of(program, "place_layout", ("job", "domain", "tp", "pp", "hbm_mb", "scaleup"))
    l_job, l_domain, l_tp, l_pp, l_hbm, l_scaleup = (
        lay.index[c] for c in ("job", "domain", "tp", "pp", "hbm_mb", "scaleup")
    )
    layouts = {
        (str(r[l_job]), str(r[l_domain])): ReplicaLayout(int(r[l_tp]), int(r[l_pp]), int(r[l_hbm]), int(r[l_scaleup]))
        for r in q("place_layout")
    }
    job_layouts: dict[str, dict[str, ReplicaLayout]] = defaultdict(dict)
    job_tps: dict[str, dict[str, int]] = defaultdict(dict)
    for (name, domain), layout in layouts.items():
        job_layouts[name][domain] = layout
        job_tps[name][domain] = layout.tp
    never = Columns.of(program, "job_never", ("job", "reason"))
    n_job, n_reason = never.index["job"], never.index["reason"]
    reasons_never: dict[str, list[str]] = defaultdict(list)
    for r in q("job_never"):
        reasons_never[str(r[n_job])].append(str(r[n_reason]))
    # The models that host a job in each domain of several models (rules/placement/lib/hosts.dl's
    # place_host_kind), with their need and layout: the domain's eligible profiles are every
    # model's, and members come from the one model the ranking puts first (_Picker._choose_kinds).
    # A fleet of one model per domain has no row.
    kinds, kind_layouts = _host_kinds(engine, program)
    picker = _Picker(engine, program, profiles)
    fitted = MemberLayouts(engine, program, profiles, picker.scaleup_of)
    out: list[JobPlacements] = []
    for job in jobs:
        jp = JobPlacements(job, candidates.get(job.name, 0))
        jp.never = sorted(reasons_never.get(job.name, ()))
        # Members are named only for the placements shown: at fleet scale a job has thousands
        # of hosting domains, ranked by figures that need no member names.
        chosen: dict[Value, str] = {}
        jp.hosting, shown = picker.ranked(
            job,
            hosts.get(job.name, []),
            rank,
            limit,
            tps=job_tps.get(job.name),
            kinds=kinds.get(job.name),
            models=chosen,
        )
        jp.placements = [
            Placement(
                domain,
                members,
                nodes,
                worst,
                cost,
                fitted.layout(
                    job,
                    members,
                    kind_layouts.get((job.name, domain, chosen[domain]))
                    if domain in chosen
                    else layouts.get((job.name, domain)),
                ),
            )
            for domain, members, nodes, worst, cost in shown
        ]
        shown_layouts = {p.layout for p in jp.placements if p.layout is not None}
        of_domain = job_layouts.get(job.name, {})
        if chosen:
            # A hosting domain of several models is placed on `chosen`'s model: its layout is that
            # model's, not place_layout's (place_kind: the model with the most eligible GPUs), which
            # the job does not run on there (70B on mixed-fleet's pod: TP=1 on MI300X, not TP=4 on A100).
            of_domain = dict(of_domain)
            for where, model in chosen.items():
                picked_layout = kind_layouts.get((job.name, where, model))
                if picked_layout is not None:
                    of_domain[str(where)] = picked_layout
                else:
                    of_domain.pop(str(where), None)
        jp.layouts = sorted(
            set(of_domain.values()) | shown_layouts,
            key=lambda lay: (lay.hbm_mb, lay.scaleup_gpus, lay.pp, lay.tp),
        )
        out.append(jp)
    if why_not:
        reasons = _why_not(engine, program, jobs, authorization)
        for jp in out:
            jp.why_not = reasons.get(jp.job.name, [])
    return PlaceReport(rank, out)


def _host_kinds(
    engine: Backend, program: Program
) -> tuple[dict[str, dict[Value, list[KindOption]]], dict[tuple[str, Value, str], ReplicaLayout]]:
    """place_host_kind and place_host_kind_layout: per job, per domain of several models, the models
    that host it there (model, need, TP), the most eligible GPUs first, then by name (place_kind's
    order, which breaks the ranking's ties); and the layout of each (job, domain, model) that has one.
    """
    kind = Columns.of(program, "place_host_kind", ("job", "domain", "model", "eligible", "need"))
    k_job, k_domain, k_model, k_eligible, k_need = (
        kind.index[c] for c in ("job", "domain", "model", "eligible", "need")
    )
    lay = Columns.of(program, "place_host_kind_layout", ("job", "domain", "model", "tp", "pp", "hbm_mb", "scaleup"))
    l_job, l_domain, l_model, l_tp, l_pp, l_hbm, l_scaleup = (
        lay.index[c] for c in ("job", "domain", "model", "tp", "pp", "hbm_mb", "scaleup")
    )
    layouts = {
        (str(r[l_job]), r[l_domain], str(r[l_model])): ReplicaLayout(
            int(r[l_tp]), int(r[l_pp]), int(r[l_hbm]), int(r[l_scaleup])
        )
        for r in engine.query("place_host_kind_layout", None, False)
    }
    rows: dict[str, dict[Value, list[tuple[int, str, int]]]] = defaultdict(lambda: defaultdict(list))
    for r in engine.query("place_host_kind", None, False):
        rows[str(r[k_job])][r[k_domain]].append((-int(r[k_eligible]), str(r[k_model]), int(r[k_need])))
    kinds: dict[str, dict[Value, list[KindOption]]] = {}
    for job, domains in rows.items():
        kinds[job] = {}
        for domain, found in domains.items():
            options = []
            for _most, model, need in sorted(found):
                layout = layouts.get((job, domain, model))
                options.append((model, need, layout.tp if layout is not None else 1))
            kinds[job][domain] = options
    return kinds, layouts


def rank_judged(
    engine: Backend,
    program: Program,
    profiles: Profiles,
    job: Job,
    hosts: Sequence[tuple[str, int]],
    eligible: Mapping[Value, list[DomainProfile]],
    rank: str,
    limit: int,
    kinds: Mapping[Value, Sequence[KindOption]] | None = None,
) -> tuple[int, list[Placement]]:
    """How many domains host `job` and its first `limit` placements (0: all), ranked as
    `rank_placements` ranks them, from hosts the caller judged: `hosts` (domain, GPUs needed),
    sorted by domain, `eligible`, each hosting domain's eligible profiles (Profiles.info's), and
    `kinds`, per domain whose eligible GPUs of several models host the job, those models (as
    `_Picker.ranked` reads them). For a job whose placements have no layout (no model): the
    engine is read for nothing else.
    """
    with collector_paused():
        hosting, shown = _Picker(engine, program, profiles).ranked(job, hosts, rank, limit, eligible, kinds=kinds)
    return hosting, [Placement(domain, members, nodes, worst, cost) for domain, members, nodes, worst, cost in shown]


def for_every_job(report: PlaceReport, jobs: Jobs, of: dict[str, str]) -> PlaceReport:
    """The report of each class's representative (see job_classes) repeated for every job of its class."""
    judged = {jp.job.name: jp for jp in report.jobs}
    out = []
    for job in jobs:
        rep = judged[of[job.name]]
        out.append(
            JobPlacements(
                job,
                rep.candidates,
                list(rep.placements),
                list(rep.why_not),
                rep.hosting,
                list(rep.layouts),
                list(rep.never),
            )
        )
    return PlaceReport(report.rank, out, report.authorization_checked, jobs.notes)


def gpus_and_ancestors(inv: Inventory) -> set[str]:
    """Every GPU and every object that contains one (node, rack, pod, ...), and every object of a
    node with a PCIe switch, CPU or NIC written down (HOST_DEVICE_KINDS).

    The nodes whose objects are not made yet (Inventory.defer_objects) give theirs off their plan's
    rows, the slots worked out once per plan: a fleet's 458,752 plan objects are never made here.
    """
    keep: set[str] = set()
    objects = inv.found
    unmade = inv.unmade_objects()
    per_plan: dict[int, Callable[[Sequence[str]], Sequence[str]] | None] = {}  # picks a node's names, C call
    holding: list[str] = []  # nodes with a GPU: walked up from below
    for node, (plan, names) in unmade.items():
        if id(plan) in per_plan:
            pick = per_plan[id(plan)]
        else:
            rows = plan.object_rows
            # A plan (a template) that writes a host device down gives every node stamped from it one:
            # their objects are kept whole, as a made node's are below.
            slots = sorted({0, *(r[0] for r in rows)}) if _host_down_rows(rows) else _gpu_slots(rows)
            pick = per_plan[id(plan)] = names_at(slots) if slots else None
        if pick is not None:
            keep.update(pick(names))  # slot 0 (the node) among them
            holding.append(node)
    for node in holding:
        parent = objects[node].parent
        while parent is not None and parent not in keep:
            keep.add(parent)
            parent = objects[parent].parent
    made = inv.objects_but(unmade.keys())
    host_down: list[Obj] = []  # host devices (HOST_DEVICE_KINDS) written down in made nodes (a plan's: above)
    for o in made:
        if o.kind != "gpu":
            if o.state == "down" and o.kind in HOST_DEVICE_KINDS:
                host_down.append(o)
            continue
        oid = o.id
        keep.add(oid)
        parent = o.parent
        while parent is not None and parent not in keep:
            keep.add(parent)
            parent = objects[parent].parent
    if host_down:
        keep.update(_objects_of_nodes(objects, made, host_down))
    return keep


HOST_DEVICE_KINDS = frozenset({"pcie_switch", "cpu", "nic"})
"""Devices on a GPU's host path (the kinds of rules/bandwidth/lib/paths.dl's host_device_down): one
written down leaves the GPUs whose every path crosses it undriven (rules/placement/lib/candidates.dl:
place_gpu_undriven), which the rules tell from the node's host devices and links, kept for those
nodes only."""


def _host_down_rows(rows: Sequence[ObjectRow]) -> bool:
    """Whether a plan's objects hold a host device (HOST_DEVICE_KINDS) written down."""
    return any(r[7] == "down" and r[2] in HOST_DEVICE_KINDS for r in rows)


def _objects_of_nodes(objects: Mapping[str, Obj], made: Sequence[Obj], devices: Sequence[Obj]) -> set[str]:
    """The ids of every object (`made`) in the nodes that hold `devices`: a fleet with none down reads none."""
    nodes = {n for n in (node_of(objects, d) for d in devices) if n is not None}
    return {o.id for o in made if node_of(objects, o) in nodes}


def _gpu_slots(rows: Sequence[ObjectRow]) -> list[int]:
    """The slots of a plan's GPUs and of every object that contains one, the node's (0) included."""
    parent_of = {row[0]: row[1] for row in rows}
    out: set[int] = set()
    for row in rows:
        if row[2] != "gpu":
            continue
        slot: int | None = row[0]
        while slot is not None and slot not in out:
            out.add(slot)
            slot = parent_of.get(slot, 0) if slot != 0 else None
    return sorted(out)


def job_classes(jobs: Jobs) -> tuple[Jobs, dict[str, str]]:
    """One representative per class of jobs whose facts are identical but for the name.

    Such jobs get identical answers (the rules and the ranking see nothing else), so the
    engine and the ranking judge each class once; `of` maps every job to its representative.
    """
    reps: dict[tuple[tuple[str, tuple[Row, ...]], ...], str] = {}
    kept: dict[str, Job] = {}
    of: dict[str, str] = {}
    for job in jobs:
        facts = job_facts(Jobs({job.name: job}))
        key = tuple(
            (rel, tuple(tuple("" if v == job.name and i == 0 else v for i, v in enumerate(r)) for r in rows))
            for rel, rows in sorted(facts.items())
        )
        if key not in reps:
            reps[key] = job.name
            kept[job.name] = job
        of[job.name] = reps[key]
    return Jobs(kept, jobs.files), of


class MemberLayouts:
    """The layout shown with a placement: the one for the GPUs it uses, not only the domain's.

    The rules choose a layout per candidate domain, on the smallest memory and the smallest
    scale-up domain among all its eligible GPUs (`place_layout`), and size the need from it. The
    members picked may all sit on nodes with larger scale-up domains (a pod whose one degraded
    node has a 7-GPU NVLink domain, members on two 8-GPU nodes): there the rules' own choice
    (`choose`, fewest stages then smallest TP) on the members' smallest memory and their nodes'
    smallest scale-up domain (`place_node_scaleup`) is what they run. It is shown when it uses
    as many GPUs per replica as the domain's layout (the members were counted for that); else the
    domain's layout stays, which the members hold too (their memory and domains are no smaller).
    Read lazily: only placements shown of jobs with a model ask.
    """

    def __init__(self, engine: Backend, program: Program, profiles: Profiles, scaleup_of: ScaleupOf) -> None:
        self.engine, self.program, self.profiles = engine, program, profiles
        self.scaleup_of = scaleup_of
        self._scaleup: dict[str, int] | None = None
        self._keys: dict[str, list[ProfileKey]] = defaultdict(list)
        self._hbm_at = profiles.key_columns.index("hbm_mb")

    def _read(self) -> dict[str, int]:
        """Each node's largest scale-up domain, and its profiles (a fleet's profiles, not its GPUs)."""
        if self._scaleup is None:
            cols = Columns.of(self.program, "place_node_scaleup", ("node", "gpus"))
            at_node, at_gpus = cols.index["node"], cols.index["gpus"]
            self._scaleup = {str(r[at_node]): int(r[at_gpus]) for r in self.engine.query("place_node_scaleup")}
            node_at = self.profiles.key_node
            for key in self.profiles.by_profile:
                self._keys[str(key[node_at])].append(key)
        return self._scaleup

    def _node_and_hbm(self, gpu: str) -> tuple[str, int] | None:
        """The GPU's node (the longest prefix of its id that is a node with profiles) and memory."""
        cut = gpu.rfind("/")
        while cut > 0:
            keys = self._keys.get(gpu[:cut])
            if keys is not None:
                for key in keys:
                    if gpu in self.profiles.by_profile[key]:
                        return gpu[:cut], int(key[self._hbm_at])
            cut = gpu.rfind("/", 0, cut)
        return None

    def layout(self, job: Job, members: Sequence[str], chosen: ReplicaLayout | None) -> ReplicaLayout | None:
        """The layout of `members` for `job`, given `chosen`, the rules' layout on their domain."""
        if chosen is None or job.model is None or not members:
            return chosen
        scaleup = self._read()
        found = [self._node_and_hbm(g) for g in members]
        if any(f is None or f[0] not in scaleup for f in found):  # pragma: no cover - members are GPUs of nodes
            return chosen
        least_hbm = min(f[1] for f in found if f is not None)
        least_scaleup = min(scaleup[f[0]] for f in found if f is not None)
        if (least_hbm, least_scaleup) == (chosen.hbm_mb, chosen.scaleup_gpus):
            return chosen
        lay = choose(job.model, least_hbm, least_scaleup)
        if lay is None or lay.gpus != chosen.gpus:
            return chosen
        # The members were picked in whole groups of the domain's TP: another TP is shown only
        # where they split into whole groups of it too, each inside one scale-up domain.
        if lay.tp != chosen.tp and not whole_groups(members, lay.tp, self.scaleup_of()):
            return chosen
        return ReplicaLayout(lay.tp, lay.pp, least_hbm, least_scaleup)


Shown = tuple[str, tuple[str, ...], int, int | None, int | None]
"""A placement shown, but for its layout: domain, members, nodes, bottleneck, cost."""

_Local = tuple[tuple[int, str], ...]
"""Members as (index into the domain's nodes, the GPU's name inside its node)."""

_Judged = tuple[str, int, int | None, int | None, Sequence[str], _Local | None]
"""A hosting domain's figures: domain, nodes, bottleneck, cost, and its members to name on
demand: the domain's nodes with `local`, or (local None) the members themselves."""

_Shape = tuple[_Local, int | None, int, tuple[tuple[int, int], ...]]
"""What a shape decides: members (local), bottleneck, nodes, and members per node (index, count)
in the order of the members (the price of each domain's nodes makes its cost)."""

_Profile = tuple[str, int | None, int | None, ProfileKey]
"""A profile as a domain reads it: its node, its local id (None: not expressible locally), the
node's class (None: none) and the profile itself."""

DomainProfile = _Profile
"""A profile as a domain reads it (Profiles.info's values): node, local id, node class, profile."""

_NO_PROFILE: _Profile = ("", None, None, ())

KindOption = tuple[str, int, int]
"""A model that hosts a job in a domain of several models: the model, the GPUs the job needs of
it there, and the TP of the job's layout on it (1: no model layout)."""

_NO_GPUS: frozenset[str] = frozenset()

_BIG = 1 << 62
"""Ranks a missing bottleneck or cost past every real one."""


class Profiles:
    """What ranking reads that no job changes: every GPU's profile, grouped, and each node's price.

    Built from an evaluation once per ranking, or once for many (the service keeps one with an
    evaluation of its fleet that each admitted job's facts are added to). Read-only once built.
    """

    def __init__(self, engine: Backend, program: Program, pairs: NodePairs, on_demand: bool = False) -> None:
        """`on_demand`: the profiles' GPUs are read as ranking asks (profile_gpus.GpusByProfile), from
        `engine` while it is open; else every GPU's now (a service keeps its profiles past its evaluation).
        """
        q = engine.query
        profile = Columns.of(program, "place_profile", ("gpu", "node", "fabric_mbps", "tag"))
        key_columns = profile.without("gpu")  # a GPU's profile: every column of place_profile but its name
        key = Columns("place_profile_key", key_columns, {n: i for i, n in enumerate(key_columns)})
        counts = profile_counts(engine, program, key_columns) if on_demand else None
        # A GPU's node and fabric bandwidth are in its profile: no per-GPU maps of a whole fleet.
        by_profile = GpusByProfile(engine, program, key_columns, counts)
        self.key_columns = key_columns
        self.key_node, self.key_fabric, self.key_tag = key.index["node"], key.index["fabric_mbps"], key.index["tag"]
        # Per profile, everything but its node's name as a small number: the profile's figures,
        # its tag and the local names of its GPUs (two nodes of one class with the same profiles
        # may still differ in which GPUs, a different one down). None: not expressible locally.
        # `info` keeps it with the profile's node and the node's class, what every domain reads.
        info: dict[ProfileKey, _Profile] = {}
        interned: dict[tuple[object, ...], int] = {}
        figures_of, tag_at = row_getter(key, key.without("node", "tag")), key.index["tag"]
        class_of, node_at = pairs.class_of, self.key_node
        # How many profiles each node has: a node's only profile is found by its node (`single`), and
        # only a profile read on demand is judged by it (twins).
        profiles_of = Counter(str(k[node_at]) for k in by_profile.counts)
        twins: dict[ProfileKey, int] = {}  # the profiles whose GPUs their class and figures say
        for profile_key in by_profile.counts:
            node, tag = str(profile_key[node_at]), str(profile_key[tag_at])
            cls = class_of.get(node)
            local_id: int | None = None
            if on_demand and not tag and node and cls is not None and profiles_of[node] == 1:
                # The only profile of its node holds every GPU of the node (each GPU has one at least),
                # and nodes of one class have the same local names (NodePairs keeps its pairs in them):
                # the class and the figures say which GPUs, without reading them.
                local_id = twins[profile_key] = interned.setdefault(((cls,), *figures_of(profile_key)), len(interned))
            elif not tag or tag.startswith(node + "/"):
                cut = len(node) + 1
                gpus = (_local(g, node) for g in by_profile[profile_key])
                local = (*figures_of(profile_key), tag[cut:], *gpus)
                local_id = interned.setdefault(local, len(interned))
            info[profile_key] = (node, local_id, cls, profile_key)
        by_profile.twins(twins)  # a rack of alike nodes: one node's GPUs read, the others' renamed
        self.by_profile: Mapping[ProfileKey, tuple[str, ...]] = by_profile
        self.count_of = by_profile.counts
        """Each profile's number of GPUs (read with the profiles: no GPU's name needed)."""
        self.info = info  # what `_eligible` maps each eligible row's profile to
        self.single = {found[0]: found for found in info.values() if profiles_of[found[0]] == 1}
        """Per node with one profile, that profile's info: an eligible row of the node has it, whatever
        its other columns (found by a name, not by hashing the row's nine columns)."""
        self.pairs = pairs
        # Read unordered (a node's rows are (node, price) already): only a node with two prices, which
        # the ordered read settles (the last, highest, wins), reads them again in order.
        prices = q("place_node_price", None, False)
        self.price: dict[str, int] = dict(cast("list[tuple[str, int]]", prices))
        if len(self.price) != len(prices):
            self.price = {str(n): int(p) for n, p in q("place_node_price")}
        self._engine, self._program = engine, program
        self._domain_gpus: dict[str, frozenset[str]] | None = None
        self._one_domain: dict[str, frozenset[str]] = {}
        self._alone = AloneFirst()  # NVLink domains read one query each, then every domain's at once
        self._left: frozenset[str] | None = None

    def domain_gpus(self) -> Mapping[str, frozenset[str]]:
        """Each NVLink domain's GPUs for placement (place_domain_gpu's scope nvlink_domain), read
        on first use (only jobs of that scope ask), then kept with the profiles. A profile is a
        node's, and a node may hold several NVLink domains alike (GPUs without NVLink, or two
        NVLink islands): a domain's members are its own GPUs of its eligible profiles only.
        """
        if self._domain_gpus is None:
            at_gpu, at_domain = self._scaleup_columns()
            left = self._left_domain()
            grouped: dict[str, list[str]] = defaultdict(list)
            for r in self._engine.query("scaleup_domain", None, False):
                gpu = str(r[at_gpu])
                if gpu not in left:
                    grouped[str(r[at_domain])].append(gpu)
            self._domain_gpus = {d: frozenset(g) for d, g in grouped.items()}
        return self._domain_gpus

    def domain_gpus_of(self, domain: str) -> frozenset[str]:
        """One NVLink domain's GPUs, as domain_gpus() has them. Ranking asks only for the domains that
        do not hold all the GPUs of their one profile (a GPU left alone in its NVLink domain, a domain
        across nodes): while they are few, each is read alone, not a fleet's GPUs for them.
        """
        if self._domain_gpus is not None:
            return self._domain_gpus.get(domain, _NO_GPUS)
        found = self._one_domain.get(domain)
        if found is None:
            if not self._alone.alone():
                return self.domain_gpus().get(domain, _NO_GPUS)
            (at_gpu, at_domain), left = self._scaleup_columns(), self._left_domain()
            rows = self._engine.query("scaleup_domain", {at_domain: domain}, False)
            found = self._one_domain[domain] = frozenset(g for r in rows if (g := str(r[at_gpu])) not in left)
        return found

    def _scaleup_columns(self) -> tuple[int, int]:
        """Where scaleup_domain's gpu and domain are (both ways of reading it ask)."""
        cols = Columns.of(self._program, "scaleup_domain", ("gpu", "domain"))
        return cols.index["gpu"], cols.index["domain"]

    def _left_domain(self) -> frozenset[str]:
        """The GPUs observed out of their NVLink domain (place_gpu_left_domain), read once."""
        if self._left is None:
            self._left = frozenset(str(r[0]) for r in self._engine.query("place_gpu_left_domain", None, False))
        return self._left


_FEW_NODES = 8
"""Up to this many nodes of several eligible profiles, a job's rows of them are read node by node
(a query each); more, and its eligible rows are read again whole, once. A DuckDB query has a fixed
cost (about 3.7 M instructions) and a job's whole re-read at 32,768 GPUs about nine of them: with
32 here, 30 such nodes cost +556 M instructions a 100-job placement (tests/placement/
test_place_eligible_reads_review57.py)."""


class _Picker:
    """Members and figures of a hosting domain, from bulk queries (no per-domain engine round trips).

    Every GPU's profile is read once; each hosting job's eligible profiles once, when it is ranked.
    """

    def __init__(self, engine: Backend, program: Program, profiles: Profiles) -> None:
        eligible = Columns.of(program, "place_eligible_profile", ("job", "domain", "gpus", *profiles.key_columns))
        self.by_profile, self.info, self.price = profiles.by_profile, profiles.info, profiles.price
        self.single = profiles.single
        self.count_of = profiles.count_of
        self.key_node, self.key_fabric, self.key_tag = profiles.key_node, profiles.key_fabric, profiles.key_tag
        self.engine, self.e_job, self.e_domain = engine, eligible.index["job"], eligible.index["domain"]
        self.e_node = eligible.index["node"]
        self.e_count = eligible.index["gpus"]
        self.e_short = (self.e_domain, self.e_node, self.e_count)
        self.eligible_of = row_getter(eligible, profiles.key_columns)
        self.model_at = profiles.key_columns.index("model")
        self.pairs = profiles.pairs
        self._worst: dict[tuple[int, tuple[str, ...]], int | None] = {}
        self._shapes: dict[tuple[object, ...], _Shape] = {}
        self.scaleup_of = ScaleupOf(engine, program)
        self._signatures: dict[ProfileKey, tuple[int, ...]] = {}
        self.domain_gpus = profiles.domain_gpus
        self.gpus_in = profiles.domain_gpus_of

    def ranked(
        self,
        job: Job,
        hosts: Sequence[tuple[str, int]],
        rank: str,
        limit: int,
        eligible_profiles: Mapping[Value, list[_Profile]] | None = None,
        tps: Mapping[str, int] | None = None,
        kinds: Mapping[Value, Sequence[KindOption]] | None = None,
        models: dict[Value, str] | None = None,
    ) -> tuple[int, list[Shown]]:
        """How many domains host `job`, and the first `limit` of them (0: all) ranked by `rank`.

        `eligible_profiles`: each hosting domain's eligible profiles (Profiles.info's), where the
        caller judged them without the engine (verifier/placement/plain.py); else read here.
        `tps`: per domain the TP of a model job's layout there; members are whole TP groups.
        `kinds`: per domain of several models, the models that host the job there (place_kind's
        order); the domain is placed on the one `_choose_kinds` ranks first, which `models` gets.

        The ranking figures come first and members are named only for the domains shown. A
        domain inside one node with one eligible profile (nodes, most NVLink domains) is judged
        here, by its shape, without a call per domain; the others go through `_judge`.
        """
        name, fabric = job.name, job.min_fabric_mbps
        fullest, in_domain = _fullest_first(job), job.scope == "nvlink_domain"
        # Per domain its eligible profiles (`eligible`), or its one profile (`only`) where each has one.
        only: Mapping[Value, _Profile] = {}
        eligible: Mapping[Value, Sequence[_Profile]] = {}
        sizes: Mapping[Value, Value] = {}
        if eligible_profiles is not None:
            eligible = eligible_profiles
        elif hosts and job.scope == "node":
            only, eligible = self._node_eligible(name, hosts)
        elif hosts:
            only, eligible, sizes = self._eligible(name, in_domain)
        by_cost = rank == "cost"
        if kinds:
            picked, hosts, tps = self._choose_kinds(job, hosts, only, eligible, kinds, by_cost, tps)
            only, eligible, sizes = self._of_kind(only, eligible, sizes, picked)
            if models is not None:
                models.update(picked)
        shapes, price, by_profile, count_of = self._shapes, self.price, self.by_profile, self.count_of
        if only and not tps and eligible_profiles is None:  # domains of one profile (`only`): ranked in bulk
            return self._ranked_alike(job, hosts, only, eligible, sizes, by_cost, limit)
        judged: list[_Judged] = []
        order: list[tuple[int, int, int, str, int]] = []
        # This job's shapes by a flat key (node class, local profile, need, TP and its groups, which
        # GPUs are the domain's): a fleet's domains are a handful of shapes, each looked up here once
        # per domain without building _judge's nested key.
        seen: dict[tuple[object, ...], _Shape] = {}
        for i, (domain, need) in enumerate(hosts):
            alone = only.get(domain)
            if alone is not None:
                profiles: Sequence[_Profile] | None = (alone,)
            else:
                profiles = eligible.get(domain)
                alone = profiles[0] if profiles is not None and len(profiles) == 1 else _NO_PROFILE
            tp = tps.get(domain, 1) if tps else 1
            node, local_id, cls, key = alone
            within: frozenset[str] | None = None
            whole = True
            if in_domain:
                # A domain that holds every GPU of its one profile (a node's whole NVLink island) has them
                # all as candidates, as a node has: its GPUs of the profile (place_eligible_profile's count)
                # are as many as the profile's. Only other domains read their GPUs (Profiles.domain_gpus).
                whole = local_id is not None and sizes.get(domain) == count_of.get(key)
                if not whole:
                    within = self.gpus_in(domain)
                    whole = local_id is not None and within.issuperset(by_profile.get(key, ()))
            if local_id is not None and cls is not None:
                held: object = True if whole else self._local_held([key], within or _NO_GPUS, [node])
                groups: tuple[int, ...] = ()
                if tp > 1:
                    groups = self._signature(key) if whole else signature(self._held([key], within), self.scaleup_of())
                flat = (cls, local_id, need, tp, groups, held)
                found = seen.get(flat)
                if found is None:
                    # The shape _judge gives a one-node, one-profile domain, without the call.
                    shape: tuple[object, ...] = ((cls,), (local_id,), (need, fabric, fullest, in_domain))
                    if in_domain:
                        shape = (*shape, held)
                    if tp > 1:
                        shape = (*shape, tp, groups)
                    found = shapes.get(shape)
                    if found is None:
                        found = shapes[shape] = self._shape(job, [key], need, [node], tp, None if whole else within)
                    seen[flat] = found
                local, worst, count, _tally = found
                p = price.get(node) if by_cost else None  # ranked by bandwidth: costed when shown
                cost = p * len(local) if p is not None and local else None
                one: _Judged = (domain, count, worst, cost, (node,), local)
            else:
                if in_domain and within is None:
                    within = self.gpus_in(domain)
                one = self._judge(job, domain, need, profiles or [], tp, within, costed=by_cost)
                _d, count, worst, cost, _n, _l = one
            judged.append(one)
            bw = _bandwidth_key(worst, need)
            # The rank keys of docs/placement.md, then the host's position: a stable sort's order.
            if by_cost:
                order.append((cost if cost is not None else _BIG, bw, count, domain, i))
            else:
                order.append((bw, count, 0, domain, i))
        # nsmallest is sorted(...)[:limit]; the keys are distinct (the position), so it is exact.
        chosen = heapq.nsmallest(limit, order) if limit else sorted(order)
        return len(judged), [_shown(self._costed(judged[k[-1]])) for k in chosen]

    def _ranked_alike(
        self,
        job: Job,
        hosts: Sequence[tuple[str, int]],
        only: Mapping[Value, _Profile],
        eligible: Mapping[Value, Sequence[_Profile]],
        sizes: Mapping[Value, Value],
        by_cost: bool,
        limit: int,
    ) -> tuple[int, list[Shown]]:
        """`ranked` for a job without TP groups (no model) whose domains mostly have one eligible
        profile each (`only`; `eligible` lists the others'), its keys built column by column.

        A fleet's 16,384 nodes (or NVLink islands) are a handful of shapes: a domain inside one node
        of a known class with one eligible profile, all of it, is judged by (class, profile, need),
        once per shape, as the loop in `ranked` judges it, and its rank keys are built in C calls, not
        by a round of dictionary look-ups per domain. The other domains (several profiles, an NVLink
        domain with part of its node's profile) are judged one by one, as there. Only the domains
        shown get a cost and member names.
        """
        count = len(hosts)
        domains = list(map(itemgetter(0), hosts))
        needs = list(map(itemgetter(1), hosts))
        found: list[_Profile | None] = list(map(only.get, domains))
        alike = [p is not None and p[1] is not None and p[2] is not None for p in found]
        in_domain = job.scope == "nvlink_domain"
        odd: dict[int, _Judged] = {}
        if in_domain:
            # An NVLink domain holds all of its one profile's GPUs when it counts as many (the loop's
            # `whole`); one that holds part of it is judged with its own GPUs, as the loop judges it.
            counts = self.count_of
            held = list(map(sizes.get, domains))
            counted = [counts.get(p[3]) if ok and p is not None else None for p, ok in zip(found, alike, strict=True)]
            if held != counted:
                for i in itertools.compress(range(count), map(operator.ne, held, counted)):
                    profile = found[i]
                    if alike[i] and profile is not None:
                        odd[i] = self._judge_part(job, domains[i], needs[i], profile)
                        alike[i] = False
        flats: list[tuple[object, ...] | None] = [
            (p[2], p[1], n) if ok and p is not None else None for p, n, ok in zip(found, needs, alike, strict=True)
        ]
        # The first domain of each shape (the last write of a reversed walk wins): the one the loop judges it on.
        first = dict(zip(reversed(flats), range(count - 1, -1, -1), strict=True))
        first.pop(None, None)
        needs_of = (job.min_fabric_mbps, _fullest_first(job), in_domain)
        judged: dict[tuple[object, ...] | None, _Shape] = {}
        figures: dict[tuple[object, ...] | None, tuple[int, int]] = {}
        for flat, i in first.items():
            node, local_id, cls, key = cast("_Profile", found[i])
            need = needs[i]
            shape: tuple[object, ...] = ((cls,), (local_id,), (need, *needs_of))
            if in_domain:
                shape = (*shape, True)
            done = self._shapes.get(shape)
            if done is None:
                done = self._shapes[shape] = self._shape(job, [key], need, [node])
            judged[flat] = done
            figures[flat] = (_bandwidth_key(done[1], need), done[2])
        # Domains of several profiles, or of one the shape cannot name: judged one by one, as the loop does.
        for i in itertools.compress(range(count), map(operator.not_, alike)):
            domain, need = domains[i], needs[i]
            one = odd.get(i)
            if one is None:
                alone = only.get(domain)
                profiles = (alone,) if alone is not None else eligible.get(domain)
                within = self.gpus_in(domain) if in_domain else None
                one = odd[i] = self._judge(job, domain, need, profiles or [], 1, within, costed=by_cost)
            figures[(i,)] = (_bandwidth_key(one[2], need), one[1])
            flats[i] = (i,)
        figured = list(map(figures.__getitem__, flats))
        # The loop's keys (bandwidth: (bw, count, 0, domain, position); cost: (cost, bw, count, domain,
        # position)) with the figures as one tuple: the same order, the positions keep the keys distinct.
        order: list[tuple[object, ...]]
        if by_cost:
            # Every domain's node for its price; ranked by bandwidth, only the shown domains' (below).
            nodes = [p[0] if p is not None else "" for p in found]
            sized = {flat: len(shape[0]) for flat, shape in judged.items()}
            costs = [
                _BIG if p is None or not n else p * n
                for p, n in zip(map(self.price.get, nodes), map(sized.get, flats), strict=True)
            ]
            for i, one in odd.items():
                costs[i] = one[3] if one[3] is not None else _BIG
            order = list(zip(costs, figured, domains, range(count), strict=True))
        else:
            order = list(zip(figured, domains, range(count), strict=True))
        chosen = heapq.nsmallest(limit, order) if limit else sorted(order)
        shown: list[Shown] = []
        for k in chosen:
            i = cast("int", k[-1])
            if i in odd:
                shown.append(_shown(self._costed(odd[i])))
                continue
            local, worst, members, _tally = judged[flats[i]]
            node = cast("_Profile", found[i])[0]  # judged by its shape: its one profile's node
            price = self.price.get(node)
            cost = price * len(local) if price is not None and local else None
            shown.append(_shown((domains[i], members, worst, cost, (node,), local)))
        return count, shown

    def _judge_part(self, job: Job, domain: str, need: int, profile: _Profile) -> _Judged:
        """An NVLink domain inside one node, with one eligible profile of a known class that it holds
        part of (a node of two NVLink islands), judged as the loop in `ranked` judges it without TP:
        by its shape with which of the node's GPUs are the domain's.
        """
        node, local_id, cls, key = profile
        within = self.gpus_in(domain)
        whole = within.issuperset(self.by_profile.get(key, ()))
        held: object = True if whole else self._local_held([key], within, [node])
        shape = ((cls,), (local_id,), (need, job.min_fabric_mbps, _fullest_first(job), True), held)
        found = self._shapes.get(shape)
        if found is None:
            found = self._shapes[shape] = self._shape(job, [key], need, [node], 1, None if whole else within)
        local, worst, count, _tally = found
        price = self.price.get(node)
        return (domain, count, worst, price * len(local) if price is not None and local else None, (node,), local)

    def _eligible(
        self, job: str, sized: bool
    ) -> tuple[dict[Value, _Profile], dict[Value, list[_Profile]], dict[Value, Value]]:
        """Per domain of `job`, its eligible profiles' info (each row's profile is looked up once):
        per domain its one profile where each domain has one (nodes, most NVLink domains), else
        per domain a list; and if `sized`, per domain the GPUs of its last profile read (its only
        one's, where it has one).

        Read job by job, only for a job that hosts somewhere: a job that fits nowhere still
        has a fleet's worth of rows.
        """
        relation, bound = "place_eligible_profile", {self.e_job: job}
        # Each row's domain, node and GPU count only (a fleet's domains: 16,384 nodes, a row each, per
        # job): the engine decodes three columns, not the twelve with the job asked for. A row of a node
        # with one profile has that profile: found by the node's name, column by column in C calls.
        rows = self.engine.query(relation, bound, False, self.e_short)
        by_node = list(map(self.single.get, map(itemgetter(1), rows)))
        found = cast("list[_Profile]", by_node)
        if None in by_node:
            # The rows of nodes with several profiles (a node with a GPU down) are read again whole,
            # node by node while they are few, and their profiles looked up by their nine columns.
            info, key_of, short = self.info, self.eligible_of, itemgetter(self.e_domain, self.e_node, self.e_count)
            odd = {r[1] for r in itertools.compress(rows, map(operator.not_, by_node))}
            if len(odd) > _FEW_NODES:
                full = self.engine.query(relation, bound, False)
                rows, found = (
                    list(map(short, full)),
                    [self.single.get(str(r[self.e_node])) or info[key_of(r)] for r in full],
                )
            else:
                keep = list(map(operator.truth, by_node))
                rows, found = list(itertools.compress(rows, keep)), list(itertools.compress(found, keep))
                for node in sorted(odd, key=str):
                    for r in self.engine.query(relation, {**bound, self.e_node: node}, False):
                        rows.append(short(r))
                        found.append(info[key_of(r)])
        domains = list(map(itemgetter(0), rows))
        sizes = dict(zip(domains, map(itemgetter(2), rows), strict=True)) if sized else {}  # last wins
        one = dict(zip(domains, found, strict=True))
        if len(one) == len(domains):  # a profile per domain
            return one, {}, sizes
        # A few domains have several (a node with a GPU down and its healthy peers eligible): only theirs
        # are listed; every other domain keeps its one profile in `one`, as `ranked` reads either. A
        # domain has several where a row's profile is not the one its last row left in `one` (two rows
        # of a domain differ in their profile: the rows are distinct, and a profile gives its count).
        several = set(itertools.compress(domains, map(operator.is_not, map(one.__getitem__, domains), found)))
        per_domain: dict[Value, list[_Profile]] = defaultdict(list)
        for i in itertools.compress(range(len(domains)), map(several.__contains__, domains)):
            per_domain[domains[i]].append(found[i])
        for domain in several:
            del one[domain]
        return one, per_domain, sizes

    def _choose_kinds(
        self,
        job: Job,
        hosts: Sequence[tuple[str, int]],
        only: Mapping[Value, _Profile],
        eligible: Mapping[Value, Sequence[_Profile]],
        kinds: Mapping[Value, Sequence[KindOption]],
        by_cost: bool,
        tps: Mapping[str, int] | None,
    ) -> tuple[dict[Value, str], list[tuple[str, int]], Mapping[str, int] | None]:
        """Per hosting domain of several models (`kinds`: the models that host the job there, the
        most eligible GPUs first), the one model the job is placed on, and `hosts` and `tps` with
        that model's need and TP. A job runs on one model, and an expert picks the model whose
        members rank best, as the domains are ranked (bandwidth: the best bottleneck, then the
        fewest nodes; cost: the cheapest, then those): 8 A100 in one node over 8 H100 in two nodes
        of 4 on a shared NIC each. Among equals, `kinds`' order (place_kind: the most eligible
        GPUs, then the smallest name). Only such domains are judged twice; a fleet of one model
        per domain has no `kinds`.
        """
        in_domain, model_at = job.scope == "nvlink_domain", self.model_at
        picked: dict[Value, str] = {}
        needs: dict[str, int] = {}
        tp_of: dict[str, int] = {}
        # Ranked by bandwidth, a domain inside one node of a known class is judged by its model's
        # local profiles, need and TP 1 (the shape `_judge` keys on): a fleet of mixed nodes is a
        # few such shapes, each judged once here.
        seen: dict[tuple[object, ...], tuple[int, ...]] = {}
        for domain, _need in hosts:
            options = kinds.get(domain)
            if not options:
                continue
            best = options[0]
            if len(options) > 1:
                alone = only.get(domain)
                profiles = [alone] if alone is not None else list(eligible.get(domain, ()))
                of_model: dict[str, list[_Profile]] = defaultdict(list)
                for p in profiles:
                    of_model[str(p[3][model_at])].append(p)
                node = profiles[0][0] if profiles else ""
                alike = not (in_domain or by_cost) and all(
                    p[0] == node and p[1] is not None and p[2] is not None for p in profiles
                )
                within = self.gpus_in(domain) if in_domain else None
                best_key: tuple[int, ...] | None = None
                for option in options:
                    model, need, tp = option
                    kept = of_model.get(model)
                    if not kept:  # pragma: no cover - a hosting model has eligible GPUs
                        continue
                    flat = (
                        (model, need, kept[0][2], tuple(sorted(p[1] or 0 for p in kept))) if alike and tp == 1 else None
                    )
                    key = seen.get(flat) if flat is not None else None
                    if key is None:
                        _d, count, worst, cost, _n, _l = self._judge(
                            job, domain, need, kept, tp, within, costed=by_cost
                        )
                        bw = _bandwidth_key(worst, need)
                        key = (cost if cost is not None else _BIG, bw, count) if by_cost else (bw, count)
                        if flat is not None:
                            seen[flat] = key
                    if best_key is None or key < best_key:
                        best, best_key = option, key
            picked[domain], needs[domain], tp_of[domain] = best
        if not picked:
            return picked, list(hosts), tps
        if tps:  # a model job: each hosting domain has its layout's TP, the chosen model's here
            tps = {**tps, **tp_of}
        return picked, [(d, needs.get(d, n)) for d, n in hosts], tps

    def _of_kind(
        self,
        only: Mapping[Value, _Profile],
        eligible: Mapping[Value, Sequence[_Profile]],
        sizes: Mapping[Value, Value],
        kinds: Mapping[Value, str],
    ) -> tuple[dict[Value, _Profile], dict[Value, Sequence[_Profile]], dict[Value, Value]]:
        """`only`, `eligible` and `sizes` with each domain of several models (`kinds`: its one model,
        place_kind) left its profiles of that model alone: a job runs on one accelerator model. Such a
        domain's size (its last row's GPUs) may be another model's, so it is dropped: the domain's
        GPUs are then read (Profiles.domain_gpus), as for any domain that is not whole.
        """
        one, several, sized = dict(only), dict(eligible), dict(sizes)
        for domain, model in kinds.items():
            alone = one.pop(domain, None)
            found = [alone] if alone is not None else list(several.pop(domain, ()))
            sized.pop(domain, None)
            kept = [p for p in found if str(p[3][self.model_at]) == model]
            if len(kept) == 1:
                one[domain] = kept[0]
            elif kept:
                several[domain] = kept
        return one, several, sized

    def _node_eligible(
        self, job: str, hosts: Sequence[tuple[str, int]]
    ) -> tuple[dict[Value, _Profile], dict[Value, list[_Profile]]]:
        """`_eligible` for a job of scope node, from its hosting nodes' names: a hosting node with one
        profile has that one eligible (place_eligible_profile's domain of scope node is the node, and
        a host has an eligible GPU), so only the few nodes of several profiles are read, one by one
        while they are few; more, and every eligible row is read (`_eligible`).
        """
        domains = list(map(itemgetter(0), hosts))
        found = list(map(self.single.get, domains))
        one: dict[Value, _Profile] = dict(zip(domains, cast("list[_Profile]", found), strict=True))
        if None not in found:
            return one, {}
        odd = [d for d, f in zip(domains, found, strict=True) if f is None]
        if len(odd) > _FEW_NODES:
            only, eligible, _sizes = self._eligible(job, False)
            return only, eligible
        per_domain: dict[Value, list[_Profile]] = {}
        info, key_of = self.info, self.eligible_of
        for domain in odd:
            del one[domain]
            rows = self.engine.query("place_eligible_profile", {self.e_job: job, self.e_domain: domain}, False)
            profiles = [info[key_of(r)] for r in rows]
            if len(profiles) == 1:
                one[domain] = profiles[0]
            elif profiles:
                per_domain[domain] = profiles
        return one, per_domain

    def _held(self, keys: Sequence[ProfileKey], within: frozenset[str] | None) -> list[str]:
        """The GPUs of `keys` (profiles), sorted; only those in `within` (an NVLink domain's) if given."""
        held = (g for k in keys for g in self.by_profile.get(k, ()))
        return sorted(held if within is None else (g for g in held if g in within))

    def _local_held(
        self, keys: Sequence[ProfileKey], within: frozenset[str], nodes: Sequence[str]
    ) -> tuple[tuple[int, str], ...]:
        """The GPUs of `keys` (profiles) in `within` (an NVLink domain's) without their nodes' names:
        (index of the node in `nodes`, id under it), sorted; a GPU outside nodes by its id. Which of
        a node's GPUs are the domain's is part of the shape its placement is judged by, per domain
        from its eligible profiles (an NVL72 domain's 72, not every GPU of its 18 nodes each).
        """
        position = {n: i for i, n in enumerate(nodes)}
        found: list[tuple[int, str]] = []
        for key in keys:
            node = str(key[self.key_node])
            at = position[node] if node else -1
            found.extend((at, _local(g, node) if node else g) for g in self.by_profile.get(key, ()) if g in within)
        return tuple(sorted(found))

    def _signature(self, key: ProfileKey) -> tuple[int, ...]:
        """Which GPUs of a profile share a scale-up domain (tp_groups.signature), once per profile."""
        found = self._signatures.get(key)
        if found is None:
            found = self._signatures[key] = signature(self.by_profile.get(key, ()), self.scaleup_of())
        return found

    def _judge(
        self,
        job: Job,
        domain: str,
        need: int,
        eligible: Sequence[_Profile],
        tp: int = 1,
        within: frozenset[str] | None = None,
        *,
        costed: bool = True,
    ) -> _Judged:
        """The domain's members and figures, judged once per shape: the domain's nodes in the
        order their GPUs sort, each with its node class and its eligible profiles without the
        node's name (and which GPUs they hold), plus the need and the job's topology needs.
        Thousands of identical nodes or racks then cost one pick and a price lookup each.
        Not `costed`: a judged shape's cost is left None (a ranking by bandwidth reads none but
        the shown domains', `_costed`); members named without a shape are costed all the same.
        """
        needs: tuple[object, ...] = (need, job.min_fabric_mbps, _fullest_first(job), job.scope == "nvlink_domain")
        keys = [p[3] for p in eligible]
        if tp > 1:  # which eligible GPUs share a scale-up domain decides the groups
            needs = (*needs, tp, signature(self._held(keys, within), self.scaleup_of()))
        ids = [p[1] for p in eligible]
        first = eligible[0][0] if eligible else ""
        if len(eligible) == 1:  # the usual case: a domain inside one node, all alike
            nodes = [first]
            profiles: tuple[object, ...] = (-1 if ids[0] is None else ids[0],)
        elif all(p[0] == first for p in eligible):  # inside one node
            nodes = [first]
            profiles = tuple(sorted(-1 if i is None else i for i in ids))
        else:
            # Sorting by "node/" puts the nodes in the order of their GPUs' ids. Where each node has one
            # eligible profile (a rack or pod of healthy nodes: 4,605 domains, 37,333 profiles at 131,072
            # GPUs), the profiles sorted so give the nodes, and node i's (i, local id) come in order
            # already: no map from node to index and no second sort.
            ordered = sorted(eligible, key=_node_slash)
            nodes = [p[0] for p in ordered]
            if len(set(nodes)) == len(nodes):
                profiles = tuple((i, -1 if p[1] is None else p[1]) for i, p in enumerate(ordered))
            else:
                nodes = sorted(set(nodes), key=lambda n: n + "/")
                index = {n: i for i, n in enumerate(nodes)}
                profiles = tuple(sorted((index[p[0]], -1 if p[1] is None else p[1]) for p in eligible))
        class_of = self.pairs.class_of
        classes = (class_of.get(nodes[0]),) if len(nodes) == 1 else tuple(map(class_of.get, nodes))
        if within is not None:  # which of the nodes' GPUs are the domain's
            needs = (*needs, self._local_held(keys, within, nodes))
        if None in classes or None in ids:
            members, node_of, fabric_of = self._members(job, keys, need, tp, within)
            used = sorted({node_of[g] for g in members})
            worst = self._bottleneck(job, members, used, node_of, fabric_of)
            return (domain, len(used), worst, self._cost(members, node_of), tuple(members), None)
        shape = (classes, profiles, needs)
        found = self._shapes.get(shape)
        if found is None:
            found = self._shapes[shape] = self._shape(job, keys, need, nodes, tp, within)
        local, worst, count, tally = found
        return (domain, count, worst, self._cost_of(nodes, local, tally) if costed else None, nodes, local)

    def _cost_of(self, nodes: Sequence[str], local: _Local, tally: Sequence[tuple[int, int]]) -> int | None:
        """The hourly cost of a shape's members on `nodes` (`tally`: GPUs per node index); None
        without members or where a node they use has no price.
        """
        if len(nodes) == 1:
            price = self.price.get(nodes[0])
            return price * len(local) if price is not None and local else None
        prices = [self.price.get(nodes[i]) for i, _n in tally]
        if not local or None in prices:
            return None
        return sum(p * n for (_i, n), p in zip(tally, prices, strict=True) if p is not None)

    def _costed(self, judged: _Judged) -> _Judged:
        """A judged domain with its cost, where `_judge` left it out (not `costed`: a shape's)."""
        domain, count, worst, cost, nodes, local = judged
        if cost is not None or local is None:
            return judged
        tally: dict[int, int] = defaultdict(int)
        for i, _g in local:
            tally[i] += 1
        return (domain, count, worst, self._cost_of(nodes, local, tuple(tally.items())), nodes, local)

    def _shape(
        self,
        job: Job,
        keys: list[ProfileKey],
        need: int,
        nodes: list[str],
        tp: int = 1,
        within: frozenset[str] | None = None,
    ) -> _Shape:
        """A shape's members (local to `nodes`, the domain's nodes in order), bottleneck, node count and tally."""
        members, node_of, fabric_of = self._members(job, keys, need, tp, within)
        used = sorted({node_of[g] for g in members})
        position = {n: i for i, n in enumerate(nodes)}
        local = tuple((position[node_of[g]], _local(g, node_of[g])) for g in members)
        tally: dict[int, int] = defaultdict(int)
        for i, _g in local:
            tally[i] += 1
        return local, self._bottleneck(job, members, used, node_of, fabric_of), len(used), tuple(tally.items())

    def _members(
        self, job: Job, keys: list[ProfileKey], need: int, tp: int = 1, within: frozenset[str] | None = None
    ) -> tuple[list[str], dict[str, str], dict[str, int]]:
        """The members, with the node and the fabric bandwidth of each candidate GPU; with a TP
        above 1 (a model job), whole TP groups inside scale-up domains (tp_groups). `within`: the
        domain's own GPUs, where the profiles' nodes hold other GPUs too (scope nvlink_domain).
        """
        gpus: list[str] = []
        node_of: dict[str, str] = {}
        fabric_of: dict[str, int] = {}
        for key in keys:
            # A GPU outside nodes (node "", its tag its own id) is a machine of its own, as the rules
            # count it for max_nodes: never one node with the others.
            node, fabric = str(key[self.key_node]) or str(key[self.key_tag]), int(key[self.key_fabric])
            if job.min_fabric_mbps is not None and fabric < job.min_fabric_mbps:
                continue
            held = self.by_profile.get(key, ())
            if within is not None:
                held = tuple(g for g in held if g in within)
            gpus.extend(held)
            node_of.update(dict.fromkeys(held, node))
            fabric_of.update(dict.fromkeys(held, fabric))
        gpus.sort()
        if tp > 1:
            members = tp_members(gpus, need, tp, node_of, self.scaleup_of(), bool(_fullest_first(job)))
        elif job.min_nodes is not None:
            members = _spread(gpus, need, node_of, job.min_nodes)
        else:
            members = _fewest_nodes(gpus, need, node_of) if _fullest_first(job) else gpus[:need]
        return members, node_of, fabric_of

    def _bottleneck(
        self, job: Job, members: list[str], nodes: list[str], node_of: dict[str, str], fabric_of: dict[str, int]
    ) -> int | None:
        """Worst pair of members: inside each node its GPU pair bottleneck, between nodes the
        fabric (the narrower GPU's way into it), except inside one NVLink domain.
        """
        worst: int | None = None
        if len(members) > 1:
            per: dict[str, list[str]] = defaultdict(list)
            for g in members:
                per[node_of[g]].append(g)
            for n in nodes:
                m = self._node_worst(n, per[n])
                if m is not None and (worst is None or m < worst):
                    worst = m
        if len(nodes) > 1 and job.scope != "nvlink_domain":
            fabric = min(fabric_of[g] for g in members)
            worst = fabric if worst is None else min(worst, fabric)
        return worst

    def _node_worst(self, node: str, members: list[str]) -> int | None:
        """Worst pair among members of one node, memoised per (node class, member names)."""
        if len(members) < 2:
            return None
        cls = self.pairs.class_of.get(node)
        if cls is None:
            return None
        key = (cls, tuple(_local(g, node) for g in members))
        if key not in self._worst:
            self._worst[key] = self.pairs.worst(node, members)
        return self._worst[key]

    def _cost(self, members: list[str], node_of: dict[str, str]) -> int | None:
        prices = [self.price.get(node_of[g]) for g in members]
        if not members or any(p is None for p in prices):
            return None
        return sum(p for p in prices if p is not None)


def _bandwidth_key(worst: int | None, need: int) -> int:
    """A domain's bandwidth rank key (smaller first): no bottleneck is best for a lone GPU (no pair to
    bound it) and last for members that share no path at all, as what-if reads them (whatif.py: -1).
    """
    return -(worst if worst is not None else (_BIG if need <= 1 else 0))


def _shown(judged: _Judged) -> Shown:
    """A judged domain with its members named."""
    domain, count, worst, cost, nodes, local = judged
    members = tuple(nodes) if local is None else tuple(_global(g, nodes[i]) for i, g in local)
    return (domain, members, count, worst, cost)


def _node_slash(profile: _Profile) -> str:
    """A profile's sort key by its node: the name and "/", which orders nodes as their GPUs' ids sort
    ("n1/" before "n10/", as "n1/gpu0" before "n10/gpu0").
    """
    return profile[0] + "/"


def _fullest_first(job: Job) -> bool | tuple[str, int]:
    """Whether members come from the fullest nodes first: the rules judged max_nodes and
    min_pair_mbps (pairs across nodes cross the fabric) on such a choice. A job of min_nodes
    takes an equal share from that many nodes instead (`_spread`): ("spread", min_nodes), which
    also keeps its shapes apart from the others' (this is part of every shape's key).
    """
    if job.min_nodes is not None:
        return ("spread", job.min_nodes)
    return job.max_nodes is not None or job.min_pair_mbps is not None


def _spread(gpus: list[str], need: int, node: dict[str, str], nodes: int) -> list[str]:
    """The members: need / nodes GPUs from each of `nodes` nodes holding that many, the fullest
    first (ties by node name), as the rules judged min_nodes (place_nodes_spread); the fullest
    nodes first if fewer hold the share (the rules then did not host the domain).
    """
    share = need // nodes
    per: dict[str, list[str]] = defaultdict(list)
    for g in gpus:
        per[node[g]].append(g)
    holding = sorted((n for n in per if len(per[n]) >= share), key=lambda n: (-len(per[n]), n))
    if share < 1 or len(holding) < nodes:
        return _fewest_nodes(gpus, need, node)
    return sorted(g for n in holding[:nodes] for g in per[n][:share])


def _fewest_nodes(gpus: list[str], need: int, node: dict[str, str]) -> list[str]:
    """The first `need` GPUs taking the fullest nodes first (ties by node name)."""
    per: dict[str, list[str]] = defaultdict(list)
    for g in gpus:
        per[node[g]].append(g)
    out: list[str] = []
    for n in sorted(per, key=lambda n: (-len(per[n]), n)):
        out.extend(per[n][: need - len(out)])
        if len(out) >= need:
            break
    return sorted(out)


def _why_not(
    engine: Backend, program: Program, jobs: Jobs, authorization: PolicyReasons | None
) -> dict[str, list[WhyNot]]:
    out: dict[str, list[WhyNot]] = defaultdict(list)
    why = Columns.of(program, "place_why_not", ("job", "domain", "what", "have", "need"))
    picked = row_getter(why, ("job", "domain", "what", "have", "need"))
    rows = sorted((picked(r) for r in engine.query("place_why_not")), key=lambda r: (str(r[0]), str(r[1])))
    deniers = Deniers(engine, program, authorization)
    # A MIG job's domain of several models is judged on one model at every stage (hosts.dl's
    # place_why_kind): its counts are that model's GPUs, and the sentence names it.
    kind = Columns.of(program, "place_why_kind", ("job", "domain", "model"))
    k_job, k_domain, k_model = kind.index["job"], kind.index["domain"], kind.index["model"]
    judged_on = {
        (str(r[k_job]), str(r[k_domain])): str(r[k_model]) for r in engine.query("place_why_kind", None, False)
    }
    for j, d, what, have, need in rows:
        job = jobs.jobs.get(str(j))
        if job is None:  # pragma: no cover - every job row comes from `jobs`
            continue
        model = judged_on.get((str(j), str(d)))
        msg = why_not_message(job, str(d), str(what), int(have), int(need), deniers, model)
        out[job.name].append(WhyNot(str(d), str(what), int(have), int(need), msg))
    return out


def _size(mb: int) -> str:
    return f"{mb / 1000:g} GB"


def rate_text(mbps: int) -> str:
    return f"{mbps / 1000:g} GB/s"


def _software(job: Job) -> str:
    return " or ".join(" ".join(f"{c}>={v // 1000}.{v % 1000}" for c, v in o.requires) for o in job.stack)


def _hbm(job: Job) -> str:
    if job.mig is not None:
        return f"whose MIG {job.mig} instances have at least {_size(job.min_hbm_mb or 0)}"
    return f"with at least {_size(job.min_hbm_mb or 0)} HBM"


_HAVING: dict[str, Callable[[Job], str]] = {
    "gpus": lambda job: "",
    "model": lambda job: f" of an accepted model ({', '.join(job.accepts)})",
    "mig": lambda job: f" that can be cut into MIG {job.mig} instances",
    "hbm": lambda job: f" {_hbm(job)}",
    "hbm_bandwidth": lambda job: f" with at least {rate_text(job.min_hbm_mbps or 0)} memory bandwidth",
    "fp64": lambda job: " with full-rate FP64",
    "one_model": lambda job: " of its most eligible model (a job runs on one accelerator model)",
    "excluded": lambda job: f" without an excluded label ({', '.join(f'{k}={v}' for k, v in job.exclude)})",
    "healthy": lambda job: " in service (not down, drained or cut off from its host)",
    "software": lambda job: f" on nodes with the software ({_software(job)})",
    "rail_aligned": lambda job: " on nodes whose GPUs each reach the fabric through a NIC of their own rail",
    "min_fabric_mbps": lambda job: f" reach the fabric at {rate_text(job.min_fabric_mbps or 0)} or more",
    "layout": lambda job: f" whose memory and scale-up domain hold a TP x PP layout of the model ({_layout_rule(job)})",
    "tp_groups": lambda job: " in whole TP groups, each inside one scale-up domain",
}
"""Per requirement counted in GPUs: what the domain's GPUs that pass it have ("8 GPUs <this>")."""


def _layout_rule(job: Job) -> str:
    """What a layout may be, for the why-not of the layout stage."""
    if job.model is None:  # pragma: no cover - only jobs with a model have the layout stage
        return "no model"
    tps = tp_sizes(job.model)
    stages = max(pp_sizes(job.model))
    least = min(layouts(job.model), key=lambda lay: (lay.gpu_mb, lay.tp, lay.pp))
    return (
        f"TP may be {', '.join(map(str, tps))}: {heads_text(job.model)}, inside one scale-up domain; "
        f"PP up to {stages}; the least any layout needs is {_size(least.gpu_mb)} a GPU, "
        f"at TP={least.tp} x PP={least.pp}"
    )


def why_not_message(
    job: Job, domain: str, what: str, have: int, need: int, deniers: Deniers | None = None, model: str | None = None
) -> str:
    """One sentence: the domain, what it has for the first requirement it fails, and what the job needs.
    `model`: the one model the counts are of, where the domain holds several (place_why_kind).
    """
    gpus = f"{have} {model + ' ' if model else ''}GPU{'s' if have != 1 else ''}"
    tail = f"job needs {need}"
    having = _HAVING.get(what)
    if having is not None:
        return f"{domain}: {gpus}{having(job)}, {tail}"
    if what == "authorization":
        policies = deniers.policies(job, domain) if deniers is not None else ()
        named = [x for x in policies if x != "(no permit)"]
        if named:
            return f"{domain}: policy {', '.join(named)} denies {job.principal} ({gpus} it may schedule on, {tail})"
        if policies:
            return f"{domain}: no policy permits {job.principal} to schedule ({gpus} allowed, {tail})"
        return f"{domain}: {job.principal} may schedule on {gpus}, {tail}"
    if what == "max_nodes":
        return f"{domain}: {job.max_nodes} node{'s' if job.max_nodes != 1 else ''} hold at most {gpus}, {tail}"
    if what == "min_pair_mbps":
        return f"{domain}: worst GPU pair {rate_text(have)}, job needs {rate_text(need)}"
    if what == "min_nodes":
        share = job.gpus // need if need else job.gpus
        # A MIG job's gpus count instances (a node holds its share on as many GPUs as that takes).
        unit = f"MIG {job.mig} instance" if job.mig is not None else "eligible GPU"
        held = f"{share} {unit}{'s' if share != 1 else ''}"
        return f"{domain}: {have} {'node holds' if have == 1 else 'nodes hold'} {held} each, job needs {need}"
    if what == "layout_mixed":
        return (
            f"{domain}: its {gpus} that each hold a layout share none: the smallest memory and the smallest "
            "scale-up domain among them, taken together, hold no TP x PP layout of the model"
        )
    return f"{domain}: {what} {have}, {tail}"  # pragma: no cover - every requirement is named above


class Deniers:
    """The policies that deny a job's principal scheduling on a domain's GPUs (asked lazily, once per domain)."""

    def __init__(self, engine: Backend, program: Program, authorization: PolicyReasons | None) -> None:
        self.engine = engine
        self.authorization = authorization
        self.domain_gpu = Columns.of(program, "place_domain_gpu", ("domain", "gpu"))

    def policies(self, job: Job, domain: str) -> tuple[str, ...]:
        if self.authorization is None:
            return ()
        cols = self.domain_gpu
        rows = self.engine.query("place_domain_gpu", {cols.index["domain"]: domain})
        gpus = [str(cols("gpu", r)) for r in rows][:64]
        return self.authorization.denying(job.principal, gpus)
