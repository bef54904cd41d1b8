"""`nvidia-smi --query-gpu=FIELDS --format=csv`: one `GpuObservation` per GPU row.

The fleet telemetry most sites already collect (cron jobs, node exporters' textfile scripts, runbooks):

    index, name, pci.bus_id, driver_version, memory.total [MiB], compute_mode
    0, NVIDIA RTX A5500 Laptop GPU, 00000000:01:00.0, 535.183.01, 16384 MiB, Default

The header names the fields (`nvidia-smi --help-query-gpu`'s names, a unit in brackets where the value carries
one); the rows follow in the header's order, separated by `, `. Only the fields the observed checks judge are
read (GPU identity, PCIe generation and width, ECC, retired pages, remapped rows, clock-event reasons, reset
status, MIG mode, utilisation, fabric state, the driver version and the GPU count); every other field is passed
over unread. `nounits` leaves the unit off the value (the header keeps it): both are read, any other unit is
refused. `[N/A]`, `[Not Supported]` and NVML's other messages in brackets are unknown, never 0; `[GPU is lost]`
is refused at its line (the GPU is out of service: no value can be read from it). `--query-remapped-rows`
(`gpu_bus_id, gpu_uuid, remapped_rows.*`) is read by the same rules. `--query-retired-pages` (one row per retired
page) gives each GPU it names its count of retired pages; `--query-supported-clocks` holds no state and is refused,
saying what to collect instead.

A file without its header (`--format=csv,noheader`) cannot say which column is which: refused, naming what to add.
A row must name its GPU by a printed `index`, `uuid`, `serial` or `pci.bus_id`: the query prints no GPU count
unless `count` is asked for, so a row's position is not taken as its index (`-i 3` prints GPU 3 first).
A log of repeated samples (`-l 5`, `-lms 500`) keeps each GPU's last row: the state the hardware was last seen in.
The `timestamp` field (`2024/01/16 14:44:16.977`, the host's local time) is read as UTC, as `-q`'s timestamp is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.observed.model import (
    IN_HOST_FOLDER,
    NVML_COULD_NOT_SAY,
    GpuObservation,
    Observations,
    ObservedFile,
    driver_problem,
    driver_version,
    host_of_file,
    normalise_pci_bus_id,
    recovery_action,
)
from verifier.sources.observed.nvidia_smi_text import lost_line

FORMAT = "nvidia-smi-query-gpu"
NOT_A_LISTING = "nvidia-smi-query-remapped-rows"
"""`ObservedFile.format` of a file whose fields `--query-remapped-rows` prints (bus id, UUID, remapped_rows.*): it
shows the GPUs with row remapping, so it is no listing of the host's GPUs (a GPU it does not show is not missing)."""
RETIRED_PAGES = "nvidia-smi-query-retired-pages"
"""`ObservedFile.format` of a `--query-retired-pages` CSV: one row per retired page of the GPUs that have any, so no
listing of the host's GPUs either."""
_PAGE_FIELDS = frozenset({"retired_pages.address", "retired_pages.cause", "retired_pages.timestamp"})
"""`nvidia-smi --help-query-retired-pages`'s own fields (beside timestamp and the gpu_* identity fields)."""
_PAGE_CAUSES = frozenset({"Single Bit ECC", "Double Bit ECC"})
"""nvidia-smi's words for NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS and _DOUBLE_BIT_ECC_ERROR."""
_CLOCK_FIELDS = frozenset({"memory", "graphics"})
"""`--query-supported-clocks`' fields (`memory [MHz], graphics [MHz]`): the clock pairs a GPU supports, no state."""
_PROCESS_FIELDS = frozenset({"pid", "process_name", "used_memory", "used_gpu_memory"})
"""`--query-compute-apps` fields: one row per process, not per GPU; such a file is not this format's."""
_TOOL = "nvidia-smi --query-gpu"
_U64 = 2**64 - 1
_U32 = 2**32 - 1

