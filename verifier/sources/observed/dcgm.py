"""dcgm-exporter metrics (Prometheus text exposition) as `CounterObservation`s.

Each sample line is parsed by the maintained Prometheus parser
(`prometheus_client.parser.text_string_to_metric_families`, Apache-2.0), one line at a time so that
every sample keeps its line number. The value is then taken exactly from the text the exporter
printed (the parser gives floats: 9223372036854775794, DCGM's "blank" sentinel, is not a float).

Only the metrics topolog judges are kept (JUDGED): keeping every gauge of a 16,384-node scrape
would cost memory for nothing. A judged sample whose value is not a finite decimal is refused.
Samples of MIG instances (`GPU_I_ID` label) describe the GPU too and are kept with their labels.
The GPU is named by the exporter's `gpu` (index), `UUID` and `pci_bus_id` labels; the host is the
file's place in the observation folder (docs/observed.md), as the `Hostname` label is the
exporter's own host name, which in Kubernetes is its pod's.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.observed.model import (
    CounterObservation,
    GpuRef,
    Observations,
    ObservedFile,
    exact_number,
    normalise_pci_bus_id,
)

FORMAT = "dcgm-exporter"
XID = "DCGM_FI_DEV_XID_ERRORS"
JUDGED: frozenset[str] = frozenset(
    {
        XID,  # gauge: the value of the last XID error seen (0: none)
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        "DCGM_FI_DEV_ROW_REMAP_PENDING",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_RETIRED_SBE",  # with _DBE: 63 retired pages fail DCGM's memory health (out_of_service.dl)
        "DCGM_FI_DEV_RETIRED_DBE",
        "DCGM_FI_DEV_RETIRED_PENDING",
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
    }
)
DCGM_BLANK_MIN = 9223372036854775792
"""DCGM writes "no value" as int64 sentinels from here up (DCGM_INT64_BLANK and neighbours): not a count."""


def looks_like(text: str) -> bool:
    """Whether `text` is a Prometheus exposition with DCGM metrics."""
    head = text[:65536]
    return "DCGM_FI_" in head and ("# TYPE DCGM_FI_" in head or "\nDCGM_FI_" in f"\n{head}")


def _value(line: str, has_timestamp: bool, loc: SourceLocation, name: str) -> int | Fraction | None:
    tokens = line.split()
    raw = tokens[-2] if has_timestamp else tokens[-1]
    value = exact_number(raw)
    if value is None:
        raise TopologError.at(loc, f"{name} has value {raw!r}; expected a finite decimal number")
    if value.denominator == 1:
        whole = int(value)
        return None if whole >= DCGM_BLANK_MIN else whole
    return value


_LATEST_MS = 253402300799999
"""The last millisecond of year 9999: a later sample time is no time a scrape was taken."""
_EARLIEST_MS = 1_000_000_000_000
"""2001-09-09T01:46:40Z, the first time of 13 digits in milliseconds: DCGM (2015 on) took no scrape before it, and
an earlier count is seconds (ten digits up to 2286) read as milliseconds."""


def _sample_time(line: str, loc: SourceLocation) -> datetime:
    """A sample's own time, where the exposition gives one (`NAME{...} VALUE TIMESTAMP`): milliseconds since the
    epoch, an integer (the Prometheus text format). A saved `/federate` answer or a file a collector wrote with its
    scrape times carries it; dcgm-exporter's own /metrics does not.
    """
    raw = line.split()[-1]
    if not (raw.isascii() and raw.isdigit()) or int(raw) > _LATEST_MS:
        raise TopologError.at(loc, f"sample time {raw!r}; expected milliseconds since 1970 as a whole number")
    if int(raw) < _EARLIEST_MS:
        # Seconds where milliseconds belong (OpenMetrics and most collectors count seconds) would date a scrape
        # of today to January 1970: stale by decades, its XIDs never judged (review R-RT).
        raise TopologError.at(
            loc, f"sample time {raw!r} is before 2001 in milliseconds; expected milliseconds since 1970 (13 digits)"
        )
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=int(raw))


def read(text: str, filename: str, host: str | None) -> Observations:
    """The judged DCGM samples of one scrape. TopologError with file:line on bad input."""
    if host is None:
        raise TopologError.at(
            SourceLocation(filename, 1), "put the dcgm-exporter file in a folder named for its host (docs/observed.md)"
        )
    out: list[CounterObservation] = []
    oldest: datetime | None = None  # the earliest time a judged sample states: the file is as old as that
    # Imported here: prometheus_client pulls in http.server and email, a fifth of every verify's start-up
    # when it sat at the top, though only --observed with a dcgm-exporter file needs it.
    from prometheus_client.parser import text_string_to_metric_families

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        loc = SourceLocation(filename, number)
        try:
            families = list(text_string_to_metric_families(line + "\n"))
        except ValueError as err:
            problem = f"not a Prometheus sample line ({err}); expected 'NAME{{labels}} VALUE'"
            raise TopologError.at(loc, problem) from None
        for family in families:
            for sample in family.samples:
                if sample.name not in JUDGED:
                    continue
                value = _value(line, sample.timestamp is not None, loc, sample.name)
                at = _sample_time(line, loc) if sample.timestamp is not None else None
                if at is not None:
                    oldest = at if oldest is None else min(oldest, at)
                if value is None:
                    continue
                labels = dict(sample.labels)
                index_text = labels.get("gpu")
                index = (
                    int(index_text)
                    if index_text is not None and index_text.isascii() and index_text.isdigit()
                    else None
                )
                bus = normalise_pci_bus_id(labels["pci_bus_id"]) if labels.get("pci_bus_id") else None
                uuid = labels.get("UUID") or None
                if index is None and uuid is None and bus is None:
                    raise TopologError.at(loc, f"{sample.name} names no GPU; expected a gpu, UUID or pci_bus_id label")
                ref = GpuRef(host=host, uuid=uuid, pci_bus_id=bus, index=index)
                # Each sample keeps its own time: a file of scrapes taken at different times is stale at its oldest
                # (OBS007), and its samples young enough are still judged (facts/observed.py, review R-RT).
                out.append(CounterObservation(loc, at, ref, sample.name, value, tuple(sorted(labels.items()))))
    if not out and not looks_like(text):
        raise TopologError.at(
            SourceLocation(filename, 1), "no DCGM_FI_* sample; expected dcgm-exporter's /metrics output"
        )
    return Observations(counters=tuple(out), files=(ObservedFile(filename, FORMAT, host, oldest),), hosts=(host,))
