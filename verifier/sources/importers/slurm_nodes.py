"""Slurm's node list as slurmctld sees it (`scontrol show nodes`, also `-o`), and Gres specifications.

`scontrol show nodes` prints one record per node: a line `NodeName=<name> Arch=...` at the left
margin, then indented lines of `Key=Value` pairs (a value may hold spaces: `OS=Linux 5.15.0 #1 SMP`,
`Reason=Not responding [slurm@...]`); `-o` prints each record on one line. Read: `Gres` (the
generic resources Slurm schedules, e.g. `gpu:nvidia-rtx-3090:1`, `gpu:a100:8(S:0-1)`, `(null)`),
`State`, `Partitions` and `Reason`. Everything else (CPUs, memory, boot times) is not topology.

A Gres specification (slurm.conf(5) `Gres=`, or scontrol's, with its `(S:...)` socket binding) is
`name[:type]:count[,...]`; only `gpu` items are counted. `(null)` is no Gres at all: zero GPUs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from verifier.core.errors import SourceLocation
from verifier.sources.importers.build import Builder, whole
from verifier.sources.importers.hostlist import top_level_items
from verifier.sources.inventory.validate import name_problem

_KEY = re.compile(r"(?:(?<=\s)|^)([A-Za-z][A-Za-z0-9_]*)=")
_WORD_KEY = re.compile(r"([A-Za-z][A-Za-z0-9_]*)=")
_MARKERS = ("cpualloc", "cputot", "cpuefctv", "cfgtres")
"""Keys scontrol prints and slurm.conf never holds: how its output is told from slurm.conf."""


class GresError(ValueError):
    """A Gres specification that cannot be read; the message says what was expected."""


@dataclass
class NodeRecord:
    loc: SourceLocation
    fields: dict[str, str] = field(default_factory=dict)
    """Lower-cased key -> value, as printed."""


def looks_like(text: str) -> bool:
    """`scontrol show nodes` output: a `NodeName=` record holding keys only slurmctld prints."""
    starts = re.search(r"(?m)^NodeName=", text) is not None
    keys = {m.group(1).lower() for m in _KEY.finditer(text[:20000])}
    return starts and bool(keys & set(_MARKERS))


def _pairs(text: str) -> dict[str, str]:
    """Key -> value; a word that does not start `Key=` continues the value before it (`OS=Linux 5.15 #1 SMP`)."""
    out: dict[str, str] = {}
    key: str | None = None
    words: list[str] = []
    for word in text.split():
        m = _WORD_KEY.match(word)
        if m is None:
            words.append(word)
            continue
        if key is not None:
            out.setdefault(key, " ".join(words))
        key, words = m.group(1).lower(), [word[m.end() :]] if word[m.end() :] else []
    if key is not None:
        out.setdefault(key, " ".join(words))
    return out


def read_scontrol_nodes(b: Builder, text: str, file: str) -> dict[str, NodeRecord]:
    """Every node record, by name. A second record for one name is an error (scontrol prints each once)."""
    records: dict[str, NodeRecord] = {}
    current: NodeRecord | None = None
    chunks: list[str] = []

    def close() -> None:
        if current is None:
            return
        current.fields = _pairs(" ".join(chunks))
        name = current.fields.get("nodename", "")
        problem = name_problem(name) if name and " " not in name else "is not one node name"
        if problem is None and "/" in name:
            problem = "holds '/', which separates the levels of an id"
        if problem is not None:
            b.error(current.loc, f"NodeName={name!r} {problem}; expected `scontrol show nodes` output")
        elif name in records:
            b.error(current.loc, f"node {name!r} is listed twice (first on line {records[name].loc.line})")
        else:
            records[name] = current

    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        if raw.startswith("NodeName="):
            close()
            current, chunks = NodeRecord(SourceLocation(file, n)), [raw]
        elif current is not None and raw[:1].isspace():
            chunks.append(raw)
        else:
            b.error(
                SourceLocation(file, n),
                f"{raw.strip()[:60]!r} is outside a node record; expected `scontrol show nodes` output "
                "(records starting with NodeName= at the line's start, indented Key=Value lines below)",
            )
    close()
    return records


def gpu_gres(spec: str) -> list[tuple[str | None, int]]:
    """The `gpu` items of a Gres specification as (type or None, count). Raises GresError."""
    spec = spec.strip()
    if spec in ("", "(null)"):
        return []
    out: list[tuple[str | None, int]] = []
    for item in (i.strip() for i in top_level_items(spec, "()") if i.strip()):
        bare = re.sub(r"\(.*\)$", "", item)  # scontrol's socket binding, (S:0-1)
        parts = bare.split(":")
        if parts[0] != "gpu":
            continue
        # gpu, gpu:<count>, gpu:<type> (one of that type: slurm.conf(5)'s count defaults to 1), gpu:<type>:<count>
        kind = parts[1] if len(parts) == 3 or (len(parts) == 2 and not parts[1].isdigit()) else None
        count = parts[-1] if len(parts) == 3 or (len(parts) == 2 and parts[1].isdigit()) else "1"
        if len(parts) > 3 or kind == "" or whole(count) is None:
            raise GresError(f"Gres item {item!r}; expected gpu[:type][:count] with a whole count, e.g. gpu:h100:8")
        out.append((kind, int(count)))
    return out
