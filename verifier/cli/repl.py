"""`topolog repl`: load an inventory once, then answer queries at a prompt.

A line is a query body (`link(L, A, B, "nvlink", M), M < 400000`) or a dot command
(`.relations`, `.schema NAME`, `.explain FACT|FINDING`, `.format table|json`,
`.timer on|off`, `.help`, `.quit`). A bad line prints its error and the session goes
on: nothing typed here ends in a traceback.

On a terminal the prompt has line editing, history (in $TOPOLOG_HISTORY, else
~/.topolog_history; an empty $TOPOLOG_HISTORY keeps none) and TAB completion of
relation names and dot commands, through the standard library's readline. When stdin
is not a terminal there is no prompt: each line of input gets its answer (blank lines
and lines starting with `#` get none), and the exit status is 2 if some line was in
error, else 0.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

from verifier.core.errors import EngineError, SourceLocation, TopologError
from verifier.core.suggest import closest
from verifier.engine.answers import QueryResult
from verifier.engine.ast import Declaration
from verifier.engine.queries import prepare_query, ready_for_queries
from verifier.reports import render, renderers
from verifier.reports.safe_text import one_line
from verifier.session.background import Loading
from verifier.session.session import Evaluation

PROMPT = "topolog> "
HISTORY_ENV = "TOPOLOG_HISTORY"
DEFAULT_HISTORY = "~/.topolog_history"
HISTORY_LENGTH = 1000
COMMAND_WHERE = SourceLocation("<command>", 1, 1)

HELP = """\
Type a query body; the answer has one row per binding of its variables, sorted:
  link(L, A, B, "nvlink", M), M < 400000
  within(G, "rack0"), object(G, "gpu"), !state(G, "down")
Commands:
  .relations              every relation: arity, input or derived, doc line
  .schema NAME            a relation's declaration with its column docs
  .explain FACT|FINDING   proof of a fact, e.g. .explain within("dgx00/gpu0", "pod0"),
                          or of a finding: a fingerprint or RULE:subject (TOPO004:n1)
  .format table|json      how answers are printed (now: {fmt})
  .timer on|off           print how long each answer took (now: {timer})
  .help                   this text
  .quit                   leave (also .exit or Ctrl-D)
TAB completes relation names and commands; Up/Down walk the history."""

COMMANDS = (".explain", ".exit", ".format", ".help", ".quit", ".relations", ".schema", ".timer")


class Quit(Exception):
    """The user asked to leave."""


class LoadFailed(Exception):
    """The model's evaluation (on its thread) failed: nothing can be answered, the session ends with `error`."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


