"""Which tool wrote an observation file, from its content; and the reader for each format.

`READERS` names every format `--observed-format` accepts; `sniff(text)` returns the first format
whose test recognises the text (the tests look at the start of the file only, and are ordered
from the most specific: nvidia-smi's XML root, then line shapes).
"""

from __future__ import annotations

from collections.abc import Callable

from verifier.sources.observed import (
    amd_smi_any,
    dcgm,
    dcgmi_diag,
    dcgmi_health,
    iblinkinfo,
    ibstat,
    nccl_tests,
    nvbandwidth,
    nvidia_smi_query,
    nvidia_smi_text,
    nvidia_smi_xml,
    nvlink_text,
    rocm_smi,
)
from verifier.sources.observed.model import Reader

READERS: dict[str, Reader] = {
    nvidia_smi_xml.FORMAT: nvidia_smi_xml.read,
    nvidia_smi_text.FORMAT: nvidia_smi_text.read,
    nvidia_smi_query.FORMAT: nvidia_smi_query.read,
    nvlink_text.FORMAT_STATUS: nvlink_text.read,
    nvlink_text.FORMAT_ERRORS: nvlink_text.read,
    dcgm.FORMAT: dcgm.read,
    dcgmi_diag.FORMAT: dcgmi_diag.read,
    dcgmi_health.FORMAT: dcgmi_health.read,
    amd_smi_any.FORMAT: amd_smi_any.read,
    rocm_smi.FORMAT: rocm_smi.read,
    ibstat.FORMAT: ibstat.read,
    iblinkinfo.FORMAT: iblinkinfo.read,
    nccl_tests.FORMAT: nccl_tests.read,
    nvbandwidth.FORMAT: nvbandwidth.read,
}
"""Format name -> reader. A format added here is named by --observed-format and sniffed below."""

_TESTS: tuple[tuple[str, Callable[[str], bool]], ...] = (
    (nvidia_smi_xml.FORMAT, nvidia_smi_xml.looks_like),
    (dcgmi_diag.FORMAT, dcgmi_diag.looks_like),
    (dcgmi_health.FORMAT, dcgmi_health.looks_like),
    # Before -q's text test, which takes a file that opens with a lost GPU's line: a query's header after it is this.
    (nvidia_smi_query.FORMAT, nvidia_smi_query.looks_like),
    (nvidia_smi_text.FORMAT, nvidia_smi_text.looks_like),
    (nvlink_text.FORMAT_STATUS, lambda t: nvlink_text.kind_of(t) == nvlink_text.FORMAT_STATUS),
    (nvlink_text.FORMAT_ERRORS, lambda t: nvlink_text.kind_of(t) == nvlink_text.FORMAT_ERRORS),
    (amd_smi_any.FORMAT, amd_smi_any.looks_like),
    (rocm_smi.FORMAT, rocm_smi.looks_like),
    (ibstat.FORMAT, ibstat.looks_like),
    (iblinkinfo.FORMAT, iblinkinfo.looks_like),
    (nccl_tests.FORMAT, nccl_tests.looks_like),
    (nvbandwidth.FORMAT, nvbandwidth.looks_like),
    (dcgm.FORMAT, dcgm.looks_like),
)


def sniff(text: str) -> str | None:
    """The format of `text`, or None when no reader recognises it."""
    for name, test in _TESTS:
        if test(text):
            return name
    return None
