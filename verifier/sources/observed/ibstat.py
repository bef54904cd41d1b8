"""`ibstat` (infiniband-diags): one block per host channel adapter, one sub-block per port.

    CA 'mlx5_0'
            CA type: MT4119
            Node GUID: 0xec0d9a0300431464
            Port 1:
                    State: Active
                    Physical state: LinkUp
                    Rate: 100
                    Port GUID: 0xec0d9a0300431464
                    Link layer: InfiniBand

`Rate` is the port's data rate in Gb/s as the kernel reports it (`/sys/class/infiniband/*/ports/*/rate`
without its unit), kept exactly as Mb/s. Lines are read by their words, not their indentation:
copies pasted from web pages lose the tabs. ibstat prints no host name and no time, so the host
is the one the file lies under in the observation folder. A port block without its state, physical
state, rate or link layer is a truncated file and is refused.

`ibstatus` (the infiniband-diags script that prints each port's sysfs files) is read by the same
reader, as the same observation: one block per port,

    Infiniband device 'mlx5_0' port 1 status:
            state:           4: ACTIVE
            phys state:      5: LinkUp
            rate:            100 Gb/sec (4X EDR)
            link_layer:      Ethernet

Its states are the kernel's (`4: ACTIVE`), spelt here as ibstat spells the same number (`Active`), so a
port reads the same through either tool; its rate is the kernel's `<Gb/s> Gb/sec (<width>X <speed>)`.
A port whose rate file could not be read prints an empty rate: unknown, and refused for an Active
port (whose rate is judged), kept unknown for one that is not up.

`ibv_devinfo` (rdma-core's libibverbs) is read the same way: `hca_id: mlx5_0`, then per `port: 1` its
`state: PORT_ACTIVE (4)` and `link_layer`; with `-v` also `phys_state: LINK_UP (5)`, `active_width:
4X (2)` and `active_speed: 100.0 Gbps (128)`, whose product is the port's rate (4 x 100.0 = 400 Gb/s,
the kernel's `400 Gb/sec (4X NDR)`). Without `-v` it states no rate and no physical state: the rate is
unknown (the port's state and link layer are still judged, its speed is not), and an Active port's
physical state is LinkUp, which the InfiniBand state machine requires of every Active port.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.limits import INT64_MAX
from verifier.sources.observed.model import NicPortObservation, Observations, ObservedFile, exact_number, host_of_file

FORMAT = "ibstat"
_CA = re.compile(r"^CA\s+'([^']+)'\s*$")
_PORT = re.compile(r"^Port\s+(\d{1,3})\s*:\s*$")  # IB ports are numbered 1-254
_FIELD = re.compile(r"^([A-Za-z][A-Za-z ]*?)\s*:\s*(.*?)\s*$")
_REQUIRED = ("State", "Physical state", "Rate", "Link layer")
MARKERS = ("CA '", "Physical state:", "Link layer:")
"""Text every ibstat listing holds: how sniff.py recognises one."""
_IBSTATUS_PORT = re.compile(r"^Infiniband device\s+'([^']+)'\s+port\s+(\d{1,3})\s+status:\s*$")
_IBSTATUS_FIELD = re.compile(r"^(default gid|base lid|sm lid|state|phys state|rate|link_layer)\s*:\s*(.*?)\s*$")
_IBSTATUS_REQUIRED = ("state", "phys state", "rate", "link_layer")
_SYSFS_NUMBERED = re.compile(r"^(\d{1,2})\s*:\s*(\S.*)$")
_SYSFS_RATE = re.compile(r"^(\d+(?:\.\d+)?) Gb/sec(?: \((\d{1,2})X(?: ?([A-Z0-9]+))?\))?$")
# The kernel's port states (include/rdma/ib_verbs.h enum ib_port_state) by number, in ibstat's words
# (infiniband-diags ibstat.c port_state_str), so a rule reads one spelling whichever tool wrote the file.
_IBSTAT_STATE = {1: "Down", 2: "Initializing", 3: "Armed", 4: "Active"}
# Physical states (enum ib_port_phys_state): the kernel and ibstat use the same words except 7.
_IBSTAT_PHYS = {
    1: "Sleep",
    2: "Polling",
    3: "Disabled",
    4: "PortConfigurationTraining",
    5: "LinkUp",
    6: "LinkErrorRecovery",
    7: "PhyTest",
}


_VERBS_HCA = re.compile(r"^hca_id:\s*\S+$")
_VERBS_FIELD = re.compile(r"^([A-Za-z_][\w \[\]]*?)\s*:\s*(.*?)\s*$")
# devinfo.c words a number it does not know "invalid state (5)", "invalid physical state (0)": kept as printed.
_VERBS_NUMBERED = re.compile(r"^([A-Za-z_ ]+?)\s*\((\d{1,2})\)$")
_VERBS_WIDTH = re.compile(r"^(1|2|4|8|12)X\s*\(\d+\)$")
_VERBS_SPEED = re.compile(r"^(\d+(?:\.\d+)?) Gbps\s*\(\d+\)$")
# devinfo.c prints "invalid widthX (<code>)" / "invalid speed (<code>)" for a code its release has no words
# for: 0 on a port that is down (openucx/ucx issue 9908, a DISABLED ConnectX-6 port), or NDR's 128 under
# releases older than NDR. The code is the verbs enum (ibv_port_attr active_width/active_speed), exact.
_VERBS_INVALID = re.compile(r"^invalid (width|speed)X?\s*\((\d+)\)$")
_VERBS_WIDTH_CODE = {1: 1, 2: 4, 4: 8, 8: 12, 16: 2}
_VERBS_SPEED_CODE = {
    1: "2.5",
    2: "5.0",
    4: "10.0",
    8: "10.0",
    16: "14.0",
    32: "25.0",
    64: "50.0",
    128: "100.0",
    256: "200.0",
}


def looks_like(text: str) -> bool:
    head = text[:20_000]
    if all(m in head for m in MARKERS):
        return True
    # ibstatus and ibv_devinfo start with their first port's or adapter's line: decided there first.
    start = text[:256].lstrip()
    if not start.startswith(("Infiniband device", "hca_id:")):
        return False
    first = start.split("\n", 1)[0].strip()
    if "link_layer:" not in head:  # both forms print it for every port
        return False
    return _IBSTATUS_PORT.match(first) is not None or (_VERBS_HCA.match(first) is not None and "state:" in head)


class _Port:
    def __init__(self, device: str, number: int, loc: SourceLocation, ca: dict[str, str]) -> None:
        self.device = device
        self.number = number
        self.loc = loc
        self.ca = ca
        self.fields: dict[str, tuple[str, SourceLocation]] = {}


def _rate(text: str, loc: SourceLocation, problems: list[Diagnostic]) -> int | None:
    gbps = exact_number(text)
    if gbps is None or gbps < 0:
        problems.append(Diagnostic(loc, f"Rate {text!r} is not a number; expected the port's rate in Gb/s (e.g. 400)"))
        return None
    mbps = gbps * 1000
    if mbps > INT64_MAX:
        problems.append(Diagnostic(loc, f"Rate {text!r} Gb/s is beyond any port's; expected e.g. 400"))
        return None
    if mbps.denominator != 1:
        problems.append(Diagnostic(loc, f"Rate {text!r} Gb/s is not a whole number of Mb/s; expected e.g. 2.5 or 400"))
        return None
    return int(mbps)


def _sysfs_state(text: str, names: dict[int, str], what: str, loc: SourceLocation, problems: list[Diagnostic]) -> str:
    """The state ibstatus prints (`4: ACTIVE`, `5: LinkUp`) in ibstat's words.

    A number the kernel does not define (5, ACTIVE_DEFER) keeps the kernel's name: never up to a rule.
    """
    m = _SYSFS_NUMBERED.match(text)
    if m is None:
        problems.append(
            Diagnostic(loc, f"{what} {text!r} is not the kernel's '<number>: <name>'; expected e.g. '4: ACTIVE'")
        )
        return text
    return names.get(int(m.group(1)), m.group(2))


def _sysfs_rate(text: str, active: bool, loc: SourceLocation, problems: list[Diagnostic]) -> int | None:
    """The rate ibstatus prints (`100 Gb/sec (4X EDR)`) as exact Mb/s; an empty one (file unreadable) is unknown."""
    if text in ("", "unknown"):
        if active:
            problems.append(
                Diagnostic(loc, "the rate of an Active port is not stated; expected e.g. '400 Gb/sec (4X NDR)'")
            )
        return None
    m = _SYSFS_RATE.match(text)
    if m is None:
        problems.append(
            Diagnostic(
                loc,
                f"rate {text!r} is not the kernel's '<Gb/s> Gb/sec (<width>X <speed>)'; "
                "expected e.g. '400 Gb/sec (4X NDR)'",
            )
        )
        return None
    return _rate(m.group(1), loc, problems)


def _read_ibstatus(text: str, filename: str, host: str) -> Observations:
    problems: list[Diagnostic] = []
    out: list[NicPortObservation] = []
    blocks: list[tuple[str, int, SourceLocation, dict[str, tuple[str, SourceLocation]]]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        loc = SourceLocation(filename, number)
        if not line:
            continue
        start = _IBSTATUS_PORT.match(line)
        if start:
            blocks.append((start.group(1), int(start.group(2)), loc, {}))
            continue
        if line.startswith("Fatal error:"):
            problems.append(Diagnostic(loc, f"ibstatus failed on this host: {line!r}; expected its port listing"))
            continue
        field = _IBSTATUS_FIELD.match(line)
        if field is None or not blocks:
            problems.append(
                Diagnostic(
                    loc,
                    f"unexpected text {line[:80]!r}; "
                    "expected \"Infiniband device 'name' port N status:\" and its fields",
                )
            )
            continue
        blocks[-1][3][field.group(1)] = (field.group(2), loc)
    seen: dict[tuple[str, int], SourceLocation] = {}
    for device, port, loc, fields in blocks:
        if not _first_and_whole(device, port, loc, fields, _IBSTATUS_REQUIRED, seen, problems):
            continue
        state = _sysfs_state(fields["state"][0], _IBSTAT_STATE, "state", fields["state"][1], problems)
        phys = _sysfs_state(fields["phys state"][0], _IBSTAT_PHYS, "phys state", fields["phys state"][1], problems)
        rate = _sysfs_rate(fields["rate"][0], state == "Active", fields["rate"][1], problems)
        # ibstatus prints "IB" when the kernel has no link_layer file (kernels before RoCE): InfiniBand.
        layer = fields["link_layer"][0]
        out.append(
            NicPortObservation(
                source=loc,
                observed_at=None,
                host=host,
                device=device,
                port=port,
                state=state,
                physical_state=phys,
                rate_mbps=rate,
                link_layer="InfiniBand" if layer == "IB" else layer,
            )
        )
    return _observed(out, problems, filename, host)


def _verbs_number(text: str, names: dict[int, str], what: str, loc: SourceLocation, problems: list[Diagnostic]) -> str:
    """The state ibv_devinfo prints (`PORT_ACTIVE (4)`, `LINK_UP (5)`) in ibstat's words, by its number."""
    m = _VERBS_NUMBERED.match(text)
    if m is None:
        problems.append(Diagnostic(loc, f"{what} {text!r} is not '<NAME> (<number>)'; expected e.g. 'PORT_ACTIVE (4)'"))
        return text
    return names.get(int(m.group(2)), m.group(1))


