"""YAML entries read once into specs: objects, links, templates and overrides.

A template body is read (and its mistakes reported) once, however many thousand times it
is instantiated; expansion (`templates.py`) only renders name patterns and stamps ids.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from verifier.core.errors import SourceLocation
from verifier.core.frozen import Record
from verifier.core.limits import INT64_MAX, current_limits, exceeded
from verifier.sources.inventory import units
from verifier.sources.inventory.model import EMPTY_INT, EMPTY_STR, LINK_KINDS, OBJECT_KINDS, PROMISES, STATES
from verifier.sources.inventory.patterns import Pattern, PatternError, compile_pattern, foreach_values
from verifier.sources.inventory.validate import Problems, misspelled, name_problem, one_of
from verifier.sources.inventory.yaml_source import YList, YMap

# Keys that decide which objects an entry makes: when one is misspelt, what the entry
# would have made is unknown, and so is which dangling link endpoints follow from it.
_STRUCTURAL_KEYS = ("name", "kind", "template", "count", "start", "children")
_FIGURE_KEYS = ("size", "bandwidth", "latency", "level", "index", "type", "memory", "power", "price", "attrs")
OBJECT_KEYS = (
    "name",
    "kind",
    "template",
    "count",
    "start",
    "model",
    "labels",
    "state",
    "parent",
    "children",
    "links",
    "software",
    "promises",
    "serves",
    "overrides",
    "description",
    *_FIGURE_KEYS,
)
TEMPLATE_KEYS = tuple(k for k in OBJECT_KEYS if k not in ("name", "template", "count", "start", "overrides", "parent"))
LINK_KEYS = (
    "id",
    "a",
    "b",
    "kind",
    "bandwidth",
    "generation",
    "lanes",
    "count",
    "latency",
    "labels",
    "attrs",
    "state",
    "foreach",
    "description",
)
OVERRIDE_KEYS = (
    "labels",
    "state",
    "model",
    "software",
    "devices",
    "links",
    "remove",
    "description",
    *_FIGURE_KEYS,
)
DEVICE_OVERRIDE_KEYS = ("labels", "state", "model", "remove", "description", *_FIGURE_KEYS)
LINK_OVERRIDE_KEYS = (
    "a",
    "b",
    "state",
    "bandwidth",
    "count",
    "generation",
    "lanes",
    "labels",
    "attrs",
    "remove",
    "description",
)

# Per-link, per-direction MB/s used when a link gives generation and count/lanes but no
# bandwidth. NVLink: P100 gen1 20 GB/s; V100, A100, H100 (gen2-4) 25 GB/s; B200 (gen5)
# 50 GB/s per link per direction (NVIDIA architecture whitepapers). PCIe per lane after
# line encoding: gen3 985 MB/s (128b/130b), doubling per generation to gen5 (PCI-SIG); gen6
# has no 128b/130b but 256-byte flits of which 242 bytes carry TLPs and data-link payload (the
# rest CRC and FEC; PCIe Base Specification 6.0): 8,000 x 242/256 = 7,562.5, so 7,562.
NVLINK_LINK_MBPS = {1: 20000, 2: 25000, 3: 25000, 4: 25000, 5: 50000}
PCIE_LANE_MBPS = {1: 250, 2: 500, 3: 985, 4: 1969, 5: 3938, 6: 7562}
XGMI_LINK_MBPS = {4: 64000}  # MI300X: 128 GB/s bidirectional per Infinity Fabric link


@dataclass(slots=True, repr=False, eq=False)
class TextMap(Record):
    """Labels or software: constant entries plus entries whose values are patterns."""

    const: Mapping[str, str] = field(default_factory=lambda: EMPTY_STR)
    patterns: tuple[tuple[str, Pattern], ...] = ()
    pattern_locs: Mapping[str, SourceLocation] = field(default_factory=dict)
    """Where each pattern's key is written: a value it makes is judged there once rendered."""

    def render(self, ns: Mapping[str, int | str]) -> Mapping[str, str]:
        if not self.patterns:
            return self.const
        out = dict(self.const)
        for k, p in self.patterns:
            out[k] = p.render(ns)
        return out

    def merged(self, other: TextMap) -> TextMap:
        if not other.const and not other.patterns:
            return self
        if not self.const and not self.patterns:
            return other
        over = set(other.const) | {k for k, _ in other.patterns}
        return TextMap(
            MappingProxyType({**{k: v for k, v in self.const.items() if k not in over}, **other.const}),
            tuple((k, p) for k, p in self.patterns if k not in over) + other.patterns,
            {**{k: v for k, v in self.pattern_locs.items() if k not in over}, **other.pattern_locs},
        )


