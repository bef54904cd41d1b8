"""`topolog repl`: as a user types it at a terminal (a pseudo-terminal), piped, and its Session."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main
from verifier.cli.repl import LoadFailed, Quit, Session, answer_line
from verifier.core.errors import TopologError
from verifier.core.limits import current_limits, use_limits
from verifier.engine.answers import QueryResult
from verifier.reports.query_report import render_table, table_chunks
from verifier.session.background import start_evaluation
from verifier.session.session import load_rules, open_evaluation

ROOT = Path(__file__).resolve().parents[2]
POD = "inventories/dgx-h100-pod.yaml"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


class Terminal:
    """A child process on a pseudo-terminal, read with timeouts (what pexpect does, in the stdlib)."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 250, 0, 0))
        self.proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=ROOT, start_new_session=True
        )
        os.close(slave)
        self.seen = ""
        self.pos = 0

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def expect(self, pattern: str, timeout: float = 15.0) -> str:
        """Wait until `pattern` (a regex) appears after what earlier expects consumed; return the text up to it."""
        deadline = time.monotonic() + timeout
        while True:
            found = re.search(pattern, self.seen[self.pos :])
            if found:
                text = self.seen[self.pos : self.pos + found.end()]
                self.pos += found.end()
                return text
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{pattern!r} not seen within {timeout} s; the terminal shows:\n{self.seen}")
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"{pattern!r} not seen before the end; the terminal shows:\n{self.seen}")
                self.seen += ANSI.sub("", chunk.decode(errors="replace"))

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=15)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            os.close(self.master)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV"))}
    env.update(TERM="dumb", INPUTRC="/dev/null", TOPOLOG_HISTORY=str(tmp_path / "history"), PYTHONUTF8="1")
    term = Terminal([sys.executable, "-m", "verifier.cli.main", "repl", POD], env)
    try:
        yield term
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
            term.proc.wait()


def test_repl_session_at_a_terminal(terminal: Terminal, tmp_path: Path) -> None:
    t = terminal
    t.expect(r"topolog> ")
    t.send('parent(X, "rack0")\r')
    answer = t.expect(r"\(4 rows\)")
    assert answer.index("dgx00") < answer.index("dgx03")

    # TAB completes a partial relation name (with its parenthesis); the completed text is echoed.
    t.expect("topolog> ")
    t.send("nvlink_dom\t")
    t.expect(r"nvlink_domain\(")
    t.send('G, D), G = "dgx00/gpu3"\r')
    assert re.search(r"dgx00/gpu3\s+dgx00/gpu0", t.expect(r"\(1 row\)"))

    t.expect("topolog> ")
    t.send(".relations\r")
    listing = t.expect(r"\(\d+ relations: \d+ input, \d+ derived\)")
    assert re.search(r"link/5\s+input\s+One declared link", listing)
    assert re.search(r"within/2\s+derived", listing)

    # Commands complete too: `.sch<TAB>` becomes `.schema `.
    t.expect("topolog> ")
    t.send(".sch\t")
    t.expect(r"\.schema ")
    t.send("link\r")
    schema = t.expect(r"# facts from the inventory")
    assert ".input link(" in schema and re.search(r"mbps: number,\s+# bandwidth", schema)

    t.expect("topolog> ")
    t.send('.explain within("dgx00/gpu0", "pod0")\r')
    proof = t.expect(r'parent\("rack0", "pod0"\)  \[input at inventories/dgx-h100-pod\.yaml:\d+:\d+\]')
    assert re.search(r'parent\("dgx00/gpu0", "dgx00"\)  \[input at inventories/dgx-h100-pod\.yaml:\d+', proof)

    # A mistake prints an error, not a traceback, and the session goes on.
    t.expect("topolog> ")
    t.send("linc(A, B)\r")
    t.expect(r"error: <query>:1:1: relation 'linc' is not declared \(did you mean 'link'\?\)")
    t.expect("topolog> ")
    t.send('object("dgx00", K)\r')
    assert "node" in t.expect(r"\(1 row\)")

    t.expect("topolog> ")
    t.send(".quit\r")
    assert t.close() == 0
    assert "Traceback" not in t.seen
    history = (tmp_path / "history").read_text()
    assert 'parent(X, "rack0")' in history and ".quit" in history


