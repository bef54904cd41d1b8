"""Slurm topology.conf (topology/tree and topology/block) as the fabric part of an inventory.

Tree form: `SwitchName=s0 Nodes=n[001-016]` makes a leaf switch with links to those nodes;
`SwitchName=s2 Switches=s[0-1]` a switch above others. Switches are `switch` objects (role
leaf or spine), nodes are `node` objects, and each membership is a link from the listing
switch (a) to the member (b) labelled `slurm_member: node|switch`; rules SLURM001-003 read them.
topology.conf states no medium or speed (its LinkSpeed is in arbitrary units, kept as a label),
so links take `--link-kind` and `--link-speed` and are labelled `assumed`.
Block form: `BlockName=b1 Nodes=...` makes a `rack` object (label slurm_block) holding the nodes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.importers.build import ASSUMED, Builder, Imported
from verifier.sources.importers.hostlist import HostlistError, expand

_KEYS = {"switchname", "switches", "nodes", "linkspeed", "blockname", "blocksizes"}
_PAIR = re.compile(r"(\S+?)=(\S*)")


@dataclass
class _Line:
    loc: SourceLocation
    fields: dict[str, str]


def import_slurm(paths: list[Path], link_kind: str = "infiniband", link_mbps: int = 50000) -> Imported:
    b = Builder([str(p) for p in paths])
    lines: list[_Line] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise TopologError.at(SourceLocation(str(path)), f"cannot read the file as UTF-8 text: {err}") from None
        lines.extend(_lines(b, text, str(path)))
    _Reader(b, link_kind, link_mbps).read(lines)
    return b.finish()


def _lines(b: Builder, text: str, file: str) -> list[_Line]:
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        loc = SourceLocation(file, n)
        fields: dict[str, str] = {}
        rest = _PAIR.sub("", line).strip()
        if rest:
            b.error(loc, f"{rest!r} is not Key=Value; expected e.g. SwitchName=s0 Nodes=n[001-016]")
            continue
        for key, value in _PAIR.findall(line):
            k = key.lower()
            if k not in _KEYS:
                b.error(
                    loc,
                    f"unknown key {key!r}; expected SwitchName, Switches, Nodes, LinkSpeed, BlockName or BlockSizes",
                )
            elif k in fields:
                b.error(loc, f"{key} is given twice on one line")
            elif not value:
                b.error(loc, f"{key}= has no value")
            else:
                fields[k] = value
        out.append(_Line(loc, fields))
    return out


class _Reader:
    def __init__(self, b: Builder, link_kind: str, link_mbps: int) -> None:
        self.b, self.kind, self.mbps = b, link_kind, link_mbps

    def hosts(self, line: _Line, key: str) -> list[str]:
        try:
            return expand(line.fields[key])
        except HostlistError as err:
            self.b.error(line.loc, f"{key.capitalize()}={line.fields[key]}: {err}")
            return []

    def node(self, name: str, loc: SourceLocation, parent: str | None = None) -> None:
        if not self.b.has(name):
            self.b.obj(name, "node", parent, loc, labels={"source": str(loc), "imported_from": "slurm"})
        elif parent is not None:
            prev = self.b.inv.objects[name]
            if prev.parent is not None and prev.parent != parent:
                self.b.error(loc, f"node {name!r} is in block {prev.parent!r} (line {prev.loc.line}) and in {parent!r}")
            prev.parent = parent

    def read(self, lines: list[_Line]) -> None:
        switches: dict[str, _Line] = {}
        for line in lines:
            f = line.fields
            if "switchname" in f:
                if "blockname" in f or "blocksizes" in f:
                    self.b.error(line.loc, "SwitchName and BlockName/BlockSizes cannot share a line")
                    continue
                if ("nodes" in f) == ("switches" in f):
                    self.b.error(line.loc, f"switch {f['switchname']} needs exactly one of Nodes= or Switches=")
                name = f["switchname"]
                if name in switches:
                    self.b.error(
                        line.loc, f"switch {name!r} is defined twice (first on line {switches[name].loc.line})"
                    )
                    continue
                switches[name] = line
                labels = {"source": str(line.loc), "slurm": "switch", "role": "leaf" if "nodes" in f else "spine"}
                if "linkspeed" in f:
                    labels["slurm_link_speed"] = f["linkspeed"]  # arbitrary units in Slurm: kept, not converted
                self.b.obj(name, "switch", None, line.loc, labels=labels)
            elif "blockname" in f:
                if "nodes" not in f or set(f) - {"blockname", "nodes"}:
                    self.b.error(line.loc, "a block line is BlockName=<name> Nodes=<hostlist>")
                    continue
                self.b.obj(
                    f["blockname"], "rack", None, line.loc, labels={"source": str(line.loc), "slurm_block": "true"}
                )
                for host in self.hosts(line, "nodes"):
                    self.node(host, line.loc, f["blockname"])
            elif "blocksizes" in f:
                if set(f) != {"blocksizes"}:
                    self.b.error(line.loc, "BlockSizes= stands on a line of its own")
            else:
                self.b.error(line.loc, "expected a line starting with SwitchName=, BlockName= or BlockSizes=")
        blocksizes = [ln for ln in lines if "blocksizes" in ln.fields]
        for ln in blocksizes:
            for block in (o for o in self.b.inv.objects.values() if o.labels.get("slurm_block") == "true"):
                block.labels = {**block.labels, "block_sizes": ln.fields["blocksizes"]}
        for name, line in switches.items():
            link_labels = {"source": str(line.loc), ASSUMED: "bandwidth,kind"}
            if "nodes" in line.fields:
                for host in self.hosts(line, "nodes"):
                    if host in switches:
                        self.b.error(line.loc, f"{host!r} is a switch, listed under Nodes= of {name}")
                        continue
                    self.node(host, line.loc)
                    self.b.link(
                        name, host, self.kind, self.mbps, line.loc, labels={**link_labels, "slurm_member": "node"}
                    )
            elif "switches" in line.fields:
                for child in self.hosts(line, "switches"):
                    if child not in switches:
                        self.b.error(
                            line.loc, f"switch {name} lists switch {child!r}, which no SwitchName= line defines"
                        )
                        continue
                    self.b.link(
                        name, child, self.kind, self.mbps, line.loc, labels={**link_labels, "slurm_member": "switch"}
                    )