@dataclass(slots=True, repr=False, eq=False)
class Figures(Record):
    """Numeric attributes of an object and its typed strings; `size` waits for the kind."""

    quantities: dict[str, int] = field(default_factory=dict)
    size: Any = None
    size_loc: SourceLocation | None = None
    type: str | None = None

    def for_kind(self, kind: str, problems: Problems) -> tuple[Mapping[str, int], Mapping[str, str]]:
        q: dict[str, int] = dict(self.quantities)
        labels: dict[str, str] = {}
        if self.size is not None and self.size_loc is not None:
            try:
                if kind == "cache":
                    q["size_kb"] = units.size_kb(self.size)
                else:
                    q["size_mb"] = units.size_mb(self.size)
            except units.UnitError as err:
                problems.add(self.size_loc, f"'size': {err}")
        if self.type is not None:
            labels["cache_type" if kind == "cache" else "memory_type"] = self.type
        return (MappingProxyType(q) if q else EMPTY_INT), (MappingProxyType(labels) if labels else EMPTY_STR)

    def merged(self, other: Figures) -> Figures:
        return Figures(
            {**self.quantities, **other.quantities},
            other.size if other.size is not None else self.size,
            other.size_loc if other.size is not None else self.size_loc,
            other.type if other.type is not None else self.type,
        )

    @property
    def empty(self) -> bool:
        return not self.quantities and self.size is None and self.type is None


@dataclass(slots=True, repr=False, eq=False)
class LinkSpec(Record):
    loc: SourceLocation
    a: Pattern
    b: Pattern
    kind: str
    mbps: int
    attrs: Mapping[str, int]
    labels: TextMap
    state: str | None
    id: Pattern | None
    foreach: tuple[tuple[str, tuple[int | str, ...]], ...]


@dataclass(slots=True, repr=False, eq=False)
class LinkOverride(Record):
    loc: SourceLocation
    a: str
    b: str
    state: str | None
    mbps: int | None
    count: int | None
    labels: Mapping[str, str]
    attrs: Mapping[str, int]
    remove: bool
    generation: int | None = None  # a link that trains at another generation (PCIe) than its template's
    lanes: int | None = None  # or at another width


@dataclass(slots=True, repr=False, eq=False)
class DeviceOverride(Record):
    loc: SourceLocation
    labels: Mapping[str, str]
    state: str | None
    model: str | None
    figures: Figures
    remove: bool


@dataclass(slots=True, repr=False, eq=False)
class Override(Record):
    loc: SourceLocation
    root: DeviceOverride
    software: Mapping[str, str]
    devices: dict[str, DeviceOverride]
    links: list[LinkOverride]


@dataclass(slots=True, repr=False, eq=False)
class ObjSpec(Record):
    loc: SourceLocation
    name: Pattern | None
    kind: str | None
    template: str | None
    template_loc: SourceLocation | None
    count: int | None
    start: int
    model: str | None
    labels: TextMap
    figures: Figures
    state: str | None
    parent: Pattern | None
    children: list[ObjSpec]
    links: list[LinkSpec]
    software: TextMap
    promises: tuple[str, ...]
    serves: list[Pattern]
    overrides: dict[str, Override]
    seq: int = 0  # running counter behind {seq}: instances of this entry so far
    broken: SourceLocation | None = None
    """Where the mistake is reported that leaves this entry's objects unknown (a misspelt
    or missing name, kind, count...): links to what it would have made are not errors of
    their own."""
    lost: frozenset[str] = frozenset()
    """The keys that mistake lost; only 'children' means the entry itself is still whole."""


