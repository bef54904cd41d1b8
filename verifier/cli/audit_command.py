"""`topolog audit`: who may do what where (exit codes: see verifier.cli.authz_commands)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.authorization.audit import AuditResult, DiffResult
from verifier.authorization.audit import audit as audit_setup
from verifier.authorization.audit import diff as diff_setups
from verifier.authorization.evaluate import ACTIONS
from verifier.cli.errors import guard
from verifier.cli.options import _missing_files, format_option, side_file_options
from verifier.cli.output import emit
from verifier.reports import formats_for
from verifier.session.api import load_authorization
from verifier.session.side_files import discover


@click.command("audit")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@side_file_options()
@click.option(
    "--against",
    type=click.Path(path_type=Path),
    default=None,
    help="Another policy directory, or another inventory: report every decision that changes.",
)
@click.option(
    "--action",
    "actions",
    type=click.Choice(ACTIONS),
    multiple=True,
    help="Audit these actions only (repeatable). Default: all.",
)
@click.option(
    "--resource-type",
    type=click.Choice(["Gpu", "Node"]),
    default="Gpu",
    show_default=True,
    help="Resources asked about; cells count the GPUs they hold.",
)
@click.option("--teams", "teams_only", is_flag=True, help="Rows are teams only (a team asks as itself).")
@click.option("--fail-on-change", is_flag=True, help="With --against: exit 1 when any decision changed.")
@format_option(formats_for(AuditResult))
def audit_cmd(
    inventory: tuple[Path, ...],
    principals_path: Path | None,
    policies_path: Path | None,
    against: Path | None,
    actions: tuple[str, ...],
    resource_type: str,
    teams_only: bool,
    fail_on_change: bool,
    fmt: str,
) -> None:
    """Show who may do what where: principals by hardware group, with GPU counts.

    Principals and resources are grouped into equivalence classes and Cedar is asked once per
    class pair. With --against, every decision that differs is reported instead.

    \b
    Example:
      topolog audit inventories/mixed-fleet.yaml --action schedule
      topolog audit inventories/mixed-fleet.yaml --against ../policies-next --format json
    """

    def body() -> int:
        _missing_files([*inventory, *(x for x in (policies_path, principals_path, against) if x)])
        chosen = list(actions or ACTIONS)
        setup = load_authorization(list(inventory), policies_path, principals_path)
        if against is not None:
            if against.is_dir():
                other = load_authorization(list(inventory), against, principals_path)
            else:
                # The other inventory is judged by the same policies; its own principals file if it has one.
                people = principals_path or discover([against]).principals or Path(setup.principals.file)
                other = load_authorization([against], setup.bundle.directory, people)
            result: DiffResult = diff_setups(setup, other, chosen, resource_type, teams_only)
            emit(result, fmt)
            return 1 if fail_on_change and result.changed else 0
        report = audit_setup(setup, chosen, resource_type, teams_only)
        emit(report, fmt)
        return report.exit_code

    sys.exit(guard(body, "nothing is authorized"))
