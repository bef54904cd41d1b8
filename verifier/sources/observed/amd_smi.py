"""`amd-smi static --json`, `amd-smi metric --json` and `amd-smi topology --json` of one host.

Each is a JSON list with one object per GPU keyed by `"gpu": <index>` (ROCm 7 wraps the list as
`{"gpu_data": [...]}`); a file may be any one of the three, or a selection of one (`static --bus`):
what a GPU object holds decides what is read from it.

- static: `bus.bdf` (the PCI bus id), `bus.max_pcie_width`, `bus.max_pcie_speed` (GT/s, the
  link's maximum) and `bus.pcie_interface_version` (`Gen 5`, the GPU's own), `asic.market_name`,
  `board.product_serial`.
- metric: `pcie.width` and `pcie.speed` (what the link trained to now), `ecc.total_uncorrectable_count`
  (since the driver loaded: volatile), `usage.gfx_activity` (a generation below the maximum is
  only a fault under load).
- list: `bdf` of each GPU the driver sees. Its `uuid` is not kept: amd-smi prints the same one for boards
  without a unique id (two MI210s as `00ff740f-0000-1000-8000-000000000000`, ROCm 6.3), so it names no GPU.
- topology: `links`, one per peer GPU, with `link_type` (`XGMI`, `PCIE`, `SELF`) and `link_status`
  (`ENABLED` / `DISABLED`); the older layout (ROCm 6.1 and before) keyed `link_type` and
  `link_accessibility` by `gpu_<index>`. Each xGMI peer link becomes one link observation whose
  number is the peer's index. amd-smi states a link's bandwidth as a min-max range, not the speed
  it trained to, so the speed is left unknown (None): only the state is judged.

`N/A` is "not reported" (None), never zero. Numbers are read exactly (JSON floats through
`exact_number`, never `float`). amd-smi prints no host name and no time: the host is the folder
the file lies in, the time unknown. JSON carries no line numbers, so each GPU's observations
point at the line where its object starts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.limits import INT64_MAX
from verifier.sources.observed.model import (
    GpuObservation,
    GpuRef,
    Observations,
    ObservedFile,
    ScaleupLinkObservation,
    exact_number,
    host_of_file,
    normalise_pci_bus_id,
)

FORMAT = "amd-smi"
FORMAT_TOPOLOGY = "amd-smi-topology"
"""A file of links only (`amd-smi topology --json`): it lists no GPU, so a GPU absent from it is not missing."""
NA = "N/A"
GEN_BY_GTS: dict[Fraction, int] = {
    Fraction(5, 2): 1,
    Fraction(5): 2,
    Fraction(8): 3,
    Fraction(16): 4,
    Fraction(32): 5,
    Fraction(64): 6,
    Fraction(128): 7,
}
"""PCIe generation by transfer rate per lane (PCI-SIG: 2.5, 5, 8, 16, 32, 64, 128 GT/s)."""
MAX_LANES = 32
"""The widest PCIe link (x32); a wider figure is not a width."""
MAX_INDEX = 2**31 - 1
"""A GPU index (and a peer's) fits 32 bits: anything larger is not one."""
_KNOWN_KEYS = frozenset(
    {"bus", "asic", "board", "pcie", "ecc", "usage", "links", "link_type", "link_accessibility", "uuid", "kfd_id"}
)
_LIST_KEYS = ("uuid", "kfd_id")
"""Keys of `amd-smi list` (with `bdf`): one GPU the driver sees, and nothing else about it."""
_SPEED_TEXT = re.compile(r"^\s*([0-9.]+)\s*(GT/s|MT/s)\s*$")
_GEN_TEXT = re.compile(r"^\s*gen\s*([1-7])\s*$", re.IGNORECASE)
_PEER_KEY = re.compile(r"^gpu_(\d+)$")
# amd-smi is a Python program: a newer interpreter warns about its library's code while loading it (Python 3.14's
# `amdsmi_interface.py:3569: SyntaxWarning: 'return' in a 'finally' block`, then that source line indented; in a
# capture taken with 2>&1, nathaninline/ajean issue 39). Such lines say nothing of the GPUs and are read past;
# any other text before the document is still refused.
_PYTHON_WARNING = re.compile(
    r"[^\n]{1,1000}?\.py:\d{1,9}: [A-Za-z]{0,40}Warning: [^\n]*\n(?:[ \t]+[^\n]*(?:\n|$))?", re.ASCII
)
"""One warning as Python's `warnings.formatwarning` prints it: `FILE.py:LINE: CATEGORYWarning: message`, then the
source line it names, indented, where Python could read it."""


def looks_like(text: str) -> bool:
    """JSON whose objects are keyed by amd-smi's `"gpu": <n>` and hold one of its sections (the text
    form is amd_smi_text's; amd_smi_any tells the two apart).
    """
    head = text[json_start(text) :][:20_000]
    if not head.startswith(("[", "{")):
        return False
    if not re.search(r'"gpu"\s*:\s*\d', head):
        return False
    # `amd-smi list --json` holds only `bdf`, `uuid` and ids: its `bdf` is what marks it. `amd-smi metric -u
    # --json` holds only `usage` (a Radeon Pro W7700's, henrygd/beszel issue 737), a `static` run asked for one
    # section only that section: each is amd-smi's own, read for what it holds (was "not a format topolog reads").
    return any(f'"{k}"' in head for k in _SECTIONS)


def json_start(text: str) -> int:
    """Where amd-smi's output starts (its JSON document, or its text's first block): past a byte-order mark, blank
    space and Python's warnings.
    """
    index = 0
    while True:
        while index < len(text) and text[index] in "\ufeff \t\r\n":
            index += 1
        if text.startswith(("{", "["), index):
            return index
        warning = _PYTHON_WARNING.match(text, index)
        if warning is None:
            return index
        index = warning.end()


_SECTIONS = (
    "bus",
    "asic",
    "pcie",
    "ecc",
    "links",
    "link_type",
    "gpu_data",
    "bdf",
    "usage",
    "vram",
    "board",
    "partition",
)
"""Keys that mark amd-smi's JSON beside `"gpu": <n>`: the sections of `static`, `metric`, `topology` and `list` that
its real outputs in tests/sources/observed/samples/amd-smi (and the issue above) hold."""


class _Reader:
    def __init__(self, text: str, filename: str, host: str) -> None:
        self.text = text
        self.filename = filename
        self.host = host
        self.problems: list[Diagnostic] = []
        self.decoder = json.JSONDecoder(parse_float=self._float, parse_constant=self._constant)

    def loc(self, offset: int) -> SourceLocation:
        return SourceLocation(self.filename, self.text.count("\n", 0, offset) + 1)

    @staticmethod
    def _float(text: str) -> Fraction:
        value = exact_number(text)
        if value is None:  # pragma: no cover - the JSON scanner only hands over decimal text
            raise ValueError(f"number {text!r}")
        return value

    @staticmethod
    def _constant(text: str) -> Any:
        raise ValueError(f"{text} is not a number amd-smi prints")

    def _decode_at(self, index: int) -> tuple[Any, int]:
        try:
            return self.decoder.raw_decode(self.text, index)
        except json.JSONDecodeError as err:
            raise TopologError.at(
                SourceLocation(self.filename, err.lineno, err.colno),
                f"not valid JSON ({err.msg}); the file looks truncated or is not amd-smi --json output",
            ) from None
        except ValueError as err:
            raise TopologError.at(self.loc(index), f"{err}; expected the JSON amd-smi --json prints") from None
        except RecursionError:
            raise TopologError.at(
                self.loc(index), "JSON nested too deeply; expected amd-smi --json output (a few levels)"
            ) from None

    def _skip(self, index: int) -> int:
        while index < len(self.text) and self.text[index] in " \t\r\n":
            index += 1
        return index

    def entries(self) -> Iterator[tuple[Any, int, int]]:
        """Each GPU object with the offsets where it starts and ends (element by element, for lines)."""
        start = json_start(self.text)
        if self.text.startswith("{", start):
            whole, end = self._decode_at(start)
            if self._skip(end) != len(self.text):
                raise TopologError.at(
                    self.loc(end), "text after the JSON document; expected one amd-smi --json document"
                )
            if isinstance(whole, dict) and "gpu_data" not in whole and "gpu" in whole:
                # One device's output: amd-smi's logger printed its one GPU object bare (`print(self.output)`)
                # before it wrapped it in a list (`[self.output]`, ROCm/amdsmi amdsmi_cli/amdsmi_logger.py).
                yield whole, start, end
                return
            if not isinstance(whole, dict) or not isinstance(whole.get("gpu_data"), list):
                raise TopologError.at(
                    self.loc(start), "a JSON object without a 'gpu_data' list; expected amd-smi --json output"
                )
            key = re.compile(r'"gpu_data"\s*:\s*\[').search(self.text, start)
            if key is None:  # pragma: no cover - decoded above, so the key is in the text
                raise TopologError.at(self.loc(start), "no 'gpu_data' list")
            yield from self._array(key.end() - 1, nested=True)
            return
        if not self.text.startswith("[", start):
            raise TopologError.at(
                self.loc(start), "not JSON; expected the output of amd-smi static|metric|topology --json"
            )
        yield from self._array(start, nested=False)

    def _array(self, start: int, nested: bool) -> Iterator[tuple[Any, int, int]]:
        index = self._skip(start + 1)
        if self.text.startswith("]", index):
            index += 1
        else:
            while True:
                value, end = self._decode_at(index)
                yield value, index, end
                index = self._skip(end)
                if self.text.startswith(",", index):
                    index = self._skip(index + 1)
                    continue
                if self.text.startswith("]", index):
                    index += 1
                    break
                raise TopologError.at(self.loc(index), "expected ',' or ']' between the GPUs; the file looks truncated")
        if not nested and self._skip(index) != len(self.text):
            raise TopologError.at(self.loc(index), "text after the JSON list; expected one amd-smi --json document")

    def read(self) -> Observations:
        gpus: list[GpuObservation] = []
        links: list[ScaleupLinkObservation] = []
        seen: dict[int, int] = {}
        for value, start, end in self.entries():
            loc = self.loc(start)
            if (
                not isinstance(value, dict)
                or isinstance(value.get("gpu"), bool)
                or not isinstance(value.get("gpu"), int)
            ):
                self.problems.append(
                    Diagnostic(loc, 'a list item without an integer "gpu" index; expected one object per GPU')
                )
                continue
            index: int = value["gpu"]
            if not 0 <= index <= MAX_INDEX:
                self.problems.append(Diagnostic(loc, f"GPU index {index} is out of range; expected 0 to {MAX_INDEX}"))
                continue
            if index in seen:
                self.problems.append(Diagnostic(loc, f"GPU {index} is listed twice (first at line {seen[index]})"))
                continue
            seen[index] = loc.line
            if not _KNOWN_KEYS & value.keys():
                self.problems.append(
                    Diagnostic(
                        loc,
                        f"GPU {index} has none of bus, pcie, ecc, links; expected amd-smi static|metric|topology",
                    )
                )
                continue
            gpu = self._gpu(value, index, loc)
            if gpu is not None:
                gpus.append(gpu)
            links.extend(self._links(value, index, start, end))
        if not seen and not self.problems:
            self.problems.append(
                Diagnostic(
                    SourceLocation(self.filename, 1),
                    "no GPU in the list; expected amd-smi --json output of at least one GPU",
                )
            )
        if self.problems:
            raise TopologError(self.problems)
        return Observations(
            gpus=tuple(physical_gpus(gpus)),
            links=tuple(links),
            files=(
                ObservedFile(
                    self.filename,
                    FORMAT if gpus else FORMAT_TOPOLOGY,
                    self.host,
                    None,
                    partial=not whole_listing(seen),
                ),
            ),
            hosts=(self.host,),
        )

    # --- values --------------------------------------------------------------------------

    def _int(self, raw: Any, what: str, loc: SourceLocation, most: int = INT64_MAX) -> int | None:
        """A whole number up to `most`, `N/A` as None; text of digits is accepted (older amd-smi quoted some)."""
        if raw is None or raw == NA:
            return None
        if isinstance(raw, Mapping) and "value" in raw:
            return self._int(raw["value"], what, loc, most)
        found: int | None = None
        digits = isinstance(raw, str) and raw.strip().isdigit() and len(raw.strip()) <= 20
        if digits or (isinstance(raw, Fraction) and raw.denominator == 1):
            found = int(raw)
        elif isinstance(raw, int) and not isinstance(raw, bool):
            found = raw
        if found is None or not 0 <= found <= most:
            self.problems.append(
                Diagnostic(loc, f'{what} is {raw!r}; expected a whole number from 0 to {most} or "N/A"')
            )
            return None
        return found

    def _gen(self, raw: Any, what: str, loc: SourceLocation) -> int | None:
        """A PCIe generation from a speed (`{"value": 32, "unit": "GT/s"}`, `"32 GT/s"`, `16000 MT/s`)."""
        if raw is None or raw == NA:
            return None
        value: Fraction | None = None
        unit = "GT/s"
        if isinstance(raw, Mapping):
            number = raw.get("value")
            unit = str(raw.get("unit", "GT/s"))
            if number is None or number == NA:
                return None
            value = number if isinstance(number, Fraction) else Fraction(number) if isinstance(number, int) else None
        elif isinstance(raw, str):
            m = _SPEED_TEXT.match(raw)
            if m:
                value, unit = exact_number(m.group(1)), m.group(2)
        if value is not None and unit == "MT/s":
            value = value / 1000
        elif unit != "GT/s":
            value = None
        gen = GEN_BY_GTS.get(value) if value is not None else None
        if gen is None:
            self.problems.append(
                Diagnostic(loc, f"{what} is {raw!r}; expected a PCIe transfer rate (2.5, 5, 8, 16, 32, 64 or 128 GT/s)")
            )
        return gen

    def _text(self, raw: Any) -> str | None:
        return None if raw is None or raw == NA or not isinstance(raw, str) or not raw.strip() else raw.strip()

    def _gpu(self, value: Mapping[str, Any], index: int, loc: SourceLocation) -> GpuObservation | None:
        bus = _section(value, "bus")
        asic = _section(value, "asic")
        board = _section(value, "board")
        pcie = _section(value, "pcie")
        ecc = _section(value, "ecc")
        usage = _section(value, "usage")
        listed = "links" not in value and "link_type" not in value and any(k in value for k in (*_LIST_KEYS, "bdf"))
        if not (bus or asic or board or pcie or ecc or usage or listed):
            return None  # a topology object: its links are read, it says nothing of the GPU itself
        bdf = self._text(bus.get("bdf")) or self._text(value.get("bdf"))
        bus_id = normalise_pci_bus_id(bdf) if bdf else None
        if bdf and bus_id is None:
            self.problems.append(
                Diagnostic(loc, f"GPU {index}: bdf {bdf!r} is not a PCI bus id; expected e.g. 0000:05:00.0")
            )
        device_gen = None
        version = self._text(bus.get("pcie_interface_version"))
        if version is not None:
            m = _GEN_TEXT.match(version)
            if m is None:
                self.problems.append(
                    Diagnostic(loc, f'GPU {index}: pcie_interface_version {version!r}; expected e.g. "Gen 5"')
                )
            else:
                device_gen = int(m.group(1))
        return GpuObservation(
            source=loc,
            observed_at=None,
            host=self.host,
            vendor="amd",
            index=index,
            pci_bus_id=bus_id,
            serial=self._text(board.get("product_serial")),
            model=self._text(asic.get("market_name")),
            pcie_gen_current=self._gen(pcie.get("speed"), f"GPU {index}: pcie.speed", loc),
            pcie_gen_max=self._gen(bus.get("max_pcie_speed"), f"GPU {index}: bus.max_pcie_speed", loc),
            pcie_gen_device_max=device_gen,
            pcie_width_current=self._int(pcie.get("width"), f"GPU {index}: pcie.width", loc, MAX_LANES),
            pcie_width_max=self._int(bus.get("max_pcie_width"), f"GPU {index}: bus.max_pcie_width", loc, MAX_LANES),
            ecc_uncorrectable_volatile=self._int(
                ecc.get("total_uncorrectable_count"), f"GPU {index}: ecc.total_uncorrectable_count", loc
            ),
            utilization_percent=self._int(usage.get("gfx_activity"), f"GPU {index}: usage.gfx_activity", loc, 100),
        )

    def _links(self, value: Mapping[str, Any], index: int, start: int, end: int) -> list[ScaleupLinkObservation]:
        """The GPU's xGMI links, in either topology layout."""
        own = self._text(value.get("bdf"))
        me = GpuRef(self.host, pci_bus_id=normalise_pci_bus_id(own) if own else None, index=index)
        found: list[tuple[int, str | None, Any, SourceLocation]] = []  # peer index, peer bdf, status, where
        links = value.get("links")
        if isinstance(links, list):
            offsets = [m.start() for m in re.finditer(r'"link_type"', self.text[start:end])]
            for i, link in enumerate(links):
                where = self.loc(start + offsets[i]) if i < len(offsets) else self.loc(start)
                if not isinstance(link, Mapping) or str(link.get("link_type", "")).upper() != "XGMI":
                    continue
                peer = link.get("gpu")
                if isinstance(peer, bool) or not isinstance(peer, int) or not 0 <= peer <= MAX_INDEX:
                    self.problems.append(Diagnostic(where, f'GPU {index}: an XGMI link without an integer "gpu" peer'))
                    continue
                found.append((peer, self._text(link.get("bdf")), link.get("link_status"), where))
        types = value.get("link_type")
        if isinstance(types, Mapping):
            access = _section(value, "link_accessibility")
            where = self.loc(start)
            for key, kind in types.items():
                m = _PEER_KEY.match(str(key))
                if m and str(kind).upper() == "XGMI" and len(m.group(1)) <= 9:
                    found.append((int(m.group(1)), None, access.get(key), where))
        out: list[ScaleupLinkObservation] = []
        for peer, peer_bdf, status, where in sorted(found, key=lambda f: f[0]):
            state = (
                {"ENABLED": "active", "DISABLED": "inactive"}.get(str(status).upper())
                if isinstance(status, str)
                else None
            )
            if state is None:
                self.problems.append(
                    Diagnostic(
                        where,
                        f"GPU {index}: the XGMI link to GPU {peer} has status {status!r}; expected ENABLED or DISABLED",
                    )
                )
                continue
            peer_ref = GpuRef(self.host, pci_bus_id=normalise_pci_bus_id(peer_bdf) if peer_bdf else None, index=peer)
            out.append(ScaleupLinkObservation(where, None, me, peer, state, None, "xgmi", peer=peer_ref))
        return out


def whole_listing(numbers: Iterable[int]) -> bool:
    """Whether a file's GPU numbers show a listing of every GPU its host's driver sees.

    amd-smi and rocm-smi print no count of the host's GPUs. One GPU alone is `-g N` (`-d N`: GPU 3 alone, or GPU 0
    alone, the form in which single GPUs are posted) or a host of one GPU, which the file cannot tell apart: it
    shows its GPU and proves no other missing (a host of eight once read as missing seven, OBS006, from `-g 0`).
    Two or more GPUs are read as the whole listing, gaps in their numbers included (fail closed): a listing of
    GPUs 0-2 and 4-7 names GPU 3 missing rather than taking the file for a selection, and a selection of several
    GPUs (`-g 0 2`) is as rare as `-g 0 1`, which no numbering tells from a whole listing either (review R-RT).
    """
    return len(set(numbers)) > 1


def physical_gpus(gpus: list[GpuObservation]) -> list[GpuObservation]:
    """The GPUs of a listing whose partitions are folded into the GPU they are part of.

    A GPU split into compute partitions (MI300X in DPX or CPX mode) is listed once per partition: the
    first at the board's bus id (`0000:05:00.0`), the others at its further functions (`05:00.1` ...,
    ROCm/amdsmi issue 132; ROCm/rocm-systems issue 5805: "the partition ID is reported in the BDF
    function") or, in older releases, at the same bus id. They are one physical GPU with one PCIe
    link: kept as the first; the other partitions are dropped, never counted as GPUs of their own.

    amd-smi numbers partitions, a declared `gpu<i>` counts boards: in a whole listing (amd-smi's numbers
    0 to n-1, each once) the boards are numbered in its order, as amd-smi numbers them with no partitions,
    so a node whose GPUs are matched by index finds each board (amd-smi's numbers 0, 8, 16 ... of a CPX
    host matched gpu0 alone and called gpu1-gpu7 missing). A selection (`-g 8`) keeps amd-smi's numbers:
    the board it is cannot be told from it.
    """
    seen: set[str] = set()
    kept: list[GpuObservation] = []
    for g in gpus:
        board = g.pci_bus_id.rsplit(".", 1)[0] if g.pci_bus_id else None
        if board is not None and board in seen:
            continue
        if board is not None:
            seen.add(board)
        kept.append(g)
    if len(kept) == len(gpus) or sorted(g.index for g in gpus if g.index is not None) != list(range(len(gpus))):
        return kept
    return [replace(g, index=k) for k, g in enumerate(kept)]


def _section(value: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """A GPU object's section, empty where absent or `N/A`."""
    found = value.get(key)
    return found if isinstance(found, Mapping) else {}


def read(text: str, filename: str, host: str | None) -> Observations:
    """The GPUs (and xGMI links) of one host's amd-smi --json output (its text form: amd_smi_text)."""
    host = host_of_file(host, filename, "amd-smi")
    return _Reader(text, filename, host).read()
