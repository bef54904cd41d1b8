"""Checked programs kept on disk between runs, so a CI gate does not parse the rule pack every time.

Parsing and checking the shipped pack costs about half a second per run; loading the
checked program back costs a tenth of that. The entry's name is a digest of every rule
file (its path as the run names it, its bytes) and of the code that turns text into a
program (this package's parser, grammar, AST and checks, and topolog's version), so an
edited rule, a moved working directory or an upgraded topolog is a miss, never a stale
program (see verifier.core.cache for where entries live and why they can be trusted).
"""

from __future__ import annotations

import hashlib
import pickle
import sys
from collections.abc import Sequence
from functools import cache
from importlib import resources

from verifier.core.cache import read_entry, write_entry
from verifier.core.errors import TopologError
from verifier.core.version import __version__
from verifier.engine.ast import Program
from verifier.engine.queries import NEEDS_KEY, prepare_query
from verifier.engine.strata import strata_of

KIND = "program"
_CODE = ("ast.py", "parser.py", "grammar.lark", "checks.py", "loader.py", "strata.py", "queries.py", "program_cache.py")
"""The files whose change can change the program a text parses to."""


@cache
def _code_digest() -> bytes:
    digest = hashlib.sha256(f"{__version__}\0{sys.version_info[:2]}\0{pickle.HIGHEST_PROTOCOL}".encode())
    package = resources.files("verifier.engine")
    for name in _CODE:
        digest.update(name.encode() + b"\0" + package.joinpath(name).read_bytes() + b"\0")
    return digest.digest()


def program_key(files: Sequence[tuple[str, bytes]]) -> str:
    """The entry name of the program parsed from `files` ((name as reported, bytes), in load order)."""
    digest = hashlib.sha256(_code_digest())
    for name, data in files:
        encoded = name.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big") + encoded + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def cached_program(key: str) -> Program | None:
    """The program stored under `key`, or None."""
    payload = read_entry(KIND, key)
    if payload is None:
        return None
    try:
        program = pickle.loads(payload)
    except Exception:  # an entry from another build of the code (any unpickling error): a miss
        return None
    return program if isinstance(program, Program) else None


def remember_program(key: str, program: Program) -> None:
    """Store `program`, with its strata and its checks' `@needs` queries, under `key` for the next run."""
    strata_of(program)
    for name, text, where in program.metadata:
        if name == NEEDS_KEY:
            try:
                prepare_query(text, program, where.file)
            except TopologError:  # reported, with its check, when the checks are built
                continue
    write_entry(KIND, key, pickle.dumps(program, protocol=pickle.HIGHEST_PROTOCOL))
