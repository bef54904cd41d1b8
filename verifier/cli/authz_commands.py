"""The `topolog authorize` and `topolog audit` commands.

Exit codes keep their meaning: `authorize` exits 0 on Allow, 1 on Deny (like a failed
check; an evaluation error is a Deny and is printed as a finding), 2 on bad input (unknown
principal or resource, invalid policy, bad context). `audit` exits 0, or 1 when some
policy failed during the audit (those requests were denied), or with `--fail-on-change`
when a decision changed; 2 on bad input. Neither evaluates a rule: the entities are built
from the inventory. `audit` lives in verifier.cli.audit_command, so that deciding one request
imports none of the audit's class partitioning or its report.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.authorization.evaluate import ACTIONS
from verifier.authorization.requests import AuthorizeReport
from verifier.cli.errors import guard
from verifier.cli.options import _missing_files, format_option, side_file_options
from verifier.cli.output import emit
from verifier.reports import formats_for
from verifier.session.api import authorize


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
