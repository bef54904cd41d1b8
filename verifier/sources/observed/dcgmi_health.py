"""`dcgmi health -c` (and `-c -j`): DCGM's background health watches, per entity and per watched system.

The table (dcgmi's tree output, NVIDIA/DCGM dcgmi/Health.cpp and DcgmiOutput.cpp; the rows its own tests check,
dcgmi/tests/HealthTests.cpp):

    | Health Monitor Report                                                                |
    +===========================+==========================================================+
    | Overall Health            | Failure                                                  |
    | GPU                       |                                                          |
    | -> 1                      | Failure                                                  |
    |    -> Errors              |                                                          |
    |       -> Memory system    | Failure                                                  |
    |                           | Green can be emerald and beautiful, but there are        |
    |                           | shades of green which are sure to disappoint.            |

An entity group (`GPU`, `Switch`, `ConnectX`, ...), each entity by DCGM's id with its health, and under `Errors`
each system that raised an incident with its health and DCGM's message, cut into lines of at most 54 characters
(joined back here with a space). With `-j` the same tree is JSON: `body` > group > `children` > id > `children` >
`Errors` > `children` > system, each with its `value` and the message lines in `overflow`.

Only a GPU whose system says `Failure` is judged: out of service (OBS004), as a GPU that failed `dcgmi diag` is.
`Warning` is DCGM's "can still perform workload"; a Failure of the Thermal or Power system is the conditions the GPU
ran under (dcgmi diag's monitor rank), and an NVLink link said down is the NVLink readers' to judge: none takes a GPU
out of service. One NVLINK row joins all of a GPU's NVLink incidents: each is judged apart (a link down passes over
only itself). Other entity groups (NVSwitches, ConnectX, MIG instances) are read and not judged. DCGM's GPU id is taken
as the driver's index (as for `dcgmi diag`'s table, which prints no serial either).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.observed.model import (
    DIAG_FAILED,
    IN_HOST_FOLDER,
    CounterObservation,
    GpuRef,
    Observations,
    ObservedFile,
    host_of_file,
)
from verifier.sources.observed.tool_json import tool_json

FORMAT = "dcgmi-health"
_TOOL = "dcgmi health -c"
REPORT = "Health Monitor Report"
OVERALL = "Overall Health"
HEALTH = ("Healthy", "Warning", "Failure")
"""dcgmi's words for DCGM_HEALTH_RESULT_PASS, _WARN and _FAIL (Health::HelperHealthToString)."""
_CONDITIONS = frozenset({"Thermal system", "Power system"})
_ID = re.compile(r"[0-9]{1,9}")
_HLINE = re.compile(r"\+[-=]+\+[-=]+\+")


def looks_like(text: str) -> bool:
    """Whether `text` is `dcgmi health -c` output: the report's title row near its start, or the JSON with it."""
    if text[:64].lstrip().startswith("{"):
        # jsoncpp writes an object's keys sorted: `body` before `header`, so the title may come last.
        return f'"{REPORT}"' in text[:2048] or f'"{REPORT}"' in text[-4096:]
    if text.find(REPORT, 0, 2048) < 0:
        return False
    head = text[:2048]
    return any(line.strip().startswith("|") and line.strip("| \t\r") == REPORT for line in head.splitlines())


@dataclass
class _System:
    name: str
    health: str
    line: int
    message: list[str] = field(default_factory=list)


@dataclass
class _Entity:
    group: str
    id: int
    health: str
    line: int
    systems: list[_System] = field(default_factory=list)


def _health(value: str, loc: SourceLocation) -> str:
    if value not in HEALTH:
        shown = value if len(value) <= 40 else f"{value[:40]}..."
        raise TopologError.at(loc, f"health {shown!r}; expected Healthy, Warning or Failure as {_TOOL} prints it")
    return value


def _entity_id(label: str, loc: SourceLocation) -> int:
    if _ID.fullmatch(label) is None:
        raise TopologError.at(loc, f"entity {label[:40]!r}; expected DCGM's entity id, a whole number")
    return int(label)


