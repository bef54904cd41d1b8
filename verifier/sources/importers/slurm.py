"""Slurm's view of the fabric: topology.conf, topology.yaml and slurm.conf, as the fabric part of an inventory.

topology.conf, tree form: `SwitchName=s0 Nodes=n[001-016]` makes a leaf switch with links to those
nodes; `SwitchName=s2 Switches=s[0-1]` a switch above others. Block form: `BlockName=b1 Nodes=...`
makes a `rack` object (label slurm_block) holding the nodes; `BlockSizes=` is kept as a label.
topology.yaml (Slurm 25.05+) lists several named topologies, each `tree` (switches with `nodes` or
`children`), `block` (`block_sizes`, `blocks`) or `flat`; every object keeps its topology's name as
`slurm_topology`. slurm.conf's `NodeName=` and `PartitionName=` lines add the cluster's nodes, so a
node that no switch lists is an object (and SLURM002 finds it); `scontrol show nodes` output does too,
and both are node lists checked against an inventory (verifier.sources.importers.slurm_node_list).

Switches are `switch` objects labelled `slurm: switch` and `slurm_role: leaf|spine`; each membership
is a link from the listing switch (a) to the member (b) labelled `slurm_member: node|switch`.
Slurm states no medium or speed (LinkSpeed is in arbitrary units and kept as a label), so links take
`--link-kind` / `--link-speed` and are labelled `assumed`; the switches carry no `role`, because
the fabric rules would then judge oversubscription from speeds nobody stated.

A hostlist item whose prefix is the tail of another item's prefix on the same line
(`circe-n[001-016],n[019-020]`) is how a dropped prefix reads: when the longer name is listed
nowhere else (or is the one slurm.conf defines), the membership link is labelled
`slurm_prefix_dropped: <the longer name>` and SLURM004 reports it.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.limits import current_limits, exceeded
from verifier.core.walk import depth_first
from verifier.sources.importers.build import ASSUMED, Builder, Imported, read_tool_text
from verifier.sources.importers.hostlist import HostlistError, expand, top_level_items
from verifier.sources.importers.slurm_conf import SlurmConf, gres_conf_line, looks_like, read_slurm_conf
from verifier.sources.importers.slurm_node_list import node_list
from verifier.sources.importers.slurm_nodes import NodeRecord, read_scontrol_nodes
from verifier.sources.importers.slurm_nodes import looks_like as looks_like_scontrol

_KEYS = {"switchname", "switches", "nodes", "linkspeed", "blockname", "blocksizes"}
_PAIR = re.compile(r"(\S+?)=(\S*)")
_BLOCK_SIZE = re.compile(r"[1-9][0-9]{0,8}")
"""One BlockSizes= entry: a count of nodes, written in decimal digits (at most nine: a billion nodes)."""
DEFAULT_TOPOLOGY = "topology.conf"
"""The `slurm_topology` of objects read from topology.conf, which holds one topology."""


@dataclass
class _Line:
    loc: SourceLocation
    fields: dict[str, str]
    topology: str = DEFAULT_TOPOLOGY
    prefix: str = ""
    """Prefix of object ids: empty, or `<topology>.` when a topology.yaml holds several of one type."""


def import_slurm(paths: list[Path], link_kind: str = "infiniband", link_mbps: int = 50000) -> Imported:
    b = Builder([str(p) for p in paths])
    lines: list[_Line] = []
    conf: SlurmConf | None = None
    texts: list[tuple[Path, str]] = []
    inventories: list[Path] = []
    records: dict[str, NodeRecord] = {}
    for path in paths:
        text = read_tool_text(path)
        if re.search(r"(?m)^apiVersion:\s*topolog\.dev/", text):
            inventories.append(path)
        else:
            texts.append((path, text))
    onto: set[str] = set()
    if inventories:
        from verifier.sources.inventory.loader import load_inventory

        b.inv = load_inventory(inventories)
        onto = {o.id for o in b.inv.of_kind("node")}
    for path, text in texts:
        if _is_yaml(path, text):
            from verifier.sources.importers.slurm_yaml import yaml_lines

            for loc, fields, topology, prefix in yaml_lines(b, text, str(path)):
                lines.append(_Line(loc, fields, topology, prefix))
        elif (gres := gres_conf_line(text)) is not None:
            # gres.conf's NodeName lines name GPU device files, not the cluster's nodes: read as slurm.conf
            # they would define nodes with no Gres (0 GPUs), which SCHED005 would then report.
            b.error(
                SourceLocation(str(path), gres),
                "this is gres.conf (Name=, File=, AutoDetect= lines), which topolog does not read: a line "
                "without NodeName= holds for whichever node reads the file, AutoDetect=nvml or rsmi finds the "
                "GPUs when slurmd starts (no file lists them) and Type= is the site's own name, so it cannot "
                "say which node has which GPUs; expected slurm.conf NodeName lines (Gres=gpu:<type>:<count>) "
                "or `scontrol show nodes`, with topology.conf or topology.yaml; for a node's GPU cores "
                "(Cores=) and NVLinks (Links=), import its `nvidia-smi topo -m` or `lstopo --of xml`",
            )
        elif looks_like_scontrol(text):
            for name, record in read_scontrol_nodes(b, text, str(path)).items():
                if name in records:
                    b.error(record.loc, f"node {name!r} is listed twice (first at {records[name].loc})")
                records.setdefault(name, record)
        elif looks_like(text):
            conf = conf or SlurmConf()
            read_slurm_conf(b, text, str(path), conf)
        else:
            read = _lines(b, text, str(path))
            if not read and not b.errors:
                # An empty topology.conf would import as an empty fabric and pass every check.
                b.error(
                    SourceLocation(str(path), 1),
                    "names no switch and no block; expected topology.conf lines such as "
                    "'SwitchName=leaf0 Nodes=n[1-4]' or 'BlockName=b0 Nodes=n[1-4]'",
                )
            lines.extend(read)
    if onto:
        # The inventory's own switches and racks keep their ids: Slurm's are told apart by a prefix.
        for line in lines:
            line.prefix = "slurm-" + line.prefix
    reader = _Reader(b, link_kind, link_mbps, conf, onto)
    reader.read(lines)
    if conf is not None or records:
        node_list(b, conf, records, onto)
    return b.finish()


def _is_yaml(path: Path, text: str) -> bool:
    if path.suffix.lower() in (".yaml", ".yml"):
        return True
    first = next((ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.split("#", 1)[0].strip()), "")
    return first == "---" or first.startswith("- topology:")


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


def _prefix(item: str) -> str:
    """The fixed text before an item's numbers: `circe-n` of `circe-n[001-016]` and of `circe-n017`."""
    head = item.split("[", 1)[0]
    return head if "[" in item else re.sub(r"\d+$", "", head)


