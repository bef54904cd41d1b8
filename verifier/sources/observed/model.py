"""Observed state: what the hardware's own tools said, as plain frozen data.

Readers (one module per tool format in this package) turn a tool's output into an
`Observations`; identity matching (identity.py) pairs each observation with the declared
inventory object it describes; verifier.facts.observed turns both into rows for the rules.

Every observation keeps `source` (file:line of the tool output it came from, so a finding
points at both the observation and the inventory line it contradicts) and `observed_at`
(the tool's own timestamp where the format prints one, else None: a file's modification
time says when it was copied, not when the hardware was looked at).

Numbers are exact: rates are integers in MB/s (Mb/s for NIC ports, as ibstat and the
inventory's NIC rates state them), measured bandwidths are Fractions of MB/s made from the
decimal text the tool printed, never floats. A value a reader cannot read exactly is refused.

This module is shared by every reader: change it only by adding fields with defaults.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from fractions import Fraction
from typing import Protocol

from verifier.core.errors import SourceLocation, TopologError

VENDORS: tuple[str, ...] = ("nvidia", "amd")
LINK_STATES: tuple[str, ...] = ("active", "inactive")
SCALEUP_KINDS: tuple[str, ...] = ("nvlink", "xgmi")
BANDWIDTH_TOOLS: tuple[str, ...] = ("nccl-tests", "nvbandwidth")


# ASCII digits only (Python's \d, and Fraction, also take Arabic-Indic and fullwidth digits, which no
# tool prints), and an exponent of at most four digits: Fraction("1e99999999") builds the integer
# 10**99999999 (minutes of CPU for one cell of a hostile file), while a float64 a tool prints stays
# within 1e-324..1e308.
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]{1,4})?")
_MAX_EXPONENT = 400


DIAG_FAILED = "dcgmi_diag_failed"
"""The metric of a `CounterObservation` that is a GPU failing a `dcgmi diag` hardware test (label `reason`)."""
ON_ITS_NODE = "expected the file inside the folder of the node it was taken on"
IN_HOST_FOLDER = "put the file in a folder named for the host (docs/observed.md)"


NVML_COULD_NOT_SAY = frozenset(
    {
        "unknown error",
        "system is not in ready state",
        "insufficient permissions",
        "timeout",
        "driver not loaded",
        "corrupted inforom",
        "no data",
    }
)
"""NVML's error strings (nvmlErrorString) that nvidia-smi prints, lower case, in place of a value it could not read:
not a value, so a count, a percentage or a Yes/No read as unknown, never 0 and never refused. A GPU that needs a
reset prints `System is not in ready state` for its clocks and `Unknown Error` for its encoder (an RTX 3090 on
535.247.01 whose GPU Reset Status said Reset Required : Yes). Text fields keep them (a fabric Status naming an
NVML error is the failure itself). `GPU is lost` is not among them: it says the GPU is out of service, so a value
reading it is refused at its line (as before these strings were read), never unknown and passed over."""

RECOVERY_ACTIONS = {
    "reset": "reset",
    "reboot": "reboot",
    "drain p2p": "drain_p2p",
    "drain and reset": "drain_and_reset",
}
"""nvidia-smi's GPU Recovery Action (R550 and later; NVML's nvmlGpuRecoveryAction_t) as printed, lower case, and
the name topolog keeps. `None` asks for nothing. NVIDIA's Xid Catalog names the same five values in Xid 154's
text ("None", "Drain P2P", "Drain and Reset", "GPU Reset Required", "Node Reboot Required")."""
UNKNOWN_RECOVERY = "unknown:"
"""Prefix of `GpuObservation.recovery_action` for an action topolog does not know, before the words printed."""
IMEX_RECOVERY = "recover_imex_domain"
"""`GpuObservation.recovery_action` for NVML's RECOVER_IMEX_DOMAIN: a recovery of the GPU's IMEX domain, not of it."""
_ACTION_WORDS = re.compile(r"^[a-z][a-z0-9]*(?:[ /&+_-][a-z0-9]+){0,5}$", re.ASCII)
"""What an action's name looks like (`drain and reset`, `recover imex domain`, NVML's `bus_reset`): up to six plain
words."""
_IMEX_WORDS = frozenset({"gpu", "recovery", "action", "recover", "imex", "domain"})
"""The words of NVML's RECOVER_IMEX_DOMAIN as nvidia-smi or NVML name it (`Recover IMEX Domain`,
`GPU_RECOVERY_ACTION_RECOVER_IMEX_DOMAIN`): an action naming IMEX beside any other word (`reboot imex`, `reset gpu
and imex`) asks for more than the domain's recovery and stays an action topolog does not know (review R-RT)."""
_NOT_AN_ACTION = frozenset({"yes", "no", "true", "false", "ok", "enabled", "disabled", "pass", "fail"})
"""Words of other fields' values: printed in the action's place, they are a misread file, refused."""
_NOT_SAID = frozenset(
    {"", "n/a", "none", "unknown", "unknown error", "not supported", "requested functionality has been deprecated"}
)
"""A recovery field that says nothing: no action, not known, or (R575 and later, for the older GPU Reset Status
fields) `Requested functionality has been deprecated`, the GPU Recovery Action field standing for them."""
_REQUIRES_RESET = "gpu requires reset"
_FAULT_SAID = frozenset({_REQUIRES_RESET, "gpu is lost"})
"""NVML's error strings (NVML_ERROR_RESET_REQUIRED, NVML_ERROR_GPU_IS_LOST) that, printed in a recovery field in place
of its value (`[GPU requires reset]`), still say what the GPU needs: a reset is the reset verdict; a lost GPU has
no recovery value it could be read as, so it is refused at its line (fail closed), never read as no action."""


