"""hwloc XML (`lstopo --of xml`, hwloc 2.x: `<topology version="2.0">` or `"3.0"`) to an inventory.

Machine -> node; Package -> cpu `cpu<os_index>`; Die -> die; NUMANode -> memory `numa<os_index>`
(size from local_memory); caches and memory-side caches -> cache (size, level, type); Core -> core
(its PUs become `threads` and the `pus` label, CPU kinds become `cpu_kind`); a host bridge -> a
root complex `hb<k>` (kind cpu) in a `socket<N>` that also holds its package, so PHB and NODE stay
apart; PCIe switches -> one pcie_switch per switch (its upstream port; root ports belong to the
CPU, downstream ports to their switch); PCI devices -> gpu / nic / nvswitch, GPUs and NICs numbered
in bus order, functions of one device sharing its link; pci_link_speed (GB/s) -> the PCIe link's
bandwidth; the NVLinkBandwidth matrix -> NVLink, NVSwitch and GPU-CPU (c2c) links; memory
attributes Bandwidth (MB/s) and Latency (ns) seen from local CPUs -> memory figures. Groups only
structure the tree, so their children attach to the enclosing object.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from verifier.core.limits import INT64_MAX
from verifier.sources.importers.amd_topo import DEFAULT_XGMI_MBPS
from verifier.sources.importers.build import (
    ASSUMED,
    DEFAULT_PCIE,
    Builder,
    Imported,
    busid_problem,
    pcie_mbps,
    safe_name,
    whole,
)
from verifier.sources.importers.cpu_names import cpu_models_for_name
from verifier.sources.importers.safe_xml import Element, parse_xml
from verifier.sources.importers.sockets import link_sockets
from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.device_ids import is_display_only, model_for_name, model_for_pci
from verifier.sources.inventory.model import Link

_CACHE = re.compile(r"^L([0-9])([id]?)Cache$")
_CACHE_TYPE = {"0": "unified", "1": "data", "2": "instruction"}
_PCI_TYPE = re.compile(r"^([0-9a-fA-F]{4}) \[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]")
_SKIPPED = ("support", "pci_locality")  # hwloc's own discovery bookkeeping, not hardware
_INTRINSIC_MEMATTRS = ("Capacity", "Locality")  # duplicates of local_memory and the cpuset
_XGMI = ("XGMIHops", "XGMIBandwidth")  # hwloc's RSMI backend: AMD GPUs' xGMI paths
# Amazon's ENA device ids (Linux drivers/net/ethernet/amazon/ena: PF 0ec2, LLQ PF 1ec2, VF ec20,
# LLQ VF ec21; pci.ids names 1d0f:ec20 "Elastic Network Adapter (ENA)"). EFA ids are 1d0f:efa*.
_ENA_IDS = ("0x0ec2", "0x1ec2", "0xec20", "0xec21")


@dataclass
class _Pci:
    el: Element
    category: str
    busid: str
    parent: str
    p2p: bool  # below a root or downstream port: every function on that bus shares one link


def import_hwloc_xml(paths: list[Path], node: str | None = None) -> Imported:
    b = Builder([str(p) for p in paths])
    for path in paths:
        root = parse_xml(path)
        name = node if node is not None and len(paths) == 1 else safe_name(path.stem)
        _Reader(b, name).topology(root)
    return b.finish()


def _cpuset_bits(text: str | None) -> set[int]:
    """Hwloc cpusets: comma-separated 32-bit hex words, most significant first."""
    if not text:
        return set()
    words = [w.strip().removeprefix("0x") for w in text.split(",")]
    if not all(re.fullmatch(r"[0-9a-fA-F]{1,8}", w) for w in words) or len(words) > 4096:
        return set()  # not a cpuset hwloc writes: it names no PU, and the PUs stay where the tree puts them
    value = int("".join(w.rjust(8, "0") for w in words), 16)
    return {i for i in range(value.bit_length()) if value >> i & 1}


class _Reader:
    def __init__(self, b: Builder, node: str) -> None:
        self.b, self.node = b, node
        self.counters: dict[str, int] = {}
        self.by_gp: dict[str, str] = {}  # hwloc gp_index -> object id (OSDevs map to their PCI device)
        self.numa_els: dict[str, Element] = {}
        self.pcis: list[_Pci] = []
        self.core_pus: dict[str, list[int]] = {}
        self.core_el: dict[str, Element] = {}
        self.bridges: list[tuple[str, str]] = []  # (package or host bridge, its socket)
        self.version = ""
        self.hwloc_version_text = ""
        self.hwloc_release: tuple[int, int] | None = None  # (major, minor) of the hwloc that wrote the file

    def id(self, name: str) -> str:
        return f"{self.node}/{name}"

    def next(self, prefix: str) -> str:
        k = self.counters.get(prefix, 0)
        self.counters[prefix] = k + 1
        return self.id(f"{prefix}{k}")

    def topology(self, root: Element) -> None:
        if root.tag != "topology":
            self.b.error(root.loc, f"expected hwloc XML: the root element is <{root.tag}>, not <topology>")
            return
        version = root.get("version")
        if version not in ("2.0", "3.0"):
            self.b.error(
                root.loc,
                f'hwloc XML version {version!r}; expected "2.0" or "3.0" (hwloc 2.x: lstopo --of xml); '
                "hwloc 1.x files can be converted with hwloc 2's hwloc-convert",
            )
            return
        self.version = version
        machines = [c for c in root.children if c.tag == "object"]
        if len(machines) != 1 or machines[0].get("type") != "Machine":
            self.b.error(root.loc, 'expected exactly one top-level <object type="Machine">')
            return
        # hwloc writes its own release as an info of the Machine (2.x) or of the topology (3.0).
        for info in [*root.children, *machines[0].children]:
            if info.tag == "info" and info.get("name") == "hwlocVersion":
                self.hwloc_version_text = (info.get("value") or "").strip()
        m = re.match(r"([0-9]{1,4})\.([0-9]{1,4})(?![0-9])", self.hwloc_version_text)
        self.hwloc_release = (int(m.group(1)), int(m.group(2))) if m else None
        self.walk(machines[0], None)
        self.unfit_cpu_models()
        packages = [
            o
            for o in self.b.inv.objects.values()
            if o.kind == "cpu" and o.id.startswith(self.node + "/") and o.labels.get("role") != "host_bridge"
        ]
        socket_of = dict(self.bridges)
        domains = [(socket_of.get(o.id, o.id), o) for o in packages]
        link_sockets(
            self.b, [(d, o.labels.get("hwloc_CPUVendor")) for d, o in domains], machines[0].loc, "hwloc's topology"
        )
        self.devices()
        self.unstated_uplinks()
        self.virtual_uplinks()
        self.bridge_links()
        kinds = []
        xgmi: dict[str, Element] = {}
        for child in root.children:
            if child.tag == "object" or child.tag in _SKIPPED or child.tag == "info":
                continue
            if child.tag == "cpukind":
                kinds.append(child)
            elif child.tag == "memattr":
                self.memattr(child)
            elif child.tag == "distances2hetero" and child.get("name") == "NVLinkBandwidth":
                self.nvlinks(child)
                self.nvswitch_trunks(child)
            elif child.tag in ("distances2", "distances2hetero") and child.get("name") in _XGMI:
                xgmi[child.get("name") or ""] = child
            else:
                self.b.note(child.loc, f"<{child.tag}{_name_of(child)}> is not modelled by topolog; not imported")
        self.xgmi(xgmi.get("XGMIHops"), xgmi.get("XGMIBandwidth"))
        nvlink_matrix = any(c.tag == "distances2hetero" and c.get("name") == "NVLinkBandwidth" for c in root.children)
        self.nvlinks_unknown(machines[0], nvlink_matrix)
        self.cpukinds(kinds)
        for cid, pus in self.core_pus.items():
            obj = self.b.inv.objects[cid]
            obj.quantities = {**obj.quantities, "threads": len(pus)}
            obj.labels = {**obj.labels, "pus": ",".join(str(p) for p in sorted(pus))}

    def nvlinks_unknown(self, machine: Element, nvlink_matrix: bool) -> None:
        """Only hwloc's NVML backend reads NVLinks (the NVLinkBandwidth matrix, an `nvml<k>` OS device per
        GPU). A capture of NVIDIA GPUs none of which has an NVML OS device was taken without it (AWS's
        p4d/p5en/p6 lstopo files list OpenCL and DRM devices only), so no NVLink there is unknown, not
        absent: the node is labelled `nvlinks_described: "false"`, as a hand-written NCCL_TOPO_FILE is,
        and `topolog reconcile` does not hold nvidia-smi's NV# against it.
        """
        if nvlink_matrix:
            return
        nvidia = [
            o
            for o in self.b.inv.objects.values()
            if o.kind == "gpu" and o.id.startswith(self.node + "/") and o.labels.get("pci_vendor") == "0x10de"
        ]
        if not nvidia or any("nvml" in o.labels.get("os_devices", "") for o in nvidia):
            return
        node = self.b.inv.objects[self.node]
        node.labels = {**node.labels, "nvlinks_described": "false"}
        self.b.note(
            machine.loc,
            f"none of the {len(nvidia)} NVIDIA GPUs has an NVML OS device (nvml<k>) and there is no NVLinkBandwidth "
            f"matrix: hwloc ran without its NVML backend, so node {self.node}'s NVLinks are unknown, not absent",
        )

    def walk(
        self, el: Element, parent: str | None, core: str | None = None, port: str = "", package: str | None = None
    ) -> None:
        """`port`: what the enclosing bridge is ("host:<its bus>", "root", "up", "down"), or ""."""
        kind = el.get("type") or ""
        inner = ""
        # An empty DMI string (an unset asset tag) states nothing; an empty label would not load back.
        infos = {
            f"hwloc_{i.get('name')}": i.get("value") or ""
            for i in el.iter("info")
            if i.get("name") and (i.get("value") or "").strip()
        }
        labels = {"source": el.where, **infos}
        here: str | None = parent
        cache = _CACHE.match(kind)
        if kind == "Machine":
            here = self.node
            self.b.obj(here, "node", None, el.loc, labels={**labels, "imported_from": "hwloc"})
        elif kind == "Package":
            here = package = self.id(f"cpu{el.get('os_index')}") if el.get("os_index") else self.next("cpu")
            self.b.obj(here, "cpu", parent, el.loc, labels=labels, model=self.cpu_model(el, here, labels))
        elif kind == "Die":
            here = self.next("die")
            self.b.obj(here, "die", parent, el.loc, labels=labels)
        elif kind == "NUMANode":
            here = self.id(f"numa{el.get('os_index')}") if el.get("os_index") else self.next("numa")
            q = {}
            mem = el.get("local_memory")
            size_bytes = whole(mem)
            if size_bytes:
                q["size_mb"] = round(Fraction(size_bytes, 1_000_000))  # exact: a float loses digits past 2**53
            if el.get("subtype"):
                labels["memory_type"] = el.get("subtype") or ""
            if (el.get("os_index") or "").isascii() and (el.get("os_index") or "").isdigit():
                labels["numa"] = el.get("os_index") or ""  # the NUMA node number, as NCCL and nvidia-smi give it
            self.b.obj(here, "memory", parent, el.loc, labels=labels, quantities=q)
            self.numa_els[here] = el
        elif cache is not None or kind == "MemCache":
            level = cache.group(1) if cache else el.get("depth") or "1"
            if not (level.isascii() and level.isdigit() and len(level) <= 2):
                self.b.error(el.loc, f"MemCache depth {level!r}; expected a cache level such as 1, 2 or 3")
                return
            here = self.next(f"l{level}{cache.group(2) if cache else 'mem'}cache")
            q = {"level": int(level)}
            size = el.get("cache_size")
            cache_bytes = whole(size)
            if cache_bytes:
                q["size_kb"] = round(Fraction(cache_bytes, 1000))
            labels["cache_type"] = _CACHE_TYPE.get(el.get("cache_type") or "0", "unified")
            if kind == "MemCache":
                labels["memory_side"] = "true"
            self.b.obj(here, "cache", parent, el.loc, labels=labels, quantities=q)
        elif kind == "Core":
            here = core = self.next("core")
            self.b.obj(here, "core", parent, el.loc, labels=labels)
            self.core_pus[here] = []
        elif kind == "PU":
            raw_index = el.get("os_index") or "0"
            if not (raw_index.isascii() and raw_index.isdigit() and len(raw_index) <= 18):
                self.b.error(el.loc, f"PU os_index {raw_index!r}; expected a whole number (the PU's OS index)")
                return
            os_index = int(raw_index)
            if core is None:  # a PU without a Core above it stands for a core of one thread
                here = core = self.id(f"pu{os_index}")
                self.b.obj(here, "core", parent, el.loc, labels={**labels, "hwloc_type": "PU"})
                self.core_pus[here] = []
            self.core_pus[core].append(os_index)
        elif kind == "Bridge" and (el.get("bridge_type") or "").startswith("0-"):
            # The host bridge: its PCI tree belongs to the enclosing package.
            m = re.match(r"^[0-9a-fA-F]{4}:\[([0-9a-fA-F]{2})-", el.get("bridge_pci") or "")
            inner = f"host:{m.group(1).lower() if m else ''}"
            # hwloc hangs I/O on the largest object of its locality: on a one-package machine that is
            # the Machine, yet the host bridge is that package's.
            package = package or self.only_package()
            if package is not None:
                here = self.host_bridge(el, package, labels)
        elif kind == "Bridge":
            # PCIe is point to point: below a root port comes one device or a switch's upstream port;
            # below an upstream port only that switch's downstream ports. So the ports of one switch
            # are one pcie_switch, and a root port is part of the CPU's root complex, not a switch.
            busid = (el.get("pci_busid") or "").lower()
            problem = busid_problem(busid, f"pci_busid of {el.path}")
            if problem is not None:
                self.b.error(el.loc, problem)
                return
            bus = busid.split(":")[1] if busid.count(":") == 2 else ""
            if port.startswith("host:"):
                inner = "root" if bus and bus == port[5:] else "up"
            else:
                inner = "down" if port == "up" else "up"
            if inner == "up":
                here = self.next("pcisw")
                self.b.obj(here, "pcie_switch", parent, el.loc, labels={**labels, "pci_busid": busid, **_pci_type(el)})
                self.uplink(el, here, parent)
        elif kind == "PCIDev":
            self.pcidev(el, parent, port in ("root", "down"))
            return
        elif kind == "Group":
            pass  # a grouping (cluster, die set): no figures of its own
        elif kind == "OSDev":
            self.b.note(el.loc, f"OS device {el.get('name')!r} outside a PCI device is not modelled; not imported")
            return
        else:
            self.b.note(el.loc, f"hwloc object type {kind!r} is not modelled by topolog; not imported")
            return
        if el.get("gp_index") and here is not None:
            self.by_gp[el.get("gp_index") or ""] = here
        for child in el.children:
            if child.tag == "object":
                self.walk(child, here, core, inner, package)

    def cpu_model(self, el: Element, oid: str, labels: dict[str, str]) -> str | None:
        """The catalogue CPU that the package's CPUModel names (cpu_names.py), or None: an unknown
        name leaves the model unknown, and a name that fits several catalogue CPUs is said, not mapped.
        """
        name = labels.get("hwloc_CPUModel")
        found = cpu_models_for_name(name, labels.get("hwloc_CPUVendor"))
        if len(found) > 1:
            self.b.note(
                el.loc,
                f"{oid}: CPUModel {name!r} fits the catalogue CPUs {', '.join(found)}; no model is taken",
            )
        return found[0] if len(found) == 1 else None

    def unfit_cpu_models(self) -> None:
        """A catalogue CPU taken from CPUModel is dropped where the packages cannot be that part's sockets:
        more packages of it than the part's max_sockets, or a package with more cores than the part has.
        A physical machine never shows either, a virtual machine does: a KVM guest given the host's CPU
        (host-passthrough) names the host's part yet lays out its vCPUs as its own configuration says
        (one socket per vCPU, or one socket of all vCPUs), so 16 vCPUs of an EPYC 7742 host read as 16
        packages. Kept, the model would make NODE013/NODE009 report a board no one built.
        """
        node = self.node + "/"
        modelled = {
            oid: o.model
            for oid, o in self.b.inv.objects.items()
            if o.kind == "cpu" and o.model is not None and oid.startswith(node)
        }
        if not modelled:
            return
        cores: dict[str, int] = dict.fromkeys(modelled, 0)
        for cid in self.core_pus:
            cur = self.b.inv.objects[cid].parent
            while cur is not None and cur not in modelled:
                cur = self.b.inv.objects[cur].parent
            if cur is not None:
                cores[cur] += 1
        specs = {m.name: m.specs for m in builtin_models() if m.kind == "cpu"}
        for model in sorted(set(modelled.values())):
            ids = sorted(oid for oid, m in modelled.items() if m == model)
            most, per = specs.get(model, {}).get("max_sockets"), specs.get(model, {}).get("cores")
            over = [oid for oid in ids if per is not None and cores[oid] > per]
            if not over and (most is None or len(ids) <= most):
                continue
            for oid in ids:
                self.b.inv.objects[oid].model = None
            why = (
                f"{len(ids)} packages of it where the part takes at most {most} socket(s)"
                if most is not None and len(ids) > most
                else f"{over[0]} with {cores[over[0]]} cores where the part has {per}"
            )
            named = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")  # a guest may hold 100s
            self.b.note(
                self.b.inv.objects[ids[0]].loc,
                f"{named}: CPUModel names the catalogue CPU {model}, but the topology holds {why}: "
                "these packages are not that part's sockets (a virtual machine's vCPU layout), so no model is taken",
            )

    def only_package(self) -> str | None:
        packages = [
            o.id
            for o in self.b.inv.objects.values()
            if o.kind == "cpu" and o.id.startswith(self.node + "/") and o.labels.get("role") != "host_bridge"
        ]
        return packages[0] if len(packages) == 1 else None

    def host_bridge(self, el: Element, package: str, labels: dict[str, str]) -> str:
        """A host bridge as a root complex (`hb<k>`, kind cpu) of its package's socket.

        The path rules tell PHB (one root complex) from NODE (two of one socket) by the root's
        parent: so the package gets a `socket<N>` above it, holding the package and its host bridges.
        """
        pkg = self.b.inv.objects[package]
        sock = self.id("socket" + package.rsplit("/", 1)[-1].removeprefix("cpu"))
        if sock not in self.b.inv.objects:
            self.b.obj(
                sock, "socket", pkg.parent, pkg.loc, labels={"source": pkg.labels.get("source", ""), "inferred": "true"}
            )
            pkg.parent = sock
            self.bridges.append((package, sock))
        hb = self.next("hb")
        extra = {"bridge_pci": el.get("bridge_pci") or ""} if el.get("bridge_pci") else {}
        self.b.obj(hb, "cpu", sock, el.loc, labels={**labels, "role": "host_bridge", **extra})
        self.bridges.append((hb, sock))
        return hb

    def bridge_links(self) -> None:
        """Each root complex (and the package) to its socket's fabric: never narrower than what hangs on it.

        hwloc states no figure for a CPU's internal fabric, so the link takes the widest link below it,
        labelled assumed: the paths' bottlenecks stay the links hwloc does state.
        """
        for cpu, sock in self.bridges:
            below = [lk.mbps for lk in self.b.inv.links.values() if lk.b == cpu or lk.a == cpu]
            mbps = max(below, default=pcie_mbps(*DEFAULT_PCIE))
            obj = self.b.inv.objects[cpu]
            self.b.link(cpu, sock, "soc", mbps, obj.loc, labels={ASSUMED: "bandwidth", "source": obj.labels["source"]})

    def uplink(self, el: Element, oid: str, parent: str | None) -> None:
        if parent is None:
            return
        raw = el.get("pci_link_speed")
        labels = {"source": el.where}
        try:
            gbps = float(raw) if raw is not None else 0.0
        except ValueError:
            gbps = math.nan
        # A figure that is not a finite GB/s, or that comes to no whole MB/s or more than 64 bits
        # hold, cannot be read exactly: refused here, at the line that holds it.
        mbps = round(gbps * 1000) if math.isfinite(gbps) and gbps > 0 else 0
        if not math.isfinite(gbps) or gbps < 0 or (gbps > 0 and not 1 <= mbps <= INT64_MAX):
            self.b.error(el.loc, f'pci_link_speed={raw!r} of {el.path}; expected GB/s such as "15.753846"')
            return
        if not mbps:  # hwloc writes 0 when the OS does not report the link (virtual machines)
            mbps, labels[ASSUMED] = pcie_mbps(*DEFAULT_PCIE), "bandwidth"
        self.b.link(oid, parent, "pcie", mbps, el.loc, labels=labels)

    def pcidev(self, el: Element, parent: str | None, p2p: bool) -> None:
        busid = (el.get("pci_busid") or "").lower()
        problem = busid_problem(busid, f"pci_busid of {el.path}")
        if problem is not None:
            self.b.error(el.loc, problem)
            return
        m = _PCI_TYPE.match(el.get("pci_type") or "")
        subtype = el.get("subtype")
        osdevs = [c for c in el.children if c.tag == "object" and c.get("type") == "OSDev"]
        if m is None and subtype is None:
            self.b.error(el.loc, f'pci_type={el.get("pci_type")!r} of {el.path}; expected "0302 [10de:20b0] ..."')
            return
        cls, vendor = (m.group(1).lower(), m.group(2).lower()) if m else ("", "")
        gpu_osdev = any(
            o.get("osdev_type") in ("1", "5", "12")
            or (o.get("name") or "").startswith(("nvml", "cuda", "rsmi", "opencl"))
            for o in osdevs
        )
        if subtype == "NVSwitch" or (cls == "0680" and vendor == "10de"):
            category = "nvswitch"
        elif _computes(cls, vendor, (m.group(3).lower() if m else ""), gpu_osdev):
            category = "gpu"
        elif cls.startswith("03"):
            self.b.note(
                el.loc,
                f"display controller {busid} [{vendor}] has no compute OS device (a BMC or board display "
                "chip such as ATI ES1000, Matrox G200 or ASPEED): not a GPU; not imported",
            )
            return
        elif cls.startswith("02") or cls == "0c06":
            category = "nic"
        else:
            self.b.note(
                el.loc, f"PCI device {busid} of class {cls or subtype} is not a GPU, NIC or switch; not imported"
            )
            return
        if parent is None:
            self.b.error(el.loc, f"PCI device {busid} outside the Machine object")
            return
        self.pcis.append(_Pci(el, category, busid, parent, p2p))

    def devices(self) -> None:
        prefix = {"gpu": "gpu", "nic": "nic", "nvswitch": "nvsw"}
        shared: dict[tuple[str, str], str] = {}
        oid_of: dict[int, str] = {}
        for dev in sorted(self.pcis, key=lambda d: (d.category, d.busid, d.el.loc)):
            oid = self.next(prefix[dev.category])
            oid_of[id(dev)] = oid
            labels = {"source": dev.el.where, "pci_busid": dev.busid, **_pci_type(dev.el)}
            osdevs = [c for c in dev.el.children if c.tag == "object" and c.get("type") == "OSDev"]
            if osdevs:
                labels["os_devices"] = ",".join(sorted(o.get("name") or "" for o in osdevs))
            rdma = sorted(o.get("name") or "" for o in osdevs if _openfabrics(o.get("osdev_type"), self.version))
            if rdma:
                labels["rdma_devices"] = ",".join(rdma)  # what nvidia-smi's NIC legend and NCCL's IB nets name
            for o in osdevs:
                for info in o.iter("info"):
                    if (
                        info.get("name") in ("GPUModel", "GPUVendor", "Address", "Port")
                        and (info.get("value") or "").strip()
                    ):
                        labels[f"hwloc_{info.get('name')}"] = info.get("value") or ""
                self.by_gp[o.get("gp_index") or ""] = oid
            # Below a bridge (a point-to-point PCIe link) every function on its secondary bus, SR-IOV
            # virtual functions included, is one physical device: they share the first one's link.
            port = (dev.parent, dev.busid.rsplit(":", 1)[0])
            first = shared.get(port) if dev.p2p else None
            if first is not None:
                labels["shares_link_of"] = first
            model = self.model(dev, labels, oid)
            self.b.obj(oid, dev.category, dev.parent, dev.el.loc, labels=labels, model=model)
            self.by_gp[dev.el.get("gp_index") or ""] = oid
            if first is None:
                shared[port] = oid
                self.uplink(dev.el, oid, dev.parent)
            else:
                up = next((lk for lk in self.b.inv.links.values() if lk.a == first and lk.b == dev.parent), None)
                if up is not None:  # None: the first function's link was refused, and that error is reported
                    self.b.link(oid, first, "pcie", up.mbps, dev.el.loc, labels={**up.labels, "source": dev.el.where})
            for child in dev.el.children:
                if child.tag == "object" and child.get("type") != "OSDev":
                    self.b.note(
                        child.loc, f"{child.get('type')} below PCI device {dev.busid} is not modelled; not imported"
                    )
        self.ena_with_efa(oid_of)

    def ena_with_efa(self, oid_of: dict[int, str]) -> None:
        """An AWS network interface of type "efa" is one network card seen as two PCI devices, an ENA
        (IP traffic) and an EFA (RDMA): AWS's EC2 and SageMaker documentation says the interface
        "provides both the EFA device ... and the ENA device". Below one PCIe switch or host bridge
        with as many ENA as EFA devices, each ENA is taken to share an EFA's card and link (paired
        in bus order, labelled inferred): two uplinks would count one card's traffic twice against
        the switch, and an ENA of its own would stand as a GPU's NIC. A p4d.24xlarge puts an ENA,
        an EFA and two A100 straight on each host bridge (aws-ofi-nccl's lstopo capture): unpaired,
        the ENA (no RDMA device) came first in bus order and was each GPU's nearest NIC.
        """
        groups: dict[str, tuple[list[_Pci], list[_Pci]]] = {}
        for dev in self.pcis:
            t = _pci_type(dev.el)
            if dev.category != "nic" or t.get("pci_vendor") != "0x1d0f":
                continue
            parent = self.b.inv.objects[dev.parent]
            # Below a switch every device has a port of its own (p2p); on a host bridge (a virtual
            # machine's flat bus) devices sit straight on the root complex.
            if not (parent.kind == "pcie_switch" and dev.p2p) and parent.labels.get("role") != "host_bridge":
                continue
            device = t.get("pci_device", "")
            enas, efas = groups.setdefault(dev.parent, ([], []))
            if device in _ENA_IDS:
                enas.append(dev)
            elif device.startswith("0xefa"):
                efas.append(dev)
        # Each device's link to its switch, looked up once: scanning every link for each pair made a
        # file of thousands of pairs quadratic (8,000 pairs: 7 s -> 12 s).
        to_switch = {(lk.a, lk.b): lk for lk in self.b.inv.links.values() if lk.b in groups}
        for switch, (enas, efas) in sorted(groups.items()):
            if not enas or len(enas) != len(efas):
                continue
            pairs: list[tuple[_Pci, _Pci]] = []
            for ena, efa in zip(sorted(enas, key=lambda d: d.busid), sorted(efas, key=lambda d: d.busid), strict=True):
                ena_id, efa_id = oid_of[id(ena)], oid_of[id(efa)]
                up = to_switch.get((efa_id, switch))
                own = to_switch.get((ena_id, switch))
                # None: a link refused at its line (that error stands), or a function that already
                # shares another function's link on its bus (an ENA and an EFA of one device are
                # paired by that): nothing to pair, and the note does not name it.
                if up is None or own is None:
                    continue
                pairs.append((ena, efa))
                del self.b.inv.links[own.id]
                self.b.link(
                    ena_id,
                    efa_id,
                    "pcie",
                    up.mbps,
                    ena.el.loc,
                    labels={**up.labels, "source": ena.el.where, "inferred": "true"},
                )
                obj = self.b.inv.objects[ena_id]
                obj.labels = {**obj.labels, "shares_link_of": efa_id}
            if not pairs:
                continue
            self.b.note(
                self.b.inv.objects[switch].loc,
                f"{switch}: {len(pairs)} AWS ENA device(s) beside as many EFA devices are taken as the IP side of "
                f"EFA network interfaces (one card each): "
                + ", ".join(f"{oid_of[id(a)]} shares {oid_of[id(e)]}'s link" for a, e in pairs)
                + " (inferred; paired in bus order)",
            )

    def unstated_uplinks(self) -> None:
        """A PCIe switch whose uplink hwloc states as 0 GB/s (the OS reports no link: a virtual
        machine's bridges, a VIC's internal switches) takes the widest link below it, labelled assumed,
        not the Gen4 x16 default: an unknown figure must not make the switch a bottleneck, and a
        default narrower than what hangs below reads as oversubscription (BW004) that no one built.
        Deepest switches first, so a switch below another is settled before its parent is judged.
        A switch with nothing wider than the default below it keeps the default.
        """
        node = self.node + "/"
        switches = [oid for oid, o in self.b.inv.objects.items() if o.kind == "pcie_switch" and oid.startswith(node)]
        if not switches:
            return
        by_ends = {(lk.a, lk.b): lk for lk in self.b.inv.links.values()}
        below: dict[str, list[Link]] = {}
        for lk in self.b.inv.links.values():
            below.setdefault(lk.b, []).append(lk)
        default = pcie_mbps(*DEFAULT_PCIE)
        for oid in reversed(switches):
            up = by_ends.get((oid, self.b.inv.objects[oid].parent or ""))
            # Only uplink() labels a switch's uplink assumed here, and only for a figure hwloc left at 0.
            if up is None or up.labels.get(ASSUMED) != "bandwidth" or up.mbps != default:
                continue
            widest = max((lk.mbps for lk in below.get(oid, ())), default=default)
            if widest <= default:
                continue  # never lowered: narrower links below say nothing of how wide the uplink is
            up.mbps = widest  # in place: the link keeps its id and its place in the file
            busid = self.b.inv.objects[oid].labels.get("pci_busid", "")
            self.b.note(
                up.loc,
                f"{oid}: hwloc gives the uplink of PCIe switch {busid} no figure (0 GB/s: the OS reports no "
                f"link); it is taken at the widest link below it ({widest} MB/s), labelled assumed, not at a "
                "default that would make the switch a bottleneck",
            )

    def virtual_uplinks(self) -> None:
        """An Amazon virtual PCIe switch (vendor 1d0f) whose uplink figure is under a tenth of every
        stated link below it: that figure is the hypervisor's, not the link's, so it is not taken.

        Amazon's EC2 guests see emulated bridges (1d0f:0200) whose link registers state what the
        hypervisor writes: on a p6e-gb200.36xlarge the same bridge model states 63.0 GB/s above two
        ENA and two EFA devices, and 1.97 GB/s (Gen4 x1) above each GB200 with its two EFA devices at
        63.0 GB/s; read as a link that is a 96:1 oversubscription no one built. The uplink takes the
        widest stated link below it, labelled assumed, as a host bridge's unstated fabric does (so
        the path bottlenecks stay the links hwloc states), and a note names the figure set aside.
        Deepest switches first, so a switch below another is settled before its parent is judged.
        """
        switches = [
            oid
            for oid, o in self.b.inv.objects.items()
            if o.kind == "pcie_switch" and oid.startswith(self.node + "/") and o.labels.get("pci_vendor") == "0x1d0f"
        ]
        if not switches:
            return
        # Indexed once (a scan per switch is quadratic in a file of many switches): each link by its
        # ends, and each object's stated links from below, by link id.
        by_ends = {(lk.a, lk.b): lk for lk in self.b.inv.links.values()}
        stated_below: dict[str, dict[str, int]] = {}
        for lk in self.b.inv.links.values():
            if ASSUMED not in lk.labels:
                stated_below.setdefault(lk.b, {})[lk.id] = lk.mbps
        for oid in reversed(switches):
            parent = self.b.inv.objects[oid].parent
            up = by_ends.get((oid, parent or ""))
            below = list(stated_below.get(oid, {}).values())
            if up is None or ASSUMED in up.labels or not below or up.mbps * 10 >= min(below):
                continue
            stated_below.get(up.b, {}).pop(up.id, None)  # the parent judges what is left stated below it
            del self.b.inv.links[up.id]
            self.b.link(oid, up.b, "pcie", max(below), up.loc, labels={**up.labels, ASSUMED: "bandwidth"})
            busid = self.b.inv.objects[oid].labels.get("pci_busid", "")
            self.b.note(
                up.loc,
                f"{oid}: Amazon virtual PCIe bridge {busid} states {up.mbps} MB/s, under a tenth of every stated "
                f"link below it ({min(below)} MB/s and more): a hypervisor's figure, not the link's; the uplink "
                f"is taken at the widest link below ({max(below)} MB/s), labelled assumed",
            )

    def model(self, dev: _Pci, labels: dict[str, str], oid: str) -> str | None:
        """The catalogue model from the PCI id, else from the GPU name hwloc read from NVML/RSMI."""
        by_id = model_for_pci(labels.get("pci_vendor"), labels.get("pci_device"))
        by_name = model_for_name(labels.get("hwloc_GPUModel"))
        if by_id is not None and by_name is not None and by_id != by_name:
            self.b.note(
                dev.el.loc,
                f"{oid}: PCI id {labels.get('pci_vendor')}:{labels.get('pci_device')} is {by_id} but its GPUModel "
                f"{labels.get('hwloc_GPUModel')!r} is {by_name}; the PCI id is kept",
            )
        return by_id or by_name

    def matrix(self, el: Element, what: str) -> tuple[list[str], list[str]] | None:
        """A distances matrix's objects (imported ids, by gp_index) and its n x n values, or None (reported)."""
        name_of = el.get("name") or "distances"
        raw_n = el.get("nbobjs") or "0"
        n = int(raw_n) if raw_n.isascii() and raw_n.isdigit() and len(raw_n) <= 9 else -1
        names = " ".join(i.text for i in el.iter("indexes")).split()
        values = " ".join(v.text for v in el.iter("u64values")).split()
        if len(names) != n or len(values) != n * n or not all(whole(v) is not None for v in values):
            self.b.error(
                el.loc,
                f"{name_of} matrix of {n} objects needs {n} indexes and {n * n} integer values; "
                f"found {len(names)} and {len(values)}",
            )
            return None
        ids = []
        for name in names:
            gp = name.split(":", 1)[-1]
            oid = self.by_gp.get(gp)
            if oid is None:
                self.b.error(el.loc, f"{name_of} names {name}, which is not an imported {what}")
                return None
            ids.append(oid)
        return ids, values

    def xgmi(self, hops_el: Element | None, bw_el: Element | None) -> None:
        """AMD GPUs' xGMI links from hwloc's RSMI matrices: XGMIHops 1 is a direct link (hwloc divides the
        driver's weights, 15 per hop, by the smallest), at XGMIBandwidth's figure (MB/s) where it gives one.
        """
        if hops_el is None:
            if bw_el is not None:
                self.b.note(
                    bw_el.loc,
                    "XGMIBandwidth without XGMIHops: the bandwidth is that of an xGMI path, not of a direct "
                    "link, so no xGMI link is imported",
                )
            return
        hops = self.matrix(hops_el, "GPU")
        bws = self.matrix(bw_el, "GPU") if bw_el is not None else None
        if hops is None:
            return
        ids, values = hops
        n = len(ids)
        bw_of: dict[frozenset[str], int] = {}
        measured: set[str] = set()  # the GPUs XGMIBandwidth has a row for
        # Which of hwloc's two RSMI backends wrote the figures: hwloc before 2.14 has only the ROCm SMI
        # one, whose XGMIBandwidth is a placeholder whatever the GPUs; 2.14 and later use AMD SMI where it
        # is installed (hwloc NEWS 2.14.0), which asks each pair's bandwidth. A file of neither kind
        # (no hwlocVersion, or one that names no release) is judged by its figures alone, with more than
        # two GPUs, as before.
        release = self.hwloc_release
        shaped = bws is not None and _rsmi_placeholders(bws, hops)
        placeholder = shaped and (n > 2 if release is None else release < (2, 14))
        where = bw_el.loc if bw_el is not None else hops_el.loc
        if placeholder:
            pairs = sum(1 for i in range(n) for j in range(i + 1, n) if int(values[i * n + j]) == 1)
            if n > 2:
                self.b.note(
                    where,
                    "XGMIBandwidth holds hwloc's ROCm SMI placeholders (100000 for every GPU pair with an xGMI "
                    "path, 1000000 on the diagonal; no measurement), and that backend's hop count reads 1 for a "
                    f"path through other GPUs too: the {pairs} pairs with XGMIHops 1 are imported as xGMI links "
                    "labelled inferred, bandwidth assumed; which of them are direct links is unknown",
                )
            else:
                self.b.note(
                    where,
                    f"XGMIBandwidth holds hwloc's ROCm SMI placeholders (hwloc {self.hwloc_version_text} has no "
                    "other backend for it: 100000 for every GPU pair with an xGMI path, 1000000 on the diagonal; "
                    "no measurement): the xGMI link of the two GPUs is imported with its bandwidth assumed",
                )
        elif shaped and release is not None:
            self.b.note(
                where,
                f"XGMIBandwidth holds only 100000 per xGMI pair and 1000000 on the diagonal; hwloc "
                f"{self.hwloc_version_text} reads them from AMD SMI where it is installed, so they are taken as "
                "stated (lstopo run with HWLOC_RSMI_BACKEND=rocm would have written ROCm SMI placeholders)",
            )
        if bws is not None and not placeholder:
            bids, bvalues = bws
            measured = set(bids)
            m = len(bids)
            for i in range(m):
                for j in range(m):
                    w = int(bvalues[i * m + j])
                    if i != j and w > 0:  # the diagonal is the GPU's own memory bandwidth
                        pair = frozenset((bids[i], bids[j]))
                        bw_of[pair] = min(bw_of.get(pair, w), w)
        for i in range(n):
            for j in range(i + 1, n):
                v, back = int(values[i * n + j]), int(values[j * n + i])
                if v != back:
                    self.b.error(
                        hops_el.loc, f"XGMIHops {ids[i]} -> {ids[j]} is {v} but {back} back; expected symmetric"
                    )
                    continue
                if v != 1:
                    continue  # 0: no xGMI path; 2 or more: through other GPUs
                labels = {"source": hops_el.where}
                mbps = bw_of.get(frozenset((ids[i], ids[j])))
                if mbps is None and bw_of and {ids[i], ids[j]} <= measured:
                    # AMD SMI's hop count is 1 for any path over xGMI alone, routed through other GPUs or
                    # not (ROCm/rocm-systems issue 5763, hwloc issue 775), and older hwloc copied it into
                    # XGMIHops; its bandwidth query answers for direct links only. With figures for other
                    # pairs, a 0 here says these two GPUs have no link of their own.
                    self.b.note(
                        hops_el.loc,
                        f"XGMIHops {ids[i]} - {ids[j]} is 1 but XGMIBandwidth gives them 0 while it gives other "
                        "GPU pairs a figure: an xGMI path through other GPUs (AMD SMI counts it as 1 hop), not a "
                        "direct link, so no xGMI link is imported",
                    )
                    continue
                if mbps is None:
                    mbps, labels[ASSUMED] = DEFAULT_XGMI_MBPS, "bandwidth"
                if placeholder and n > 2:
                    labels["inferred"] = "true"  # direct, or routed through other GPUs: not stated
                self.b.link(ids[i], ids[j], "xgmi", mbps, hops_el.loc, labels=labels)

    def nvlinks(self, el: Element) -> None:
        read = self.matrix(el, "GPU or NVSwitch")
        if read is None:
            return
        ids, values = read
        n = len(ids)
        for i in range(n):
            for j in range(i + 1, n):
                v, back = int(values[i * n + j]), int(values[j * n + i])
                if v != back:
                    self.b.error(
                        el.loc, f"NVLinkBandwidth {ids[i]} -> {ids[j]} is {v} MB/s but {back} back; expected symmetric"
                    )
                elif v > 0:
                    kinds = {self.b.inv.objects[ids[i]].kind, self.b.inv.objects[ids[j]].kind}
                    labels = {"source": el.where}
                    if kinds == {"gpu"}:
                        kind = "nvlink"
                    elif kinds == {"gpu", "nvswitch"}:
                        kind = "nvswitch"
                    elif kinds == {"gpu", "cpu"}:
                        # NVLink to the CPU (POWER8/9): the GPU's host link, as NVLink-C2C is on Grace.
                        kind, labels["medium"] = "c2c", "nvlink"
                    else:
                        self.b.note(el.loc, f"NVLinkBandwidth {ids[i]} - {ids[j]} ({v} MB/s) is not modelled")
                        continue
                    self.b.link(ids[i], ids[j], kind, v, el.loc, labels=labels)

    def nvswitch_trunks(self, el: Element) -> None:
        """Hwloc's matrix has GPU-NVSwitch links only: the trunks between NVSwitch boards are not in it.

        On a DGX-2 (16 V100, 2 boards of 8 GPUs and 6 NVSwitches) each NVSwitch has 8 NVLinks to
        its peer on the other board (NVIDIA DGX-2 whitepaper, "NVSwitch: 48 NVLinks between the
        baseboards"): with the product named by DMI, the trunks are added, paired in bus order and
        labelled assumed. Otherwise the split into several NVLink domains is said, not repaired.
        """
        objs = self.b.inv.objects
        nvl = [lk for lk in self.b.inv.links.values() if lk.kind == "nvswitch"]
        switches = sorted(
            (o for o in objs.values() if o.kind == "nvswitch"), key=lambda o: o.labels.get("pci_busid", "")
        )
        if not switches or any(objs[lk.a].kind == objs[lk.b].kind == "nvswitch" for lk in nvl):
            return
        gpus_of: dict[str, set[str]] = {}  # NVSwitch -> the GPUs it links: a board is one such set
        for lk in nvl:
            g, sw = (lk.a, lk.b) if objs[lk.a].kind == "gpu" else (lk.b, lk.a)
            gpus_of.setdefault(sw, set()).add(g)
        boards: dict[frozenset[str], list[str]] = {}
        for sw in [s.id for s in switches if s.id in gpus_of]:
            boards.setdefault(frozenset(gpus_of[sw]), []).append(sw)
        if len(boards) < 2:
            return
        product = (objs[self.node].labels.get("hwloc_DMIProductName") or "").upper()
        groups = sorted(boards.items(), key=lambda kv: min(kv[0]))
        if (
            re.search(r"\bDGX-2H?\b", product)
            and len(groups) == 2
            and all(len(g) == 8 and len(s) == 6 for g, s in groups)
        ):
            for a, c in zip(groups[0][1], groups[1][1], strict=True):
                self.b.link(
                    a,
                    c,
                    "nvswitch",
                    8 * 25000,  # 8 NVLink 2 links at 25 GB/s per direction
                    el.loc,
                    attrs={"count": 8},
                    labels={"source": el.where, ASSUMED: "pairing", "inferred": "true"},
                )
            self.b.note(
                el.loc,
                f"{product.strip()}: the NVLinkBandwidth matrix lists no NVSwitch trunks; the 6 trunks of 8 NVLinks "
                "between the two baseboards (DGX-2 whitepaper) are added, paired in bus order (assumed)",
            )
            return
        sizes = ", ".join(str(len(g)) for g, _s in groups)
        self.b.note(
            el.loc,
            f"the NVLinkBandwidth matrix lists no NVSwitch-to-NVSwitch links: its GPUs form {len(groups)} NVLink "
            f"domains ({sizes} GPUs); if the switches are trunked, hwloc does not show it",
        )

    def memattr(self, el: Element) -> None:
        name = el.get("name") or ""
        key = {"Bandwidth": "bandwidth_mbps", "Latency": "latency_ns"}.get(name)
        if name in _INTRINSIC_MEMATTRS:
            return
        if key is None:
            if list(el.iter("memattr_value")):
                self.b.note(el.loc, f"memory attribute {name!r} is not a topolog figure; not imported")
            return
        skipped = 0
        for v in el.iter("memattr_value"):
            target = self.by_gp.get(v.get("target_obj_gp_index") or "")
            value = v.get("value") or ""
            if target is None or self.b.inv.objects[target].kind != "memory" or whole(value) is None:
                skipped += 1
                continue
            tel = self.numa_els.get(target)
            init = v.get("initiator_cpuset")
            if init is not None and tel is not None and _cpuset_bits(init) != _cpuset_bits(tel.get("cpuset")):
                skipped += 1  # seen from remote CPUs: topolog keeps the local figure
                continue
            obj = self.b.inv.objects[target]
            obj.quantities = {**obj.quantities, key: int(value)}
        if skipped:
            self.b.note(
                el.loc,
                f"{skipped} value(s) of memory attribute {name!r} are for remote initiators or "
                "non-memory targets; only local figures are imported",
            )

    def cpukinds(self, kinds: list[Element]) -> None:
        pu_kind: dict[int, tuple[str, dict[str, int]]] = {}
        for k, el in enumerate(kinds):
            infos = {i.get("name"): i.get("value") or "" for i in el.iter("info")}
            name = infos.get("CoreType") or f"kind{k}"
            q: dict[str, int] = {}
            eff = el.get("forced_efficiency") or el.get("efficiency")
            efficiency = whole(eff)
            if efficiency is not None:
                q["efficiency"] = efficiency
            max_mhz = whole(infos.get("FrequencyMaxMHz"))
            if max_mhz is not None:
                q["max_mhz"] = max_mhz
            for pu in _cpuset_bits(el.get("cpuset")):
                pu_kind[pu] = (name, q)
        for cid, pus in self.core_pus.items():
            of_pu = [pu_kind.get(p) for p in pus]
            found = sorted({kind[0] for kind in of_pu if kind is not None})
            if not found:
                continue
            obj = self.b.inv.objects[cid]
            obj.labels = {**obj.labels, "cpu_kind": ",".join(found)}
            # Figures only when every thread of the core is of one kind (a thread no kind names
            # leaves the core's figures unknown).
            if len(found) == 1 and None not in of_pu:
                obj.quantities = {**obj.quantities, **pu_kind[pus[0]][1]}


