"""Which declared inventory object each observation describes: by identity, never by position alone.

A host is a node whose id is the host name (or, for a fully qualified name, its first label).
Within a node, a GPU is matched by the first key of `MatchSettings.keys` that both sides state:

- `uuid`: the GPU's `uuid` label (nvidia-smi's `GPU-...`, compared without case);
- `serial`: the GPU's `serial` label (the board serial nvidia-smi prints);
- `pci_bus_id`: the GPU's `pci_bus_id` label, any spelling (`0000:1b:00.0`, `00000000:1B:00.0`);
- `index`: the GPU's position in its node's `gpu{i}` list (its `{i}`) or its `index` label, against
  the tool's GPU index (nvidia-smi's and DCGM's, which enumerate by PCI bus id).

A key the node's GPUs declare decides: a UUID the node does not declare is an unmatched GPU, never
re-tried by index (a swapped board must not pass for the old one). `--observed-match` chooses the
keys and their order (docs/observed.md). Observations of links and counters name their GPU by
what their tool prints; they are first tied to the same host's GPU observation that shares a UUID,
PCI bus id or (with nothing else) index, and matched through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.inventory.model import Inventory, Obj
from verifier.sources.observed.model import GpuObservation, GpuRef, normalise_pci_bus_id
from verifier.sources.observed.names import MATCH_KEYS

KEYS: tuple[str, ...] = MATCH_KEYS
"""Every identity key, in the default order."""


@dataclass(frozen=True)
class MatchSettings:
    keys: tuple[str, ...] = KEYS

    @classmethod
    def parse(cls, text: str) -> MatchSettings:
        """`uuid,pci_bus_id` etc.; TopologError naming the option for an unknown or repeated key."""
        keys = tuple(k.strip() for k in text.split(",") if k.strip())
        bad = [k for k in keys if k not in KEYS]
        if bad or not keys or len(set(keys)) != len(keys):
            raise TopologError.at(
                SourceLocation("--observed-match"),
                f"{text!r} is not a list of identity keys; expected some of {', '.join(KEYS)}, comma-separated, "
                "each once (e.g. uuid,pci_bus_id,index)",
            )
        return cls(keys)


def _norm(key: str, value: str | int | None) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    if key == "uuid":
        return text.lower() or None
    if key == "pci_bus_id":
        return normalise_pci_bus_id(text)
    return text or None


def _declared(gpu: Obj, key: str) -> str | None:
    if key == "index":
        if gpu.index is not None:
            return str(gpu.index)
        return _norm(key, gpu.labels.get("index"))
    return _norm(key, gpu.labels.get(key))


@dataclass
class _Node:
    gpus: list[Obj]
    tables: dict[str, dict[str, Obj]] = field(default_factory=dict)

    def table(self, key: str) -> dict[str, Obj]:
        found = self.tables.get(key)
        if found is None:
            found = {}
            for g in self.gpus:
                v = _declared(g, key)
                if v is not None:
                    found.setdefault(v, g)
            self.tables[key] = found
        return found


@dataclass(frozen=True)
class Match:
    """A declared GPU for an observation, the key that matched, or why none did."""

    gpu: str | None
    key: str | None
    why: str | None = None


class Matcher:
    """Matches observations of one inventory; built once, asked per observation."""

    def __init__(self, inventory: Inventory, settings: MatchSettings | None = None) -> None:
        self.settings = settings or MatchSettings()
        self.objects = inventory.objects
        self._nodes: dict[str, _Node] = {}
        self._lower: dict[str, str] | None = None
        self._gpus_of: dict[str, list[Obj]] | None = None
        self._node_of_host: dict[str, str | None] = {}

    def node(self, host: str) -> str | None:
        """The node a host name is, or None (remembered per host: every observation of a host asks)."""
        if host not in self._node_of_host:
            self._node_of_host[host] = self._find_node(host)
        return self._node_of_host[host]

    def _find_node(self, host: str) -> str | None:
        for name in (host, host.split(".", 1)[0]):
            o = self.objects.get(name)
            if o is not None and o.kind == "node":
                return name
        if self._lower is None:
            self._lower = {o.id.lower(): o.id for o in self.objects.values() if o.kind == "node"}
        return self._lower.get(host.lower()) or self._lower.get(host.split(".", 1)[0].lower())

    def _node(self, node: str) -> _Node:
        found = self._nodes.get(node)
        if found is None:
            if self._gpus_of is None:
                self._gpus_of = self._group_gpus()
            found = _Node(self._gpus_of.get(node, []))
            self._nodes[node] = found
        return found

    def _group_gpus(self) -> dict[str, list[Obj]]:
        return objects_by_node(self.objects, "gpu")

    def declared_gpus(self, node: str) -> Sequence[Obj]:
        return self._node(node).gpus

    def match(self, node: str, values: dict[str, str | int | None]) -> Match:
        """The declared GPU of `node` that `values` (identity key -> observed value) names."""
        table_of = self._node(node)
        for key in self.settings.keys:
            seen = _norm(key, values.get(key))
            if seen is None:
                continue
            table = table_of.table(key)
            if not table:
                continue  # the inventory states no such key for this node's GPUs
            gpu = table.get(seen)
            if gpu is None:
                return Match(None, key, f"{key} {values.get(key)} is not declared in {node}")
            return Match(gpu.id, key)
        stated = [k for k in self.settings.keys if values.get(k) is not None]
        return Match(None, None, f"no identity key it states ({', '.join(stated) or 'none'}) is declared in {node}")

    def match_gpu(self, node: str, gpu: GpuObservation) -> Match:
        return self.match(
            node, {"uuid": gpu.uuid, "serial": gpu.serial, "pci_bus_id": gpu.pci_bus_id, "index": gpu.index}
        )


def same_gpu(ref: GpuRef, host_gpus: Iterable[GpuObservation]) -> GpuObservation | None:
    """The same host's GPU observation a link's or counter's GPU is: the one sharing its UUID or PCI bus
    id, or (when it states neither) its index; None when there is none.
    """
    gpus = list(host_gpus)
    uuid = ref.uuid.lower() if ref.uuid else None
    for g in gpus:
        if (
            (uuid is not None and g.uuid is not None and g.uuid.lower() == uuid)
            or (ref.pci_bus_id is not None and g.pci_bus_id == ref.pci_bus_id)
            or (ref.serial is not None and g.serial == ref.serial)
        ):
            return g
    # A serial the host's listing does not show is another board than the one at that index: never tied by index.
    serials_shown = ref.serial is not None and any(g.serial is not None for g in gpus)
    if (
        uuid is None
        and ref.pci_bus_id is None
        and ref.index is not None
        and not serials_shown
        and not _renumbered(gpus)
    ):
        for g in gpus:
            if g.index == ref.index:
                return g
    return None


def _renumbered(gpus: Sequence[GpuObservation]) -> bool:
    return any(g.renumbered for g in gpus)


def resolve_ref(ref: GpuRef, host_gpus: Iterable[GpuObservation]) -> dict[str, str | int | None]:
    """The identity values of a link's or counter's GPU: its GPU observation's (same_gpu), else what it states."""
    gpus = host_gpus if isinstance(host_gpus, list | tuple) else list(host_gpus)  # read twice; no copy per link
    g = same_gpu(ref, gpus)
    if g is not None:
        return {"uuid": g.uuid, "serial": g.serial, "pci_bus_id": g.pci_bus_id, "index": g.index}
    index = ref.index
    if index is not None and _renumbered(gpus):
        # The host was observed from a container that numbers its GPUs from 0 (model.container_numbered): a bare
        # GPU number of another tool there (dcgmi's table, a dcgm-exporter `gpu` label) may be the container's,
        # so it is no host index; the GPU is matched by what else it states, or not at all (OBS005).
        index = None
    elif ref.serial is not None and any(h.index == index and h.serial is not None for h in gpus):
        # The host's listing shows another board at that number (same_gpu found none with this serial): the
        # tool's number is not the host's index here (DCGM in a container numbers the GPUs it is given), so the
        # declared GPU at that index is not this board (review R-RT: it was blamed for the failure).
        index = None
    return {"uuid": ref.uuid, "serial": ref.serial, "pci_bus_id": ref.pci_bus_id, "index": index}


def objects_by_node(objects: Mapping[str, Obj], kind: str) -> dict[str, list[Obj]]:
    """The objects of `kind` under each node (by node id), in inventory order; those under no node left out."""
    out: dict[str, list[Obj]] = {}
    for o in objects.values():
        if o.kind != kind:
            continue
        p = objects.get(o.parent) if o.parent is not None else None
        while p is not None and p.kind != "node":
            p = objects.get(p.parent) if p.parent is not None else None
        if p is not None:
            out.setdefault(p.id, []).append(o)
    return out
