"""A query typed on the command line kept parsed on disk: the same AST without the parser, still checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.core import cache
from verifier.core.errors import ProgramError
from verifier.engine import query_cache
from verifier.engine.parser import parse_query
from verifier.engine.queries import prepare_query
from verifier.session.session import load_rules

ROOT = Path(__file__).resolve().parents[2]
TEXT = 'link(L, A, B, "nvlink", M), M < 400000, !state(A, "down")'


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(where))
    return where


def _entries(folder: Path) -> int:
    return len(list(folder.glob(f"{query_cache.KIND}-*")))


def test_a_query_read_back_is_the_parsed_one_places_included(folder: Path) -> None:
    program = load_rules()
    first = prepare_query(TEXT, program, on_disk=True)
    assert _entries(folder) == 1
    again = query_cache.cached_query(query_cache.query_key(TEXT, "<query>"))
    assert again is not None
    assert repr(again) == repr(first) == repr(parse_query(TEXT))  # repr shows every location


def test_a_repeated_query_command_imports_no_parser(folder: Path) -> None:
    code = (
        "import sys\n"
        "from verifier.cli.main import run\n"
        "try:\n"
        f"    run(['query', 'inventories/dgx-h100-pod.yaml', {TEXT!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('lark' in sys.modules)\n"
    )
    env = {**os.environ, cache.ENV_DIR: str(folder)}
    runs = [
        subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        for _ in range(2)
    ]
    assert [r.stdout.splitlines()[-1] for r in runs] == ["True", "False"]
    assert runs[0].stdout.splitlines()[:-1] == runs[1].stdout.splitlines()[:-1]  # the same answer


def test_only_queries_that_parse_are_kept_and_a_kept_one_is_still_checked(folder: Path) -> None:
    program = load_rules()
    for _ in range(2):
        with pytest.raises(ProgramError, match="syntax error"):
            prepare_query("link(L, A", program, on_disk=True)
    assert _entries(folder) == 0
    # It parses (kept), but names no relation of the program: refused on every run.
    for _ in range(2):
        with pytest.raises(ProgramError, match="no_such_relation"):
            prepare_query("no_such_relation(X)", program, on_disk=True)
    assert _entries(folder) == 1
