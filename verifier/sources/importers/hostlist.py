"""Slurm hostlist expressions: `n[001-016]`, `n[1,3,5-7]`, `r[1-2]-n[01-04]`, `a,b[1-2]`."""

from __future__ import annotations

import itertools
import re

from verifier.core.limits import current_limits, exceeded

_MAX_DIGITS = 18  # a host number past 64 bits is not a host number
_RANGE = re.compile(r"^([0-9]+)(?:-([0-9]+))?$")  # ASCII digits: \d takes fullwidth ones too


class HostlistError(ValueError):
    pass


def top_level_items(text: str, brackets: str = "[]") -> list[str]:
    """`text` split at the commas outside `brackets` (an opening and a closing character), unchecked:
    `n[1,3],m` -> ['n[1,3]', 'm']; `gpu:h100:8(S:0,1),x` with "()" -> ['gpu:h100:8(S:0,1)', 'x'].
    """
    opening, closing = brackets[0], brackets[1]
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        depth += (ch == opening) - (ch == closing)
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


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


def _ranges(body: str, whole: str) -> list[tuple[int, int, int]]:
    """A bracket's items as (first, last, zero-pad width), checked but not expanded."""
    out: list[tuple[int, int, int]] = []
    for item in body.split(","):
        m = _RANGE.match(item.strip())
        if m is None:
            raise HostlistError(f"{item!r} in {whole!r}; expected a number or a range such as 001-016")
        lo, hi = m.group(1), m.group(2) or m.group(1)
        if len(lo) > _MAX_DIGITS or len(hi) > _MAX_DIGITS:
            raise HostlistError(f"{item!r} in {whole!r} has a number of more than {_MAX_DIGITS} digits")
        if int(hi) < int(lo):
            raise HostlistError(f"range {item!r} in {whole!r} goes down")
        width = len(lo) if lo.startswith("0") and len(lo) > 1 else 0
        out.append((int(lo), int(hi), width))
    return out


def _bracket(ranges: list[tuple[int, int, int]]) -> list[str]:
    out: list[str] = []
    for lo, hi, width in ranges:
        out.extend(str(n).zfill(width) for n in range(lo, hi + 1))
    return out


def expand(text: str) -> list[str]:
    """Hosts of a hostlist, in order, without duplicates removed (callers report those).

    How many hosts the expression names is counted from its ranges first, so
    `n[1-100000000]` is refused (limit `hostlist_size`) without making a single name.
    """
    limit = current_limits().hostlist_size
    parts: list[list[str | list[tuple[int, int, int]]]] = []
    total = 0
    for part in _split_top(text.strip()):
        if not part:
            raise HostlistError(f"empty name in {text!r}")
        pieces = [p for p in re.split(r"(\[[^\]]*\])", part) if p]
        options = [_ranges(p[1:-1], part) if p.startswith("[") else p for p in pieces]
        names = 1
        for opt in options:
            if not isinstance(opt, str):
                names *= sum(hi - lo + 1 for lo, hi, _w in opt)
        total += names
        if total > limit:
            raise HostlistError(exceeded("hostlist_size", f"{_short(text)} names {total:,} hosts or more"))
        parts.append(options)
    hosts: list[str] = []
    for options in parts:
        expanded = [[o] if isinstance(o, str) else _bracket(o) for o in options]
        hosts.extend("".join(combo) for combo in itertools.product(*expanded))
    return hosts


def _short(text: str) -> str:
    return repr(text) if len(text) <= 200 else repr(text[:200]) + "..."