class Session:
    """One loaded model (or one still evaluating) and the REPL's settings; `execute` answers one line."""

    def __init__(self, model: Evaluation | Loading) -> None:
        self._model = model if isinstance(model, Evaluation) else None
        self._loading = model if isinstance(model, Loading) else None
        self.program = model.program
        self.inventory = model.inventory
        self.fmt = "table"
        self.timer = False
        self.relation_names = sorted(self.program.relations)
        ready_to_answer()  # done already where `topolog repl` starts the evaluation's thread

    @property
    def loaded(self) -> bool:
        """Whether the model is evaluated (or failed): an answer would not wait for it."""
        return self._loading is None or self._loading.done()

    @property
    def model(self) -> Evaluation:
        """The evaluated model, waiting for its evaluation the first time; LoadFailed if that failed."""
        if self._model is None:
            assert self._loading is not None
            try:
                self._model = self._loading.result()
            except Exception as error:
                raise LoadFailed(error) from None
            # Frozen now that it is all there, not at the prompt while it was still being built.
            collect_what_queries_leave()
        return self._model

    def close(self) -> None:
        """Close the model's engine, once its evaluation has ended (a failed one has nothing to close)."""
        try:
            model = self.model
        except LoadFailed:
            return
        model.close()

    def execute(self, line: str) -> str:
        """The answer to one line; raises TopologError / EngineError on bad input, Quit to leave."""
        return "".join(self.answer(line))

    def answer(self, line: str) -> Iterator[str]:
        """`execute`'s text in pieces to write as they come (a table's rows a few hundred at a time).

        Errors are raised before the first piece: a query is answered whole, then formatted.
        """
        text = line.strip()
        if text and not text.startswith((".", "#")):
            from verifier.reports.query_report import table_chunks  # imported by __init__ (renderers)

            result = self._query(text)
            return table_chunks(result) if self.fmt == "table" else iter([render(result, self.fmt)])
        return iter([self._command(text)])

    def _query(self, text: str) -> QueryResult:
        """The answer to a query: while the model is still evaluating, from the rules it depends on
        only (Loading.answer_now), else, or where that cannot be, from the whole model (waiting for it).
        """
        loading = self._loading
        if self._model is None and loading is not None and not loading.done():
            parsed = prepare_query(text, self.program)  # a mistyped query is refused without waiting
            rows = loading.answer_now(parsed)
            if rows is not None:
                return QueryResult(parsed.variables, rows)
        # Not imported at the top: verifier.session.api imports Cedar's request parsing (0.1 s), which a
        # REPL on an inventory without principals never needs, before its prompt or after.
        from verifier.session.api import query

        return query(self.model, text)

    def _command(self, text: str) -> str:
        if not text or text.startswith("#"):
            return ""
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in (".quit", ".exit", ".q"):
            raise Quit
        if name == ".help":
            return HELP.format(fmt=self.fmt, timer="on" if self.timer else "off") + "\n"
        if name == ".relations":
            return self.relations()
        if name == ".schema":
            return self.schema(arg)
        if name == ".explain":
            return self.explain(arg)
        if name == ".format":
            return self._set_format(arg)
        if name == ".timer":
            return self._set_timer(arg)
        raise TopologError.at(COMMAND_WHERE, f"unknown command {name}{_did_you_mean(name, COMMANDS)}; .help lists them")

    def relations(self) -> str:
        decls = sorted(self.program.relations.values(), key=lambda d: d.name)
        cells = [("RELATION", "KIND", "DOC")] + [
            (f"{d.name}/{d.arity}", "input" if d.is_input else "derived", _first_line(d.doc)) for d in decls
        ]
        w0 = max(len(c[0]) for c in cells)
        w1 = max(len(c[1]) for c in cells)
        lines = [f"{a.ljust(w0)}  {b.ljust(w1)}  {c}".rstrip() for a, b, c in cells]
        inputs = sum(1 for d in decls if d.is_input)
        lines.append(f"({len(decls)} relations: {inputs} input, {len(decls) - inputs} derived)")
        return "\n".join(lines) + "\n"

    def schema(self, name: str) -> str:
        if not name:
            raise TopologError.at(COMMAND_WHERE, "usage: .schema NAME (.relations lists the names)")
        decl = self.program.relations.get(name)
        if decl is None:
            hint = _did_you_mean(name, self.relation_names)
            raise TopologError.at(COMMAND_WHERE, f"no relation '{name}'{hint}; .relations lists them")
        return render_declaration(decl, [str(r.loc) for r in self.program.rules if r.head.relation == name])

    def explain(self, what: str) -> str:
        if not what:
            raise TopologError.at(
                COMMAND_WHERE, 'usage: .explain FACT|FINDING, e.g. .explain within("dgx00/gpu0", "pod0")'
            )
        from verifier.session.api import explain  # as `query` (see _query)

        return render(explain(self.model, what), "json" if self.fmt == "json" else "text")

    def _set_format(self, arg: str) -> str:
        if arg not in ("table", "json"):
            raise TopologError.at(COMMAND_WHERE, "usage: .format table|json")
        self.fmt = arg
        return ""

    def _set_timer(self, arg: str) -> str:
        if arg not in ("on", "off"):
            raise TopologError.at(COMMAND_WHERE, "usage: .timer on|off")
        self.timer = arg == "on"
        return ""

    def complete(self, line: str, begidx: int, text: str) -> list[str]:
        """Completions of `text`, the word at `begidx` of `line`: commands, or relation names."""
        head = line[:begidx]
        if not head.strip() and text.startswith("."):
            return [c + " " for c in COMMANDS if c.startswith(text)]
        if head.lstrip().startswith(".schema"):
            return [n for n in self.relation_names if n.startswith(text)]
        return [n + "(" for n in self.relation_names if n.startswith(text)]


def ready_to_answer() -> None:
    """Before the first answer, so that it is as quick as the next: the query parser built and the
    module of the answers' formats imported (0.05-0.07 s at 4,096 GPUs; kept for the process).

    `topolog repl` calls it before it starts the evaluation's thread: beside that thread, which
    holds the interpreter about half the time, the same work took 0.2-0.3 s before the prompt.
    """
    ready_for_queries()
    renderers(QueryResult)


def render_declaration(decl: Declaration, rule_locations: list[str]) -> str:
    """A declaration as it would be written, column docs as trailing comments, then where it is defined."""
    lines = [f"# {line}" for line in decl.doc.splitlines()]
    lines.append(f"{'.input' if decl.is_input else '.decl'} {decl.name}(")
    width = max((len(f"{c.name}: {c.type},") for c in decl.columns), default=0)
    for c in decl.columns:
        col = f"{c.name}: {c.type},"
        lines.append(f"    {col.ljust(width)}  # {c.doc}" if c.doc else f"    {col}")
    lines.append(")")
    lines.append(f"# declared at {decl.loc}")
    if decl.is_input:
        lines.append("# facts from the inventory")
    elif rule_locations:
        lines.append(
            f"# derived by {len(rule_locations)} rule{'s' if len(rule_locations) != 1 else ''}: "
            + ", ".join(rule_locations)
        )
    return "\n".join(lines) + "\n"