class _Reader:
    def __init__(
        self, b: Builder, link_kind: str, link_mbps: int, conf: SlurmConf | None, onto: set[str] | None = None
    ) -> None:
        self.b, self.kind, self.mbps, self.conf = b, link_kind, link_mbps, conf
        self.listed: set[str] = set()
        self.made = 0
        """Hosts made so far (count_host)."""
        self.max_hosts = current_limits().hostlist_size
        self.onto = onto or set()
        """Nodes of an inventory the Slurm view is laid onto: they keep their place; blocks become labels."""

    def hosts(self, line: _Line, key: str) -> list[str]:
        try:
            hosts = expand(line.fields[key])
        except HostlistError as err:
            self.b.error(line.loc, f"{key.capitalize()}={line.fields[key]}: {err}")
            return []
        seen: set[str] = set()
        for host in hosts:
            if host in seen:
                # Each listing would become one more link to the same switch: a silently
                # multiplied bandwidth (and a quadratic import for a long list).
                self.b.error(line.loc, f"{key.capitalize()}= names {host!r} twice; expected each name once")
                return []
            seen.add(host)
        return hosts

    def node(self, name: str, loc: SourceLocation, parent: str | None = None) -> None:
        if name in self.onto:
            obj = self.b.inv.objects[name]
            if parent is not None:
                block = parent.removeprefix("slurm-")
                before = obj.labels.get("slurm_block")
                if before is not None and before != block:
                    self.b.error(loc, f"node {name!r} is in block {before!r} and in {block!r}")
                obj.labels = {**obj.labels, "slurm_block": block}
            return
        if not self.b.has(name):
            self.count_host(loc)
            labels = {"source": str(loc), "imported_from": "slurm"}
            if self.conf is not None and name in self.conf.nodes:
                labels.update(self._conf_labels(name))
            self.b.obj(name, "node", parent, loc, labels=labels)
        elif parent is not None:
            prev = self.b.inv.objects[name]
            if prev.parent is not None and prev.parent != parent:
                self.b.error(loc, f"node {name!r} is in block {prev.parent!r} (line {prev.loc.line}) and in {parent!r}")
            prev.parent = parent

    def count_host(self, loc: SourceLocation) -> None:
        """One more host made: past `hostlist_size` hosts in one import, refused where the next was named.

        Each hostlist is bounded on its own before it is expanded; this bounds them together (many
        lists, each under the limit, made 2 GB of hosts). A host costs about 2.7 KB in a verify.
        """
        self.made += 1
        if self.made > self.max_hosts:
            found = f"the Slurm input names {self.made:,} hosts or more, all its hostlists together"
            raise TopologError.at(loc, exceeded("hostlist_size", found))

    def _conf_labels(self, name: str) -> dict[str, str]:
        assert self.conf is not None
        labels = {"slurm_conf": str(self.conf.nodes[name])}
        if name in self.conf.partitions:
            labels["slurm_partitions"] = ",".join(self.conf.partitions[name])
        if name in self.conf.gres:
            labels["slurm_gres"] = self.conf.gres[name]
        return labels

    def dropped_prefixes(self, line: _Line) -> dict[str, str]:
        """Hosts of a Nodes= list that read as another item's names with the prefix dropped: host -> meant."""
        items = [i for i in top_level_items(line.fields["nodes"]) if i]
        prefixes = {_prefix(i) for i in items}
        out: dict[str, str] = {}
        for item in items:
            short = _prefix(item)
            longer = sorted(p for p in prefixes if p != short and short and p.endswith(short))
            if len(longer) != 1:
                continue  # no other prefix, or several it could be: nothing to say
            try:
                hosts = expand(item)
            except HostlistError:
                continue  # reported where the whole list is expanded
            head = longer[0][: len(longer[0]) - len(short)]
            for h in hosts:
                meant = head + h
                known = self.conf.nodes if self.conf is not None else None
                if known is not None:
                    if h not in known and meant in known:
                        out[h] = meant
                elif meant not in self.listed:
                    out[h] = meant
        return out

    def refuse_cycles(self, switches: dict[str, _Line]) -> None:
        """A switch under itself through Switches= is no tree: Slurm refuses it, and the import
        would hold each link of the loop once per direction, twice the bandwidth.
        """
        children: dict[str, list[str]] = {}
        for name, line in switches.items():
            if "switches" in line.fields:
                with contextlib.suppress(HostlistError):  # reported where the links are made
                    children[name] = [
                        line.prefix + c for c in expand(line.fields["switches"]) if line.prefix + c in switches
                    ]
        _, loops = depth_first(children, children, first_loop=True)
        if loops:
            loop = loops[0]
            self.b.error(
                switches[loop[0]].loc,
                f"switch {loop[0]!r} is under itself through Switches= ({' -> '.join(loop)}); "
                "expected a tree of switches",
            )

    def read(self, lines: list[_Line]) -> None:
        switches: dict[str, _Line] = {}
        for line in lines:
            if "nodes" in line.fields and "switchname" in line.fields:
                with contextlib.suppress(HostlistError):  # reported below, with the line
                    self.listed.update(expand(line.fields["nodes"]))
        for line in lines:
            f = line.fields
            if "switchname" in f:
                if "blockname" in f or "blocksizes" in f:
                    self.b.error(line.loc, "SwitchName and BlockName/BlockSizes cannot share a line")
                    continue
                if ("nodes" in f) == ("switches" in f):
                    self.b.error(line.loc, f"switch {f['switchname']} needs exactly one of Nodes= or Switches=")
                name = line.prefix + f["switchname"]
                if name in switches:
                    self.b.error(
                        line.loc, f"switch {name!r} is defined twice (first on line {switches[name].loc.line})"
                    )
                    continue
                switches[name] = line
                labels = {
                    "source": str(line.loc),
                    "slurm": "switch",
                    "slurm_role": "leaf" if "nodes" in f else "spine",
                    "slurm_topology": line.topology,
                }
                if "linkspeed" in f:
                    labels["slurm_link_speed"] = f["linkspeed"]  # arbitrary units in Slurm: kept, not converted
                self.b.obj(name, "switch", None, line.loc, labels=labels)
            elif "blockname" in f:
                if "nodes" not in f or set(f) - {"blockname", "nodes"}:
                    self.b.error(line.loc, "a block line is BlockName=<name> Nodes=<hostlist>")
                    continue
                block = line.prefix + f["blockname"]
                labels = {"source": str(line.loc), "slurm_block": "true", "slurm_topology": line.topology}
                self.b.obj(block, "rack", None, line.loc, labels=labels)
                for host in self.hosts(line, "nodes"):
                    self.node(host, line.loc, block)
            elif "blocksizes" in f:
                if set(f) != {"blocksizes"}:
                    self.b.error(line.loc, "BlockSizes= stands on a line of its own")
                bad = [s for s in f["blocksizes"].split(",") if not _BLOCK_SIZE.fullmatch(s.strip())]
                if bad:
                    # Kept as a label that schedulers' exports read back: a size that is no count
                    # of nodes (`.nan`, `-3`, `0`) would be passed on as if Slurm had said it.
                    self.b.error(
                        line.loc,
                        f"BlockSizes {f['blocksizes']!r}: {bad[0].strip()!r} is not a number of nodes; "
                        "expected positive whole numbers separated by commas, such as BlockSizes=8,16,32",
                    )
            elif "flat" in f:
                pass  # a flat topology says nothing about the fabric
            else:
                self.b.error(line.loc, "expected a line starting with SwitchName=, BlockName= or BlockSizes=")
        sizes = {ln.topology: ln.fields["blocksizes"] for ln in lines if "blocksizes" in ln.fields}
        if sizes:
            for rack in (o for o in self.b.inv.objects.values() if o.labels.get("slurm_block") == "true"):
                size = sizes.get(rack.labels.get("slurm_topology", DEFAULT_TOPOLOGY))
                if size is not None:
                    rack.labels = {**rack.labels, "block_sizes": size}
        for name, line in switches.items():
            link_labels = {"source": str(line.loc), ASSUMED: "bandwidth,kind"}
            if "nodes" in line.fields:
                dropped = self.dropped_prefixes(line)
                for host in self.hosts(line, "nodes"):
                    if host in switches:
                        self.b.error(line.loc, f"{host!r} is a switch, listed under Nodes= of {name}")
                        continue
                    self.node(host, line.loc)
                    labels = {**link_labels, "slurm_member": "node"}
                    if host in dropped:
                        labels["slurm_prefix_dropped"] = dropped[host]
                    self.b.link(name, host, self.kind, self.mbps, line.loc, labels=labels)
            elif "switches" in line.fields:
                for child in self.hosts(line, "switches"):
                    child = line.prefix + child
                    if child not in switches:
                        self.b.error(
                            line.loc, f"switch {name} lists switch {child!r}, which no SwitchName= line defines"
                        )
                        continue
                    self.b.link(
                        name, child, self.kind, self.mbps, line.loc, labels={**link_labels, "slurm_member": "switch"}
                    )
        self.refuse_cycles(switches)
        if self.conf is not None:
            for host, loc in self.conf.nodes.items():
                if not self.b.has(host):
                    self.count_host(loc)
                    self.b.obj(host, "node", None, loc, labels={"source": str(loc), **self._conf_labels(host)})
            unknown = sorted(
                o.id
                for o in self.b.inv.objects.values()
                if o.kind == "node" and "slurm_conf" not in o.labels and o.id not in self.conf.nodes
            )
            if unknown:
                first = self.b.inv.objects[unknown[0]].loc
                shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
                self.b.note(first, f"the topology names nodes that slurm.conf does not define: {shown}")
