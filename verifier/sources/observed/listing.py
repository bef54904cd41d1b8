"""How a GPU listing of a node is judged against the GPUs the node declares: shared by verify's facts
(facts/observed.py: OBS006, OBS009, OBS014) and reconcile, so that both say the same of one file.

A listing (nvidia-smi -q, -q -x, --query-gpu; amd-smi, rocm-smi) is one of:

- whole: it shows every GPU its host's driver sees, numbered as the host numbers them; a declared GPU it does not
  show is missing (OBS006);
- short: it shows fewer GPUs than its tool counts (or, where the tool prints no count, than the node declares): a
  selection (`-i`, `-g`) or GPUs the tool cannot read, so none is called missing (OBS009);
- renumbered: it shows fewer GPUs than the node declares, numbered from 0 by the tool (nvidia-smi's positions past a
  dropped GPU, NVML's indexes, a container's view) and not every one is tied to a declared GPU by uuid, serial or PCI
  bus id: which declared GPU each is, and which are gone, is not known (OBS014: a node error, no GPU placed).

A renumbered listing whose GPUs can still be told apart (as many as declared; minor numbers that are the declared
indexes) is numbered again first (`numbered`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from verifier.sources.inventory.model import Obj
from verifier.sources.observed.identity import Matcher, same_gpu
from verifier.sources.observed.model import GpuObservation, GpuRef, Observations, ObservedFile

LISTING_FORMATS = frozenset({"nvidia-smi-q-xml", "nvidia-smi-q", "nvidia-smi-query-gpu", "amd-smi", "rocm-smi"})
"""Formats that list every GPU the host's driver sees: a declared GPU absent from them is missing."""
UNCOUNTED_LISTINGS = frozenset({"amd-smi", "rocm-smi", "nvidia-smi-query-gpu"})
"""Listings that print no count of their host's GPUs: one that shows fewer GPUs than its node declares may be a
selection, so it proves none missing (OBS009 says so instead)."""
QUERY_GPU = "nvidia-smi-query-gpu"
TIES = frozenset({"uuid", "serial", "pci_bus_id"})
"""The keys that tie an observed GPU to a declared one whatever the tool's numbering (an index does not)."""

UNTIED = (
    "its driver dropped a GPU or the file comes from a container given some of them, and no uuid, serial or "
    "pci_bus_id ties the GPUs shown to declared ones, so which is which is not known"
)
"""OBS014's words for a renumbered listing not tied by keys."""
BARE_NUMBERS = (
    "each GPU it shows is tied to a declared one by uuid, serial or pci_bus_id, but another file names a GPU by a "
    "number alone, and on a renumbered host a number is no declared index (NVML numbers the GPUs it sees from 0, a "
    "container those it is given), so which GPU a fault named so is on is not known"
)
"""OBS014's words for a node whose listing is tied by keys but a fault of which is named by a bare GPU number."""


@dataclass(frozen=True)
class Verdict:
    """What a listing file says of its node's GPUs as a whole (None from `judge`: a whole listing, or no listing)."""

    kind: str
    """`short` (OBS009), `renumbered` (OBS014) or `tied` (renumbered, every GPU tied by keys: judged whole)."""
    listed: int
    count: int
    """short: the count it is short of (the tool's, else the declared); else the GPUs the node declares."""
    words: str
    """short: whose count that is, in words (OBS009's `counted`); renumbered/tied: how the file numbers its GPUs."""


def tied(matcher: Matcher, node: str, gpus: Sequence[GpuObservation]) -> bool:
    """Whether each GPU shown is tied to a declared GPU of `node` by uuid, serial or PCI bus id."""
    for g in gpus:
        m = matcher.match_gpu(node, g)
        if m.gpu is None or m.key not in TIES:
            return False
    return True


