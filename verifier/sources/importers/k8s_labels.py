"""Kubernetes node labels (`kubectl get nodes -o json`) as what the scheduler believes about each node.

Read, as GPU Feature Discovery and NVIDIA topograph write them:

- `nvidia.com/gpu.product` -> label `k8s_gpu_product`; `nvidia.com/gpu.count` -> quantity `k8s_gpu_count`;
- `nvidia.com/gpu.clique` (the multi-node NVLink clique, `<cluster uuid>.<clique id>`) -> `k8s_gpu_clique`;
- `network.topology.nvidia.com/accelerator` (the NVLink domain) -> `k8s_nvlink_domain`;
- `network.topology.nvidia.com/<tier>` (leaf, spine, core, block, datacenter, tier-N) -> `k8s_topology.<tier>`.

- the GPU model that `nvidia.com/gpu.product` or AMD's `amd.com/gpu.device-id` names -> `k8s_gpu_model`
  (verifier.sources.importers.gpu_names; a name it cannot resolve is a note);
- `status.capacity` / `status.allocatable` of `nvidia.com/gpu` and `amd.com/gpu` -> quantities
  `k8s_gpu_capacity`, `k8s_gpu_allocatable` (time-slicing replicas divided back; MIG not counted);
- `spec.taints` -> `k8s_taints`; `topology.kubernetes.io/zone` / `region` -> `k8s_zone`, `k8s_region`.

Other labels are not topology and are not read (one note says how many). Each Node becomes a `node`
object; when topolog inventories are given among the files, the labels are added to their nodes
instead (matched by name), so that SCHED001-SCHED008 check the scheduler's view against the inventory,
and the node lists' membership is marked (verifier.sources.importers.node_lists). A value that cannot
be read (a gpu.count or a capacity that is not a whole number) is an error.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from pathlib import Path
from types import MappingProxyType
from typing import Any

from verifier.core.errors import SourceLocation
from verifier.core.exact_json import InexactJSON, loads_exact
from verifier.core.limits import current_limits
from verifier.sources.importers.build import Builder, Imported, read_tool_text, whole
from verifier.sources.importers.gpu_names import model_for_amd_device, model_for_product
from verifier.sources.importers.node_lists import mark_missing

GFD = "nvidia.com/"
TOPOGRAPH = "network.topology.nvidia.com/"
AMD_DEVICE = ("amd.com/gpu.device-id", "beta.amd.com/gpu.device-id")
AMD_PRODUCT = ("amd.com/gpu.product-name", "beta.amd.com/gpu.product-name")
GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
ZONE_LABELS = {"topology.kubernetes.io/zone": "k8s_zone", "topology.kubernetes.io/region": "k8s_region"}
_TIERS = re.compile(r"^(leaf|spine|core|block|datacenter|zone|tier-\d+)$")


def import_k8s_labels(paths: list[Path]) -> Imported:
    b = Builder([str(p) for p in paths])
    sources: list[tuple[Path, str]] = []
    inventories: list[Path] = []
    for path in paths:
        text = read_tool_text(path)
        if text.lstrip().startswith("{"):
            sources.append((path, text))
        else:
            inventories.append(path)
    onto = bool(inventories)
    if inventories:
        from verifier.sources.inventory.loader import load_inventory

        loaded = load_inventory(inventories)
        b.inv = loaded
    seen: dict[str, SourceLocation] = {}
    for path, text in sources:
        _read(b, path, text, seen, onto)
    if onto:
        # SCHED006 reports a host the inventory describes and the scheduler does not list.
        mark_missing(b.inv, seen, str(sources[0][0]) if sources else str(inventories[0]))
    return b.finish()


def _line_of(
    text: str, needle: str, start: int, key: str | None = None, newlines: list[int] | None = None
) -> tuple[int, int]:
    """1-based line of the first `needle` (as `"key": needle` when a key is given) at or after `start`
    (JSON keeps no positions), and where it is. `newlines`: the text's newline offsets, so that a
    list of thousands of Nodes is not counted from its start for every label.
    """
    pattern = re.escape(needle) if key is None else re.escape(json.dumps(key)) + r"\s*:\s*" + re.escape(needle)
    m = re.compile(pattern).search(text, start)
    if m is None:
        return 0, start
    if newlines is None:
        return text.count("\n", 0, m.start()) + 1, m.start()
    return bisect_left(newlines, m.start()) + 1, m.start()


def _read(b: Builder, path: Path, text: str, seen: dict[str, SourceLocation], onto: bool) -> None:
    file = str(path)
    try:
        doc = loads_exact(text)
    except json.JSONDecodeError as err:
        b.error(
            SourceLocation(file, err.lineno, err.colno),
            f"not valid JSON: {err.msg}; expected `kubectl get nodes -o json`",
        )
        return
    except InexactJSON as err:
        b.error(SourceLocation(file, 1), f"{err}; expected `kubectl get nodes -o json`")
        return
    except RecursionError:
        b.error(
            SourceLocation(file, 1),
            f"JSON nested deeper than it can be read; expected at most nesting_depth = "
            f"{current_limits().nesting_depth} levels (`kubectl get nodes -o json`)",
        )
        return
    except ValueError:  # an integer of more digits than Python converts (4,300)
        b.error(SourceLocation(file, 1), "not valid JSON: a number has more digits than can be read")
        return
    items: list[Any]
    if isinstance(doc, dict) and doc.get("kind") == "Node":
        items = [doc]
    elif isinstance(doc, dict) and isinstance(doc.get("items"), list):
        items = doc["items"]
    else:
        b.error(SourceLocation(file, 1), "expected a Node or a List of Nodes (`kubectl get nodes -o json`)")
        return
    pos, skipped = 0, 0
    newlines = [m.start() for m in re.finditer("\n", text)]
    for k, item in enumerate(items):
        meta = item.get("metadata") if isinstance(item, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or not isinstance(name, str) or not name:
            b.error(SourceLocation(file, 1), f"items[{k}] has no metadata.name; expected a Node")
            continue
        start = pos  # this item's text starts after the previous item's name (kubectl sorts labels before name)
        line, pos = _line_of(text, json.dumps(name), pos, key="name", newlines=newlines)
        loc = SourceLocation(file, line)
        if name in seen:
            b.error(loc, f"node {name!r} is listed twice (first at {seen[name]})")
            continue
        seen[name] = loc
        raw = meta.get("labels") or {}
        if not isinstance(raw, dict):
            b.error(loc, f"metadata.labels of {name} is not a mapping")
            continue
        labels: dict[str, str] = {}
        quantities: dict[str, int] = {}
        for key in sorted(raw):
            value = raw[key]
            if not isinstance(value, str):
                b.error(loc, f"label {key} of {name} is {value!r}; Kubernetes label values are strings")
                continue
            vline, _ = _line_of(text, json.dumps(key), start, newlines=newlines)
            vloc = SourceLocation(file, vline or line)
            if key == GFD + "gpu.product":
                labels["k8s_gpu_product"] = value
                _claim(b, vloc, labels, key, value, model_for_product(value))
            elif key in AMD_DEVICE:
                _claim(b, vloc, labels, key, value, model_for_amd_device(value))
            elif key in AMD_PRODUCT:
                labels.setdefault("k8s_gpu_product", value)
            elif key == GFD + "gpu.replicas" or key == GFD + "mig.strategy":
                labels["k8s_" + key[len(GFD) :].replace(".", "_")] = value
            elif key in ZONE_LABELS:
                labels[ZONE_LABELS[key]] = value
            elif key == GFD + "gpu.count":
                count = whole(value)
                if count is None:
                    b.error(vloc, f"{key} of {name} is {value!r}; expected a whole number of GPUs")
                else:
                    quantities["k8s_gpu_count"] = count
            elif key == GFD + "gpu.clique":
                labels["k8s_gpu_clique"] = value
            elif key == TOPOGRAPH + "accelerator":
                labels["k8s_nvlink_domain"] = value
            elif key.startswith(TOPOGRAPH):
                tier = key[len(TOPOGRAPH) :]
                if _TIERS.match(tier):
                    labels[f"k8s_topology.{tier}"] = value
                else:
                    b.note(vloc, f"{key} is not a topograph tier topolog knows (leaf, spine, core, block, tier-N)")
            else:
                skipped += 1
        # GFD counts MIG devices, not GPUs, once MIG is on: gpu.count 7 on one A100 cut into 1g.5gb slices.
        if _mig_in_use(item, labels) and quantities.pop("k8s_gpu_count", None) is not None:
            b.note(loc, f"{name} uses MIG: its nvidia.com/gpu.count counts MIG devices and is not compared")
        _status(b, item, name, loc, labels, quantities)
        _taints(b, item, name, loc, labels)
        _attach(b, name, loc, labels, quantities, onto)
    if skipped:
        b.note(SourceLocation(file), f"{skipped} other node labels are not about GPU topology and are not read")


def _attach(
    b: Builder, name: str, loc: SourceLocation, labels: dict[str, str], quantities: dict[str, int], onto: bool
) -> None:
    obj = b.inv.objects.get(name)
    if obj is None:
        # Laid onto an inventory, a node it does not describe is SCHED006's finding (node_list_extra).
        extra = {"node_list_extra": str(loc)} if onto else {}
        b.obj(
            name,
            "node",
            None,
            loc,
            labels={"source": str(loc), "imported_from": "kubernetes", **labels, **extra},
            quantities=quantities,
        )
        return
    if obj.kind != "node":
        b.error(loc, f"Kubernetes node {name} is a {obj.kind} in the inventory ({obj.loc})")
        return
    obj.labels = MappingProxyType({**obj.labels, **labels, "k8s_source": str(loc)})
    obj.quantities = MappingProxyType({**obj.quantities, **quantities})


def _claim(b: Builder, loc: SourceLocation, labels: dict[str, str], key: str, value: str, model: str | None) -> None:
    """The catalogue model a product label names, for SCHED004; a name topolog cannot match is said, not guessed."""
    if model is None:
        b.note(loc, f"{key}={value} names no GPU model of topolog's catalogue: the GPU model is not compared")
        return
    labels["k8s_gpu_model"] = model
    labels["k8s_gpu_model_said"] = f"{key}={value}"


def _status(
    b: Builder, item: Any, name: str, loc: SourceLocation, labels: dict[str, str], quantities: dict[str, int]
) -> None:
    """status.capacity / status.allocatable GPUs (the device plugins' resources), as quantities for SCHED005.

    Time-slicing (label nvidia.com/gpu.replicas=N) advertises N per GPU: divided back. With MIG on, the
    resources count MIG instances, not GPUs: not compared, and said so.
    """
    status = item.get("status") if isinstance(item, dict) else None
    if not isinstance(status, dict):
        return
    for part in ("capacity", "allocatable"):
        table = status.get(part)
        if table is None:
            continue
        if not isinstance(table, dict):
            b.error(loc, f"status.{part} of {name} is not a mapping; expected resource: quantity")
            continue
        if _mig_in_use(item, labels):
            b.note(loc, f"{name} advertises MIG instances: its status.{part} GPUs are not compared")
            continue
        total: int | None = None
        for res in GPU_RESOURCES:
            if res not in table:
                continue
            count = whole(str(table[res])) if isinstance(table[res], (str, int)) else None
            if count is None:
                b.error(loc, f"status.{part}[{res}] of {name} is {table[res]!r}; expected a whole number of GPUs")
                return
            total = (total or 0) + count
        if total is None:
            continue
        replicas = whole(labels.get("k8s_gpu_replicas", "1")) or 1
        if total % replicas:
            b.note(
                loc, f"{name}: status.{part} GPUs ({total}) is no multiple of gpu.replicas ({replicas}): not compared"
            )
            continue
        quantities[f"k8s_gpu_{part}"] = total // replicas


def _taints(b: Builder, item: Any, name: str, loc: SourceLocation, labels: dict[str, str]) -> None:
    """spec.taints as `key=value:Effect` (sorted, comma-separated): kept for job readers, judged by no check."""
    spec = item.get("spec") if isinstance(item, dict) else None
    taints = spec.get("taints") if isinstance(spec, dict) else None
    if taints is None:
        return
    if not isinstance(taints, list) or not all(isinstance(t, dict) and isinstance(t.get("key"), str) for t in taints):
        b.error(loc, f"spec.taints of {name} is not a list of {{key, value, effect}}")
        return
    written = sorted(
        f"{t['key']}{'=' + str(t['value']) if t.get('value') else ''}:{t.get('effect', '')}" for t in taints
    )
    labels["k8s_taints"] = ",".join(written)


def _mig_in_use(item: Any, labels: dict[str, str]) -> bool:
    """MIG slices are what the node advertises: GFD's product ends `-MIG-<profile>` (the single strategy), or
    the device plugin lists `nvidia.com/mig-<profile>` resources (mixed). The `nvidia.com/mig.strategy` label
    alone says nothing: GPU Operator writes `single` on nodes whose GPUs have MIG off.
    """
    if "-mig-" in labels.get("k8s_gpu_product", "").lower():
        return True
    status = item.get("status") if isinstance(item, dict) else None
    tables = [status.get(part) for part in ("capacity", "allocatable")] if isinstance(status, dict) else []
    return any(isinstance(t, dict) and any(str(k).startswith(GFD + "mig-") for k in t) for t in tables)
