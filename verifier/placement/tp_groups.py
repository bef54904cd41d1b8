"""Members of a model job in whole TP groups, each inside one scale-up (NVLink) domain.

A TP group all-reduces every layer over NVLink, so its GPUs must reach each other there. The
rules count, per scale-up domain, floor(eligible / TP) x TP GPUs (`place_tp_gpus`,
rules/placement/lib/hosts.dl); members here are such groups: dgx03 of the DGX pod, whose gpu2 is
alone in its domain (TOPO005), gives one TP=4 group from its 7-GPU domain and none with gpu2.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from verifier.engine.ast import Program
from verifier.engine.backend import Backend
from verifier.engine.records import Columns


class ScaleupOf:
    """Each GPU's scale-up domain for placement (`place_gpu_scaleup`), read once, on first use:
    only rankings of jobs with a model ask (the rules fill it only then).
    """

    def __init__(self, engine: Backend, program: Program) -> None:
        self.engine, self.program = engine, program
        self._of: dict[str, str] | None = None

    def __call__(self) -> Mapping[str, str]:
        if self._of is None:
            cols = Columns.of(self.program, "place_gpu_scaleup", ("gpu", "scaleup"))
            at_gpu, at_domain = cols.index["gpu"], cols.index["scaleup"]
            self._of = {str(r[at_gpu]): str(r[at_domain]) for r in self.engine.query("place_gpu_scaleup", None, False)}
        return self._of


def signature(gpus: Sequence[str], scaleup_of: Mapping[str, str]) -> tuple[int, ...]:
    """Which of `gpus` (sorted) share a scale-up domain, without the domains' names: each GPU's
    domain numbered in order of first appearance. Two domains of one shape with the same
    signature split into the same groups.
    """
    seen: dict[str, int] = {}
    return tuple(seen.setdefault(scaleup_of.get(g, g), len(seen)) for g in gpus)


def _groups(gpus: Sequence[str], tp: int, key: Mapping[str, object]) -> list[list[str]]:
    """Whole groups of `tp` of `gpus` (sorted) per key (a GPU's domain), the leftovers dropped."""
    per: dict[object, list[str]] = defaultdict(list)
    for g in gpus:
        per[key[g]].append(g)
    out: list[list[str]] = []
    for held in per.values():
        whole = len(held) // tp * tp
        out.extend(held[i : i + tp] for i in range(0, whole, tp))
    return out


def _take(groups: Sequence[list[str]], need: int) -> list[str] | None:
    out: list[str] = []
    for group in groups:
        if len(out) >= need:
            break
        out.extend(group)
    return sorted(out) if len(out) >= need else None


def tp_members(
    gpus: Sequence[str], need: int, tp: int, node_of: Mapping[str, str], scaleup_of: Mapping[str, str], fullest: bool
) -> list[str]:
    """The first whole TP groups that hold `need` GPUs (ceil(need / tp) groups), from `gpus` (sorted).

    Groups come in the order of their first GPU's name (the first GPUs by name, as for other
    jobs). `fullest` (max_nodes, min_pair_mbps): groups inside one node, the fullest nodes
    first, as the rules count max_nodes (`place_node_tp_fill`); where those fall short (a group
    must span nodes), groups across nodes of one scale-up domain.
    """
    domain = {g: scaleup_of.get(g, g) for g in gpus}
    if fullest:
        inside = {g: (node_of[g], domain[g]) for g in gpus}
        groups = _groups(gpus, tp, inside)
        per_node: dict[str, int] = defaultdict(int)
        for group in groups:
            per_node[node_of[group[0]]] += len(group)
        groups.sort(key=lambda gr: (-per_node[node_of[gr[0]]], node_of[gr[0]], gr[0]))
        picked = _take(groups, need)
        if picked is not None:
            return picked
    groups = sorted(_groups(gpus, tp, domain), key=lambda gr: gr[0])
    picked = _take(groups, need)
    # The rules host a domain only with enough GPUs in whole groups: short here, nothing is safe.
    return picked if picked is not None else []


def whole_groups(members: Sequence[str], tp: int, scaleup_of: Mapping[str, str]) -> bool:
    """Whether `members` split into whole groups of `tp`, each inside one scale-up domain."""
    per: dict[str, int] = defaultdict(int)
    for g in members:
        per[scaleup_of.get(g, g)] += 1
    return all(n % tp == 0 for n in per.values())
