"""`nvidia-smi nvlink -s` (per-link speed, or inactive) and `nvidia-smi nvlink -e` (per-link error counters).

Both print a header per GPU and one indented line per link (or per link and counter):

    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-5a10e6e5-95f7-2785-ed63-6f6147f304f7)
             Link 0: 26.562 GB/s
             Link 1: <inactive>

    GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)
             Link 0: Replay Errors: 0
             Link 0: CRC Errors: 0

The speed is per direction, in GB/s with three decimals: read exactly as MB/s (26.562 GB/s is
26,562 MB/s). `-s` lines become `ScaleupLinkObservation`s, `-e` lines `CounterObservation`s named
`nvlink <counter>` with a `link` label (the two commands are two files; facts join them by GPU
and link). Neither prints a timestamp.

A GPU none of whose NVLinks is up gets no link lines but one message from NVML (leptonai/gpud issue 1085
shows it under a B200):

    GPU 2: NVIDIA B200 (UUID: GPU-...)
    NVML: Unable to retrieve NVLink information as all links are inActive

`-s` reads it as what it says, the GPU's links all inactive: one inactive observation with link -1
(`ALL_LINKS`: the message names no link), so the GPU counts 0 active links against those its node
declares (OBS002/OBS003) instead of the file being refused or the GPU passing unobserved.

Recent drivers print, under a GPU that has no NVLink the driver can use (a PCIe card; an SXM GPU passed
alone into a VM), `Device does not have or support Nvlink` (canonical/checkbox pull request 2727 quotes it
for one GPU). It is read the same way: no NVLink works there, which is nothing against a node that
declares none, and a finding where the node declares NVLinks the driver cannot use.
"""

from __future__ import annotations

import re

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.observed.model import (
    IN_HOST_FOLDER,
    CounterObservation,
    GpuRef,
    Observations,
    ObservedFile,
    ScaleupLinkObservation,
    exact_number,
    host_of_file,
)

FORMAT_STATUS = "nvidia-smi-nvlink-s"
FORMAT_ERRORS = "nvidia-smi-nvlink-e"
_GPU = re.compile(r"GPU (\d+): (.*?)(?: \(UUID: (GPU-[0-9A-Fa-f-]+)\))?")
_SPEED = re.compile(r"Link (\d+): (?:<inactive>|(\S+) GB/s)")
_COUNTER = re.compile(r"Link (\d+): ([A-Za-z][A-Za-z ]*?): (\d+)")
_ANY_LINK = re.compile(r"Link \d+: ")
_ALL_INACTIVE = re.compile(
    r"NVML: Unable to retrieve NVLink information as all links are inactive\.?"
    r"|Device does not have or support NVLink\.?",
    re.IGNORECASE,
)
ALL_LINKS = -1
"""The link number of an observation that stands for every link of its GPU (NVML's all-inactive message)."""


def kind_of(text: str) -> str | None:
    """FORMAT_STATUS or FORMAT_ERRORS when `text` is that command's output, else None."""
    lines = [ln.strip() for ln in text.splitlines()[:64] if ln.strip()]
    if not lines or not _GPU.fullmatch(lines[0]):
        return None
    all_inactive = False
    for ln in lines[1:]:
        if _SPEED.fullmatch(ln):
            return FORMAT_STATUS
        if _COUNTER.fullmatch(ln):
            return FORMAT_ERRORS
        all_inactive = all_inactive or _ALL_INACTIVE.fullmatch(ln) is not None
    # Only NVML's all-inactive or no-NVLink message (every GPU down, or none with NVLink): what `-s` prints then.
    return FORMAT_STATUS if all_inactive else None


def _header(line: str, loc: SourceLocation, host: str) -> GpuRef:
    m = _GPU.fullmatch(line)
    if m is None:
        expected = "a GPU header such as 'GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)'"
        raise TopologError.at(loc, f"expected {expected}, got {line!r}")
    return GpuRef(host=host, uuid=m.group(3), index=int(m.group(1)))


def _mbps(text: str, loc: SourceLocation) -> int:
    value = exact_number(text)
    if value is None or value < 0:
        raise TopologError.at(loc, f"link speed {text!r} GB/s is not a number; expected e.g. '26.562 GB/s'")
    mbps = value * 1000
    if mbps.denominator != 1:
        raise TopologError.at(loc, f"link speed {text} GB/s is not a whole number of MB/s; expected at most 3 decimals")
    return int(mbps)


def read(text: str, filename: str, host: str | None) -> Observations:
    """Links (`-s`) or link error counters (`-e`) of one host's GPUs. TopologError with file:line on bad input."""
    host = host_of_file(host, filename, "nvidia-smi nvlink", IN_HOST_FOLDER)
    kind = kind_of(text)
    if kind is None:
        raise TopologError.at(
            SourceLocation(filename, 1),
            "not `nvidia-smi nvlink -s` or `-e` output: expected a 'GPU N: <name> (UUID: ...)' line "
            "followed by 'Link N: <speed> GB/s', 'Link N: <inactive>' or 'Link N: <counter>: <count>' lines",
        )
    links: list[ScaleupLinkObservation] = []
    counters: list[CounterObservation] = []
    gpu: GpuRef | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        loc = SourceLocation(filename, number)
        if line.startswith("GPU "):
            gpu = _header(line, loc, host)
            continue
        if gpu is None or not _ANY_LINK.match(line):
            # Looked for only here, off the path of the millions of link lines a fleet's files hold.
            if gpu is not None and _ALL_INACTIVE.fullmatch(line):
                # `-e` has no counter to give for such a GPU; `-s` says its links are all down.
                if kind == FORMAT_STATUS:
                    links.append(ScaleupLinkObservation(loc, None, gpu, ALL_LINKS, "inactive", None, "nvlink"))
                continue
            raise TopologError.at(loc, f"expected a 'GPU N: ...' header or a 'Link N: ...' line, got {line!r}")
        if kind == FORMAT_STATUS:
            m = _SPEED.fullmatch(line)
            if m is None:
                raise TopologError.at(loc, f"expected 'Link N: <speed> GB/s' or 'Link N: <inactive>', got {line!r}")
            speed = None if m.group(2) is None else _mbps(m.group(2), loc)
            state = "inactive" if speed is None else "active"
            links.append(ScaleupLinkObservation(loc, None, gpu, int(m.group(1)), state, speed, "nvlink"))
        else:
            c = _COUNTER.fullmatch(line)
            if c is None:
                raise TopologError.at(loc, f"expected 'Link N: <counter>: <count>', got {line!r}")
            metric = f"nvlink {c.group(2).strip()}"
            counters.append(CounterObservation(loc, None, gpu, metric, int(c.group(3)), (("link", c.group(1)),)))
    return Observations(
        links=tuple(links),
        counters=tuple(counters),
        files=(ObservedFile(filename, kind, host, None),),
        hosts=(host,),
    )