def judge(
    f: ObservedFile, in_file: Sequence[GpuObservation], declared: int, matcher: Matcher, node: str
) -> Verdict | None:
    """How listing `f` of `node` (its GPUs `in_file`, the node declaring `declared`) is judged, after `numbered`."""
    listed = len(in_file)
    if f.format in UNCOUNTED_LISTINGS and f.attached is None:
        if listed >= declared:
            return None
        # amd-smi and rocm-smi print no count of the host's GPUs, and number the GPUs they see from 0: `-g 0 1`
        # on a host of eight is a whole listing of a host of two, or of eight with six gone. Which, the file
        # cannot say: none is judged missing (a false OBS006 for six good GPUs), and the node is told so.
        # nvidia-smi --query-gpu prints a count only where `count` is among its fields; its selection is -i.
        flag = "-i" if f.format.startswith("nvidia-smi") else "-g"
        counted = (
            f"{node} declares ({f.format} prints no count of its host's GPUs): a selection ({flag}) or GPUs its "
            "driver does not see"
        )
        return Verdict("short", listed, declared, counted)
    if f.format in LISTING_FORMATS and not f.partial:
        return None
    if f.note is not None and listed < declared:
        # Numbers past the listing's count, or an NVML count short of the declaration (renumber_short_queries): a
        # host whose driver dropped a GPU (fallen off the bus, failed to initialise: the others keep their device
        # numbers while nvidia-smi renumbers from 0, k8s dra-driver-nvidia-gpu PR 428, microsoft/pai#4344), or a
        # container given some of the host's GPUs. The file cannot tell which (docs/observed.md), so it fails
        # closed unless each GPU shown is tied by a key: then the declared GPUs it does not show are missing
        # (OBS006), as a drop of the highest minor number already is.
        kind = "tied" if tied(matcher, node, in_file) else "renumbered"
        return Verdict(kind, listed, declared, _numbering(f, in_file))
    if f.format in LISTING_FORMATS and f.attached is not None and listed < f.attached:
        counted = f"the driver of {node} counts: a selection (-i) or a GPU it cannot read"
        return Verdict("short", listed, f.attached, counted)
    return None


def _numbers(values: Sequence[int]) -> str:
    return ", ".join(map(str, values)) if values else "none"


def _numbering(f: ObservedFile, in_file: Sequence[GpuObservation]) -> str:
    """How a renumbered listing numbers the GPUs it shows, in words (OBS014's `numbers`)."""
    minors = sorted(g.minor_number for g in in_file if g.minor_number is not None)
    selection = f.attached is not None and len(in_file) < f.attached
    if f.format == QUERY_GPU:
        positions = sorted(g.position for g in in_file if g.position is not None)
        counted = f"a selection (-i) of the {f.attached}" if selection else f"the {f.attached}"
        return (
            f"numbered {_numbers(positions)} by NVML ({counted} GPUs its driver counts; nvidia-smi --query-gpu "
            "prints no device minor number)"
        )
    if selection:
        # A selection (-i) of the GPUs its driver counts: the numbers it leaves out were not asked for (review
        # R-RT2: they were named missing).
        return (
            f"with device minor numbers {_numbers(minors)} (a selection (-i) of the {f.attached} GPUs its driver "
            "counts, so the numbers it leaves out are not known to be missing)"
        )
    gaps = sorted(set(range(minors[-1] + 1)) - set(minors)) if minors else []
    return f"with device minor numbers {_numbers(minors)} (missing from their sequence: {_numbers(gaps)})"


def numbered(observations: Observations, matcher: Matcher) -> Observations:
    """`observations` with --query-gpu listings counted short of their node unnumbered (renumber_short_queries),
    then each renumbered listing whose GPUs can still be told apart numbered again (_whole_by_position).
    """
    observations = _renumber_short_queries(observations, matcher)
    if any(f.note is not None for f in observations.files):
        observations = _whole_by_position(observations, matcher)
    return observations


