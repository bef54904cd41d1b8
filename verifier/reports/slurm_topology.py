"""Slurm topology written from the inventory, so the scheduler's blocks and tree are the machine's.

`render(inventory, form)`: `yaml` (topology.yaml, Slurm 25.05+: a `fabric` tree and an `nvlink`
block topology, whichever the inventory has), `tree` or `block` (the topology.conf lines of one).

- Blocks are the multi-node NVLink domains (verifier.facts.graph.scaleup_domains: union-find over
  the working scale-up links): one block per domain, named after the rack (or pod) that holds all of
  its nodes, else `nvl<k>`. BlockSizes is the nodes per block when every block has the same number;
  otherwise it is left to Slurm (a comment says so).
- The tree is the fabric: a leaf is a switch with a working fabric link to a node or to a device in
  one; a switch above is one link further from the nodes. A node cabled to several leaves (a
  rail-optimised fabric) cannot be written in Slurm's one-leaf-per-node tree: it is named in a
  comment and left out, not placed under a leaf picked for it.

Output is deterministic: switches from the top tier down, then by name; hostlists compressed.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field

from verifier.facts.graph import scaleup_domains
from verifier.sources.inventory.model import FABRIC_LINK_KINDS, Inventory

FORMS = ("yaml", "tree", "block")


def compress(names: list[str]) -> str:
    """A Slurm hostlist for `names`: runs of a common prefix and equal-width numbers become ranges."""
    groups: dict[tuple[str, str, int], list[int]] = defaultdict(list)
    plain: list[str] = []
    split: list[tuple[str, str, str]] = []
    for name in sorted(set(names)):
        m = re.fullmatch(r"(.*?)(\d+)(\D*)", name)
        if m is None:
            plain.append(name)
        else:
            split.append((m.group(1), m.group(2), m.group(3)))
    # A zero-padded series (tray00..tray17) holds its numbers of that many digits, padded or not.
    padded = {(p, s, len(d)) for p, d, s in split if d.startswith("0") and len(d) > 1}
    for prefix, digits, suffix in split:
        width = len(digits) if (prefix, suffix, len(digits)) in padded else 0
        groups[(prefix, suffix, width)].append(int(digits))
    parts: list[str] = []
    for (prefix, suffix, width), nums in sorted(groups.items()):
        nums = sorted(set(nums))
        if len(nums) == 1:
            parts.append(f"{prefix}{str(nums[0]).zfill(width)}{suffix}")
            continue
        runs: list[str] = []
        start = prev = nums[0]
        for n in [*nums[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            a, b = str(start).zfill(width), str(prev).zfill(width)
            runs.append(a if start == prev else f"{a}-{b}")
            if n is not None:
                start = prev = n
        parts.append(f"{prefix}[{','.join(runs)}]{suffix}")
    return ",".join([*parts, *plain])


def _node_of(inv: Inventory, oid: str) -> str | None:
    cur: str | None = oid
    for _ in range(10_000):
        if cur is None:
            return None
        o = inv.objects.get(cur)
        if o is None:
            return None
        if o.kind == "node":
            return o.id
        cur = o.parent
    return None


def nvlink_blocks(inv: Inventory) -> dict[str, list[str]]:
    """Block name -> its nodes, for every NVLink domain with GPUs on two nodes or more."""
    nodes: dict[str, set[str]] = defaultdict(set)
    for gpu, domain in scaleup_domains(inv):
        n = _node_of(inv, str(gpu))
        if n is not None:
            nodes[str(domain)].add(n)
    multi = sorted((sorted(ns) for ns in nodes.values() if len(ns) > 1), key=lambda ns: ns[0])
    out: dict[str, list[str]] = {}
    for k, ns in enumerate(multi):
        parents = {inv.objects[n].parent for n in ns}
        holder = parents.pop() if len(parents) == 1 else None
        name = holder if holder is not None and holder not in out else f"nvl{k}"
        out[name] = ns
    return out


@dataclass
class Tree:
    leaves: dict[str, list[str]] = field(default_factory=dict)
    """Leaf switch -> nodes cabled to it and to no other leaf."""
    children: dict[str, list[str]] = field(default_factory=dict)
    """Switch -> the switches one step nearer the nodes."""
    tier: dict[str, int] = field(default_factory=dict)
    several: dict[str, list[str]] = field(default_factory=dict)
    """Node -> its leaves, for nodes cabled to more than one leaf."""


def fabric_tree(inv: Inventory) -> Tree:
    switches = {o.id for o in inv.objects.values() if o.kind == "switch"}
    node_leaves: dict[str, set[str]] = defaultdict(set)
    adj: dict[str, set[str]] = defaultdict(set)
    for lk in inv.links.values():
        if lk.kind not in FABRIC_LINK_KINDS or lk.state == "down":
            continue
        for s, other in ((lk.a, lk.b), (lk.b, lk.a)):
            if s not in switches:
                continue
            if other in switches:
                adj[s].add(other)
                continue
            n = _node_of(inv, other)
            if n is not None:
                node_leaves[n].add(s)
    tree = Tree()
    leaves = {s for ls in node_leaves.values() for s in ls}
    tier = dict.fromkeys(leaves, 0)
    frontier = sorted(leaves)
    while frontier:
        nxt: list[str] = []
        for s in frontier:
            for t in sorted(adj[s]):
                if t not in tier:
                    tier[t] = tier[s] + 1
                    nxt.append(t)
        frontier = nxt
    tree.tier = tier
    for s in sorted(tier):
        kids = sorted(t for t in adj[s] if tier.get(t) == tier[s] - 1)
        if kids:
            tree.children[s] = kids
    for n, ls in sorted(node_leaves.items()):
        if len(ls) == 1:
            tree.leaves.setdefault(next(iter(ls)), []).append(n)
        else:
            tree.several[n] = sorted(ls)
    for s in leaves:
        tree.leaves.setdefault(s, [])
    return tree


def _tree_lines(tree: Tree) -> list[str]:
    out = [
        f"# {n} is cabled to leaves {', '.join(ls)}: Slurm's tree holds one leaf per node, so it is left out"
        for n, ls in sorted(tree.several.items())
    ]
    for s in sorted(tree.tier, key=lambda x: (-tree.tier[x], x)):
        if s in tree.children:
            out.append(f"SwitchName={s} Switches={compress(tree.children[s])}")
        elif tree.leaves.get(s):
            out.append(f"SwitchName={s} Nodes={compress(tree.leaves[s])}")
    return out


def _block_lines(blocks: dict[str, list[str]]) -> list[str]:
    out = [f"BlockName={b} Nodes={compress(ns)}" for b, ns in sorted(blocks.items())]
    sizes = {len(ns) for ns in blocks.values()}
    if len(sizes) == 1:
        out.append(f"BlockSizes={sizes.pop()}")
    elif sizes:
        out.append(f"# blocks hold {', '.join(str(s) for s in sorted(sizes))} nodes: BlockSizes is left to Slurm")
    return out


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is one): names are never read as numbers or booleans."""
    return json.dumps(text)


