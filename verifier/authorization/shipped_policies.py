"""The shipped Cedar policies, validated when topolog is released, read back as plain data.

Every user of a release validates the same schema and policy files: parsing each statement,
cedarpy's validator and printing the schema are about 11 ms of a first `verify` with no cache,
paid by every fresh CI job. `python -m verifier.authorization.compile_policies` writes what
validation keeps (the schema as cedarpy prints it, each policy with its file, line, text and the
entities it names, what the policies observe) to `shipped_policies.json` beside this module: JSON,
so reading it runs nothing it names, and it ships inside the package like the compiled rule pack.

The data answers only for files that are, byte for byte, the ones it was validated from, under the
same limits, by the same validating code and the same cedarpy release: the digest below covers
all of them, worked out at compile time and again at load. Anything else (a policy edited in place,
a user's own directory, other limits, another cedarpy) is validated as before, and a directory that
would not validate never matches (the data holds only a pack that passed). Decisions still need
Cedar: the policy set is parsed from the kept statements when first used.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from importlib.machinery import PathFinder

from verifier.core.resources import package_dir, package_file

DATA_NAME = "shipped_policies.json"
FORMAT = 1
CODE = ("policies.py", "observed.py", "shipped_policies.py")
"""This package's files whose change can change what a policy directory validates to."""


def cedar_release() -> str | None:
    """The installed cedarpy's release (from its distribution folder's name), without importing it.

    None when it cannot be told (no single `cedarpy-*.dist-info` beside it): the data is then not
    used, and the policies are validated.
    """
    found = PathFinder.find_spec("cedarpy")
    if found is None or not found.submodule_search_locations:
        return None
    releases: set[str] = set()
    for folder in found.submodule_search_locations:
        try:
            names = os.listdir(os.path.dirname(folder))
        except OSError:
            return None
        releases.update(n[len("cedarpy-") : -len(".dist-info")] for n in names if _is_cedar_dist(n))
    return releases.pop() if len(releases) == 1 else None


def _is_cedar_dist(name: str) -> bool:
    return name.lower().startswith("cedarpy-") and name.endswith(".dist-info")


def policies_digest(limits: str, cedar: str, schema_text: str, files: Sequence[tuple[str, str]]) -> str:
    """The digest of a policy directory's schema and `files` ((name relative to the directory,
    posix), text), in load order, validated under `limits` by cedarpy release `cedar` and this
    package's validating code.
    """
    digest = hashlib.sha256(f"topolog shipped policies {FORMAT}\0{limits}\0{cedar}\0".encode())
    code = package_dir("verifier.authorization")
    for name in CODE:
        data = code.joinpath(name).read_bytes()
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    for name, text in (("", schema_text), *files):
        data = text.encode()
        digest.update(f"{name}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()


def data_bytes() -> bytes | None:
    """The compiled data's bytes as shipped; None when there are none (validate)."""
    try:
        return package_file("verifier.authorization", DATA_NAME).read_bytes()
    except OSError:  # not compiled (a checkout before its first compile)
        return None