def _renumber_short_queries(observations: Observations, matcher: Matcher) -> Observations:
    """`observations` with each nvidia-smi --query-gpu file whose `count` is below the GPUs its node declares, and
    whose GPUs are not all tied by uuid, serial or PCI bus id, unnumbered (model.unnumbered), as -q's listing past
    its count is.

    NVML numbers the GPUs its driver sees from 0: on a host whose driver dropped GPU 3, the query's indexes 3-6 are
    the declared gpu4-gpu7, and `count` 7 says only that one of eight is gone, not which (the query prints no device
    minor number, which -q does). Matched by index, row 3's fault was put on gpu3 and gpu7 was called missing.
    """
    short = [
        f
        for f in observations.files
        if f.format == QUERY_GPU
        and f.note is None
        and f.attached is not None
        and f.host is not None
        and (n := matcher.node(f.host)) is not None
        and f.attached < len(matcher.declared_gpus(n))
    ]
    if not short:
        return observations
    redo: dict[str, str] = {}
    shift: dict[str, dict[int, int]] = {}  # host -> NVML's index -> the declared index it is
    for f in short:
        n = matcher.node(f.host) if f.host is not None else None
        in_file = [g for g in observations.gpus if g.source.file == f.path]
        if n is None or tied(matcher, n, in_file) or any(g.index is None for g in in_file):
            continue
        declared = matcher.declared_gpus(n)
        up = _in_service_indexes(declared)
        numbers = sorted(g.index for g in in_file if g.index is not None)
        fits = up is not None and len(up) == f.attached and len(set(numbers)) == len(numbers)
        if up is not None and fits and all(i < len(up) for i in numbers) and f.host is not None and f.host not in shift:
            # The GPUs the node declares down are the ones its driver no longer counts: NVML numbers the rest in bus
            # order, as the declared indexes are, so NVML's i is the i-th declared GPU in service (review R-RT2's
            # reading of -q's minors: draining a node whose declaration already says which GPU is gone is a false
            # alarm). A selection (-i) prints NVML's own indexes too; fewer rows than the count is then OBS009's.
            shift[f.host] = dict(enumerate(up))
            continue
        redo[f.path] = (
            f"its driver counts {f.attached} GPUs, fewer than {n} declares, and numbers them from 0 (NVML's index, "
            "no device minor number printed): a GPU dropped by the driver or a container's view, so an index is "
            "not the host's (declare the GPUs' uuid, serial or pci_bus_id to match them)"
        )
    if not redo and not shift:
        return observations
    shifted = {f.path for f in short if f.host in shift}
    # Another listing of the host that counts a different number of GPUs (a query taken before the GPU dropped, with
    # `count` 8) numbers them as the host did then: its index 7 is gpu7, not past the shifted numbering (review
    # R-OB63: its fault fell to OBS005 and its rows 3-6 moved one GPU up).
    counted = {f.path: f.attached for f in observations.files if f.attached is not None}
    gpus = tuple(
        replace(g, index=None, renumbered=True, position=g.index)
        if g.source.file in redo
        else replace(g, index=shift[g.host].get(g.index))
        if g.host in shift
        and g.index is not None
        and (
            g.source.file in shifted
            or (not (g.uuid or g.pci_bus_id) and counted.get(g.source.file, len(shift[g.host])) == len(shift[g.host]))
        )
        else g
        for g in observations.gpus
    )
    files = tuple(replace(f, partial=True, note=redo[f.path]) if f.path in redo else f for f in observations.files)
    # Another tool's bare GPU number on a shifted host (dcgmi's GPU id, a dcgm-exporter `gpu` label alone) is NVML's
    # too: the same declared GPU.
    links = tuple(replace(lk, gpu=_shifted(lk.gpu, shift)) for lk in observations.links)
    counters = tuple(replace(c, gpu=_shifted(c.gpu, shift)) for c in observations.counters)
    return replace(observations, gpus=gpus, files=files, links=links, counters=counters)


def _in_service_indexes(declared: Sequence[Obj]) -> list[int] | None:
    """The declared indexes of a node's GPUs not declared down, in order, where some are declared down and every
    GPU has its own whole-number index; else None.
    """
    indexes = [_declared_index(g) for g in declared]
    if any(i is None or not i.isdigit() for i in indexes) or len(set(indexes)) != len(indexes):
        return None
    up = sorted(int(i) for g, i in zip(declared, indexes, strict=True) if i is not None and g.state != "down")
    return up if len(up) < len(declared) else None


def _shifted(ref: GpuRef, shift: Mapping[str, dict[int, int]]) -> GpuRef:
    if ref.host not in shift or ref.index is None or ref.uuid or ref.pci_bus_id or ref.serial:
        return ref
    return replace(ref, index=shift[ref.host].get(ref.index))