@dataclass(slots=True, repr=False, eq=False)
class TemplateDef(Record):
    name: str
    loc: SourceLocation
    body: ObjSpec


def link_id_problem(text: str) -> str | None:
    """Why a written link id cannot name one link, or None. A leading `/` makes an id written inside a
    node absolute (as for link ends) and is dropped: `/` alone was stored as the empty id, `//x` as
    `/x`; an empty part (`a//b`, `x/`) or one of white space only (`a/ /b`) names no object's link
    either. None of these is a reading.
    """
    rest = text.removeprefix("/")
    if not rest or rest.startswith("/") or rest.endswith("/") or "//" in rest:
        return (
            "has an empty part; expected a link id such as 'n0-uplink' or 'rack1/cable7' "
            "(a leading '/' makes an id written in a node absolute)"
        )
    if rest.isprintable() and " " not in rest:  # the common case: no white space at all
        return None
    # A part of white space alone (`a/ /b`, a foreach value " ") reads as empty to whoever looks at a
    # listing, and a policy or --fail-link naming it cannot be told apart from a typing slip.
    blank = next((part for part in rest.split("/") if not part.strip()), None)
    if blank is not None:
        return (
            f"has a part that is only white space ({blank!r}); expected a link id such as 'n0-uplink' or "
            "'rack1/cable7' (a leading '/' makes an id written in a node absolute)"
        )
    return None


def _pattern(problems: Problems, m: YMap, key: str, what: str) -> Pattern | None:
    text = problems.text(m, key, what)
    if text is None:
        return None
    if len(text) > current_limits().id_length:
        problems.add(m.key_loc(key), f"{key!r} in {what} {name_problem(text)}")
        return None
    try:
        return compile_pattern(text)
    except PatternError as err:
        problems.add(m.key_loc(key), f"{key!r} in {what}: {err}")
        return None


def _text_map(problems: Problems, m: YMap, key: str, what: str) -> TextMap:
    raw = problems.str_map(m, key, what)
    if not raw:
        return TextMap()
    const: dict[str, str] = {}
    pats: list[tuple[str, Pattern]] = []
    locs: dict[str, SourceLocation] = {}
    sub = m[key]
    for k, v in raw.items():
        if "{" in v or "}" in v:
            try:
                pats.append((k, compile_pattern(v)))
                locs[k] = sub.key_loc(k)
            except PatternError as err:
                problems.add(sub.key_loc(k), f"{k!r} in {key} of {what}: {err}")
        else:
            const[k] = v
    return TextMap(MappingProxyType(const), tuple(pats), locs)


def _figures(problems: Problems, m: YMap, what: str) -> Figures:
    fig = Figures()
    q = fig.quantities
    if "size" in m:
        fig.size, fig.size_loc = m["size"], m.key_loc("size")
    for key, qkey, parse in (
        ("bandwidth", "bandwidth_mbps", units.bandwidth_mbps),
        ("latency", "latency_ns", units.latency_ns),
        ("power", "power_w", units.power_w),
        ("price", "price_millicents_per_hour", units.price_millicents),
        ("level", "level", lambda v: units.integer(v, "level", minimum=1)),
        ("index", "index", lambda v: units.integer(v, "index")),
    ):
        value = problems.unit(m, key, what, parse)
        if value is not None:
            q[qkey] = value
    fig.type = problems.text(m, "type", what)
    mem = problems.mapping(m, "memory", what)
    if mem is not None:
        w = f"memory of {what}"
        problems.keys(mem, ("size", "bandwidth"), w)
        size = problems.unit(mem, "size", w, units.size_mb)
        bw = problems.unit(mem, "bandwidth", w, units.bandwidth_mbps)
        if size is not None:
            q["hbm_mb"] = size
        if bw is not None:
            q["hbm_mbps"] = bw
    attrs = problems.int_map(m, "attrs", what)
    if attrs:
        _check_fabric_manager_modes(problems, m, attrs, what)
        q.update(attrs)
    return fig


