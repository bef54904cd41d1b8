"""The CPU interconnect between the sockets (or NUMA domains) an importer found.

None of the tools states the socket-to-socket link: nvidia-smi only says SYS, NCCL and hwloc
list the CPUs. Without a link, a GPU on a socket without a NIC "reaches no NIC" although its
traffic crosses the interconnect (nvidia-smi's SYS). So every importer links each pair of
CPU domains: the kind from the CPU vendor where the tool names it (Intel UPI, AMD Infinity
Fabric as `xgmi`), and a bandwidth that is always an assumed figure (labelled `assumed`, with a
note), because the number and speed of the links depend on the board, not on the CPU model.
"""

from __future__ import annotations

from collections.abc import Sequence

from verifier.core.errors import SourceLocation
from verifier.sources.importers.build import ASSUMED, Builder

DEFAULT_SOCKET_LINK_MBPS = 41600
"""Two UPI links at 10.4 GT/s, 20.8 GB/s each per direction (Intel Xeon Scalable datasheets): the
smallest two-socket configuration of the Xeon Scalable generations, used when nothing is known."""

_KIND_BY_VENDOR = {
    "genuineintel": "upi",
    "intel": "upi",
    "authenticamd": "xgmi",  # AMD's socket-to-socket Infinity Fabric is called xGMI
    "amd": "xgmi",
}


def interconnect_kind(vendor: str | None) -> str | None:
    """The link kind between two sockets of this CPU vendor, or None when the vendor does not say."""
    return _KIND_BY_VENDOR.get((vendor or "").strip().lower())


def link_sockets(
    b: Builder,
    sockets: Sequence[tuple[str, str | None]],
    loc: SourceLocation,
    what: str,
) -> None:
    """Link every pair of `sockets` ((object id, CPU vendor or None)) with an assumed interconnect.

    A full mesh: the tools say that the domains are across the interconnect, not how it is wired.
    """
    if len(sockets) < 2:
        return
    kinds = {interconnect_kind(v) for _s, v in sockets}
    kind = kinds.pop() if len(kinds) == 1 else None
    assumed = "bandwidth" if kind is not None else "bandwidth,kind"
    ids = [s for s, _v in sockets]
    for i, a in enumerate(ids):
        for c in ids[i + 1 :]:
            b.link(
                a,
                c,
                kind or "upi",
                DEFAULT_SOCKET_LINK_MBPS,
                loc,
                labels={ASSUMED: assumed, "source": str(loc), "inferred": "true"},
            )
    short = ", ".join(sorted(s.rsplit("/", 1)[-1] for s in ids))
    stated = f"{kind} (from the CPU vendor)" if kind is not None else "kind unknown, written as upi"
    b.note(
        loc,
        f"{what} states no CPU interconnect between {short}: linked them with an assumed "
        f"{DEFAULT_SOCKET_LINK_MBPS} MB/s per direction ({stated}), labelled assumed",
    )
