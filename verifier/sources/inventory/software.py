"""The software compatibility table shipped as package data (`software.yaml`, each table
with its `source:`), as rows of the input relations that rules/software/ and placement read.

Versions are compared as numbers: `release_number` keeps the patch level ("535.129.03" ->
535129003), because a driver's minimum is exact to the patch; toolkit keys use
`version_number`'s major*1000 + minor, as `software_version` and job
requirements do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import yaml

from verifier.core.frozen import Frozen
from verifier.core.resources import package_file

# A release of three parts may carry its package's build or revision number after a '-' (ROCm's
# /opt/rocm/.info/version "6.3.0-66", a Debian package's "2.21.5-1" or "550.54.15-0ubuntu1") and
# build metadata after a '+' (dpkg's "2.21.5-1+cuda12.4"): the release is the part before them.
# Only after three parts: "12-4" (a package name's CUDA 12.4) is no release of 12. A revision
# starts with a digit and nothing starts with '~': "12.4-rc1" and "6.2.0~rc1" come before their
# release, so they are not read as it. A git hash of 7 to 40 lowercase hex digits may stand there
# too: `hipconfig --version` prints HIP's version so ("6.2.41133-dd7f95766"), and one starting with
# a letter was taken for a word and left uncompared. No pre-release word is all hex digits with 7
# or more of them ("-rc1", "-beta2", "-alpha" are not).
_REVISION = r"(?:-(?:[0-9][0-9A-Za-z.~]{0,40}|[a-f][0-9a-f]{6,39}))?(?:\+[0-9A-Za-z.~]{1,40})?"
_HASH_AFTER = re.compile(r"-[a-f][0-9a-f]{6,39}$")
"""That hash at the end of a text, which does not make the figure before it a word."""
_RELEASE_RE = re.compile(r"^([0-9]{1,3})(?:\.([0-9]{1,3})(?:\.([0-9]{1,3})" + _REVISION + ")?)?$")

Row = tuple[str | int, ...]


def release_number(text: str) -> int | None:
    """A version of one to three parts, each below 1000, as major*10^6 + minor*10^3 + patch
    ("535.129.03" -> 535129003, "12.2" -> 12002000, "6" -> 6000000); None for anything else
    ("amdgpu 6.7.0", "1.2.3.4", "12.1000").
    """
    m = _RELEASE_RE.match(text.strip())
    if m is None:
        return None
    major, minor, patch = (int(g or 0) for g in m.groups())
    return major * 1_000_000 + minor * 1_000 + patch


def _toolkit_number(text: str) -> int:
    """`"12.4"` -> 12004, as version_number encodes it."""
    major, _, minor = text.partition(".")
    return int(major) * 1000 + int(minor or 0)


@dataclass(frozen=True, repr=False, eq=False)
class SoftwareTable(Frozen):
    cuda_driver: tuple[tuple[str, str], ...]  # (CUDA major.minor, least Linux driver)
    rocm_gpus: tuple[tuple[str, str, str], ...]  # (catalogue model, architecture, first ROCm release)
    vendor_software: tuple[tuple[str, str, str], ...]  # (component, vendor, role: toolkit | collective)

    def rows(self) -> dict[str, list[Row]]:
        """Rows of cuda_driver_minimum, rocm_gpu_minimum and vendor_software (rules/schema.dl)."""
        return {
            "cuda_driver_minimum": [(_toolkit_number(c), c, _release(d), d) for c, d in self.cuda_driver],
            "rocm_gpu_minimum": [(m, a, _release(r), r) for m, a, r in self.rocm_gpus],
            "vendor_software": [tuple(r) for r in self.vendor_software],
        }


def _release(text: str) -> int:
    n = release_number(text)
    if n is None:  # pragma: no cover - guarded by tests of the shipped table
        raise AssertionError(f"software.yaml: {text!r} is not a version of one to three numbers")
    return n


@cache
def software_table() -> SoftwareTable:
    """The shipped table, parsed once per process. A broken one is a bug, not bad input."""
    text = package_file("verifier.sources.inventory", "software.yaml").read_text(encoding="utf-8")
    # libyaml where PyYAML was built with it: the same data as safe_load (tests/sources compare
    # them), read in a fifth of the time by every command that loads an inventory.
    doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for table in ("cuda_driver", "rocm_gpus", "collectives"):
        if not str(doc[table].get("source", "")).strip():  # pragma: no cover - guarded by tests
            raise AssertionError(f"software.yaml: table {table} has no source")
    cuda = tuple((str(c), str(d)) for c, d in doc["cuda_driver"]["minimums"].items())
    rocm = tuple((str(m), str(v["arch"]), str(v["since"])) for m, v in doc["rocm_gpus"]["models"].items())
    vendors = tuple(
        (str(component), str(vendor), str(role))
        for vendor, roles in doc["collectives"]["vendors"].items()
        for role, component in roles.items()
    )
    return SoftwareTable(cuda, rocm, vendors)


# The shapes in which each component's releases are written, for the components whose versions
# rules compare. A figure that cannot be a release of its component (`cuda: "122"` for 12.2,
# `nccl: "2.165"` for 2.16.5) would otherwise be compared as the number it spells and pass every
# minimum. Only a figure is judged (digits, with dots, signs, an exponent or separators): a word
# ("latest", "R535", "amdgpu 6.7.0") is not a version and stays uncompared (docs/inventory-format.md).
# - CUDA: major.minor, or major.minor.patch as nvcc prints it (12.4.131); cuda.h's CUDA_VERSION
#   is major*1000 + minor*10, so a minor has at most two digits.
# - NCCL and RCCL (which keeps NCCL's numbering): major.minor or major.minor.patch; nccl.h's
#   NCCL_VERSION_CODE is major*10000 + minor*100 + patch, so minor and patch have at most two.
# - ROCm: major.minor or major.minor.patch (6.0, 6.1.2), as the compatibility matrix writes them;
#   also HIP's version as `hipconfig --version` prints it, with or without its `-<hash>` (6.2.41133): HIP's
#   major.minor is its ROCm release's, and its third number is a five-digit build number, not ROCm's
#   patch (ROCm 6.2.2 and 6.2.4 both ship HIP 6.2.41134, 6.3.0 ships 6.3.42131: the HIP-to-ROCm
#   table of the cubecl-hip-sys crate, lib.rs/crates/cubecl-hip-sys/features). It is read as its
#   ROCm major.minor, which is all a minimum compares (version_number ignores the patch).
# A node's release of three parts may end in its package's build or revision number (`_REVISION`);
# RCCL's packages put the ROCm release they ship with after its own patch (2.20.5.60200, ROCm 6.2.0).
# A job's minimum may name the major alone (">=12": CUDA 12.0 or later, exactly), as
# version_number reads it; a node's "12" is no release (12.what?), so it is refused there.
# Each entry: the minor's and the patch's pattern, and what is expected.
_RELEASE_PARTS: dict[str, tuple[str, str, str]] = {
    "cuda": (
        r"[0-9]{1,2}",
        r"[0-9]{1,3}",
        "a CUDA release as major.minor such as '12.4' (or '12.4.131'), a minor of at most two digits",
    ),
    "nccl": (
        r"[0-9]{1,2}",
        r"[0-9]{1,2}",
        "an NCCL release such as '2.21.5' or '2.21', a minor and patch of at most two digits",
    ),
    "rccl": (
        r"[0-9]{1,2}",
        r"[0-9]{1,2}(?:\.[0-9]{5,6})?",
        "an RCCL release such as '2.18.6' or '2.18', a minor and patch of at most two digits",
    ),
    "rocm": (
        r"[0-9]{1,3}",
        r"(?:[0-9]{1,3}|[0-9]{5})",
        "a ROCm release as major.minor such as '6.1' or '6.1.2' (or HIP's version as hipconfig prints it, "
        "such as '6.2.41133' or '6.2.41133-dd7f95766')",
    ),
}
_RELEASE_SHAPES: dict[str, tuple[re.Pattern[str], str]] = {
    c: (re.compile(rf"[0-9]{{1,2}}\.{minor}(?:\.{patch}{_REVISION})?"), expected)
    for c, (minor, patch, expected) in _RELEASE_PARTS.items()
}
_MINIMUM_SHAPES: dict[str, tuple[re.Pattern[str], str]] = {
    c: (re.compile(rf"[0-9]{{1,2}}(?:\.{minor}(?:\.{patch})?)?"), expected.replace("major.minor", "major[.minor]"))
    for c, (minor, patch, expected) in _RELEASE_PARTS.items()
}


def release_shape_problem(component: str, text: str, *, minimum: bool = False) -> str | None:
    """Why `text` cannot be a release of `component` (or, with `minimum`, a job's least version of
    it), or None (also for components and words this does not judge). Digits of other scripts
    (fullwidth, Arabic-Indic) are judged and refused: every comparison reads ASCII digits only, so
    such a version would silently go uncompared.
    """
    shape = (_MINIMUM_SHAPES if minimum else _RELEASE_SHAPES).get(component.lower())
    if shape is None:
        return None
    written = text.strip()
    figure = _HASH_AFTER.sub("", written)
    if not figure[:1].isdigit() or not all(c.isdigit() or c in "._+-eE," for c in figure):
        return None
    pattern, expected = shape
    if pattern.fullmatch(written):
        return None
    return f"{written!r} cannot be a release of {component}; expected {expected}"


# A major of at most 12 digits keeps major*1000 + minor inside 64 bits (and no version has more).
_VERSION_RE = re.compile(r"^([0-9]{1,12})(?:\.([0-9]{1,9})(?:(?:\.[0-9]+)+" + _REVISION + ")?)?$")


def version_number(text: str) -> int | None:
    """A version as `major*1000 + minor` ("12.4" -> 12004, "12.10" -> 12010, "535.104.05" ->
    535104, "6" -> 6000); patch levels are ignored. None when the text is not `N` or
    `N.M[.P...]` (e.g. "containerd 1.7.13"), the minor is 1000 or more, or the major has more
    than 12 digits (neither would fit).
    """
    m = _VERSION_RE.match(text.strip())
    if m is None:
        return None
    minor = int(m.group(2) or 0)
    if minor >= 1000:
        return None
    return int(m.group(1)) * 1000 + minor
