"""`nvidia-smi -q` (plain text): one `GpuObservation` per `GPU <bus id>` block, the fields the
`nvidia-smi -q -x` reader (nvidia_smi_xml) reads, from the form users paste and runbooks collect.

The text is a tree written by indentation, 4 spaces a level, each line a `Name : value` field or a
section's name alone; a header (timestamp, driver, `Attached GPUs`) at the left margin, then a block
per GPU opened by `GPU 00000000:18:00.0`:

    GPU 00000000:18:00.0
        Product Name                          : NVIDIA H100 80GB HBM3
        ECC Errors
            Volatile
                DRAM Uncorrectable            : 0

Names changed over driver branches and both spellings are read, as the XML reader reads both tags:
`Clocks Event Reasons` (R535+) and `Clocks Throttle Reasons` (older); ECC counts as `SRAM/DRAM
Uncorrectable ...` (R470+) or `Double Bit > Total` (older); pending retirement as `Pending Page
Blacklist` or `Pending`. A reason is named as the XML's tag names it (`Idle` is `gpu_idle`), so both
forms give one GPU the same observation. `-q -d ECC,...` prints only the sections asked for: the
others are not known (None).

`N/A`, `Unknown Error` and NVML's bracketed messages (`[N/A]`, `[Not Supported]`, `[GPU requires
reset]`) are not known, never zero; so are NVML's bare error strings in place of a number or a Yes/No
(model.NVML_COULD_NOT_SAY: `System is not in ready state`). A value in another unit or shape than nvidia-smi prints it
(`16x`, `0 %`, a bare count) is refused at its line, and so is a line that is not in the tool's
shape (a shell prompt, a table of plain `nvidia-smi`, an annotation after a value).

A GPU's index is its position among the blocks (nvidia-smi lists GPUs in its index order), but only
when the file lists every attached GPU: `nvidia-smi -q -i 3` prints one block of `Attached GPUs : 8`,
whose position says nothing of its index (None: matched by UUID or bus id alone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.observed.model import (
    IN_HOST_FOLDER,
    NVML_COULD_NOT_SAY,
    GpuObservation,
    Observations,
    ObservedFile,
    container_numbered,
    driver_problem,
    driver_version,
    host_of_file,
    normalise_pci_bus_id,
    recovery_action,
    unnumbered,
)

FORMAT = "nvidia-smi-q"
BANNER = "==============NVSMI LOG=============="
_TOOL = "nvidia-smi -q"
_STEP = 4
_UNKNOWN = frozenset({"", "n/a", "unknown", "unknown error", "not supported", "not available"})
_NOT_PRINTED = frozenset({"", "n/a", "[n/a]", "not supported", "[not supported]"})
"""What the fabric's Status prints when it has none; an NVML error there (`Unknown Error`) is the failure itself."""
_FIELD = re.compile(r"([^:]*?\S)\s*:(?:\s+(.*))?")
_SECTION = re.compile(r"[A-Za-z0-9][\w .()/+'-]*")
_GPU = re.compile(r"GPU ([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f]+)")
_STARTS = re.compile(r"Timestamp +: \S")
_LOST = re.compile(r"Unable to determine the device handle for (?:GPU|gpu) ?(\S+?): (.+)")
"""What nvidia-smi prints, instead of a GPU's report, for a GPU the driver cannot open (fallen off the bus,
lost: NVIDIA/open-gpu-kernel-modules issue 387, NVIDIA/nvidia-docker issue 1553). Drivers name the GPU by
bus id (`GPU 0000:02:00.0: GPU is lost. Reboot ...`, `GPU0000:20:00.0: Unknown Error`), newer ones by
index and bus id (`GPU1: 0000:34:00.0: Unknown Error`), the R515 open modules as `gpu 0000:01:00.0: Not
Found` (open-gpu-kernel-modules issue 246); R525 goes on with the other GPUs' reports after it
(nvidia-container-toolkit issue 69)."""
_LOST_START = "Unable to determine the device handle for GPU"
_LOST_START_OPEN = "Unable to determine the device handle for gpu"
_BUS_FIRST = re.compile(r"([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+\.[0-9A-Fa-f]+): (.+)")
_COUNT = re.compile(r"\d+")
_U64 = 2**64 - 1
_U32 = 2**32 - 1
_WIDTH = re.compile(r"(\d+)x")
_PERCENT = re.compile(r"(\d+) ?%")
_REASONS = ("Clocks Event Reasons", "Clocks Throttle Reasons")
_REASON_NAMES = {
    "Idle": "gpu_idle",
    "Applications Clocks Setting": "applications_clocks_setting",
    "SW Power Cap": "sw_power_cap",
    "HW Slowdown": "hw_slowdown",
    "HW Thermal Slowdown": "hw_thermal_slowdown",
    "HW Power Brake Slowdown": "hw_power_brake_slowdown",
    "Sync Boost": "sync_boost",
    "SW Thermal Slowdown": "sw_thermal_slowdown",
    "Display Clock Setting": "display_clocks_setting",
    "Unknown": "unknown",
}
"""The text's reason names -> the XML's tag names without `clocks_event_reason_` (nvsmi_device DTD)."""
_PENDING_RETIREMENT = ("Pending Page Retirement", "Pending Page Blacklist", "Pending")


