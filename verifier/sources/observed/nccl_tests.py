"""nccl-tests (`all_reduce_perf`, `all_gather_perf`, ...) output: the GPUs it ran on and its table.

    # Collective test starting: all_reduce_perf                     (nccl-tests 2.13 and later)
    # nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) ...
    # Using devices
    #  Rank  0 Group  0 Pid   6899 on ztan-mig-235z device  0 [0000:04:00] NVIDIA H100 80GB HBM3
    #                                                              out-of-place                       in-place
    #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
    #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
               8             2     float     sum      -1    135.8    0.00    0.00      0    123.5    0.00    0.00      0

Columns are found by the header's names (older versions have no `redop`/`root`, the error column
is `error` or `#wrong`): the first `algbw`/`busbw` pair is out-of-place, the second in-place.
Every row becomes two measurements (or one, where a test prints one side). GB/s as printed
(10^9 bytes) are kept exactly as MB/s. The rank lines name each GPU's host, CUDA device number
and PCI address: `[0000:04:00]` (domain:bus:device; the function is 0, a GPU is function 0) is
matched by bus id; the older `[0x1b]` names only a bus number and is matched by host and device
number (the CUDA device number, nvidia-smi's index when CUDA_DEVICE_ORDER=PCI_BUS_ID, as
cluster launchers set it). `mpirun --tag-output` prefixes (`[1,0]<stdout>:`) are taken off.

The collective comes from `# Collective test starting:`, else from the test's binary name in
the file (the command line written above the output) or in the file's name; a file that says
none of them is refused, as is a table row cut short. A file may hold several runs one after
the other: each run's rows belong to the rank lines printed above them, and each run is its own
measurement (a second run appended to a file is not merged into the first: its peak is its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import PurePath

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.limits import INT64_MAX
from verifier.sources.observed.model import (
    BandwidthMeasurement,
    GpuRef,
    Observations,
    ObservedFile,
    exact_number,
    normalise_pci_bus_id,
)

FORMAT = "nccl-tests"
_TAG = re.compile(r"^\[[0-9]+,[0-9]+\]<std(?:out|err)>:")
_RANK = re.compile(
    r"^#\s*Rank\s+([0-9]{1,9})\s+Group\s+[0-9]+\s+Pid\s+[0-9]+\s+on\s+(\S+)\s+device\s+([0-9]{1,9})\s+\[([^\]]*)\]\s*(.*?)\s*$"
)
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(\w+)")
_BINARY = re.compile(r"\b([a-z][a-z_]*?_perf)(?:_mpi)?\b")
_THREADS = re.compile(r"^#\s*nThread\s")
_BUS_FULL = re.compile(r"^([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.([0-7]))?$")
_BUS_ONLY = re.compile(r"^0x([0-9a-fA-F]{1,2})$")
MARKERS = ("# Using devices", "algbw", "busbw")
"""Text every nccl-tests output holds: how sniff.py recognises one."""


def looks_like(text: str) -> bool:
    return all(m in text for m in MARKERS)


@dataclass
class _Run:
    operation: str | None
    start: int
    """The line the run's output begins at: one file may hold several runs, each judged on its own."""
    ranks: dict[int, tuple[GpuRef, SourceLocation]] = field(default_factory=dict)
    columns: list[str] | None = None


def _gpu(host: str, device: int, bus: str) -> GpuRef:
    full = _BUS_FULL.match(bus.strip())
    if full:
        domain, b, d, fn = full.groups()
        # Normalised as every other reader's bus ids are (model.normalise_pci_bus_id), so one function
        # matches by one name; a domain it cannot read exactly (above 16 bits) names no bus id.
        bus_id = normalise_pci_bus_id(f"{domain}:{b}:{d}.{fn or '0'}")
        if bus_id is not None:
            return GpuRef(host, pci_bus_id=bus_id, index=device)
    return GpuRef(host, index=device)


def _operation_hint(text: str, filename: str) -> str | None:
    """The test binary named before the first table, else in the file's name."""
    head = text.split("# Using devices", 1)[0]
    for where in (head, PurePath(filename).name):
        m = _BINARY.search(where)
        if m:
            return m.group(1)
    return None


def _gbps(cell: str, what: str, loc: SourceLocation, problems: list[Diagnostic]) -> Fraction | None:
    value = exact_number(cell)
    if value is None or value < 0 or value * 1000 > INT64_MAX:
        problems.append(Diagnostic(loc, f"{what} {cell!r} is not a bandwidth; expected GB/s such as 338.82"))
        return None
    return value * 1000


