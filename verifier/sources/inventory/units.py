"""Quantities as written by people (`64 GB/s`, `400 Gb/s`, `900GBps`, `80 GiB`, `700 W`,
`$2.49/h`) to integers in the one fixed unit each kind of figure is stored in.

Fixed units (all decimal, so that 1 GB/s = 1000 MB/s and 400 Gb/s = 50000 MB/s):
bandwidth MB/s, capacity MB (caches: KB), compute GFLOPS, power W, latency ns,
price millicents (per hour). Exact decimal arithmetic: `3.35 TB/s` is 3350000, not
3349999 from a float. A bare number is taken to be in the fixed unit already. A comma in
a number (`3,5 TB/s`, `1,000 GB/s`) is refused, never read either way.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from typing import Final

from verifier.core.limits import INT64_MAX
from verifier.core.numerals import underscore_problem

# ASCII digits only: Python's \d also takes fullwidth (U+FF10...) and Arabic-Indic digits, a
# figure that reads differently in every tool after this one.
_NUMBER = r"(?P<num>[+-]?(?:[0-9][0-9_]*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"

# A digit, a comma, a digit: a decimal comma (`3,5 TB/s`) or a thousands separator
# (`1,000 GB/s`). Neither is read: which one was meant cannot be told from the text
# (`1,000` is a thousand in one locale and one in another), and a wrong guess is a
# silently wrong figure.
_COMMA_NUMBER = re.compile(r"[0-9.,_]*[0-9],[0-9][0-9.,_]*")
# Every match of _COMMA_NUMBER holds this. Searched alone, it finds where the match lies in one pass:
# _COMMA_NUMBER searched from each start of a long run of digits takes time quadratic in its length
# (5,000 digits: a third of a second a figure, seconds for an inventory).
_COMMA_BETWEEN_DIGITS = re.compile(r"[0-9],[0-9]")
_IN_A_NUMBER = frozenset("0123456789.,_")

# Multipliers to bytes (or bits) per unit, decimal and binary prefixes.
_PREFIX: Final[dict[str, Fraction]] = {
    "": Fraction(1),
    "k": Fraction(10**3),
    "K": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
}

_SIZE_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<prefix>[kKMGTP]i?)?(?P<unit>B|b|bytes?|bits?)?\s*$")
_RATE_RE = re.compile(
    rf"^\s*{_NUMBER}\s*(?P<prefix>[kKMGTP]i?)?(?P<unit>B|b|bit|byte)"
    r"(?:\s*/\s*s(?:ec)?|ps)\s*$"
)
_FLOPS_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<prefix>[kKMGTP])?(?:FLOPS|flops|FLOP/s|OPS|ops)\s*$")
_POWER_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<prefix>[kKM])?W\s*$")
_TIME_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<unit>ns|us|µs|ms|s)\s*$")
_PRICE_RE = re.compile(rf"^\s*(?P<dollar>\$)?\s*{_NUMBER}\s*(?P<cur>USD)?\s*(?:/\s*(?:h|hr|hour)|per\s+hour)?\s*$")
_BARE_RE = re.compile(rf"^\s*{_NUMBER}\s*$")
_FREQ_RE = re.compile(rf"^\s*{_NUMBER}\s*(?P<prefix>[kKMGT])?Hz\s*$")


class UnitError(ValueError):
    """A figure that does not parse; the message says what was expected."""


def _refuse_comma(raw: object, what: str, *, whole: bool = False) -> None:
    problem = comma_problem(raw, what, whole=whole)
    if problem is not None:
        raise UnitError(problem)


def comma_problem(raw: object, what: str, *, whole: bool = False) -> str | None:
    """What is wrong with a figure whose number holds a comma, and how to write it; else None.

    `whole`: the figure is a count, so a comma there can only be a thousands separator
    and a decimal-point reading is not offered.
    """
    if not isinstance(raw, str):
        return None
    first = _COMMA_BETWEEN_DIGITS.search(raw)
    if first is None:
        return None
    # The leftmost match starts where the run of number characters around the first comma between
    # digits starts (no earlier run holds one), and is found from there in one pass.
    start = first.start()
    while start > 0 and raw[start - 1] in _IN_A_NUMBER:
        start -= 1
    m = _COMMA_NUMBER.search(raw, start)
    if m is None:  # not reached: the run from `start` holds a comma between digits
        return None
    groups = m.group(0).split(",")

    def written(replacement: str) -> str:
        return f"{raw[: m.start()]}{replacement}{raw[m.end() :]}".strip()

    thousands = all(len(g) == 3 and g.isdigit() for g in groups[1:]) and groups[0].isdigit()
    if len(groups) == 2 and not thousands and "." not in m.group(0) and not whole:
        problem = "uses a decimal comma, which is not accepted"
        hint = f"write {written('.'.join(groups))!r} with a decimal point"
    elif thousands:
        problem = "has a comma in its number, which is not accepted"
        if not whole:
            problem += " (a thousands separator or a decimal comma? it cannot be told)"
        hint = f"write {written(''.join(groups))!r} without separators"
        if len(groups) == 2 and not whole:
            hint += f", or {written('.'.join(groups))!r} if the comma was a decimal point"
    else:
        problem = "has a comma in its number, which is not accepted"
        hint = (
            "expected a whole number without separators, such as '1000'"
            if whole
            else "expected a number with at most one decimal point and no separators, such as '3.5' or '1000'"
        )
    return f"{what} {raw!r} {problem}; {hint}"


_MAX_EXPONENT = 40
"""Decimal exponents beyond this are refused before the number is built: `1e99999999`
would otherwise make a hundred-million-digit integer (minutes of CPU), and nothing a
stored unit holds comes near 10^40."""


def _number(text: str) -> Fraction:
    if (problem := underscore_problem(text)) is not None:
        raise UnitError(problem)
    cleaned = text.replace("_", "")
    try:
        d = Decimal(cleaned)
    except (InvalidOperation, ValueError):
        raise UnitError(f"{text!r} is not a number") from None
    if not d.is_finite():
        raise UnitError(f"{text!r} is not a finite number")
    if d and abs(d.adjusted()) > _MAX_EXPONENT:
        raise UnitError(f"{text!r} is out of range; expected a figure between 1e-{_MAX_EXPONENT} and 1e{_MAX_EXPONENT}")
    return Fraction(d)


def _fits(value: int, raw: object, what: str) -> int:
    """Engines store 64-bit integers: a figure beyond that is refused, never wrapped or rounded."""
    if value > INT64_MAX:
        raise UnitError(f"{what} {raw!r} is {value} in its stored unit, which does not fit in 64 bits")
    return value


def _to_int(value: Fraction, raw: object, what: str, allow_zero: bool) -> int:
    """Round to the nearest integer; refuse a non-zero figure that rounds to zero."""
    result = round(value)
    if value < 0:
        raise UnitError(f"{what} {raw!r} is negative; expected a positive figure")
    if result == 0 and (value != 0 or not allow_zero):
        if value == 0:
            raise UnitError(f"{what} {raw!r} is zero; expected a positive figure")
        raise UnitError(f"{what} {raw!r} is too small to express in the stored unit")
    return _fits(int(result), raw, what)


def _bare(raw: object) -> Fraction | None:
    """A YAML int (or a numeric string with no unit) is already in the fixed unit."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        return _number(repr(raw))
    # The YAML loader keeps decimals as text (so `12.10` stays a version, not 12.1).
    if isinstance(raw, str) and _BARE_RE.match(raw):
        return _number(raw.strip())
    return None


