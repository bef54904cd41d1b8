"""`amd-smi static` and `amd-smi metric` as printed on a terminal (without `--json`), of one host.

The same fields as the JSON (amd_smi.py reads them: `bus.bdf`, `bus.max_pcie_width`, `bus.max_pcie_speed`,
`bus.pcie_interface_version`, `asic.market_name`, `board.product_serial`, `pcie.width`, `pcie.speed`,
`ecc.total_uncorrectable_count`, `usage.gfx_activity`), in amd-smi's indented text layout:

    GPU: 0
        BUS:
            BDF: 0000:0c:00.0
            MAX_PCIE_WIDTH: 16
            MAX_PCIE_SPEED: 32 GT/s
        USAGE:
            GFX_ACTIVITY: 100 %

Keys are the JSON keys in capitals; a section is a key with no value, its fields indented below it. A value
with a unit (`32 GT/s`, `100 %`) is its number and unit, exactly as the JSON's `{"value", "unit"}`; `N/A`
is unknown. `amd-smi list` (`BDF`, `UUID`) gives each GPU's bus id (not its UUID: amd_smi.py); a block
of sections topolog does not read (`amd-smi metric --power`) still shows the GPU. amd-smi on Windows
writes `GPU 0:` for `GPU: 0`; releases before ROCm 6.1 wrote
`MAX_PCIE_LANES` for `MAX_PCIE_WIDTH`. Blocks of other devices (`CPU: 0` on an MI300A APU) are skipped.
A section may instead list bare values one a line (ROCm 7's `CPU AFFINITY:` masks), and lines indented
below a `KEY: value` line are that entry's own block (`VF: 0` with the VF's BDF): neither is read. Any other
line that is not `KEY: value` inside a GPU's block, or an indentation no section opened, is refused.
"""

from __future__ import annotations

import re
from typing import Any

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.sources.observed.amd_smi import FORMAT, MAX_INDEX, _Reader, json_start, physical_gpus, whole_listing
from verifier.sources.observed.model import GpuObservation, Observations, ObservedFile, exact_number, host_of_file

_GPU = re.compile(r"^(?:GPU:\s*(\d{1,10})|GPU\s+(\d{1,10}):)\s*$")
_GPU_LINE = re.compile(r"(?m)^(?:GPU:[ \t]*\d{1,10}|GPU[ \t]+\d{1,10}:)[ \t]*\r?$")
_SECTION_LINE = re.compile(r"(?m)^ +(?:(?:BUS|PCIE|ECC|USAGE|ASIC):[ \t]*|BDF:[ \t]*\S+[ \t]*)\r?$")
_BLOCK = re.compile(r"^[A-Z][A-Z0-9_ ]*(?::\s*\S.*|\s+\d+:)\s*$")
# A key may be a number, or end in one: `amd-smi static` lists a clock's FREQUENCY_LEVELS as `0: 300 MHz`
# (ROCm 6) or `LEVEL 0: 500 MHz` (ROCm 7). A number of four digits is no key word: `BDF 0000:05:00.0` is a
# BDF line that lost its colon, refused.
_FIELD = re.compile(r"^( *)([A-Z][A-Z0-9_]*(?: (?:[A-Z][A-Z0-9_]*|[0-9]{1,3}))*|[0-9]{1,4})\s*:\s*(.*?)\s*$")
_KEY_WORD = re.compile(r"[A-Z][A-Z0-9_]+\s+\S")
_WITH_UNIT = re.compile(r"^([0-9]+(?:\.[0-9]+)?)\s*(%|GT/s|MT/s|Mb/s|W|MHz|°C|C)$")
_ALIASES = {"max_pcie_lanes": "max_pcie_width"}
MARKERS = ("GPU", "BUS:", "PCIE:", "ECC:", "USAGE:", "ASIC:")


def looks_like(text: str) -> bool:
    """amd-smi's text: a `GPU: <n>` (or `GPU <n>:`) line at the margin and one of its section headers."""
    # Sniffing runs on every observation file of a fleet: the first characters decide before any search
    # (amd-smi's text starts with a device's block: `GPU: 0`, `GPU 0:`, or `CPU: 0` on an APU).
    begin = json_start(text)  # past Python's warnings, as before the JSON form
    start = text[begin : begin + 64].lstrip()
    if not start.startswith(("GPU", "CPU")):
        return False
    head = text[begin : begin + 20_000]
    return _GPU_LINE.search(head) is not None and _SECTION_LINE.search(head) is not None


