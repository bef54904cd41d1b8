"""Slurm topology written from the inventory, so the scheduler's blocks and tree are the machine's.

`render(inventory, form)`: `yaml` (topology.yaml, Slurm 25.05+: a `fabric` tree and an `nvlink`
block topology, whichever the inventory has), `tree` or `block` (the topology.conf lines of one).

- Blocks are the multi-node NVLink domains (verifier.facts.graph.scaleup_domains: union-find over
  the working scale-up links): one block per domain, named after the rack (or pod) that holds all of
  its nodes, else `nvl<k>`. BlockSizes is the smallest block's node count: Slurm takes the first
  value as its base block and stops at a block with fewer nodes ("children count lower than
  bblock_node_cnt"); without BlockSizes the first block written would be the base. Blocks of
  different sizes get a comment saying so.
- The tree is the fabric: a leaf is a switch with a working fabric link to a node or to a device in
  one; a switch above is one link further from the nodes. Slurm's tree holds each node under one
  leaf (topology.conf(5): a node under several leaves is a "multiple leaf switches" warning and the
  tree's distances go wrong), so nodes cabled to the same set of leaves are one Slurm leaf. In a
  rail-optimised fabric (NIC r of every node on rail leaf r) that set is the rails: the nodes of it
  are one switch hop apart on every rail, which is what a Slurm leaf says. The Slurm leaf takes the
  name of the first switch of its set, and a comment names the switches it stands for. Parallel
  switches (one tier, the same switches below: the spines of a leaf/spine fabric) are one Slurm
  switch in the same way, so the tree has the one root Slurm looks for.
- A form with nothing to say is refused (TopologError), never written empty: Slurm's tree plugin
  stops at a topology.conf without switches ("No switches configured"), and a block topology
  without a block groups nothing. topology.yaml then holds a `flat` topology.

Output is deterministic: switches from the top tier down, then by name; hostlists compressed.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
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
    """The fabric as Slurm's tree: switch names are Slurm's (a group of switches takes its first's name)."""

    leaves: dict[str, list[str]] = field(default_factory=dict)
    """Slurm leaf -> its nodes."""
    children: dict[str, list[str]] = field(default_factory=dict)
    """Slurm switch -> the Slurm switches one tier nearer the nodes."""
    tier: dict[str, int] = field(default_factory=dict)
    stands_for: dict[str, list[str]] = field(default_factory=dict)
    """Slurm switch -> the inventory's switches it stands for, where that is more than one."""

    def comments(self) -> list[str]:
        out = []
        for s in sorted(self.stands_for, key=lambda x: (self.tier[x], x)):
            whom = compress(self.stands_for[s])
            if self.tier[s] == 0:
                out.append(
                    f"# {s} stands for switches {whom}: each of {compress(self.leaves[s])} is cabled to all of them "
                    "(a rail-optimised fabric), and Slurm's tree holds one leaf per node"
                )
            else:
                out.append(f"# {s} stands for switches {whom}: parallel switches above the same switches")
        return out


def _fabric_graph(inv: Inventory) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Node -> the switches it is cabled to (working fabric links), and switch -> switches it is cabled to."""
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
    return node_leaves, adj


def _unique(name: str, taken: set[str]) -> str:
    k, out = 1, name
    while out in taken:
        out, k = f"{name}_{k}", k + 1  # no "-<digits>": a hostlist reads no range there
    taken.add(out)
    return out


def fabric_tree(inv: Inventory) -> Tree:
    node_leaves, adj = _fabric_graph(inv)
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
    tree = Tree()
    # Tier 0: nodes by the set of leaves they are cabled to; a set of one keeps its switch's name.
    by_set: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for n, ls in node_leaves.items():
        by_set[tuple(sorted(ls))].append(n)
    taken: set[str] = {ls[0] for ls in by_set if len(ls) == 1}
    rep: dict[str, set[str]] = defaultdict(set)
    """Inventory switch -> the Slurm switches standing for it."""
    for group in sorted(by_set, key=lambda x: (len(x) > 1, x)):
        name = group[0] if len(group) == 1 else _unique(group[0], taken)
        tree.leaves[name] = sorted(by_set[group])
        tree.tier[name] = 0
        if len(group) > 1:
            tree.stands_for[name] = list(group)
        for leaf in group:
            rep[leaf].add(name)
    # Tiers above: an inventory switch's children are what stands for its switches one tier down;
    # switches of one tier with the same children are parallel and become one Slurm switch.
    for level in range(1, max(tier.values(), default=0) + 1):
        groups: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for sw in sorted(x for x, k in tier.items() if k == level):
            kids = {r for c in adj[sw] if tier.get(c) == level - 1 for r in rep[c]}
            groups[tuple(sorted(kids))].append(sw)
        for below, members in sorted(groups.items(), key=lambda kv: kv[1][0]):
            name = _unique(members[0], taken)
            tree.children[name] = list(below)
            tree.tier[name] = level
            if len(members) > 1:
                tree.stands_for[name] = members
            for sw in members:
                rep[sw].add(name)
    return tree


def _switch_order(tree: Tree) -> list[str]:
    return sorted(tree.tier, key=lambda x: (-tree.tier[x], x))


def _tree_lines(tree: Tree) -> list[str]:
    out = tree.comments()
    for s in _switch_order(tree):
        if s in tree.children:
            out.append(f"SwitchName={s} Switches={compress(tree.children[s])}")
        else:
            out.append(f"SwitchName={s} Nodes={compress(tree.leaves[s])}")
    return out


def _block_lines(blocks: dict[str, list[str]]) -> list[str]:
    out = [f"BlockName={b} Nodes={compress(ns)}" for b, ns in sorted(blocks.items())]
    out.extend(_sizes_comment(blocks))
    if blocks:
        out.append(f"BlockSizes={base_block(blocks)}")
    return out


def base_block(blocks: dict[str, list[str]]) -> int:
    """Slurm's base block: the smallest block's node count (no block may hold fewer)."""
    return min(len(ns) for ns in blocks.values())


def _sizes_comment(blocks: dict[str, list[str]]) -> list[str]:
    sizes = sorted({len(ns) for ns in blocks.values()})
    if len(sizes) < 2:
        return []
    return [f"# blocks hold {', '.join(map(str, sizes))} nodes: the base block is the smallest, {sizes[0]}"]


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is one): names are never read as numbers or booleans."""
    return json.dumps(text)


def _first_file(inventory: Inventory) -> SourceLocation:
    return SourceLocation(inventory.files[0] if inventory.files else "<inventory>")


def _refuse(inventory: Inventory, what: str) -> TopologError:
    return TopologError.at(_first_file(inventory), what)


# What Slurm reads as one host or switch name: a hostlist splits names at commas, reads brackets
# as ranges, and a topology.conf line splits at blanks and '='. Any other character would be
# written as-is and read back by slurmctld as other nodes, or none, without a word.
_SLURM_NAME = re.compile(r"[A-Za-z0-9._-]+")


def _check_names(inventory: Inventory, tree: Tree, blocks: dict[str, list[str]]) -> None:
    """TopologError at each node, switch or block holder whose id Slurm cannot read back as one name."""
    written = {*tree.tier, *blocks}
    written.update(n for ns in [*tree.leaves.values(), *blocks.values()] for n in ns)
    bad = sorted(n for n in written if _SLURM_NAME.fullmatch(n) is None)
    if bad:
        problems = []
        for name in bad:
            obj = inventory.objects.get(name)
            where = obj.loc if obj is not None else _first_file(inventory)
            odd = "".join(sorted({c for c in name if _SLURM_NAME.fullmatch(c) is None}))
            problems.append(
                Diagnostic(
                    where,
                    f"{name!r} cannot be written as one Slurm name (it holds {odd!r}); expected letters, digits, "
                    "'-', '_' and '.' only, as host names have",
                )
            )
        raise TopologError(problems)


def render(inventory: Inventory, form: str = "yaml") -> str:
    """The Slurm topology of `inventory` in `form` (yaml, tree or block); deterministic text.

    Raises TopologError when the tree or block form would say nothing (see the module's doc), or when
    a name it would write is no Slurm name.
    """
    if form not in FORMS:
        raise ValueError(f"form {form!r}; expected one of {', '.join(FORMS)}")
    head = "# Written by topolog from the inventory: NVLink domains as blocks, the fabric as a tree.\n"
    # Each form computes only what it writes: the fabric tree and the NVLink domains each walk the whole fleet.
    tree = fabric_tree(inventory) if form != "block" else Tree()
    blocks = nvlink_blocks(inventory) if form != "tree" else {}
    _check_names(inventory, tree, blocks)
    if form == "tree":
        if not tree.tier:
            raise _refuse(
                inventory,
                "describes no fabric switch cabled to a node, and Slurm's topology/tree refuses a topology.conf "
                "without switches; expected --form yaml (a flat topology) or, for NVLink domains, --form block",
            )
        return head + "".join(ln + "\n" for ln in _tree_lines(tree))
    if form == "block":
        if not blocks:
            raise _refuse(
                inventory,
                "describes no NVLink domain over two nodes or more, so a block topology would group nothing; "
                "expected --form tree (the fabric) or --form yaml",
            )
        return head + "".join(ln + "\n" for ln in _block_lines(blocks))
    out = [head.rstrip("\n")]
    if tree.tier:
        out.extend(tree.comments())
        out += ["- topology: fabric", "  cluster_default: true", "  tree:", "    switches:"]
        for s in _switch_order(tree):
            if s in tree.children:
                out += [f"      - switch: {_q(s)}", f"        children: {_q(compress(tree.children[s]))}"]
            else:
                out += [f"      - switch: {_q(s)}", f"        nodes: {_q(compress(tree.leaves[s]))}"]
    if blocks:
        out.extend(_sizes_comment(blocks))
        out += ["- topology: nvlink", f"  cluster_default: {'false' if tree.tier else 'true'}", "  block:"]
        out += ["    block_sizes:", f"      - {base_block(blocks)}"]
        out.append("    blocks:")
        for b, ns in sorted(blocks.items()):
            out += [f"      - block: {_q(b)}", f"        nodes: {_q(compress(ns))}"]
    if len(out) == 1:
        out.append("# the inventory has no fabric switches and no multi-node NVLink domain")
        out.append("- topology: flat")
        out.append("  cluster_default: true")
        out.append("  flat: true")
    return "\n".join(out) + "\n"
