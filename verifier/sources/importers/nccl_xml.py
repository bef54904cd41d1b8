"""NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE) to an inventory.

Shape: `<system>` > `<cpu numaid=...>` > nested `<pci busid class link_speed link_width>`
> `<gpu dev sm>` with `<nvlink target count tclass>` children, or `<nic>` with `<net name
speed port>` children (speed in Mb/s). One file describes one node. Names are stable across
tools: GPUs are `gpu0..` and NICs `nic0..` in PCI bus order (the order nvidia-smi numbers
them), PCIe switches `pcisw0..` in document order, CPUs `cpu<numaid>`.

A multi-port NIC is one `<pci>` (NCCL merges a card's functions into function 0) with one `<net>`
per port: each port is a NIC, as hwloc and nvidia-smi list them, and the ports after the first
share the first one's PCIe link (`shares_link_of`), so the card's ports together are judged
against its one link. A device a dump lists under several CPUs (NCCL writes a NIC without a NUMA
node under every CPU) is one device, hung where it is listed first; `also_under` names the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from verifier.core.errors import SourceLocation
from verifier.sources.importers.amd_topo import DEFAULT_XGMI_MBPS
from verifier.sources.importers.build import (
    ASSUMED,
    DEFAULT_NVLINK_LINK_MBPS,
    DEFAULT_PCIE,
    NVLINK_MBPS_BY_SM,
    PCIE_GEN_BY_GTS,
    Builder,
    Imported,
    busid_problem,
    pcie_mbps,
    safe_name,
    whole,
)
from verifier.sources.importers.safe_xml import Element, parse_xml
from verifier.sources.importers.sockets import link_sockets
from verifier.sources.inventory.device_ids import is_emulated_bridge, model_for_pci

# "PCIe/s": aws-ofi-nccl's hand-written p5.48xlarge file (topology/p5.48xl-topo.xml @8807ce1) writes
# "32 GT/s PCIe/s"; NCCL matches the attribute against its "32 GT/s" by prefix and reads 32 GT/s.
_SPEED = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*GT/s(?:\s+PCIe(?:/s)?)?\s*$")
_WIDTHS = (1, 2, 4, 8, 12, 16, 32)
_UNKNOWN = ("", "unknown", "Unknown", "Unknown speed")
_UNSEEN_PEER = "fffffff:ffff:ff"
"""The target NCCL writes for an NVLink peer it cannot see (an NVSwitch hidden from a VM), whose
tclass it then sets to NVSwitch's (src/graph/xml.cc): a tool's own word, not a bad address."""
# No network port runs faster than 1.6 Tb/s (IEEE 802.3dj; XDR InfiniBand ports are 800 Gb/s). NCCL's NIC
# fusion (NCCL_IB_MERGE_NICS, NCCL_NET_FORCE_MERGE) makes one device of up to 8 (4 before the v12 plugin
# API), named "mlx5_0+mlx5_1+...", whose speed is the sum of theirs: a `speed` is a rate in NCCL's Mb/s
# up to 1.6 Tb/s per device its name joins, and at least a merged pair's 3.2 Tb/s. A larger one is a
# network plugin's other unit (an RCCL dump of HPE Slingshot `cxi` NICs, 200 Gb/s ports, says 200000000),
# so it is left unknown rather than read as 200 Tb/s.
PORT_MBIT = 1_600_000
_NO_SPEED = re.compile(r"-?0|-[1-9][0-9]{0,9}")
MAX_PORT_MBIT = 2 * PORT_MBIT


@dataclass
class _Dev:
    category: str  # gpu | nic | nvswitch
    busid: str
    el: Element
    parent: str  # the containing object's id
    uplink: tuple[int, dict[str, int], dict[str, str]] | None  # mbps, attrs, labels of its PCIe link
    nets: list[Element] = field(default_factory=list)
    pci: Element | None = None  # the <pci> element: class, vendor and device ids


def import_nccl_xml(paths: list[Path], node: str | None = None) -> Imported:
    b = Builder([str(p) for p in paths])
    for path in paths:
        root = parse_xml(path)
        name = node if node is not None and len(paths) == 1 else safe_name(path.stem)
        _Reader(b, name, str(path)).system(root)
    return b.finish()


class _Reader:
    def __init__(self, b: Builder, node: str, file: str) -> None:
        self.b, self.node, self.file = b, node, file
        self.devs: list[_Dev] = []
        self.switches = 0
        # Where each device was first read (its bus id, or a PCI-less NIC's port names), and every
        # further CPU that lists it again: one device, never one per listing.
        self.seen: dict[str, tuple[str, list[str]]] = {}
        self.switch_ids: dict[str, str] = {}
        # PCI devices with no class and no <gpu>/<nic> child: said once for the file (a hand-written
        # NCCL_TOPO_FILE leaves every device so; one error per device would repeat one cause 32 times).
        self.classless: list[tuple[str, Element]] = []

    def id(self, name: str) -> str:
        return f"{self.node}/{name}"

    def system(self, root: Element) -> None:
        if root.tag != "system":
            self.b.error(root.loc, f"expected an NCCL topology: the root element is <{root.tag}>, not <system>")
            return
        hosts: list[str] = []
        for c in root.children:
            h = c.get("host_hash") if c.tag == "cpu" else None
            if h and h not in hosts:
                hosts.append(h)
        if len(hosts) > 1:
            # NCCL fuses the topologies of every rank it shares an NVLink domain with (multi-node NVLink,
            # GB200 NVL72) or that it was given: one file, several machines. Read as one node they would be
            # one machine with every host's GPUs; each host is not yet a node of its own here, so refuse.
            self.b.error(
                root.loc,
                f"this NCCL topology holds {len(hosts)} hosts (<cpu host_hash> {', '.join(hosts[:3])}"
                f"{', ...' if len(hosts) > 3 else ''}); expected one host's topology per file: import each host's "
                "own dump",
            )
            return
        self.b.obj(self.node, "node", None, root.loc, labels={"source": root.where, "imported_from": "nccl-xml"})
        for k, cpu in enumerate(root.children):
            if cpu.tag != "cpu":
                self.b.error(cpu.loc, f"<{cpu.tag}> inside <system>; expected <cpu numaid=...> elements")
                continue
            self.cpu(cpu, k)
        cpus = [o for o in self.b.inv.objects.values() if o.kind == "cpu" and o.parent == self.node]
        link_sockets(self.b, [(o.id, o.labels.get("vendor")) for o in cpus], root.loc, "The NCCL topology")
        self.devices()
        self.report_classless()
        self.nvlinks_unknown()

    def nvlinks_unknown(self) -> None:
        """Label the node when the file cannot say whether its GPUs have NVLinks.

        NCCL's dump writes a `<gpu>` element for each GPU it opens, with the GPU's `<nvlink>`s, and the
        PCI ids it reads from sysfs (`vendor`, `device`) on every `<pci>`. A GPU known by its class alone,
        or whose `<gpu>` sits on a `<pci>` without a vendor id, comes from a hand-written NCCL_TOPO_FILE
        (aws-ofi-nccl's p4d/p5 and Azure's ND files): those list no NVLink whatever the machine has, so
        no NVLink there is unknown, not absent (nvidia-smi's NV12/NV18 on the same machine is no conflict).
        """
        gpus = [d for d in self.devs if d.category == "gpu"]
        if not gpus or any(c.tag in ("nvlink", "xgmi") for d in gpus if d.el.tag == "gpu" for c in d.el.children):
            return
        # AMD GPUs have no NVLink to be unknown: RCCL writes `gcn` (the GPU's architecture) on each <gpu> it
        # opens, and its older dumps put no PCI ids on any <pci> (ROCm/rccl topo_8p_pcie.xml, 8 Vega 20 on
        # PCIe); a file may also name AMD's vendor id on a GPU known by its class alone.
        if any(
            (d.el.tag == "gpu" and d.el.get("gcn") is not None)
            or ((d.pci if d.pci is not None else d.el).get("vendor") or "").lower() == "0x1002"
            for d in gpus
        ):
            return
        unprobed = [d for d in gpus if d.el.tag != "gpu" or (d.pci is not None and d.pci.get("vendor") is None)]
        if not unprobed:
            return
        node = self.b.inv.objects[self.node]
        node.labels = {**node.labels, "nvlinks_described": "false"}
        why = "no <gpu> element" if unprobed[0].el.tag != "gpu" else "no PCI vendor id"
        self.b.note(
            unprobed[0].el.loc,
            f"{len(unprobed)} of the {len(gpus)} GPUs ({unprobed[0].busid} first) have {why}, as in a hand-written "
            f"NCCL_TOPO_FILE, which lists no NVLink: node {self.node}'s NVLinks are unknown, not absent",
        )

    def report_classless(self) -> None:
        if not self.classless:
            return
        n, (busid, first) = len(self.classless), self.classless[0]
        if n == 1:
            which = f"PCI device {busid} ({first.path}) has"
        else:
            shown = ", ".join(f"{b} (line {el.loc.line})" for b, el in self.classless[:3])
            which = f"{n} PCI devices, {shown}{f' and {n - 3} more' if n > 3 else ''}, have"
        self.b.error(
            first.loc,
            f"{which} no class and no <gpu>/<nic> child, so GPUs cannot be told from NICs: a hand-written "
            "NCCL_TOPO_FILE leaves that to sysfs, which NCCL reads at run time. Expected "
            'class="0x030200" (GPU), "0x020000" (NIC) or "0x060400" (PCIe switch) on each; an '
            "NCCL_TOPO_DUMP_FILE has them",
        )

    def cpu(self, el: Element, k: int) -> None:
        numa = el.get("numaid")
        if numa == "-1":
            # NCCL writes -1 where the kernel gives the devices no NUMA node (numa_node -1: a one-node Arm
            # system such as GB10, many VMs): a CPU domain whose node is unknown, named as nvidia-smi's are.
            self.b.note(el.loc, f"{el.path} has numaid -1 (the kernel states no NUMA node): cpu-unknown{k}")
            cid = self.id(f"cpu-unknown{k}")
        elif numa is not None and not (numa.isascii() and numa.isdigit()):
            self.b.error(el.loc, f'numaid={numa!r} of {el.path}; expected a NUMA node number such as "0", or -1')
            return
        else:
            cid = self.id(f"cpu{numa if numa is not None else k}")
        labels = {"source": el.where}
        for key in ("numaid", "affinity", "arch", "vendor", "familyid", "modelid"):
            value = el.get(key)
            if value is not None and not (key == "numaid" and value == "-1"):
                labels["numa" if key == "numaid" else key] = value
        self.b.obj(cid, "cpu", self.node, el.loc, labels=labels)
        for child in el.children:
            if child.tag == "pci":
                self.pci(child, cid)
            elif child.tag == "nic":  # a NIC NCCL found without a PCI path (e.g. a virtual one)
                key = "nic:" + ",".join(sorted(n.get("name") or n.get("guid") or "" for n in child.iter("net")))
                if self.listed_again(key, cid, child):
                    continue
                # NCCL places it on this CPU; how it is attached is not stated: an assumed link says so.
                assumed: tuple[int, dict[str, int], dict[str, str]] = (
                    pcie_mbps(*DEFAULT_PCIE),
                    {},
                    {"source": child.where, ASSUMED: "bandwidth,kind"},
                )
                self.b.note(child.loc, f"{child.path} has no PCI path: attached to {cid} by an assumed PCIe link")
                self.devs.append(_Dev("nic", "", child, cid, assumed, list(child.iter("net"))))
            else:
                self.b.error(child.loc, f"<{child.tag}> inside <cpu>; expected <pci> or <nic>")

    def link(self, el: Element) -> tuple[int, dict[str, int], dict[str, str]] | None:
        speed, width = el.get("link_speed"), el.get("link_width")
        labels = {"source": el.where}
        # Virtual machines hide the link: NCCL then writes link_speed="" and link_width="0". Unknown, not zero.
        speed_unknown = speed is None or speed.strip() in _UNKNOWN
        width_unknown = width is None or width.strip() in (*_UNKNOWN, "0")
        gen: int | None = None
        if not speed_unknown:
            m = _SPEED.match(speed or "")
            if m is not None:
                gts = m.group(1).rstrip("0").rstrip(".") if "." in m.group(1) else m.group(1)
                gen = PCIE_GEN_BY_GTS.get(gts)
            if gen is None:
                self.b.error(
                    el.loc,
                    f'link_speed={speed!r} of {el.path}; expected a PCIe rate such as "16.0 GT/s PCIe" '
                    '(2.5, 5, 8, 16, 32 or 64 GT/s), or "" when unknown',
                )
                return None
        lanes: int | None = None
        if not width_unknown:
            lanes = whole(width.strip()) if width is not None else None
            if lanes not in _WIDTHS:
                self.b.error(
                    el.loc,
                    f"link_width={width!r} of {el.path}; expected a lane count: 1, 2, 4, 8, 12, 16 or 32 (0: unknown)",
                )
                return None
        attrs = {k: v for k, v in (("generation", gen), ("lanes", lanes)) if v is not None}
        if gen is None or lanes is None:
            labels[ASSUMED] = "bandwidth"  # the tool itself does not know: say so, do not guess silently
            hidden = " and ".join(w for w, u in (("speed", gen is None), ("width", lanes is None)) if u)
            gen_used, lanes_used = gen or DEFAULT_PCIE[0], lanes or DEFAULT_PCIE[1]
            self.b.note(
                el.loc,
                f"{el.path} does not state its PCIe link {hidden}; its bandwidth is assumed "
                f"(Gen{gen_used} x{lanes_used})",
            )
            return pcie_mbps(gen_used, lanes_used), attrs, labels
        if el.tag == "pci" and is_emulated_bridge(el.get("vendor"), el.get("device")):
            faster = [p for p in el.iter("pci") if _gts(p.get("link_speed")) > _gts(speed)]
            if faster:
                self.b.note(
                    el.loc,
                    f"{el.path} is a bridge that hypervisors emulate ({el.get('vendor')}:{el.get('device')}) and "
                    f"states {speed} x{lanes} while {faster[0].path} below it states {faster[0].get('link_speed')}: "
                    "its link is the emulation's default, so its bandwidth is treated as unknown (assumed)",
                )
                labels[ASSUMED] = "bandwidth"
                return pcie_mbps(*DEFAULT_PCIE), {}, labels
        return pcie_mbps(gen, lanes), attrs, labels

    def pci(self, el: Element, parent: str) -> None:
        busid = el.get("busid")
        if not busid:
            self.b.error(el.loc, f'{el.path} has no busid; expected busid="0000:17:00.0"')
            return
        busid = busid.lower()
        problem = busid_problem(busid, f"busid of {el.path}")
        if problem is not None:
            self.b.error(el.loc, problem)
            return
        if self.listed_again(busid, parent, el):
            return
        uplink = self.link(el)
        gpus, nics = list(el.iter("gpu")), list(el.iter("nic"))
        pcis = list(el.iter("pci"))
        for child in el.children:
            if child.tag not in ("gpu", "nic", "pci"):
                self.b.error(child.loc, f"<{child.tag}> inside <pci>; expected <pci>, <gpu> or <nic>")
        category = self.category(el, busid, gpus, nics, pcis)
        if category is None:
            return
        if category == "pcie_switch":
            sid = self.id(f"pcisw{self.switches}")
            self.switches += 1
            self.b.obj(sid, "pcie_switch", parent, el.loc, labels=_pci_labels(el, busid))
            self.switch_ids[busid] = sid
            if uplink is not None:
                self.b.link(sid, parent, "pcie", uplink[0], el.loc, attrs=uplink[1], labels=uplink[2])
            for child in pcis:
                self.pci(child, sid)
            return
        if pcis:
            self.b.error(el.loc, f"{el.path} is a {category} but contains <pci> devices; only bridges can")
        if category == "gpu" and len(gpus) > 1:
            self.b.error(gpus[1].loc, f"{el.path} has {len(gpus)} <gpu> elements; expected one")
        nets = [n for nic in nics for n in nic.iter("net")]
        for nic in nics:
            for child in nic.children:
                if child.tag != "net":
                    self.b.error(child.loc, f"<{child.tag}> inside <nic>; expected <net name=... speed=...>")
        target = gpus[0] if gpus else el
        self.devs.append(_Dev(category, busid, target if category == "gpu" else el, parent, uplink, nets, el))

    def listed_again(self, key: str, parent: str, el: Element) -> bool:
        """True when `key` was read before under another parent: noted, and left to the first listing."""
        seen = self.seen.get(key)
        if seen is None:
            self.seen[key] = (parent, [])
            return False
        first, others = seen
        if parent != first and parent not in others:
            others.append(parent)
        what = key.removeprefix("nic:")
        self.b.note(
            el.loc,
            f"{el.path} ({what}) is listed again under {parent}, first under {first}: one device, read once "
            "(NCCL lists a device without a NUMA node under every CPU)",
        )
        sid = self.switch_ids.get(key)
        if sid is not None:
            obj = self.b.inv.objects[sid]
            obj.labels = {**obj.labels, "also_under": ",".join(others)}
        return True

    def category(
        self, el: Element, busid: str, gpus: list[Element], nics: list[Element], pcis: list[Element]
    ) -> str | None:
        if gpus:
            return "gpu"
        if nics:
            return "nic"
        raw = el.get("class")
        if raw is None:
            if pcis:  # only a bridge can hold further PCI devices
                return "pcie_switch"
            self.classless.append((busid, el))
            return None
        try:
            cls = int(raw, 16)
        except ValueError:
            self.b.error(el.loc, f'class={raw!r} of {el.path}; expected a PCI class code such as "0x030200"')
            return None
        base, sub = cls >> 16, (cls >> 8) & 0xFF
        vendor = (el.get("vendor") or "").lower()
        if (base, sub) == (0x06, 0x04):
            return "pcie_switch"
        if (base, sub) == (0x06, 0x80) and vendor in ("0x10de", ""):
            return "nvswitch"
        if base in (0x03, 0x12):
            return "gpu"
        if base == 0x02 or (base, sub) == (0x0C, 0x06):
            return "nic"
        self.b.note(el.loc, f"PCI device {busid} of class {raw} is not a GPU, NIC or switch; not imported")
        return None

    def devices(self) -> None:
        """Name devices in bus order, then create them and their links."""
        by_bus: dict[str, str] = {}
        counters = {"gpu": 0, "nic": 0, "nvswitch": 0}
        prefix = {"gpu": "gpu", "nic": "nic", "nvswitch": "nvsw"}
        # A NIC function beside another of the same device (a file that lists functions 0 and 1 as two
        # <pci>, where a dump merges them) is a port of the same card on the same link, as in hwloc.
        cards: dict[tuple[str, str], str] = {}
        for dev in sorted(self.devs, key=lambda d: (d.category, d.busid or "~", d.el.loc)):
            ports = dev.nets if dev.category == "nic" and dev.nets else [None]
            slot = (dev.parent, dev.busid.rsplit(".", 1)[0]) if dev.category == "nic" and dev.busid else None
            sibling = cards.get(slot) if slot is not None else None
            first = ""
            for net in ports:
                k = counters[dev.category]
                counters[dev.category] += 1
                did = self.id(f"{prefix[dev.category]}{k}")
                self.device(dev, did, net, first or sibling, merged=bool(first))
                first = first or did
            if slot is not None and sibling is None:
                cards[slot] = first
            if dev.busid:
                by_bus[dev.busid] = first
        done: dict[frozenset[str], tuple[int, SourceLocation]] = {}
        switches: dict[str, str] = {}
        for dev in self.devs:
            if dev.category == "gpu":
                self.nvlinks(dev, by_bus, done, switches)

    def device(self, dev: _Dev, did: str, net: Element | None, card: str | None, merged: bool = False) -> None:
        """One device, or one port of a NIC; `card`: the card's first port, whose PCIe link this port shares;
        `merged`: a further <net> of the same <pci>, whose own PCI function the dump does not state.
        """
        labels = _pci_labels(dev.pci or dev.el, dev.busid) if dev.busid else {"source": dev.el.where}
        labels["source"] = dev.el.where
        key = dev.busid or "nic:" + ",".join(sorted(n.get("name") or n.get("guid") or "" for n in dev.nets))
        seen = self.seen.get(key)
        if seen is not None and seen[1]:
            labels["also_under"] = ",".join(seen[1])
        if merged:
            # The bus id is the card's (NCCL writes function 0 for every port): the port's own
            # function is not stated, so the port is known by its name, and by the card it shares.
            labels["card_pci_busid"] = labels.pop("pci_busid", "")
        if card is not None:
            labels["shares_link_of"] = card
        quantities: dict[str, int] = {}
        loc = dev.el.loc
        model = model_for_pci(labels.get("pci_vendor"), labels.get("pci_device"))
        if dev.category == "gpu":
            for key in ("dev", "sm", "rank", "gdr"):
                value = dev.el.get(key)
                if value is not None:
                    labels["nccl_" + key] = value
        if net is not None:
            loc = net.loc
            labels["source"] = net.where
            for key in ("name", "port", "guid", "dev"):
                value = net.get(key)
                if value is not None:
                    labels["nccl_" + key if key == "dev" else key] = value
            speed = net.get("speed")
            dev_no, guid = whole(net.get("dev") or ""), (net.get("guid") or "").lower()
            if speed == "10000" and dev_no is not None and guid == f"0x{dev_no:x}":
                # NCCL's socket transport (guid = its device number) writes 10000 Mb/s when the kernel
                # states no speed (/sys/class/net/<if>/speed unreadable or -1: Wi-Fi, tunnels, many
                # VMs): not a rate the port was measured at, so it is left unknown.
                self.b.note(
                    net.loc,
                    f"{did} ({net.get('name')}) is an NCCL socket device at 10000 Mb/s, NCCL's default when the "
                    "kernel states no speed: its speed is left unknown (a real 10 GbE port prints the same: "
                    "declare its bandwidth, 10 Gb/s, if it is one, or read its speed with ethtool)",
                )
                speed = None
            if speed is not None and _NO_SPEED.fullmatch(speed):
                # NCCL reads a speed of 0 or below as "not stated" and assumes 10 Gb/s (src/graph/topo.cc,
                # ncclTopoAddNet: "Some NICs define speed = -1"); a plugin whose provider reports no link
                # speed (libfabric's EFA provider says 0) writes it so: a real dump, with no rate in it.
                self.b.note(
                    net.loc,
                    f"{did} ({net.get('name')}) speed={speed!r} is NCCL's word for a port speed it was not told "
                    "(NCCL then assumes 10 Gb/s): its speed is left unknown (declare the port's bandwidth)",
                )
                speed = None
            megabits = whole(speed) if speed is not None else None
            # A fused device's name joins its members' names with '+' (NCCL's ncclIbMakeVDevice).
            limit = max(MAX_PORT_MBIT, PORT_MBIT * len((net.get("name") or "").split("+")))
            # A figure past 64 bits is no number NCCL prints (its speeds are 64-bit integers): refused below.
            if megabits is not None and limit < megabits < 2**63:
                self.b.note(
                    net.loc,
                    f"{did} ({net.get('name')}) speed={speed!r} would be {megabits / 1_000_000:g} Tb/s in NCCL's "
                    f"Mb/s, beyond any network port (at most {limit} Mb/s): a network plugin wrote it in "
                    "another unit, so its speed is left unknown (declare the port's bandwidth)",
                )
                speed = None
            if speed is not None:
                if megabits:
                    # Mb/s to MB/s, rounded exactly (a float loses digits past 2**53).
                    quantities["bandwidth_mbps"] = max(1, round(Fraction(megabits, 8)))
                else:
                    self.b.error(
                        net.loc, f"speed={speed!r} of {net.path}; expected the port speed in Mb/s, e.g. 200000"
                    )
        if model is not None and net is not None and "bandwidth_mbps" in quantities:
            port = self.b.inv.models[model].specs.get("port_mbps")
            if port is not None and quantities["bandwidth_mbps"] != port:
                self.b.note(
                    net.loc,
                    f"{did} ({model}) runs its port at {quantities['bandwidth_mbps']} MB/s; the model's ports "
                    f"are {port} MB/s",
                )
        self.b.obj(did, dev.category, dev.parent, loc, labels=labels, quantities=quantities, model=model)
        if dev.uplink is not None:
            mbps, attrs, link_labels = dev.uplink
            # A further port hangs on the card's first port, as hwloc hangs a card's further functions.
            self.b.link(did, card or dev.parent, "pcie", mbps, loc, attrs=attrs, labels=link_labels)

    def c2c(self, el: Element, gid: str) -> None:
        """`<c2c bw count>` in a `<gpu>` (Grace Hopper, GB200, GB10): NVLink-C2C to the GPU's own CPU.

        NCCL reads `bw` as one link's MB/s and connects the GPU with the CPU above it at bw x count
        (src/graph/topo.cc, ncclTopoAddC2c): a `c2c` link of that bandwidth and `count` links.
        """
        bw, count = whole(el.get("bw") or ""), whole(el.get("count") or "")
        if not bw or not count or bw < 1 or count < 1:
            self.b.error(el.loc, f'{el.path} needs bw="<MB/s per link>" and count="<links>" (positive whole numbers)')
            return
        cpu = self.b.inv.objects[gid].parent
        while cpu is not None and self.b.inv.objects[cpu].kind != "cpu":
            cpu = self.b.inv.objects[cpu].parent
        if cpu is None:  # pragma: no cover - every device of a dump hangs under a <cpu>
            return
        self.b.link(gid, cpu, "c2c", bw * count, el.loc, attrs={"count": count}, labels={"source": el.where})

    def nvlinks(
        self,
        dev: _Dev,
        by_bus: dict[str, str],
        done: dict[frozenset[str], tuple[int, SourceLocation]],
        switches: dict[str, str],
    ) -> None:
        gid = by_bus[dev.busid]
        sm = dev.el.get("sm")
        sm_number = whole(sm)
        per_link = NVLINK_MBPS_BY_SM.get(sm_number // 10) if sm_number is not None else None
        for child in dev.el.children:
            if child.tag == "c2c":
                self.c2c(child, gid)
            elif child.tag not in ("nvlink", "xgmi"):
                self.b.note(child.loc, f"<{child.tag}> of {gid} ({child.path}) is not modelled; not imported")
        self.xgmi(dev, gid, by_bus, done)
        for nv in dev.el.iter("nvlink"):
            target, count = (nv.get("target") or "").lower(), nv.get("count") or ""
            n = whole(count) or 0
            if not target or n < 1:
                self.b.error(nv.loc, f'{nv.path} needs target="<busid>" and count="<links>" (a positive number)')
                continue
            problem = None if target == _UNSEEN_PEER else busid_problem(target, f"target of {nv.path}")
            if problem is not None:
                self.b.error(nv.loc, problem)
                continue
            labels = {"source": nv.where}
            if per_link is None:
                labels[ASSUMED] = "bandwidth"
            mbps = n * (per_link or DEFAULT_NVLINK_LINK_MBPS)
            attrs = {"count": n}
            other = by_bus.get(target)
            tclass = (nv.get("tclass") or "").lower()
            if other == gid:
                # NCCL writes this for a GPU whose NVLinks lead to no GPU it can see (a VM given one
                # GPU of an NVLink board): the links exist, their peers are outside this description.
                self.b.note(
                    nv.loc, f"{gid} lists {n} NVLinks to itself: their peers are not in this file; not imported"
                )
                continue
            if other is not None and self.b.inv.objects[other].kind == "gpu":
                pair = frozenset((gid, other))
                seen = done.get(pair)
                if seen is None:
                    done[pair] = (n, nv.loc)
                    self.b.link(gid, other, "nvlink", mbps, nv.loc, attrs=attrs, labels=labels)
                elif seen[0] != n:
                    self.b.error(nv.loc, f"{gid} lists {n} NVLinks to {other}, which lists {seen[0]} back ({seen[1]})")
            elif tclass in ("0x068000", "") or other is not None:
                sw = other or switches.get(target)
                if sw is None:
                    # Continue the numbering of NVSwitches seen as PCI devices, so ids never collide.
                    known = sum(1 for o in self.b.inv.objects.values() if o.kind == "nvswitch")
                    sw = switches[target] = self.id(f"nvsw{known}")
                    self.b.obj(sw, "nvswitch", self.node, nv.loc, labels={"pci_busid": target, "source": nv.where})
                self.b.link(gid, sw, "nvswitch", mbps, nv.loc, attrs=attrs, labels=labels)
            else:
                self.b.note(
                    nv.loc,
                    f"NVLink from {gid} to {target} (class {tclass}, e.g. a POWER9 CPU) is not modelled; not imported",
                )

    def xgmi(
        self, dev: _Dev, gid: str, by_bus: dict[str, str], done: dict[frozenset[str], tuple[int, SourceLocation]]
    ) -> None:
        """RCCL's `<xgmi target count>` (an AMD GPU's xGMI links to the GPU at `target`): one `xgmi` link
        of `count` links, each at DEFAULT_XGMI_MBPS (assumed: RCCL writes no link speed).
        """
        for x in dev.el.iter("xgmi"):
            target, n = (x.get("target") or "").lower(), whole(x.get("count") or "") or 0
            if not target or n < 1:
                self.b.error(x.loc, f'{x.path} needs target="<busid>" and count="<links>" (a positive number)')
                continue
            problem = None if target == _UNSEEN_PEER else busid_problem(target, f"target of {x.path}")
            if problem is not None:
                self.b.error(x.loc, problem)
                continue
            other = by_bus.get(target)
            if other is None or other == gid or self.b.inv.objects[other].kind != "gpu":
                self.b.note(
                    x.loc, f"xGMI from {gid} to {target}, not a GPU in this file, is not modelled; not imported"
                )
                continue
            pair = frozenset((gid, other))
            seen = done.get(pair)
            if seen is None:
                done[pair] = (n, x.loc)
                labels = {"source": x.where, ASSUMED: "bandwidth"}
                self.b.link(gid, other, "xgmi", n * DEFAULT_XGMI_MBPS, x.loc, attrs={"count": n}, labels=labels)
            elif seen[0] != n:
                self.b.error(x.loc, f"{gid} lists {n} xGMI links to {other}, which lists {seen[0]} back ({seen[1]})")


def _gts(speed: str | None) -> float:
    m = _SPEED.match(speed or "")
    return float(m.group(1)) if m else 0.0


def _pci_labels(el: Element, busid: str) -> dict[str, str]:
    labels = {"pci_busid": busid, "source": el.where}
    for key in ("class", "vendor", "device"):
        value = el.get(key)
        if value is not None:
            labels["pci_" + key] = value.lower()
    return labels
