"""What-if scenarios: nodes drained, devices failed, links failed (docs/placement.md, "What-if").

A scenario is applied as the states an inventory edit would write (`state: drained` on a
drained object; `state: down` on a failed device and on every link at it, but the links of an
NVSwitch chip whose fabric manager keeps its GPUs (_kept_by_fabric), and on a failed link), so
`place --drain dgx03` answers what `place` answers on the inventory with that override written
in: the rules, the graph summaries and the Cedar entities (whose `state` attribute policies may
read) see nothing else.
It comes from the command line (`--drain`, `--fail`, `--fail-link`) and/or a scenario file:

    apiVersion: topolog.dev/v1
    kind: Scenario
    drain: [dgx03]
    fail: [dgx01/gpu3]
    fail_links: ["dgx02/gpu0<->dgx02/nvsw0"]
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.suggest import did_you_mean
from verifier.sources.inventory.model import Inventory, Link, Obj
from verifier.sources.inventory.specs import NVSWITCH_FAILURE_MODE
from verifier.sources.inventory.yaml_source import YList, header_problems, load_yaml_file

API_VERSION = "topolog.dev/v1"
ACTIONS: dict[str, str] = {"drain": "drained", "fail": "down", "fail-link": "down"}
"""What each change does: the state it gives its target."""
FILE_KEYS: dict[str, str] = {"drain": "drain", "fail": "fail", "fail_links": "fail-link"}
"""The scenario file's list keys and the change each item makes."""


@dataclass(frozen=True, repr=False, eq=False)
class Change(Frozen):
    """One change of a scenario: `action` (drain, fail, fail-link) of `target` (an object or link id)."""

    action: str
    target: str
    loc: SourceLocation
    """Where it was written: the flag (`--drain`) or the scenario file's line."""

    def text(self) -> str:
        return f"{self.action} {self.target}"


@dataclass(frozen=True, repr=False, eq=False)
class Scenario(Frozen):
    changes: tuple[Change, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changes)

    def describe(self) -> list[str]:
        """Each change as `drain dgx03`, in the order written (a change written twice is shown once)."""
        return list(dict.fromkeys(c.text() for c in self.changes))

    def digest_part(self) -> bytes:
        """What names the scenario in a cache key beside the inventory's bytes (verifier.core.cache)."""
        return ("\n".join(f"scenario {c.text()}" for c in self.changes)).encode()


def scenario_from(
    drain: Sequence[str] = (), fail: Sequence[str] = (), fail_links: Sequence[str] = (), files: Sequence[Path] = ()
) -> Scenario:
    """The scenario of the command line's flags and scenario files (TopologError on a bad file)."""
    changes = [Change("drain", t, SourceLocation("--drain")) for t in drain]
    changes += [Change("fail", t, SourceLocation("--fail")) for t in fail]
    changes += [Change("fail-link", t, SourceLocation("--fail-link")) for t in fail_links]
    for path in files:
        changes += load_scenario_file(path)
    return Scenario(tuple(changes))


def load_scenario_file(path: Path) -> list[Change]:
    """The changes of one scenario file; every problem at once, each with file:line (TopologError)."""
    if not path.exists():
        raise TopologError.at(SourceLocation(str(path)), "no such scenario file")
    doc = load_yaml_file(path, expected=f"a scenario with 'apiVersion: {API_VERSION}' and 'kind: Scenario'")
    errors = header_problems(doc, API_VERSION, "Scenario", FILE_KEYS)
    changes: list[Change] = []
    for key, action in FILE_KEYS.items():
        if key not in doc:
            continue
        items = doc[key]
        if not isinstance(items, YList):
            errors.append(Diagnostic(doc.key_loc(key), f"'{key}' must be a list of ids"))
            continue
        for i, item in enumerate(items):
            if not isinstance(item, str) or not item:
                what = "link id (a<->b)" if action == "fail-link" else "object id"
                errors.append(Diagnostic(items.item_loc(i), f"each item of '{key}' must be a {what}, not {item!r}"))
                continue
            changes.append(Change(action, item, items.item_loc(i)))
    if not changes and not errors:
        errors.append(
            Diagnostic(doc.loc, f"the scenario changes nothing; expected at least one of: {', '.join(FILE_KEYS)}")
        )
    if errors:
        raise TopologError(errors)
    return changes


