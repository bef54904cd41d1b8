"""The `topolog authorize` and `topolog audit` commands.

Exit codes keep their meaning: `authorize` exits 0 on Allow, 1 on Deny (like a failed
check; an evaluation error is a Deny and is printed as a finding), 2 on bad input (unknown
principal or resource, invalid policy, bad context). `audit` exits 0, or 1 when some
policy failed during the audit (those requests were denied), or with `--fail-on-change`
when a decision changed; 2 on bad input. Neither evaluates a rule: the entities are built
from the inventory.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.authorization.audit import AuditResult, DiffResult
from verifier.authorization.audit import audit as audit_setup
from verifier.authorization.audit import diff as diff_setups
from verifier.authorization.evaluate import ACTIONS
from verifier.authorization.requests import AuthorizeReport
from verifier.cli.errors import guard
from verifier.cli.options import _missing_files, format_option, side_file_options
from verifier.cli.output import emit
from verifier.reports import formats_for
from verifier.session.api import authorize, load_authorization
from verifier.session.side_files import discover


@click.command("authorize")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--principal", required=True, help='Who asks: User::"alice", or a bare id from the principals file.')
@click.option("--action", required=True, type=click.Choice(ACTIONS), help="What they want to do.")
@click.option("--resource", required=True, help='On what: Gpu::"dgx00/gpu0", or a bare inventory id.')
@click.option(
    "--context",
    "context_text",
    default="{}",
    show_default=True,
    help='Request context as JSON, e.g. {"incident": true}.',
)
@side_file_options()
@format_option(formats_for(AuthorizeReport))
def authorize_cmd(
    inventory: tuple[Path, ...],
    principal: str,
    action: str,
    resource: str,
    context_text: str,
    principals_path: Path | None,
    policies_path: Path | None,
    fmt: str,
) -> None:
    """Decide one request with the Cedar policies; print the decision and the policies that decided it.

    Exit status: 0 Allow, 1 Deny (an evaluation error is a Deny, reported as a finding), 2 bad input.

    \b
    Example:
      topolog authorize inventories/mixed-fleet.yaml --principal ivan --action schedule \\
          --resource a100-n0/gpu0
    """

    def body() -> int:
        _missing_files([*inventory, *(x for x in (policies_path, principals_path) if x)])
        report = authorize(
            list(inventory),
            principal,
            action,
            resource,
            context_text,
            policies=policies_path,
            principals=principals_path,
        )
        emit(report, fmt)
        return report.exit_code

    sys.exit(guard(body, "nothing is authorized"))


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
