"""Importers: the outputs of tools that describe real machines, as topolog inventories.

One module per source format, each returning an `Imported` (the same in-memory `Inventory`
the YAML loader produces, plus notes about what the format holds that topolog does not model).
`import_files(kind, paths)` is the one entry point the CLI and `verify --from` use.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.core.errors import SourceLocation, TopologError

if TYPE_CHECKING:
    from verifier.sources.importers.build import Imported

KINDS: tuple[str, ...] = ("nvidia-smi", "nccl-xml", "hwloc", "slurm", "rocm-smi", "amd-smi", "k8s-labels")


def import_files(
    kind: str,
    paths: Sequence[str | Path],
    *,
    node: str | None = None,
    link_kind: str = "infiniband",
    link_mbps: int = 50000,
) -> Imported:
    """Import `paths` (all of one `kind`). Raises TopologError (file:line, what was expected)."""
    files = [Path(p) for p in paths]
    for f in files:
        if not f.is_file():
            raise TopologError.at(SourceLocation(str(f)), "no such file")
    if node is not None and len(files) > 1:
        raise TopologError.at(SourceLocation(str(files[1])), "--node names one machine; give one file with it")
    if kind == "nvidia-smi":
        from verifier.sources.importers.nvidia_smi import import_nvidia_smi

        return import_nvidia_smi(files, node)
    if kind == "nccl-xml":
        from verifier.sources.importers.nccl_xml import import_nccl_xml

        return import_nccl_xml(files, node)
    if kind == "hwloc":
        from verifier.sources.importers.hwloc_xml import import_hwloc_xml

        return import_hwloc_xml(files, node)
    if kind == "slurm":
        from verifier.sources.importers.slurm import import_slurm

        return import_slurm(files, link_kind, link_mbps)
    if kind == "rocm-smi":
        from verifier.sources.importers.rocm_smi import import_rocm_smi

        return import_rocm_smi(files, node)
    if kind == "amd-smi":
        from verifier.sources.importers.amd_smi import import_amd_smi

        return import_amd_smi(files, node)
    if kind == "k8s-labels":
        from verifier.sources.importers.k8s_labels import import_k8s_labels

        return import_k8s_labels(files)
    raise TopologError.at(
        SourceLocation("<command line>"), f"unknown import kind {kind!r}; expected one of: {', '.join(KINDS)}"
    )


def __getattr__(name: str) -> object:
    """`Imported`, loaded when first named: every command offering `--from` reads KINDS for its choices,
    and a run without `--from` then imports no importer code (tests/cli/test_cold_imports.py).
    """
    if name == "Imported":
        from verifier.sources.importers.build import Imported

        return Imported
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["KINDS", "Imported", "import_files"]
