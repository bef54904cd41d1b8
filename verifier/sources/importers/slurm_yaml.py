"""Slurm's topology.yaml (topology.yaml(5), Slurm 25.05+) as the lines topology.conf would hold.

The file is a list of topologies, each `topology: <name>` with `cluster_default` and exactly one of
`tree: {switches: [{switch, nodes | children}]}`, `block: {block_sizes: [...], blocks: [{block,
nodes}]}` or `flat: true`. Each switch or block becomes the `SwitchName=`/`BlockName=` line it
stands for, with its place in the YAML and its topology's name. When the file holds several tree
(or several block) topologies, their switch (block) names are prefixed `<topology>.` so that two
topologies may reuse a name.
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml

from verifier.core.errors import SourceLocation
from verifier.sources.importers.build import Builder

Line = tuple[SourceLocation, dict[str, str], str, str]
_TYPES = ("tree", "block", "flat")


def _loc(file: str, node: yaml.Node) -> SourceLocation:
    return SourceLocation(file, node.start_mark.line + 1, node.start_mark.column + 1)


def _map(node: yaml.Node) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    assert isinstance(node, yaml.MappingNode)
    for k, v in node.value:
        out[str(k.value)] = (k, v)
    return out


def _scalar(b: Builder, file: str, node: yaml.Node, what: str) -> str | None:
    if isinstance(node, yaml.ScalarNode) and str(node.value).strip():
        return str(node.value).strip()
    if isinstance(node, yaml.SequenceNode) and all(isinstance(i, yaml.ScalarNode) for i in node.value):
        return ",".join(str(i.value) for i in node.value)  # a YAML list of names is a hostlist too
    b.error(_loc(file, node), f"{what}: expected a name or hostlist")
    return None


def yaml_lines(b: Builder, text: str, file: str) -> list[Line]:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        loc = SourceLocation(file, mark.line + 1, mark.column + 1) if mark is not None else SourceLocation(file)
        b.error(loc, f"not valid YAML: {getattr(err, 'problem', err)}")
        return []
    except RecursionError:
        # The composer follows nesting by recursion: 3,000 `- ` deep was "internal error
        # (RecursionError)". topology.yaml(5) nests a few levels.
        b.error(SourceLocation(file, 1), "YAML nested deeper than the parser can follow; expected topology.yaml(5)")
        return []
    if root is None or not isinstance(root, yaml.SequenceNode):
        b.error(
            SourceLocation(file, 1), "expected a list of topologies (`- topology: <name>` ...), as topology.yaml(5)"
        )
        return []
    topologies = [t for t in root.value if isinstance(t, yaml.MappingNode)]
    kinds = [next((k for k in _TYPES if k in _map(t)), "") for t in topologies]
    return list(_read(b, file, root, kinds))


def _read(b: Builder, file: str, root: yaml.SequenceNode, kinds: list[str]) -> Iterator[Line]:
    k = 0
    for t in root.value:
        if not isinstance(t, yaml.MappingNode):
            b.error(_loc(file, t), "expected a topology: a mapping with `topology:` and one of tree, block, flat")
            continue
        kind = kinds[k]
        k += 1
        m = _map(t)
        if "topology" not in m:
            b.error(_loc(file, t), "a topology needs `topology: <name>` (its first attribute)")
            continue
        name = _scalar(b, file, m["topology"][1], "topology") or "?"
        unknown = sorted(set(m) - {"topology", "cluster_default", *_TYPES})
        if unknown:
            b.error(
                _loc(file, m[unknown[0]][0]), f"unknown key {unknown[0]!r}; expected cluster_default, tree, block, flat"
            )
        present = [x for x in _TYPES if x in m]
        if len(present) != 1:
            b.error(
                _loc(file, t), f"topology {name} must define exactly one of tree, block, flat (has {present or 'none'})"
            )
            continue
        prefix = f"{name}." if kinds.count(kind) > 1 else ""
        body = m[kind][1]
        if kind == "flat":
            yield (_loc(file, m[kind][0]), {"flat": "true"}, name, prefix)
            continue
        if not isinstance(body, yaml.MappingNode):
            b.error(_loc(file, body), f"{kind}: expected a mapping")
            continue
        bm = _map(body)
        items_key, name_key = ("switches", "switch") if kind == "tree" else ("blocks", "block")
        allowed = {items_key} | ({"block_sizes"} if kind == "block" else set())
        for extra in sorted(set(bm) - allowed):
            b.error(_loc(file, bm[extra][0]), f"unknown key {extra!r} in {kind}; expected {', '.join(sorted(allowed))}")
        if "block_sizes" in bm:
            sizes = bm["block_sizes"][1]
            text = _scalar(b, file, sizes, "block_sizes")
            if text is not None:
                yield (_loc(file, sizes), {"blocksizes": text}, name, prefix)
        if items_key not in bm:
            b.error(_loc(file, body), f"{kind} needs `{items_key}:`")
            continue
        seq = bm[items_key][1]
        if not isinstance(seq, yaml.SequenceNode):
            if not (isinstance(seq, yaml.ScalarNode) and seq.value in ("", "[]")):
                b.error(_loc(file, seq), f"{items_key}: expected a list")
            continue
        for item in seq.value:
            if not isinstance(item, yaml.MappingNode):
                b.error(_loc(file, item), f"expected a {name_key}: a mapping with `{name_key}:` and `nodes:`")
                continue
            im = _map(item)
            keys = {name_key: "switchname" if kind == "tree" else "blockname", "nodes": "nodes"}
            if kind == "tree":
                keys |= {"children": "switches", "link_speed": "linkspeed"}
            fields: dict[str, str] = {}
            for key, (kn, vn) in im.items():
                if key not in keys:
                    b.error(_loc(file, kn), f"unknown key {key!r}; expected {', '.join(keys)}")
                    continue
                value = _scalar(b, file, vn, key)
                if value is not None:
                    fields[keys[key]] = value
            if name_key not in im:
                b.error(_loc(file, item), f"a {name_key} needs `{name_key}: <name>`")
                continue
            yield (_loc(file, item), fields, name, prefix)