def _verbs_rate(fields: dict[str, tuple[str, SourceLocation]], active: bool, problems: list[Diagnostic]) -> int | None:
    """active_width x active_speed (`4X (2)`, `100.0 Gbps (128)`) as exact Mb/s; None when either is not printed.

    A width or speed devinfo.c calls invalid is read by its code where the verbs enum defines it; else it
    is unknown, which is refused for an Active port (its rate is judged) and kept unknown for one that is not.
    """
    if "active_width" not in fields or "active_speed" not in fields:
        return None
    (wtext, wloc), (stext, sloc) = fields["active_width"], fields["active_speed"]
    width = _VERBS_WIDTH.match(wtext)
    speed = _VERBS_SPEED.match(stext)
    lanes = int(width.group(1)) if width is not None else None
    lane_text = speed.group(1) if speed is not None else None
    unknown = False
    bad_width = _VERBS_INVALID.match(wtext)
    if bad_width is not None and bad_width.group(1) == "width":
        lanes = _VERBS_WIDTH_CODE.get(int(bad_width.group(2)))
        unknown = unknown or lanes is None
    bad_speed = _VERBS_INVALID.match(stext)
    if bad_speed is not None and bad_speed.group(1) == "speed":
        lane_text = _VERBS_SPEED_CODE.get(int(bad_speed.group(2)))
        unknown = unknown or lane_text is None
    if unknown and not active:
        return None
    if lanes is None:
        problems.append(Diagnostic(wloc, f"active_width {wtext!r} is not '<lanes>X (<code>)'; expected e.g. '4X (2)'"))
    if lane_text is None:
        problems.append(
            Diagnostic(sloc, f"active_speed {stext!r} is not '<Gb/s> Gbps (<code>)'; expected e.g. '100.0 Gbps (128)'")
        )
    if lanes is None or lane_text is None:
        return None
    lane = exact_number(lane_text)
    if lane is None:  # the pattern admits only decimals: kept for the type checker
        return None
    mbps = lane * lanes * 1000
    if mbps > INT64_MAX:
        problems.append(
            Diagnostic(sloc, f"active_speed {stext!r} is beyond any port's; expected e.g. '100.0 Gbps (128)'")
        )
        return None
    if mbps.denominator != 1:
        problems.append(Diagnostic(sloc, f"active_speed {stext!r} x {wtext!r} is not a whole number of Mb/s"))
        return None
    return int(mbps)


