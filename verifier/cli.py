"""The `topolog` command: a thin click layer over verify, query, explain and rules.

Exit codes never change meaning: 0 no finding at or above --fail-on, 1 findings,
2 bad input or usage (every problem printed as file:line: message).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import click

from verifier import __version__
from verifier.datalog.ast import Atom, Const
from verifier.datalog.backend import BACKENDS, format_fact
from verifier.datalog.checks import check_query
from verifier.datalog.parser import parse_query
from verifier.errors import EngineError, ProgramError, SourceLocation, TopologError
from verifier.findings import SEVERITIES
from verifier.progress import Progress

T = TypeVar("T")

ENGINE_OPTION = click.option(
    "--engine",
    type=click.Choice(BACKENDS),
    default="duckdb",
    show_default=True,
    help="Evaluation engine: duckdb (fast) or pydatalog (reference semantics).",
)
RULES_OPTION = click.option(
    "--rules",
    "rules",
    type=click.Path(path_type=Path),
    multiple=True,
    help="Rule file or directory (repeatable). Default: the rules/ shipped with topolog.",
)


def _guard(action: Callable[[], T]) -> T:
    """Run a command body; bad input becomes exit 2 with every problem listed, never a traceback."""
    try:
        return action()
    except TopologError as err:
        for diag in err.diagnostics:
            click.echo(f"error: {diag}", err=True)
        sys.exit(2)
    except EngineError as err:
        click.echo(f"error: the rules could not be evaluated, so nothing is verified: {err}", err=True)
        sys.exit(2)


def _missing_files(paths: Sequence[Path]) -> None:
    missing = [p for p in paths if not p.exists()]
    if missing:
        raise TopologError.at(SourceLocation(str(missing[0])), "no such file or directory")


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="topolog")
def main() -> None:
    """Verify AI infrastructure topology before it is used.

    \b
    Example:
      topolog verify inventories/dgx-h100-pod.yaml
    """


@main.command()
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@RULES_OPTION
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
    help="Report format on stdout.",
)
@click.option(
    "--fail-on", type=click.Choice(SEVERITIES), default="error", show_default=True,
    help="Exit 1 when a finding is at least this severe.",
)
@click.option("--proofs/--no-proofs", default=None, help="Attach a derivation to each finding (default: json only).")
@ENGINE_OPTION
def verify(
    inventory: tuple[Path, ...], rules: tuple[Path, ...], fmt: str, fail_on: str, proofs: bool | None,
    engine: str,
) -> None:
    """Run every check on an inventory and report the findings.

    Exit status: 0 no finding at or above --fail-on, 1 findings, 2 bad input.

    \b
    Example:
      topolog verify inventories/dgx-h100-pod.yaml --format json --fail-on warning
    """
    from verifier.output import render
    from verifier.verify import verify as run_verify

    def body() -> int:
        _missing_files([*inventory, *rules])
        with Progress() as progress:
            report = run_verify(
                list(inventory),
                list(rules) or None,
                engine=engine,
                fail_on=fail_on,  # type: ignore[arg-type]
                with_proofs=proofs if proofs is not None else fmt == "json",
                progress=progress,
            )
        click.echo(render(report, fmt), nl=False)
        return report.exit_code

    sys.exit(_guard(body))


@main.command()
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.argument("query")
@RULES_OPTION
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@ENGINE_OPTION
def query(inventory: tuple[Path, ...], query: str, rules: tuple[Path, ...], fmt: str, engine: str) -> None:
    """Answer a Datalog query (a rule body) on an inventory; rows are sorted.

    \b
    Example:
      topolog query inventories/dgx-h100-pod.yaml 'link(L, A, B, "nvlink", M), M < 400000'
    """
    from verifier.model import load_model, load_rules
    from verifier.query_output import render_rows

    def body() -> None:
        _missing_files([*inventory, *rules])
        parsed = parse_query(query)
        # A mistyped query is refused before the (possibly large) inventory is loaded.
        program = load_rules(list(rules) or None)
        check_query(parsed, program)
        with Progress() as progress:
            model = load_model(list(inventory), None, engine, progress, program=program)
        try:
            rows = model.engine.answer(parsed)
        finally:
            model.engine.close()
        click.echo(render_rows(parsed.variables, rows, fmt), nl=False)

    _guard(body)


@main.command()
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.argument("fact")
@RULES_OPTION
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def explain(inventory: tuple[Path, ...], fact: str, rules: tuple[Path, ...], fmt: str) -> None:
    """Show how a derived fact follows from the inventory: rules and facts, down to inputs.

    \b
    Example:
      topolog explain inventories/dgx-h100-pod.yaml 'within("dgx00/gpu0", "pod0")'
    """
    import json

    from verifier.model import load_model

    def body() -> None:
        _missing_files([*inventory, *rules])
        relation, row = _parse_fact(fact)
        with Progress() as progress:
            model = load_model(list(inventory), list(rules) or None, "duckdb", progress)
        try:
            decl = model.program.relations.get(relation)
            if decl is None or decl.arity != len(row):
                check_query(parse_query(fact), model.program)
            try:
                proof = model.engine.explain(relation, row)
            except KeyError:
                raise TopologError.at(
                    SourceLocation("<fact>", 1, 1), f"{format_fact(relation, row)} does not hold"
                ) from None
        finally:
            model.engine.close()
        if fmt == "json":
            click.echo(json.dumps(proof.to_dict(), indent=2, sort_keys=True))
        else:
            click.echo(proof.render())

    _guard(body)


def _parse_fact(text: str) -> tuple[str, tuple[str | int, ...]]:
    parsed = parse_query(text, "<fact>")
    lit = parsed.body[0] if len(parsed.body) == 1 else None
    if not isinstance(lit, Atom) or not all(isinstance(a, Const) for a in lit.args):
        raise ProgramError.at(
            SourceLocation("<fact>", 1, 1), 'expected one ground fact such as within("n1/gpu0", "rack-a")'
        )
    return lit.relation, tuple(a.value for a in lit.args if isinstance(a, Const))


@main.command("rules")
@RULES_OPTION
def rules_cmd(rules: tuple[Path, ...]) -> None:
    """Print the documentation of every check, generated from its metadata (Markdown).

    \b
    Example:
      topolog rules > docs/rules.md
    """
    from verifier.checks import checks_from_program
    from verifier.model import load_rules
    from verifier.rule_docs import render_rule_docs

    def body() -> None:
        _missing_files(list(rules))
        program = load_rules(list(rules) or None)
        click.echo(render_rule_docs(checks_from_program(program)), nl=False)

    _guard(body)


if __name__ == "__main__":  # pragma: no cover
    main()
