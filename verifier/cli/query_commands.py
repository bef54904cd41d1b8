"""`topolog query`: one question about one loaded inventory.

`topolog explain` and `topolog repl` have modules of their own (verifier.cli.explain_command,
verifier.cli.repl_command), so that a query imports neither the proof explainer nor the REPL.
"""

from __future__ import annotations

from pathlib import Path

import click

from verifier.cli.errors import guard
from verifier.cli.options import ENGINE_OPTION, RULES_OPTION, _missing_files, format_option
from verifier.cli.output import emit
from verifier.core.progress import Progress
from verifier.engine.queries import QueryResult, prepare_query, program_for, query_relations
from verifier.reports import formats_for
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
        parsed = prepare_query(query, program, on_disk=True)
        read = query_relations(parsed)
        # Only the rules the query depends on are evaluated (the same rows, less work).
        with (
            Progress() as progress,
            open_evaluation(
                list(inventory),
                program_for(program, read),
                engine=engine,
                also_read=read,
                progress=progress,
                judge_checks=False,
            ) as ev,
        ):
            result = QueryResult(parsed.variables, ev.engine.answer(parsed))
        emit(result, fmt)

    guard(body)