_PROLOG_BYTES = 16384
"""How far into a file its banner is looked for: text before it (nvidia-smi's `WARNING: infoROM is corrupted
...` captured with 2>&1, the banner NVIDIA's CUDA container images print) is read past, as before a -q -x
document (nvidia_smi_xml.looks_like looks as far)."""


def _banner_line(text: str) -> int:
    """Where the first line that is the NVSMI LOG banner alone starts in the file's first _PROLOG_BYTES; -1 if none."""
    at = text.find(BANNER, 0, _PROLOG_BYTES)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        if not text[start:at].strip("\ufeff \t\r") and not text[at + len(BANNER) : end].strip():
            return start
        at = text.find(BANNER, at + 1, _PROLOG_BYTES)
    return -1


def looks_like(text: str) -> bool:
    """Whether `text` is `nvidia-smi -q` output: its banner first (or on a line of its own after other text, which
    is read past), or (pasted without it) its Timestamp line.
    """
    head = text[:256].lstrip("\ufeff \t\r\n")
    return (
        head.startswith((BANNER, _LOST_START, _LOST_START_OPEN))
        or _STARTS.match(head) is not None
        or _banner_line(text) >= 0
    )


@dataclass(slots=True)
class _Node:
    """One line: a field (`value` is its text) or a section (`value` None) with the lines under it."""

    name: str
    value: str | None
    line: int
    children: list[_Node] = field(default_factory=list)

    def get(self, *path: str) -> _Node | None:
        """The first line named `path[0]` under this one, then `path[1]` under it, ...; None when absent."""
        node: _Node | None = self
        for name in path:
            assert node is not None
            node = next((c for c in node.children if c.name == name), None)
            if node is None:
                return None
        return node


@dataclass(frozen=True, slots=True)
class Lost:
    """One GPU nvidia-smi could not open: the line, its index and bus id where printed, and NVML's words."""

    line: int
    index: int | None
    bus: str | None
    message: str


def lost_line(stripped: str, number: int, filename: str) -> Lost | None:
    """The lost GPU `stripped` names, None when it is no such line; TopologError when it names a GPU in no
    way nvidia-smi does.
    """
    m = _LOST.fullmatch(stripped) if stripped[0] == "U" else None
    if m is None:
        return None
    name, message = m.group(1), m.group(2).strip()
    if len(message) > 200:  # NVML's messages are a few words: a longer one is kept short in findings
        message = message[:200] + "..."
    index: int | None = None
    if name.isdigit() and len(name) <= 5:  # `GPU1: 0000:34:00.0: Unknown Error` (an index, then its bus id)
        index = int(name)
        then = _BUS_FIRST.fullmatch(message)
        name, message = (then.group(1), then.group(2).strip()) if then is not None else ("", message)
    bus = normalise_pci_bus_id(name) if name else None
    if name and bus is None:
        raise TopologError.at(
            SourceLocation(filename, number),
            f"nvidia-smi could not open GPU {name[:40]!r}, which is no PCI bus id; expected e.g. "
            "'Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error'",
        )
    return Lost(number, index, bus, message)


