"""CPU names as the OS writes them (/proc/cpuinfo's `model name`, hwloc's `CPUModel` info) to
catalogue CPU models.

The name carries the part number as one word: "Intel(R) Xeon(R) Platinum 8480C", "AMD EPYC 9654
96-Core Processor", "INTEL(R) XEON(R) PLATINUM 8570". A catalogue CPU is named by its family and
part number ("Xeon-8480C", "EPYC-9654"), so a name is that model's when every word of the model's
name is a whole word of it, compared without case. A whole word, not a prefix: an 8480CL, an
8480CTDX or an 8480+ is another part than the 8480C, and an EPYC 9654P is not the 9654; such a name
stays unmapped, never taken for its neighbour. A name two catalogue CPUs fit is not mapped either,
and neither is one whose CPU vendor (hwloc's `CPUVendor`) is not the model's.
"""

from __future__ import annotations

import re
from functools import cache

from verifier.sources.inventory.catalog import builtin_models

_WORD = re.compile(r"[0-9a-z]+")
# cpuid's vendor strings (what hwloc's CPUVendor and /proc/cpuinfo's vendor_id hold) to catalogue vendors.
# The makers' own names are accepted too, should a tool write those instead.
_VENDORS = {"genuineintel": "intel", "authenticamd": "amd", "intel": "intel", "amd": "amd"}


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.lower()))


@cache
def _cpu_models() -> tuple[tuple[str, str, frozenset[str]], ...]:
    """(name, vendor, words) of each built-in catalogue CPU whose name holds a part number.

    A name with no digit ("Grace") would fit any CPU name holding that word, so it is left out.
    """
    return tuple(
        (m.name, m.vendor, frozenset(_words(m.name)))
        for m in builtin_models()
        if m.kind == "cpu" and any(ch.isdigit() for ch in m.name)
    )


def cpu_models_for_name(name: str | None, vendor: str | None = None) -> tuple[str, ...]:
    """The built-in catalogue CPUs that the OS's CPU name `name` fits (sorted): a name is mapped
    only where exactly one fits. `vendor` (cpuid's "GenuineIntel", "AuthenticAMD"), where given,
    must be the model's vendor; a vendor string of another maker fits none.
    """
    if not name:
        return ()
    words = set(_words(name))
    stated = (vendor or "").strip().lower()
    wanted = _VENDORS.get(stated)
    if stated and wanted is None:
        return ()  # cpuid names another maker (HygonGenuine, CentaurHauls): no catalogue CPU is its part
    return tuple(
        sorted(
            model
            for model, model_vendor, model_words in _cpu_models()
            if model_words <= words and (wanted is None or wanted == model_vendor)
        )
    )