def apply_scenario(inv: Inventory, scenario: Scenario) -> Inventory:
    """A copy of `inv` with the scenario's states written in, as an override would (`inv` is unchanged).

    Raises TopologError naming every target the inventory lacks, with what was expected.
    """
    objects = inv.objects
    errors: list[Diagnostic] = []
    links: dict[str, Link] | None = None
    states: dict[str, tuple[str, Change]] = {}
    link_states: dict[str, str] = {}
    for change in scenario.changes:
        if change.action == "fail-link":
            lid = _link_id(inv, change.target)
            if lid is None:
                errors.append(_unknown_link(inv, change))
            else:
                link_states[lid] = ACTIONS[change.action]
            continue
        if change.target not in objects:
            errors.append(_unknown_object(inv, change))
            continue
        state = ACTIONS[change.action]
        before = states.get(change.target)
        # Failed wins over drained when one object is given both: it is the stronger state.
        if before is None or before[0] != "down":
            states[change.target] = (state, change)
    if errors:
        raise TopologError(errors)
    out = copy.copy(inv)
    new_objects = dict(objects)
    stamped = dict(inv.stamped)
    overridden = dict(inv.overridden)
    for oid, (state, _change) in states.items():
        o = objects[oid]
        new_objects[oid] = Obj(
            o.id, o.kind, o.parent, o.loc, o.model, o.labels, o.quantities, state, o.template, o.index, o.origin
        )
        _note_state(overridden, oid, o.loc)
        _unstamp(oid, objects, stamped)
    failed = {oid for oid, (state, _change) in states.items() if state == "down"}
    if link_states or failed:
        # Links of nodes stamped whole are made on first read (Inventory.defer_links): made here,
        # on the copy, so that the changed ones can be replaced like any other.
        links = dict(out.links)
        if failed:
            # A failed device carries nothing: every link at it is down too, as an edit that fails
            # an NVSwitch must write for its GPUs' pair bandwidth to fall (SCALE006 judges its links so).
            # But the links of a chip whose fabric manager keeps its GPUs when a chip fails: see _kept_by_fabric.
            kept = _kept_by_fabric(inv, failed)
            for lid, lk in links.items():
                if (lk.a in failed and lk.a not in kept) or (lk.b in failed and lk.b not in kept):
                    link_states[lid] = "down"
        for lid, state in link_states.items():
            lk = links[lid]
            links[lid] = Link(
                lk.id, lk.a, lk.b, lk.kind, lk.mbps, lk.loc, lk.attrs, lk.labels, state, lk.origin, lk.plan
            )
            _note_state(overridden, lid, lk.loc)
            for end in (lk.a, lk.b):
                _unstamp(end, objects, stamped)
            if lk.origin is not None:
                stamped.pop(lk.origin, None)
        out.links = links
    out.objects = new_objects
    out.stamped = stamped
    out.overridden = overridden
    return out


