"""What a scheduler's node list is compared against: the inventory's hosts, matched by name.

A node of the inventory that holds a CPU or a GPU is a host a kubelet or slurmd could run on; one
that holds neither (a GB200 NVL72's NVLink switch tray) is in no scheduler's list and is never
reported missing from one. Laying a list onto an inventory marks, for SCHED006:

- `node_list_missing: <the list's file>` on a host the list does not name;
- `node_list_extra: <file:line>` on a node only the list names (the importer adds it as a node).
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from verifier.sources.inventory.model import Inventory

HOST_PARTS = frozenset({"cpu", "gpu"})


def hosts(inv: Inventory) -> set[str]:
    """Ids of the nodes holding a CPU or a GPU (at any depth)."""
    out: set[str] = set()
    for o in inv.objects.values():
        if o.kind not in HOST_PARTS:
            continue
        cur = o.parent
        while cur is not None:
            parent = inv.objects[cur]
            if parent.kind == "node":
                out.add(cur)
                break
            cur = parent.parent
    return out


def mark_missing(inv: Inventory, listed: Iterable[str], listing: str) -> None:
    """Label every host of `inv` that `listed` does not name with `node_list_missing: listing`."""
    named = set(listed)
    for n in sorted(hosts(inv) - named):
        obj = inv.objects[n]
        obj.labels = MappingProxyType({**obj.labels, "node_list_missing": listing})
