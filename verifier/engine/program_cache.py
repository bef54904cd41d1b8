"""Checked programs kept on disk between runs, so a CI gate does not parse the rule pack every time.

Parsing and checking the shipped pack costs about half a second per run; loading the
checked program back costs a tenth of that. The entry's name is a digest of every rule
file (its path as the run names it, its bytes) and of the code that turns text into a
program (this package's parser, grammar, AST and checks, and topolog's version), so an
edited rule, a moved working directory or an upgraded topolog is a miss, never a stale
program (see verifier.core.cache for where entries live and why they can be trusted).
"""

from __future__ import annotations

from collections.abc import Sequence

from verifier.core.cache import code_digest, entry_key, read_pickled, write_pickled
from verifier.engine.ast import Program
from verifier.engine.program_data import prepared

KIND = "program"
PARSING_CODE = (
    "ast.py",
    "parser.py",
    "grammar.lark",
    "checks.py",
    "loader.py",
    "shared_terms.py",
    "strata.py",
    "queries.py",
)
"""This package's files that turn rule text into a checked program (with its strata and `@needs` queries)."""
_CODE = (*PARSING_CODE, "program_data.py", "program_cache.py")
"""The files whose change can change the program a text parses to, or what is stored with it
(program_data.prepared adds the strata, rule texts and queries an entry holds)."""


def program_key(files: Sequence[tuple[str, bytes]]) -> str:
    """The entry name of the program parsed from `files` ((name as reported, bytes), in load order)."""
    return entry_key(code_digest("verifier.engine", _CODE), (part for file in files for part in file))


def cached_program(key: str) -> Program | None:
    """The program stored under `key`, or None."""
    program = read_pickled(KIND, key)
    return program if isinstance(program, Program) else None


def remember_program(key: str, program: Program) -> None:
    """Store `program`, with its strata, its rules' text and its checks' `@needs` queries, under `key`
    for the next run.
    """
    write_pickled(KIND, key, prepared(program))