def recovery_action(action: str | None, reset_required: str | None, drain_and_reset: str | None) -> str | None:
    """The recovery the driver asks for, from nvidia-smi's GPU Recovery Action and, before R550, its GPU Reset
    Status (`Reset Required` and `Drain and Reset Recommended`, Yes or No). ValueError (naming what was
    expected) for a value nvidia-smi does not print there: an action topolog does not know is not guessed.
    """

    def said(value: str | None) -> str | None:
        lowered = " ".join((value or "").split()).lower()
        bare = lowered[1:-1].strip() if lowered.startswith("[") and lowered.endswith("]") else lowered
        if bare in _FAULT_SAID:
            return bare  # NVML's error naming the GPU's own state, bracketed or not: a verdict, not silence
        return None if lowered in _NOT_SAID or bare != lowered else lowered

    named = said(action)
    if named == _REQUIRES_RESET:
        return "reset"
    if named is not None:
        if named in RECOVERY_ACTIONS:
            return RECOVERY_ACTIONS[named]
        words = set(re.split(r"[ /&+_-]", named))
        if _ACTION_WORDS.match(named) and "imex" in words and words <= _IMEX_WORDS:
            # NVML 615's RECOVER_IMEX_DOMAIN, however nvidia-smi words it (`Recover IMEX Domain`): the recovery asked
            # for is of the IMEX domain (the nodes sharing GPU memory over NVLink), not of this GPU, which stays in
            # service for work on its own node (NVIDIA's k8s DRA driver keeps scheduling on it): OBS013, not OBS004.
            return IMEX_RECOVERY
        if _ACTION_WORDS.match(named) and named not in _NOT_AN_ACTION and named not in _FAULT_SAID:
            # An action newer than topolog (NVML 615 added RECOVER_IMEX_DOMAIN, BUS_RESET and SYSTEM_REBOOT): any
            # action but None asks for a recovery before the GPU is used, so that GPU is out of service, under the
            # words printed (fail closed for it alone; the rest of the file is read).
            return UNKNOWN_RECOVERY + " ".join((action or "").split())
        raise ValueError("None, Reset, Reboot, Drain P2P or Drain and Reset")
    flags = {}
    for key, value in (("drain", drain_and_reset), ("reset", reset_required)):
        flag = said(value)
        if flag is not None and flag not in ("yes", "no", _REQUIRES_RESET):
            raise ValueError("Yes or No")
        flags[key] = flag
    if flags["drain"] == "yes":
        return "drain_and_reset"
    return "reset" if flags["reset"] == "yes" or _REQUIRES_RESET in flags.values() else None


