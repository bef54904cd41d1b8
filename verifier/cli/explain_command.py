"""`topolog explain`: how a fact or a finding follows from the inventory."""

from __future__ import annotations

from pathlib import Path

import click

from verifier.checks.explain import ExplainReport, fact_relation
from verifier.cli.errors import guard
from verifier.cli.options import RULES_OPTION, _missing_files, format_option
from verifier.cli.output import emit
from verifier.core.progress import Progress
from verifier.reports import formats_for
from verifier.session.api import explain
from verifier.session.session import load_rules, open_evaluation


@click.command("explain")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.argument("what", metavar="FACT|FINDING")
@RULES_OPTION
@format_option(formats_for(ExplainReport))
def explain_cmd(inventory: tuple[Path, ...], what: str, rules: tuple[Path, ...], fmt: str) -> None:
    """Show how a fact or a finding follows from the inventory: rules and facts, down to inputs.

    FACT|FINDING is a ground fact, a finding's fingerprint (field `fingerprint` of
    `topolog verify --format json`; a unique prefix of 8 or more hex digits will do), or
    RULE:SUBJECT[,SUBJECT...] (every finding of RULE with those subjects). Every input
    fact of the proof is followed by the inventory file:line:col it came from.

    \b
    Example:
      topolog explain inventories/dgx-h100-pod.yaml 'within("dgx00/gpu0", "pod0")'
      topolog explain inventories/mixed-fleet.yaml BW003:rtx-n0/nic0 --format json
      topolog explain inventories/mixed-fleet.yaml 3f1c9a2b
    """

    def body() -> None:
        _missing_files([*inventory, *rules])
        relation = fact_relation(what)
        program = load_rules(list(rules) or None)
        with (
            Progress() as progress,
            open_evaluation(
                list(inventory), program, also_read={relation} if relation else (), progress=progress
            ) as ev,
        ):
            report = explain(ev, what)
        emit(report, fmt)

    guard(body)
