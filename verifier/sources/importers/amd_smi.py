"""`amd-smi topology` to an inventory (one node per file).

The output is a series of tables titled `ACCESS TABLE:`, `WEIGHT TABLE:`, `HOPS TABLE:`,
`LINK TYPE TABLE:`, `NUMA BW TABLE:` (then coherence, atomics, DMA and bi-directional tables,
and a legend), each with the GPUs' PCI bus ids as rows and columns. What the tables mean and how
they become objects and links is in `amd_topo`. GPUs are named gpu0.. in PCI bus order, each with
its bus id as `pci_busid`. amd-smi topology states no NUMA node per GPU (that is `amd-smi static
--numa`), so only the hops table places GPUs under a shared CPU.
"""

from __future__ import annotations

import re
from pathlib import Path

from verifier.core.errors import SourceLocation
from verifier.sources.importers import amd_topo
from verifier.sources.importers.amd_topo import AmdTopo, Cell, read_matrix, tokens
from verifier.sources.importers.build import Builder, Imported

_TITLE = re.compile(r"^\s*([A-Z][A-Z /-]*?)\s+TABLE:\s*$")
_BDF = re.compile(r"^(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_TABLES = {"WEIGHT": "weight", "HOPS": "hops", "LINK TYPE": "link_type", "NUMA BW": "bandwidth", "ACCESS": "access"}
MARKERS = ("LINK TYPE TABLE:", "WEIGHT TABLE:", "HOPS TABLE:")
"""Text that only amd-smi's topology output holds: how other importers recognise such a file."""


def looks_like(text: str) -> bool:
    return any(m in text for m in MARKERS)


def import_amd_smi(paths: list[Path], node: str | None = None) -> Imported:
    return amd_topo.import_files(paths, node, read)


def _bus(name: str) -> str:
    low = name.lower()
    return low if low.count(":") == 2 else f"0000:{low}"


def read(b: Builder, text: str, file: str) -> AmdTopo | None:
    if text.lstrip()[:1] in ("{", "["):
        b.error(
            SourceLocation(file, 1), "this is JSON; expected the text output of `amd-smi topology` (without --json)"
        )
        return None
    lines = text.splitlines()
    topo: AmdTopo | None = None
    access: dict[tuple[str, str], Cell] = {}
    unmodelled: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        loc = SourceLocation(file, i + 1)
        title = _TITLE.match(line)
        if line.strip().lower().startswith("legend"):
            break  # the legend explains the cells; nothing after it is data
        if title is None:
            if line.strip():
                # amd-smi prints warnings (missing groups, driver notices) around its tables: said, not read.
                b.note(loc, f"line {line.strip()[:60]!r} is outside the amd-smi tables and is not read")
            i += 1
            continue
        name = title.group(1)
        i += 1
        if i >= len(lines) or not lines[i].strip():
            b.error(SourceLocation(file, i + 1), f"{name} TABLE: expected a header of PCI bus ids")
            return None
        hloc = SourceLocation(file, i + 1)
        cols = [t for t, _ in tokens(lines[i])]
        bad = [c for c in cols if not _BDF.match(c)]
        if bad:
            b.error(hloc, f"{name} TABLE: column {bad[0]!r}; expected PCI bus ids such as 0000:0c:00.0")
            return None
        if topo is None:
            topo = AmdTopo("amd-smi", cols, hloc)
            topo.busid = {c: _bus(c) for c in cols}
        elif cols != topo.gpus:
            b.error(hloc, f"{name} TABLE: columns differ from the first table's ({' '.join(topo.gpus)})")
            return None
        key = _TABLES.get(name)
        if key is None:
            unmodelled.append(name)  # coherence, atomics, DMA, ... and tables of newer releases
        table = access if key in ("access", None) else getattr(topo, key)
        _, i = read_matrix(b, lines, i, file, f"{name} TABLE", table if key else {}, topo.row)
    if topo is None:
        b.error(
            SourceLocation(file, 1),
            "no amd-smi topology table found; expected the output of `amd-smi topology` (WEIGHT TABLE:, ...)",
        )
        return None
    for (r, c), cell in sorted(access.items(), key=lambda kv: kv[1].loc):
        if r != c and cell.value.upper() == "DISABLED":
            b.note(cell.loc, f"peer-to-peer access from {r} to {c} is DISABLED; topolog does not model P2P access")
    if unmodelled:
        b.note(topo.header, f"tables not modelled by topolog: {', '.join(unmodelled)}")
    for what in ("weight", "hops", "link_type"):
        if not getattr(topo, what):
            b.note(topo.header, f"no {what.replace('_', ' ')} table: what it would say stays unknown")
    return topo