def _whole_by_position(observations: Observations, matcher: Matcher) -> Observations:
    """`observations` with each renumbered nvidia-smi listing whose GPUs can still be told apart numbered again
    (its GPUs' index and the file whole): by device minor number or by position.

    Minor numbers past the count with no GPU left out of the node's declaration: a host whose driver leaves out GPUs
    excluded for good (NVreg_ExcludedGpus, bound to vfio-pci for passthrough) and whose inventory declares only the
    rest, or a node that is such a container: nvidia-smi's positions are then the declared GPUs' indexes, in the
    same bus order, as they were before minor numbers were read (review R-RT: every GPU was unmatched, OBS005).
    Where the minor numbers shown are the declared indexes themselves (review R-RT2: a host that left GPU 0 out and
    declares gpu1..gpu7; or one whose GPU 3 fell off the bus and is declared `state: down`, the others kept their
    device numbers), each GPU is the declared GPU of its minor number: by position the first would be an
    undeclared index 0 and each fault would land on the GPU below its own, and OBS014 would drain a node whose
    declaration already says which GPU is gone. Only the GPUs declared down may be left out that way.
    """
    per_file = Counter(g.source.file for g in observations.gpus)
    minors_of: dict[str, list[int | None]] = {}
    for g in observations.gpus:
        if g.renumbered:
            minors_of.setdefault(g.source.file, []).append(g.minor_number)
    whole: set[str] = set()
    by_minor: set[str] = set()
    for f in observations.files:
        n = matcher.node(f.host) if f.note is not None and f.host is not None else None
        listed = per_file[f.path]
        if n is None or f.attached not in (None, listed):
            continue
        declared = matcher.declared_gpus(n)
        minors = minors_of.get(f.path, [])
        shown = {str(m) for m in minors if m is not None}
        indexes = {i for g in declared if (i := _declared_index(g)) is not None}
        in_service = {i for g in declared if g.state != "down" and (i := _declared_index(g)) is not None}
        # Each GPU shown has its own minor number, each declared GPU its own index, and the declared GPUs no minor
        # number names are all declared down.
        if len(shown) == len(minors) == listed and len(indexes) == len(declared) and in_service <= shown <= indexes:
            by_minor.add(f.path)
        elif listed == len(declared):
            whole.add(f.path)
    if not whole and not by_minor:
        return observations
    gpus = tuple(
        replace(g, index=g.position, renumbered=False, position=None)
        if g.source.file in whole
        else replace(g, index=g.minor_number, renumbered=False, position=None)
        if g.source.file in by_minor
        else g
        for g in observations.gpus
    )
    files = tuple(
        replace(f, partial=False, note=None) if f.path in whole or f.path in by_minor else f for f in observations.files
    )
    if not by_minor:
        return replace(observations, gpus=gpus, files=files)
    # Another tool's bare GPU number on that host (dcgmi's table, dcgm-exporter's gpu label, topo -m) is NVML's, as
    # nvidia-smi's position is, not the minor number: DCGM's GPU 3 on a host that lost minor 3 is minor 4's GPU.
    minor_at: dict[str, dict[int, int] | None] = {}
    for g in observations.gpus:
        if g.source.file in by_minor and g.position is not None and g.minor_number is not None:
            known = minor_at.setdefault(g.host, {})
            if known is not None and known.setdefault(g.position, g.minor_number) != g.minor_number:
                minor_at[g.host] = None  # two listings of the host disagree: no bare number is tied
    links = tuple(replace(lk, gpu=_by_minor(lk.gpu, minor_at)) for lk in observations.links)
    counters = tuple(replace(c, gpu=_by_minor(c.gpu, minor_at)) for c in observations.counters)
    # Likewise a GPU number of another listing of that host (nvidia-smi --query-gpu's index): the GPU of the same
    # UUID, serial or bus id in the listing matched by minor number, else the one at that position.
    listing: dict[str, list[GpuObservation]] = {}
    for g in observations.gpus:
        if g.source.file in by_minor:
            listing.setdefault(g.host, []).append(g)
    gpus = tuple(
        g
        if g.host not in minor_at or g.index is None or g.source.file in by_minor or g.source.file in whole
        else replace(g, index=_minor_of(g, listing[g.host], minor_at[g.host]))
        for g in gpus
    )
    return replace(observations, gpus=gpus, files=files, links=links, counters=counters)


def _minor_of(g: GpuObservation, listing: list[GpuObservation], minor_at: dict[int, int] | None) -> int | None:
    """The minor number, in a listing matched by minor number, of another file's GPU `g` of the same host."""
    tied = same_gpu(GpuRef(g.host, g.uuid, g.pci_bus_id, None, g.serial), listing)
    if tied is not None:
        return tied.minor_number
    return None if minor_at is None or g.index is None else minor_at.get(g.index)


def _by_minor(ref: GpuRef, minor_at: Mapping[str, dict[int, int] | None]) -> GpuRef:
    """`ref` with its bare GPU number (nothing else stated) turned into the minor number of the GPU its host's
    listing shows at that position, where that listing is matched by minor number; None where it shows none.
    """
    if ref.host not in minor_at or ref.index is None or ref.uuid or ref.pci_bus_id or ref.serial:
        return ref
    known = minor_at[ref.host]
    return replace(ref, index=None if known is None else known.get(ref.index))


def _declared_index(gpu: Obj) -> str | None:
    """A declared GPU's index as the matcher reads it (identity: its `{i}`, else its `index` label)."""
    if gpu.index is not None:
        return str(gpu.index)
    text = gpu.labels.get("index")
    return text.strip() or None if text is not None else None
