"""The principals file: users, teams and service accounts, with their memberships.

```yaml
apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: hpc, tenant: hpc}
  - {id: interns, tenant: students, teams: [students]}   # teams nest
users:
  - {id: ivan, teams: [interns], role: intern}           # tenant: from the first team that has one
service_accounts:
  - {id: node-drainer, teams: [sre]}
```

By default it is `principals.yml` next to the (first) inventory. The `.yml` suffix keeps
`inventories/*.yaml` meaning "every inventory". Ids are unique across all three kinds, so
facts and reports can name a principal by its id alone. Every membership must name a team
of the file and teams may not contain themselves (Cedar would accept both silently).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.frozen import Frozen, Record
from verifier.core.limits import current_limits, exceeded
from verifier.core.lookalike import described, skeleton
from verifier.core.walk import depth_first
from verifier.sources.inventory.validate import name_problem, text_problem
from verifier.sources.inventory.yaml_source import YList, YMap, header_problems, load_yaml_file

API_VERSION = "topolog.dev/v1"
PRINCIPALS_FILE = "principals.yml"
SECTIONS: dict[str, str] = {"teams": "Team", "users": "User", "service_accounts": "ServiceAccount"}
KEYS = ("id", "teams", "tenant", "role", "on_call", "description")
DEFAULT_ROLE = {"Team": "team", "User": "member", "ServiceAccount": "service-account"}


@dataclass(frozen=True, repr=False, eq=False)
class Principal(Frozen):
    type: str  # Team, User or ServiceAccount
    id: str
    tenant: str
    role: str
    on_call: bool
    teams: tuple[str, ...]  # direct memberships, as written
    all_teams: tuple[str, ...]  # every team reached through memberships (a team: itself too), sorted
    loc: SourceLocation

    @property
    def uid(self) -> str:
        """Cedar's uid, quoted exactly as `verifier.authorization.entities.uid` quotes ids."""
        return f"{self.type}::{json.dumps(self.id, ensure_ascii=False)}"


@dataclass(frozen=True, repr=False, eq=False)
class Principals(Frozen):
    file: str
    principals: dict[str, Principal]  # by id, in file order

    def sorted(self) -> list[Principal]:
        return sorted(self.principals.values(), key=lambda p: (p.type, p.id))


def principal_id_problem(pid: str) -> str | None:
    """Why `pid` cannot name a principal or team, or None.

    Ids travel into Cedar uids (`User::"alice"`), job files (`principal: Team::"hpc"`) and
    reports; a quote, a backslash or white space in one would need escaping in each of
    them, so they are refused where the id is written, with control characters.
    """
    problem = name_problem(pid)
    if problem is not None:
        return problem
    if '"' in pid or "\\" in pid or any(ch.isspace() for ch in pid) or "::" in pid:
        return (
            "holds a quote, a backslash, white space or '::'; "
            "expected a plain name such as 'alice', 'team-nlp' or 'ci@example.com'"
        )
    return None


def _look_alikes(raws: dict[str, _Raw]) -> list[Diagnostic]:
    """Ids drawn like another id of the file but not the same text (`alice` with a Cyrillic a, beside
    `alice`): in an audit or a decision they read as one principal, and a policy naming one does
    not name the other. Ids that differ only in case are told apart by any reader: not reported.
    """
    first: dict[str, _Raw] = {}
    out: list[Diagnostic] = []
    for raw in raws.values():
        key = skeleton(raw.id)
        seen = first.setdefault(key, raw)
        if seen is raw or (raw.id.isascii() and seen.id.isascii()):
            continue
        odd = next((ch for ch in raw.id if not ch.isascii()), None) or next(ch for ch in seen.id if not ch.isascii())
        out.append(
            Diagnostic(
                raw.loc,
                f"principal id {raw.id!r} looks like {seen.id!r} ({seen.loc}) but is another id "
                f"(it holds {described(odd)}); expected ids that "
                "differ in what a reader sees",
            )
        )
    return out


def principals_file_for(inventory_paths: list[Path]) -> Path | None:
    """The principals file next to the first inventory, if there is one."""
    if not inventory_paths:
        return None
    candidate = inventory_paths[0].parent / PRINCIPALS_FILE
    return candidate if candidate.is_file() else None


@dataclass(repr=False, eq=False)
class _Raw(Record):
    type: str
    id: str
    teams: list[tuple[str, SourceLocation]]
    tenant: str | None
    role: str | None
    on_call: bool
    loc: SourceLocation


