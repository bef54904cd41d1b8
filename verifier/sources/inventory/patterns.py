"""Name patterns such as `dgx{i:02d}` or `{rack}-tray{i}`, and `foreach` ranges.

Deliberately tiny: a field is `{name}` or `{name:spec}` where spec is a zero-pad width
and an optional d/x/X, e.g. `02d`. No attribute access, no indexing, no expressions and
certainly no eval: a pattern is data. `{{` and `}}` are literal braces.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from verifier.core.frozen import Frozen

_TOKEN = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)(?::([^{}]*))?\}|[{}]")
_SPEC = re.compile(r"^(0?[1-9][0-9]?)?[dxX]?$|^$")
# At most 40 digits an end: a longer one is refused as unreadable (Python will not read a number
# of more than 4,300 digits).
_RANGE = re.compile(r"^\s*(-?[0-9]{1,40})\s*\.\.\s*(-?[0-9]{1,40})\s*$")

MAX_FOREACH = 10_000_000
"""Combinations one `foreach` may produce (far above any real fleet; stops typos like 0..1e9)."""


class PatternError(ValueError):
    pass


class MissingVariable(KeyError):
    """A field names a variable that is not defined where the pattern is used."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


@dataclass(frozen=True, slots=True, repr=False, eq=False)
class Pattern(Frozen):
    text: str
    parts: tuple[str | tuple[str, str], ...]
    fmt: str | None = field(default=None, init=False, compare=False, repr=False)
    """The pattern as a `str.format` template (literal braces doubled), None for a constant.

    A fleet renders hundreds of thousands of endpoints: `format_map` does in C what the loop
    over `parts` does, with the same result (`format(v, "")` is `str(v)` for words and numbers).
    """
    numeric: tuple[str, ...] = field(default=(), init=False, compare=False, repr=False)
    """Variables with a format spec, which must be numbers."""

    def __post_init__(self) -> None:
        if self.is_const:
            return
        fmt = "".join(
            p.replace("{", "{{").replace("}", "}}")
            if isinstance(p, str)
            else f"{{{p[0]}:{p[1]}}}"
            if p[1]
            else f"{{{p[0]}}}"
            for p in self.parts
        )
        object.__setattr__(self, "fmt", fmt)
        object.__setattr__(self, "numeric", tuple(p[0] for p in self.parts if isinstance(p, tuple) and p[1]))

    @property
    def is_const(self) -> bool:
        return not any(isinstance(p, tuple) for p in self.parts)

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(p[0] for p in self.parts if isinstance(p, tuple))

    def render(self, ns: Mapping[str, int | str]) -> str:
        fmt = self.fmt
        if fmt is None:
            first = self.parts[0]
            if len(self.parts) == 1 and isinstance(first, str):
                return first
            return self._render_parts(ns)
        for name in self.numeric:
            if isinstance(ns.get(name), str):
                return self._render_parts(ns)  # raises the error the first bad field gives
        try:
            return fmt.format_map(ns)
        except KeyError:
            return self._render_parts(ns)  # raises MissingVariable for the first missing field

    def _render_parts(self, ns: Mapping[str, int | str]) -> str:
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            name, spec = part
            try:
                value = ns[name]
            except KeyError:
                raise MissingVariable(name) from None
            if spec and isinstance(value, str):
                raise PatternError(f"{{{name}:{spec}}} formats a number, but {name} is the text {value!r}")
            out.append(format(value, spec) if spec else str(value))
        return "".join(out)


def compile_pattern(text: str) -> Pattern:
    parts: list[str | tuple[str, str]] = []
    pos = 0
    literal: list[str] = []
    for m in _TOKEN.finditer(text):
        literal.append(text[pos : m.start()])
        tok = m.group(0)
        pos = m.end()
        if tok in ("{{", "}}"):
            literal.append(tok[0])
        elif tok in ("{", "}"):
            raise PatternError(f"unmatched {tok!r} in {text!r}; write {tok * 2} for a literal brace")
        else:
            name, spec = m.group(1), m.group(2) or ""
            if not _SPEC.match(spec):
                raise PatternError(
                    f"format {spec!r} in {{{name}:{spec}}} is not supported; expected a zero-padded width such as 02d"
                )
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append((name, spec))
    literal.append(text[pos:])
    tail = "".join(literal)
    if tail or not parts:
        parts.append(tail)
    return Pattern(text, tuple(parts))


def foreach_values(raw: object) -> list[int | str]:
    """`0..7` (inclusive), an integer n (0..n-1) or a list of words/numbers."""
    if isinstance(raw, bool):
        raise PatternError(f"expected a range such as '0..7', a count or a list, got {raw!r}")
    if isinstance(raw, int):
        # A count of 0 (or an empty list, below) makes no link at all: the line stays in the file and
        # the links it is read as drawing are silently not there, as with an empty range or count 0.
        if raw < 1 or raw > MAX_FOREACH:
            raise PatternError(f"count {raw} is out of range 1..{MAX_FOREACH}; expected at least one value")
        return list(range(raw))
    if isinstance(raw, str):
        m = _RANGE.match(raw)
        if m is None:
            raise PatternError(f"cannot read range {raw!r}; expected 'first..last' such as '0..7'")
        lo, hi = int(m.group(1)), int(m.group(2))
        if hi < lo:
            raise PatternError(f"range {raw!r} is empty; expected first <= last")
        if hi - lo + 1 > MAX_FOREACH:
            raise PatternError(f"range {raw!r} has more than {MAX_FOREACH:,} values")
        return list(range(lo, hi + 1))
    if isinstance(raw, list):
        if not raw:
            raise PatternError("the list is empty; expected at least one value (it would make no link)")
        out: list[int | str] = []
        for v in raw:
            if isinstance(v, bool) or not isinstance(v, int | str):
                raise PatternError(f"foreach values must be numbers or words, got {v!r}")
            out.append(v)
        return out
    raise PatternError(f"expected a range such as '0..7', a count or a list, got {raw!r}")
