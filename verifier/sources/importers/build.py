"""Building an `Inventory` from a tool's output, with every problem collected.

Importers produce the same in-memory `Inventory` the YAML loader produces, so facts and
rules work unchanged. Two kinds of report come back besides the inventory:
errors (bad input: the import fails with exit code 2) and notes (something in the input
that topolog does not model, such as a SATA controller, said out loud rather than dropped).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.escape import one_line
from verifier.core.limits import read_limited
from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.model import EMPTY_INT, EMPTY_STR, Inventory, Link, Obj
from verifier.sources.inventory.specs import PCIE_LANE_MBPS
from verifier.sources.inventory.validate import Problems, check_inventory, int64_problem
from verifier.sources.inventory.yaml_source import decode_utf8

ASSUMED = "assumed"
"""Label key on a link whose bandwidth the tool does not state: the value is a documented default."""

# PCIe generation by transfer rate in GT/s (PCI-SIG): what sysfs and NCCL write as link_speed.
PCIE_GEN_BY_GTS = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6}
DEFAULT_PCIE = (4, 16)  # stands for an unstated PCIe link: Gen4 x16, labelled assumed
MAX_DIGITS = 40
"""Digits a whole number in a tool's output may have. Past 19 none fits the engines' 64-bit integers
(a unit divided down may bring a few more back), and Python refuses to read past 4,300 digits: a
longer run of digits is not a figure a tool writes, and is refused like any other unreadable value."""

NVLINK_MBPS_BY_SM = {6: 20000, 7: 25000, 8: 25000, 9: 25000, 10: 50000}  # NVLink 1..5, per link, per direction
DEFAULT_NVLINK_LINK_MBPS = 25000  # NVLink 2-4 per link per direction, when the generation is not stated


PCI_BUSID = re.compile(r"(?:[0-9a-f]{1,8}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]")
"""A PCI address as sysfs, NVML, NCCL and hwloc write it (lower case): [domain:]bus:device.function, hex."""


def busid_problem(busid: str, what: str) -> str | None:
    """Why `busid` (lower case) is no PCI address, or None. The address is what reconcile pairs
    devices by: one it cannot read would leave the device unpaired, silently.
    """
    if PCI_BUSID.fullmatch(busid):
        return None
    return (
        f"{what} {one_line(busid)!r} is not a PCI address; "
        "expected domain:bus:device.function in hex, such as 0000:17:00.0"
    )


def pcie_mbps(gen: int, lanes: int) -> int:
    return PCIE_LANE_MBPS[gen] * lanes


def whole(text: str | None) -> int | None:
    """`text` as a whole number when it is ASCII digits only (at most MAX_DIGITS), else None."""
    if text is None or not (text.isascii() and text.isdigit()) or len(text) > MAX_DIGITS:
        return None
    return int(text)


def safe_name(text: str) -> str:
    """A file stem or host name as an inventory id: letters, digits, - _ . only."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")
    return cleaned or "node"


@dataclass
class Imported:
    inventory: Inventory
    notes: list[Diagnostic] = field(default_factory=list)


class Builder:
    """Adds objects and links, collects errors and notes; `finish` validates and returns."""

    def __init__(self, files: list[str]) -> None:
        self.inv = Inventory(files=tuple(files))
        for m in builtin_models():
            self.inv.models[m.name] = m
        self.errors: list[Diagnostic] = []
        self.notes: list[Diagnostic] = []

    def error(self, loc: SourceLocation, message: str) -> None:
        self.errors.append(Diagnostic(loc, message))

    def note(self, loc: SourceLocation, message: str) -> None:
        self.notes.append(Diagnostic(loc, message))

    def has(self, oid: str) -> bool:
        return oid in self.inv.objects

    def obj(
        self,
        oid: str,
        kind: str,
        parent: str | None,
        loc: SourceLocation,
        *,
        labels: Mapping[str, str] | None = None,
        quantities: Mapping[str, int] | None = None,
        model: str | None = None,
    ) -> Obj:
        if oid in self.inv.objects:
            self.error(loc, f"{oid!r} is described twice (first at {self.inv.objects[oid].loc})")
            return self.inv.objects[oid]
        o = Obj(
            id=oid,
            kind=kind,
            parent=parent,
            loc=loc,
            model=model,
            labels=MappingProxyType(dict(labels)) if labels else EMPTY_STR,
            quantities=MappingProxyType(dict(quantities)) if quantities else EMPTY_INT,
        )
        self.inv.objects[oid] = o
        return o

    def link(
        self,
        a: str,
        b: str,
        kind: str,
        mbps: int,
        loc: SourceLocation,
        *,
        attrs: Mapping[str, int] | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> Link:
        base = f"{a}<->{b}"
        lid, k = base, 2
        while lid in self.inv.links:
            lid, k = f"{base}#{k}", k + 1
        lk = Link(
            id=lid,
            a=a,
            b=b,
            kind=kind,
            mbps=mbps,
            loc=loc,
            attrs=MappingProxyType(dict(attrs)) if attrs else EMPTY_INT,
            labels=MappingProxyType(dict(labels)) if labels else EMPTY_STR,
        )
        self.inv.links[lid] = lk
        return lk

    def finish(self) -> Imported:
        """The inventory, checked like a loaded one. TopologError with every problem otherwise."""
        self._storable()
        if self.errors:
            raise TopologError(self.errors)
        problems = Problems()
        check_inventory(self.inv, problems)
        problems.raise_if_any()
        return Imported(self.inv, sorted(set(self.notes)))

    def _storable(self) -> None:
        """What the YAML loader would refuse in the written inventory and check_inventory does not
        check, dealt with here, at the tool's line (refused later, far from where the value came
        from, the user could not tell what was wrong): a label the tool left empty says nothing and
        is left out; a figure that 64 bits cannot hold (the engines' integers) is an error.
        """
        for o in self.inv.objects.values():
            if any(not v.strip() for v in o.labels.values()):
                o.labels = MappingProxyType({k: v for k, v in o.labels.items() if v.strip()})
            o.labels = _escaped_source(o.labels)
            self._figures(o.quantities, o.loc, f"object {o.id!r}")
        for lk in self.inv.links.values():
            if any(not v.strip() for v in lk.labels.values()):
                lk.labels = MappingProxyType({k: v for k, v in lk.labels.items() if v.strip()})
            lk.labels = _escaped_source(lk.labels)
            self._figures({"bandwidth": lk.mbps, **lk.attrs}, lk.loc, f"link {lk.a} - {lk.b}")

    def _figures(self, figures: Mapping[str, int], loc: SourceLocation, what: str) -> None:
        for key, value in figures.items():
            problem = int64_problem(value)
            if problem is not None:
                self.error(loc, f"{what}: {key!r} {problem}")


def _escaped_source(labels: Mapping[str, str]) -> Mapping[str, str]:
    """`labels` with the `source` label (the file:line topolog read the object from) escaped as the
    text format escapes paths: a folder's name may hold a newline, which a label may not.
    """
    source = labels.get("source")
    if source is None or one_line(source) == source:
        return labels
    return MappingProxyType({**labels, "source": one_line(source)})


def read_tool_text(path: Path) -> str:
    """A tool's output as text: read within the input limits, UTF-8 or a located TopologError.

    A byte order mark (an editor on Windows saved it) is dropped: kept, it hid the first line's
    table header (amd-smi's ACCESS TABLE was then read as stray lines, its tables left unread).
    """
    return decode_utf8(read_limited(path), str(path))
