"""`topolog place`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.cli.argument_order import check_place
from verifier.cli.errors import guard
from verifier.cli.job_options import PRINCIPAL_FROM_OPTION
from verifier.cli.observed_options import observed_options, observed_run_of
from verifier.cli.options import (
    ENGINE_OPTION,
    NO_AUTHORIZATION_OPTION,
    WholeRange,
    _missing_files,
    format_option,
    side_file_flags,
    side_file_options,
)
from verifier.cli.output import emit
from verifier.cli.scenario_options import scenario_of, scenario_options
from verifier.core.progress import Progress
from verifier.placement.place import RANKS, PlaceReport
from verifier.reports import formats_for
from verifier.session.place_run import PlaceSettings, place, what_if
from verifier.sources.jobs.principal_rules import PrincipalRule


@click.command("place")
@click.argument("inventory", type=click.Path(path_type=Path))
@click.argument("jobs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--rank",
    type=click.Choice(RANKS),
    default="bandwidth",
    show_default=True,
    help="bandwidth: best bottleneck first, then fewest nodes, then name; cost: price per hour, then bandwidth.",
)
@click.option(
    "--why-not", "why_not", is_flag=True, help="For each candidate domain that fails, the first requirement it misses."
)
@click.option(
    "--limit",
    type=WholeRange(min=0),
    default=0,
    show_default=True,
    help="Show at most this many placements per job (0: all).",
)
@format_option(formats_for(PlaceReport))
@side_file_options()
@NO_AUTHORIZATION_OPTION
@PRINCIPAL_FROM_OPTION
@scenario_options
@observed_options
@ENGINE_OPTION
def place_cmd(
    inventory: Path,
    jobs: tuple[Path, ...],
    rank: str,
    why_not: bool,
    limit: int,
    fmt: str,
    principals_path: Path | None,
    policies_path: Path | None,
    no_authorization: bool,
    principal_from: tuple[PrincipalRule, ...],
    drain: tuple[str, ...],
    fail: tuple[str, ...],
    fail_links: tuple[str, ...],
    scenario_paths: tuple[Path, ...],
    observed: tuple[Path, ...],
    observed_format: str | None,
    observed_match: str,
    observed_now: str | None,
    engine: str,
) -> None:
    """List, per job, the valid placements ranked, with bottleneck bandwidth and hourly cost.

    JOBS are job files or directories: topolog's own (kind: Jobs), Kubernetes workloads (Pod,
    Job, CronJob, StatefulSet, Deployment, JobSet, LeaderWorkerSet, Kueue Workload, Kubeflow's
    PyTorchJob, TFJob, MPIJob and TrainJob and the like, RayJob, RayCluster, Volcano Job; several
    to a file, or a kubectl List) and
    Slurm batch scripts (#SBATCH lines); --principal-from says whom the last two act as, and
    what they say that topolog does not judge is listed as notes. Each job's principal must be in the
    principals file (principals.yml next to the inventory, or --principals), and placements
    are only where the Cedar policies let it schedule; --no-authorization places without
    them and says so. Exit status: 0 every job has a placement, 1 some job fits nowhere now
    (PLACE001) or can never run on any node (PLACE002, with the reason), 2 bad input.

    What-if (--drain, --fail, --fail-link, --scenario): the jobs are placed with and without
    the scenario's states (drained, down) and compared per job: which lose their placement,
    which keep one at a lower bottleneck or move, and whose authorization decisions change.
    Exit status then: 0 no job loses its placement, 1 some job does, 2 bad input (an id the
    inventory lacks included).

    With --observed (docs/observed.md), a GPU the hardware's own tools say is out of service
    (OBS004: uncorrectable ECC, a failed or pending row remapping, a reset-bucket XID, fabric
    registration not completed; OBS006: missing from its node's listing) is never placed on.

    \b
    Example:
      topolog place inventories/mixed-fleet.yaml inventories/jobs/portable.yaml
      topolog place inventories/mixed-fleet.yaml inventories/jobs/ --why-not --rank cost --format json
      topolog place inventories/mixed-fleet.yaml inventories/jobs/ --drain h100-n0 --fail rtx-n3/gpu1
      topolog place inventories/dgx-h100-pod.yaml inventories/jobs/ --fail-link 'dgx00/gpu0<->dgx00/nvsw0'
      topolog place inventories/dgx-h100-pod.yaml inventories/jobs/schedulers/ \\
          --principal-from namespace=Team --principal-from account=Team
      topolog place inventories/dgx-h100-pod.yaml inventories/jobs/training.yaml \\
          --observed inventories/observed/dgx-h100-pod --observed-now 2026-12-06T09:00:00Z
    """

    def body() -> int:
        _missing_files([inventory, *jobs, *(p for p in (principals_path, policies_path) if p is not None)])
        check_place(inventory, jobs)
        scenario = scenario_of(drain, fail, fail_links, scenario_paths)
        observations = observed_run_of(observed, observed_format, observed_match, observed_now)
        if scenario:
            if why_not or limit:
                raise click.UsageError(
                    "--why-not and --limit apply to a plain place; a what-if compares each job's best placement"
                )
            with Progress() as progress:
                changes = what_if(
                    [inventory],
                    list(jobs),
                    scenario,
                    PlaceSettings(
                        rank=rank,
                        engine=engine,
                        limit=1,
                        authorize=not no_authorization,
                        principal_from=principal_from,
                        observed=observations,
                    ),
                    progress,
                    side_file_flags(principals_path, policies_path),
                )
            emit(changes, fmt)
            return changes.exit_code
        with Progress() as progress:
            report = place(
                [inventory],
                list(jobs),
                rank=rank,
                why_not=why_not,
                engine=engine,
                progress=progress,
                limit=limit,
                flags=side_file_flags(principals_path, policies_path),
                authorize=not no_authorization,
                principal_from=principal_from,
                observed=observations,
            )
        emit(report, fmt)
        return report.exit_code

    sys.exit(guard(body))