def _parse(text: str, filename: str, lost_gpus: list[Lost]) -> _Node:
    """The tree of `text`'s lines; TopologError at the first line not in nvidia-smi -q's shape. The lines
    naming a GPU nvidia-smi could not open go to `lost_gpus`.
    """
    root = _Node("", None, 0)
    stack: list[tuple[int, _Node]] = [(-1, root)]
    seen_line = False
    banner = _banner_line(text)
    prolog = text.count("\n", 0, banner) if banner > 0 else 0  # lines before the banner, read past
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if number == 1:
            line = line.lstrip("\ufeff")
        stripped = line.lstrip(" ")
        if not stripped:
            continue
        lost = lost_line(stripped, number, filename)
        if lost is not None:
            # The GPU is there and out of service: an observation of its own (OBS004), never a gap that
            # passes for health or a file refused on the node that most needs judging.
            lost_gpus.append(lost)
            continue
        if number <= prolog:
            if stripped.lower().startswith(_LOST_START.lower()):  # a GPU said lost in no shape read
                raise TopologError.at(
                    SourceLocation(filename, number),
                    "nvidia-smi could not open a GPU it names in no way read; expected e.g. "
                    "'Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error'",
                )
            if _STARTS.match(stripped) or _GPU.fullmatch(stripped):
                # A report's own header or GPU line before the banner: another run's report pasted without its
                # banner (two captures in one file), whose GPUs would be dropped without a word.
                raise TopologError.at(
                    SourceLocation(filename, number),
                    f"a line of an {_TOOL} report before the {BANNER.strip('=')} banner; expected one {_TOOL} "
                    "run per file (one host, one time), with only warnings before its banner",
                )
            continue  # a warning or a container's banner before the report: it says nothing of the GPUs
        if stripped == BANNER:
            if seen_line:
                raise TopologError.at(
                    SourceLocation(filename, number),
                    f"a second {BANNER.strip('=')} banner; expected one {_TOOL} run per file (one host, one time)",
                )
            seen_line = True
            continue
        seen_line = True
        indent = len(line) - len(stripped)
        if indent % _STEP or stripped[0] == "\t":
            raise TopologError.at(
                SourceLocation(filename, number),
                f"indented by {indent} spaces{' and a tab' if stripped[0] == chr(9) else ''}; expected a multiple "
                f"of {_STEP} spaces ({_TOOL} indents each section by {_STEP})",
            )
        level = indent // _STEP
        while stack[-1][0] >= level:
            stack.pop()
        parent_level, parent = stack[-1]
        if parent is root and level > 0:
            raise TopologError.at(
                SourceLocation(filename, number),
                f"indented by {indent} spaces where {_TOOL} starts a line at the margin (its header, each GPU)",
            )
        # A section of the header indents its fields by 8, not 4: a vGPU host's `vGPU Driver Capability` then
        # `        Heterogenous Multi-vGPU : Supported` (525.147.01 and 580.105.06 print it so): its fields.
        header_field = level == 2 and parent_level == 0 and parent.value is None and not _GPU.fullmatch(parent.name)
        if level > parent_level + 1 and not header_field:
            raise TopologError.at(
                SourceLocation(filename, number),
                f"indented {level - parent_level} levels below the line above it; expected one",
            )
        m = _FIELD.fullmatch(stripped)
        if m is not None and not (level == 0 and _GPU.fullmatch(stripped)):
            node = _Node(m.group(1), (m.group(2) or "").strip(), number)
        elif _GPU.fullmatch(stripped) or _SECTION.fullmatch(stripped):
            node = _Node(stripped, None, number)
        else:
            raise TopologError.at(
                SourceLocation(filename, number),
                f"{stripped[:60]!r} is not a line of {_TOOL}; expected 'Name : value' or a section's name "
                "(cut the file to the tool's own output)",
            )
        parent.children.append(node)
        stack.append((level, node))
    return root


def _at(node: _Node | None, *path: str) -> _Node | None:
    return node.get(*path) if node is not None else None


