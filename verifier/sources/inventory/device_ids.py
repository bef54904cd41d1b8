"""Catalogue models from the identities tools write: PCI vendor:device ids and NVML product names.

The table is package data (`device_ids.yaml`, each id with its PCI ID Repository name). An id or
name that is not in it gives None: the device's model stays unknown, never guessed from a
similar one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from verifier.core.limits import Limits, use_limits
from verifier.core.resources import package_file
from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.validate import Problems
from verifier.sources.inventory.yaml_source import load_yaml_text

BUILTIN_FILE = "<builtin>/device_ids.yaml"
_PCI = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{4}$")


@dataclass(frozen=True)
class DeviceIds:
    pci: dict[str, str]
    names: dict[str, str]
    emulated_bridges: frozenset[str]
    display_only: frozenset[str]


@cache
def device_ids() -> DeviceIds:
    """The built-in table, checked: every id well formed, every model in the built-in catalogue.

    Read under the default limits: they bound the user's inputs, not what topolog ships.
    """
    with use_limits(Limits()):
        return _parse_device_ids()


def _parse_device_ids() -> DeviceIds:
    text = package_file("verifier.sources.inventory", "device_ids.yaml").read_text(encoding="utf-8")
    doc = load_yaml_text(text, BUILTIN_FILE)
    problems = Problems()
    known = {m.name for m in builtin_models()}
    tables: dict[str, dict[str, str]] = {"pci": {}, "names": {}}
    for key, table in tables.items():
        section = problems.mapping(doc, key, BUILTIN_FILE)
        if section is None:
            continue
        for ident in section:
            model = section[ident]
            where = section.key_loc(ident)
            if not isinstance(model, str) or model not in known:
                problems.add(where, f"{key} {ident!r}: {model!r} is not a model of the built-in catalogue")
                continue
            ident_s = str(ident).strip().lower()
            if key == "pci" and not _PCI.match(ident_s):
                problems.add(where, f"pci id {ident!r}; expected vendor:device in hex, e.g. 10de:2330")
                continue
            table[ident_s if key == "pci" else " ".join(ident_s.split())] = model
    sets: dict[str, set[str]] = {"emulated_bridges": set(), "display_only": set()}
    for key, found in sets.items():
        section = problems.mapping(doc, key, BUILTIN_FILE)
        for ident in section or ():
            ident_s = str(ident).strip().lower()
            if not _PCI.match(ident_s):
                problems.add(
                    section.key_loc(ident) if section else doc.loc, f"{key} id {ident!r}; expected vendor:device"
                )
            found.add(ident_s)
    problems.raise_if_any()
    return DeviceIds(
        tables["pci"], tables["names"], frozenset(sets["emulated_bridges"]), frozenset(sets["display_only"])
    )


def model_for_pci(vendor: str | None, device: str | None) -> str | None:
    """The catalogue model of PCI `vendor`:`device` ("0x10de"/"10de" forms), or None when not known."""
    if not vendor or not device:
        return None
    v, d = vendor.lower().removeprefix("0x"), device.lower().removeprefix("0x")
    return device_ids().pci.get(f"{v}:{d}")


def model_for_name(name: str | None) -> str | None:
    """The catalogue model of a product name as NVML reports it, or None when not known."""
    if not name:
        return None
    return device_ids().names.get(" ".join(name.lower().split()))


def is_emulated_bridge(vendor: str | None, device: str | None) -> bool:
    """True for a PCI bridge id that hypervisors emulate (see device_ids.yaml, emulated_bridges)."""
    if not vendor or not device:
        return False
    v, d = vendor.lower().removeprefix("0x"), device.lower().removeprefix("0x")
    return f"{v}:{d}" in device_ids().emulated_bridges


def is_display_only(vendor: str | None, device: str | None) -> bool:
    """True for a display controller id known to be a board or BMC display chip (device_ids.yaml)."""
    if not vendor or not device:
        return False
    v, d = vendor.lower().removeprefix("0x"), device.lower().removeprefix("0x")
    return f"{v}:{d}" in device_ids().display_only
