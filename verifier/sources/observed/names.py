"""The names the command line offers for observations: formats and identity keys.

Kept apart from the readers so that a command's options can list them without importing every
reader (and what the readers import) on each run that reads no observation at all.
"""

from __future__ import annotations

FORMATS: tuple[str, ...] = (
    "amd-smi",
    "dcgm-exporter",
    "dcgmi-diag",
    "dcgmi-health",
    "iblinkinfo",
    "ibstat",
    "nccl-tests",
    "nvbandwidth",
    "nvidia-smi-nvlink-e",
    "nvidia-smi-nvlink-s",
    "nvidia-smi-q",
    "nvidia-smi-q-xml",
    "nvidia-smi-query-gpu",
    "rocm-smi",
)
"""Every format --observed-format accepts, sorted; sniff.READERS has a reader for each (a test holds them equal)."""

MATCH_KEYS: tuple[str, ...] = ("uuid", "serial", "pci_bus_id", "index")
"""Identity keys an observed GPU may be matched by, in the default order (identity.KEYS)."""
