"""--principal-from: whom a Kubernetes or Slurm job acts as, for `place` and `verify --jobs`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from verifier.sources.jobs.principal_rules import PrincipalRule

    _RuleBase = click.ParamType[PrincipalRule]
else:  # click before 8.4 has no subscriptable ParamType; pyproject allows click 8.1
    _RuleBase = click.ParamType


class PrincipalRuleType(_RuleBase):
    """A rule such as `namespace=Team` (verifier/sources/jobs/principal_rules.py)."""

    name = "RULE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> PrincipalRule:
        # Imported when a rule is given: the jobs package is 10-15 ms of every `verify` without --jobs.
        from verifier.sources.jobs.principal_rules import PrincipalRule, RuleError, parse_rule

        if isinstance(value, PrincipalRule):
            return value
        try:
            return parse_rule(str(value))
        except RuleError as err:
            self.fail(str(err), param, ctx)


PRINCIPAL_FROM_OPTION = click.option(
    "--principal-from",
    "principal_from",
    type=PrincipalRuleType(),
    multiple=True,
    help="Whom a Kubernetes or Slurm job acts as, tried in order (repeatable): namespace, service-account, "
    "queue, label:KEY, annotation:KEY, account, partition, each optionally =Team, =User or =ServiceAccount "
    "(e.g. --principal-from namespace=Team --principal-from account=Team). A job no rule names a principal "
    "for is refused. Also `principal-from: [namespace=Team]` in .topolog.yaml.",
)
