"""Everything one authorization question needs, built from the inventory once.

The entities come from the inventory and its NVLink domains, found by union-find over the
scale-up links (verifier.facts.graph.scaleup_domains, held equal to the rules'
`nvlink_domain` by a test), so authorizing never waits for a rule to be evaluated. The
domains are found when first needed (a request about a domain, a policy naming one, an
entity asked for whole): most requests never need them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from verifier.authorization.classes import class_keys, policy_reads
from verifier.authorization.entities import EntityGraph, build_graph, uid
from verifier.authorization.evaluate import Authorizer, Decision, Request
from verifier.authorization.policies import PolicyBundle, load_policies
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.frozen import Record
from verifier.sources.inventory.model import Inventory
from verifier.sources.principals import Principals, load_principals


@dataclass(repr=False, eq=False)
class AuthzSetup(Record):
    inventories: tuple[str, ...]
    inventory: Inventory
    """What the entities were built from: the whole inventory, or (authorize and audit, read from
    the cache) its hardware view (verifier.authorization.hardware), which holds its GPUs, nodes,
    racks and pods only."""
    bundle: PolicyBundle
    principals: Principals
    graph: EntityGraph
    authorizer: Authorizer
    inventory_parts: Sequence[str | bytes] | None = None
    """What `inventory` was loaded from (raw_files.read_digest_parts), naming the cache entries of
    what is derived from it (verifier.authorization.facts); None: not kept."""
    deciding_for: frozenset[str] | None = None
    """Ids of the principals whose decisions the authorization facts carry (`permitted` and the
    rest: `place` reads its jobs' principals' only); None: every principal's."""
    _class_keys: Callable[[list[str]], list[tuple[object, ...]]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    _scheduling: dict[tuple[str, tuple[object, ...]], Decision] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def denying(self, principal: str, gpus: Sequence[str]) -> tuple[str, ...]:
        """The policies that deny `principal` (an id of the principals file) scheduling on some of `gpus`.

        "(no permit)" stands for a default deny; () when the principal is unknown.

        Placement asks this of every domain a job may not use, 64 GPUs at a time: GPUs of one
        equivalence class (verifier/authorization/classes.py) get the same decision, decided by
        the same policies, so Cedar is asked once per principal and class, whatever the calls.
        """
        # Ids are unique across users, teams and service accounts: the file's entry is the one.
        p = self.principals.principals.get(principal)
        if p is None:
            return ()
        who = p.uid
        found: set[str] = set()
        known: list[str] = []
        for g in gpus:
            u = uid("Gpu", g)
            if u in self.graph.entities:
                known.append(u)
            else:  # denied, fail closed, with no policy to name
                found.add("(no permit)")
        if self._class_keys is None:
            self._class_keys = class_keys(self.graph, policy_reads(self.bundle))
        keys = [(who, k) for k in self._class_keys(known)]
        todo = {k: u for k, u in zip(keys, known, strict=True) if k not in self._scheduling}
        asked = self.authorizer.decide([Request(who, "schedule", u) for u in todo.values()])
        self._scheduling.update(zip(todo, asked, strict=True))
        for k in keys:
            d = self._scheduling[k]
            if not d.allowed:
                found.update(d.reasons or ("(no permit)",))
        return tuple(sorted(found))


def build_setup(
    inventory: Inventory,
    inventory_paths: Sequence[Path],
    policy_dir: Path,
    principals: Principals,
    whole: Callable[[], Inventory] | None = None,
    inventory_parts: Sequence[str | bytes] | None = None,
    *,
    bundle: PolicyBundle | None = None,
) -> AuthzSetup:
    """Policies loaded and validated, entities built from `inventory`, one reusable authorizer.

    `inventory` may be the hardware view of verifier.authorization.hardware; `whole` then loads
    the whole inventory, whose scale-up links the NVLink domains are found from. `inventory_parts`:
    what the inventory was loaded from (AuthzSetup.inventory_parts). `bundle`: the policies of
    `policy_dir`, already loaded (verifier.authorization.lazy).
    """
    if bundle is None:
        bundle = load_policies(policy_dir)

    def domains() -> list[tuple[str, str]]:
        # Imported when a request first needs NVLink domains: one decision mostly does not.
        from verifier.facts.graph import scaleup_domains

        return [(str(g), str(d)) for g, d in scaleup_domains(whole() if whole is not None else inventory)]

    graph = build_graph(inventory, domains, principals)
    return AuthzSetup(
        tuple(str(p) for p in inventory_paths),
        inventory,
        bundle,
        principals,
        graph,
        Authorizer(bundle, graph),
        inventory_parts,
    )


def require_principals(path: Path | None, inventory_paths: Sequence[Path], why: str = "") -> Principals:
    """The principals file loaded; TopologError naming where it was looked for when there is none."""
    if path is None:
        where = Path(inventory_paths[0]).parent if inventory_paths else Path(".")
        raise TopologError.at(
            SourceLocation(str(where)),
            f"no principals file{why}: put principals.yml next to the inventory or pass --principals FILE",
        )
    return load_principals(path)