def _first_line(doc: str) -> str:
    return doc.strip().splitlines()[0] if doc.strip() else ""


def _did_you_mean(name: str, choices: tuple[str, ...] | list[str]) -> str:
    close = closest(name, choices)
    return f" (did you mean '{close}'?)" if close else ""


def answer_line(session: Session, line: str, out: TextIO, err: TextIO) -> bool:
    """Answer one line on `out`, written piece by piece as it is formatted; errors go to `err` and
    give False. Quit and LoadFailed are passed on.
    """
    start = time.perf_counter()
    answered = False
    try:
        for piece in session.answer(line):
            out.write(piece)
            out.flush()
            answered = answered or bool(piece)
    except (Quit, LoadFailed):
        raise
    except TopologError as error:
        for diag in error.diagnostics:
            err.write(f"error: {one_line(str(diag))}\n")
        err.flush()
        return False
    except EngineError as error:
        err.write(f"error: the query could not be evaluated: {one_line(str(error))}\n")
        err.flush()
        return False
    except KeyboardInterrupt:
        err.write("interrupted\n")
        err.flush()
        return False
    except Exception as error:  # a bug, but the session (and its loaded model) is worth keeping
        err.write(f"internal error (please report it): {type(error).__name__}: {error}\n")
        err.flush()
        return False
    if session.timer and answered:
        out.write(f"({(time.perf_counter() - start) * 1000:.1f} ms)\n")
    out.flush()
    return True


def history_path() -> Path | None:
    value = os.environ.get(HISTORY_ENV)
    if value is None:
        return Path(DEFAULT_HISTORY).expanduser()
    return Path(value).expanduser() if value else None


def collect_what_queries_leave() -> None:
    """The collector on for the session, which can go on for hours, but blind to the loaded model.

    What is alive now (the model, for the whole session) is frozen: a full collection would
    otherwise walk all of it in the middle of some answer (5-10 ms at 4,096 GPUs). What the
    queries leave behind is still collected.
    """
    gc.freeze()
    gc.enable()


def run_repl(
    session: Session, stdin: TextIO | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Interactive on a terminal, else one answer per input line. Returns the exit status.

    LoadFailed (a model evaluated on a thread that failed) ends the session: nothing can be answered.
    """
    if session.loaded:  # else when the model arrives (Session.model)
        collect_what_queries_leave()
    stdin = stdin if stdin is not None else sys.stdin
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    if stdin.isatty() and stdin is sys.stdin:
        return _interactive(session, out, err)
    failed = False
    for line in stdin:
        try:
            failed |= not answer_line(session, line, out, err)
        except Quit:
            break
    return 2 if failed else 0


def _interactive(session: Session, out: TextIO, err: TextIO) -> int:
    restore = _setup_readline(session)
    inventory = session.inventory
    err.write(
        f"topolog: {len(inventory.objects)} objects, {len(inventory.links)} links, "
        f"{len(session.relation_names)} relations loaded. .help for help, TAB completes, .quit to leave.\n"
    )
    if not session.loaded:
        err.write(
            "topolog: the rules are still being evaluated; until they are, a query is answered from the rules "
            "it depends on (.explain and queries of authorization decisions wait for all of them).\n"
        )
    try:
        while True:
            try:
                line = input(PROMPT)
            except EOFError:
                out.write("\n")
                return 0
            except KeyboardInterrupt:
                out.write("\n")
                continue
            try:
                answer_line(session, line, out, err)
            except Quit:
                return 0
    finally:
        restore()


def _setup_readline(session: Session) -> Callable[[], None]:
    """Completion and history through readline; returns what saves the history at the end."""
    try:
        import readline
    except ImportError:  # pragma: no cover (Windows without pyreadline)
        return lambda: None
    matches: list[str] = []

    def completer(text: str, state: int) -> str | None:
        if state == 0:
            matches[:] = session.complete(readline.get_line_buffer(), readline.get_begidx(), text)
        return matches[state] if state < len(matches) else None

    readline.set_completer(completer)
    readline.set_completer_delims(" \t\n(),!=<>+-*/%\"'")
    if "libedit" in (readline.__doc__ or ""):  # pragma: no cover (macOS system Python)
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    path = history_path()
    readline.set_history_length(HISTORY_LENGTH)
    if path is not None and path.is_file():
        with contextlib.suppress(OSError):
            readline.read_history_file(path)

    def save() -> None:
        if path is not None:
            try:
                readline.write_history_file(path)
            except OSError as error:
                sys.stderr.write(one_line(f"topolog: history not saved to {path}: {error.strerror or error}") + "\n")

    return save
