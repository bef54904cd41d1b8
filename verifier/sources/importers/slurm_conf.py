"""The node and partition lines of `slurm.conf`: which nodes the cluster has, and their partitions.

Only what the topology checks need is read: `NodeName=` (a hostlist, with `Gres=` kept as a
label), `NodeSet=` (a named hostlist that partitions may use) and `PartitionName=` (`Nodes=` a
hostlist, node sets or ALL). `DEFAULT` lines define no node; a `NodeName=DEFAULT Gres=` line gives
its Gres to the NodeName lines below it. Keys are case
insensitive (slurm.conf(5)); every other setting of slurm.conf is about daemons and scheduling
and is skipped (counted in one note).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from verifier.core.errors import SourceLocation
from verifier.sources.importers.build import Builder
from verifier.sources.importers.hostlist import HostlistError, expand, top_level_items

_PAIR = re.compile(r'([A-Za-z][A-Za-z0-9_]*)=("[^"]*"|\S*)')
_SECTION_KEYS = ("nodename", "nodeset", "partitionname")


@dataclass
class SlurmConf:
    nodes: dict[str, SourceLocation] = field(default_factory=dict)
    gres: dict[str, str] = field(default_factory=dict)
    partitions: dict[str, list[str]] = field(default_factory=dict)
    """Each node's partitions, in the file's order."""


def looks_like(text: str) -> bool:
    """slurm.conf, not topology.conf: it defines nodes or partitions, and has no switch or block lines."""
    keys = {m.group(1).lower() for m in re.finditer(r"(?m)^\s*([A-Za-z]+)=", text)}
    return bool(keys & {"nodename", "partitionname"}) and not keys & {"switchname", "blockname"}


# gres.conf(5) lines: `AutoDetect=`, `Name=gpu ...` for the node that reads the file, and `NodeName=<hosts>
# Name=gpu Type=... File=/dev/nvidia[0-7]`. slurm.conf(5) has no `Name=` or `AutoDetect=` key, so either
# marks the file as gres.conf. A per-node line may hold no Name= at all (`NodeName=cn[1-12]
# File=/dev/nvidia[0-3] AutoDetect=nvml`, a real Helm chart's gres.conf): File= and AutoDetect= are no
# slurm.conf NodeName keys either.
_GRES_LINE_START = re.compile(r"\n[ \t]*(?:autodetect|name)[ \t]*=")
_GRES_NODE_KEYS = (" name=", "\tname=", " file=", "\tfile=", " autodetect=", "\tautodetect=")


def gres_conf_line(text: str) -> int | None:
    """The first line (1-based) only gres.conf writes, or None: a file that is no slurm.conf.

    Searched by literal text, not by a pattern tried at every line: a slurm.conf of 100,000 NodeName lines
    is read in a tenth of a second (a pattern anchored at each line's start took 10 s on one).
    """
    low = text.lower()
    m = _GRES_LINE_START.search("\n" + low)  # the "\n" starts the first line as every other
    first = m.start() if m is not None else len(low)
    for key in _GRES_NODE_KEYS:
        at = low.find(key, 0, first)
        while at != -1:
            start = low.rfind("\n", 0, at) + 1
            head = low[start:at]
            if head.lstrip(" \t").startswith("nodename=") and "#" not in head:
                first = start
                break
            at = low.find(key, at + 1, first)
    return None if first == len(low) else text.count("\n", 0, first) + 1


def _fields(line: str) -> dict[str, str]:
    return {k.lower(): v.strip('"') for k, v in _PAIR.findall(line)}


def read_slurm_conf(b: Builder, text: str, file: str, conf: SlurmConf) -> None:
    skipped = 0
    nodesets: dict[str, list[str]] = {}
    partitions: list[tuple[str, str, SourceLocation]] = []
    default_gres: str | None = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        loc = SourceLocation(file, n)
        first = re.split(r"[=\s]", line, maxsplit=1)[0].lower()
        if first == "include":
            b.note(loc, "Include lines are not followed: import the included file too")
            continue
        if first not in _SECTION_KEYS:
            skipped += 1
            continue
        f = _fields(line)
        name = f.get(first, "")
        if not name:
            b.error(loc, f"{line.split('=', 1)[0]}= has no value")
            continue
        if name.upper() == "DEFAULT":
            if first == "nodename" and "gres" in f:
                default_gres = f["gres"]  # slurm.conf(5): a DEFAULT line sets it for the NodeName lines below
            continue
        if first == "nodename":
            try:
                hosts = expand(name)
            except HostlistError as err:
                b.error(loc, f"NodeName={name}: {err}")
                continue
            for h in hosts:
                if h in conf.nodes:
                    b.error(loc, f"node {h!r} is defined twice (first on line {conf.nodes[h].line})")
                    continue
                conf.nodes[h] = loc
                gres = f.get("gres", default_gres)
                if gres is not None:
                    conf.gres[h] = gres
        elif first == "nodeset":
            if "nodes" not in f:
                b.note(
                    loc, f"NodeSet={name} is not defined by Nodes= (e.g. by Feature=): partitions using it are not read"
                )
                continue
            try:
                nodesets[name] = expand(f["nodes"])
            except HostlistError as err:
                b.error(loc, f"NodeSet={name} Nodes={f['nodes']}: {err}")
        else:
            partitions.append((name, f.get("nodes", ""), loc))
    for name, spec, loc in partitions:
        members: list[str] = []
        if not spec:
            continue  # a partition without nodes is legal (Slurm keeps it empty)
        for part in (i for i in top_level_items(spec) if i):
            if part.upper() == "ALL":
                members.extend(conf.nodes)
            elif part in nodesets:
                members.extend(nodesets[part])
            else:
                try:
                    members.extend(expand(part))
                except HostlistError as err:
                    b.error(loc, f"PartitionName={name} Nodes={spec}: {err}")
        for h in dict.fromkeys(members):
            if h not in conf.nodes:
                b.error(loc, f"partition {name} lists node {h!r}, which no NodeName= line defines")
                continue
            conf.partitions.setdefault(h, []).append(name)
    if skipped:
        b.note(SourceLocation(file), f"{skipped} other settings of slurm.conf are not about topology and are not read")