def _table(text: str, filename: str) -> list[_Entity]:
    entities: list[_Entity] = []
    group: str | None = None
    system: _System | None = None
    titled = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        loc = SourceLocation(filename, number)
        if not line or _HLINE.fullmatch(line):
            continue
        if not (line.startswith("|") and line.endswith("|") and len(line) >= 2):
            if not titled:
                continue  # a prompt or dcgmi's own words before the table: the table is read from its title
            raise TopologError.at(loc, f"a line not in {_TOOL}'s table shape; expected '| label | value |'")
        inner = line[1:-1]
        if "|" not in inner:
            if inner.strip() != REPORT or titled:
                raise TopologError.at(loc, f"{inner.strip()[:60]!r}; expected one '{REPORT}' title row")
            titled = True
            continue
        if not titled:
            raise TopologError.at(loc, f"a row before the '{REPORT}' title; expected the title first")
        left, value = inner.split("|", 1)
        left = left[1:] if left.startswith(" ") else left
        value = value.strip()
        label = left.strip()
        depth = len(left) - len(left.lstrip(" "))
        if not label:
            if system is None:
                raise TopologError.at(loc, "a message row under no system; expected it under a '-> system' row")
            system.message.append(value)
            continue
        system = None
        if not label.startswith("->"):
            if depth != 0:
                raise TopologError.at(loc, f"{label[:40]!r} indented without '->'; expected a group or '-> id'")
            if label == OVERALL:
                _health(value, loc)
            else:
                group = label
            continue
        name = label[2:].strip()
        if depth == 0:  # `-> 0`: an entity of the group above
            if group is None:
                raise TopologError.at(loc, f"entity {name[:40]!r} under no group; expected e.g. a 'GPU' row first")
            entities.append(_Entity(group, _entity_id(name, loc), _health(value, loc), number))
        elif depth == 3:  # `   -> Errors`
            if name != "Errors" or not entities:
                raise TopologError.at(loc, f"{name[:40]!r}; expected '-> Errors' under an entity")
        elif depth == 6 and entities:  # `      -> Memory system`
            system = _System(name, _health(value, loc), number)
            entities[-1].systems.append(system)
        else:
            raise TopologError.at(loc, f"{label[:40]!r} at an indent {_TOOL} does not print")
    if not titled:
        raise TopologError.at(SourceLocation(filename, 1), f"no '{REPORT}' title row; expected {_TOOL}'s report")
    return entities


def _line_of(text: str, key: str, after: int) -> int:
    """The line of the first `"key":` at or after character `after` (1 where none): JSON's only place marker."""
    at = re.compile(rf'"{re.escape(key)}"\s*:').search(text, after)
    return text.count("\n", 0, at.start()) + 1 if at is not None else 1


def _json(text: str, filename: str) -> list[_Entity]:
    doc = tool_json(text, filename, f"expected {_TOOL} -j output", f"expected {_TOOL} -j output")
    loc = SourceLocation(filename, 1)
    body = doc.get("body") if isinstance(doc, dict) else None
    if not isinstance(body, dict) or REPORT not in (doc.get("header") or []):
        raise TopologError.at(loc, f"no '{REPORT}' header and body; expected {_TOOL} -j output")
    entities: list[_Entity] = []
    for group, node in body.items():
        if group == OVERALL:
            _health(str(_value(node)), loc)
            continue
        start = text.find(f'"{group}"')
        for key, entity in _children(node, loc).items():
            line = _line_of(text, key, max(start, 0))
            ent = _Entity(group, _entity_id(key, SourceLocation(filename, line)), "", line)
            ent.health = _health(str(_value(entity)), SourceLocation(filename, line))
            errors = _children(entity, loc).get("Errors")
            for name, sysnode in (_children(errors, loc) if errors is not None else {}).items():
                where = _line_of(text, name, text.find(f'"{key}"', max(start, 0)))
                said = sysnode.get("overflow", []) if isinstance(sysnode, dict) else []
                if not isinstance(said, list) or not all(isinstance(s, str) for s in said):
                    raise TopologError.at(SourceLocation(filename, where), "'overflow' is no list of message lines")
                health = _health(str(_value(sysnode)), SourceLocation(filename, where))
                ent.systems.append(_System(name, health, where, list(said)))
            entities.append(ent)
    return entities


