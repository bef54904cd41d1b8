"""Arguments given in the wrong order or place, told apart by what the files hold.

`topolog verify rules/ inventory.yaml` or `topolog place jobs/ inv.yaml` would otherwise fail
deep in a loader ("cannot read file: it is a folder", "the job file has no 'jobs'"); here each
positional argument is looked at before anything is loaded, and one that is plainly another
kind of input is refused (exit 2) with the command line that was probably meant.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from verifier.core.errors import SourceLocation, TopologError

_KIND = re.compile(rb"^kind:[ \t]*['\"]?([A-Za-z]+)", re.MULTILINE)
_HEAD = 8192  # the top-level `kind:` is near the top of every file topolog writes or ships
# Every kind the job loader reads (verifier.sources.jobs.kubernetes API_GROUPS, a bare Pod too):
# the file holds jobs, not an inventory.
_JOB_KINDS = {
    b"Jobs",
    b"Pod",
    b"Job",
    b"JobSet",
    b"LeaderWorkerSet",
    b"PyTorchJob",
    b"MPIJob",
    b"RayJob",
    b"Workload",
    b"CronJob",
    b"StatefulSet",
    b"Deployment",
    b"TFJob",
    b"XGBoostJob",
    b"PaddleJob",
    b"JAXJob",
    b"MXJob",
    b"RayCluster",
    b"TrainJob",
    b"RayService",
    b"DisaggregatedSet",
}


def what_is(path: Path) -> str | None:
    """'rules', 'policies', 'jobs', 'principals' or 'inventory' where the content says so, else None."""
    if path.is_dir():
        names = [p for p in sorted(path.iterdir()) if p.is_file()][:200]
        if any(p.suffix == ".dl" for p in names):
            return "rules"
        if any(p.suffix == ".cedar" for p in names):
            return "policies"
        found = {what_is(p) for p in names if p.suffix in (".yaml", ".yml", ".sh", ".sbatch")}
        return "jobs" if found in ({"jobs"}, {"jobs", None}) else None
    if path.suffix == ".dl":
        return "rules"
    if path.suffix == ".cedar":
        return "policies"
    if not path.is_file():  # a pipe (`verify <(cmd)`, /dev/stdin): its bytes are the loader's, read once
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(_HEAD)
    except OSError:
        return None  # the loader reports a file it cannot read, with its own message
    if b"\n#SBATCH" in head or head.startswith(b"#SBATCH"):
        return "jobs"
    kinds = {m.group(1) for m in _KIND.finditer(head)}
    if kinds & _JOB_KINDS:
        return "jobs"
    if kinds == {b"Principals"}:
        return "principals"
    if kinds == {b"Inventory"}:
        return "inventory"
    return None


_OPTION = {"rules": "--rules", "policies": "--policies", "jobs": "--jobs", "principals": "--principals"}


def check_verify(inventories: Sequence[Path]) -> None:
    """Refuse an INVENTORY argument of `topolog verify` that holds rules, policies, jobs or principals."""
    for path in inventories:
        kind = what_is(path)
        if kind is None or kind == "inventory":
            continue
        others = [str(p) for p in inventories if p != path]
        meant = ["topolog", "verify", *(others or ["INVENTORY"]), _OPTION[kind], str(path)]
        raise TopologError.at(
            SourceLocation(str(path)),
            f"holds {kind}, not an inventory; did you mean `{shlex.join(meant)}`?",
        )


def check_place(inventory: Path, jobs: Sequence[Path]) -> None:
    """Refuse `topolog place JOBS INVENTORY`: the job files first, the inventory after them."""
    kind = what_is(inventory)
    if kind not in ("jobs", "rules", "policies", "principals"):
        return
    swapped = next((p for p in jobs if what_is(p) == "inventory"), None)
    first = str(swapped) if swapped is not None else "INVENTORY"
    rest = [str(p) for p in jobs if p != swapped]
    if kind == "jobs":
        meant = ["topolog", "place", first, str(inventory), *rest]
    elif kind == "rules":  # place reads the shipped rules only
        meant = ["topolog", "place", first, *(rest or ["JOBS"])]
    else:
        meant = ["topolog", "place", first, *(rest or ["JOBS"]), _OPTION[kind], str(inventory)]
    raise TopologError.at(
        SourceLocation(str(inventory)),
        f"holds {kind}, not an inventory (the first argument of place); did you mean `{shlex.join(meant)}`?",
    )