class _Reader:
    """Typed reads of one file's fields, each refused at its own line when not as nvidia-smi prints it."""

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def _refuse(self, node: _Node, expected: str) -> TopologError:
        value = node.value or ""
        shown = repr(value) if len(value) <= 80 else f"{value[:60]!r}... ({len(value)} characters)"
        return TopologError.at(
            SourceLocation(self.filename, node.line),
            f"'{node.name}' is {shown}; expected {expected} (or N/A) as {_TOOL} prints it",
        )

    @staticmethod
    def known(found: _Node | None) -> str | None:
        """A field's value; None when absent, a section, or not known (N/A, an NVML message in brackets)."""
        if found is None or found.value is None or found.children:
            return None
        value = found.value
        if value.lower() in _UNKNOWN or (value.startswith("[") and value.endswith("]")):
            return None
        return value

    def text(self, node: _Node | None, *path: str) -> str | None:
        return self.known(_at(node, *path))

    @staticmethod
    def status(fabric: _Node | None) -> str | None:
        """The fabric probe's Status: `Success` or the error it ended in, kept even when it is an NVML error
        string (`Completed` with `Unknown Error` is a GPU the fabric did not take); None when not printed.
        """
        found = _at(fabric, "Status")
        if found is None or found.value is None or found.children or found.value.lower() in _NOT_PRINTED:
            return None
        return found.value

    def _match(self, pattern: re.Pattern[str], expected: str, found: _Node | None, most: int) -> int | None:
        value = self.known(found)
        if value is None or value.lower() in NVML_COULD_NOT_SAY:
            return None
        m = pattern.fullmatch(value)
        # Bounded by what NVML can hold (a 64-bit counter, a 32-bit generation or width, a percentage),
        # the digits' length first: int() refuses more than 4300 of them (an internal error), and a number
        # beyond the fact loader's range stopped there, with an error naming no line of this file.
        assert found is not None
        if m is None:
            raise self._refuse(found, expected)
        digits = m.group(m.lastindex or 0)
        if len(digits) > len(str(most)) or int(digits) > most:
            raise self._refuse(found, f"{expected}, at most {most}")
        return int(digits)

    def count(self, node: _Node | None, *path: str, most: int = _U64) -> int | None:
        return self._match(_COUNT, "a whole number", _at(node, *path), most)

    def width(self, node: _Node | None, *path: str) -> int | None:
        return self._match(_WIDTH, "a link width like 16x", _at(node, *path), _U32)

    def percent(self, node: _Node | None, *path: str) -> int | None:
        return self._match(_PERCENT, "a percentage like 95 %", _at(node, *path), 100)

    def yes_no(self, node: _Node | None, *path: str) -> bool | None:
        found = _at(node, *path)
        value = self.known(found)
        if value is None or value.lower() in NVML_COULD_NOT_SAY:
            return None
        if value in ("Yes", "No"):
            return value == "Yes"
        assert found is not None
        raise self._refuse(found, "Yes or No")

    def recovery(self, gpu: _Node) -> str | None:
        """The recovery the driver asks for: `GPU Recovery Action` (R550 and later), else the `GPU Reset Status`
        section's `Reset Required` and `Drain and Reset Recommended` (R535 to R570). A value nvidia-smi does not
        print there is refused at its line.
        """
        fields = (
            _at(gpu, "GPU Recovery Action"),
            _at(gpu, "GPU Reset Status", "Reset Required"),
            _at(gpu, "GPU Reset Status", "Drain and Reset Recommended"),
        )
        values: list[str | None] = []
        for k, found in enumerate(fields):
            value = None if found is None or found.children else found.value
            alone: list[str | None] = [value if i == k else None for i in range(len(fields))]
            try:
                recovery_action(alone[0], alone[1], alone[2])
            except ValueError as bad:
                assert found is not None
                raise self._refuse(found, str(bad)) from None
            values.append(value)
        return recovery_action(values[0], values[1], values[2])

    def uncorrectable(self, section: _Node | None) -> int | None:
        """Uncorrectable ECC errors of a Volatile or Aggregate section, in either driver branch's names."""
        if section is None:
            return None
        if section.get("Double Bit", "Total") is not None:
            return self.count(section, "Double Bit", "Total")
        counts = [
            self._match(_COUNT, "a whole number", c, _U64)
            for c in section.children
            if "uncorrectable" in c.name.lower() and c.value is not None and not c.children
        ]
        known = [v for v in counts if v is not None]
        return sum(known) if known else None

    def retired(self, gpu: _Node) -> tuple[int | None, bool | None]:
        pages = gpu.get("Retired Pages")
        if pages is None:
            return None, None
        counts = [self.count(pages, "Single Bit ECC"), self.count(pages, "Double Bit ECC")]
        known = [c for c in counts if c is not None]
        pending = next((p for p in _PENDING_RETIREMENT if pages.get(p) is not None), None)
        return (sum(known) if known else None), (self.yes_no(pages, pending) if pending else None)

    def reasons(self, gpu: _Node) -> tuple[str, ...]:
        section = next((s for s in (gpu.get(n) for n in _REASONS) if s is not None), None)
        if section is None:
            return ()
        out: list[str] = []
        todo = list(section.children)
        while todo:
            node = todo.pop()
            todo.extend(node.children)  # `HW Slowdown` holds its thermal and power-brake kinds
            # ... and has its own value too (Active when either kind, or another cause, slows the clocks).
            value = self.known(_Node(node.name, node.value, node.line)) if node.children else self.known(node)
            if value is None or value == "Not Active":
                continue
            if value != "Active":
                raise self._refuse(node, "Active or Not Active")
            out.append(_REASON_NAMES.get(node.name) or re.sub(r"\W+", "_", node.name.lower()).strip("_"))
        return tuple(sorted(out))

    def timestamp(self, root: _Node) -> datetime | None:
        """The header's Timestamp (`Thu Nov 14 07:00:14 2024`, the host's local time) read as UTC."""
        value = self.text(root, "Timestamp")
        if value is None:
            return None
        try:
            return datetime.strptime(" ".join(value.split()), "%a %b %d %H:%M:%S %Y").replace(tzinfo=UTC)
        except ValueError:
            found = root.get("Timestamp")
            assert found is not None
            raise self._refuse(found, "nvidia-smi's time, e.g. 'Thu Nov 14 07:00:14 2024'") from None

    def gpu(self, block: _Node, index: int | None, host: str, when: datetime | None) -> GpuObservation:
        header = _GPU.fullmatch(block.name)
        assert header is not None
        bus_text = self.text(block, "PCI", "Bus Id") or header.group(1)
        bus = normalise_pci_bus_id(bus_text)
        if bus is None:
            raise TopologError.at(
                SourceLocation(self.filename, block.line),
                f"GPU has PCI bus id {bus_text!r}; expected one like 00000000:1B:00.0",
            )
        link = block.get("PCI", "GPU Link Info")
        ecc = block.get("ECC Errors")
        rows = block.get("Remapped Rows")
        rows = rows if rows is not None and rows.children else None
        fabric = block.get("Fabric")
        retired, retired_pending = self.retired(block)
        return GpuObservation(
            source=SourceLocation(self.filename, block.line, 1),
            observed_at=when,
            host=host,
            vendor="nvidia",
            index=index,
            uuid=self.text(block, "GPU UUID"),
            serial=self.text(block, "Serial Number"),
            pci_bus_id=bus,
            model=self.text(block, "Product Name"),
            pcie_gen_current=self.count(link, "PCIe Generation", "Current", most=_U32),
            pcie_gen_max=self.count(link, "PCIe Generation", "Max", most=_U32),
            pcie_gen_device_max=self.count(link, "PCIe Generation", "Device Max", most=_U32),
            pcie_width_current=self.width(link, "Link Width", "Current"),
            pcie_width_max=self.width(link, "Link Width", "Max"),
            ecc_uncorrectable_volatile=self.uncorrectable(ecc.get("Volatile") if ecc else None),
            ecc_uncorrectable_aggregate=self.uncorrectable(ecc.get("Aggregate") if ecc else None),
            retired_pages=retired,
            retired_pages_pending=retired_pending,
            remapped_rows_uncorrectable=self.count(rows, "Uncorrectable Error"),
            remapped_rows_pending=self.yes_no(rows, "Pending"),
            remapped_rows_failed=self.yes_no(rows, "Remapping Failure Occurred"),
            throttle_reasons=self.reasons(block),
            mig_mode=self.text(block, "MIG Mode", "Current"),
            # `Gpu` through R565; R570 and later print `GPU` (570.172.08 and 580.173.02 pastes).
            utilization_percent=self.percent(
                block, "Utilization", "GPU" if _at(block, "Utilization", "GPU") else "Gpu"
            ),
            fabric_state=self.text(fabric, "State"),
            fabric_status=self.status(fabric),
            fabric_clique_id=self.text(fabric, "CliqueId"),
            fabric_cluster_uuid=self.text(fabric, "ClusterUUID"),
            recovery_action=self.recovery(block),
            minor_number=self.count(block, "Minor Number", most=_U32),
        )


