"""`topolog repl`: one loaded inventory, many questions at a prompt (the loop is verifier.cli.repl)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.cli.errors import guard
from verifier.cli.options import ENGINE_OPTION, RULES_OPTION, _missing_files
from verifier.cli.repl import LoadFailed, Session, ready_to_answer, run_repl
from verifier.core.progress import Progress
from verifier.session.background import start_evaluation
from verifier.session.session import load_rules, open_evaluation


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
        if not sys.stdin.isatty():  # no prompt to show early: every answer waits for the evaluation anyway
            with Progress() as progress:
                # No check is judged: the REPL reports none (`.explain` of a finding derives the finding).
                ev = open_evaluation(
                    list(inventory),
                    program,
                    engine=engine,
                    also_read=inputs_read,
                    progress=progress,
                    judge_checks=False,
                )
            with ev:
                return run_repl(Session(ev))
        # At a terminal the prompt comes once the inventory is read; the rules are evaluated on a
        # thread while the user types (at 4,096 GPUs most of the load). What the first answer needs
        # is made ready first, while this thread has the interpreter to itself.
        ready_to_answer()
        session = Session(start_evaluation(list(inventory), program, engine=engine, also_read=inputs_read))
        try:
            code = run_repl(session)
            session.model  # noqa: B018  (an evaluation that failed after the user left still fails the run)
            return code
        except LoadFailed as failed:
            raise failed.error from None
        finally:
            session.close()

    sys.exit(guard(body))
