"""Kubernetes node labels written from the inventory, as topograph and GPU Feature Discovery name them.

`render(inventory)` gives one `kubectl label --overwrite node <name> key=value ...` line per node
with GPUs or a fabric leaf, sorted by node:

- `network.topology.nvidia.com/accelerator`: the node's multi-node NVLink domain (the Slurm block name
  of verifier.reports.slurm_topology.nvlink_blocks), so a scheduler keeps a job inside one domain;
- `network.topology.nvidia.com/leaf`, `/spine`, `/core`: the node's leaf switch and the switches above
  it, as Slurm's tree names them (verifier.reports.slurm_topology.fabric_tree: the rail leaves of a
  rail-optimised fabric are one leaf, parallel spines one spine); only while each switch has one
  parent: otherwise the chain is ambiguous and left out, with a comment;
- `nvidia.com/gpu.count`: the GPUs the inventory describes in a node whose GPUs are all NVIDIA
  catalogue models (GPU Feature Discovery runs on NVIDIA nodes only); `amd.com/gpu.device-id` (AMD's
  node labeller) on a node of one AMD model. A node of mixed or unknown GPUs gets neither, with a comment.

`nvidia.com/gpu.clique` is not written: its value is the driver's cluster UUID and clique id, which
an inventory does not hold. Label values that Kubernetes would refuse are reported in a comment and
left out, never rewritten.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict

from verifier.reports.slurm_topology import fabric_tree, nvlink_blocks
from verifier.sources.importers.gpu_names import amd_device_for_model
from verifier.sources.inventory.model import Inventory

TOPOGRAPH = "network.topology.nvidia.com/"
_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
_TIER_NAMES = ("leaf", "spine", "core")


def render(inventory: Inventory) -> str:
    labels: dict[str, dict[str, str]] = defaultdict(dict)
    comments: list[str] = []
    for block, nodes in nvlink_blocks(inventory).items():
        for n in nodes:
            labels[n][TOPOGRAPH + "accelerator"] = block
    tree = fabric_tree(inventory)
    parents: dict[str, list[str]] = defaultdict(list)
    for up, kids in tree.children.items():
        for k in kids:
            parents[k].append(up)
    for leaf, nodes in tree.leaves.items():
        chain = [leaf]
        while len(chain) < len(_TIER_NAMES) and len(parents.get(chain[-1], [])) == 1:
            chain.append(parents[chain[-1]][0])
        above = parents.get(chain[-1], [])
        if len(chain) < len(_TIER_NAMES) and len(above) > 1:
            comments.append(f"# {chain[-1]} has several parents ({', '.join(sorted(above))}): tiers above it left out")
        for n in nodes:
            for name, switch in zip(_TIER_NAMES, chain, strict=False):
                labels[n][TOPOGRAPH + name] = switch
    # A leaf or spine standing for several switches (a rail-optimised fabric's rails, parallel spines)
    # is labelled by the name Slurm's tree gives it, so both schedulers group nodes alike.
    comments.extend(tree.comments())
    vendors: dict[str, list[str | None]] = defaultdict(list)
    models: dict[str, set[str | None]] = defaultdict(set)
    for o in inventory.objects.values():
        if o.kind != "gpu":
            continue
        cur = o.parent
        while cur is not None and inventory.objects[cur].kind != "node":
            cur = inventory.objects[cur].parent
        if cur is not None:
            known = inventory.models.get(o.model) if o.model else None
            vendors[cur].append(known.vendor if known is not None else None)
            models[cur].add(o.model)
    for n, seen in vendors.items():
        # Each vendor's own labeller writes these: GFD's gpu.count on NVIDIA nodes, AMD's device id.
        if set(seen) == {"nvidia"}:
            labels[n]["nvidia.com/gpu.count"] = str(len(seen))
        elif set(seen) == {"amd"} and len(models[n]) == 1:
            device = amd_device_for_model(str(next(iter(models[n]))))
            if device is not None:
                labels[n]["amd.com/gpu.device-id"] = device
        else:
            comments.append(f"# {n}: GPUs not all of one known vendor's catalogue models: no GPU labels")
    lines: list[str] = []
    for n in sorted(labels):
        good: list[str] = []
        for key in sorted(labels[n]):
            value = labels[n][key]
            if _VALUE.match(value):
                good.append(f"{key}={value}")
            else:
                comments.append(
                    f"# {n}: {key}={value!r} is not a valid label value (63 characters of A-Z a-z 0-9 - _ .)"
                )
        if good:
            lines.append(f"kubectl label --overwrite node {shlex.quote(n)} {' '.join(good)}")
    head = ["# Written by topolog from the inventory: topograph / GPU Feature Discovery node labels."]
    return "\n".join([*head, *sorted(set(comments)), *lines]) + "\n"
