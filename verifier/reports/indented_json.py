"""`json.dumps(obj, indent=N, sort_keys=..., ensure_ascii=...)`, byte for byte, at the speed of the C encoder.

CPython encodes with its C accelerator only when `indent` is None; any indent falls back to
the pure-Python encoder, about 2 us per value: 9 s for the JSON audit of 131,072 GPUs. The output
of `indent=N` is the compact form with `",\\n" + N * level spaces` between items, so a
container whose items are all scalars is one C call with those separators, wrapped in the
newline and indentation `indent=N` puts after its opening and before its closing bracket.
Only containers that hold containers are walked here, in Python.

A report often holds the same object many times (an audit shares one cell dict among every
principal of a class): a flat container is encoded once per indentation level and reused.
That is safe because every object stays referenced by `obj` for the whole call, so no id is
reused, and nothing mutates it meanwhile. (Unlike json, a circular structure is not detected:
it ends in RecursionError.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

# What json writes a str as (C), with ensure_ascii and without.
_STRING: dict[bool, Callable[[str], str]] = {
    True: json.encoder.encode_basestring_ascii,
    False: json.encoder.encode_basestring,
}

# Exactly the types both encoders write as scalars (subclasses take the general path, which
# encodes them one by one with the same rules).
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None)})


def dumps(obj: object, *, indent: int = 2, sort_keys: bool = False, ensure_ascii: bool = True) -> str:
    """The same text as `json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)`
    (other options at their defaults).
    """
    return _Writer(indent, sort_keys, ensure_ascii).write(obj)


class _Writer:
    def __init__(self, indent: int, sort_keys: bool, ensure_ascii: bool = True) -> None:
        self._pad = " " * indent
        self._sort_keys = sort_keys
        self._ascii = ensure_ascii
        self._string = _STRING[ensure_ascii]
        self._scalar: Callable[[object], str] = json.JSONEncoder(sort_keys=sort_keys, ensure_ascii=ensure_ascii).encode
        self._flat_at: dict[int, Callable[[object], str]] = {}  # level -> C encoder with that level's separator
        self._flat_done: dict[tuple[int, int], str] = {}  # (id, level) -> encoded flat container

    def write(self, obj: object) -> str:
        out: list[str] = []
        self._emit(obj, 0, out)
        return "".join(out)

    def _emit(self, obj: object, level: int, out: list[str]) -> None:
        if isinstance(obj, (list, tuple)):
            if not obj:
                out.append("[]")
            elif not self._flat(obj, obj, level, out):
                self._emit_list(obj, level, out)
        elif isinstance(obj, dict):
            if not obj:
                out.append("{}")
            elif not self._flat(obj, obj.values(), level, out):
                self._emit_dict(obj, level, out)
        else:
            # A scalar, or a TypeError with json's own message.
            out.append(self._scalar(obj))

    def _flat(self, obj: object, values: Iterable[object], level: int, out: list[str]) -> bool:
        """Appends `obj` in one C call when none of its items is a container; False otherwise."""
        key = (id(obj), level)
        done = self._flat_done.get(key)
        if done is None:
            if not {type(v) for v in values} <= _SCALARS:
                return False
            encode = self._flat_at.get(level)
            if encode is None:
                inner = "\n" + self._pad * (level + 1)
                encode = self._flat_at[level] = json.JSONEncoder(
                    sort_keys=self._sort_keys, ensure_ascii=self._ascii, separators=("," + inner, ": ")
                ).encode
            compact = encode(obj)  # "[a,\n    b]": only the brackets lack their newline and indent
            done = self._flat_done[key] = (
                f"{compact[0]}\n{self._pad * (level + 1)}{compact[1:-1]}\n{self._pad * level}{compact[-1]}"
            )
        out.append(done)
        return True

    def _emit_list(self, items: list[object] | tuple[object, ...], level: int, out: list[str]) -> None:
        inner = "\n" + self._pad * (level + 1)
        out.append("[" + inner)
        for i, item in enumerate(items):
            if i:
                out.append("," + inner)
            self._emit(item, level + 1, out)
        out.append("\n" + self._pad * level + "]")

    def _emit_dict(self, obj: dict[object, object], level: int, out: list[str]) -> None:
        inner = "\n" + self._pad * (level + 1)
        out.append("{" + inner)
        # Sorted on the keys as given, before they become strings, as both encoders do.
        items = sorted(obj.items()) if self._sort_keys else obj.items()
        string = self._string
        for i, (k, v) in enumerate(items):
            if i:
                out.append("," + inner)
            out.append(string(k if type(k) is str else _key(k)) + ": ")
            # Plain strings and ints directly: a report's rows are mostly those.
            if type(v) is str:
                out.append(string(v))
            elif type(v) is int:
                out.append(int.__repr__(v))
            else:
                self._emit(v, level + 1, out)
        out.append("\n" + self._pad * level + "}")


def _key(k: object) -> str:
    """A dict key as json writes it: strings as they are; floats, ints, booleans and None as their JSON."""
    if isinstance(k, str):
        return k
    if isinstance(k, (int, float)) or k is None:  # bool is an int: "true" / "false"
        return json.dumps(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")
