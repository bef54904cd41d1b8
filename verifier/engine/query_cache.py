"""Queries typed at the command line kept parsed on disk, so a repeated `topolog query` imports no parser.

A script or CI job asks the same few questions run after run; parsing one means importing lark
and building its tables and lexer (30-40 ms, a tenth of a small `query`). The entry is named
by the query's text, the name errors give it, and the code that parses it; only the parse is
kept, and each run still checks the query against its own program (verifier.engine.checks).
"""

from __future__ import annotations

from verifier.core.cache import code_digest, entry_key, read_pickled, write_pickled
from verifier.engine.ast import Query

KIND = "query"
_CODE = ("ast.py", "parser.py", "grammar.lark", "query_cache.py")
"""The files whose change can change the AST a query's text parses to."""


def query_key(text: str, filename: str) -> str:
    return entry_key(code_digest("verifier.engine", _CODE), (filename, text))


def cached_query(key: str) -> Query | None:
    """The parsed query stored under `key`, or None."""
    found = read_pickled(KIND, key)
    return found if isinstance(found, Query) else None


def remember_query(key: str, query: Query) -> None:
    write_pickled(KIND, key, query)