ACCESS_LINK_FAILURE_MODE = "access_link_failure_mode"
NVSWITCH_FAILURE_MODE = "nvswitch_failure_mode"
FABRIC_MANAGER_MODES = (ACCESS_LINK_FAILURE_MODE, NVSWITCH_FAILURE_MODE)
"""`attrs` naming a node's fabric manager mode (rules/topology/lib/platform.dl; docs/inventory-format.md), or
an NVSwitch model's `specs` default: 0 or 1, as its config. 0, the default, takes a GPU out of NVLink
peer-to-peer; 1 keeps it and disables the NVSwitch plane instead."""


def _check_fabric_manager_modes(problems: Problems, m: YMap, attrs: dict[str, int], what: str) -> None:
    """A fabric manager mode other than 0 or 1 would silently read as the default: refused instead."""
    for key in FABRIC_MANAGER_MODES:
        if attrs.get(key, 0) not in (0, 1):
            sub = m["attrs"]
            loc = sub.key_loc(key) if isinstance(sub, YMap) else m.key_loc("attrs")
            problems.add(
                loc,
                f"{key!r} in attrs of {what} must be 0 (the fabric manager's default: a failure takes the GPU out of"
                f" NVLink peer-to-peer) or 1 (it disables the NVSwitch plane instead), got {attrs[key]}",
            )
            del attrs[key]


def _state(problems: Problems, m: YMap, what: str) -> str | None:
    state = problems.choice(m, "state", what, STATES)
    return None if state == "ok" else state


def _override_state(problems: Problems, m: YMap, what: str) -> str | None:
    """The state an override writes, `ok` kept: it puts back in service what the template wrote down
    or drained (None is "not written": the template's state stands).
    """
    return problems.choice(m, "state", what, STATES)


def _promises(problems: Problems, m: YMap, what: str) -> tuple[str, ...]:
    return tuple(problems.known_words(m, "promises", what, PROMISES, "promise"))


