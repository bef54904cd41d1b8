"""NIC ports, xGMI peers, PCIe widths seen alone, and measured bandwidth as rows for rules/observed/OBS1xx.

The relations are declared in rules/observed/lib/network_schema.dl; verifier.facts.observed makes the
GPU rows this module leans on (the same identity matching, verifier.sources.observed.identity).

- NIC ports (ibstat): a host's port is the declared NIC of that node whose `name` (or `rdma_device`)
  label is the adapter's name (`mlx5_0`, as the importers label NICs), or, where the node's NICs
  declare no such label and `index` is an identity key, the NIC whose index is the adapter's number
  (`mlx5_3`: nic3). A port that matches nothing is an `observed_unmatched` row. Its rate is a row of
  its own (`observed_nic_port_rate`), made only where the tool stated one (plain `ibv_devinfo` does not).
- xGMI peers (amd-smi topology): both ends matched like any link's GPU.
- PCIe width alone: an observation that states the width the link trained to but not the link's
  maximum (amd-smi metric; its static file states the maximum apart) becomes `observed_pcie_lanes_now`,
  judged against the declared link (OBS101); with both, verifier.facts.observed's `observed_pcie_width`
  is the one judged (OBS001).
- Measured bandwidth: a run is one nccl-tests run (its GPU set: the rank lines) or one nvbandwidth
  cell (a GPU pair, or a GPU and its host). Only a run whose every rank matches a distinct declared
  GPU has rows; its peak is the row at the largest size, the better of in-place and out-of-place.
  MB/s are rounded down to whole numbers (nccl-tests prints GB/s with two decimals: whole MB/s).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from fractions import Fraction

from verifier.facts.observed import ObservedSettings
from verifier.sources.inventory.model import Inventory, Obj
from verifier.sources.observed.identity import Matcher, objects_by_node, resolve_ref
from verifier.sources.observed.model import (
    BandwidthMeasurement,
    GpuObservation,
    GpuRef,
    NicPortObservation,
    Observations,
)

Row = tuple[str | int, ...]

NETWORK_RELATIONS: frozenset[str] = frozenset(
    {
        "observed_nic_port",
        "observed_nic_port_rate",
        "observed_xgmi_peer",
        "observed_pcie_lanes_now",
        "observed_run",
        "observed_run_gpu",
        "observed_run_peak",
        "observed_run_wrong",
        "observed_unknown_host",
    }
)
"""Every relation this module emits (all present, possibly empty); it also adds `observed_unmatched` rows.
`observed_unknown_host` (verifier.facts.observed's too) gets the hosts of measurement ranks the inventory lacks."""

NIC_NAME_LABELS = ("name", "rdma_device")
_ADAPTER_NUMBER = re.compile(r"^[A-Za-z][A-Za-z0-9]*?_(\d+)$")


class _Nics:
    """A node's declared NICs by adapter name and by index."""

    def __init__(self, nics: Sequence[Obj]) -> None:
        self.by_name: dict[str, Obj] = {}
        self.by_index: dict[int, Obj] = {}
        for nic in nics:
            for key in NIC_NAME_LABELS:
                name = nic.labels.get(key)
                if name:
                    self.by_name.setdefault(name, nic)
            if nic.index is not None:
                self.by_index.setdefault(nic.index, nic)


def _nics_by_node(inventory: Inventory) -> dict[str, list[Obj]]:
    return objects_by_node(inventory.objects, "nic")


def _match_nic(nics: _Nics, port: NicPortObservation, use_index: bool) -> tuple[Obj | None, str]:
    found = nics.by_name.get(port.device)
    if found is not None:
        return found, ""
    if nics.by_name:
        return None, f"no NIC of the node has the name label {port.device!r}"
    number = _ADAPTER_NUMBER.match(port.device)
    if use_index and number is not None:
        found = nics.by_index.get(int(number.group(1)))
        if found is not None:
            return found, ""
        return None, f"no NIC of the node has index {number.group(1)}"
    return None, "the node's NICs declare no name label (name: mlx5_0)" + (
        "" if use_index else " and index is not an identity key"
    )


def _floor_mbps(value: Fraction) -> int:
    return int(value // 1)


def network_facts(
    inventory: Inventory,
    observations: Observations,
    settings: ObservedSettings | None = None,
) -> dict[str, list[Row]]:
    """Rows per relation of NETWORK_RELATIONS (and `observed_unmatched`), sorted."""
    settings = settings or ObservedSettings()
    out: dict[str, list[Row]] = {name: [] for name in NETWORK_RELATIONS}
    unmatched: list[Row] = []
    matcher = Matcher(inventory, settings.match)
    node = matcher.node

    by_host: dict[str, list[GpuObservation]] = {}
    for g in observations.gpus:
        by_host.setdefault(g.host, []).append(g)

    def gpu_of(ref: GpuRef) -> tuple[str | None, str | None, str]:
        n = node(ref.host)
        if n is None:
            return None, None, f"host {ref.host} is no node of the inventory"
        m = matcher.match(n, resolve_ref(ref, by_host.get(ref.host, ())))
        return n, m.gpu, m.why or ""

    _nic_rows(inventory, observations, settings, node, out, unmatched)
    for g in observations.gpus:
        n = node(g.host)
        if n is None or g.pcie_width_current is None or g.pcie_width_max is not None:
            continue
        m = matcher.match_gpu(n, g)
        if m.gpu is not None:  # an unmatched GPU is verifier.facts.observed's to report
            out["observed_pcie_lanes_now"].append((m.gpu, g.pcie_width_current, str(g.source)))
    for lk in observations.links:
        if lk.kind != "xgmi" or lk.peer is None:
            continue
        _, a, _ = gpu_of(lk.gpu)
        _, b, _ = gpu_of(lk.peer)
        if a is not None and b is not None:
            out["observed_xgmi_peer"].append((a, b, 1 if lk.state == "active" else 0, str(lk.source)))
    _run_rows(observations.bandwidth, gpu_of, out, unmatched)
    result = {name: sorted(set(rows), key=sort_key) for name, rows in out.items()}
    result["observed_unmatched"] = sorted(set(unmatched), key=sort_key)
    return result


def _nic_rows(
    inventory: Inventory,
    observations: Observations,
    settings: ObservedSettings,
    node: Callable[[str], str | None],
    out: dict[str, list[Row]],
    unmatched: list[Row],
) -> None:
    if not observations.nic_ports:
        return
    nics_of = _nics_by_node(inventory)
    tables: dict[str, _Nics] = {}
    use_index = "index" in settings.match.keys
    # A fabric-wide file (iblinkinfo: no host of its own, ObservedFile.host None) names storage and management hosts
    # the inventory rightly lacks, so each is passed over; but a file naming none of the inventory's hosts is
    # another fabric's, or its descriptions are not the inventory's names (`node-01` for dgx01): said once per file.
    fabric = {f.path for f in observations.files if f.host is None}
    unknown: dict[str, str] = {}  # fabric file -> the first host (by name) it names, while it names no node
    known: set[str] = set()
    for port in observations.nic_ports:
        n = node(port.host)
        if n is None:
            # a one-host file's unknown host is verifier.facts.observed's to report
            path = port.source.file
            if path in fabric and path not in known and port.host < unknown.get(path, port.host + "\uffff"):
                unknown[path] = port.host
            continue
        known.add(port.source.file)
        table = tables.get(n)
        if table is None:
            table = tables[n] = _Nics(nics_of.get(n, []))
        nic, why = _match_nic(table, port, use_index)
        where = str(port.source)
        if nic is None:
            unmatched.append((n, f"NIC {port.device} port {port.port}", why, where))
            continue
        out["observed_nic_port"].append((nic.id, port.port, port.state, port.physical_state, port.link_layer, where))
        if port.rate_mbps is not None:  # unknown stays unknown: a 0 would be judged a slow port by OBS104
            out["observed_nic_port_rate"].append((nic.id, port.port, port.rate_mbps, where))
    out["observed_unknown_host"].extend((host, path) for path, host in unknown.items() if path not in known)


def _run_rows(
    measurements: Sequence[BandwidthMeasurement],
    gpu_of: Callable[[GpuRef], tuple[str | None, str | None, str]],
    out: dict[str, list[Row]],
    unmatched: list[Row],
) -> None:
    runs: dict[tuple[object, ...], list[BandwidthMeasurement]] = {}
    for m in measurements:
        runs.setdefault(_run_key(m), []).append(m)
    for rows in runs.values():
        first = rows[0]
        run = str(first.source) if first.tool == "nccl-tests" else f"{first.source} {first.gpus[-1]}"
        gpus: list[str] = []
        nodes: set[str] = set()
        complete = True
        for ref in first.gpus:
            n, gpu, why = gpu_of(ref)
            if n is None or gpu is None:
                complete = False
                if n is not None:
                    unmatched.append((n, f"GPU {ref}", why, str(first.source)))
                else:  # a rank on a host the inventory lacks (OBS005 names it)
                    out["observed_unknown_host"].append((ref.host, first.source.file))
                continue
            gpus.append(gpu)
            nodes.add(n)
        if not complete or not gpus or len(set(gpus)) != len(gpus):
            continue  # a GPU that matches nothing, or two ranks on one GPU: the run is not judged
        largest = max(m.size_bytes for m in rows)
        peak = max((m for m in rows if m.size_bytes == largest), key=lambda m: m.busbw_mbps)
        out["observed_run"].append(
            (run, first.tool, first.operation, len(gpus), len(nodes), gpus[0], str(first.source))
        )
        out["observed_run_gpu"].extend((run, g) for g in gpus)
        out["observed_run_peak"].append((run, largest, _floor_mbps(peak.busbw_mbps), str(peak.source)))
        bad = [m for m in rows if m.wrong]
        if bad:
            worst = min(bad, key=lambda m: (m.size_bytes, m.source.line))
            wrong = worst.wrong or 0
            sizes = len({m.size_bytes for m in bad})
            out["observed_run_wrong"].append((run, sizes, worst.size_bytes, wrong, str(worst.source)))


def _run_key(m: BandwidthMeasurement) -> tuple[object, ...]:
    """nccl-tests: the rows of one run (file and the run's first line), collective and GPU set; nvbandwidth:
    one cell (its line and GPUs).

    Runs appended to one file stay apart: each nccl-tests invocation prints its own `# nThread ...` header
    and `# Avg bus bandwidth` summary, so merging them would let a faster run's peak hide a slower one.
    Within one run several rows share a size (`-d all`, `-o all`: one row per datatype or operation), and
    the run's best of them is its peak.

    A run is named by its first row's file:line (nvbandwidth: and the cell's last GPU, as one line
    holds a row of cells).
    """
    if m.tool == "nccl-tests":
        return (m.tool, m.source.file, m.run_line, m.operation, m.gpus)
    return (m.tool, m.source, m.operation, m.gpus)


def sort_key(row: Sequence[str | int]) -> tuple[str, ...]:
    """Rows in a stable order (numbers by value): as verifier.facts.observed sorts them."""
    return tuple(f"{v:020d}" if isinstance(v, int) else v for v in row)