# Vendors whose display controllers are compute GPUs (NVIDIA, AMD, Intel, Habana); a VGA controller
# (class 0300) of AMD is one unless it is a known board display chip (device_ids.yaml display_only).
_GPU_VENDORS = ("10de", "1002", "8086", "1da3")


def _computes(cls: str, vendor: str, device: str, gpu_osdev: bool) -> bool:
    """A compute GPU: a 3D controller or processing accelerator, or a display controller that an OS
    device (CUDA, NVML, RSMI, OpenCL) says computes or whose vendor makes GPUs. BMC and virtual
    display chips (ASPEED, Matrox, ATI ES1000, QEMU's VGA) are VGA controllers of neither kind.
    """
    if cls.startswith("12") or cls == "0302":
        return True
    if not cls.startswith("03"):
        return False  # a storage or other controller: its OS devices (disks) say nothing about compute
    if gpu_osdev:
        return True
    if cls == "0300":
        return vendor == "10de" or (vendor == "1002" and not is_display_only(vendor, device))
    return cls.startswith("03") and vendor in _GPU_VENDORS


def _openfabrics(osdev_type: str | None, version: str) -> bool:
    """An OpenFabrics (RDMA) OS device: type 3 in hwloc 2's XML, bit 5 (32) of the type mask in 3.0's."""
    value = whole(osdev_type)
    if value is None:
        return False
    return bool(value & 32) if version == "3.0" else value == 3