def _read_ibv_devinfo(text: str, filename: str, host: str) -> Observations:
    problems: list[Diagnostic] = []
    out: list[NicPortObservation] = []
    device: str | None = None
    guid: str | None = None
    ports: list[tuple[str, int, SourceLocation, str | None, dict[str, tuple[str, SourceLocation]]]] = []
    in_port = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        loc = SourceLocation(filename, number)
        if not line:
            continue
        field = _VERBS_FIELD.match(line)
        if field is None:
            # -v lists capability flags one per line under their field: no value of a port.
            if device is None:
                problems.append(Diagnostic(loc, f"unexpected text {line[:80]!r} before the first 'hca_id:' line"))
            continue
        key, value = field.group(1), field.group(2)
        if key == "hca_id":
            device, guid, in_port = value, None, False
        elif device is None:
            problems.append(Diagnostic(loc, f"unexpected text {line[:80]!r} before the first 'hca_id:' line"))
        elif key == "port":
            if not value.isdigit() or not 1 <= int(value) <= 255:
                problems.append(Diagnostic(loc, f"port {value!r} is not a port number; expected e.g. 'port: 1'"))
                continue
            ports.append((device, int(value), loc, guid, {}))
            in_port = True
        elif in_port:
            ports[-1][4][key] = (value, loc)
        elif key == "node_guid":
            guid = "0x" + value.replace(":", "").lower()
    if not ports and not problems:
        problems.append(
            Diagnostic(SourceLocation(filename, 1), "no 'hca_id:' with a 'port:' block; expected ibv_devinfo output")
        )
    seen: dict[tuple[str, int], SourceLocation] = {}
    for dev, port, loc, node_guid, fields in ports:
        if not _first_and_whole(dev, port, loc, fields, ("state", "link_layer"), seen, problems):
            continue
        state = _verbs_number(fields["state"][0], _IBSTAT_STATE, "state", fields["state"][1], problems)
        if "phys_state" in fields:
            phys = _verbs_number(fields["phys_state"][0], _IBSTAT_PHYS, "phys_state", fields["phys_state"][1], problems)
        else:
            # An Active port has trained its physical link (IBA: the logical state leaves Down only on LinkUp).
            phys = "LinkUp" if state == "Active" else "unknown"
        # Without -v no rate is printed: unknown (OBS104 does not judge the port; OBS103, OBS106 still do).
        rate = _verbs_rate(fields, state == "Active", problems)
        out.append(
            NicPortObservation(
                source=loc,
                observed_at=None,
                host=host,
                device=dev,
                port=port,
                state=state,
                physical_state=phys,
                rate_mbps=rate,
                link_layer=fields["link_layer"][0],
                node_guid=node_guid,
            )
        )
    return _observed(out, problems, filename, host)


