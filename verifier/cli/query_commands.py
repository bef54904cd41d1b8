"""`topolog query`, `topolog explain` and `topolog repl`: questions about one loaded inventory."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.checks.explain import ExplainReport, fact_relation
from verifier.cli.errors import guard
from verifier.cli.options import ENGINE_OPTION, RULES_OPTION, _missing_files, format_option
from verifier.cli.output import emit
from verifier.cli.repl import Session, run_repl
from verifier.core.progress import Progress
from verifier.engine.queries import QueryResult, prepare_query, program_for, query_relations
from verifier.reports import formats_for
from verifier.session.api import explain
from verifier.session.session import load_rules, open_evaluation


@click.command("query")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.argument("query")
@RULES_OPTION
@format_option(formats_for(QueryResult))
@ENGINE_OPTION
def query_cmd(inventory: tuple[Path, ...], query: str, rules: tuple[Path, ...], fmt: str, engine: str) -> None:
    """Answer a Datalog query (a rule body) on an inventory; rows are sorted.

    \b
    Example:
      topolog query inventories/dgx-h100-pod.yaml 'link(L, A, B, "nvlink", M), M < 400000'
    """

    def body() -> None:
        _missing_files([*inventory, *rules])
        program = load_rules(list(rules) or None)
        # A mistyped query is refused before the (possibly large) inventory is loaded.
        parsed = prepare_query(query, program)
        read = query_relations(parsed)
        # Only the rules the query depends on are evaluated (the same rows, less work).
        with (
            Progress() as progress,
            open_evaluation(
                list(inventory), program_for(program, read), engine=engine, also_read=read, progress=progress
            ) as ev,
        ):
            result = QueryResult(parsed.variables, ev.engine.answer(parsed))
        emit(result, fmt)

    guard(body)


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


@click.command("repl")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@RULES_OPTION
@ENGINE_OPTION
def repl_cmd(inventory: tuple[Path, ...], rules: tuple[Path, ...], engine: str) -> None:
    """Load an inventory once and answer queries at a prompt (history, TAB completes relations).

    Type a query body, or .relations, .schema NAME, .explain FACT|FINDING, .timer on|off,
    .help, .quit. With stdin not a terminal, each input line gets one answer and the exit
    status is 2 when some line was in error. History is kept in ~/.topolog_history
    (or $TOPOLOG_HISTORY).

    \b
    Example:
      topolog repl inventories/dgx-h100-pod.yaml
      echo 'nvlink_domain(G, D)' | topolog repl inventories/dgx-h100-pod.yaml
    """

    def body() -> int:
        _missing_files([*inventory, *rules])
        program = load_rules(list(rules) or None)
        inputs_read = {d.name for d in program.declarations if d.is_input}  # any query may read any of them
        with Progress() as progress:
            ev = open_evaluation(list(inventory), program, engine=engine, also_read=inputs_read, progress=progress)
        with ev:
            return run_repl(Session(ev))

    sys.exit(guard(body))
