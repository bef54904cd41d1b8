"""Slurm hostlist expressions: `n[001-016]`, `n[1,3,5-7]`, `r[1-2]-n[01-04]`, `a,b[1-2]`."""

from __future__ import annotations

import itertools
import re

MAX_HOSTS = 1_000_000
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


class HostlistError(ValueError):
    pass


def _split_top(text: str) -> list[str]:
    """Split on commas that are outside brackets."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "[":
            depth += 1
            if depth > 1:
                raise HostlistError(f"nested '[' in {text!r}")
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise HostlistError(f"']' without '[' in {text!r}")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise HostlistError(f"'[' without ']' in {text!r}")
    parts.append("".join(cur))
    return parts


def _bracket(body: str, whole: str) -> list[str]:
    out: list[str] = []
    for item in body.split(","):
        m = _RANGE.match(item.strip())
        if m is None:
            raise HostlistError(f"{item!r} in {whole!r}; expected a number or a range such as 001-016")
        lo, hi = m.group(1), m.group(2) or m.group(1)
        if int(hi) < int(lo):
            raise HostlistError(f"range {item!r} in {whole!r} goes down")
        width = len(lo) if lo.startswith("0") and len(lo) > 1 else 0
        if int(hi) - int(lo) >= MAX_HOSTS:
            raise HostlistError(f"range {item!r} in {whole!r} has more than {MAX_HOSTS:,} hosts")
        out.extend(str(n).zfill(width) for n in range(int(lo), int(hi) + 1))
    return out


def expand(text: str) -> list[str]:
    """Hosts of a hostlist, in order, without duplicates removed (callers report those)."""
    hosts: list[str] = []
    for part in _split_top(text.strip()):
        if not part:
            raise HostlistError(f"empty name in {text!r}")
        pieces = re.split(r"(\[[^\]]*\])", part)
        options = [_bracket(p[1:-1], part) if p.startswith("[") else [p] for p in pieces if p]
        for combo in itertools.product(*options):
            hosts.append("".join(combo))
            if len(hosts) > MAX_HOSTS:
                raise HostlistError(f"{text!r} names more than {MAX_HOSTS:,} hosts")
    return hosts
