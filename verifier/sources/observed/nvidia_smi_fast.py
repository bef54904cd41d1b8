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
from verifier.sources.observed.model import (
    NVML_COULD_NOT_SAY,
    GpuObservation,
    driver_problem,
    driver_version,
    normalise_pci_bus_id,
    recovery_action,
)

_UNKNOWN = frozenset({"", "n/a", "[n/a]", "not supported", "[not supported]", "unknown", "[unknown error]"})
_INT64_MAX = 2**63 - 1
_INT = re.compile(r"\s*(\d{1,20})\s*(x|%)?\s*")  # 20 digits: a 64-bit count; longer is no number nvidia-smi prints
_ID = re.compile(r'\sid="([^"<>]*)"')
_REASON = re.compile(r"<clocks_(?:event|throttle)_reason_(\w+)>([^<]*)</clocks_(?:event|throttle)_reason_\1>")
_UNCORRECTABLE = re.compile(r"<(\w*uncorrectable\w*)>([^<]*)</\1>")


class Unusual(Exception):
    """The file is not in the layout the fast path reads: read it with the located reader."""


@cache
def _leaf(tag: str) -> re.Pattern[str]:
    return re.compile(f"<{tag}>([^<]*)</{tag}>")


class _Span:
    """A section of the text: [start, end) between its opening and closing tags.

    Reads are searched from where the last one ended (`pos`), then, when not found there, from the
    start: nvidia-smi writes the fields in the DTD's order, so each byte is scanned about once, and a
    field out of that order is still found. The tags read are each unique within their section.
    """

    __slots__ = ("end", "pos", "start", "text")

    def __init__(self, text: str, start: int, end: int) -> None:
        self.text, self.start, self.end, self.pos = text, start, end, start

    def _find(self, opening: str) -> int:
        i = self.text.find(opening, self.pos, self.end)
        if i < 0 and self.pos > self.start:
            i = self.text.find(opening, self.start, self.pos)
        return i

    def section(self, tag: str) -> _Span | None:
        opening = f"<{tag}>"
        i = self._find(opening)
        if i < 0:
            return None
        j = self.text.find(f"</{tag}>", i, self.end)
        if j < 0:
            raise Unusual(tag)
        self.pos = j
        return _Span(self.text, i + len(opening), j)

    def leaf(self, tag: str) -> str | None:
        """The text of the `<tag>` leaf, None when absent or not known (N/A)."""
        i = self._find(f"<{tag}>")
        if i < 0:
            return None
        m = _leaf(tag).match(self.text, i, self.end)
        if m is None:
            raise Unusual(tag)  # children, or not closed: the located reader says which
        self.pos = m.end()
        value = m.group(1).strip()
        return None if value.lower() in _UNKNOWN else value

    def raw(self, tag: str) -> str | None:
        """The text of the `<tag>` leaf as printed (N/A included), None when absent."""
        i = self._find(f"<{tag}>")
        if i < 0:
            return None
        m = _leaf(tag).match(self.text, i, self.end)
        if m is None:
            raise Unusual(tag)
        self.pos = m.end()
        return m.group(1)

    def number(self, tag: str) -> int | None:
        value = self.leaf(tag)
        if value is None or value.lower() in NVML_COULD_NOT_SAY:
            return None  # NVML could not say: unknown, as the located reader reads it
        m = _INT.fullmatch(value)
        if m is None or int(m.group(1)) > _INT64_MAX:
            raise Unusual(tag)  # the located reader names the line
        return int(m.group(1))

    def yes_no(self, tag: str) -> bool | None:
        value = self.leaf(tag)
        if value is None or value.lower() in NVML_COULD_NOT_SAY:
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
        if value.lower() in _UNKNOWN or value.lower() in NVML_COULD_NOT_SAY:
            continue
        n = _INT.fullmatch(value)
        if n is None or int(n.group(1)) > _INT64_MAX:
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


_NO_ACTION = frozenset({None, "None", "N/A"})
_NO_FLAG = frozenset({None, "No", "N/A", "Requested functionality has been deprecated"})


def _recovery(head: _Span) -> str | None:
    """As nvidia_smi_xml's: <gpu_recovery_action>, else <gpu_reset_status>'s two flags; Unusual for a value
    nvidia-smi does not print there (the located reader refuses it at its line). `head` is the stretch of a GPU's
    block between its UUID and <pci>, where the DTD puts both: a tag absent from the block (one of them is, in
    every driver branch) is not looked for through the rest of it (~100 KB with its clock lists).
    """
    at = head._find("<gpu_re")  # the two tags' common prefix: neither printed (before R535)
    if at < 0:
        return None
    head.start = head.pos = at  # nothing of either before it
    if head.text.startswith("<gpu_recovery_action>", at):
        action = head.raw("gpu_recovery_action")
        status = head.section("gpu_reset_status")
    else:  # the DTD's order: the status section, then the action (R550 and later), each read where the last ended
        status = head.section("gpu_reset_status")
        head.start = head.pos
        action = head.raw("gpu_recovery_action")
    reset = status.raw("reset_required") if status else None
    drain = status.raw("drain_and_reset_recommended") if status else None
    if action in _NO_ACTION and reset in _NO_FLAG and drain in _NO_FLAG:
        return None  # what a healthy GPU prints, without the general reading below
    try:
        return recovery_action(action, reset, drain)
    except ValueError:
        raise Unusual("recovery") from None


