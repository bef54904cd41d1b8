"""`iblinkinfo` (infiniband-diags): every port of the fabric the subnet manager sees, and what each is cabled to.

    CA: dgx01 mlx5_0:
          0xec0d9a03003d677a      1    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       2   18[  ] "sw1" ( )
    Switch: 0x0002c9020046c588 Infiniscale-IV Mellanox Technologies:
               2    1[  ] ==( 4X          10.0 Gbps Active/  LinkUp)==>       3    1[  ] "dgx02 mlx5_0" ( )
               2    5[  ] ==(                Down/ Polling)==>             [  ] "" ( )

Each port line gives the local port's LID and number, the link's width and per-lane speed, the port's logical and
physical state, and the far end's LID, port and node description. `-l` prints each line with its node's GUID and
description in front instead of the `CA:`/`Switch:` heading.

A host's adapter port is read where the file names it by a node description of the form `<host> <device>`
(rdma-core's rdma-ndd writes `%h %d`, the host name and the RDMA device: `dgx01 mlx5_0`): on its own line under
`CA: dgx01 mlx5_0:`, or as the far end of a switch port's line (then the link's state, width and speed as the
switch port shows them: both ends of a link train to one width and speed). A description naming no RDMA device
(`n01 HCA-1`, mlx4's default, or a name set by hand) ties the port to no declared NIC and is not read; a switch
port whose far end is not a host's adapter says nothing of the inventory's NICs. The file speaks for the fabric,
not for the host its folder is named for: the hosts are those the descriptions name (a host the inventory lacks is
passed over: a fabric holds storage and management hosts too).

The rate is the width times the lane's data rate as ibstat states it (ibstat's `Rate` is `4X` times these): 2.5,
5.0, 10.0 (QDR; FDR10 too, which infiniband-diags prints `10.0 Gbps (FDR10)`: 10 Gb/s of data per lane, ibstat's
`40 (FDR10)` for 4X), 10.3125 (FDR10: 10), 14.0625 (FDR: 14), 25.78125 (EDR: 25), 53.125 (HDR: 50), 106.25 (NDR: 100),
212.5 (XDR: 200) Gb/s per lane. A lane speed not among them on an Active port is refused at its line. A port that is
not Down but whose far end the scan did not reach (`"Port not available"` in the far end's place) is read for its own
state and link, if it is a host adapter's.
"""

from __future__ import annotations

import re
from fractions import Fraction

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.observed.model import NicPortObservation, Observations, ObservedFile

FORMAT = "iblinkinfo"
_TOOL = "iblinkinfo"

_HEADING = re.compile(r"^(CA|Switch|Router): (?:(0x[0-9a-fA-F]{16}) )?(.*):\s*$")
_LINK = re.compile(
    r"^(?:(?P<guid>0x[0-9a-fA-F]{16})\s+)?(?:\"(?P<desc>[^\"]*)\"\s+)?(?P<lid>\d+)\s+(?P<port>\d{1,3})\[[^\]]*\]\s+"
    r"==\(\s*(?:(?P<width>\d{1,2})X\s+(?P<speed>\d+(?:\.\d+)?)\s+Gbps\s+(?:\(FDR10\)\s+)?)?"
    r"(?P<state>[A-Za-z]+)/\s*(?P<phys>[A-Za-z]+)\s*\)==>"
    r"\s*(?P<rest>.*)$"
)
_FAR = re.compile(
    r"^(?:0x[0-9a-fA-F]{16}\s+)?(?:(?P<lid>\d+)\s+(?P<port>\d{1,3}))?\s*\[[^\]]*\]\s+\"(?P<desc>[^\"]*)\"\s*\((?P<note>.*)\)\s*$"
)
_NOT_AVAILABLE = '"Port not available"'
"""What infiniband-diags prints in the far end's place for a port that is not Down but whose far end the fabric scan
did not reach (iblinkinfo.c print_port): the port's own state and link are there, its far end is unknown."""
_DEVICE = re.compile(r"[a-z][a-z0-9_]{0,62}[0-9]")
"""An RDMA device name as the kernel or rdma-core's udev naming gives it: lower-case letters, digits and underscores,
ending in the device's number (`mlx5_0`, a bonded `mlx5_bond_0`, a renamed `ibp12s0` or `rocep1s0f0`). Such a name is
read whatever its form and matched to the NIC declaring that exact name (a NIC declaring none is matched by the
name's number, as ibstat's ports are). `HCA-1` (mlx4's default description) and other hand-set words are not device
names."""

