"""amd-smi output in either form it prints: `--json` (amd_smi) or its plain text (amd_smi_text).

One format name for both, so an observation folder may hold either; the text reader builds on the
JSON reader's pieces, so the choice between them is made here rather than in either module.
"""

from __future__ import annotations

from verifier.sources.observed import amd_smi, amd_smi_text
from verifier.sources.observed.model import Observations

FORMAT = amd_smi.FORMAT


def _is_json(text: str) -> bool:
    return text.startswith(("[", "{"), amd_smi.json_start(text))


def looks_like(text: str) -> bool:
    """amd-smi's JSON, or the text it prints without `--json`."""
    return amd_smi.looks_like(text) if _is_json(text) else amd_smi_text.looks_like(text)


def read(text: str, filename: str, host: str | None) -> Observations:
    """The GPUs (and xGMI links) of one host's amd-smi output, read by the reader of its form."""
    if not _is_json(text) and amd_smi_text.looks_like(text):
        return amd_smi_text.read(text, filename, host)
    return amd_smi.read(text, filename, host)
