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
        if not name or " " in name:
            b.error(current.loc, f"NodeName={name!r} is not one node name; expected `scontrol show nodes` output")
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


def _split(spec: str) -> list[str]:
    """Top-level comma-separated items (commas inside `(S:1,3,5)` kept)."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in spec:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]


def gpu_gres(spec: str) -> list[tuple[str | None, int]]:
    """The `gpu` items of a Gres specification as (type or None, count). Raises GresError."""
    spec = spec.strip()
    if spec in ("", "(null)"):
        return []
    out: list[tuple[str | None, int]] = []
    for item in _split(spec):
        bare = re.sub(r"\(.*\)$", "", item)  # scontrol's socket binding, (S:0-1)
        parts = bare.split(":")
        if parts[0] != "gpu":
            continue
        if len(parts) == 2 and whole(parts[1]) is not None:
            out.append((None, int(parts[1])))
        elif len(parts) == 3 and parts[1] and whole(parts[2]) is not None:
            out.append((parts[1], int(parts[2])))
        elif len(parts) == 2 and parts[1]:
            out.append((parts[1], 1))  # gpu:<type> is one of that type (slurm.conf(5): the count defaults to 1)
        elif len(parts) == 1:
            out.append((None, 1))
        else:
            raise GresError(f"Gres item {item!r}; expected gpu[:type][:count], e.g. gpu:h100:8")
    return out