def _kept_by_fabric(inv: Inventory, failed: AbstractSet[str]) -> frozenset[str]:
    """The failed NVSwitch chips whose links are left as written: those of a node whose fabric manager
    runs NVSWITCH_FAILURE_MODE=1 (the node's `attrs`, else the chip model's, as the rules and
    verifier/facts/graph.py: fm_isolated_gpus read it).

    NVIDIA's Fabric Manager user guide, "Supported High Availability Modes": a failed NVSwitch is
    answered by NVSWITCH_FAILURE_MODE (0, the default: the fabric is left uninitialized; 1: the chip
    and its peer are disabled and the GPUs keep NVLink at less bandwidth), a failed GPU-NVSwitch
    access link by ACCESS_LINK_FAILURE_MODE (0, the default: the GPU leaves NVLink peer-to-peer).
    Writing such a chip's links down would make its GPUs' access links read as failed on their own,
    taking them out of NVLink under the access mode; a chip written `state: down` carries nothing
    already (verifier/facts/fabric_islands.py: carries), so its links stay as they are and `--fail`
    answers what `state: down` on the chip does. Under mode 0 either way takes the GPUs out.
    """
    objects = inv.objects
    out: set[str] = set()
    for oid in failed:
        chip = objects[oid]
        if chip.kind != "nvswitch":
            continue
        node = objects.get(chip.parent) if chip.parent is not None else None
        while node is not None and node.kind != "node":
            node = objects.get(node.parent) if node.parent is not None else None
        if node is None:
            continue  # a switch tray outside nodes: no single-board fabric manager (fm_isolated_gpus)
        model = inv.models.get(chip.model) if chip.model is not None else None
        mode = node.quantities.get(NVSWITCH_FAILURE_MODE, model.specs.get(NVSWITCH_FAILURE_MODE) if model else None)
        if mode == 1:
            out.add(oid)
    return frozenset(out)


def _note_state(overridden: dict[str, tuple[SourceLocation, frozenset[str]]], oid: str, loc: SourceLocation) -> None:
    """Record the state as a changed part (Inventory.overridden), as an override of it does."""
    made_at, parts = overridden.get(oid, (loc, frozenset()))
    overridden[oid] = (made_at, parts | {"state"})


def _unstamp(oid: str, objects: dict[str, Obj], stamped: dict[str, str]) -> None:
    """A node holding a changed object is no longer its template's plan alone (Inventory.stamped):
    its facts are then read from its objects, not from the plan (as after an override).
    """
    seen: set[str] = set()
    cur: str | None = oid
    while cur is not None and cur not in seen:
        seen.add(cur)
        stamped.pop(cur, None)
        o = objects.get(cur)
        cur = o.parent if o is not None else None


def _link_id(inv: Inventory, target: str) -> str | None:
    """The id of the link `target` names: its id, or its two ends the other way round (b<->a)."""
    if inv.has_link(target):
        return target
    a, sep, b = target.partition("<->")
    if sep and inv.has_link(f"{b}<->{a}"):
        return f"{b}<->{a}"
    return None


def _unknown_object(inv: Inventory, change: Change) -> Diagnostic:
    expected = "a node, rack or GPU id" if change.action == "drain" else "a device or node id"
    if change.target in inv.removed:
        # Decommissioned on purpose: a neighbour's id (dgx07 for dgx05) is no help.
        return Diagnostic(
            change.loc,
            f"{change.text()}: the inventory has no object {change.target!r}: an override removed it "
            f"('remove: true'); expected {expected} of the inventory as it is now",
        )
    example = next((o.id for o in inv.objects.values() if o.kind in ("node", "gpu")), "")
    hint = did_you_mean(change.target, inv.objects) or (f" (such as {example!r})" if example else "")
    return Diagnostic(
        change.loc, f"{change.text()}: the inventory has no object {change.target!r}; expected {expected}{hint}"
    )


def _unknown_link(inv: Inventory, change: Change) -> Diagnostic:
    gone = [end for end in change.target.split("<->") if end in inv.removed]
    if gone:
        return Diagnostic(
            change.loc,
            f"{change.text()}: the inventory has no link {change.target!r}: an override removed {gone[0]!r} "
            "('remove: true') and every link touching it; expected a link of the inventory as it is now",
        )
    # Suggestions read the links of the target's node only: a fleet has a million links.
    node = change.target.partition("/")[0]
    near = [lid for lid in inv.links if lid.startswith(node + "/")] if node in inv.objects else []
    hint = did_you_mean(change.target, near)
    if not hint and near:
        hint = f" (such as {sorted(near)[0]!r})"
    return Diagnostic(
        change.loc,
        f"{change.text()}: the inventory has no link {change.target!r}; expected a link id, its two ends "
        f"joined by '<->'{hint}",
    )
