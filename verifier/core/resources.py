"""Where the installed package keeps the files it ships: the rule pack, thresholds, policies.

The repository keeps `rules/` and `policies/` at its top level; packaging maps them into
the package as `verifier.rules` and `verifier.policies` (see pyproject.toml), so a wheel,
an sdist, pipx and an editable checkout all find them through the import system's own record of
where each package lives (its spec), never through a path relative to this source file.
"""

from __future__ import annotations

from functools import cache
from importlib.util import find_spec
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError

RULES_PACKAGE = "verifier.rules"
POLICIES_PACKAGE = "verifier.policies"
THRESHOLDS_NAME = "thresholds.yaml"


@cache  # asked for dozens of times a run (each rule path is compared with the pack); it never moves
def package_dir(package: str) -> Path:
    """The folder on disk that holds `package`'s modules and data files.

    Read from the package's import spec, which the wheel, the editable and the source layouts
    all fill in, rather than through importlib.resources: that module pulls tempfile, shutil,
    random and zipfile into every cold run (about 2 % of a shipped example's instructions) for
    a lookup the spec already answers.
    """
    spec = find_spec(package)
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    found = Path(locations[0]) if locations else None
    if found is None or not found.is_dir():
        # A zipped install (zipimport) has no directory to hand to the loaders.
        raise TopologError.at(
            SourceLocation(str(found or package)),
            f"topolog's shipped {package.rsplit('.', 1)[-1]} are not on disk; install topolog unpacked "
            "(pip install / pipx install), not as a zip archive",
        )
    return found


def package_file(package: str, name: str) -> Path:
    """A data file shipped inside `package` (the catalogue, the compiled rule pack...)."""
    return package_dir(package) / name


RULE_SUFFIX = ".dl"
"""The file suffix of a rule file: a rules directory is every such file under it."""


def shipped_rules_dir() -> Path:
    """The rule pack shipped with topolog (`rules/` in the repository)."""
    return package_dir(RULES_PACKAGE)


def shipped_policies_dir() -> Path:
    """The Cedar schema and policies shipped with topolog (`policies/` in the repository)."""
    return package_dir(POLICIES_PACKAGE)


def shipped_thresholds_file() -> Path:
    """The default thresholds with their documentation (`rules/thresholds.yaml`)."""
    return shipped_rules_dir() / THRESHOLDS_NAME


def display_path(path: Path) -> Path:
    """`path` relative to the working directory when inside it, else as it is.

    Reports name rule and policy files by these names, so output run from the repository
    root is the same on every machine.
    """
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path