def _repl(stdin: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--quiet", "repl", POD], input=stdin)  # no progress line in stderr
    return result.exit_code, result.stdout, result.stderr


def test_piped_one_answer_per_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = _repl('parent(X, "rack0")\n\n# a comment\nobject("dgx00", K)\n.format json\nparent("dgx00", R)\n')
    assert (code, err) == (0, "")
    assert "topolog>" not in out  # no prompt when stdin is not a terminal
    assert out.count("(4 rows)") == 1 and out.count("(1 row)") == 1
    assert json.loads(out[out.index("{") :]) == {"columns": ["R"], "count": 1, "rows": [["rack0"]]}


def test_piped_errors_continue_and_exit_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = _repl('object(X,\n.schema lnk\n.nope\nobject("dgx00", K)\n.quit\nobject(X, K)\n')
    assert code == 2
    assert out.count("(1 row)") == 1 and "(" not in out.split("(1 row)")[1]  # nothing after .quit
    lines = err.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("error: <query>:1:") and "syntax error" in lines[0]
    assert lines[1] == "error: <command>:1:1: no relation 'lnk' (did you mean 'link'?); .relations lists them"
    assert lines[2].startswith("error: <command>:1:1: unknown command .nope")


@pytest.fixture(scope="module")
def session() -> Session:
    old = Path.cwd()
    os.chdir(ROOT)
    try:
        program = load_rules()
        inputs = {d.name for d in program.declarations if d.is_input}
        return Session(open_evaluation([Path(POD)], program, also_read=inputs))
    finally:
        os.chdir(old)


def test_completion(session: Session) -> None:
    assert session.complete("nvlink_dom", 0, "nvlink_dom") == ["nvlink_domain("]
    # Every relation that starts so: `state` (an input) and `stated_width_or_generation` (PCIE002's).
    assert session.complete("link(L, A, B, K, M), !stat", 22, "stat") == ["state(", "stated_width_or_generation("]
    assert session.complete(".s", 0, ".s") == [".schema "]
    assert "link_attr" in session.complete(".schema lin", 8, "lin")
    assert session.complete("zzz", 0, "zzz") == []


def test_relations_sorted_with_arity_kind_and_doc(session: Session) -> None:
    lines = session.execute(".relations").splitlines()
    names = [line.split()[0] for line in lines[1:-1]]
    assert names == sorted(names) and len(names) == len(session.model.program.relations)
    assert {line.split()[1] for line in lines[1:-1]} == {"input", "derived"}


def test_schema_of_derived_relation_names_its_rules(session: Session) -> None:
    text = session.execute(".schema within")
    assert ".decl within(" in text
    rules = "rules/topology/lib/containment.dl:5:1, rules/topology/lib/containment.dl:6:1"
    assert f"# derived by 2 rules: {rules}" in text


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (".schema", "usage: .schema NAME"),
        (".explain", "usage: .explain"),
        (".timer maybe", "usage: .timer"),
        ('.explain within("dgx00/gpu0", "rack1")', "does not hold"),
        ("link(A)", "5 arguments"),
    ],
)
def test_errors_are_topolog_errors(session: Session, line: str, fragment: str) -> None:
    with pytest.raises(TopologError, match=re.escape(fragment)):
        session.execute(line)


def test_quit_and_timer(session: Session) -> None:
    with pytest.raises(Quit):
        session.execute(".exit")
    assert session.execute(".timer on") == "" and session.timer
    session.execute(".timer off")
    assert "nvlink_domain" not in session.execute(".help") and ".explain FACT|FINDING" in session.execute(".help")