def read(text: str, filename: str, host: str | None) -> Observations:
    """Every row of every run in one nccl-tests output. The hosts come from its rank lines."""
    del host  # the rank lines name every host; the folder the file lies in does not matter
    problems: list[Diagnostic] = []
    hint = _operation_hint(text, filename)
    run: _Run | None = None
    out: list[BandwidthMeasurement] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _TAG.sub("", raw).strip()
        loc = SourceLocation(filename, number)
        if not line:
            continue
        starting = _STARTING.match(line)
        if starting:
            run = _Run(starting.group(1), number)
            continue
        if _THREADS.match(line):
            if run is None or run.ranks or run.columns is not None:  # not the run just named above
                run = _Run(hint, number)
            continue
        rank = _RANK.match(line)
        if rank:
            if run is None or run.columns is not None:
                run = _Run(hint, number)
            number_, on, device, bus = int(rank.group(1)), rank.group(2), int(rank.group(3)), rank.group(4)
            if number_ in run.ranks:
                problems.append(Diagnostic(loc, f"rank {number_} is listed twice in one run"))
                continue
            if not (_BUS_FULL.match(bus.strip()) or _BUS_ONLY.match(bus.strip())):
                problems.append(Diagnostic(loc, f"device address [{bus}] is neither [0000:1b:00] nor [0x1b]"))
                continue
            run.ranks[number_] = (_gpu(on, device, bus), loc)
            continue
        if line.startswith("#"):
            words = line[1:].split()
            if "size" in words and "algbw" in words and "busbw" in words:
                if run is None or not run.ranks:
                    problems.append(
                        Diagnostic(
                            loc,
                            "a result table before any '#  Rank N ... on HOST device D' line; expected its GPUs first",
                        )
                    )
                    run = _Run(hint, number)
                run.columns = words
            continue
        if run is None or run.columns is None or not line.split()[0].isdigit():
            continue  # NCCL's own log lines, launcher noise, a summary: not the table
        cells = line.split()
        if len(cells) != len(run.columns):
            problems.append(
                Diagnostic(
                    loc,
                    f"a row of {len(cells)} columns under a header of {len(run.columns)}; the file looks truncated",
                )
            )
            continue
        if not run.ranks:
            continue  # reported at the header
        if run.operation is None:
            problems.append(
                Diagnostic(
                    loc,
                    "which collective ran is not said; expected '# Collective test starting: NAME'"
                    " or the test's name (all_reduce_perf ...) in the file or its name",
                )
            )
            run.operation = "?"
            continue
        if run.operation == "?":
            continue
        out.extend(_row(run, cells, loc, problems))
    if not out and not problems:
        problems.append(
            Diagnostic(
                SourceLocation(filename, 1), "no result rows; expected an nccl-tests table (size ... algbw busbw)"
            )
        )
    if problems:
        raise TopologError(problems)
    # A measurement says how fast a set of GPUs ran, not what state each host's devices are in:
    # its hosts are not "observed" by it (they stay "not observed" without a device listing).
    return Observations(bandwidth=tuple(out), files=(ObservedFile(filename, FORMAT, None, None),))


def _row(run: _Run, cells: list[str], loc: SourceLocation, problems: list[Diagnostic]) -> list[BandwidthMeasurement]:
    assert run.columns is not None and run.operation is not None
    columns = run.columns
    algbw = [i for i, c in enumerate(columns) if c == "algbw"]
    busbw = [i for i, c in enumerate(columns) if c == "busbw"]
    size = int(cells[columns.index("size")])
    if size > INT64_MAX:
        problems.append(Diagnostic(loc, f"size {size} is beyond 64 bits; expected bytes such as 8589934592"))
        return []
    ordered = [run.ranks[k][0] for k in sorted(run.ranks)]
    hosts = tuple(sorted({g.host for g in ordered}))
    per_host = {h: sum(1 for g in ordered if g.host == h) for h in hosts}
    even = len(set(per_host.values())) == 1
    wrongs = [i for i, c in enumerate(columns) if c == "#wrong"]
    out: list[BandwidthMeasurement] = []
    sides = [None] if len(algbw) == 1 else [False, True]
    for k, (side, (a, b)) in enumerate(zip(sides, zip(algbw, busbw, strict=False), strict=False)):
        alg = _gbps(cells[a], "algbw", loc, problems)
        bus = _gbps(cells[b], "busbw", loc, problems)
        if alg is None or bus is None:
            continue
        wrong = _wrong(cells[wrongs[k]], loc, problems) if k < len(wrongs) else None
        out.append(
            BandwidthMeasurement(
                source=loc,
                observed_at=None,
                tool=FORMAT,
                operation=run.operation,
                hosts=hosts,
                gpus=tuple(ordered),
                gpus_per_host=next(iter(per_host.values())) if even else None,
                size_bytes=size,
                algbw_mbps=alg,
                busbw_mbps=bus,
                in_place=side,
                wrong=wrong,
                run_line=run.start,
            )
        )
    return out


def _wrong(cell: str, loc: SourceLocation, problems: list[Diagnostic]) -> int | None:
    """The `#wrong` count: values the check found wrong; `N/A` when the run did not check (-c 0)."""
    if cell.upper() == "N/A":
        return None
    if not cell.isdigit() or len(cell) > 18:
        problems.append(Diagnostic(loc, f"#wrong {cell!r} is not a count; expected a whole number or N/A"))
        return None
    return int(cell)
