"""`topolog rules` (the checks' documentation) and `topolog test` (a user's rule tests)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.checks.check import CheckCatalog, checks_from_program
from verifier.cli.errors import guard
from verifier.cli.options import (
    CHECK_OPTIONS,
    ENGINE_OPTION,
    RULES_OPTION,
    _missing_files,
    _rules_options,
    _selection,
    format_option,
)
from verifier.cli.output import emit
from verifier.core.resources import shipped_rules_dir
from verifier.reports import formats_for
from verifier.reports.safe_text import one_line
from verifier.session.rule_tests import RuleTestReport, run_rule_tests
from verifier.session.session import load_rules


@click.command("rules")
@RULES_OPTION
@CHECK_OPTIONS
@click.option(
    "--path",
    "print_path",
    is_flag=True,
    help="Print the folder of the rule pack shipped with topolog (schema.dl is in it) and exit.",
)
@format_option(formats_for(CheckCatalog))
def rules_cmd(
    rules: tuple[Path, ...], check_ids: tuple[str, ...], skip_ids: tuple[str, ...], print_path: bool, fmt: str
) -> None:
    """Print the documentation of every check, generated from its metadata (Markdown or JSON).

    Your own --rules are documented with the shipped checks (see docs/custom-rules.md).

    \b
    Example:
      topolog rules > docs/rules.md
      topolog rules --rules site-rules/ --check SITE001
      topolog rules --format json
      topolog rules --path
    """

    def body() -> None:
        if print_path:
            click.echo(str(shipped_rules_dir()))
            return
        _missing_files(list(rules))
        selection = _selection(rules, check_ids, skip_ids)
        checks = [c for c in checks_from_program(load_rules(list(rules))) if selection.reports(c.id)]
        emit(CheckCatalog(checks), fmt)

    guard(body)


@click.command("test")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@_rules_options("More rule files or directories your checks read (repeatable), loaded before DIR's.", needed=False)
@CHECK_OPTIONS
@format_option(formats_for(RuleTestReport))
@ENGINE_OPTION
def test_cmd(
    directory: Path,
    rules: tuple[Path, ...],
    check_ids: tuple[str, ...],
    skip_ids: tuple[str, ...],
    fmt: str,
    engine: str,
) -> None:
    """Run your rule tests: DIR's *.dl checks against the inventories in DIR/fixtures/<CHECK_ID>/.

    pass*.yaml must give no finding of the check; fail*.yaml exactly the findings listed in
    expected*.txt beside it (one `subject, subject | message` per line). The shipped rules
    are loaded too, so your checks may read their relations. A folder's jobs.yaml is judged
    with authorization only where the folder has a principals.yml. Exit status: 0 every
    case passes, 1 some case fails (the missing and unexpected findings are shown), 2 bad
    input. The layout is in docs/custom-rules.md.

    \b
    Example:
      topolog test site-rules/
      topolog test site-rules/ --check SITE001 --engine pydatalog
    """

    def body() -> int:
        _missing_files([directory, *rules])
        report = run_rule_tests(directory, rules, engine, check_ids, skip_ids)
        for line in report.warnings:
            click.echo(f"warning: {one_line(line)}", err=True)
        emit(report, fmt)
        for outcome in report.outcomes:
            for error in outcome.errors:
                click.echo(f"error: {one_line(str(error))}", err=True)
        return report.exit_code

    sys.exit(guard(body))