_DEPRECATION_NOTE = re.compile(r"\s*\[Deprecated[^\]]*\]\s*$", re.IGNORECASE)


def driver_version(kmd: str | None, driver: str | None) -> str | None:
    """The NVIDIA driver version a listing names. From R610 nvidia-smi prints it as `KMD Version` and keeps
    `Driver Version` with a note (`610.57.04 [Deprecated; will be removed in CUDA 14.0. Use KMD Version
    instead]`): the KMD version where printed, else the driver version without that note.
    """
    if kmd is not None and kmd.strip() and kmd.strip().lower() not in NVML_COULD_NOT_SAY:
        return kmd.strip()
    if driver is None:
        return None
    version = _DEPRECATION_NOTE.sub("", driver).strip()
    # NVML's error string in place of the version (`Unknown Error`) is a version nvidia-smi could not read:
    # unknown, as for a count (-q's reader already took `Unknown Error` so), never a version refused.
    return version if version and version.lower() not in NVML_COULD_NOT_SAY else None


_DRIVER_RELEASE = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}(?:\.[0-9]{1,3})?(?:-[a-z]{1,16})?")
"""An NVIDIA driver version as nvidia-smi prints it: 535.129.03, 570.86.15, 418.87 (two parts before R430).
A flavour word after a '-' (`550.90.07-grid`, as NVIDIA names its GRID guest driver packages) is let
through as before: kept, not compared (tests/facts/test_observed_driver_slowdown.py)."""


def driver_problem(version: str | None) -> str | None:
    """Why `version` is no driver version nvidia-smi prints, or None (also when there is none). OBS011
    compares a host's driver with the inventory's by its release: text of another shape was kept and
    left uncompared without a word, so a corrupted or hand-made listing passed the check it exists for.
    """
    if version is None or _DRIVER_RELEASE.fullmatch(version):
        return None
    return (
        f"driver version {version!r} is not a release as nvidia-smi prints it; "
        "expected major.minor.patch in ASCII digits such as 535.129.03"
    )


def host_of_file(host: str | None, filename: str, tool: str, hint: str = ON_ITS_NODE) -> str:
    """`host`, which a one-host tool's file must have (load.py takes it from the file's folder or name);
    TopologError at the file's first line when it has none.
    """
    if host is None:
        raise TopologError.at(SourceLocation(filename, 1), f"{tool} names no host; {hint}")
    return host


def exact_number(text: str) -> Fraction | None:
    """The exact value of decimal text as printed (`1.5`, `370.25`, `2e9`), or None if it is not one.

    Fraction("0.1") is exactly 1/10, where float("0.1") is not; `nan`, `inf` and hex are refused.
    """
    t = text.strip()
    m = _DECIMAL.fullmatch(t)
    if m is None or (m.group(3) is not None and abs(int(m.group(3)[1:])) > _MAX_EXPONENT):
        return None
    return Fraction(t)


def normalise_pci_bus_id(text: str) -> str | None:
    """`00000000:1B:00.0` / `0000:1b:00.0` / `1b:00.0` as `0000:1b:00.0`, or None if it is not one.

    nvidia-smi prints an 8-digit domain in upper case, dcgm-exporter the same, amd-smi and
    sysfs a 4-digit domain in lower case: all name one function. Linux numbers domains in 32
    bits: Hyper-V's virtual PCI (Azure VMs: nvidia-smi's `3E3F8E05:00:00.0`) and Intel VMD
    (`10000:00:00.0`) give domains past 16 bits, kept as sysfs writes them (at least 4 digits).
    """
    t = text.strip().lower()
    parts = t.split(":")
    if len(parts) == 2:
        parts = ["0000", *parts]
    if len(parts) != 3:
        return None
    domain, bus, devfn = parts
    if "." not in devfn:
        return None
    dev, fn = devfn.split(".", 1)
    hexdigits = set("0123456789abcdef")
    if not all(p and set(p) <= hexdigits for p in (domain, bus, dev, fn)):
        return None
    if len(domain) > 8 or len(bus) > 2 or len(dev) > 2 or len(fn) > 1:
        return None
    return f"{int(domain, 16):04x}:{int(bus, 16):02x}:{int(dev, 16):02x}.{int(fn, 16):x}"