def read_object(m: YMap, problems: Problems, *, in_template: bool = False, what: str = "") -> ObjSpec:
    """One entry of `objects:`/`children:` (or, with in_template, a template body)."""
    allowed = TEMPLATE_KEYS if in_template else OBJECT_KEYS
    meant = misspelled(m, allowed) if any(k not in allowed for k in m) else {}
    # A misspelt `name:` still says which object the messages are about.
    raw_name = m.get("name", m.get(meant["name"]) if "name" in meant else None)
    label = what or (f"object {raw_name!r}" if isinstance(raw_name, str) else "an object")
    problems.keys(m, allowed, label)
    lost = frozenset(k for k in _STRUCTURAL_KEYS if k in meant)
    broken = min((m.key_loc(meant[k]) for k in lost), default=None)
    # `name:` with nothing after it is YAML null: as missing as no key at all.
    if not in_template and m.get("name") is None and "name" not in meant:
        problems.add(m.key_loc("name"), f"{label} has no 'name'; every object needs one")
        broken = broken or m.key_loc("name")
    name = None if in_template else _pattern(problems, m, "name", label)
    if not in_template and name is None and "name" in m:
        broken = broken or m.key_loc("name")
    kind = problems.choice(m, "kind", label, OBJECT_KINDS)
    if kind is None and isinstance(m.get("kind"), str):
        # Reported above; keep the object anyway so links to it do not report twice.
        kind = str(m["kind"])
    elif kind is None and m.get("kind") is not None:
        broken = broken or m.key_loc("kind")
    template = None if in_template else problems.text(m, "template", label)
    if not in_template and template is None and m.get("kind") is None and "kind" not in meant:
        problems.add(
            m.key_loc("kind"),
            f"{label} has no 'kind' (and no 'template'); expected one of: {one_of(OBJECT_KINDS)}",
        )
        broken = broken or m.key_loc("kind")
    count = problems.unit(m, "count", label, lambda v: units.integer(v, "count", minimum=1))
    if count is None and m.get("count") is not None:
        # Reported above; the entry makes nothing (count 0) rather than one instance
        # whose `{i}` is undefined, and what it would have made is not reported missing.
        count = 0
        broken = broken or m.key_loc("count")
    start = problems.unit(m, "start", label, lambda v: units.integer(v, "start")) or 0
    if count and name is not None and not (name.variables & {"i", "seq"}):
        problems.add(
            m.key_loc("name"),
            f"{label} has 'count: {count}' but its name has no {{i}} or {{seq}}; every instance would get the same id",
        )
    children: list[ObjSpec] = []
    kids = problems.seq(m, "children", label)
    for i, child in enumerate(kids or ()):
        if isinstance(child, YMap):
            children.append(read_object(child, problems))
        else:
            problems.add(kids.item_loc(i) if kids else m.loc, f"children of {label} must be mappings (objects)")
    links = read_links(problems, m, "links", label)
    serves: list[Pattern] = []
    for s in problems.words(m, "serves", label) or []:
        try:
            serves.append(compile_pattern(s))
        except PatternError as err:
            problems.add(m.key_loc("serves"), f"'serves' in {label}: {err}")
    overrides: dict[str, Override] = {}
    ov = problems.mapping(m, "overrides", label)
    if ov is not None:
        if count is None:
            problems.add(m.key_loc("overrides"), f"'overrides' in {label} needs 'count' (it changes some instances)")
        for key, body in ov.items():
            if isinstance(body, YMap):
                overrides[key] = _read_override(problems, body, f"override {key!r}")
            else:
                problems.add(ov.key_loc(key), f"override {key!r} must be a mapping of changes")
    return ObjSpec(
        loc=m.loc,
        name=name,
        kind=kind,
        template=template,
        template_loc=m.key_loc("template") if template else None,
        count=count,
        start=start,
        model=problems.text(m, "model", label),
        labels=_text_map(problems, m, "labels", label),
        figures=_figures(problems, m, label),
        # An object's own `state: ok` is kept: it puts back in service what its template's body
        # wrote down or drained, as an override's does (a body's `ok` says nothing: dropped).
        state=_state(problems, m, label) if in_template else _override_state(problems, m, label),
        parent=None if in_template else _pattern(problems, m, "parent", label),
        children=children,
        links=links,
        software=_text_map(problems, m, "software", label),
        promises=_promises(problems, m, label),
        serves=serves,
        overrides=overrides,
        broken=broken,
        lost=lost,
    )


def _read_device_override(problems: Problems, m: YMap, what: str, keys: tuple[str, ...]) -> DeviceOverride:
    problems.keys(m, keys, what)
    return DeviceOverride(
        loc=m.loc,
        labels=problems.str_map(m, "labels", what) or EMPTY_STR,
        state=_override_state(problems, m, what),
        model=problems.text(m, "model", what),
        figures=_figures(problems, m, what),
        remove=_flag(problems, m, "remove", what),
    )


def _flag(problems: Problems, m: YMap, key: str, what: str) -> bool:
    value = m.get(key, False)
    if not isinstance(value, bool):
        problems.add(m.key_loc(key), f"{key!r} in {what} must be true or false")
        return False
    return value


