"""nvbandwidth output: one matrix of GB/s per testcase, GPUs numbered as CUDA numbers them.

    Running device_to_device_memcpy_read_ce.
    memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)
              0         1
    0       N/A    264.36
    1    264.60       N/A
    SUM device_to_device_memcpy_read_ce 528.96

A GPU-to-GPU testcase (`GPU(row)` and `GPU(column)` in its title) gives one measurement per
measured pair, naming both GPUs; a host testcase (`CPU(row)`, one row) one per GPU column; an
`All GPUs` testcase one per GPU, naming that GPU. `N/A` (and the 0.00 older versions print on
the diagonal) is a pair not measured; `WAIVED` testcases have no matrix. A copy's bandwidth is
both its algbw and its busbw. nvbandwidth prints neither host nor time, and not the buffer size
unless asked (`--bufferSize`, 64 MiB by default): the size is recorded as 0, "not printed". GPUs
are matched by host and device number, or by bus id where the `Device N:` lines print one.
"""

from __future__ import annotations

import re
from fractions import Fraction

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.limits import INT64_MAX
from verifier.sources.observed.model import (
    BandwidthMeasurement,
    GpuRef,
    Observations,
    ObservedFile,
    exact_number,
    host_of_file,
    normalise_pci_bus_id,
)

FORMAT = "nvbandwidth"
_RUNNING = re.compile(r"^Running\s+(\w+)\.\s*$")
_TITLE = re.compile(r"^memcpy\s+(?:CE|SM)\s+(.*)\s+bandwidth\s+\(GB/s\)\s*$", re.IGNORECASE)
_DEVICE = re.compile(r"^Device\s+([0-9]+):\s*(.*?)\s*(?:\(([0-9a-fA-F:.]+)\))?\s*$")
_SUM = re.compile(r"^SUM\s+(\w+)\s+")
MARKERS = ("Running ", "bandwidth (GB/s)")
"""Text every nvbandwidth output holds: how sniff.py recognises one."""


def looks_like(text: str) -> bool:
    return all(m in text for m in MARKERS) and "memcpy" in text


def read(text: str, filename: str, host: str | None) -> Observations:
    """Every measured cell of every testcase in one nvbandwidth output of `host`."""
    host = host_of_file(host, filename, "nvbandwidth")
    problems: list[Diagnostic] = []
    buses: dict[int, str] = {}
    out: list[BandwidthMeasurement] = []
    testcase: str | None = None
    title: str | None = None
    columns: list[int] | None = None
    cases = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        loc = SourceLocation(filename, number)
        device = _DEVICE.match(line)
        if device and device.group(3):
            bus = normalise_pci_bus_id(device.group(3) if "." in device.group(3) else device.group(3) + ".0")
            if bus is not None:
                buses[int(device.group(1))] = bus
        running = _RUNNING.match(line)
        if running:
            testcase, title, columns = running.group(1), None, None
            cases += 1
            continue
        if testcase is None:
            continue
        heading = _TITLE.match(line)
        if heading:
            title, columns = heading.group(1), None
            continue
        if title is None or not line or _SUM.match(line) or line.startswith(("WAIVED", "COEFFICIENT_OF_VARIATION")):
            if line.startswith("WAIVED"):
                testcase = None
            continue
        cells = line.split()
        if columns is None:
            if not all(c.isdigit() and len(c) <= 9 for c in cells):
                problems.append(
                    Diagnostic(
                        loc,
                        f"{line[:60]!r} after the title of {testcase}; expected the GPU numbers heading its columns",
                    )
                )
                title = None
                continue
            columns = [int(c) for c in cells]
            continue
        if not cells[0].isdigit() or len(cells[0]) > 9:
            continue  # a note after the matrix
        if len(cells) != len(columns) + 1:
            problems.append(
                Diagnostic(
                    loc,
                    f"{len(cells) - 1} values under {len(columns)} columns in {testcase}; the file looks truncated",
                )
            )
            continue
        row = int(cells[0])
        for col, cell in zip(columns, cells[1:], strict=True):
            if cell.upper() == "N/A":
                continue
            value = exact_number(cell)
            if value is None or value < 0 or value * 1000 > INT64_MAX:
                problems.append(
                    Diagnostic(loc, f"{cell!r} in {testcase} is not a bandwidth; expected GB/s such as 264.36 or N/A")
                )
                continue
            gpus = _gpus(title, row, col, host, buses)
            if gpus is None or (len(gpus) == 2 and gpus[0] == gpus[1]):
                continue  # the diagonal (0.00 in older versions): a GPU is not measured against itself
            mbps = value * 1000
            out.append(_measurement(loc, testcase, host, gpus, mbps))
    if not cases and not problems:
        problems.append(
            Diagnostic(SourceLocation(filename, 1), "no 'Running <testcase>.' line; expected nvbandwidth output")
        )
    if problems:
        raise TopologError(problems)
    # Measurements do not make the host "observed" (see nccl_tests.read): no `hosts`.
    return Observations(bandwidth=tuple(out), files=(ObservedFile(filename, FORMAT, host, None),))


def _ref(host: str, index: int, buses: dict[int, str]) -> GpuRef:
    return GpuRef(host, pci_bus_id=buses.get(index), index=index)


def _gpus(title: str, row: int, col: int, host: str, buses: dict[int, str]) -> tuple[GpuRef, ...] | None:
    t = title.upper()
    if "GPU(ROW)" in t and "GPU(COLUMN)" in t:
        return (_ref(host, row, buses), _ref(host, col, buses))
    if "GPU(COLUMN)" in t:  # CPU(row) against GPU(column), or All GPUs against GPU(column)
        return (_ref(host, col, buses),)
    if "GPU(ROW)" in t:  # a GPU's own memory (device_local_copy)
        return (_ref(host, row, buses),)
    return None


def _measurement(
    loc: SourceLocation, testcase: str, host: str, gpus: tuple[GpuRef, ...], mbps: Fraction
) -> BandwidthMeasurement:
    return BandwidthMeasurement(
        source=loc,
        observed_at=None,
        tool=FORMAT,
        operation=testcase,
        hosts=(host,),
        gpus=gpus,
        gpus_per_host=len(gpus),
        size_bytes=0,
        algbw_mbps=mbps,
        busbw_mbps=mbps,
        in_place=None,
    )