@dataclass(frozen=True, slots=True, order=True)
class GpuRef:
    """How an observation names its GPU: whatever the tool printed, at least one of the three.

    `nvidia-smi nvlink -s` prints `GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)`, dcgm-exporter
    labels carry gpu, UUID and pci_bus_id, nccl-tests prints a device index and bus id.
    """

    host: str
    uuid: str | None = None
    pci_bus_id: str | None = None
    index: int | None = None
    serial: str | None = None
    """The board serial, where the tool prints it beside its own GPU number (`dcgmi diag -j`'s `GPU Device Serials`):
    DCGM numbers the GPUs it is given, which in a container given some of the host's GPUs are not the host's
    indexes; the serial names the board whatever the numbering."""

    def __str__(self) -> str:
        if self.uuid:
            return f"{self.host} {self.uuid}"
        if self.pci_bus_id:
            return f"{self.host} {self.pci_bus_id}"
        if self.serial:
            return f"{self.host} serial {self.serial}"
        return f"{self.host} GPU {self.index}"


@dataclass(frozen=True, slots=True)
class GpuObservation:
    """One GPU as `nvidia-smi -q -x` / `amd-smi static|metric --json` / `rocm-smi --json` shows it.

    Every field the tool did not print (or printed as N/A) is None; a counter the tool printed
    is never guessed at. PCIe: `*_current` is what the link trained to now (the generation drops
    at idle to save power, the width should not), `*_max` what the link can reach (the lower of
    the GPU's and the slot's maximum where the tool says so), `pcie_gen_device_max` the GPU's own.
    """

    source: SourceLocation
    observed_at: datetime | None
    host: str
    vendor: str
    index: int | None = None
    uuid: str | None = None
    serial: str | None = None
    pci_bus_id: str | None = None
    model: str | None = None
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_gen_device_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    ecc_uncorrectable_volatile: int | None = None
    ecc_uncorrectable_aggregate: int | None = None
    retired_pages: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_uncorrectable: int | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failed: bool | None = None
    throttle_reasons: tuple[str, ...] = ()
    """Active clock-event (throttle) reasons by the tool's own name, sorted."""
    mig_mode: str | None = None
    """Current MIG mode as printed (`Enabled` / `Disabled`), None where the GPU has none."""
    utilization_percent: int | None = None
    """GPU utilisation when observed: a PCIe generation below max is a fault only under load."""
    fabric_state: str | None = None
    fabric_status: str | None = None
    fabric_clique_id: str | None = None
    fabric_cluster_uuid: str | None = None
    recovery_action: str | None = None
    """The recovery the driver itself asks for (NVML's verdict, printed by nvidia-smi -q): `reset`, `reboot`,
    `drain_p2p` or `drain_and_reset` (RECOVERY_ACTIONS), IMEX_RECOVERY (of its IMEX domain, not of the GPU), or
    UNKNOWN_RECOVERY and the words printed for an action
    topolog does not know; None where it asks for none or does not say."""
    minor_number: int | None = None
    """The GPU's device node number (`/dev/nvidiaN`: nvidia-smi's Minor Number), which the kernel driver gives it
    on the host: a container shows the host's number (its device nodes are the host's), while nvidia-smi numbers
    the GPUs a container is given from 0 (container_numbered)."""
    renumbered: bool = False
    """True where the tool's own GPU numbers are not the host's (a container given some of the host's GPUs,
    container_numbered): `index` is then None, and another tool's bare GPU number on that host is no index
    either (identity.resolve_ref)."""
    position: int | None = None
    """The tool's own number for a `renumbered` GPU (its position in the listing, which `index` then is not):
    kept so that a listing shown whole (as many GPUs as its node declares) is matched by position after all."""
    lost: str | None = None
    """What the tool printed instead of the GPU's report when its driver could not open it (nvidia-smi's
    `Unable to determine the device handle for GPU ...: GPU is lost`): the GPU is there (its bus id, or
    its index) but out of service; every other field is then None."""

    def ref(self) -> GpuRef:
        return GpuRef(self.host, self.uuid, self.pci_bus_id, self.index)