def _read_override(problems: Problems, m: YMap, what: str) -> Override:
    root = _read_device_override(problems, m, what, OVERRIDE_KEYS)
    if root.remove:
        # The instance is decommissioned (dgx17 of 32 sent back): it goes with all it holds. Anything
        # else written beside it would change what no longer exists, so it is a mistake, not ignored.
        others = [k for k in m if k not in ("remove", "description")]
        if others:
            problems.add(
                m.key_loc(others[0]),
                f"{what} has 'remove: true' and {', '.join(repr(k) for k in others)}: a removed instance "
                "has nothing left to change; expected 'remove: true' alone (or no 'remove')",
            )
    devices: dict[str, DeviceOverride] = {}
    dev = problems.mapping(m, "devices", what)
    if dev is not None:
        for key, body in dev.items():
            if isinstance(body, YMap):
                devices[key] = _read_device_override(problems, body, f"device {key!r} of {what}", DEVICE_OVERRIDE_KEYS)
            else:
                problems.add(dev.key_loc(key), f"device {key!r} of {what} must be a mapping of changes")
    links: list[LinkOverride] = []
    items = problems.seq(m, "links", what)
    for i, item in enumerate(items or ()):
        w = f"a link override of {what}"
        if not isinstance(item, YMap):
            problems.add(items.item_loc(i) if items else m.loc, f"{w} must be a mapping with 'a' and 'b'")
            continue
        problems.keys(item, LINK_OVERRIDE_KEYS, w, required=("a", "b"), one_per_typo=True)
        a, b = problems.text(item, "a", w), problems.text(item, "b", w)
        if a is None or b is None:
            continue
        links.append(
            LinkOverride(
                loc=item.loc,
                a=a,
                b=b,
                state=_override_state(problems, item, w),
                mbps=problems.unit(item, "bandwidth", w, units.bandwidth_mbps),
                count=_link_count(problems, item, w),
                labels=problems.str_map(item, "labels", w) or EMPTY_STR,
                attrs=problems.int_map(item, "attrs", w) or EMPTY_INT,
                remove=_flag(problems, item, "remove", w),
                generation=problems.unit(item, "generation", w, lambda v: units.integer(v, "generation", minimum=1)),
                lanes=problems.unit(item, "lanes", w, lambda v: units.integer(v, "lanes", minimum=1)),
            )
        )
    return Override(m.loc, root, problems.str_map(m, "software", what) or EMPTY_STR, devices, links)


def read_links(problems: Problems, m: YMap, key: str, what: str) -> list[LinkSpec]:
    items = problems.seq(m, key, what)
    out: list[LinkSpec] = []
    for i, item in enumerate(items or ()):
        if not isinstance(item, YMap):
            problems.add(
                items.item_loc(i) if items else m.loc,
                f"links of {what} must be mappings with 'a', 'b', 'kind'",
            )
            continue
        spec = read_link(problems, item)
        if spec is not None:
            out.append(spec)
    return out


def _link_count(problems: Problems, m: YMap, what: str) -> int | None:
    """A link's `count` (parallel links), None where absent or refused.

    The checks multiply it (ports taken, bandwidth times count): a count no link has would
    overflow their 64-bit arithmetic far from this line, so it is bounded as a template's is.
    """
    count = problems.unit(m, "count", what, lambda v: units.integer(v, "count", minimum=1))
    if count is not None and count > current_limits().template_count:
        problems.add(
            m.key_loc("count"),
            exceeded("template_count", f"'count' in {what} asks for {count:,} parallel links"),
        )
        return None
    return count