_LANE = {
    "2.5": Fraction(5, 2),
    "5.0": Fraction(5),
    "10.0": Fraction(10),
    "10.3125": Fraction(10),
    "14.0625": Fraction(14),
    "25.78125": Fraction(25),
    "53.125": Fraction(50),
    "106.25": Fraction(100),
    "212.5": Fraction(200),
}
"""iblinkinfo's per-lane signalling rate (Gbps) -> the lane's rate as ibstat counts it (`Rate: 100` for 4X EDR)."""
_WIDTHS = frozenset({1, 2, 4, 8, 12})
_STATES = {"Down": "Down", "Init": "Initializing", "Initialize": "Initializing", "Armed": "Armed", "Active": "Active"}
"""infiniband-diags' port state words -> ibstat's (ibstat.py): one spelling for the rules, whichever tool wrote it."""
_PHYS = frozenset(
    {"Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"}
)


def looks_like(text: str) -> bool:
    """Whether `text` is iblinkinfo output: a port line (`==( ... )==>`) under a `CA:`/`Switch:` heading or with its
    node in front (`-l`) among its first lines.
    """
    head = text[:8192]
    if ")==>" not in head:
        return False
    return any(_LINK.match(line.strip()) for line in head.splitlines()[:64])


def _host_port(desc: str) -> tuple[str, str] | None:
    """(host, device) of a node description `<host> <device>`, or None where it names no RDMA device."""
    parts = desc.split()
    if len(parts) != 2 or _DEVICE.fullmatch(parts[1]) is None:
        return None
    return parts[0], parts[1]


def read(text: str, filename: str, host: str | None) -> Observations:
    """The host adapter ports the file names; TopologError at the line of anything not as iblinkinfo prints it."""
    del host  # the file speaks for the fabric: its hosts are those the node descriptions name
    ports: dict[tuple[str, str, int], NicPortObservation] = {}
    own: set[tuple[str, str, int]] = (
        set()
    )  # ports read from their own adapter's line, which the far ends do not override
    heading: str | None = None
    kind: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        loc = SourceLocation(filename, number)
        h = _HEADING.match(line)
        if h is not None and ")==>" not in line:
            kind, heading = h.group(1), h.group(3).strip()
            continue
        m = _LINK.match(line)
        if m is None:
            raise TopologError.at(
                loc,
                f"a line not in {_TOOL}'s shape; expected a 'CA:'/'Switch:' heading or a port line "
                "'LID PORT[  ] ==( 4X 25.78125 Gbps Active/  LinkUp)==> ...'",
            )
        rest = m.group("rest").strip()
        far = _FAR.match(rest) if rest != _NOT_AVAILABLE else None
        if far is None and rest != _NOT_AVAILABLE:
            raise TopologError.at(loc, f"the port's far end {m.group('rest')[:60]!r} is not in {_TOOL}'s shape")
        state = _STATES.get(m.group("state"))
        phys = m.group("phys")
        if state is None or phys not in _PHYS:
            raise TopologError.at(
                loc,
                f"port state {m.group('state')}/{phys}; expected e.g. Active/LinkUp or Down/Polling as {_TOOL} prints",
            )
        rate = _rate(m.group("width"), m.group("speed"), state, loc)
        # The port's own node: named on the line (-l) or by the CA heading above it (a switch's own ports are not a
        # host's).
        local = m.group("desc") if m.group("desc") is not None else (heading if kind == "CA" else None)
        if local is not None:
            named = _host_port(local)
            if named is not None:
                key = (named[0], named[1], int(m.group("port")))
                ports[key] = NicPortObservation(loc, None, named[0], named[1], key[2], state, phys, rate, "InfiniBand")
                own.add(key)
                continue
        if far is None or far.group("port") is None:
            continue  # a port cabled to nothing the subnet manager sees (Down), or whose far end was not reached
        named = _host_port(far.group("desc"))
        if named is None:
            continue
        key = (named[0], named[1], int(far.group("port")))
        if key not in own:
            ports[key] = NicPortObservation(loc, None, named[0], named[1], key[2], state, phys, rate, "InfiniBand")
    found = tuple(sorted(ports.values(), key=lambda p: (p.source.line or 0, p.host, p.device, p.port)))
    return Observations(nic_ports=found, files=(ObservedFile(filename, FORMAT, None, None),))


def _rate(width: str | None, speed: str | None, state: str, loc: SourceLocation) -> int | None:
    if width is None or speed is None:
        if state == "Active":
            raise TopologError.at(loc, "an Active port with no width and speed; expected e.g. '4X 25.78125 Gbps'")
        return None
    lane = _LANE.get(speed)
    if int(width) not in _WIDTHS or lane is None:
        raise TopologError.at(
            loc,
            f"link {width}X {speed} Gbps; expected a width of 1, 2, 4, 8 or 12 and a lane speed iblinkinfo prints "
            "(2.5, 5.0, 10.0, 10.3125, 14.0625, 25.78125, 53.125, 106.25 or 212.5 Gbps)",
        )
    return int(int(width) * lane * 1000)
