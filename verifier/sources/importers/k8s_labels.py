"""Kubernetes node labels (`kubectl get nodes -o json`) as what the scheduler believes about each node.

Read, as GPU Feature Discovery and NVIDIA topograph write them:

- `nvidia.com/gpu.product` -> label `k8s_gpu_product`; `nvidia.com/gpu.count` -> quantity `k8s_gpu_count`;
- `nvidia.com/gpu.clique` (the multi-node NVLink clique, `<cluster uuid>.<clique id>`) -> `k8s_gpu_clique`;
- `network.topology.nvidia.com/accelerator` (the NVLink domain) -> `k8s_nvlink_domain`;
- `network.topology.nvidia.com/<tier>` (leaf, spine, core, block, datacenter, tier-N) -> `k8s_topology.<tier>`.

Other labels are not topology and are not read (one note says how many). Each Node becomes a `node`
object; when topolog inventories are given among the files, the labels are added to their nodes
instead, so that SCHED001/SCHED002 check the scheduler's groupings against the NVLink domains the
inventory describes. A value that cannot be read (a gpu.count that is not a number) is an error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

from verifier.core.errors import SourceLocation
from verifier.core.exact_json import InexactJSON, loads_exact
from verifier.core.limits import current_limits
from verifier.sources.importers.build import Builder, Imported, read_tool_text, whole

GFD = "nvidia.com/"
TOPOGRAPH = "network.topology.nvidia.com/"
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
        missing = sorted(o.id for o in b.inv.objects.values() if o.kind == "node" and o.id not in seen)
        if missing:
            shown = ", ".join(missing[:10]) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
            b.note(
                SourceLocation(str(sources[0][0]) if sources else str(inventories[0])),
                f"no Kubernetes node for {shown}",
            )
    return b.finish()


def _line_of(text: str, needle: str, start: int, key: str | None = None) -> tuple[int, int]:
    """1-based line of the first `needle` (as `"key": needle` when a key is given) at or after `start`
    (JSON keeps no positions), and where it is.
    """
    pattern = re.escape(needle) if key is None else re.escape(json.dumps(key)) + r"\s*:\s*" + re.escape(needle)
    m = re.compile(pattern).search(text, start)
    if m is None:
        return 0, start
    return text.count("\n", 0, m.start()) + 1, m.start()


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
    for k, item in enumerate(items):
        meta = item.get("metadata") if isinstance(item, dict) else None
        name = meta.get("name") if isinstance(meta, dict) else None
        if not isinstance(meta, dict) or not isinstance(name, str) or not name:
            b.error(SourceLocation(file, 1), f"items[{k}] has no metadata.name; expected a Node")
            continue
        start = pos  # this item's text starts after the previous item's name (kubectl sorts labels before name)
        line, pos = _line_of(text, json.dumps(name), pos, key="name")
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
            vline, _ = _line_of(text, json.dumps(key), start)
            vloc = SourceLocation(file, vline or line)
            if key == GFD + "gpu.product":
                labels["k8s_gpu_product"] = value
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
        _attach(b, name, loc, labels, quantities, onto)
    if skipped:
        b.note(SourceLocation(file), f"{skipped} other node labels are not about GPU topology and are not read")


def _attach(
    b: Builder, name: str, loc: SourceLocation, labels: dict[str, str], quantities: dict[str, int], onto: bool
) -> None:
    obj = b.inv.objects.get(name)
    if obj is None:
        if onto:
            b.note(loc, f"Kubernetes node {name} is not a node of the inventory: added on its own")
        b.obj(
            name,
            "node",
            None,
            loc,
            labels={"source": str(loc), "imported_from": "kubernetes", **labels},
            quantities=quantities,
        )
        return
    if obj.kind != "node":
        b.error(loc, f"Kubernetes node {name} is a {obj.kind} in the inventory ({obj.loc})")
        return
    obj.labels = MappingProxyType({**obj.labels, **labels, "k8s_source": str(loc)})
    obj.quantities = MappingProxyType({**obj.quantities, **quantities})