def _value(text: str) -> Any:
    """A field's value as amd_smi.py reads the JSON's: digits an int, `<n> <unit>` a value with its unit."""
    if text.isdigit() and len(text) <= 20:
        return int(text)
    m = _WITH_UNIT.match(text)
    if m is not None:
        number = exact_number(m.group(1))
        if number is not None:
            return {"value": int(number) if number.denominator == 1 else number, "unit": m.group(2)}
    return text


def read(text: str, filename: str, host: str | None) -> Observations:
    """The GPUs of one host's `amd-smi static` / `amd-smi metric` text output."""
    host = host_of_file(host, filename, "amd-smi")
    reader = _Reader(text, filename, host)
    problems = reader.problems
    blocks: list[tuple[int, SourceLocation, dict[str, Any]]] = []
    current: dict[str, Any] | None = None
    stack: list[tuple[int, dict[str, Any]]] = []
    leaf = -1  # the indentation of the last `KEY: value` line (-1: none since the last section opened)
    items = -1  # the indentation of a section that so far holds only bare values (-1: none)
    seen: dict[int, int] = {}
    warnings = text.count("\n", 0, json_start(text))  # Python's warning lines before the output (amd_smi.json_start)
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        loc = SourceLocation(filename, number)
        if not line.strip() or number <= warnings:
            continue
        if not line.startswith((" ", "\t")):
            gpu = _GPU.match(line)
            if gpu is not None:
                index = int(gpu.group(1) or gpu.group(2))
                if index > MAX_INDEX:
                    problems.append(Diagnostic(loc, f"GPU index {index} is out of range; expected 0 to {MAX_INDEX}"))
                    current = None
                elif index in seen:
                    problems.append(Diagnostic(loc, f"GPU {index} is listed twice (first at line {seen[index]})"))
                    current = None
                else:
                    seen[index] = number
                    current = {"gpu": index}
                    blocks.append((index, loc, current))
                stack = [(-1, current)] if current is not None else []
                leaf = items = -1
            elif _BLOCK.match(line) or line.endswith(":"):
                current, stack = None, []  # another device's block (CPU: 0 on an APU): not read
            else:
                problems.append(Diagnostic(loc, f"unexpected text {line[:80]!r}; expected 'GPU: <n>' and its fields"))
            continue
        if current is None:
            continue
        field = _FIELD.match(line.expandtabs(4))
        # A bare value holds no colon and does not start with a KEY word (`MAX_PCIE_WIDTH 16` lost its colon).
        bare = field is None and ":" not in line and _KEY_WORD.match(line.lstrip()) is None
        if bare and items >= 0 and len(line.expandtabs(4)) - len(line.lstrip()) > items:
            # A section listing bare values, one a line (ROCm 7's NUMA `CPU AFFINITY:` masks): not read.
            continue
        if field is None:
            problems.append(Diagnostic(loc, f"unexpected text {line.strip()[:80]!r}; expected 'KEY: value'"))
            continue
        indent, key, value = len(field.group(1)), field.group(2).lower().replace(" ", "_"), field.group(3)
        key = _ALIASES.get(key, key)
        while stack and indent <= stack[-1][0]:
            stack.pop()
        if stack and leaf > stack[-1][0] and indent > leaf:
            # Lines indented below a `KEY: value` line are that entry's own block, not its section's:
            # `amd-smi list` on a host with SR-IOV prints `VF: 0` and the VF's own BDF and UUID below it,
            # which would otherwise replace the GPU's. Such a block is not read.
            stack.append((leaf, {}))
        if not stack:
            problems.append(Diagnostic(loc, f"{key.upper()} is indented as no section opened it"))
            continue
        parent = stack[-1][1]
        if value == "":
            section: dict[str, Any] = {}
            parent[key] = section
            stack.append((indent, section))
            leaf, items = -1, indent
        else:
            parent[key] = _value(value)
            leaf, items = indent, -1
    if not blocks and not problems:
        problems.append(Diagnostic(SourceLocation(filename, 1), "no 'GPU: <n>' block; expected amd-smi text output"))
    gpus: list[GpuObservation] = []
    for index, loc, value in blocks:
        observed = reader._gpu(value, index, loc)
        if observed is None:
            # A block of sections topolog does not read (clocks, power): the GPU is there all the same,
            # and the file lists it (a file that listed none would call every declared GPU missing).
            observed = GpuObservation(source=loc, observed_at=None, host=host, vendor="amd", index=index)
        gpus.append(observed)
    if problems:
        raise TopologError(problems)
    return Observations(
        gpus=tuple(physical_gpus(gpus)),
        files=(ObservedFile(filename, FORMAT, host, None, partial=not whole_listing(seen)),),
        hosts=(host,),
    )
