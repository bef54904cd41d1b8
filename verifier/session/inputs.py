"""What a run reads before any rule: the inventory (or a tool's output), its principals, and the
Cedar setup built from them.

Kept apart from verifier.session.session, which evaluates: `authorize` and `audit` read their
inputs here and import none of the engine, the checks or the fact builders.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.core.frozen import Record
from verifier.session.side_files import SideFiles
from verifier.sources.inventory.clusters import one_cluster
from verifier.sources.inventory.loader import load_inventory_read
from verifier.sources.inventory.model import Inventory
from verifier.sources.inventory.raw_files import read_digest_parts, read_files
from verifier.sources.principals import Principals, load_principals

if TYPE_CHECKING:
    from verifier.authorization.setup import AuthzSetup


@dataclass(repr=False, eq=False)
class Inputs(Record):
    """What a run read: the inventory, and the side inputs beside it."""

    paths: tuple[Path, ...]
    inventory: Inventory
    side: SideFiles
    principals: Principals | None = None
    notes: list[str] = field(default_factory=list)
    """What an importer read but topolog does not model (printed on stderr by the CLI)."""
    digest_parts: list[str | bytes] | None = None
    """What a YAML inventory was loaded from (raw_files.read_digest_parts), naming what the cache
    keeps of it; None for a tool's output."""


def read_inventory(
    paths: Sequence[Path], side: SideFiles, from_kind: str | None = None, *, principals: bool = True
) -> Inputs:
    """A YAML inventory (one cluster), or with `from_kind` a tool's output read by that importer.

    With `principals`, the principals file the side files name is read too (once per run).
    """
    notes: list[str] = []
    parts: list[str | bytes] | None = None
    if from_kind is None:
        one_cluster(paths, "this command works on one inventory at a time")
        files = read_files(paths)
        inventory = load_inventory_read(files)
        parts = read_digest_parts(files)
    else:
        from verifier.sources.importers import import_files  # only with --from: 5 ms of every other run

        imported = import_files(from_kind, list(paths))
        inventory = imported.inventory
        notes = [str(note) for note in imported.notes]
    return Inputs(tuple(paths), inventory, side, _principals(side) if principals else None, notes, parts)


def _principals(side: SideFiles) -> Principals | None:
    return load_principals(side.principals) if side.principals is not None else None


def authorization_inputs(
    paths: Sequence[Path], side: SideFiles, from_kind: str | None = None, wanted: Sequence[str] | None = None
) -> AuthzSetup:
    """The Cedar setup of an inventory (or a tool's output) and its principals, for a run that
    evaluates no rule (`authorize`, `audit`): the principals file must be there.

    A YAML inventory's hardware view is kept in the cache (verifier.authorization.hardware): a
    repeated run on the same bytes reads it back instead of the whole inventory, which is then
    loaded only if a request needs NVLink domains. With `wanted` (one request's names: `authorize`)
    and no kept view, only the part of the inventory the request reads is expanded, the rest
    checked without it (verifier.authorization.lazy), where that covers the inventory.
    """
    from verifier.authorization.hardware import cached_view, remember_view, view_key
    from verifier.authorization.setup import build_setup, require_principals

    if from_kind is not None:
        inputs = read_inventory(paths, side, from_kind)
        people = inputs.principals or require_principals(None, paths)
        return build_setup(inputs.inventory, paths, side.policy_dir, people)
    one_cluster(paths, "this command works on one inventory at a time")
    files = read_files(paths)
    whole = functools.cache(functools.partial(load_inventory_read, files))  # loaded at most once, from these bytes
    key = view_key(read_digest_parts(files))
    view = cached_view(key) if key is not None else None
    if view is None and wanted is not None and side.principals is not None:
        from verifier.authorization.lazy import lazy_setup

        people_file = side.principals
        lazy = lazy_setup(files, paths, side.policy_dir, lambda: load_principals(people_file), wanted, whole)
        if lazy is not None:
            return lazy
    inventory = view if view is not None else whole()
    people = _principals(side) or require_principals(None, paths)
    setup = build_setup(inventory, paths, side.policy_dir, people, whole)
    if key is not None and view is None:
        remember_view(key, inventory)
    return setup


def authorization_for(inputs: Inputs, *, required: str | None = None) -> AuthzSetup | None:
    """The Cedar setup of `inputs`, built from the inventory; None without a principals file.

    With `required` (why authorization is needed, e.g. " to place jobs"), a missing
    principals file is bad input instead: the run fails closed.
    """
    principals = inputs.principals
    if principals is None and required is None:
        return None
    from verifier.authorization.setup import build_setup, require_principals  # Cedar: only with principals

    if principals is None:
        assert required is not None
        principals = require_principals(None, inputs.paths, required)
    return build_setup(
        inputs.inventory, inputs.paths, inputs.side.policy_dir, principals, inventory_parts=inputs.digest_parts
    )