def header(text: str) -> tuple[int, str]:
    """Where the first `<gpu>` starts (or the root's end) and the header before it; Unusual when the
    document is not one closed <nvidia_smi_log> without entity declarations.
    """
    if text[: max(text.find("<"), 0)].strip("\ufeff \t\r\n"):
        raise Unusual("prolog")  # text before the document: the located reader refuses it at its line
    closing = text.rfind("</nvidia_smi_log>")
    if closing < 0 or text[closing + len("</nvidia_smi_log>") :].strip():
        raise Unusual("root")  # not closed (truncated): the located reader says where it ends
    root = text.find("<nvidia_smi_log>", 0, closing)
    # Entities are declared in the prolog only, before the root: the located reader refuses them.
    if root < 0 or text.find("<!ENTITY", 0, root) >= 0:
        raise Unusual("root")
    first = _gpu_open(text, root)
    start = first[0] if first is not None else closing
    return start, text[:start]


def _gpu_open(text: str, pos: int) -> tuple[int, int] | None:
    """(start, end) of the next `<gpu>` or `<gpu ...>` opening tag from `pos` (not `<gpu_util>` and the like)."""
    while True:
        i = text.find("<gpu", pos)
        if i < 0:
            return None
        after = text[i + 4 : i + 5]
        if after == ">" or after.isspace():
            j = text.find(">", i)
            if j < 0:
                return None
            return i, j + 1
        pos = i + 4


def attached(head: str) -> int | None:
    """The header's <attached_gpus>, None when absent or N/A."""
    return _Span(head, 0, len(head)).number("attached_gpus")


def driver(head: str) -> str | None:
    """The header's driver version (model.driver_version: <kmd_version> where printed), None when absent or N/A."""
    span = _Span(head, 0, len(head))
    version = driver_version(span.leaf("kmd_version"), span.leaf("driver_version"))
    if driver_problem(version) is not None:
        raise Unusual("driver_version")  # the located reader refuses it at its line
    return version


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
    found = _gpu_open(text, 0)
    while found is not None:
        s, opened = found
        line += text.count("\n", pos, s)
        nl = text.rfind("\n", 0, s)
        line_start = nl + 1
        pos = s
        end = text.find("</gpu>", opened)
        if end < 0:
            raise Unusual("gpu")
        whole = _Span(text, opened, end)
        model = whole.leaf("product_name")
        mig = whole.section("mig_mode")
        mig_mode = mig.leaf("current_mig") if mig else None
        # MIG devices come first and repeat some tags: the GPU's own fields are read after them,
        # in the order nvidia-smi writes them (each read starts where the last ended).
        mig_end = text.find("</mig_devices>", opened, end)
        own = _Span(text, mig_end if mig_end >= 0 else opened, end)
        serial, uuid = own.leaf("serial"), own.leaf("uuid")
        after_uuid = own.pos
        ident = _ID.search(text, s, opened)
        pci = own.section("pci")
        before_pci = pci.start - len("<pci>") if pci else end
        # <minor_number> follows <uuid> (the DTD's order): looked for there only, not through the whole block
        minor = _Span(text, after_uuid, before_pci).number("minor_number")
        recovery = _recovery(_Span(text, after_uuid, before_pci))
        bus_text = (pci.leaf("pci_bus_id") if pci else None) or (ident.group(1) if ident else None) or ""
        bus = normalise_pci_bus_id(bus_text)
        if bus is None:
            raise Unusual("pci_bus_id")
        link = _at(pci, "pci_gpu_link_info")
        gen = _at(link, "pcie_gen")
        width = _at(link, "link_widths")
        reasons = _reasons(own)
        util = own.section("utilization")
        ecc = own.section("ecc_errors")
        retired, retired_pending = _retired(own)
        remapped = own.section("remapped_rows")
        rows = remapped if remapped is not None and remapped.has_children() else None
        fabric = own.section("fabric")
        out.append(
            GpuObservation(
                source=SourceLocation(filename, line, s - line_start + 1),
                observed_at=when,
                host=host,
                vendor="nvidia",
                index=len(out),
                uuid=uuid,
                serial=serial,
                pci_bus_id=bus,
                model=model,
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
                throttle_reasons=reasons,
                mig_mode=mig_mode,
                utilization_percent=util.number("gpu_util") if util else None,
                fabric_state=fabric.leaf("state") if fabric else None,
                fabric_status=fabric.leaf("status") if fabric else None,
                fabric_clique_id=fabric.leaf("cliqueId") if fabric else None,
                fabric_cluster_uuid=fabric.leaf("clusterUuid") if fabric else None,
                recovery_action=recovery,
                minor_number=minor,
            )
        )
        found = _gpu_open(text, end)
    return out
