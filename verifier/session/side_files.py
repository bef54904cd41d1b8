"""The files a run reads besides its inventory, each found by one rule.

A side file given by a flag (or the configuration file, which supplies flag defaults) is
used as given. Otherwise its conventional name is looked for next to the first inventory
file, then in the working directory; the first found wins. Rules, policies and thresholds
fall back to the ones shipped with topolog; a baseline is only ever named explicitly.

| side file  | flag           | conventional name        |
|------------|----------------|--------------------------|
| thresholds | `--thresholds` | `topolog.thresholds.yaml`|
| waivers    | `--waivers`    | `topolog.waivers.yaml`   |
| principals | `--principals` | `principals.yml`         |
| policies   | `--policies`   | `policies/` (a folder)   |
| baseline   | `--baseline`   | (none: named explicitly) |
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.limits import file_kind
from verifier.core.resources import display_path, shipped_policies_dir

THRESHOLDS_NAME = "topolog.thresholds.yaml"
WAIVERS_NAME = "topolog.waivers.yaml"
PRINCIPALS_NAME = "principals.yml"
POLICIES_NAME = "policies"


@dataclass(frozen=True, repr=False, eq=False)
class SideFiles(Frozen):
    """Where each side file of a run is; None: there is none (defaults apply)."""

    thresholds: Path | None = None
    waivers: Path | None = None
    baseline: Path | None = None
    principals: Path | None = None
    policies: Path | None = None
    """A folder of .cedar files and schema.cedarschema; None means the shipped policies."""

    @property
    def policy_dir(self) -> Path:
        return self.policies if self.policies is not None else display_path(shipped_policies_dir())


def discover(
    inventory_paths: Sequence[Path],
    *,
    thresholds: Path | None = None,
    waivers: Path | None = None,
    baseline: Path | None = None,
    principals: Path | None = None,
    policies: Path | None = None,
    cwd: Path | None = None,
) -> SideFiles:
    """The side files of a run on `inventory_paths`: the ones named, else the conventional ones found.

    A named file that does not exist is bad input (TopologError), never silently skipped. One that
    exists is left to its reader, which takes a regular file or a pipe (`--waivers <(...)`, as
    inventories and jobs) and refuses a folder or a device with its path (core.limits.read_limited).
    """
    for path, what in (
        (thresholds, "thresholds file"),
        (waivers, "waivers file"),
        (baseline, "baseline file"),
        (principals, "principals file"),
    ):
        if path is not None and not path.exists():
            raise TopologError.at(SourceLocation(str(path)), f"no such {what}")
    if policies is not None and not policies.is_dir():
        # A file, a pipe or a socket there is not "no such" thing: the user, whose `ls` shows it,
        # is told what it is and what was expected.
        there = policies.exists()
        raise TopologError.at(
            SourceLocation(str(policies)),
            "it is not a folder; expected the policy directory (its *.cedar files and schema.cedarschema)"
            if there
            else "no such policy directory",
        )
    places = _places(inventory_paths, cwd)
    return SideFiles(
        thresholds=thresholds or _find(places, THRESHOLDS_NAME, file=True),
        waivers=waivers or _find(places, WAIVERS_NAME, file=True),
        baseline=baseline,
        principals=principals or _find(places, PRINCIPALS_NAME, file=True),
        policies=policies or _find(places, POLICIES_NAME, file=False),
    )


def _places(inventory_paths: Sequence[Path], cwd: Path | None) -> list[Path]:
    # Relative names stay relative so that reports name files as the user typed them.
    here = Path(".") if cwd is None else cwd
    first = Path(inventory_paths[0]).parent if inventory_paths else here
    return [first] if first.resolve() == here.resolve() else [first, here]


def _find(places: Sequence[Path], name: str, *, file: bool) -> Path | None:
    for place in places:
        candidate = place / name
        if candidate.is_file() if file else candidate.is_dir():
            return candidate
        if os.path.lexists(candidate):
            if file and stat.S_ISFIFO(_mode(candidate)):
                return candidate  # a pipe, as a named side file may be: its reader takes it
            # Something is there under the conventional name, and it is not what the name is for: a
            # policies/ that became a file or a link to nothing (a mount gone) had the run go on with
            # the next place's, or with the shipped policies, which are not the ones written for
            # this inventory (the gate reloaded onto them without a word).
            raise TopologError.at(
                SourceLocation(str(candidate)),
                f"it is {_kind(candidate)}; expected {'a file' if file else 'a folder of policies'} "
                "under this name, or nothing (then the next place, or the default, is used)",
            )
    return None


def _mode(path: Path) -> int:
    try:
        return path.stat().st_mode
    except OSError:
        return 0


def _kind(path: Path) -> str:
    try:
        mode = path.stat().st_mode
    except OSError as err:
        if path.is_symlink():
            return f"a link that leads nowhere readable ({err.strerror or err})"
        return f"unreadable ({err.strerror or err})"
    return file_kind(mode)
