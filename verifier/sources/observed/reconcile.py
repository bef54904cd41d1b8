"""`topolog reconcile INVENTORY --observed DIR`: what the hardware's tools say that the inventory does not.

Observations are paired with declared GPUs by identity (identity.py: uuid, serial, PCI bus id, host
and index; never by position alone). Reported, each with the inventory's line and the tool's:

- a host with observations that the inventory does not declare;
- an observed GPU that matches no declared GPU, and a declared GPU missing from its node's GPU listing
  or that its driver lost (nvidia-smi could not open it);
- for a matched GPU: its model (the product name the driver prints, mapped through the catalogue's
  device names; a name the catalogue does not know is not compared), its identity labels (uuid, serial,
  pci_bus_id) where the inventory writes one that the tool contradicts, the PCIe generation and width
  the link can reach against its declared link, and its active scale-up links against those declared.

Whether a difference is a fault is the checks' to say (verify --observed); this lists them all.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from verifier.core.errors import SourceLocation
from verifier.sources.importers.gpu_names import model_for_product
from verifier.sources.importers.reconcile import Disagreement
from verifier.sources.inventory.model import Inventory, Link
from verifier.sources.observed.identity import Matcher, MatchSettings, resolve_ref
from verifier.sources.observed.listing import LISTING_FORMATS, UNTIED, judge, numbered
from verifier.sources.observed.model import GpuObservation, Observations, normalise_pci_bus_id
from verifier.sources.observed.nvlink_text import ALL_LINKS

_SCALEUP = frozenset({"nvlink", "nvswitch", "xgmi"})


def _gpu_links(inventory: Inventory) -> dict[str, list[Link]]:
    out: dict[str, list[Link]] = defaultdict(list)
    objects = inventory.objects
    for lk in inventory.links.values():
        for end in (lk.a, lk.b):
            o = objects.get(end)
            if o is not None and o.kind == "gpu":
                out[end].append(lk)
    return out


def _label(g: GpuObservation) -> str:
    names = ", ".join(n for n in (g.pci_bus_id, g.uuid) if n)
    return f"GPU {g.index} ({names})" if g.index is not None else f"GPU ({names})"


def reconcile_observed(
    inventory: Inventory, observations: Observations, settings: MatchSettings | None = None
) -> list[Disagreement]:
    """Every difference between the inventory and the observations, sorted."""
    matcher = Matcher(inventory, settings)
    objects = inventory.objects
    where_inventory = SourceLocation(inventory.files[0] if inventory.files else "inventory")
    out: list[Disagreement] = []
    # Numbered and judged as verify numbers and judges them (listing.py): a listing short of its count (OBS009) or
    # renumbered (OBS014) is one line for its node, and its GPUs no key ties are not each "not declared".
    observations = numbered(observations, matcher)
    in_files: dict[str, list[GpuObservation]] = defaultdict(list)
    for g in observations.gpus:
        in_files[g.source.file].append(g)
    # Each full GPU listing is compared on its own (as verify's OBS006): a GPU one listing of its node leaves
    # out is missing from that listing even where another file of the node shows it.
    listings: dict[str, list[str]] = defaultdict(list)
    unjudged: set[str] = set()  # short or renumbered: its GPUs' want of a key is said once, for the node
    for f in observations.files:
        if f.host is None:
            continue
        node = matcher.node(f.host)
        if node is None:
            out.append(
                Disagreement(f.host, "host", "not declared", "observed", where_inventory, SourceLocation(f.path))
            )
            continue
        declared = len(matcher.declared_gpus(node))
        verdict = judge(f, in_files[f.path], declared, matcher, node)
        if verdict is None or verdict.kind == "tied":
            if (f.format in LISTING_FORMATS and not f.partial) or verdict is not None:
                listings[node].append(f.path)
            continue
        unjudged.add(f.path)
        if verdict.kind == "short":
            said = f"{verdict.listed} of the {verdict.count} GPUs {verdict.words}"
        else:
            said = f"{verdict.listed} of the {verdict.count} GPUs it declares, {verdict.words}: {UNTIED}"
        where = SourceLocation(f.path)
        out.append(Disagreement(node, "GPU listing", f"{declared} GPUs declared", said, objects[node].loc, where))
    links_of = _gpu_links(inventory)
    seen: set[tuple[str, str]] = set()  # (declared GPU, file that shows it)
    by_host: dict[str, list[GpuObservation]] = defaultdict(list)
    for g in observations.gpus:
        by_host[g.host].append(g)
    for g in observations.gpus:
        node = matcher.node(g.host)
        if node is None:
            continue
        m = matcher.match_gpu(node, g)
        if m.gpu is None and m.key is None and g.source.file in unjudged:
            continue
        if m.gpu is None:
            out.append(Disagreement(node, "GPU", "not declared", _label(g), objects[node].loc, g.source))
            continue
        seen.add((m.gpu, g.source.file))
        out.extend(_compare_gpu(m.gpu, g, inventory, links_of.get(m.gpu, [])))
    for node, files in sorted(listings.items()):
        for gpu in matcher.declared_gpus(node):
            for file in files:
                if (gpu.id, file) not in seen:
                    out.append(
                        Disagreement(gpu.id, "GPU", "declared", "not in the GPU listing", gpu.loc, SourceLocation(file))
                    )
    out.extend(_scaleup(matcher, observations, by_host, links_of, inventory))
    return sorted(set(out))


def _compare_gpu(gpu: str, g: GpuObservation, inventory: Inventory, links: list[Link]) -> list[Disagreement]:
    obj = inventory.objects[gpu]
    out: list[Disagreement] = []
    if g.lost is not None:  # nvidia-smi could not open it: nothing else of it was printed
        out.append(Disagreement(gpu, "GPU", "declared", f"lost by its driver ({g.lost})", obj.loc, g.source))
    seen_model = model_for_product(g.model) if g.model else None
    if obj.model and seen_model and seen_model != obj.model:
        out.append(Disagreement(gpu, "model", obj.model, f"{seen_model} ({g.model})", obj.loc, g.source))
    stated = {"uuid": g.uuid, "serial": g.serial, "pci_bus_id": g.pci_bus_id}
    for key, value in stated.items():
        declared = obj.labels.get(key)
        if declared is None or value is None:
            continue
        same = (
            normalise_pci_bus_id(declared) == value
            if key == "pci_bus_id"
            else declared.strip().lower() == value.strip().lower()
        )
        if not same:
            out.append(Disagreement(gpu, key, declared, value, obj.loc, g.source))
    for lk in links:
        if lk.kind != "pcie":
            continue
        for attr, seen in (("generation", g.pcie_gen_max), ("lanes", g.pcie_width_max)):
            declared_value = lk.attrs.get(attr)
            if declared_value is not None and seen is not None and declared_value != seen:
                what = f"PCIe {attr} the link reaches"
                out.append(Disagreement(gpu, what, str(declared_value), str(seen), lk.loc, g.source))
    return out


def _scaleup(
    matcher: Matcher,
    observations: Observations,
    by_host: dict[str, list[GpuObservation]],
    links_of: dict[str, list[Link]],
    inventory: Inventory,
) -> Iterable[Disagreement]:
    # One (gpu, kind, link) is one link however many files or lines report it (a copy of `nvidia-smi nvlink -s`
    # beside it doubled every count); where reports disagree the inactive one stands, and a GPU reported with
    # all its links inactive (ALL_LINKS) has none active: as verify's facts count them.
    up: dict[tuple[str, str, int], int] = {}
    all_down: set[tuple[str, str]] = set()
    first: dict[str, SourceLocation] = {}
    for lk in observations.links:
        node = matcher.node(lk.host)
        if node is None:
            continue
        gpu = matcher.match(node, resolve_ref(lk.gpu, by_host.get(lk.host, ()))).gpu
        if gpu is None:
            continue
        first.setdefault(gpu, lk.source)
        if lk.link == ALL_LINKS:
            all_down.add((gpu, lk.kind))
        key = (gpu, lk.kind, lk.link)
        up[key] = min(up.get(key, 1), 1 if lk.state == "active" else 0)
    active: dict[str, int] = defaultdict(int)
    for (gpu, kind, _link), a in up.items():
        if a and (gpu, kind) not in all_down:
            active[gpu] += 1
    for gpu, where in sorted(first.items()):
        links = links_of.get(gpu, [])
        declared = sum(lk.attrs.get("count", 1) for lk in links if lk.kind in _SCALEUP and lk.state != "down")
        if declared != active[gpu]:
            loc = inventory.objects[gpu].loc
            yield Disagreement(gpu, "active scale-up links", str(declared), str(active[gpu]), loc, where)
