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
"""

from __future__ import annotations

import re

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


def looks_like(text: str) -> bool:
    head = text[:20_000]
    return all(m in head for m in MARKERS)


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


def read(text: str, filename: str, host: str | None) -> Observations:
    """Every port of every adapter in one `ibstat` listing of `host`."""
    host = host_of_file(host, filename, "ibstat")
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
        missing = [k for k in _REQUIRED if k not in p.fields]
        if missing:
            problems.append(
                Diagnostic(
                    p.loc, f"port {p.number} of {p.device} has no {', '.join(missing)}; the file looks truncated"
                )
            )
            continue
        if (p.device, p.number) in seen:
            problems.append(
                Diagnostic(
                    p.loc,
                    f"port {p.number} of {p.device} is listed twice (first at line {seen[p.device, p.number].line})",
                )
            )
            continue
        seen[p.device, p.number] = p.loc
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
    if problems:
        raise TopologError(problems)
    return Observations(
        nic_ports=tuple(out),
        files=(ObservedFile(filename, FORMAT, host, None),),
        hosts=(host,),
    )