def read(text: str, filename: str, host: str | None) -> Observations:
    """The GPUs of one `nvidia-smi -q` file (for one host). TopologError with file:line on bad input."""
    obs = _read(text, filename, host)
    note = container_numbered(obs.gpus, obs.files[0].attached)
    return obs if note is None else unnumbered(obs, note)


def _read(text: str, filename: str, host: str | None) -> Observations:
    host = host_of_file(host, filename, _TOOL, IN_HOST_FOLDER)
    lost: list[Lost] = []
    root = _parse(text, filename, lost)
    reader = _Reader(filename)
    when = reader.timestamp(root)
    blocks = [c for c in root.children if c.value is None and _GPU.fullmatch(c.name)]
    attached = reader.count(root, "Attached GPUs")
    if lost:
        return _with_lost(reader, root, blocks, lost, attached, host, when)
    if attached is None and not blocks:
        # nvidia-smi prints its count of GPUs (or "No devices were found") before any GPU: a file with
        # neither was cut before its report (a collection killed or timed out) or is empty. Read as a
        # listing of no GPU it made every GPU its node declares missing (OBS006).
        raise TopologError.at(
            SourceLocation(filename, max(1, len(text.splitlines()))),
            f"the file ends with no 'Attached GPUs' line and no GPU; expected {_TOOL}'s whole report "
            "(its header counts the GPUs, then a block per GPU)",
        )
    if attached is not None and attached < len(blocks):
        found = root.get("Attached GPUs")
        assert found is not None
        raise TopologError.at(
            SourceLocation(filename, found.line), f"Attached GPUs says {attached} but the file lists {len(blocks)} GPUs"
        )
    whole = attached is None or attached == len(blocks)
    gpus = tuple(reader.gpu(b, i if whole else None, host, when) for i, b in enumerate(blocks))
    return Observations(
        gpus=gpus,
        files=(
            ObservedFile(
                filename,
                FORMAT,
                host,
                when,
                not whole,
                attached,
                _driver(reader, root),
            ),
        ),
        hosts=(host,),
    )