def _pci_type(el: Element) -> dict[str, str]:
    m = _PCI_TYPE.match(el.get("pci_type") or "")
    if m is None:
        return {}
    return {
        "pci_class": "0x" + m.group(1).lower(),
        "pci_vendor": "0x" + m.group(2).lower(),
        "pci_device": "0x" + m.group(3).lower(),
    }


def _rsmi_placeholders(bws: tuple[list[str], list[str]], hops: tuple[list[str], list[str]]) -> bool:
    """True when an XGMIBandwidth matrix holds only the figures hwloc's ROCm SMI backend writes without
    measuring: 100000 for each GPU pair of xGMI link type, 0 for the others, 1000000 on the diagonal
    (hwloc/topology-rsmi.c, "TODO: verify the XGMI version before putting 100GB/s here?").

    That backend writes a hop count for exactly the pairs it gives 100000. hwloc's AMD SMI backend also
    puts 1000000 on the diagonal of GPUs that report no memory bandwidth (MI250X) but asks each pair with
    an xGMI hop count for its link's bandwidth, and gets 0 for a pair routed through other GPUs: a pair
    with a hop count and a 0 is a queried figure, and then 100000 elsewhere is a stated one.
    """
    ids, values = bws
    n = len(ids)
    if n < 2 or n * n != len(values):
        return False
    diagonal = all(values[i * n + i] == "1000000" for i in range(n))
    off = {values[i * n + j] for i in range(n) for j in range(n) if i != j}
    if not (diagonal and "100000" in off and off <= {"0", "100000"}):
        return False
    hop_ids, hop_values = hops
    m = len(hop_ids)
    hop_of = {(hop_ids[i], hop_ids[j]): hop_values[i * m + j] for i in range(m) for j in range(m) if i != j}
    return all(
        (values[i * n + j] == "100000") == (int(hop_of.get((ids[i], ids[j]), "0")) != 0)
        for i in range(n)
        for j in range(n)
        if i != j
    )


def _name_of(el: Element) -> str:
    return f" name={el.get('name')!r}" if el.get("name") else ""
