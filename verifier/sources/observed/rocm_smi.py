"""`rocm-smi --json` (rocm-smi -a --json, or --showbus --showuse ... --json) of one host.

One object per GPU keyed `cardN` (N is rocm-smi's GPU index), and a `system` object; every value
is a string. What is read:

- `PCI Bus` (`0000:83:00.0`), `Card series` (the model), `Serial Number`, `GPU use (%)`;
- `pcie clock level`: `0 (16.0GT/s x16)`, the PCIe DPM level the link runs at now with its rate and
  width: the generation and width now. rocm-smi also lists the PCIe levels under bare numbers
  (`"0": "16.0GT/s x16 *"`), but other clocks' levels reuse the same keys in one object, so a level
  may be overwritten: the link's maximum is not read from them (None). The width now is judged
  against the declared link (OBS101).

`N/A` is unknown. rocm-smi prints no host name and no time: the host is the folder the file lies in.
JSON carries no line numbers: each GPU's observation points at the line of its `cardN` key.
"""

from __future__ import annotations

import re
from typing import Any

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.sources.observed.amd_smi import GEN_BY_GTS, whole_listing
from verifier.sources.observed.model import (
    GpuObservation,
    Observations,
    ObservedFile,
    exact_number,
    host_of_file,
    normalise_pci_bus_id,
)
from verifier.sources.observed.tool_json import tool_json

FORMAT = "rocm-smi"
_CARD = re.compile(r"^card(\d{1,9})$")
_LEVEL = re.compile(r"^\s*\d+\s*\(\s*([0-9.]+)\s*GT/s\s*x(1|2|4|8|12|16|32)\s*\)\s*$")
_USE = re.compile(r"^\s*(\d{1,3})\s*$")


def looks_like(text: str) -> bool:
    """A JSON object whose keys are rocm-smi's `card0`... with its own field names."""
    head = text[:20_000].lstrip()
    return (
        head.startswith("{")
        and '"card' in head
        and any(
            f'"{k}"' in head
            for k in ("PCI Bus", "Card series", "Card Series", "GPU ID", "Device ID", "pcie clock level")
        )
    )


def _text(raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw.strip() or raw.strip().upper() == "N/A":
        return None
    return raw.strip()


def read(text: str, filename: str, host: str | None) -> Observations:
    """Every `cardN` of one host's rocm-smi --json output."""
    host = host_of_file(host, filename, "rocm-smi")
    doc = tool_json(
        text,
        filename,
        "expected rocm-smi --json output",
        "the file looks truncated or is not rocm-smi --json output",
    )
    if not isinstance(doc, dict):
        raise TopologError.at(SourceLocation(filename, 1), "not a JSON object of cardN keys; expected rocm-smi --json")
    problems: list[Diagnostic] = []
    gpus: list[GpuObservation] = []
    for key, card in doc.items():
        m = _CARD.match(str(key))
        if m is None:
            continue  # "system": driver version and topology, not a GPU
        found = re.search(rf'"{re.escape(str(key))}"\s*:', text)
        loc = SourceLocation(filename, text.count("\n", 0, found.start()) + 1 if found else 1)
        if not isinstance(card, dict):
            problems.append(Diagnostic(loc, f"{key} is not an object; expected rocm-smi's fields of that GPU"))
            continue
        index = int(m.group(1))
        bus = _text(card.get("PCI Bus"))
        bus_id = normalise_pci_bus_id(bus) if bus else None
        if bus and bus_id is None:
            problems.append(Diagnostic(loc, f"{key}: PCI Bus {bus!r} is not a PCI bus id; expected e.g. 0000:83:00.0"))
        gen = width = None
        level = _text(card.get("pcie clock level"))
        if level is not None:
            lm = _LEVEL.match(level)
            gts = exact_number(lm.group(1)) if lm else None
            gen = GEN_BY_GTS.get(gts) if gts is not None else None
            if lm is None or gen is None:
                problems.append(
                    Diagnostic(
                        loc, f'{key}: pcie clock level {level!r}; expected e.g. "0 (16.0GT/s x16)" at a PCIe rate'
                    )
                )
            else:
                width = int(lm.group(2))
        use = _text(card.get("GPU use (%)"))
        busy = None
        if use is not None:
            um = _USE.match(use)
            if um is None:
                problems.append(Diagnostic(loc, f"{key}: GPU use (%) {use!r} is not a whole number"))
            else:
                busy = int(um.group(1))
        gpus.append(
            GpuObservation(
                source=loc,
                observed_at=None,
                host=host,
                vendor="amd",
                index=index,
                serial=_text(card.get("Serial Number")),
                pci_bus_id=bus_id,
                model=_text(card.get("Card series")) or _text(card.get("Card Series")),
                pcie_gen_current=gen,
                pcie_width_current=width,
                utilization_percent=busy,
            )
        )
    if not gpus and not problems:
        problems.append(
            Diagnostic(SourceLocation(filename, 1), "no cardN object; expected rocm-smi --json output of a GPU")
        )
    if problems:
        raise TopologError(problems)
    gpus.sort(key=lambda g: g.index or 0)
    # `rocm-smi -d 3 --json` lists card3 alone: one card proves no other missing (amd_smi.whole_listing).
    whole = whole_listing(g.index for g in gpus if g.index is not None)
    return Observations(
        gpus=tuple(gpus), files=(ObservedFile(filename, FORMAT, host, None, partial=not whole),), hosts=(host,)
    )
