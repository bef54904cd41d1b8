"""One request's Cedar setup from the part of the inventory it reads (`authorize` with no cache).

verifier.sources.inventory.partial expands a fleet's counted top-level entries only where a
name of the request (principal, resource, context) or a uid the policies name appears, and
checks the rest by two representatives; the entities are then built from what was expanded.
An entity's attributes read only the object, its ancestors and what it holds (entities.py), so
the request's principal, resource and every ancestor and named entity are what the whole
inventory makes of them. Anything partial.py does not cover, and any problem, is None here:
the caller loads the whole inventory (which reports the problem where it is written).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from verifier.authorization.entities import check_label_types
from verifier.authorization.policies import load_policies
from verifier.authorization.setup import AuthzSetup, build_setup
from verifier.core.errors import TopologError
from verifier.sources.inventory.model import Inventory
from verifier.sources.inventory.partial import partial_inventory
from verifier.sources.inventory.raw_files import ReadFile
from verifier.sources.principals import Principals


def lazy_setup(
    files: Sequence[ReadFile],
    paths: Sequence[Path],
    policy_dir: Path,
    principals: Callable[[], Principals],
    wanted: Sequence[str],
    whole: Callable[[], Inventory],
) -> AuthzSetup | None:
    """The setup for a request naming `wanted` (its principal, resource and context as written),
    built from a partial inventory of `files` (read from `paths`); None where the whole inventory
    must be loaded. `principals` is called once the inventory passed (its problems come first, as
    when it is loaded whole). `whole` loads the whole inventory, called only when a decision needs
    the NVLink domains, which the partial inventory's links cannot give (build_setup).
    """
    try:
        bundle = load_policies(policy_dir)
    except TopologError:  # reported after the inventory's own problems, as the whole way does
        return None
    part = partial_inventory(files, [*wanted, *bundle.observed.named])
    if part is None:
        return None
    # A plain instance's labels are a representative's (partial.py), which are here. A label
    # refused is refused with a count of every object that has it: the whole load counts them,
    # so any refusal goes the whole way.
    try:
        check_label_types(part.inventory)
    except TopologError:
        return None
    return build_setup(part.inventory, paths, policy_dir, principals(), whole, bundle=bundle)