@dataclass(frozen=True, slots=True)
class ScaleupLinkObservation:
    """One NVLink / xGMI link of one GPU: `nvidia-smi nvlink -s`, amd-smi's xGMI section."""

    source: SourceLocation
    observed_at: datetime | None
    gpu: GpuRef
    link: int
    state: str
    """`active` or `inactive` (LINK_STATES)."""
    speed_mbps: int | None
    """Per direction, exact MB/s; None when inactive."""
    kind: str
    """`nvlink` or `xgmi` (SCALEUP_KINDS)."""
    errors: tuple[tuple[str, int], ...] = ()
    """Error counters of the link as (tool's counter name, value), sorted by name (`nvlink -e`)."""
    peer: GpuRef | None = None
    """The GPU at the far end where the tool names it (xGMI); NVSwitch links name none."""

    @property
    def host(self) -> str:
        return self.gpu.host


@dataclass(frozen=True, slots=True)
class CounterObservation:
    """One metric sample of one GPU (dcgm-exporter): the exporter's metric name and exact value; or one GPU
    that failed a `dcgmi diag` hardware test (metric `dcgmi_diag_failed`, its tests and messages in label `reason`).
    """

    source: SourceLocation
    observed_at: datetime | None
    gpu: GpuRef
    metric: str
    value: int | Fraction
    labels: tuple[tuple[str, str], ...] = ()
    """Every label of the sample as (name, value), sorted by name."""

    @property
    def host(self) -> str:
        return self.gpu.host


@dataclass(frozen=True, slots=True)
class NicPortObservation:
    """One port of one host channel adapter as `ibstat` shows it."""

    source: SourceLocation
    observed_at: datetime | None
    host: str
    device: str
    """The adapter as the tool names it, e.g. `mlx5_0`."""
    port: int
    state: str
    """Logical state as printed, e.g. `Active`, `Down`, `Init`."""
    physical_state: str
    """Physical state as printed, e.g. `LinkUp`, `Polling`, `Disabled`."""
    rate_mbps: int | None
    """Exact Mb/s (ibstat prints Gb/s: `Rate: 400` is 400,000 Mb/s)."""
    link_layer: str
    """`InfiniBand` or `Ethernet`, as printed."""
    port_guid: str | None = None
    node_guid: str | None = None
    ca_type: str | None = None


@dataclass(frozen=True, slots=True)
class BandwidthMeasurement:
    """One measured row: a collective at one size (nccl-tests) or one copy pattern (nvbandwidth)."""

    source: SourceLocation
    observed_at: datetime | None
    tool: str
    """`nccl-tests` or `nvbandwidth` (BANDWIDTH_TOOLS)."""
    operation: str
    """The test, e.g. `all_reduce_perf` or nvbandwidth's `device_to_device_memcpy_read_ce`."""
    hosts: tuple[str, ...]
    gpus: tuple[GpuRef, ...]
    """The GPUs it ran on as the tool names them; empty where it names only counts."""
    gpus_per_host: int | None
    size_bytes: int
    algbw_mbps: Fraction
    busbw_mbps: Fraction
    in_place: bool | None
    """nccl-tests prints out-of-place and in-place columns; None where the tool has no such split."""
    wrong: int | None = None
    """Values the run's check found wrong at this size (nccl-tests' `#wrong` column); None: not checked."""
    run_line: int = 0
    """The line its run begins at in its file (nccl-tests: one file may hold several runs appended, each
    its own measurement); 0 where each row or cell is a run of its own (nvbandwidth)."""


@dataclass(frozen=True, slots=True)
class ObservedFile:
    """One file that was read: its format, the host it speaks for (None: several, named inside)."""

    path: str
    format: str
    host: str | None
    observed_at: datetime | None
    partial: bool = False
    """True where a listing format lists only some of the host's GPUs (`nvidia-smi -q -i 3`): a GPU
    it does not list is not thereby missing."""
    attached: int | None = None
    """The GPUs the tool says its host's driver counts (nvidia-smi's Attached GPUs), where it prints
    that; with `partial`, more than the file lists: a selection, or a GPU the driver cannot read."""
    driver: str | None = None
    """The GPU driver's version as the tool printed it (nvidia-smi's Driver Version), where it does."""
    note: str | None = None
    """Why the file's GPUs could not be tied to the host's numbering, where they could not (container_numbered):
    said beside each GPU the inventory cannot then match (OBS005)."""


