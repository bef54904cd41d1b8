"""`topolog place` as text and as JSON."""

from __future__ import annotations

import json
from fractions import Fraction

from verifier.placement.place import JobPlacements, PlaceReport, ReplicaLayout, rate_text
from verifier.reports.text_report import NOT_AUTHORIZED
from verifier.sources.jobs.layout import Layout, heads_text, layouts, tp_sizes
from verifier.sources.jobs.memory import ceil_mb, replica_memory
from verifier.sources.jobs.spec import Job, ModelSpec


def _mb(mb: int) -> str:
    return f"{mb:,} MB"


def _fraction(value: Fraction) -> str:
    return f"{float(value):g}"


def _params(n: int) -> str:
    for scale, suffix in ((10**12, "T"), (10**9, "B"), (10**6, "M")):
        if n >= scale and n % (scale // 10) == 0:
            return f"{n / scale:g}{suffix}"
    return f"{n:,}"


def memory_line(model: ModelSpec) -> str:
    """How one replica's memory was sized: its parts and the total."""
    need = replica_memory(model)
    if model.mode == "training":
        parts = f"{model.optimizer} training state {_mb(need.weights_mb)}"
    else:
        parts = f"{model.weight_precision} weights {_mb(need.weights_mb)}"
        if need.kv_cache_bytes:
            parts += f" + KV cache {_mb(need.kv_cache_mb)}"
    activations = ceil_mb(need.activations_bytes)
    reserve = 1 - model.gpu_memory_utilization
    return (
        f"memory: {_params(model.parameters)} parameters, {parts} + activations {_mb(activations)} "
        f"= {_mb(need.total_mb)} per replica; each GPU keeps {_fraction(reserve * 100)}% free "
        f"(gpu_memory_utilization {_fraction(model.gpu_memory_utilization)})"
    )


def _chosen(model: ModelSpec, layout: ReplicaLayout) -> tuple[Layout, Layout | None]:
    """The layout the rules chose, and the one just before it in their order that did not fit."""
    options = sorted(layouts(model), key=lambda lay: (lay.pp, lay.tp))
    chosen = next(lay for lay in options if (lay.tp, lay.pp) == (layout.tp, layout.pp))
    earlier = [
        lay
        for lay in options
        if (lay.pp, lay.tp) < (chosen.pp, chosen.tp) and lay.tp <= layout.scaleup_gpus and lay.tp >= chosen.tp // 2
    ]
    return chosen, (earlier[-1] if earlier else None)


def layout_line(job: Job, layout: ReplicaLayout) -> str:
    """How the GPUs per replica were derived on one kind of domain."""
    model = job.model
    assert model is not None
    chosen, before = _chosen(model, layout)
    tps = ", ".join(map(str, tp_sizes(model)))
    domain = f"{layout.scaleup_gpus}-GPU scale-up domain{'s' if layout.scaleup_gpus != 1 else ''}"
    why = f"TP may be {tps}: {heads_text(model)}; TP={chosen.tp} fits the {domain}"
    if before is not None:
        why += f"; TP={before.tp} x PP={before.pp} would need {_mb(before.gpu_mb)}"
    replicas = job.replicas or 1
    return (
        f"layout on {_mb(layout.hbm_mb)} GPUs: TP={chosen.tp} x PP={chosen.pp} = {chosen.gpus} GPU"
        f"{'s' if chosen.gpus != 1 else ''} per replica x {replicas} replica{'s' if replicas != 1 else ''}; "
        f"{_mb(chosen.share_mb)} per GPU / {_fraction(model.gpu_memory_utilization)} = {_mb(chosen.gpu_mb)} "
        f"<= {_mb(layout.hbm_mb)} ({why})"
    )


def render_text(report: PlaceReport) -> str:
    lines: list[str] = []
    for jp in report.jobs:
        job = jp.job
        size = f"{job.gpus} MIG {job.mig} instances" if job.mig is not None else f"{job.gpus} GPUs"
        if job.model is not None:
            replicas = job.replicas or 1
            size = f"{replicas} replica{'s' if replicas != 1 else ''}" + (
                f", at least {job.gpus} GPUs" if job.gpus_declared else ""
            )
        lines.append(
            f"job {job.name} ({job.principal}, {size}, scope {job.scope}): "
            f"{jp.hosting} placement{'s' if jp.hosting != 1 else ''}"
            f" of {jp.candidates} candidate domains"
            + (f" (the best {len(jp.placements)} shown)" if len(jp.placements) < jp.hosting else "")
        )
        if job.model is not None:
            lines.append(f"  {memory_line(job.model)}")
            lines.extend(f"  {layout_line(job, lay)}" for lay in jp.layouts)
        # A scheduler's spec says more than topolog judges (CPU, images, tolerations): said, never dropped.
        lines.extend(f"  note: {n}" for n in job.notes)
        # A job that can never run is PLACE002's (as `verify --jobs` reports it), with the reason:
        # no drain, repair or permit would place it, unlike PLACE001's "not now".
        lines.extend(f"  error PLACE002: can never run on any node: {reason}" for reason in jp.never)
        if not jp.placements and not jp.never:
            lines.append("  error PLACE001: fits nowhere")
        for i, p in enumerate(jp.placements, 1):
            bw = rate_text(p.bottleneck_mbps) if p.bottleneck_mbps is not None else "n/a"
            cost = f"${p.cost_millicents_per_hour / 100_000:.2f}/h" if p.cost_millicents_per_hour is not None else "n/a"
            shape = f", TP={p.layout.tp} x PP={p.layout.pp} per replica" if p.layout is not None else ""
            lines.append(
                f"  {i}. {p.domain}: bottleneck {bw}, {p.nodes} node{'s' if p.nodes != 1 else ''}, {cost}{shape}"
            )
            lines.append(f"     gpus: {', '.join(p.gpus)}")
        for w in jp.why_not:
            lines.append(f"  why not {w.message}")
    placed = sum(1 for jp in report.jobs if jp.placements)
    lines.extend(f"note: {n}" for n in report.notes)
    lines.append(f"{placed} of {len(report.jobs)} jobs placeable (ranked by {report.rank})")
    if not report.authorization_checked:
        lines.append(NOT_AUTHORIZED)
    return "\n".join(lines) + "\n"


def render_json(report: PlaceReport) -> str:
    return json.dumps(place_doc(report), indent=2, sort_keys=False) + "\n"


def place_doc(report: PlaceReport) -> dict[str, object]:
    """The JSON document of `render_json`, as Python values (the service answers with it)."""
    return {
        "rank": report.rank,
        "authorizationChecked": report.authorization_checked,
        "jobs": [
            {
                "job": jp.job.name,
                "principal": jp.job.principal,
                "gpus": jp.job.gpus,
                "mig": jp.job.mig,
                "scope": jp.job.scope,
                "model": _model_doc(jp),
                "candidates": jp.candidates,
                "hosting": jp.hosting,
                "placeable": bool(jp.placements),
                "never": list(jp.never),
                "placements": [p.to_dict() for p in jp.placements],
                "why_not": [w.to_dict() for w in jp.why_not],
                "notes": [str(n) for n in jp.job.notes],
            }
            for jp in report.jobs
        ],
        "unplaceable": report.unplaceable,
        "notes": [str(n) for n in report.notes],
    }


def _model_doc(jp: JobPlacements) -> dict[str, object] | None:
    """A job's memory sizing and, per kind of domain shown, its layout and how it was derived."""
    model = jp.job.model
    if model is None:
        return None
    need = replica_memory(model)
    return {
        "replica_mb": need.total_mb,
        "weights_mb": need.weights_mb,
        "kv_cache_mb": need.kv_cache_mb,
        "gpu_memory_utilization": float(model.gpu_memory_utilization),
        "attention_heads": model.attention_heads,
        "kv_heads": model.kv_heads,
        "tp_sizes": list(tp_sizes(model)),
        "derivation": [memory_line(model), *(layout_line(jp.job, lay) for lay in jp.layouts)],
    }


FORMATS = {"text": render_text, "json": render_json}