_ALIASES = {
    "gpu_name": "name",
    "gpu_serial": "serial",
    "gpu_uuid": "uuid",
    "gpu_bus_id": "pci.bus_id",
    "pcie.link.gen.gpucurrent": "pcie.link.gen.current",
    "retired_pages.sbe": "retired_pages.single_bit_ecc.count",
    "retired_pages.dbe": "retired_pages.double_bit.count",
    "ecc.errors.uncorrected.volatile.device_memory": "ecc.errors.uncorrected.volatile.dram",
    "ecc.errors.uncorrected.aggregate.device_memory": "ecc.errors.uncorrected.aggregate.dram",
    "remapped_rows.failed": "remapped_rows.failure",
}
"""nvidia-smi's other names for one field (`--help-query-gpu`: `"uuid" or "gpu_uuid"`; R535 calls the current
generation `pcie.link.gen.gpucurrent` and keeps `pcie.link.gen.current` as its deprecated name). Clock-event reasons
are also named `clocks_throttle_reasons.*` (before R535): read as `clocks_event_reasons.*`."""

_IDENTITY = ("index", "uuid", "serial", "pci.bus_id")

_REASON_BITS = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clocks_setting"),
)
"""NVML's clock-event reason bits (nvml.h nvmlClocksEventReason*: GpuIdle 1, ApplicationsClocksSetting 2, SwPowerCap
4, HwSlowdown 8, SyncBoost 16, SwThermalSlowdown 32, HwThermalSlowdown 64, HwPowerBrakeSlowdown 128,
DisplayClockSetting 256) under the names `nvidia-smi -q -x` gives the same reasons. A bit NVML has not defined is
kept as `unknown`, as -q's `Unknown` reason is."""
_REASON_NAMES = frozenset(name for _bit, name in _REASON_BITS) | {"display_clock_setting"}
_REASON_PREFIX = "clocks_event_reasons."

_READ = frozenset(
    {
        "timestamp",
        "driver_version",
        "count",
        "name",
        "pcie.link.gen.current",
        "pcie.link.gen.max",
        "pcie.link.gen.gpumax",
        "pcie.link.width.current",
        "pcie.link.width.max",
        "mig.mode.current",
        "utilization.gpu",
        "ecc.errors.uncorrected.volatile.total",
        "ecc.errors.uncorrected.volatile.dram",
        "ecc.errors.uncorrected.volatile.sram",
        "ecc.errors.uncorrected.aggregate.total",
        "ecc.errors.uncorrected.aggregate.dram",
        "ecc.errors.uncorrected.aggregate.sram",
        "retired_pages.single_bit_ecc.count",
        "retired_pages.double_bit.count",
        "retired_pages.pending",
        "remapped_rows.uncorrectable",
        "remapped_rows.pending",
        "remapped_rows.failure",
        "reset_status.reset_required",
        "reset_status.drain_and_reset_recommended",
        "fabric.state",
        "fabric.status",
        f"{_REASON_PREFIX}active",
        *_IDENTITY,
        *(_REASON_PREFIX + name for name in _REASON_NAMES),
    }
)
"""The fields read; a header naming at least one of them (after _ALIASES) is this format's."""

# Field names are lower case but for a few NVML words (`encoder.stats.sessionCount`, `..._multivGPU`).
_NAME = re.compile(r"[a-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*")
_HEADER_FIELD = re.compile(r"([a-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)(?: \[([^\[\]]{1,16})\])?")
_UUID = re.compile(r"(?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_BUS = re.compile(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]")
_DIGITS = re.compile(r"[0-9]+")
_MASK = re.compile(r"0x([0-9A-Fa-f]{1,16})")
_STAMP = re.compile(r"[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?")
_RESET_REQUIRED = "[gpu requires reset]"
"""NVML_ERROR_RESET_REQUIRED as nvidia-smi prints it in a value's place (lower case)."""
_LOST_START = "unable to determine the device handle for gpu"
_PROLOG_LINES = 64
"""Lines looked through for the header: nvidia-smi's own lines for GPUs it cannot open come first when stderr was
captured too (2>&1)."""


def _canonical(name: str) -> str:
    name = _ALIASES.get(name, name)
    if name.startswith("clocks_throttle_reasons."):
        name = _REASON_PREFIX + name.removeprefix("clocks_throttle_reasons.")
    return name


def _split(line: str) -> list[str]:
    return [t.strip() for t in line.split(",")]


def _row_values(reader: _Reader, number: int, line: str, fields: int, header_at: int) -> list[str]:
    """The values of a data row, one per field of the header at `header_at`; TopologError at `number` otherwise."""
    values = _split(line)
    if len(values) != fields:
        raise reader.refuse(
            number,
            f"the row has {len(values)} values but the header at line {header_at} names {fields} "
            "fields; expected one value per field, separated by ', '",
        )
    return values