def load_principals(path: Path) -> Principals:
    if not path.exists():
        raise TopologError.at(SourceLocation(str(path)), "no such principals file")
    doc = load_yaml_file(path, expected=f"a principals file with 'apiVersion: {API_VERSION}' and 'kind: Principals'")
    errors = header_problems(doc, API_VERSION, "Principals", SECTIONS)
    raws: dict[str, _Raw] = {}
    for section, ptype in SECTIONS.items():
        entries = doc.get(section, YList(doc.loc))
        if not isinstance(entries, YList):
            errors.append(Diagnostic(doc.key_loc(section), f"'{section}' must be a list"))
            continue
        for i, entry in enumerate(entries):
            raw = _entry(entry, ptype, entries.item_loc(i), errors)
            if raw is None:
                continue
            if raw.id in raws:
                errors.append(Diagnostic(raw.loc, f"principal id {raw.id!r} is already used at {raws[raw.id].loc}"))
                continue
            raws[raw.id] = raw
    errors.extend(_look_alikes(raws))
    for raw in raws.values():
        for team, loc in raw.teams:
            target = raws.get(team)
            if target is None or target.type != "Team":
                errors.append(Diagnostic(loc, f"{raw.id} is a member of {team!r}, which is not a team of this file"))
    if errors:
        raise TopologError(errors)
    closure = _closures(raws, errors)
    if errors:
        raise TopologError(errors)
    out: dict[str, Principal] = {}
    for rid, raw in raws.items():
        tenant = raw.tenant if raw.tenant is not None else _inherited_tenant(raw, raws)
        out[rid] = Principal(
            raw.type,
            rid,
            tenant,
            raw.role or DEFAULT_ROLE[raw.type],
            raw.on_call,
            # A team is in itself (Cedar's `in` is reflexive), so `teams` says so too.
            tuple(t for t, _ in raw.teams),
            tuple(sorted(closure[rid] | ({rid} if raw.type == "Team" else set()))),
            raw.loc,
        )
    return Principals(str(path), out)


def _entry(entry: object, ptype: str, loc: SourceLocation, errors: list[Diagnostic]) -> _Raw | None:
    if not isinstance(entry, YMap):
        errors.append(Diagnostic(loc, "expected a mapping such as {id: alice, teams: [hpc]}"))
        return None
    for key in entry:
        if key not in KEYS:
            errors.append(Diagnostic(entry.key_loc(key), f"unknown key {key!r}; expected one of: {', '.join(KEYS)}"))
    pid = entry.get("id")
    if not isinstance(pid, str) or not pid:
        errors.append(Diagnostic(entry.loc, "every principal needs an 'id' (text)"))
        return None
    problem = principal_id_problem(pid)
    if problem is not None:
        errors.append(Diagnostic(entry.key_loc("id"), f"principal id {pid!r} {problem}"))
        return None
    teams_raw = entry.get("teams", YList(entry.loc))
    teams: list[tuple[str, SourceLocation]] = []
    if isinstance(teams_raw, YList):
        for j, t in enumerate(teams_raw):
            if isinstance(t, str) and (problem := principal_id_problem(t)) is not None:
                errors.append(Diagnostic(teams_raw.item_loc(j), f"team id {t!r} {problem}"))
            elif isinstance(t, str):
                teams.append((t, teams_raw.item_loc(j)))
            else:
                errors.append(Diagnostic(teams_raw.item_loc(j), "a team is named by its id (text)"))
    else:
        errors.append(Diagnostic(entry.key_loc("teams"), "'teams' must be a list of team ids"))
    strings: dict[str, str | None] = {}
    for key in ("tenant", "role"):
        value = entry.get(key)
        if value is not None and not isinstance(value, str):
            errors.append(Diagnostic(entry.key_loc(key), f"'{key}' must be text"))
            value = None
        elif value is not None and (problem := text_problem(value)) is not None:
            errors.append(Diagnostic(entry.key_loc(key), f"'{key}' {value!r} {problem}"))
            value = None
        strings[key] = value
    on_call = entry.get("on_call", False)
    if not isinstance(on_call, bool):
        errors.append(Diagnostic(entry.key_loc("on_call"), "'on_call' must be true or false"))
        on_call = False
    return _Raw(ptype, pid, teams, strings["tenant"], strings["role"], on_call, entry.loc)


def _closures(raws: dict[str, _Raw], errors: list[Diagnostic]) -> dict[str, set[str]]:
    """Every team reachable from each principal, in time linear in the answer.

    A team that reaches itself is an error (Cedar would take the cycle), and so is membership
    nested deeper than nesting_depth: every request walks it, and a chain of thousands of teams
    would make loading alone take minutes.
    """
    order = _postorder(raws, errors)
    if errors:
        return {}
    limit = current_limits().nesting_depth
    closure: dict[str, set[str]] = {}
    depth: dict[str, int] = {}
    for rid in order:  # every team before the principals that are members of it
        teams = [t for t, _ in raws[rid].teams]
        reach = set(teams)
        for t in teams:
            reach |= closure[t]
        closure[rid] = reach
        depth[rid] = 1 + max((depth[t] for t in teams), default=0) if teams else 0
        if depth[rid] > limit:
            errors.append(
                Diagnostic(
                    raws[rid].loc,
                    exceeded("nesting_depth", f"principal {rid!r} is a member of teams nested {depth[rid]} deep"),
                )
            )
            return {}
    return closure


def _postorder(raws: dict[str, _Raw], errors: list[Diagnostic]) -> list[str]:
    """Principals with every team before its members (iterative DFS); each team on a cycle is an error."""
    order, loops = depth_first(raws, {rid: [t for t, _ in raw.teams] for rid, raw in raws.items()})
    cyclic = {name for loop in loops for name in loop}
    for rid in raws:
        if rid in cyclic:
            errors.append(Diagnostic(raws[rid].loc, f"team {rid!r} is a member of itself through its teams"))
    return order


def _inherited_tenant(raw: _Raw, raws: dict[str, _Raw]) -> str:
    """The tenant of the first team, breadth-first in the order written, that names one."""
    queue = [t for t, _ in raw.teams]
    seen: set[str] = set()
    while queue:
        t = queue.pop(0)
        if t in seen:
            continue
        seen.add(t)
        team = raws[t]
        if team.tenant:
            return team.tenant
        queue.extend(x for x, _ in team.teams)
    return ""
