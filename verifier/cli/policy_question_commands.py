"""`topolog policy who|what|compare`: questions about the policies, answered for the inventory.

Exit codes: `who` and `what` exit 0, or 1 when a policy failed on some request (that request was
denied, fail closed, and is listed); `compare` exits 0 when the policy sets are equivalent, 1 when
they differ (the first differing requests are listed); all exit 2 on bad input, and `compare` on a
policy set outside what the schema-wide analysis covers (its message says which construct).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.authorization.analysis.equivalence import CompareResult, compare, with_policies
from verifier.authorization.analysis.questions import Context, WhatResult, WhoResult, what, who
from verifier.authorization.entities import PRINCIPAL_TYPES, RESOURCE_TYPES
from verifier.authorization.evaluate import ACTIONS, parse_context
from verifier.authorization.requests import resolve
from verifier.authorization.setup import AuthzSetup
from verifier.cli.errors import guard
from verifier.cli.options import _missing_files, format_option, side_file_options
from verifier.cli.output import emit
from verifier.core.errors import SourceLocation, TopologError
from verifier.reports import formats_for
from verifier.session.api import load_authorization

CONTEXT_OPTION = click.option(
    "--context",
    "context_text",
    default=None,
    help='Ask in this request context only (JSON, e.g. {"incident": true}). Default: every context the '
    "policies can tell apart.",
)


def _context(text: str | None) -> Context | None:
    if text is None:
        return None
    try:
        return parse_context(text)
    except ValueError as err:
        raise TopologError.at(SourceLocation("--context"), str(err)) from None


def _resolve(setup: AuthzSetup, text: str, role: str) -> str:
    """`resolve` as `authorize` does it, the problem named after the argument given here."""
    try:
        found = resolve(setup, text, role)
    except TopologError as err:
        message = err.diagnostics[0].message.removeprefix(f"--{role} ")
        raise TopologError.at(SourceLocation(role.upper()), message) from None
    types = PRINCIPAL_TYPES if role == "principal" else RESOURCE_TYPES
    if found.split("::", 1)[0] not in types:  # a uid of the other side: no request could name it here
        raise TopologError.at(
            SourceLocation(role.upper()), f"{text} is not a {role}; expected one of the types {', '.join(types)}"
        )
    return found


@click.command("who")
@click.argument("action", type=click.Choice(ACTIONS))
@click.argument("resource")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@side_file_options()
@CONTEXT_OPTION
@format_option(formats_for(WhoResult))
def who_cmd(
    action: str,
    resource: str,
    inventory: tuple[Path, ...],
    principals_path: Path | None,
    policies_path: Path | None,
    context_text: str | None,
    fmt: str,
) -> None:
    """Who may ever do ACTION on RESOURCE: every principal and team, with the permits that allow it.

    RESOURCE is a uid (Gpu::"dgx00/gpu0") or a bare inventory id. "Ever" is in some context the
    policies can tell apart; each principal is shown with the contexts it is allowed in. A request
    on which a policy fails is denied (fail closed), listed, and makes the exit status 1.

    \b
    Example:
      topolog policy who schedule mi300x-n0/gpu0 inventories/mixed-fleet.yaml
      topolog policy who drain 'Node::"rtx-n0"' inventories/mixed-fleet.yaml --format json
    """

    def body() -> int:
        _missing_files([*inventory, *(x for x in (policies_path, principals_path) if x)])
        context = _context(context_text)
        setup = load_authorization(list(inventory), policies_path, principals_path)
        result = who(setup, action, _resolve(setup, resource, "resource"), context)
        emit(result, fmt)
        return result.exit_code

    sys.exit(guard(body, "nothing is authorized"))


@click.command("what")
@click.argument("principal")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@side_file_options()
@click.option(
    "--action",
    "actions",
    type=click.Choice(ACTIONS),
    multiple=True,
    help="Ask about these actions only (repeatable). Default: all.",
)
@click.option(
    "--resource-type",
    type=click.Choice(RESOURCE_TYPES),
    default="Gpu",
    show_default=True,
    help="Resources asked about; grouped by rack (else node, pod) with the GPUs they hold.",
)
@CONTEXT_OPTION
@format_option(formats_for(WhatResult))
def what_cmd(
    principal: str,
    inventory: tuple[Path, ...],
    principals_path: Path | None,
    policies_path: Path | None,
    actions: tuple[str, ...],
    resource_type: str,
    context_text: str | None,
    fmt: str,
) -> None:
    """What may PRINCIPAL ever do: each action, the hardware groups and GPU counts, with the permits.

    PRINCIPAL is an id of the principals file (users, teams, service accounts) or a uid
    (Team::"hpc"). Hardware is grouped as `topolog audit` groups it: a GPU's rack, else its node.

    \b
    Example:
      topolog policy what alice inventories/mixed-fleet.yaml
      topolog policy what olga inventories/mixed-fleet.yaml --action drain --resource-type Node
    """

    def body() -> int:
        _missing_files([*inventory, *(x for x in (policies_path, principals_path) if x)])
        context = _context(context_text)
        setup = load_authorization(list(inventory), policies_path, principals_path)
        who_asks = _resolve(setup, principal, "principal")
        result = what(setup, who_asks, list(actions or ACTIONS), resource_type, context)
        emit(result, fmt)
        return result.exit_code

    sys.exit(guard(body, "nothing is authorized"))


@click.command("compare")
@click.argument("other", type=click.Path(path_type=Path, file_okay=False))
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@side_file_options()
@click.option(
    "--schema-wide/--inventory-only",
    default=True,
    show_default=True,
    help="After the inventory's principals and hardware, compare for every entity the schema allows (SMT).",
)
@format_option(formats_for(CompareResult))
def compare_cmd(
    other: Path,
    inventory: tuple[Path, ...],
    principals_path: Path | None,
    policies_path: Path | None,
    schema_wide: bool,
    fmt: str,
) -> None:
    """Do the policies and OTHER (a policy directory) decide every request alike? If not, show where.

    First for every principal, resource, action and context of the inventory (complete for it),
    then for every entity the schema allows; the report says which analysis answered what.
    Exit status: 0 equivalent, 1 different (with counterexample requests), 2 bad input or a policy
    set outside what the schema-wide analysis covers.

    \b
    Example:
      topolog policy compare ../policies-next inventories/mixed-fleet.yaml
      topolog policy compare ../policies-next inventories/mixed-fleet.yaml --inventory-only --format json
    """

    def body() -> int:
        _missing_files([other, *inventory, *(x for x in (policies_path, principals_path) if x)])
        first = load_authorization(list(inventory), policies_path, principals_path)
        second = with_policies(first, other)
        result = compare(first, second, schema_wide)
        emit(result, fmt)
        return result.exit_code

    sys.exit(guard(body, "nothing is compared"))
