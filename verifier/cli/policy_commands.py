"""`topolog policy`: questions about the Cedar policies themselves, beyond one request or one audit.

A group of its own (a LazyGroup, like `topolog`), so each subcommand imports only the analysis it runs.
"""

from __future__ import annotations

from typing import ClassVar

import click

from verifier.cli.main import LazyGroup


class PolicyGroup(LazyGroup):
    """The `policy` subcommands, each imported only when it runs (or help lists it)."""

    COMMANDS: ClassVar[dict[str, str]] = {
        "check": "verifier.cli.policy_check_command:check_cmd",
        "compare": "verifier.cli.policy_question_commands:compare_cmd",
        "what": "verifier.cli.policy_question_commands:what_cmd",
        "who": "verifier.cli.policy_question_commands:who_cmd",
    }


@click.group("policy", cls=PolicyGroup)
def policy_cmd() -> None:
    """Analyse the Cedar policies: dead, shadowed, redundant and error-prone policies, who may ever
    do what, and whether two policy sets decide alike.

    Answers cover every class of principal and hardware in the inventory and every context the
    policies can tell apart, and, where the schema-wide analysis covers the policies, every entity
    the schema allows (docs/policy-analysis.md says what each analysis covers).

    \b
    Example:
      topolog policy check inventories/mixed-fleet.yaml --format sarif
      topolog policy who schedule 'Gpu::"mi300x-n0/gpu0"' inventories/mixed-fleet.yaml
      topolog policy what alice inventories/mixed-fleet.yaml
      topolog policy compare ../policies-next inventories/mixed-fleet.yaml
    """
