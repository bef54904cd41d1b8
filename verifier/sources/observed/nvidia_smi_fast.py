"""The fast path of the `nvidia-smi -q -x` reader: the fields topolog reads, found by their tags.

A fleet's observations are one file per node: 16,384 files of ~90 KB for 131,072 GPUs. A tree built
for each costs about 7 ms a file (ElementTree; the located reader, nvidia_smi_xml, about 40 ms), more
than verifying the fleet itself. nvidia-smi writes its XML in one fixed layout (nvsmi_device_vNN.dtd:
every value a leaf `<tag>value</tag>`, every section opened and closed by name), so the fields are
found by their tags within their sections, in C (str.find, compiled patterns), without building a tree.

It reads only a file it can read exactly: a document that declares entities, is not closed, has a
section or a field it reads in any other shape (a leaf with children, a value it cannot parse) raises
`Unusual`, and the caller reads the file with the located reader instead, which gives the same
observations or a `file:line:col` error. What it does not read it does not check: a closed document whose
unread parts (clocks, temperatures, processes) are malformed is read for the fields it holds. Both read
every sample and fixture alike (tests/sources/observed/test_nvidia_readers.py).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache

from verifier.core.errors import SourceLocation
from verifier.sources.observed.model import GpuObservation, normalise_pci_bus_id

_UNKNOWN = frozenset({"", "n/a", "[n/a]", "not supported", "[not supported]", "unknown", "[unknown error]"})
_INT = re.compile(r"\s*(\d+)\s*(x|%)?\s*")
_GPU_OPEN = re.compile(r"<gpu(?:\s[^<>]*)?>")
_ID = re.compile(r'\sid="([^"<>]*)"')
_REASON = re.compile(r"<clocks_(?:event|throttle)_reason_(\w+)>([^<]*)</clocks_(?:event|throttle)_reason_\1>")
_UNCORRECTABLE = re.compile(r"<(\w*uncorrectable\w*)>([^<]*)</\1>")


class Unusual(Exception):
    """The file is not in the layout the fast path reads: read it with the located reader."""


@cache
def _leaf(tag: str) -> re.Pattern[str]:
    return re.compile(f"<{tag}>([^<]*)</{tag}>")


class _Span:
    """A section of the text: [start, end) between its opening and closing tags."""

    __slots__ = ("end", "start", "text")

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text, self.start, self.end = text, start, end

    def section(self, tag: str) -> _Span | None:
        opening = f"<{tag}>"
        i = self.text.find(opening, self.start, self.end)
        if i < 0:
            return None
        j = self.text.find(f"</{tag}>", i, self.end)
        if j < 0:
            raise Unusual(tag)
        return _Span(self.text, i + len(opening), j)

    def leaf(self, tag: str) -> str | None:
        """The text of the first `<tag>` leaf, None when absent or not known (N/A)."""
        i = self.text.find(f"<{tag}>", self.start, self.end)
        if i < 0:
            return None
        m = _leaf(tag).match(self.text, i, self.end)
        if m is None:
            raise Unusual(tag)  # children, or not closed: the located reader says which
        value = m.group(1).strip()
        return None if value.lower() in _UNKNOWN else value

    def number(self, tag: str) -> int | None:
        value = self.leaf(tag)
        if value is None:
            return None
        m = _INT.fullmatch(value)
        if m is None:
            raise Unusual(tag)
        return int(m.group(1))

    def yes_no(self, tag: str) -> bool | None:
        value = self.leaf(tag)
        if value is None:
            return None
        lowered = value.lower()
        if lowered not in ("yes", "no"):
            raise Unusual(tag)
        return lowered == "yes"

    def has_children(self) -> bool:
        return self.text.find("<", self.start, self.end) >= 0


def _at(span: _Span | None, *path: str) -> _Span | None:
    for tag in path:
        if span is None:
            return None
        span = span.section(tag)
    return span


def _uncorrectable(section: _Span | None) -> int | None:
    if section is None:
        return None
    older = section.section("double_bit")
    if older is not None and older.text.find("<total>", older.start, older.end) >= 0:
        return older.number("total")
    known = []
    for m in _UNCORRECTABLE.finditer(section.text, section.start, section.end):
        value = m.group(2).strip()
        if value.lower() in _UNKNOWN:
            continue
        n = _INT.fullmatch(value)
        if n is None:
            raise Unusual(m.group(1))
        known.append(int(n.group(1)))
    return sum(known) if known else None


def _retired(gpu: _Span) -> tuple[int | None, bool | None]:
    pages = gpu.section("retired_pages")
    if pages is None:
        return None, None
    counts = [
        c.number("retired_count") if c is not None else None
        for c in (pages.section("multiple_single_bit_retirement"), pages.section("double_bit_retirement"))
    ]
    known = [c for c in counts if c is not None]
    return (sum(known) if known else None), pages.yes_no("pending_retirement")


def _reasons(gpu: _Span) -> tuple[str, ...]:
    section = gpu.section("clocks_event_reasons") or gpu.section("clocks_throttle_reasons")
    if section is None:
        return ()
    found = _REASON.finditer(section.text, section.start, section.end)
    return tuple(sorted(m.group(1) for m in found if m.group(2).strip() == "Active"))


def header(text: str) -> tuple[int, str]:
    """Where the first `<gpu>` starts (or the root's end) and the header before it; Unusual when the
    document is not one closed <nvidia_smi_log> without entity declarations.
    """
    closing = text.rfind("</nvidia_smi_log>")
    if closing < 0 or text[closing + len("</nvidia_smi_log>") :].strip() or "<!ENTITY" in text:
        raise Unusual("root")  # not closed (truncated), or declares entities: the located reader refuses it
    if text.find("<nvidia_smi_log>", 0, closing) < 0:
        raise Unusual("root")
    first = _GPU_OPEN.search(text)
    start = first.start() if first is not None else text.rindex("</nvidia_smi_log>")
    return start, text[:start]


def attached(head: str) -> int | None:
    """The header's <attached_gpus>, None when absent or N/A."""
    return _Span(head, 0, len(head)).number("attached_gpus")


def timestamp(head: str) -> datetime | None:
    value = _Span(head, 0, len(head)).leaf("timestamp")
    if value is None:
        return None
    try:
        return datetime.strptime(" ".join(value.split()), "%a %b %d %H:%M:%S %Y").replace(tzinfo=UTC)
    except ValueError:
        raise Unusual("timestamp") from None


def gpus(text: str, filename: str, host: str, when: datetime | None) -> list[GpuObservation]:
    """Every `<gpu>` of the document, in order; Unusual where the located reader must say what is wrong."""
    out: list[GpuObservation] = []
    pos, line, line_start = 0, 1, 0
    for m in _GPU_OPEN.finditer(text):
        s = m.start()
        line += text.count("\n", pos, s)
        nl = text.rfind("\n", 0, s)
        line_start = nl + 1
        pos = s
        end = text.find("</gpu>", m.end())
        if end < 0:
            raise Unusual("gpu")
        whole = _Span(text, m.end(), end)
        # MIG devices come first and repeat some tags: the GPU's own fields are read after them.
        mig_end = text.find("</mig_devices>", m.end(), end)
        own = _Span(text, mig_end if mig_end >= 0 else m.end(), end)
        ident = _ID.search(m.group(0))
        pci = own.section("pci")
        bus_text = (pci.leaf("pci_bus_id") if pci else None) or (ident.group(1) if ident else None) or ""
        bus = normalise_pci_bus_id(bus_text)
        if bus is None:
            raise Unusual("pci_bus_id")
        link = _at(own, "pci", "pci_gpu_link_info")
        gen = _at(link, "pcie_gen")
        width = _at(link, "link_widths")
        ecc = own.section("ecc_errors")
        remapped = own.section("remapped_rows")
        rows = remapped if remapped is not None and remapped.has_children() else None
        fabric = own.section("fabric")
        retired, retired_pending = _retired(own)
        util = own.section("utilization")
        mig = whole.section("mig_mode")
        out.append(
            GpuObservation(
                source=SourceLocation(filename, line, s - line_start + 1),
                observed_at=when,
                host=host,
                vendor="nvidia",
                index=len(out),
                uuid=own.leaf("uuid"),
                serial=own.leaf("serial"),
                pci_bus_id=bus,
                model=whole.leaf("product_name"),
                pcie_gen_current=gen.number("current_link_gen") if gen else None,
                pcie_gen_max=gen.number("max_link_gen") if gen else None,
                pcie_gen_device_max=gen.number("max_device_link_gen") if gen else None,
                pcie_width_current=width.number("current_link_width") if width else None,
                pcie_width_max=width.number("max_link_width") if width else None,
                ecc_uncorrectable_volatile=_uncorrectable(_at(ecc, "volatile")),
                ecc_uncorrectable_aggregate=_uncorrectable(_at(ecc, "aggregate")),
                retired_pages=retired,
                retired_pages_pending=retired_pending,
                remapped_rows_uncorrectable=rows.number("remapped_row_unc") if rows else None,
                remapped_rows_pending=rows.yes_no("remapped_row_pending") if rows else None,
                remapped_rows_failed=rows.yes_no("remapped_row_failure") if rows else None,
                throttle_reasons=_reasons(own),
                mig_mode=mig.leaf("current_mig") if mig else None,
                utilization_percent=util.number("gpu_util") if util else None,
                fabric_state=fabric.leaf("state") if fabric else None,
                fabric_status=fabric.leaf("status") if fabric else None,
                fabric_clique_id=fabric.leaf("cliqueId") if fabric else None,
                fabric_cluster_uuid=fabric.leaf("clusterUuid") if fabric else None,
            )
        )
    return out
