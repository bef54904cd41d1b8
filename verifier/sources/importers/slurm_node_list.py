"""Slurm's node list (slurm.conf NodeName lines, `scontrol show nodes`) laid onto the imported nodes.

For every node Slurm lists: `slurm_gres` (the Gres as written), the quantity `slurm_gres_gpus` (its
`gpu` items added up; no Gres is 0), `slurm_state` and `slurm_reason` (scontrol's). When the
controller's view (scontrol) and slurm.conf are both given, scontrol's Gres is the one Slurm
schedules with now: it is kept, and a difference from slurm.conf is a note.

Laid onto an inventory (its nodes matched by name, never by position), a node of the inventory also
gets `slurm_node_source` (so SCHED005 compares its Gres count with the GPUs described) and, when its
Gres type is the product name Slurm's `AutoDetect=nvml` writes (`nvidia_h100_80gb_hbm3`), the model
that names (`slurm_gres_model`, SCHED004). A type a site chose (`h100`, `a100_80g`) names no product:
a note says the model is not compared. Membership is marked for SCHED006 (verifier.sources.importers
.node_lists).
"""

from __future__ import annotations

from types import MappingProxyType

from verifier.core.errors import SourceLocation
from verifier.sources.importers.build import Builder
from verifier.sources.importers.gpu_names import model_for_product
from verifier.sources.importers.node_lists import mark_missing
from verifier.sources.importers.slurm_conf import SlurmConf
from verifier.sources.importers.slurm_nodes import GresError, NodeRecord, gpu_gres


def node_list(b: Builder, conf: SlurmConf | None, records: dict[str, NodeRecord], onto: set[str]) -> None:
    listed: dict[str, tuple[SourceLocation, str | None]] = {}
    if conf is not None:
        for host, loc in conf.nodes.items():
            listed[host] = (loc, conf.gres.get(host, "(null)"))
    for host, rec in records.items():
        said = rec.fields.get("gres")
        before = listed.get(host)
        if before is not None and said is not None and before[1] != said and _count(before[1]) != _count(said):
            b.note(rec.loc, f"{host}: scontrol says Gres={said}, slurm.conf ({before[0]}) Gres={before[1]}: scontrol's")
        listed[host] = (rec.loc, said if said is not None else (before[1] if before else None))
    for host, (loc, spec) in sorted(listed.items()):
        obj = b.inv.objects.get(host)
        if obj is None:
            obj = b.obj(host, "node", None, loc, labels={"source": str(loc), "imported_from": "slurm"})
        elif obj.kind != "node":
            b.error(loc, f"Slurm node {host} is a {obj.kind} in the inventory ({obj.loc})")
            continue
        labels = dict(obj.labels)
        quantities = dict(obj.quantities)
        record = records.get(host)
        if record is not None:
            for key in ("state", "reason", "partitions"):
                if record.fields.get(key):
                    labels[f"slurm_{key}"] = record.fields[key]
        if onto and host not in onto:
            labels["node_list_extra"] = str(loc)
        if spec is not None:
            try:
                gpus = gpu_gres(spec)
            except GresError as err:
                b.error(loc, f"{host}: {err}")
                continue
            labels["slurm_gres"] = spec
            quantities["slurm_gres_gpus"] = sum(n for _, n in gpus)
            if host in onto:
                labels["slurm_node_source"] = str(loc)
                labels.update(_claim(b, loc, host, gpus))
        obj.labels = MappingProxyType(labels)
        obj.quantities = MappingProxyType(quantities)
    if onto and listed:
        mark_missing(b.inv, listed, ", ".join(sorted({loc.file for loc, _ in listed.values()})))


def _count(spec: str | None) -> int | None:
    try:
        return sum(n for _, n in gpu_gres(spec)) if spec is not None else None
    except GresError:
        return None


def _claim(b: Builder, loc: SourceLocation, host: str, gpus: list[tuple[str | None, int]]) -> dict[str, str]:
    types = sorted({t for t, _ in gpus if t is not None})
    if len(types) != 1:
        if len(types) > 1:
            b.note(loc, f"{host}: Gres names several GPU types ({', '.join(types)}): the GPU model is not compared")
        return {}
    model = model_for_product(types[0])
    if model is None:
        b.note(loc, f"{host}: Gres type {types[0]!r} is a site's name, not a product name: the model is not compared")
        return {}
    count = sum(n for _, n in gpus)
    return {"slurm_gres_model": model, "slurm_gres_model_said": f"Gres=gpu:{types[0]}:{count}"}
