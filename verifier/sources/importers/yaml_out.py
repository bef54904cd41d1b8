"""An `Inventory` written back as a YAML inventory in the documented format.

Deterministic (children, links and keys sorted) and loadable again by `load_inventory`:
devices nest inside their node with node-relative names, links between two objects of one
node are written inside it, all others at the top level with full ids. Quantities are written
under `attrs` (integers in their stored unit), bandwidth as a bare number of MB/s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from verifier.sources.inventory.model import Inventory, Link, Obj

API_VERSION = "topolog.dev/v1"
_LINK_NUMBERS = ("generation", "lanes", "count")


def _text(value: str) -> str:
    """Names and labels are patterns in the format: keep braces literal."""
    return value.replace("{", "{{").replace("}", "}}")


def _node_of(inv: Inventory, oid: str) -> str | None:
    seen = 0
    cur: str | None = oid
    while cur is not None and seen < 10_000:
        obj = inv.objects[cur]
        if obj.kind == "node":
            return cur
        cur, seen = obj.parent, seen + 1
    return None


def to_yaml(inv: Inventory, name: str, description: str) -> str:
    kids: dict[str | None, list[Obj]] = {}
    for obj in inv.objects.values():
        kids.setdefault(obj.parent, []).append(obj)
    node_links: dict[str, list[Link]] = {}
    top_links: list[Link] = []
    for link in inv.links.values():
        na, nb = _node_of(inv, link.a), _node_of(inv, link.b)
        if na is not None and na == nb and link.a != na and link.b != na:
            node_links.setdefault(na, []).append(link)
        else:
            top_links.append(link)

    def local(oid: str, scope: str | None) -> str:
        return oid[len(scope) + 1 :] if scope and oid.startswith(scope + "/") else oid

    def entry(obj: Obj, scope: str | None) -> dict[str, Any]:
        out: dict[str, Any] = {"name": _text(local(obj.id, scope)), "kind": obj.kind}
        if obj.model:
            out["model"] = obj.model
        if obj.state:
            out["state"] = obj.state
        if obj.labels:
            out["labels"] = {k: _text(v) for k, v in sorted(obj.labels.items())}
        if obj.quantities:
            out["attrs"] = dict(sorted(obj.quantities.items()))
        # What a node promises and runs are facts rules judge: a written-back inventory keeps them.
        if inv.promises.get(obj.id):
            out["promises"] = list(inv.promises[obj.id])
        if inv.software.get(obj.id):
            out["software"] = {k: _text(v) for k, v in sorted(inv.software[obj.id].items())}
        inner = obj.id if obj.kind == "node" else scope
        children = sorted(kids.get(obj.id, []), key=lambda o: o.id)
        if children:
            out["children"] = [entry(c, inner) for c in children]
        if obj.kind == "node" and obj.id in node_links:
            out["links"] = [link_entry(lk, obj.id) for lk in sorted(node_links[obj.id], key=lambda x: x.id)]
        return out

    def link_entry(lk: Link, scope: str | None) -> dict[str, Any]:
        a, b = local(lk.a, scope), local(lk.b, scope)
        out: dict[str, Any] = {"a": _text(a), "b": _text(b), "kind": lk.kind, "bandwidth": lk.mbps}
        if lk.id != f"{lk.a}<->{lk.b}":
            out["id"] = _text(local(lk.id, scope))
        for key in _LINK_NUMBERS:
            if key in lk.attrs:
                out[key] = lk.attrs[key]
        rest = {k: v for k, v in sorted(lk.attrs.items()) if k not in _LINK_NUMBERS}
        if rest:
            out["attrs"] = rest
        if lk.labels:
            out["labels"] = {k: _text(v) for k, v in sorted(lk.labels.items())}
        if lk.state:
            out["state"] = lk.state
        return out

    doc: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "Inventory",
        "metadata": {"name": name, "description": description},
    }
    tops = sorted(kids.get(None, []), key=lambda o: o.id)
    links = sorted(top_links, key=lambda x: x.id)
    # The description names the input files; a file name may hold a line break, which in a
    # comment would end it and start a line of its own.
    shown = "".join(
        ch if ch.isprintable() else f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"
        for ch in description
    )
    header = (
        f"# Written by `topolog import` ({shown}).\n"
        "# Each object's `source` label says where the tool's output described it.\n"
    )
    # Each top-level entry is written on its own: the emitter builds a node for every value it is
    # given, and the whole document at once held about 10 KB per host of a Slurm tree (200,000
    # hosts: 2.4 GB). A block list under a key is written unindented (`objects:` then `- name:`),
    # exactly as a one-entry list is written alone, so the text is the same.
    parts = [header, _dump(doc)]
    parts.append("objects:\n" if tops else "objects: []\n")
    parts.extend(_dump([entry(o, None)]) for o in tops)
    if links:
        parts.append("links:\n")
        parts.extend(_dump([link_entry(lk, None)]) for lk in links)
    return "".join(parts)


def _dump(value: Any) -> str:
    return yaml.dump(
        _plain(value), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1000, allow_unicode=True
    )


# Words that some YAML reader (1.1 or 1.2, PyYAML or not) takes for a boolean or null.
_NOT_TEXT = frozenset(["y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "<<", "=", ""])


def _needs_quotes(value: str) -> bool:
    """True for text that a reader could take for a number, boolean, null or date.

    PyYAML decides by YAML 1.1 and writes `0123456789` (a serial number) plain, which a 1.1
    reader takes for octal and others for an integer: whatever looks numeric is quoted.
    """
    v = value.strip()
    return v != value or v.lower() in _NOT_TEXT or re.match(r"^[-+.]?(\d|\.\d|inf|nan)", v.lower()) is not None


# libyaml's emitter when PyYAML was built with it: the pure-Python one takes minutes on a
# 100,000-node Slurm tree; both write the same text.
class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    pass


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _needs_quotes(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_str(value)


_Dumper.add_representer(str, _represent_str)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