def _value(node: Any) -> Any:
    return node.get("value", "") if isinstance(node, dict) else ""


def _children(node: Any, loc: SourceLocation) -> dict[str, Any]:
    children = node.get("children", {}) if isinstance(node, dict) else None
    if not isinstance(children, dict):
        raise TopologError.at(loc, f"'children' is no object; expected {_TOOL} -j output")
    return children


_NVLINK_PASSED = re.compile(
    r"GPU \d+'s NvLink link \d+ is currently down"
    r"|Detected \d+ \S+ NvLink errors on GPU \d+'s NVLink which exceeds threshold of \d+",
    re.IGNORECASE,
)
"""The NVLINK system's incidents that take no GPU out of service here (dcgm_errors.h DCGM_FR_NVLINK_DOWN_MSG, and
DCGM_FR_NVLINK_ERROR_THRESHOLD_MSG, which DcgmHealthWatch::MonitorNVLink raises as a Warning only). A link down is
the NVLink readers' to judge (OBS002/OBS003), as dcgmi diag's is."""
_JOINED = re.compile(r"[\s,]*")
"""What is left between incidents: dcgmi joins one system's incidents with `, ` (Health::AppendSystemIncidents), and
its line cutting may drop the comma or the space."""


def _out_of_service(system: _System) -> str | None:
    """What of a system at Failure takes its GPU out of service (its message, or the incidents left of it), or None."""
    if system.health != "Failure" or system.name in _CONDITIONS:
        return None
    said = " ".join(system.message)
    if not system.name.lower().startswith("nvlink"):
        return said
    # One NVLINK row joins every NVLink incident of the GPU, at the worst one's health: each is judged apart, so a
    # link down passes over only itself, not a replay/recovery or CRC-rate Failure joined beside it
    # (DCGM_FR_NVLINK_ERROR_CRITICAL / _CRC_ERROR_THRESHOLD: Failure). An incident not known here is judged, not
    # passed over: the row is at Failure and nothing says that incident is not.
    left = _NVLINK_PASSED.sub(",", said)
    if _JOINED.fullmatch(left) is not None and left != said:
        return None
    return ", ".join(part for part in (p.strip(" ,") for p in _NVLINK_PASSED.split(said)) if part)


def read(text: str, filename: str, host: str | None) -> Observations:
    """The GPUs a `dcgmi health -c` report (table or -j) says failed; TopologError at the line of anything else."""
    host = host_of_file(host, filename, _TOOL, IN_HOST_FOLDER)
    entities = _json(text, filename) if text.lstrip().startswith("{") else _table(text, filename)
    counters = []
    for ent in entities:
        if ent.group == "GPU" and ent.health == "Failure" and not any(s.health == "Failure" for s in ent.systems):
            # DCGM's report sets an entity's health from its systems', so a GPU at Failure names one. Older dcgmi
            # (NVIDIA/DCGM's Health::CheckWatches before HandleOneEntity, as at commit 28bfbd4c) keyed each entity by
            # its first incident's health code (`-> 20` for DCGM_HEALTH_RESULT_FAIL) and printed no system for an
            # entity's last incident: which GPU failed, and why, is not in the file. Refused, not passed over.
            raise TopologError.at(
                SourceLocation(filename, ent.line),
                f"GPU {ent.id} is at Failure but no system of it is; expected the system that failed under "
                "'-> Errors' as current dcgmi prints it (older dcgmi labels an entity by its health code, 20 for "
                "Failure, and leaves out its last incident: run dcgmi diag, or a newer DCGM)",
            )
        failed = [(s, why) for s in ent.systems if (why := _out_of_service(s)) is not None]
        if ent.group != "GPU" or not failed:
            continue
        said = "; ".join(f"{s.name} Failure" + (f": {why}" if why else "") for s, why in failed)
        counters.append(
            CounterObservation(
                SourceLocation(filename, failed[0][0].line),
                None,
                GpuRef(host=host, index=ent.id),
                DIAG_FAILED,
                1,
                (("reason", f"DCGM health check (dcgmi health) says it failed: {said}"),),
            )
        )
    return Observations(counters=tuple(counters), files=(ObservedFile(filename, FORMAT, host, None),), hosts=(host,))