def _with_lost(
    reader: _Reader,
    root: _Node,
    blocks: list[_Node],
    lost: list[Lost],
    attached: int | None,
    host: str,
    when: datetime | None,
) -> Observations:
    """A report with GPUs nvidia-smi could not open: each an observation (`lost`) beside the GPUs reported."""
    filename = reader.filename
    if attached is not None and attached < len(blocks) + len(lost):
        found = root.get("Attached GPUs")
        assert found is not None
        raise TopologError.at(
            SourceLocation(filename, found.line),
            f"Attached GPUs says {attached} but the file reports {len(blocks)} GPUs and {len(lost)} it could not open",
        )
    gpus, whole = add_lost([reader.gpu(b, None, host, when) for b in blocks], lost, attached, filename, host, when)
    file = ObservedFile(
        filename,
        FORMAT,
        host,
        when,
        not whole,
        attached,
        _driver(reader, root),
    )
    return Observations(gpus=gpus, files=(file,), hosts=(host,))


def _driver(reader: _Reader, root: _Node) -> str | None:
    """The report's driver version (model.driver_version); TopologError at its line when it is no release."""
    version = driver_version(reader.text(root, "KMD Version"), reader.text(root, "Driver Version"))
    problem = driver_problem(version)
    if problem is not None:
        found = root.get("KMD Version") if reader.text(root, "KMD Version") else root.get("Driver Version")
        raise TopologError.at(SourceLocation(reader.filename, found.line if found is not None else 1), problem)
    return version


def lost_lines(text: str, filename: str) -> tuple[list[Lost], int]:
    """The lines before a -q -x report's document and the lost GPUs they name: nvidia-smi's stderr captured
    with 2>&1 (`Unable to determine the device handle ...`, `WARNING: infoROM is corrupted at gpu ...`:
    NVIDIA/gpu-operator issue 20) or a container's banner (NVIDIA's CUDA images print `== CUDA ==` and the
    CUDA version before the command's output). The report is read after them; a lost-GPU line among them
    is a GPU beside the report's, any other line says nothing of the GPUs. Returns the lost GPUs and how
    many lines come before the document; ([], 0) when the text opens with it or has no line that opens it.
    """
    found: list[Lost] = []
    number = 0
    pos = 0
    while pos < len(text):  # line by line up to the document only: a report's own lines are not split
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        number += 1
        stripped = text[pos:end].strip().lstrip("\ufeff")
        if stripped.startswith("<"):
            return found, number - 1
        lost = lost_line(stripped, number, filename) if stripped else None
        if lost is not None:
            found.append(lost)
        elif stripped.lower().startswith(_LOST_START.lower()):  # a GPU said lost in no shape read: not passed over
            raise TopologError.at(
                SourceLocation(filename, number),
                "nvidia-smi could not open a GPU it names in no way read; expected e.g. "
                "'Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error'",
            )
        pos = end + 1
    return [], 0