@dataclass(frozen=True, slots=True)
class Observations:
    """Everything observed, plus the files read (a node with no file is "not observed")."""

    gpus: tuple[GpuObservation, ...] = ()
    links: tuple[ScaleupLinkObservation, ...] = ()
    counters: tuple[CounterObservation, ...] = ()
    nic_ports: tuple[NicPortObservation, ...] = ()
    bandwidth: tuple[BandwidthMeasurement, ...] = ()
    files: tuple[ObservedFile, ...] = ()
    hosts: tuple[str, ...] = field(default=())
    """Hosts the files speak for (sorted, unique): observed even where a file lists no device."""

    def __add__(self, other: Observations) -> Observations:
        return merge((self, other))

    @property
    def empty(self) -> bool:
        return not self.files


class Reader(Protocol):
    """A reader: the text of one file, its name (for SourceLocation) and the host it speaks for.

    `host` comes from the file's place in the observation folder (see load.py); a reader whose
    format names hosts itself (dcgm-exporter's Hostname label, nccl-tests' rank lines) prefers
    those. Raises TopologError with file:line for anything it cannot read exactly.
    """

    def __call__(self, text: str, filename: str, host: str | None) -> Observations: ...


def merge(parts: Iterable[Observations]) -> Observations:
    """One `Observations` from several, in the order given; hosts sorted and unique."""
    items = list(parts)
    return Observations(
        gpus=tuple(g for p in items for g in p.gpus),
        links=tuple(x for p in items for x in p.links),
        counters=tuple(c for p in items for c in p.counters),
        nic_ports=tuple(n for p in items for n in p.nic_ports),
        bandwidth=tuple(b for p in items for b in p.bandwidth),
        files=tuple(f for p in items for f in p.files),
        hosts=tuple(sorted({h for p in items for h in p.hosts})),
    )


def container_numbered(gpus: Sequence[GpuObservation], attached: int | None) -> str | None:
    """Why the positions of an nvidia-smi listing are not the host's GPU indexes, or None where nothing says so.

    nvidia-smi numbers the GPUs it can see 0..n-1 (`Attached GPUs` n). On the host, those are all the driver's GPUs
    and their device nodes are /dev/nvidia0..n-1; a container given some of them (`--gpus '"device=5,6"'`,
    a Kubernetes GPU request) sees the host's device nodes (nvidia-container-cli lists each as
    `/dev/nvidia6 (GPU-... at 00000000:da:00.0)`, NVIDIA/nvidia-docker#1506) yet numbers them from 0. So a Minor
    Number at or above the count the file gives is a GPU of a larger host seen from inside: its position names
    another of the host's GPUs (declared gpu0 for the host's GPU 5), and the GPUs the file does not show are
    not thereby missing. Minor numbers all below the count (or not printed) prove nothing and change nothing.
    """
    count = max(attached or 0, len(gpus))
    high = sorted({g.minor_number for g in gpus if g.minor_number is not None and g.minor_number >= count})
    if not high:
        return None
    shown = sorted(g.minor_number for g in gpus if g.minor_number is not None)
    return (
        f"its listing numbers {count} GPU{'s' if count != 1 else ''} from 0 but shows device minor number"
        f"{'s' if len(shown) != 1 else ''} {', '.join(map(str, shown))} (/dev/nvidiaN): a container's view of "
        "some of the host's GPUs, whose numbers are not the host's indexes (declare the GPUs' uuid, serial or "
        "pci_bus_id to match them)"
    )


def unnumbered(obs: Observations, note: str) -> Observations:
    """`obs` (one nvidia-smi listing) with no GPU index (each `renumbered`) and its file partial, with `note`."""
    gpus = tuple(replace(g, index=None, renumbered=True, position=g.index) for g in obs.gpus)
    return replace(obs, gpus=gpus, files=tuple(replace(f, partial=True, note=note) for f in obs.files))
