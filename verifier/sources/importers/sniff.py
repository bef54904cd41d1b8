"""Recognising AMD tool outputs, so that an importer given one names the importer that fits."""

from __future__ import annotations

from verifier.sources.importers import amd_smi, rocm_smi


def amd_kind(text: str) -> str | None:
    """`rocm-smi` or `amd-smi` when `text` is that tool's topology output, else None."""
    if rocm_smi.looks_like(text):
        return "rocm-smi"
    if amd_smi.looks_like(text):
        return "amd-smi"
    return None


def wrong_importer(text: str, used: str) -> str | None:
    """The message for a file that `used` cannot read because another importer's tool wrote it."""
    kind = amd_kind(text)
    if kind is None:
        return None
    tool = "rocm-smi --showtopo" if kind == "rocm-smi" else "amd-smi topology"
    return f"this is `{tool}` output, not {used}'s; import it with `topolog import {kind}`"