def read(text: str, filename: str, host: str | None) -> Observations:
    """Every port of every adapter in one `ibstat` (or `ibstatus`, `ibv_devinfo`) listing of `host`."""
    host = host_of_file(host, filename, "ibstat")
    first = text.lstrip().split("\n", 1)[0].strip()
    if _IBSTATUS_PORT.match(first):
        return _read_ibstatus(text, filename, host)
    if _VERBS_HCA.match(first):
        return _read_ibv_devinfo(text, filename, host)
    problems: list[Diagnostic] = []
    ports: list[_Port] = []
    ca_name: str | None = None
    ca_fields: dict[str, str] = {}
    port: _Port | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        loc = SourceLocation(filename, number)
        if not line:
            continue
        if line.startswith("ibpanic:") or line.startswith("ibwarn:"):
            problems.append(Diagnostic(loc, f"ibstat failed on this host: {line!r}; expected its port listing"))
            continue
        ca = _CA.match(line)
        if ca:
            ca_name, ca_fields, port = ca.group(1), {}, None
            continue
        if ca_name is None:
            problems.append(Diagnostic(loc, f"unexpected text {line[:80]!r} before the first \"CA 'name'\" line"))
            continue
        start = _PORT.match(line)
        if start:
            port = _Port(ca_name, int(start.group(1)), loc, ca_fields)
            ports.append(port)
            continue
        field = _FIELD.match(line)
        if field is None:
            problems.append(Diagnostic(loc, f"unexpected text {line[:80]!r}; expected 'Name: value'"))
        elif port is None:
            ca_fields[field.group(1)] = field.group(2)
        else:
            port.fields[field.group(1)] = (field.group(2), loc)
    if not ports and not problems:
        problems.append(
            Diagnostic(SourceLocation(filename, 1), "no \"CA 'name'\" with a 'Port N:' block; expected ibstat output")
        )
    out: list[NicPortObservation] = []
    seen: dict[tuple[str, int], SourceLocation] = {}
    for p in ports:
        if not _first_and_whole(p.device, p.number, p.loc, p.fields, _REQUIRED, seen, problems):
            continue
        rate_text, rate_loc = p.fields["Rate"]
        rate = _rate(rate_text, rate_loc, problems)
        out.append(
            NicPortObservation(
                source=p.loc,
                observed_at=None,
                host=host,
                device=p.device,
                port=p.number,
                state=p.fields["State"][0],
                physical_state=p.fields["Physical state"][0],
                rate_mbps=rate,
                link_layer=p.fields["Link layer"][0],
                port_guid=p.fields.get("Port GUID", ("", p.loc))[0] or None,
                node_guid=p.ca.get("Node GUID") or None,
                ca_type=p.ca.get("CA type") or None,
            )
        )
    return _observed(out, problems, filename, host)


def _first_and_whole(
    device: str,
    port: int,
    loc: SourceLocation,
    fields: Mapping[str, object],
    required: Iterable[str],
    seen: dict[tuple[str, int], SourceLocation],
    problems: list[Diagnostic],
) -> bool:
    """Whether a port's block holds every required field and is its port's first: each of ibstat,
    ibstatus and ibv_devinfo lists a port once, so a second listing or a cut block is said, not read.
    """
    missing = [k for k in required if k not in fields]
    if missing:
        problems.append(
            Diagnostic(loc, f"port {port} of {device} has no {', '.join(missing)}; the file looks truncated")
        )
        return False
    if (device, port) in seen:
        problems.append(
            Diagnostic(loc, f"port {port} of {device} is listed twice (first at line {seen[device, port].line})")
        )
        return False
    seen[device, port] = loc
    return True


def _observed(out: list[NicPortObservation], problems: list[Diagnostic], filename: str, host: str) -> Observations:
    """The ports read, or every problem found in the file at once."""
    if problems:
        raise TopologError(problems)
    return Observations(nic_ports=tuple(out), files=(ObservedFile(filename, FORMAT, host, None),), hosts=(host,))