def render(inventory: Inventory, form: str = "yaml") -> str:
    """The Slurm topology of `inventory` in `form` (yaml, tree or block); deterministic text."""
    if form not in FORMS:
        raise ValueError(f"form {form!r}; expected one of {', '.join(FORMS)}")
    head = "# Written by topolog from the inventory: NVLink domains as blocks, the fabric as a tree.\n"
    if form == "tree":
        return head + "".join(ln + "\n" for ln in _tree_lines(fabric_tree(inventory)))
    if form == "block":
        return head + "".join(ln + "\n" for ln in _block_lines(nvlink_blocks(inventory)))
    tree, blocks = fabric_tree(inventory), nvlink_blocks(inventory)
    out = [head.rstrip("\n")]
    if tree.tier:
        out.extend(
            f"# {n} is cabled to leaves {', '.join(ls)}: left out of the tree" for n, ls in sorted(tree.several.items())
        )
        out += ["- topology: fabric", "  cluster_default: true", "  tree:", "    switches:"]
        for s in sorted(tree.tier, key=lambda x: (-tree.tier[x], x)):
            if s in tree.children:
                out += [f"      - switch: {_q(s)}", f"        children: {_q(compress(tree.children[s]))}"]
            elif tree.leaves.get(s):
                out += [f"      - switch: {_q(s)}", f"        nodes: {_q(compress(tree.leaves[s]))}"]
    if blocks:
        out += ["- topology: nvlink", f"  cluster_default: {'false' if tree.tier else 'true'}", "  block:"]
        sizes = {len(ns) for ns in blocks.values()}
        if len(sizes) == 1:
            out += ["    block_sizes:", f"      - {sizes.pop()}"]
        out.append("    blocks:")
        for b, ns in sorted(blocks.items()):
            out += [f"      - block: {_q(b)}", f"        nodes: {_q(compress(ns))}"]
    if len(out) == 1:
        out.append("# the inventory has no fabric switches and no multi-node NVLink domain")
        out.append("- topology: flat")
        out.append("  cluster_default: true")
        out.append("  flat: true")
    return "\n".join(out) + "\n"