def read_link(problems: Problems, m: YMap) -> LinkSpec | None:
    what = f"link {m.get('a')!s} - {m.get('b')!s}" if "a" in m and "b" in m else "a link"
    problems.keys(m, LINK_KEYS, what, required=("a", "b", "kind"), one_per_typo=True)
    a = _pattern(problems, m, "a", what)
    b = _pattern(problems, m, "b", what)
    kind = problems.choice(m, "kind", what, LINK_KINDS)
    gen = problems.unit(m, "generation", what, lambda v: units.integer(v, "generation", minimum=1))
    lanes = problems.unit(m, "lanes", what, lambda v: units.integer(v, "lanes", minimum=1))
    count = _link_count(problems, m, what)
    latency = problems.unit(m, "latency", what, units.latency_ns)
    attrs: dict[str, int] = {}
    for k, v in (("generation", gen), ("lanes", lanes), ("count", count), ("latency_ns", latency)):
        if v is not None:
            attrs[k] = v
    attrs.update(problems.int_map(m, "attrs", what) or {})
    mbps: int | None = None
    if "bandwidth" in m:
        mbps = problems.unit(m, "bandwidth", what, units.bandwidth_mbps)
        if mbps is None:
            return None
    elif kind is not None:
        mbps = derived_mbps(kind, gen, count, lanes)
        if mbps is None:
            problems.add(
                m.loc,
                f"{what} has no 'bandwidth' and none can be derived; expected 'bandwidth: 64 GB/s' "
                "(per direction) or generation with count (nvlink, nvswitch, xgmi) or lanes (pcie)",
            )
            return None
        if mbps > INT64_MAX:
            key = "lanes" if kind == "pcie" else "count"
            problems.add(
                m.key_loc(key) if key in m else m.loc,
                f"'{key}' in {what}: the bandwidth it gives ({mbps} MB/s) does not fit in 64 bits; "
                f"expected a {key} whose bandwidth is at most {INT64_MAX} MB/s",
            )
            return None
    foreach: list[tuple[str, tuple[int | str, ...]]] = []
    fe = problems.mapping(m, "foreach", what)
    total = 1
    if fe is not None:
        for var, raw in fe.items():
            try:
                values = tuple(foreach_values(raw))
            except PatternError as err:
                problems.add(fe.key_loc(var), f"foreach {var!r} of {what}: {err}")
                return None
            bad = next((p for v in values if isinstance(v, str) and (p := name_problem(v)) is not None), None)
            if bad is not None:
                problems.add(fe.key_loc(var), f"a value of foreach {var!r} of {what} {bad}")
                return None
            total *= max(1, len(values))
            foreach.append((var, values))
        if total > 10_000_000:
            problems.add(m.key_loc("foreach"), f"foreach of {what} makes {total:,} links; expected at most 10,000,000")
            return None
    link_id = _pattern(problems, m, "id", what)
    if link_id is not None and (bad_id := link_id_problem(link_id.text)) is not None:
        problems.add(m.key_loc("id"), f"'id' in {what}: {link_id.text!r} {bad_id}")
        return None
    if a is None or b is None or kind is None or mbps is None:
        return None
    return LinkSpec(
        loc=m.loc,
        a=a,
        b=b,
        kind=kind,
        mbps=mbps,
        attrs=MappingProxyType(attrs) if attrs else EMPTY_INT,
        labels=_text_map(problems, m, "labels", what),
        state=_state(problems, m, what),
        id=link_id,
        foreach=tuple(foreach),
    )


def derived_mbps(kind: str, gen: int | None, count: int | None, lanes: int | None) -> int | None:
    if gen is None:
        return None
    if kind in ("nvlink", "nvswitch") and gen in NVLINK_LINK_MBPS:
        return NVLINK_LINK_MBPS[gen] * (count or 1)
    if kind == "xgmi" and gen in XGMI_LINK_MBPS:
        return XGMI_LINK_MBPS[gen] * (count or 1)
    if kind == "pcie" and gen in PCIE_LANE_MBPS and lanes is not None:
        return PCIE_LANE_MBPS[gen] * lanes
    return None


def read_templates(problems: Problems, m: YMap, key: str) -> list[TemplateDef]:
    sub = problems.mapping(m, key, "the inventory")
    out: list[TemplateDef] = []
    for name, body in (sub or {}).items():
        assert sub is not None
        if not isinstance(body, YMap):
            problems.add(sub.key_loc(name), f"template {name!r} must be a mapping (an object without a name)")
            continue
        problem = name_problem(name)
        if problem is not None:
            problems.add(sub.key_loc(name), f"template name {name!r} {problem}")
            continue
        spec = read_object(body, problems, in_template=True, what=f"template {name!r}")
        if spec.kind is None and body.get("kind") is None and "kind" not in spec.lost:
            loc = body.key_loc("kind")
            problems.add(loc, f"template {name!r} has no 'kind'; expected one of: {one_of(OBJECT_KINDS)}")
            spec.broken = spec.broken or loc
        out.append(TemplateDef(name, sub.key_loc(name), spec))
    return out


def is_list(value: object) -> bool:
    return isinstance(value, YList)