def add_lost(
    gpus: list[GpuObservation],
    lost: list[Lost],
    attached: int | None,
    filename: str,
    host: str,
    when: datetime | None,
) -> tuple[tuple[GpuObservation, ...], bool]:
    """The GPUs reported (`gpus`, no index yet) and those said lost, as observations; and whether the file
    counts every GPU with them (its indexes are then nvidia-smi's).

    nvidia-smi numbers the GPUs 0..Attached-1 and reports them in that order, a lost one by its line
    instead of its report; where every lost GPU's index is known, the reported GPUs take the other
    indexes in order. Where a lost GPU is named only by bus id and the file counts every GPU, its index is
    its place in bus id order, NVML's order (the readers take a GPU's position as its index on that
    ground), but only where the reported GPUs are themselves in that order; else no position is an index
    (None: matched by bus id or UUID). A file without Attached GPUs (nvidia-smi stopped at the lost GPU)
    proves no other GPU missing.
    """
    total = len(gpus) + len(lost)
    seen: dict[object, int] = {}
    for x in lost:
        if x.index is not None and attached is not None and x.index >= attached:
            raise TopologError.at(
                SourceLocation(filename, x.line),
                f"GPU {x.index} is past the {attached} GPUs the file counts; expected an index below {attached}",
            )
        for key in (("index", x.index), ("bus", x.bus)):
            if key[1] is not None and seen.setdefault(key, x.line) != x.line:
                raise TopologError.at(
                    SourceLocation(filename, x.line),
                    f"GPU {key[1]} is said lost at line {seen[key]} already; expected each GPU once",
                )
    whole = attached is not None and attached == total
    lost = _indexed(lost, gpus) if whole else lost
    indexed = whole and all(x.index is not None for x in lost)
    gpus = [replace(g, index=None) for g in gpus]
    if indexed:
        free = [i for i in range(total) if i not in {x.index for x in lost}]
        gpus = [replace(g, index=i) for g, i in zip(gpus, free, strict=True)]
    buses = {g.pci_bus_id: g for g in gpus}
    for x in lost:
        if x.bus is not None and x.bus in buses:
            raise TopologError.at(
                SourceLocation(filename, x.line),
                f"GPU {x.bus} is reported at line {buses[x.bus].source.line} and said lost here; "
                "expected one of the two",
            )
        gpus.append(
            GpuObservation(
                source=SourceLocation(filename, x.line, 1),
                observed_at=when,
                host=host,
                vendor="nvidia",
                index=x.index,
                pci_bus_id=x.bus,
                lost=x.message,
            )
        )
    return tuple(gpus), indexed


def _pci_order(bus: str) -> tuple[int, ...]:
    """A normalised PCI bus id as the numbers PCI orders by (domain, bus, device, function). As text a domain
    past 16 bits sorts by its digit count, not its value (Hyper-V's `f1a2b3c` after `3e3f8e05`).
    """
    return tuple(int(part, 16) for part in re.split(r"[:.]", bus))


def _indexed(lost: list[Lost], gpus: list[GpuObservation]) -> list[Lost]:
    """`lost` with the index of each one named only by bus id: its place among every GPU in bus id order,
    where the reported GPUs are in that order and the indexes printed agree with it; else as given.
    """
    if all(x.index is not None for x in lost):
        return lost
    reported = [g.pci_bus_id or "" for g in gpus]  # a reported GPU always has its bus id
    if any(x.bus is None for x in lost) or any(not b for b in reported):
        return lost
    if reported != sorted(reported, key=_pci_order) or len(set(reported)) != len(reported):
        return lost
    order = sorted([*reported, *[x.bus for x in lost if x.bus is not None]], key=_pci_order)
    if len(set(order)) != len(order):
        return lost  # the duplicate is refused by the caller at its line
    place = {b: i for i, b in enumerate(order)}
    if any(x.index is not None and x.index != place[x.bus] for x in lost if x.bus is not None):
        return lost
    return [replace(x, index=place[x.bus]) if x.bus is not None else x for x in lost]