def _header(line: str) -> list[tuple[str, str | None]] | None:
    """The (field, unit) pairs of a header line, or None when `line` is no header of this tool's.

    nvidia-smi separates the fields by `, ` (a comma and a space): a header whose commas have no space after them is
    another tool's CSV (`amd-smi list --csv` prints `gpu,gpu_bdf,gpu_uuid`, AMD GPUs), not read as NVIDIA GPUs.
    """
    if line.count(",") != line.count(", "):
        return None
    out: list[tuple[str, str | None]] = []
    for token in _split(line):
        m = _HEADER_FIELD.fullmatch(token)
        if m is None:
            return None
        out.append((_canonical(m.group(1)), m.group(2)))
    names = {name for name, _unit in out}
    return out if names & (_READ | _PAGE_FIELDS) and not names & _PROCESS_FIELDS else None


def _headless(line: str) -> bool:
    """Whether `line` is a data row of this tool's printed without its header: values separated by `, ` one of which
    is a GPU UUID or an nvidia-smi bus id (no other format read prints either so).
    """
    tokens = _split(line)
    return len(tokens) >= 2 and ", " in line and any(_UUID.fullmatch(t) or _BUS.fullmatch(t) for t in tokens)


def _lines(text: str) -> list[str]:
    return text.lstrip("\ufeff").splitlines()


def looks_like(text: str) -> bool:
    """Whether `text` is `--query-gpu` CSV: its first line that is not a lost GPU's is a header naming a field read
    here (or, written with noheader, a row with a GPU UUID or bus id: read to be refused with what to add).
    """
    # Line by line from the start, not the whole head split: every file that no earlier test took is looked at here.
    pos = 1 if text.startswith("\ufeff") else 0
    for _ in range(_PROLOG_LINES):
        end = text.find("\n", pos, pos + 16384)
        stripped = text[pos : end if end >= 0 else pos + 16384].strip()
        if stripped and not stripped.lower().startswith(_LOST_START):
            return ("," in stripped or stripped in _READ) and (_header(stripped) is not None or _headless(stripped))
        if end < 0:
            return False
        pos = end + 1
    return False


