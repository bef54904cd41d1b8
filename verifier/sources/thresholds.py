"""Thresholds the checks compare against: defaults, per-inventory overrides, facts.

The defaults and their documentation live in one file, `rules/thresholds.yaml` (a flat
mapping of key to integer). An inventory overrides them with `topolog.thresholds.yaml`
next to its first file, or the CLI with `--thresholds FILE`. Keys the defaults do not
know are refused (exit 2) with file:line and a did-you-mean, so a typo never silently
leaves a default in force. Rules read the result as facts `threshold(key, value)`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.limits import INT64_MAX, read_limited
from verifier.core.resources import shipped_thresholds_file
from verifier.sources.inventory.yaml_source import YMap, decode_utf8, load_yaml_text

OVERRIDE_NAME = "topolog.thresholds.yaml"


def _read(path: Path) -> YMap | None:
    """The file's mapping, or None for a file with no content (an override that changes nothing)."""
    text = decode_utf8(read_limited(path, str(path), "thresholds"), str(path))
    if not text.strip():
        # Nothing at all: a pipe whose writer wrote nothing, a file cut short or not yet written.
        # It was read as "every default", a silent pass of whatever the writer meant to set;
        # an override that means to change nothing says so with a comment.
        raise TopologError.at(
            SourceLocation(str(path), 1, 1),
            "the thresholds file is empty (nothing but white space: a pipe whose writer wrote nothing, "
            "a file cut short); expected a mapping of threshold names to integers, such as "
            "'nic_pcie_ratio_permille: 1000', or a comment ('# no override') for one that changes nothing",
        )
    if not "".join(ln.split("#", 1)[0] for ln in text.splitlines()).strip():
        return None
    expected = "a mapping of threshold names to integers, such as 'nic_pcie_ratio_permille: 1000'"
    return load_yaml_text(text, str(path), expected)


def _values(data: YMap | None, path: Path, known: Sequence[str] | None) -> dict[str, int]:
    if data is None:
        return {}
    problems: list[Diagnostic] = []
    out: dict[str, int] = {}
    for key, value in data.items():
        loc = data.key_loc(key)
        if known is not None and key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(sorted(known))}"
            problems.append(Diagnostic(loc, f"unknown threshold {key!r}{hint}"))
        elif isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= INT64_MAX:
            problems.append(
                Diagnostic(
                    loc,
                    f"threshold {key!r} is {value!r}; expected a non-negative integer that fits in 64 bits "
                    f"(at most {INT64_MAX}; MB/s, or a ratio in per-mille: 1000 = 1:1)",
                )
            )
        else:
            out[str(key)] = value
    if problems:
        raise TopologError(problems)
    return out


def default_thresholds() -> dict[str, int]:
    """The shipped defaults (rules/thresholds.yaml)."""
    defaults = shipped_thresholds_file()
    return _values(_read(defaults), defaults, None)


def override_file(inventory_paths: Sequence[Path], explicit: Path | None = None) -> Path | None:
    """`explicit` if given, else topolog.thresholds.yaml next to the first inventory, if it exists."""
    if explicit is not None:
        return explicit
    if not inventory_paths:
        return None
    candidate = Path(inventory_paths[0]).parent / OVERRIDE_NAME
    return candidate if candidate.is_file() else None


def load_thresholds(inventory_paths: Sequence[Path] = (), explicit: Path | None = None) -> dict[str, int]:
    """Defaults with the override file's values on top. TopologError (exit 2) on a bad file or key."""
    values = default_thresholds()
    path = override_file(inventory_paths, explicit)
    if path is not None:
        if not path.exists():  # a pipe is read like a file; a folder or a device is refused by _read
            raise TopologError.at(SourceLocation(str(path)), "no such thresholds file")
        values.update(_values(_read(path), path, sorted(values)))
    return values


def threshold_facts(values: dict[str, int]) -> list[tuple[str | int, ...]]:
    """Rows of `threshold(key, value)`, sorted by key."""
    return [(k, values[k]) for k in sorted(values)]
