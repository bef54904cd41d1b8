"""A MIG job's profile must be one some model offers: an unknown profile is bad input, not "fits nowhere".

A job asking for `gpu: {mig: 2g.10gb}` (a name no GPU offers: an H100's 2-slice instance has
20 GB) would otherwise be judged GPU by GPU, fail the `mig` stage everywhere and read as PLACE001,
"no placement now". It can never run, so it is refused at the job's `mig` line (exit 2) with the
profiles the catalogue offers, model by model. The models are the inventory's (the built-in
catalogue and any it adds), so a model an inventory brings with its own profiles counts too.
Profiles per model come from NVIDIA's MIG user guide ("Supported MIG Profiles",
https://docs.nvidia.com/datacenter/tesla/mig-user-guide/), as the catalogue cites them.

A profile that exists, but not on a model the job accepts (1g.5gb, an A100-40GB profile, on
H100s), is judged by the rules instead (PLACE002): which models a job accepts is theirs to say.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from verifier.core.errors import Diagnostic, TopologError
from verifier.core.suggest import did_you_mean
from verifier.sources.inventory.model import CatalogModel
from verifier.sources.jobs.spec import Job


def require_known_mig_profiles(jobs: Iterable[Job], models: Mapping[str, CatalogModel]) -> None:
    """TopologError naming every job whose MIG profile no model offers (none: returns)."""
    offered = {profile for m in models.values() for profile, _ in m.mig}
    problems = [
        Diagnostic(
            job.mig_loc or job.loc,
            f"job {job.name}: MIG profile {job.mig!r} is offered by no GPU model of the catalogue; expected a "
            f"profile of {offered_profiles(models)}{did_you_mean(job.mig, offered)}",
        )
        for job in jobs
        if job.mig is not None and job.mig not in offered
    ]
    if problems:
        raise TopologError(problems)


def offered_profiles(models: Mapping[str, CatalogModel]) -> str:
    """Each set of profiles with the models that offer it: `H100-SXM5-80GB, A100-SXM4-80GB: 1g.10gb, ...`."""
    by_profiles: dict[tuple[str, ...], list[str]] = {}
    for m in models.values():
        if m.mig:
            profiles = tuple(sorted((p for p, _ in m.mig), key=_profile_order))
            by_profiles.setdefault(profiles, []).append(m.name)
    if not by_profiles:
        return "none (no model of the catalogue supports MIG)"
    parts = [f"{', '.join(sorted(names))}: {', '.join(p)}" for p, names in by_profiles.items()]
    return "; ".join(sorted(parts))


def _profile_order(profile: str) -> tuple[int, int, str]:
    """Compute slices, then memory: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, ... (as NVIDIA's tables list
    them: an extended profile after its plain one).
    """
    slices, _, memory = profile.partition("g.")
    digits = memory.split("gb", 1)[0]
    return (int(slices) if slices.isdigit() else 0, int(digits) if digits.isdigit() else 0, profile)