@dataclass
class _Row:
    line: int
    values: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Field -> (value as printed, the header's unit)."""


class _Reader:
    def __init__(self, filename: str) -> None:
        self.filename = filename

    def refuse(self, line: int, message: str) -> TopologError:
        return TopologError.at(SourceLocation(self.filename, line), message)

    def _shown(self, value: str) -> str:
        return repr(value) if len(value) <= 60 else f"{value[:40]!r}... ({len(value)} characters)"

    def known(self, row: _Row, name: str) -> str | None:
        """The field's value; None when not asked for or not known (N/A, an NVML message in brackets)."""
        found = row.values.get(name)
        if found is None:
            return None
        value = found[0]
        lowered = value.lower()
        bare = lowered[1:-1].strip() if lowered.startswith("[") and lowered.endswith("]") else lowered
        if bare == "gpu is lost":
            raise self.refuse(
                row.line, f"'{name}' is {value!r}: the GPU is lost; expected a value, as {_TOOL} prints it"
            )
        if bare in ("", "n/a", "not supported") or bare in NVML_COULD_NOT_SAY or bare != lowered:
            return None
        return value

    def number(self, row: _Row, name: str, most: int) -> int | None:
        value = self.known(row, name)
        if value is None:
            return None
        unit = row.values[name][1]
        digits = value
        if unit is not None and value.endswith(f" {unit}"):
            digits = value[: -len(unit) - 1]
        if _DIGITS.fullmatch(digits) is None or len(digits) > len(str(most)) or int(digits) > most:
            with_unit = f" (or the number followed by ' {unit}')" if unit else ""
            raise self.refuse(
                row.line,
                f"'{name}' is {self._shown(value)}; expected a whole number at most {most}{with_unit} "
                f"(or [N/A]) as {_TOOL} prints it",
            )
        return int(digits)

    def yes_no(self, row: _Row, name: str, bits: bool = False) -> bool | None:
        value = self.known(row, name)
        if value is None:
            return None
        if value in ("Yes", "No"):
            return value == "Yes"
        if bits and value in ("0", "1"):
            # NVML's remapping flags are integers (nvmlDeviceGetRemappedRows' isPending, failureOccurred): 0 or 1.
            return value == "1"
        raise self.refuse(row.line, f"'{name}' is {self._shown(value)}; expected Yes or No (or [N/A])")

    def reasons(self, row: _Row) -> tuple[str, ...]:
        out: set[str] = set()
        mask = self.known(row, f"{_REASON_PREFIX}active")
        if mask is not None:
            m = _MASK.fullmatch(mask)
            if m is None:
                raise self.refuse(
                    row.line,
                    f"'{_REASON_PREFIX}active' is {self._shown(mask)}; expected a bit mask such as "
                    "0x0000000000000004 (or [N/A])",
                )
            bits = int(m.group(1), 16)
            for bit, name in _REASON_BITS:
                if bits & bit:
                    out.add(name)
                    bits &= ~bit
            if bits:
                out.add("unknown")
        for full in row.values:
            if not full.startswith(_REASON_PREFIX) or full.endswith((".active", ".supported")):
                continue
            value = self.known(row, full)
            if value is None:
                continue
            if value not in ("Active", "Not Active"):
                raise self.refuse(
                    row.line, f"'{full}' is {self._shown(value)}; expected Active or Not Active (or [N/A])"
                )
            name = full.removeprefix(_REASON_PREFIX)
            if value == "Active" and name in _REASON_NAMES:
                out.add("display_clocks_setting" if name == "display_clock_setting" else name)
        return tuple(sorted(out))

    def uncorrectable(self, row: _Row, scope: str) -> int | None:
        prefix = f"ecc.errors.uncorrected.{scope}."
        if f"{prefix}total" in row.values:
            total = self.number(row, f"{prefix}total", _U64)
            if total is not None:
                return total
        parts = [self.number(row, prefix + part, _U64) for part in ("dram", "sram") if prefix + part in row.values]
        known = [p for p in parts if p is not None]
        return sum(known) if known else None

    def recovery(self, row: _Row) -> str | None:
        fields = ("reset_status.reset_required", "reset_status.drain_and_reset_recommended")
        values = [row.values[f][0] if f in row.values else None for f in fields]
        try:
            action = recovery_action(None, values[0], values[1])
        except ValueError as bad:
            raise self.refuse(row.line, f"the GPU's reset status is {values!r}; expected {bad} (or [N/A])") from None
        if action is None and any(value.lower() == _RESET_REQUIRED for value, _unit in row.values.values()):
            # NVML answers NVML_ERROR_RESET_REQUIRED for a GPU that must be reset before it is used again, and
            # nvidia-smi prints it in the place of any field it could not read: a query that asked for no reset
            # status still says the GPU needs a reset (the GPU is out of service, as reset_status Yes says).
            return recovery_action(None, _RESET_REQUIRED, None)
        return action

    def stamp(self, row: _Row) -> datetime | None:
        value = self.known(row, "timestamp")
        if value is None:
            return None
        if _STAMP.fullmatch(value) is None:
            raise self.refuse(
                row.line,
                f"'timestamp' is {self._shown(value)}; expected nvidia-smi's form, e.g. 2024/01/16 14:44:16.977",
            )
        try:
            return datetime.strptime(value, "%Y/%m/%d %H:%M:%S.%f" if "." in value else "%Y/%m/%d %H:%M:%S").replace(
                tzinfo=UTC
            )
        except ValueError:
            raise self.refuse(row.line, f"'timestamp' is {value!r}, which is no date and time") from None

    def gpu(self, row: _Row, host: str) -> GpuObservation:
        bus_text = self.known(row, "pci.bus_id")
        bus = normalise_pci_bus_id(bus_text) if bus_text is not None else None
        if bus_text is not None and bus is None:
            raise self.refuse(
                row.line, f"'pci.bus_id' is {self._shown(bus_text)}; expected a PCI bus id such as 00000000:1B:00.0"
            )
        index = self.number(row, "index", _U32)
        uuid = self.known(row, "uuid")
        serial = self.known(row, "serial")
        if index is None and uuid is None and serial is None and bus is None:
            raise self.refuse(
                row.line, "the row names its GPU by no index, uuid, serial or pci.bus_id; expected one of them"
            )
        retired = [
            self.number(row, f, _U64)
            for f in ("retired_pages.single_bit_ecc.count", "retired_pages.double_bit.count")
            if f in row.values
        ]
        retired_known = [r for r in retired if r is not None]
        return GpuObservation(
            source=SourceLocation(self.filename, row.line),
            observed_at=self.stamp(row),
            host=host,
            vendor="nvidia",
            index=index,
            uuid=uuid,
            serial=serial,
            pci_bus_id=bus,
            model=self.known(row, "name"),
            pcie_gen_current=self.number(row, "pcie.link.gen.current", _U32),
            pcie_gen_max=self.number(row, "pcie.link.gen.max", _U32),
            pcie_gen_device_max=self.number(row, "pcie.link.gen.gpumax", _U32),
            pcie_width_current=self.number(row, "pcie.link.width.current", _U32),
            pcie_width_max=self.number(row, "pcie.link.width.max", _U32),
            ecc_uncorrectable_volatile=self.uncorrectable(row, "volatile"),
            ecc_uncorrectable_aggregate=self.uncorrectable(row, "aggregate"),
            retired_pages=sum(retired_known) if retired_known else None,
            retired_pages_pending=self.yes_no(row, "retired_pages.pending"),
            remapped_rows_uncorrectable=self.number(row, "remapped_rows.uncorrectable", _U64),
            remapped_rows_pending=self.yes_no(row, "remapped_rows.pending", bits=True),
            remapped_rows_failed=self.yes_no(row, "remapped_rows.failure", bits=True),
            throttle_reasons=self.reasons(row),
            mig_mode=self.known(row, "mig.mode.current"),
            utilization_percent=self.number(row, "utilization.gpu", 100),
            fabric_state=self.known(row, "fabric.state"),
            fabric_status=self._status(row),
            recovery_action=self.recovery(row),
        )

    @staticmethod
    def _status(row: _Row) -> str | None:
        """The fabric probe's status as printed, an NVML error string included (it is the failure itself)."""
        found = row.values.get("fabric.status")
        if found is None or found[0].lower() in ("", "n/a", "[n/a]", "not supported", "[not supported]"):
            return None
        return found[0]

    def lost(self, line: str, number: int, host: str) -> GpuObservation:
        """The GPU nvidia-smi printed it could not open (`Unable to determine the device handle for GPU0000:01:00.0:
        GPU has fallen off the bus.`): there, out of service.
        """
        found = lost_line(line, number, self.filename) if line else None
        if found is None:
            raise self.refuse(
                number,
                "nvidia-smi could not open a GPU it names in no way read; expected e.g. "
                "'Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error'",
            )
        return GpuObservation(
            source=SourceLocation(self.filename, number),
            observed_at=None,
            host=host,
            vendor="nvidia",
            index=found.index,
            pci_bus_id=found.bus,
            lost=found.message,
        )


def _key(g: GpuObservation) -> tuple[object, ...]:
    return (g.index, g.uuid, g.serial, g.pci_bus_id)


_KEY_NAMES = ("index", "uuid", "serial", "pci.bus_id")
_SERIAL = 2
"""The serial is not compared: boards whose serial was never programmed print one serial for several GPUs."""


def _one_gpu_each(
    reader: _Reader, gpu: GpuObservation, number: int, named: dict[tuple[int, object], tuple[tuple[object, ...], int]]
) -> None:
    """Refuse a row whose index, UUID or bus id an earlier row gave to another GPU.

    One host's GPUs keep their index, UUID, serial and bus id while it runs; two rows at odds (index 3 with two UUIDs)
    are samples from before and after a renumbering (a reboot, a GPU lost: the index "can change at each boot") or
    two hosts' outputs joined. Keeping each GPU's last row would then keep a GPU that is no longer there beside
    the GPU that took its index: the host would look whole. Fail closed, naming both lines.
    """
    key = _key(gpu)
    if named.get((-1, key)) is not None:
        return  # this GPU sampled again as before (a loop log's every row after the first pass)
    named[(-1, key)] = (key, number)
    for pos, value in enumerate(key):
        if value is None or pos == _SERIAL:
            continue
        earlier, line = named.setdefault((pos, value), (key, number))
        for other, (was, now) in enumerate(zip(earlier, key, strict=True)):
            if other != _SERIAL and was is not None and now is not None and was != now:
                raise reader.refuse(
                    number,
                    f"{_KEY_NAMES[pos]} {value} is the GPU of {_KEY_NAMES[other]} {now} here but of "
                    f"{_KEY_NAMES[other]} {was} at line {line}: the GPUs were renumbered between these samples "
                    "(a reboot or a GPU lost) or two hosts' outputs were joined; expected one host's samples from "
                    "one boot (keep those after the reboot)",
                )


def read(text: str, filename: str, host: str | None) -> Observations:
    """The GPUs of one `--query-gpu` CSV file; TopologError at the line of anything not as nvidia-smi prints it."""
    host = host_of_file(host, filename, _TOOL, IN_HOST_FOLDER)
    reader = _Reader(filename)
    fields: list[tuple[str, str | None]] | None = None
    header_at = 0
    header_text = ""
    latest: dict[tuple[object, ...], GpuObservation] = {}
    lost: list[GpuObservation] = []
    drivers: dict[str, int] = {}
    counts: dict[int, int] = {}
    named: dict[tuple[int, object], tuple[tuple[object, ...], int]] = {}
    for number, raw in enumerate(_lines(text), 1):
        line = raw.strip()
        if not line:
            continue
        if line.lower().startswith(_LOST_START):
            lost.append(reader.lost(line, number, host))
            continue
        parsed = _header(line) if _NAME.match(line) else None
        if parsed is not None:
            if fields is not None and line != header_text:
                raise reader.refuse(
                    number,
                    f"a second header, not the one at line {header_at}; expected one query per file "
                    "(the same header repeated is read: appended runs of one query)",
                )
            names = [name for name, _unit in parsed]
            if fields is None and _PAGE_FIELDS & set(names):
                return _retired_pages(reader, parsed, number, _lines(text), host)
            if fields is None and _CLOCK_FIELDS & set(names):
                raise reader.refuse(
                    number,
                    "nvidia-smi --query-supported-clocks output: the clocks a GPU supports, no state of it to judge; "
                    "expected --query-gpu (clocks_event_reasons.active says which GPUs run slowed) or nvidia-smi -q",
                )
            if not any(name in _IDENTITY for name in names):
                raise reader.refuse(
                    number,
                    "the query names no GPU by index, uuid, serial or pci.bus_id; expected one of them among its "
                    "fields (add index,uuid to --query-gpu): a row's position is not its GPU's index",
                )
            fields, header_at, header_text = parsed, number, line
            continue
        if fields is None:
            raise reader.refuse(
                number,
                f"{_TOOL} CSV without its header line (--format=csv,noheader): which column is which cannot be "
                "told; expected the header nvidia-smi prints first (run it without noheader, or put the "
                "--query-gpu field names, separated by ', ', on the first line)",
            )
        values = _row_values(reader, number, line, len(fields), header_at)
        row = _Row(number)
        for (name, unit), value in zip(fields, values, strict=True):
            if name in _READ and name in row.values and row.values[name][0] != value:
                raise reader.refuse(number, f"'{name}' is printed twice with different values")
            row.values[name] = (value, unit)
        gpu = reader.gpu(row, host)
        _one_gpu_each(reader, gpu, number, named)
        driver = driver_version(None, reader.known(row, "driver_version"))
        if driver is not None:
            problem = driver_problem(driver)
            if problem is not None:
                raise reader.refuse(number, problem)
            drivers.setdefault(driver, number)
        count = reader.number(row, "count", _U32)
        if count is not None:
            counts.setdefault(count, number)
        latest.pop(_key(gpu), None)  # a later sample of the same GPU replaces it (and moves it to the end)
        latest[_key(gpu)] = gpu
    if fields is None and not lost:
        raise reader.refuse(1, f"no header line; expected the header {_TOOL} prints first")
    for seen in (drivers, counts):
        if len(seen) > 1:
            second = sorted(seen.values())[1]
            raise reader.refuse(
                second, f"a second {'driver version' if seen is drivers else 'GPU count'} in one host's file"
            )
    gpus = (*latest.values(), *lost)
    stamps = [g.observed_at for g in gpus if g.observed_at is not None]
    attached = next(iter(counts), None)
    indexed = fields is not None and any(name == "index" for name, _unit in fields)
    remapped_rows_only = fields is not None and all(
        name in ("pci.bus_id", "uuid") or name.startswith("remapped_rows.") for name, _unit in fields
    )
    file = ObservedFile(
        filename,
        NOT_A_LISTING if remapped_rows_only else FORMAT,
        host,
        max(stamps) if stamps else None,
        # Rows without a printed index can be matched by UUID, serial or bus id only: where the node declares none
        # of them, not one of its GPUs is shown to be missing (each row is unmatched, OBS005, and says why).
        partial=(attached is not None and len(gpus) < attached) or not indexed,
        attached=attached,
        driver=next(iter(drivers), None),
    )
    return Observations(gpus=gpus, files=(file,), hosts=(host,))


def _retired_pages(
    reader: _Reader, fields: list[tuple[str, str | None]], header_at: int, lines: list[str], host: str
) -> Observations:
    """`--query-retired-pages` CSV: each GPU it names with the number of pages its last sample lists retired.

    One row per retired page (`gpu_uuid, retired_pages.address, retired_pages.cause`), of the GPUs that have any: a
    GPU it does not name has none or was not asked about, so the file is no listing. A log of samples (`-l`) lists
    each GPU's pages again at each `timestamp`: a GPU's count is that of its last sample, each page counted once by
    its address (an address nvidia-smi could not read, `[N/A]`, is a page of its own).
    """
    header_text = lines[header_at - 1].strip()
    names = {name for name, _unit in fields}
    if not names & {"uuid", "pci.bus_id", "serial"}:
        raise reader.refuse(
            header_at,
            "the --query-retired-pages query names no GPU; expected gpu_uuid or gpu_bus_id among its fields "
            "(add gpu_uuid,gpu_bus_id): a page's row is tied to its GPU by them only",
        )
    # GPU (uuid, bus id, serial) -> (its last sample's timestamp, that sample's pages, first line, observed at).
    pages: dict[tuple[str | None, str | None, str | None], tuple[str | None, set[str], int, datetime | None]] = {}
    for number in range(header_at + 1, len(lines) + 1):
        line = lines[number - 1].strip()
        if not line or line == header_text:
            continue  # the header again: appended runs of one query
        values = _row_values(reader, number, line, len(fields), header_at)
        row = _Row(number, {name: (value, unit) for (name, unit), value in zip(fields, values, strict=True)})
        bus_text = reader.known(row, "pci.bus_id")
        bus = normalise_pci_bus_id(bus_text) if bus_text is not None else None
        if bus_text is not None and bus is None:
            raise reader.refuse(
                number, f"'pci.bus_id' is {reader._shown(bus_text)}; expected a PCI bus id such as 00000000:1B:00.0"
            )
        key = (reader.known(row, "uuid"), bus, reader.known(row, "serial"))
        if key == (None, None, None):
            raise reader.refuse(number, "the row names its GPU by no gpu_uuid, gpu_bus_id or gpu_serial")
        cause = reader.known(row, "retired_pages.cause")
        if cause is not None and cause not in _PAGE_CAUSES:
            raise reader.refuse(
                number, f"'retired_pages.cause' is {reader._shown(cause)}; expected Single Bit ECC or Double Bit ECC"
            )
        sample = row.values["timestamp"][0] if "timestamp" in row.values else None
        address = reader.known(row, "retired_pages.address")
        page = address if address is not None else f"line {number}"
        was = pages.get(key)
        if was is None or was[0] != sample:
            pages[key] = (sample, {page}, number, reader.stamp(row))
        else:
            was[1].add(page)
    gpus = tuple(
        GpuObservation(
            source=SourceLocation(reader.filename, line),
            observed_at=at,
            host=host,
            vendor="nvidia",
            uuid=uuid,
            serial=serial,
            pci_bus_id=bus,
            retired_pages=len(seen),
        )
        for (uuid, bus, serial), (_sample, seen, line, at) in pages.items()
    )
    stamps = [g.observed_at for g in gpus if g.observed_at is not None]
    file = ObservedFile(reader.filename, RETIRED_PAGES, host, max(stamps) if stamps else None, partial=True)
    return Observations(gpus=gpus, files=(file,), hosts=(host,))
