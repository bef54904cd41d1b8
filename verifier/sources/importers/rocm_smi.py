"""`rocm-smi --showtopo` to an inventory (one node per file).

The output is a series of sections under `=== title ===` banners: `Weight between two GPUs`,
`Hops between two GPUs`, `Link Type between two GPUs` (GPU0.. by GPU0.. tables) and `Numa Nodes`
(`GPU 0 : (Topology) Numa Node: 0`, or `GPU[0]` in older releases). What the tables mean and how
they become objects and links is in `amd_topo`. GPUs keep rocm-smi's index: `GPU2` is `gpu2`.
"""

from __future__ import annotations

import re
from pathlib import Path

from verifier.core.errors import SourceLocation
from verifier.sources.importers import amd_topo
from verifier.sources.importers.amd_topo import AmdTopo, Cell, read_matrix, tokens
from verifier.sources.importers.build import Builder, Imported

_BANNER = re.compile(r"^\s*=+\s*(.*?)\s*=+\s*$")
_GPU = re.compile(r"^GPU(\d{1,9})$")
_NUMA_LINE = re.compile(r"^\s*GPU\s*\[?\s*(\d+)\s*\]?\s*:\s*\(Topology\)\s*Numa (Node|Affinity)\s*:\s*(\S+)\s*$")
_TABLES = {
    "weight between two gpus": "weight",
    "hops between two gpus": "hops",
    "link type between two gpus": "link_type",
}
_IGNORED = ("rocm system management interface", "end of rocm smi log")
MARKERS = ("Weight between two GPUs", "Link Type between two GPUs", "ROCm System Management Interface")
"""Text that only rocm-smi's topology output holds: how other importers recognise such a file."""


def looks_like(text: str) -> bool:
    return any(m in text for m in MARKERS)


def import_rocm_smi(paths: list[Path], node: str | None = None) -> Imported:
    return amd_topo.import_files(paths, node, read)


def read(b: Builder, text: str, file: str) -> AmdTopo | None:
    if text.lstrip()[:1] in ("{", "["):
        b.error(
            SourceLocation(file, 1), "this is JSON; expected the text output of `rocm-smi --showtopo` (without --json)"
        )
        return None
    lines = text.splitlines()
    topo: AmdTopo | None = None
    section = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        loc = SourceLocation(file, i + 1)
        banner = _BANNER.match(line)
        if banner:
            title = banner.group(1).lower()
            section = _TABLES.get(title, "numa" if title == "numa nodes" else "")
            if not section and title not in _IGNORED:
                b.note(loc, f"rocm-smi section {banner.group(1)!r} is not read by topolog")
                section = "skip"
            i += 1
            continue
        if not line.strip():
            i += 1
            continue
        if section in _TABLES.values():
            cols = [t for t, _ in tokens(line)]
            if line[:1] not in (" ", "\t") or not all(_GPU.match(c) for c in cols):
                b.error(loc, f"expected the column header of {section.replace('_', ' ')} (GPU0 GPU1 ...)")
                return None
            if topo is None:
                topo = AmdTopo("rocm-smi", cols, loc)
                topo.number = {c: int(c[3:]) for c in cols}
            elif cols != topo.gpus:
                b.error(loc, f"columns {' '.join(cols)} differ from the first table's ({' '.join(topo.gpus)})")
                return None
            _, i = read_matrix(b, lines, i, file, section.replace("_", " "), getattr(topo, section), topo.row)
            section = "skip"  # a second header in one section is not rocm-smi's
            continue
        if section == "numa":
            m = _NUMA_LINE.match(line)
            if m is None:
                b.error(loc, "expected `GPU <n> : (Topology) Numa Node: <node>` (or Numa Affinity)")
            elif topo is not None:
                gpu = f"GPU{m.group(1)}"
                if gpu not in topo.gpus:
                    b.error(loc, f"{gpu} is not one of the tables' GPUs ({', '.join(topo.gpus)})")
                elif m.group(2) == "Node":
                    topo.numa[gpu] = Cell(m.group(3), SourceLocation(file, i + 1, line.rindex(m.group(3)) + 1))
        elif section != "skip":
            b.note(loc, f"line {line.strip()[:60]!r} is outside the rocm-smi tables and is not read")
        i += 1
    if topo is None:
        b.error(
            SourceLocation(file, 1),
            "no rocm-smi topology table found; expected the output of `rocm-smi --showtopo` "
            "(=== Weight between two GPUs === and a GPU0 GPU1 ... header)",
        )
        return None
    for what in ("weight", "hops", "link_type"):
        if not getattr(topo, what):
            b.note(topo.header, f"no {what.replace('_', ' ')} table: what it would say stays unknown")
    return topo
