"""`nvidia-smi -q -x`: one `GpuObservation` per `<gpu>` element.

The XML follows NVIDIA's nvsmi_device_vNN.dtd; element names changed over driver branches and
both spellings are read: `clocks_event_reasons` (R535+) and `clocks_throttle_reasons` (older),
ECC `<volatile>` as `dram_uncorrectable`/`sram_uncorrectable*` (R470+) or as
`<double_bit><total>` (older). Values printed as `N/A`, `[N/A]` or `[Not Supported]` are not
known (None), never zero.

The tool prints no GPU index: it lists GPUs in its own index order (NVML's enumeration, by PCI
bus id), so a GPU's index is its position among the `<gpu>` elements of the file, when the file lists
every attached GPU (a `-i` selection's GPUs have none). The
`<timestamp>` is the host's local time without a zone; it is read as UTC (docs/observed.md).
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.sources.importers.safe_xml import Element, parse_xml_bytes
from verifier.sources.observed import nvidia_smi_fast, nvidia_smi_text
from verifier.sources.observed.model import (
    IN_HOST_FOLDER,
    NVML_COULD_NOT_SAY,
    GpuObservation,
    Observations,
    ObservedFile,
    container_numbered,
    driver_problem,
    driver_version,
    host_of_file,
    normalise_pci_bus_id,
    recovery_action,
    unnumbered,
)

FORMAT = "nvidia-smi-q-xml"
ROOT = "nvidia_smi_log"
_UNKNOWN = frozenset({"", "n/a", "[n/a]", "not supported", "[not supported]", "unknown", "[unknown error]"})
_REASON_PREFIXES = ("clocks_event_reason_", "clocks_throttle_reason_")
_INT64_MAX = 2**63 - 1
_INT = re.compile(r"\s*(\d{1,20})\s*(x|%)?\s*")  # 20 digits: a 64-bit count; longer is no number nvidia-smi prints


def looks_like(text: str) -> bool:
    """Whether `text` is `nvidia-smi -q -x` output: an XML document whose root is <nvidia_smi_log>. The root
    is looked for in the first 16 KiB: text before the document is read past (a container's banner, as NGC
    images print before the command's output with a copyright line per bundled project, takes 2 KiB and more).
    """
    return "<nvidia_smi_log" in text[:16384]


def _child(el: Element | None, *path: str) -> Element | None:
    for tag in path:
        if el is None:
            return None
        el = next(el.iter(tag), None)
    return el


def _text(el: Element | None, *path: str) -> str | None:
    found = _child(el, *path)
    if found is None or found.children:
        return None
    value = found.text.strip()
    return None if value.lower() in _UNKNOWN else value


def _driver(root: Element) -> str | None:
    """The listing's driver version (model.driver_version); TopologError at its element when it is no release."""
    version = driver_version(_text(root, "kmd_version"), _text(root, "driver_version"))
    problem = driver_problem(version)
    if problem is not None:
        found = _child(root, "kmd_version") if _text(root, "kmd_version") else _child(root, "driver_version")
        raise TopologError.at(found.loc if found is not None else SourceLocation(root.loc.file), problem)
    return version


def _int(el: Element | None, *path: str) -> int | None:
    """An integer field (`16x`, `2 %` and `4` all read), None when not known; TopologError when not a number."""
    value = _text(el, *path)
    if value is None or value.lower() in NVML_COULD_NOT_SAY:
        return None  # NVML could not say (a healthy RTX 4090 on R535 prints `Unknown Error` for its ECC counts)
    m = _INT.fullmatch(value)
    if m is None or int(m.group(1)) > _INT64_MAX:
        found = _child(el, *path)
        assert found is not None
        shown = value if len(value) <= 40 else f"{value[:40]}..."
        raise TopologError.at(
            found.loc,
            f"<{found.tag}> is {shown!r}; expected a whole number below 2**63 (or N/A) as nvidia-smi prints it",
        )
    return int(m.group(1))


def _yes_no(el: Element | None, *path: str) -> bool | None:
    value = _text(el, *path)
    if value is None or value.lower() in NVML_COULD_NOT_SAY:
        return None
    if value.lower() in ("yes", "no"):
        return value.lower() == "yes"
    found = _child(el, *path)
    assert found is not None
    raise TopologError.at(found.loc, f"<{found.tag}> is {value!r}; expected Yes, No or N/A")


def _recovery(gpu: Element) -> str | None:
    """The recovery the driver asks for: <gpu_recovery_action> (R550 and later), else <gpu_reset_status>'s
    <reset_required> and <drain_and_reset_recommended> (R535 to R570); refused where nvidia-smi does not
    print such a value.
    """
    paths = (
        ("gpu_recovery_action",),
        ("gpu_reset_status", "reset_required"),
        ("gpu_reset_status", "drain_and_reset_recommended"),
    )
    values: list[str | None] = []
    for k, path in enumerate(paths):
        found = _child(gpu, *path)
        value = found.text if found is not None and not found.children else None
        alone: list[str | None] = [value if i == k else None for i in range(len(paths))]
        try:
            recovery_action(alone[0], alone[1], alone[2])
        except ValueError as bad:
            assert found is not None
            raise TopologError.at(found.loc, f"<{found.tag}> is {value!r}; expected {bad} (or N/A)") from None
        values.append(value)
    return recovery_action(values[0], values[1], values[2])


def _uncorrectable(section: Element | None) -> int | None:
    """Uncorrectable ECC errors of a <volatile> or <aggregate> section, in either DTD's layout."""
    if section is None:
        return None
    older = _child(section, "double_bit", "total")
    if older is not None:
        return _int(section, "double_bit", "total")
    values = [_int(c) for c in section.children if "uncorrectable" in c.tag and not c.children]
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _retired(gpu: Element) -> int | None:
    pages = _child(gpu, "retired_pages")
    counts = [
        _int(pages, "multiple_single_bit_retirement", "retired_count"),
        _int(pages, "double_bit_retirement", "retired_count"),
    ]
    known = [c for c in counts if c is not None]
    return sum(known) if known else None


def _reasons(gpu: Element) -> tuple[str, ...]:
    section = _child(gpu, "clocks_event_reasons") or _child(gpu, "clocks_throttle_reasons")
    if section is None:
        return ()
    out = []
    for c in section.children:
        if c.text.strip() == "Active":
            name = c.tag
            for prefix in _REASON_PREFIXES:
                name = name.removeprefix(prefix)
            out.append(name)
    return tuple(sorted(out))


def timestamp(root: Element) -> datetime | None:
    """The log's <timestamp> (`Fri Aug  4 11:44:30 2023`) as UTC; TopologError when it cannot be read."""
    value = _text(root, "timestamp")
    if value is None:
        return None
    try:
        return datetime.strptime(" ".join(value.split()), "%a %b %d %H:%M:%S %Y").replace(tzinfo=UTC)
    except ValueError:
        el = _child(root, "timestamp")
        assert el is not None
        raise TopologError.at(
            el.loc, f"<timestamp> is {value!r}; expected nvidia-smi's form, e.g. 'Fri Aug  4 11:44:30 2023'"
        ) from None


def _gpu(el: Element, position: int, host: str, when: datetime | None) -> GpuObservation:
    bus_text = _text(el, "pci", "pci_bus_id") or el.get("id") or ""
    bus = normalise_pci_bus_id(bus_text)
    if bus is None:
        raise TopologError.at(el.loc, f"<gpu> has PCI bus id {bus_text!r}; expected one like 00000000:1B:00.0")
    link = _child(el, "pci", "pci_gpu_link_info")
    ecc = _child(el, "ecc_errors")
    remapped = _child(el, "remapped_rows")
    fabric = _child(el, "fabric")
    return GpuObservation(
        source=el.loc,
        observed_at=when,
        host=host,
        vendor="nvidia",
        index=position,
        uuid=_text(el, "uuid"),
        serial=_text(el, "serial"),
        pci_bus_id=bus,
        model=_text(el, "product_name"),
        pcie_gen_current=_int(link, "pcie_gen", "current_link_gen"),
        pcie_gen_max=_int(link, "pcie_gen", "max_link_gen"),
        pcie_gen_device_max=_int(link, "pcie_gen", "max_device_link_gen"),
        pcie_width_current=_int(link, "link_widths", "current_link_width"),
        pcie_width_max=_int(link, "link_widths", "max_link_width"),
        ecc_uncorrectable_volatile=_uncorrectable(_child(ecc, "volatile")),
        ecc_uncorrectable_aggregate=_uncorrectable(_child(ecc, "aggregate")),
        retired_pages=_retired(el),
        retired_pages_pending=_yes_no(el, "retired_pages", "pending_retirement"),
        remapped_rows_uncorrectable=_int(remapped, "remapped_row_unc"),
        remapped_rows_pending=_yes_no(remapped, "remapped_row_pending"),
        remapped_rows_failed=_yes_no(remapped, "remapped_row_failure"),
        throttle_reasons=_reasons(el),
        mig_mode=_text(el, "mig_mode", "current_mig"),
        utilization_percent=_int(el, "utilization", "gpu_util"),
        fabric_state=_text(fabric, "state"),
        fabric_status=_text(fabric, "status"),
        fabric_clique_id=_text(fabric, "cliqueId"),
        fabric_cluster_uuid=_text(fabric, "clusterUuid"),
        recovery_action=_recovery(el),
        minor_number=_int(el, "minor_number"),
    )


def _selection(gpus: tuple[GpuObservation, ...], attached: int | None) -> tuple[tuple[GpuObservation, ...], bool]:
    """`gpus` as observed, and whether the file is a selection: fewer <gpu> than <attached_gpus>
    (`nvidia-smi -q -x -i 3`). A selection's positions are not nvidia-smi's indexes (None: matched by
    UUID, serial or bus id only), and a GPU it leaves out is not thereby missing (ObservedFile.partial).
    """
    if attached is None or attached <= len(gpus):
        return gpus, False
    return tuple(replace(g, index=None) for g in gpus), True


def _fast(text: str, filename: str, host: str) -> Observations:
    _start, head = nvidia_smi_fast.header(text)
    when = nvidia_smi_fast.timestamp(head)
    gpus = tuple(nvidia_smi_fast.gpus(text, filename, host, when))
    attached = nvidia_smi_fast.attached(head)
    if attached is not None and attached < len(gpus):
        raise nvidia_smi_fast.Unusual("attached_gpus")
    gpus, partial = _selection(gpus, attached)
    file = ObservedFile(filename, FORMAT, host, when, partial, attached, nvidia_smi_fast.driver(head))
    return Observations(gpus=gpus, files=(file,), hosts=(host,))


_CLOSING = "</nvidia_smi_log>"


def _without_warnings_after(text: str) -> str:
    """`text` without the lines after its document when each is one of nvidia-smi's own warnings (`WARNING:
    infoROM is corrupted at gpu 0000:67:00.0`, which nvidia-smi prints on stderr as it exits: after its
    output in a terminal's copy) or blank. Any other text after the document stays, and is refused.
    """
    closing = text.rfind(_CLOSING)
    if closing < 0:
        return text
    end = closing + len(_CLOSING)
    after = text[end:]
    if not after.strip() or any(ln.strip() and not ln.strip().startswith("WARNING: ") for ln in after.splitlines()):
        return text
    return text[:end] + "\n"


def read(text: str, filename: str, host: str | None) -> Observations:
    """The GPUs of one `nvidia-smi -q -x` file (for one host). TopologError with file:line on bad input."""
    obs = _read(text, filename, host)
    note = container_numbered(obs.gpus, obs.files[0].attached)
    return obs if note is None else unnumbered(obs, note)


def _read(text: str, filename: str, host: str | None) -> Observations:
    host = host_of_file(host, filename, "nvidia-smi -q -x", IN_HOST_FOLDER)
    text = _without_warnings_after(text)
    lost, taken = nvidia_smi_text.lost_lines(text, filename)
    if taken:
        return _with_lost(text, filename, host, lost, taken)
    try:
        return _fast(text, filename, host)
    except nvidia_smi_fast.Unusual:
        # read with the located reader: the same observations, or an error at its file:line:col
        return read_located(text, filename, host)


def _with_lost(text: str, filename: str, host: str, lost: list[nvidia_smi_text.Lost], taken: int) -> Observations:
    """A report with lines before it (nvidia_smi_text.lost_lines): the report read after them (its lines
    numbered as in the file), the GPUs they say nvidia-smi could not open beside its GPUs as the text
    reader has them (nvidia_smi_text.add_lost).
    """
    body = text.split("\n", taken)[-1] if taken else text
    try:
        try:
            obs = _fast(body, filename, host)
        except nvidia_smi_fast.Unusual:
            obs = read_located(body, filename, host)
    except TopologError as err:
        raise TopologError(
            Diagnostic(SourceLocation(d.location.file, d.location.line + taken, d.location.col), d.message)
            if d.location.file == filename and d.location.line
            else d
            for d in err.diagnostics
        ) from None
    shifted = [replace(g, source=SourceLocation(filename, g.source.line + taken, g.source.col)) for g in obs.gpus]
    if not lost:  # no GPU named before the report (a warning, a banner): the report as read, at the file's lines
        return replace(obs, gpus=tuple(shifted))
    first = obs.files[0]
    if first.attached is not None and first.attached < len(shifted) + len(lost):
        raise TopologError.at(
            SourceLocation(filename, lost[0].line),
            f"<attached_gpus> says {first.attached} but the file reports {len(shifted)} GPUs and {len(lost)} "
            "it could not open",
        )
    gpus, whole = nvidia_smi_text.add_lost(shifted, lost, first.attached, filename, host, first.observed_at)
    return Observations(gpus=gpus, files=(replace(first, partial=not whole),), hosts=(host,))


def read_located(text: str, filename: str, host: str) -> Observations:
    """`read` through a tree of located elements (safe_xml): slower, and every error has its line."""
    root = parse_xml_bytes(text.encode("utf-8"), filename)
    if root.tag != ROOT:
        raise TopologError.at(root.loc, f"root element is <{root.tag}>; expected <{ROOT}> (nvidia-smi -q -x output)")
    when = timestamp(root)
    gpus = tuple(_gpu(el, i, host, when) for i, el in enumerate(root.iter("gpu")))
    attached = _int(root, "attached_gpus")
    if attached is not None and attached < len(gpus):
        raise TopologError.at(
            root.loc, f"<attached_gpus> says {attached} but the file lists {len(gpus)} <gpu> elements"
        )
    gpus, partial = _selection(gpus, attached)
    return Observations(
        gpus=gpus,
        files=(
            ObservedFile(
                filename,
                FORMAT,
                host,
                when,
                partial,
                attached,
                _driver(root),
            ),
        ),
        hosts=(host,),
    )