def _read(
    raw: object, pattern: re.Pattern[str], what: str, expected: str, value_of: Callable[[re.Match[str]], Fraction]
) -> Fraction:
    """A bare number as it is, or text matched by `pattern` and converted by `value_of`."""
    _refuse_comma(raw, what)
    bare = _bare(raw)
    if bare is not None:
        return bare
    if not isinstance(raw, str):
        raise UnitError(f"expected {expected}, got {raw!r}")
    m = pattern.match(raw)
    if m is None:
        raise UnitError(f"cannot read {what} {raw!r}; expected {expected}")
    return value_of(m)


def _scaled(m: re.Match[str], divisor: int = 1) -> Fraction:
    return _number(m.group("num")) * _PREFIX[m.group("prefix") or ""] / divisor


def bandwidth_mbps(raw: object, *, allow_zero: bool = False) -> int:
    """`64 GB/s` -> 64000, `400 Gb/s` -> 50000, `900GBps` -> 900000, `3.35 TB/s` -> 3350000.

    Capital B is bytes, lower-case b is bits. A bare number means MB/s.
    """

    def mbps(m: re.Match[str]) -> Fraction:
        bits = m.group("unit") in ("b", "bit")
        return _scaled(m, 8 * 10**6 if bits else 10**6)

    expected = "a bandwidth such as '64 GB/s', '400 Gb/s', '900GBps' or a number of MB/s"
    return _to_int(_read(raw, _RATE_RE, "bandwidth", expected, mbps), raw, "bandwidth", allow_zero)


