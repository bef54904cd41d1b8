"""NV# cells: direct NVLinks between GPUs (a mesh) or each GPU's NVLinks into an NVSwitch fabric.

`nvidia-smi topo -m` prints NV<n> for a GPU pair joined by n NVLinks, and it prints the same
for two GPUs of an NVSwitch board: there NV18 means "each of the two has 18 NVLinks into the
switches", not 18 links between them. Read as a mesh, an HGX H100 would give each GPU 7 x 18 =
126 links (and 3,150,000 MB/s); no GPU has that many. The choice is made per group of GPUs that
NV# cells join, from what the cells state and what the catalogue knows:

- a switch fabric only when every pair of the group is NV# (a switch joins all its GPUs) and
  each pair's count is the smaller of its two GPUs' counts (a GPU short of a link shows it to
  every peer), and then when either
  - the mesh is impossible: a GPU would need more NVLinks than any catalogue GPU has, or
  - every catalogue GPU with that many NVLinks sits on NVSwitch boards (feature `nvswitch`:
    NV18 is H100/H200 SXM, B200 or GB200, all of them HGX or NVL72 parts);
- a mesh otherwise (DGX-1's hybrid cube-mesh of NV1/NV2, POWER8 + P100, bridged PCIe pairs
  such as A100/H100 PCIe at NV12, a 4-GPU HGX A100 at NV4).

The decision is said in a note either way. NVLink generation is not in the cells: the per-link
bandwidth is the candidates' own when they agree, else the documented default; either way it is
labelled assumed (the tool states none).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from verifier.sources.importers.build import DEFAULT_NVLINK_LINK_MBPS
from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.model import CatalogModel


@dataclass(frozen=True)
class Group:
    """GPUs joined by NV# cells, read as a switch fabric (`links` per GPU) or as a mesh."""

    gpus: tuple[str, ...]
    fabric: bool
    links: dict[str, int]
    """Each GPU's NVLinks into the fabric (fabric only)."""
    link_mbps: int
    """Per NVLink, per direction: the candidates' when they agree, else the default (always `assumed`)."""
    note: str


def _nvlink_gpus() -> list[CatalogModel]:
    return [
        m
        for m in builtin_models()
        if m.kind == "gpu" and "nvlink" in m.features and m.specs.get("scaleup_links") is not None
    ]


def _names(models: Iterable[CatalogModel]) -> str:
    return ", ".join(sorted(m.name for m in models))


def groups(order: list[str], pairs: dict[tuple[str, str], int], c2c: frozenset[str] = frozenset()) -> list[Group]:
    """One Group per set of GPUs joined by NV# cells; `pairs` maps (a, b), a before b in `order`, to n.

    `c2c`: the GPUs whose memory the tool lists as a NUMA node of its own (nvidia-smi's GPU NUMA ID),
    which only a GPU coherent with its CPU over NVLink-C2C has (Grace Hopper, Grace Blackwell).
    """
    pos = {g: i for i, g in enumerate(order)}
    peers: dict[str, dict[str, int]] = {}
    for (a, b), n in pairs.items():
        peers.setdefault(a, {})[b] = n
        peers.setdefault(b, {})[a] = n
    seen: set[str] = set()
    out: list[Group] = []
    for start in sorted(peers, key=pos.__getitem__):
        if start in seen:
            continue
        members, todo = {start}, [start]
        while todo:
            for p in peers[todo.pop()]:
                if p not in members:
                    members.add(p)
                    todo.append(p)
        seen |= members
        out.append(_decide(tuple(sorted(members, key=pos.__getitem__)), peers, c2c))
    return out


def _decide(gpus: tuple[str, ...], peers: dict[str, dict[str, int]], c2c: frozenset[str]) -> Group:
    models = _nvlink_gpus()
    most = max((m.specs["scaleup_links"] for m in models), default=0)
    links = {g: max(peers[g].values()) for g in gpus}
    need = {g: sum(peers[g].values()) for g in gpus}
    clique = all(len(peers[g]) == len(gpus) - 1 for g in gpus)
    pattern = clique and all(n == min(links[a], links[b]) for a in gpus for b, n in peers[a].items())
    top = max(links.values())
    candidates = [m for m in models if m.specs["scaleup_links"] == top]
    coherent = set(gpus) <= c2c and any("nvlink_c2c" in m.features for m in candidates)
    if coherent:
        candidates = [m for m in candidates if "nvlink_c2c" in m.features]  # GPU memory as a NUMA node
    boards = bool(candidates) and all("nvswitch" in m.features for m in candidates)
    worst = max(gpus, key=lambda g: need[g])
    names = ", ".join(gpus)
    per_link = {m.specs.get("scaleup_link_mbps") for m in candidates}
    mbps = per_link.pop() if len(per_link) == 1 and None not in per_link else None
    if pattern and (need[worst] > most or boards):
        if need[worst] > most:
            why = (
                f"as direct links {worst} would have {need[worst]} NVLinks, more than any catalogue GPU has "
                f"(at most {most})"
            )
        else:
            why = "the catalogue puts every GPU with that many NVLinks on NVSwitch boards"
        if candidates:
            why += f"; catalogue GPUs with {top} NVLinks: {_names(candidates)}"
            if coherent:
                why += " (every GPU's memory is a NUMA node of its own: an NVLink-C2C part)"
        counts = sorted(set(links.values()))
        each = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]} to {counts[-1]}"
        note = (
            f"{names}: NV# cells read as {each} NVLinks from each GPU into one NVSwitch fabric (inferred), "
            f"not a mesh: {why}"
        )
        return Group(gpus, True, links, mbps or DEFAULT_NVLINK_LINK_MBPS, note)
    if need[worst] > most:
        note = (
            f"{names}: the NV# cells give {worst} {need[worst]} NVLinks, more than any catalogue GPU has "
            f"(at most {most}), but they are not an NVSwitch fabric's pattern (every pair NV#, each pair "
            "the smaller count of its two GPUs): kept as direct links as printed"
        )
    else:
        note = (
            f"{names}: NV# cells read as direct NVLinks between GPUs (a mesh): at most {need[worst]} per GPU, "
            f"within what catalogue GPUs have (up to {most})"
            + (f"; catalogue GPUs with {top} NVLinks: {_names(candidates)}" if candidates else "")
        )
    return Group(gpus, False, {}, DEFAULT_NVLINK_LINK_MBPS, note)