def test_the_session_builds_the_query_parser_before_the_first_query(tmp_path: Path) -> None:
    # A program read back from the cache needs no parser: without the session building it, the
    # first query would import lark and build its tables (0.05-0.08 s) while the user waits,
    # and then the modules that check the query and print its answer.
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from verifier.cli.repl import Session\n"
        "from verifier.session.session import load_rules, open_evaluation\n"
        "from verifier.engine import parser\n"
        f"model = open_evaluation([Path({POD!r})], load_rules()).__enter__()\n"
        "wanted = ('verifier.engine.checks', 'verifier.reports.query_report')\n"
        "before = parser._fast_parser.cache_info().currsize, *(m in sys.modules for m in wanted)\n"
        "Session(model)\n"
        "print(*before, parser._fast_parser.cache_info().currsize, *(m in sys.modules for m in wanted))\n"
    )
    env = {**os.environ, "TOPOLOG_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True)  # fills the cache
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    # Before: no parser, neither the query checker nor the answers' formats; after: all three.
    assert result.stdout.split() == ["0", "False", "False", "1", "True", "True"]


def test_the_repl_collects_what_queries_leave_but_never_walks_the_loaded_model() -> None:
    code = (
        "import gc\n"
        "from verifier.cli.repl import collect_what_queries_leave\n"
        "gc.disable()\n"
        "model = [[i] for i in range(10_000)]  # stands for the loaded model: lists the collector tracks\n"
        "collect_what_queries_leave()\n"
        "print(gc.isenabled(), gc.get_freeze_count() >= 10_000)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "True"]


def test_a_session_still_evaluating_answers_as_a_loaded_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # `topolog repl` at a terminal: the prompt once the inventory is read, the rules evaluated on a thread.
    monkeypatch.chdir(ROOT)
    program = load_rules()
    inputs = {d.name for d in program.declarations if d.is_input}
    session = Session(start_evaluation([Path(POD)], program, also_read=inputs))
    try:
        # What needs no evaluation comes from the program and the inventory: the pod's 2 racks of 4
        # DGX H100 (8 nodes) are objects whatever the rules are doing.
        assert "within/2" in session.execute(".relations")
        assert ".decl within(" in session.execute(".schema within")
        assert {"dgx00", "dgx07"} <= set(session.inventory.objects)
        # A query is answered whether the evaluation has ended or not (before, from the rules it depends
        # on: tests/session/test_early_answers.py). rack0 holds dgx00..dgx03 (`name: dgx{seq:02d}`,
        # count 4, the first of the 2 racks); within/2 is derived, parent/2 is input: dgx00/gpu0 is
        # within its node, its rack and the pod (3 rows).
        out, err = io.StringIO(), io.StringIO()
        assert answer_line(session, 'within("dgx00/gpu0", R)', out, err)
        assert err.getvalue() == ""
        # The column is as wide as its widest value (5 characters: dgx00, rack0).
        assert out.getvalue().splitlines() == ["R", "-----", "dgx00", "pod0", "rack0", "(3 rows)"]
        assert session.model is not None and session.loaded  # .explain and the rest wait for it
        assert session.execute('parent(X, "rack0")').splitlines()[2:6] == ["dgx00", "dgx01", "dgx02", "dgx03"]
    finally:
        session.close()


def test_an_evaluation_that_fails_on_its_thread_ends_the_session(monkeypatch: pytest.MonkeyPatch) -> None:
    # The limits in force are a context variable: the thread must see these (10 derived tuples, when
    # within/2 alone derives 3 per GPU of the pod's 64), not the defaults, and fail closed.
    monkeypatch.chdir(ROOT)
    program = load_rules()
    with use_limits(replace(current_limits(), derived_tuples=10)):
        session = Session(start_evaluation([Path(POD)], program))
        assert session.execute(".help").startswith("Type a query body")  # no answer waits for the model
        # A derived relation: were the evaluation still running, the slice of rules within/2 depends on
        # meets the same limit (here, as at the CLI, in force for the whole session), and the answer
        # waits for the whole evaluation, whose error (seen only if the thread had these limits) it is.
        with pytest.raises(LoadFailed) as failed:
            answer_line(session, 'within("dgx00/gpu0", R)', io.StringIO(), io.StringIO())
    assert isinstance(failed.value.error, TopologError)
    assert "derived_tuples" in str(failed.value.error)
    session.close()  # nothing to close: no engine outlives a failed evaluation


def test_a_table_is_written_in_pieces_that_join_to_the_whole() -> None:
    # 5 rows, 2 per piece: the header and its rule, then rows 1-2, 3-4 and 5, then the count.
    result = QueryResult(("G", "N"), [("a", 1), ("bb", 22), ("c", 3), ("d", 4), ("e", 5)])
    pieces = list(table_chunks(result, rows_per_chunk=2))
    assert pieces == ["G   N\n--  --\n", "a   1\nbb  22\n", "c   3\nd   4\n", "e   5\n", "(5 rows)\n"]
    assert "".join(pieces) == render_table(result)
    assert list(table_chunks(QueryResult(("G",), []))) == ["G\n-\n", "(0 rows)\n"]
    assert list(table_chunks(QueryResult((), [()]))) == ["true\n"]


def test_column_widths_measured_in_bulk_are_those_of_the_values_as_text() -> None:
    # N: -100 is 4 characters, wider than 7 (1): a numeric column's width comes from both extremes.
    # M mixes a symbol and a number (width 3: "abc"); B holds a bool, written as str() writes it
    # ("True", 4 characters), not as a format of the number 1.
    result = QueryResult(("N", "M", "B"), [(-100, "abc", True), (7, 12, "x")])
    assert render_table(result).splitlines() == [
        "N     M    B",
        "----  ---  ----",
        "-100  abc  True",
        "7     12   x",
        "(2 rows)",
    ]
    # Values are written as they are, never read as formats: "%s" and "{0}" (3 characters, wider
    # than the name V) print themselves; the one-column rows are tuples of one value each.
    assert render_table(QueryResult(("V",), [("%s",), ("{0}",)])).splitlines() == ["V", "---", "%s", "{0}", "(2 rows)"]


def test_at_a_terminal_a_failed_evaluation_is_the_first_answer_and_exit_2(tmp_path: Path) -> None:
    # The pod derives far more than 10 tuples (within/2 alone: 3 ancestors for each of its 64 GPUs).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV"))}
    env.update(TERM="dumb", INPUTRC="/dev/null", TOPOLOG_HISTORY=str(tmp_path / "history"), PYTHONUTF8="1")
    argv = [sys.executable, "-m", "verifier.cli.main", "--input-limit", "derived_tuples=10", "repl", POD]
    t = Terminal(argv, env)
    try:
        t.expect("topolog> ")  # the inventory itself is fine: the prompt comes
        t.send('within("dgx00/gpu0", R)\r')  # its slice of rules meets the limit too: it waits for the error
        t.expect(r"over the limit derived_tuples = 10")
        assert t.close() == 2
        assert "Traceback" not in t.seen and "(3 rows)" not in t.seen
    finally:
        if t.proc.poll() is None:
            t.proc.kill()
            t.proc.wait()
