"""Which inventory files describe one cluster: files that share `metadata.name`.

`topolog verify a.yaml b.yaml` (and a pre-commit hook handed every staged file) must not
merge two clusters into one inventory: ids would collide, and a NIC of one cluster would
"serve" a GPU of the other. Files that declare the same `metadata.name` are the parts of
one cluster and are loaded together; files that declare no name are loaded together as
one unnamed cluster (as before names split them); a `kind: Catalog` file (shared models
and templates) joins every cluster it is given with. A file whose header cannot be read
here (or nested past `nesting_depth`) counts as unnamed, so the loader, which reads it for
real, reports what is wrong.

Only the start of each file is read: the YAML events up to `metadata.name`, which by
convention sits in the first lines, so grouping costs nothing next to loading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.limits import current_limits

try:  # the C parser (libyaml) when PyYAML was built with it; the events are the same
    from yaml.cyaml import CParser as _Parser  # type: ignore[attr-defined,unused-ignore]
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml.parser import Parser as _Parser  # type: ignore[assignment,unused-ignore]


@dataclass(frozen=True, repr=False, eq=False)
class ClusterFiles(Frozen):
    """The files of one cluster, in the order given (shared catalogue files included)."""

    name: str
    paths: tuple[Path, ...]


@dataclass(frozen=True, repr=False, eq=False)
class _Header(Frozen):
    kind: str | None
    name: str | None


def _header(path: Path) -> _Header | None:
    """`kind` and `metadata.name` of the file's first document; None when they cannot be read.

    Only a regular file is scanned: opening a FIFO would wait for a writer, or take the data
    the loader must read (`verify <(cmd)`); the loader reads (and bounds) everything else.
    """
    if not path.is_file():
        return None
    try:
        with path.open("rb") as stream:
            return _scan(_Parser(stream))
    except (OSError, yaml.YAMLError, UnicodeDecodeError, ValueError):
        return None


def _scan(parser: object) -> _Header | None:
    kind: str | None = None
    name: str | None = None
    depth = 0  # nesting of mappings and sequences inside the document
    key: str | None = None  # the top-level key whose value comes next
    in_meta = False
    meta_key: str | None = None
    expect_key = True
    meta_expect_key = True
    get_event = parser.get_event  # type: ignore[attr-defined]
    max_depth = current_limits().nesting_depth
    while True:
        event = get_event()
        if isinstance(event, (yaml.DocumentEndEvent, yaml.StreamEndEvent)):
            return _Header(kind, name)
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > max_depth:  # the parsers slow down with the square of the depth
                return None
            if depth == 2 and key == "metadata" and isinstance(event, yaml.MappingStartEvent):
                in_meta, meta_expect_key = True, True
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
            if depth == 1:
                if in_meta:
                    in_meta = False
                    if kind is not None:
                        return _Header(kind, name)
                expect_key = True
            elif depth == 2 and in_meta:
                meta_expect_key = True
            continue
        if isinstance(event, yaml.AliasEvent):
            if depth == 1:
                expect_key = not expect_key
            elif depth == 2 and in_meta:
                meta_expect_key = not meta_expect_key
            continue
        if not isinstance(event, yaml.ScalarEvent):
            continue
        if depth == 1:
            if expect_key:
                key = str(event.value)
            elif key == "kind":
                kind = str(event.value)
            expect_key = not expect_key
        elif depth == 2 and in_meta:
            if meta_expect_key:
                meta_key = str(event.value)
            elif meta_key == "name":
                name = str(event.value)
            meta_expect_key = not meta_expect_key
        if kind is not None and name is not None:
            return _Header(kind, name)


def cluster_files(paths: Sequence[Path]) -> list[ClusterFiles]:
    """The given files split by cluster, clusters in the order of their first file."""
    if len(paths) <= 1:
        return [ClusterFiles(_name_of(paths[0]) if paths else "", tuple(paths))]
    shared: list[Path] = []
    groups: dict[str, list[Path]] = {}
    for path in paths:
        header = _header(path)
        if header is not None and header.kind == "Catalog":
            shared.append(path)
            continue
        key = header.name if header is not None and header.name else ""
        groups.setdefault(key, []).append(path)
    if not groups:  # catalogue files only: the loader says what it makes of them
        return [ClusterFiles("", tuple(paths))]
    return [
        ClusterFiles(key or str(members[0]), tuple(_with_shared(members, shared, paths)))
        for key, members in groups.items()
    ]


def _with_shared(members: list[Path], shared: list[Path], order: Sequence[Path]) -> list[Path]:
    """Members plus the shared catalogue files, in the order the user gave them."""
    wanted = set(members) | set(shared)
    return [p for p in order if p in wanted]


def _name_of(path: Path) -> str:
    header = _header(path)
    return header.name if header is not None and header.name else str(path)


def several_clusters(clusters: Sequence[ClusterFiles], why: str) -> TopologError:
    """The error for a command that works on one cluster and was given files of several."""
    names = ", ".join(f"{c.name} ({', '.join(map(str, c.paths))})" for c in clusters)
    return TopologError.at(
        SourceLocation(str(clusters[1].paths[0])),
        f"these files describe {len(clusters)} clusters (metadata.name differs): {names}; {why}: "
        "give the files of one cluster (files with the same metadata.name are one inventory)",
    )


def one_cluster(paths: Sequence[Path], why: str) -> None:
    """Refuse files of several clusters where a command needs exactly one inventory."""
    clusters = cluster_files(paths)
    if len(clusters) > 1:
        raise several_clusters(clusters, why)
