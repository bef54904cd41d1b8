"""Observations as rows of the observed relations declared in rules/observed/lib/observed_schema.dl.

Each observation is first matched to the declared GPU it describes (verifier.sources.observed.identity);
what matches nothing becomes an `observed_unmatched` row, never a guess. Every row carries `where`,
the observation's file:line, so a finding points at the tool output as well as at the inventory.

A file older than the `observed_max_age_s` threshold at `now` is stale: it is reported
(`observed_stale`) and nothing else of it is trusted (no row but that one and `observed_node`).
A file that states no time is judged on what it says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from verifier.sources.inventory.model import Inventory
from verifier.sources.inventory.software import release_number
from verifier.sources.observed.identity import Matcher, MatchSettings, resolve_ref, same_gpu
from verifier.sources.observed.listing import BARE_NUMBERS, LISTING_FORMATS, UNTIED, judge, numbered
from verifier.sources.observed.model import (
    DIAG_FAILED,
    UNKNOWN_RECOVERY,
    CounterObservation,
    GpuObservation,
    Observations,
)
from verifier.sources.observed.nvlink_text import ALL_LINKS

Row = tuple[str | int, ...]

MAX_AGE_KEY = "observed_max_age_s"

OBSERVED_RELATIONS: frozenset[str] = frozenset(
    {
        "observed_node",
        "observed_unknown_host",
        "observed_stale",
        "observed_listing",
        "observed_listing_short",
        "observed_listing_renumbered",
        "observed_gpu",
        "observed_listed_in",
        "observed_unmatched",
        "observed_pcie_gen",
        "observed_pcie_width",
        "observed_busy",
        "observed_scaleup_link",
        "observed_scaleup_links",
        "observed_count",
        "observed_flag",
        "observed_xid",
        "observed_diag_failed",
        "observed_recovery_other",
        "observed_fabric",
        "observed_gpu_lost",
        "observed_driver",
        "observed_slowdown",
    }
)
"""Every relation emitted (all present, possibly empty)."""

_INT64_MAX = 2**63 - 1
RETIRED_PAGES_LIMIT = 63
"""Retired pages at which DCGM's health watch fails a GPU's memory (rules/observed/lib/out_of_service.dl says why)."""


@dataclass(frozen=True)
class ObservedSettings:
    """How observations are judged: identity keys, and the time their age is measured at."""

    match: MatchSettings = field(default_factory=MatchSettings)
    now: datetime | None = None
    """None: the clock when the facts are made."""


def _gpu_label(g: GpuObservation) -> str:
    names = [n for n in (g.pci_bus_id, g.uuid) if n]
    index = f"GPU {g.index} " if g.index is not None else "GPU "
    return f"{index}({', '.join(names)})" if names else index.strip()


def observed_facts(
    inventory: Inventory,
    observations: Observations,
    thresholds: Mapping[str, int],
    settings: ObservedSettings | None = None,
) -> dict[str, list[Row]]:
    """Rows per observed relation, in the order the observations were read (deterministic)."""
    settings = settings or ObservedSettings()
    now = settings.now or datetime.now(UTC)
    max_age = thresholds.get(MAX_AGE_KEY)
    out: dict[str, list[Row]] = {name: [] for name in OBSERVED_RELATIONS}
    matcher = Matcher(inventory, settings.match)
    node = matcher.node
    observations = numbered(observations, matcher)
    # Renumbered listings (device minor numbers past their count, or an NVML count short of the declaration)
    # showing fewer GPUs than their node declares (listing.judge): file -> (node, listed, declared, how the file
    # numbers its GPUs, why). `renumbered` holds those not tied by uuid, serial or PCI bus id (OBS014 whatever else
    # is read); `tied_renumbered` those tied GPU by GPU, an OBS014 only where another file names a fault by a bare
    # GPU number there (review R-RT2's open item: it was an OBS005 warning and every GPU stayed placeable). And the
    # faults reported on the GPUs of those nodes that nothing ties to a declared GPU (the finding's evidence, never
    # dropped as unmatched).
    renumbered: dict[str, tuple[str, int, int, str, str]] = {}
    tied_renumbered: dict[str, tuple[str, int, int, str, str]] = {}
    untied_faults: dict[str, list[str]] = {}
    ecc_max = thresholds.get("observed_ecc_uncorrectable_max", 0)
    stale: set[str] = set()
    short: set[str] = set()  # listings of fewer GPUs than attached (or declared, amd-smi): OBS009 speaks for them
    in_files: dict[str, list[GpuObservation]] | None = None

    def _in_file(path: str) -> list[GpuObservation]:
        nonlocal in_files
        if in_files is None:
            in_files = {}
            for g in observations.gpus:
                in_files.setdefault(g.source.file, []).append(g)
        return in_files.get(path, [])

    for f in observations.files:
        n = node(f.host) if f.host is not None else None
        if f.host is not None and n is None:
            out["observed_unknown_host"].append((f.host, f.path))
            continue
        if n is None:
            continue
        out["observed_node"].append((n, f.path))
        if f.observed_at is not None and max_age is not None:
            at = f.observed_at if f.observed_at.tzinfo is not None else f.observed_at.replace(tzinfo=UTC)
            age = int((now - at).total_seconds())
            if age > max_age:
                stale.add(f.path)
                shown = at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                out["observed_stale"].append((n, f.path, shown, min(age, _INT64_MAX), max_age))
                continue
        release = release_number(f.driver) if f.driver is not None else None
        if f.driver is not None and release is not None:  # a version not of 1-3 plain numbers is not compared
            out["observed_driver"].append((n, f.driver, release, f.path))
        if f.format not in LISTING_FORMATS and f.note is None:
            continue
        verdict = judge(f, _in_file(f.path), len(matcher.declared_gpus(n)), matcher, n)
        if verdict is None:
            if f.format in LISTING_FORMATS and not f.partial:
                out["observed_listing"].append((n, f.path))
        elif verdict.kind == "short":
            out["observed_listing_short"].append(
                (n, f.path, verdict.listed, min(verdict.count, _INT64_MAX), verdict.words)
            )
            short.add(f.path)
        elif verdict.kind == "tied":
            # Each GPU shown is tied to its declared GPU by a key: the declared GPUs it does not show are missing
            # from it (OBS006); the file of a container given some GPUs is no state of the node's others.
            out["observed_listing"].append((n, f.path))
            tied_renumbered[f.path] = (n, verdict.listed, verdict.count, verdict.words, BARE_NUMBERS)
        else:
            # Which declared GPU each shown one is, and which are gone, is not known (an index would be the
            # container's or the renumbered one): the node is one error and placement takes none of its GPUs.
            renumbered[f.path] = (n, verdict.listed, verdict.count, verdict.words, UNTIED)
            short.add(f.path)

    def trusted(file: str) -> bool:
        return file not in stale

    def fresh(at: datetime | None) -> bool:
        """Whether a sample stating its own time is young enough to judge, in a file stale at its oldest sample."""
        if at is None or max_age is None:
            return False
        return int((now - (at if at.tzinfo is not None else at.replace(tzinfo=UTC))).total_seconds()) <= max_age

    notes = {f.path: f.note for f in observations.files if f.note is not None}
    renumbered_nodes = {v[0] for v in renumbered.values()}
    tied_nodes = {v[0] for v in tied_renumbered.values()} - renumbered_nodes
    by_host: dict[str, list[GpuObservation]] = {}
    for g in observations.gpus:
        by_host.setdefault(g.host, []).append(g)
    # Files whose lost GPU no declared GPU is known to be (OBS010): its line left the other blocks without an
    # index (file partial), so where the node declares no other key they state, each would be "unmatched" for
    # the one cause OBS010 names (and for which placement drains the node).
    untied = {
        g.source.file
        for g in observations.gpus
        if g.lost is not None and (n := node(g.host)) is not None and matcher.match_gpu(n, g).gpu is None
    }
    for g in observations.gpus:
        n = node(g.host)
        if n is None or not trusted(g.source.file):
            continue
        where = str(g.source)
        m = matcher.match_gpu(n, g)
        if m.key == "index" and n in renumbered_nodes and g.minor_number is None and g.source.file not in renumbered:
            # A GPU number of another listing of a node OBS014 reports (nvidia-smi --query-gpu's index, NVML's:
            # renumbered as that listing is) is no declared index: its faults are that finding's evidence (review
            # R-RT2: a pending remapping there was put on the GPU below its own).
            _add_faults(untied_faults.setdefault(n, []), _gpu_faults(g, ecc_max), _gpu_label(g), where)
            continue
        if m.key == "index" and n in tied_nodes and g.minor_number is None and g.source.file not in tied_renumbered:
            # Likewise beside a renumbered listing tied GPU by GPU: NVML's index is no declared index there. A fault
            # of it is an OBS014 of the node (no GPU of it placed). A GPU without one says nothing of the node: the
            # tied listing already judges each GPU, and an OBS005 per row of a healthy monitoring log (`--query-gpu
            # =timestamp,index,temperature.gpu -l 1`) would be one warning per GPU for the one cause OBS006 names
            # (review R-OB63).
            faults = _gpu_faults(g, ecc_max)
            if faults:
                _add_faults(untied_faults.setdefault(n, []), faults, _gpu_label(g), where)
            continue
        if m.gpu is None:
            if g.source.file in renumbered:
                _add_faults(untied_faults.setdefault(n, []), _gpu_faults(g, ecc_max), _device(g), where)
            if g.lost is not None:
                # A GPU the driver lost is an error of its node even where no declared GPU is known to be it
                # (OBS010), not an unmatched device's warning.
                out["observed_gpu_lost"].append((n, _gpu_label(g), g.lost, where))
            # A short listing's GPUs have no index; where the node declares no other key they
            # state, each would be "unmatched" for the one cause OBS009 already names.
            # A block the lost line left without an index only: one whose index was printed (the lost line named
            # its GPU by index) is unmatched for the inventory's keys, not for the lost GPU, and stays OBS005.
            elif not (m.key is None and (g.source.file in short or (g.source.file in untied and g.index is None))):
                why = m.why or ""
                if m.key is None and g.renumbered:  # no index for the reason its file gives (a container's view)
                    why = f"{why}; {notes.get(g.source.file) or 'its tool does not number GPUs as the host does'}"
                out["observed_unmatched"].append((n, _gpu_label(g), why, where))
            continue
        gpu = m.gpu
        out["observed_gpu"].append((gpu, m.key or "", where))
        out["observed_listed_in"].append((gpu, g.source.file))
        if g.lost is not None:
            out["observed_flag"].append((gpu, "lost", where))
            continue  # nothing else of it was printed
        if g.pcie_gen_current is not None and g.pcie_gen_max is not None:
            out["observed_pcie_gen"].append((gpu, g.pcie_gen_current, g.pcie_gen_max, where))
        if g.pcie_width_current is not None and g.pcie_width_max is not None:
            out["observed_pcie_width"].append((gpu, g.pcie_width_current, g.pcie_width_max, where))
        if g.utilization_percent is not None:
            out["observed_busy"].append((gpu, g.utilization_percent, where))
        counts = {
            "ecc_uncorrectable_volatile": g.ecc_uncorrectable_volatile,
            "ecc_uncorrectable_aggregate": g.ecc_uncorrectable_aggregate,
            "retired_pages": g.retired_pages,
            "remapped_rows_uncorrectable": g.remapped_rows_uncorrectable,
        }
        out["observed_count"].extend((gpu, k, min(v, _INT64_MAX), where) for k, v in counts.items() if v is not None)
        flags = {
            "remapped_rows_failed": g.remapped_rows_failed,
            "remapped_rows_pending": g.remapped_rows_pending,
            "retired_pages_pending": g.retired_pages_pending,
        }
        out["observed_flag"].extend((gpu, k, where) for k, v in flags.items() if v)
        if g.recovery_action is not None and g.recovery_action.startswith(UNKNOWN_RECOVERY):
            printed = g.recovery_action[len(UNKNOWN_RECOVERY) :]
            reason = (
                f"its driver asks for a recovery topolog does not know: '{printed}' (nvidia-smi: GPU Recovery Action; "
                "any action but None asks for one before the GPU is used)"
            )
            out["observed_recovery_other"].append((gpu, reason, where))
        elif g.recovery_action is not None:
            out["observed_flag"].append((gpu, f"recovery_{g.recovery_action}", where))
        if g.fabric_state is not None:
            out["observed_fabric"].append((gpu, g.fabric_state, g.fabric_status or "", where))
        slowdown = _slowdown(g.throttle_reasons)
        if slowdown:
            out["observed_slowdown"].append((gpu, slowdown, where))

    def ref_gpu(ref_host: str, values: dict[str, str | int | None]) -> tuple[str | None, str | None, str]:
        n = node(ref_host)
        if n is None:
            return None, None, ""
        m = matcher.match(n, values)
        return n, m.gpu, m.why or ""

    links_down: dict[tuple[str, str], list[int | str]] = {}  # (node, device) -> [inactive links, first where]
    for lk in observations.links:
        if not trusted(lk.source.file):
            continue
        values = resolve_ref(lk.gpu, by_host.get(lk.host, ()))
        ln, lgpu, why = ref_gpu(lk.host, values)
        where = str(lk.source)
        if ln is None:
            continue
        if lgpu is None:
            if ln in renumbered_nodes and lk.gpu.index is not None and values["index"] is None:
                # A GPU number no index for OBS014's reason, which drains the node: an inactive link is evidence.
                if lk.state != "active":
                    tied = same_gpu(lk.gpu, by_host.get(lk.host, ()))
                    device = _device(tied) if tied is not None else f"GPU {lk.gpu.index} of its tool"
                    down = links_down.setdefault((ln, device), [0, where])
                    down[0] = int(down[0]) + (1 if lk.link != ALL_LINKS else 0)
                continue
            if ln in tied_nodes and lk.gpu.index is not None and values["index"] is None and lk.state != "active":
                # Beside a listing tied GPU by GPU (tied_renumbered), an inactive link of a bare GPU number is a
                # fault of a GPU not known: OBS014's evidence, not a warning that leaves every GPU placeable.
                down = links_down.setdefault((ln, f"GPU {lk.gpu.index} of its tool"), [0, where])
                down[0] = int(down[0]) + (1 if lk.link != ALL_LINKS else 0)
                continue
            if same_gpu(lk.gpu, by_host.get(lk.host, ())) is None:  # else that GPU's own row says it
                out["observed_unmatched"].append((ln, f"GPU {lk.gpu}", why, where))
            continue
        active = 1 if lk.state == "active" else 0
        out["observed_scaleup_link"].append((lgpu, lk.kind, lk.link, active, lk.speed_mbps or 0, where))
    out["observed_scaleup_link"] = _one_per_link(out["observed_scaleup_link"])
    out["observed_scaleup_links"] = _link_summary(out["observed_scaleup_link"])
    for c in observations.counters:
        if not trusted(c.source.file) and not fresh(c.observed_at):
            # A stale file's samples are not judged, except those that state a time of their own within the age
            # (dcgm-exporter scrapes of different times in one file: one old sample must not hide a fresh XID).
            continue
        values = resolve_ref(c.gpu, by_host.get(c.host, ()))
        cn, cgpu, why = ref_gpu(c.host, values)
        if cn is None or cgpu is None:
            dropped = cn in renumbered_nodes and c.gpu.index is not None and values["index"] is None
            bare = cn in tied_nodes and c.gpu.index is not None and values["index"] is None
            if bare and isinstance(c.value, int) and (faults := _counter_fault(c, ecc_max)):
                # A fault named by a bare GPU number beside a listing tied GPU by GPU (review R-RT2's open item: an
                # OBS005 warning, and the failing GPU stayed placeable): OBS014's evidence, the node drained.
                _add_faults(
                    untied_faults.setdefault(str(cn), []), faults, f"GPU {c.gpu.index} of its tool", str(c.source)
                )
            elif dropped and isinstance(c.value, int):
                # A bare GPU number of the host's other file, no index for OBS014's reason: its fault is evidence.
                tied = same_gpu(c.gpu, by_host.get(c.host, ()))
                device = _device(tied) if tied is not None else f"GPU {c.gpu.index} of its tool"
                _add_faults(untied_faults.setdefault(str(cn), []), _counter_fault(c, ecc_max), device, str(c.source))
            elif cn is not None and same_gpu(c.gpu, by_host.get(c.host, ())) is None:
                out["observed_unmatched"].append((cn, f"GPU {c.gpu}", why, str(c.source)))
            continue
        if not isinstance(c.value, int):
            continue  # a fractional sample is not a count: no judged metric is one
        if c.metric == DIAG_FAILED:
            out["observed_diag_failed"].append((cgpu, dict(c.labels)["reason"], str(c.source)))
            continue
        if c.metric == "DCGM_FI_DEV_XID_ERRORS":
            if c.value:
                out["observed_xid"].append((cgpu, c.value, str(c.source)))
            continue
        link = dict(c.labels).get("link")
        name = c.metric if link is None else f"{c.metric} link {link}"
        out["observed_count"].append((cgpu, name, min(c.value, _INT64_MAX), str(c.source)))
    for (ln, device), (count, first) in links_down.items():
        said = f"{count} NVLink{'s' if count != 1 else ''} inactive" if count else "all its NVLinks inactive"
        _add_faults(untied_faults.setdefault(ln, []), [said], device, str(first))
    # One finding per node (one cause; its faults are the node's, from every file): the first such listing read
    # speaks for it and names the node's other renumbered listings (review R-RT2: each file was one OBS014, each
    # naming every fault of the node).
    # A node whose renumbered listings are all tied GPU by GPU is reported only for faults named by a bare number.
    speaking = {**renumbered, **{p: v for p, v in tied_renumbered.items() if untied_faults.get(v[0])}}
    also: dict[str, list[str]] = {}
    for path, (rn, *_) in speaking.items():
        if rn not in renumbered_nodes or path in renumbered:
            also.setdefault(rn, []).append(path)
    for path, (rn, listed, declared, numbers, why) in speaking.items():
        first, *others = also.get(rn, [""])
        if path != first:
            continue
        faults = untied_faults.get(rn, [])
        named = f"{path} (and {', '.join(others)}, renumbered too)" if others else path
        out["observed_listing_renumbered"].append(
            (rn, named, listed, declared, numbers, why, "; ".join(faults) if faults else "none")
        )
    for name, rows in out.items():
        # In the order read (files by path, each file top to bottom): deterministic, and a fleet's million
        # rows are not sorted (no engine's answer depends on row order).
        out[name] = _first_per_key(rows) if name in _ONE_PER_KEY else list(dict.fromkeys(rows))
    return out


_SLOWDOWNS = (
    ("hw_thermal_slowdown", "hardware thermal slowdown"),
    ("hw_power_brake_slowdown", "hardware power brake"),
    ("sw_thermal_slowdown", "software thermal slowdown"),
)


def _slowdown(reasons: tuple[str, ...]) -> str:
    """The clock-event reasons that say the GPU's clocks are cut for its temperature or power supply, in
    words ("" when none): HW Slowdown (the parent of the thermal and power-brake kinds, named alone where
    the tool names no kind) and SW Thermal Slowdown. The power cap, idle and application clocks are
    settings or load, not faults.
    """
    kinds = [words for name, words in _SLOWDOWNS if name in reasons]
    if not kinds and "hw_slowdown" in reasons:
        kinds = ["hardware slowdown"]
    return ", ".join(kinds)


def _one_per_link(links: list[Row]) -> list[Row]:
    """One row per (gpu, kind, link): a link is one link however many files or lines report it.

    Two files of one host may describe the same GPU's links (a copy of the file beside it, `nvidia-smi nvlink -s`
    saved twice, a second block for one GPU); counted row by row, a GPU's 18 links read twice counted 36, and a
    short GPU looked whole. Where the reports disagree, the worse one stands (inactive before active, the
    slower speed before the faster; the first read among equals), never silently the better. A GPU reported
    with all its links inactive (`ALL_LINKS`) in any file has no active link: its links read active elsewhere
    are left out.
    """
    worst: dict[tuple[str | int, ...], Row] = {}
    all_down: set[tuple[str | int, str | int]] = set()
    for row in links:
        if row[2] == ALL_LINKS:
            all_down.add((row[0], row[1]))
        key = row[:3]
        kept = worst.get(key)
        if kept is None or (row[3], row[4]) < (kept[3], kept[4]):
            worst[key] = row
    return [r for r in worst.values() if r[3] == 0 or (r[0], r[1]) not in all_down]


def _link_summary(links: list[Row]) -> list[Row]:
    """Per (gpu, kind): active links, links reported, and where the first inactive (else first) one is.

    `links` holds one row per link (`_one_per_link`).
    """
    found: dict[tuple[str | int, str | int], list[Row]] = {}
    for row in links:
        found.setdefault((row[0], row[1]), []).append(row)
    out: list[Row] = []
    for (gpu, kind), rows in found.items():
        inactive = [r for r in rows if r[3] == 0]
        where = (inactive or rows)[0][5]
        out.append((gpu, kind, sum(1 for r in rows if r[3] == 1), len(rows), where))
    return out


_ONE_PER_KEY = frozenset({"observed_unmatched", "observed_xid", "observed_count"})
"""Relations whose rows differ only by `where` when one GPU is named in several lines (every link of
an unmatched GPU, every MIG instance's copy of a GPU metric): one row each, at its first line."""


def _first_per_key(rows: list[Row]) -> list[Row]:
    first: dict[Row, Row] = {}
    for row in rows:
        first.setdefault(row[:-1], row)
    return list(first.values())


def _device(g: GpuObservation) -> str:
    """A GPU no declared one is known to be, by its device node and bus id (or UUID): what OBS014's gaps speak of."""
    name = g.pci_bus_id or g.uuid
    if g.minor_number is None and g.position is not None:  # a --query-gpu row unnumbered (NVML's index, no minor)
        return f"GPU {g.position} of its listing" + (f" ({name})" if name else "")
    if g.minor_number is None:
        return _gpu_label(g)
    return f"/dev/nvidia{g.minor_number}" + (f" ({name})" if name else "")


def _add_faults(into: list[str], faults: list[str], device: str, where: str) -> None:
    text = f"{device}: {', '.join(faults)} (at {where})" if faults else ""
    if text and text not in into:
        into.append(text)


def _gpu_faults(g: GpuObservation, ecc_max: int) -> list[str]:
    """The faults a GPU's own report states that take a GPU out of service (rules/observed/lib/out_of_service.dl),
    in words, for a GPU no declared one is known to be (OBS014's evidence).
    """
    found: list[str] = []
    if g.lost is not None:
        found.append(f"its driver cannot open it ({g.lost})")
    if g.ecc_uncorrectable_volatile is not None and g.ecc_uncorrectable_volatile > ecc_max:
        found.append(f"{g.ecc_uncorrectable_volatile} uncorrectable ECC errors since the driver loaded")
    if g.remapped_rows_failed:
        found.append("row remapping failed")
    if g.remapped_rows_pending:
        found.append("a row remapping is pending")
    if g.retired_pages_pending:
        found.append("a page retirement is pending")
    if g.retired_pages is not None and g.retired_pages >= RETIRED_PAGES_LIMIT:
        found.append(f"{g.retired_pages} retired memory pages")
    if g.recovery_action is not None:
        printed = g.recovery_action.removeprefix(UNKNOWN_RECOVERY)
        found.append(f"recovery action {printed}")
    if g.fabric_state is not None and (g.fabric_state != "Completed" or g.fabric_status not in (None, "", "Success")):
        found.append(f"NVLink fabric {g.fabric_state} {g.fabric_status or ''}".strip())
    return found


_COUNTER_FAULTS = {
    "DCGM_FI_DEV_ROW_REMAP_PENDING": "a row remapping is pending",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": "row remapping failed",
    "DCGM_FI_DEV_RETIRED_PENDING": "a page retirement is pending",
}


def _counter_fault(c: CounterObservation, ecc_max: int) -> list[str]:
    """The fault a counter of another tool states on a GPU it names by a bare number (OBS014's evidence)."""
    if c.metric == DIAG_FAILED:
        return [f"diagnostic failed: {dict(c.labels)['reason']}"]
    if c.metric == "DCGM_FI_DEV_XID_ERRORS" and c.value:
        return [f"XID {c.value}"]
    if c.metric == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" and isinstance(c.value, int) and c.value > ecc_max:
        return [f"{c.value} uncorrectable ECC errors since the driver loaded"]
    if c.metric in _COUNTER_FAULTS and isinstance(c.value, int) and c.value > 0:
        return [_COUNTER_FAULTS[c.metric]]
    return []