def _size(raw: object, unit_bytes: int, unit_name: str, allow_zero: bool) -> int:
    expected = f"a size such as '80 GB', '80GiB', '512 KiB' or a number of {unit_name}"
    _refuse_comma(raw, "size")
    bare = _bare(raw)
    if bare is None:
        if not isinstance(raw, str):
            raise UnitError(f"expected {expected}, got {raw!r}")
        m = _SIZE_RE.match(raw)
        if m is None or (m.group("unit") is None and m.group("prefix") is not None):
            raise UnitError(f"cannot read size {raw!r}; expected {expected}")
        unit = m.group("unit") or ""
        if unit.startswith("b") and unit != "byte" and unit != "bytes":
            raise UnitError(f"size {raw!r} is in bits; expected bytes such as '80 GB'")
        if m.group("unit") is None:
            bare = _number(m.group("num"))
        else:
            bare = _number(m.group("num")) * _PREFIX[m.group("prefix") or ""] / unit_bytes
    return _to_int(bare, raw, "size", allow_zero)


def size_mb(raw: object, *, allow_zero: bool = False) -> int:
    """`80 GB` -> 80000, `80GiB` -> 85899 (MB = 10^6 bytes). A bare number means MB."""
    return _size(raw, 10**6, "MB", allow_zero)


def size_kb(raw: object, *, allow_zero: bool = False) -> int:
    """`64 KiB` -> 66, `2 MB` -> 2000 (KB = 10^3 bytes). For caches. A bare number means KB."""
    return _size(raw, 10**3, "KB", allow_zero)


def flops_gflops(raw: object, *, allow_zero: bool = False) -> int:
    """`34 TFLOPS` -> 34000, `989.4 TFLOPS` -> 989400. A bare number means GFLOPS."""
    expected = "a throughput such as '34 TFLOPS' or a number of GFLOPS"
    value = _read(raw, _FLOPS_RE, "throughput", expected, lambda m: _scaled(m, 10**9))
    return _to_int(value, raw, "throughput", allow_zero)


def power_w(raw: object, *, allow_zero: bool = False) -> int:
    """`700 W` -> 700, `10.2 kW` -> 10200. A bare number means W."""
    value = _read(raw, _POWER_RE, "power", "a power such as '700 W' or '10.2 kW'", _scaled)
    return _to_int(value, raw, "power", allow_zero)


_TIME_SCALE: Final[dict[str, int]] = {"ns": 1, "us": 10**3, "µs": 10**3, "ms": 10**6, "s": 10**9}


def latency_ns(raw: object, *, allow_zero: bool = True) -> int:
    """`1.5 us` -> 1500, `90 ns` -> 90. A bare number means ns."""
    value = _read(
        raw,
        _TIME_RE,
        "latency",
        "a latency such as '90 ns' or '1.5 us'",
        lambda m: _number(m.group("num")) * _TIME_SCALE[m.group("unit")],
    )
    return _to_int(value, raw, "latency", allow_zero)


def frequency_mhz(raw: object) -> int:
    """`2.0 GHz` -> 2000. A bare number means MHz."""
    value = _read(raw, _FREQ_RE, "frequency", "a frequency such as '2.0 GHz'", lambda m: _scaled(m, 10**6))
    return _to_int(value, raw, "frequency", False)


def price_millicents(raw: object, *, allow_zero: bool = True) -> int:
    """`$2.49/h`, `2.49 USD`, `$2.49 per hour` -> 249000 (millicents per hour, USD only).

    A bare number means dollars: prices are written in dollars far more often than in
    millicents, so a plain `2.49` is read the way a person means it.
    """
    expected = "a price in US dollars per hour such as '$2.49/h' or '2.49 USD'"
    dollars = _read(raw, _PRICE_RE, "price", expected, lambda m: _number(m.group("num")))
    return _to_int(dollars * 100_000, raw, "price", allow_zero)


def integer(raw: object, what: str, *, minimum: int = 0) -> int:
    """A plain count (links, lanes, generation)."""
    _refuse_comma(raw, what, whole=True)
    if isinstance(raw, bool) or not isinstance(raw, int):
        if isinstance(raw, str) and re.fullmatch(r"\s*[+-]?[0-9]{1,30}\s*", raw):
            raw = int(raw)
        else:
            raise UnitError(f"{what} {raw!r} is not a whole number")
    assert isinstance(raw, int)
    if raw < minimum:
        raise UnitError(f"{what} {raw} is below {minimum}")
    if raw > INT64_MAX:
        raise UnitError(f"{what} {raw} does not fit in 64 bits; expected at most {INT64_MAX}")
    return raw
