"""Datalog text to AST, with lark. Rule and query text is data: nothing here executes it.

Syntax errors are collected per statement: after an error the parser skips to the end
of that statement and carries on, so a file with three mistakes reports three errors.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer, Tree, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput
from lark.tree import Meta

from verifier.core.errors import Diagnostic, ProgramError, SourceLocation
from verifier.core.limits import current_limits, exceeded
from verifier.engine.ast import (
    Aggregate,
    Atom,
    BinOp,
    Column,
    Comparison,
    Const,
    Declaration,
    Head,
    HeadTerm,
    Literal_,
    Negation,
    Program,
    Query,
    Rule,
    Term,
    Var,
    Wildcard,
    literal_vars,
)

MAX_SYNTAX_ERRORS = 50
_META_COMMENT = re.compile(r"^\s*(?:#|//)\s*@([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*?)\s*$")
_COMMENT_TEXT = re.compile(r"^\s*(?:#|//)\s?(.*?)\s*$")

_ESCAPES = {"n": "\n", "t": "\t"}

_TOKEN_WORDS = {
    "DOT": "'.'",
    "COMMA": "','",
    "LPAR": "'('",
    "RPAR": "')'",
    "COLON": "':'",
    "__ANON_0": "':-'",
    "BANG": "'!'",
    "MINUS": "'-'",
    "NAME": "a relation name (lower case)",
    "VAR": "a variable (Upper case)",
    "STRING": "a quoted string",
    "INT": "an integer",
    "CMP_OP": "a comparison",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*', '/' or '%'",
    "DECL_KW": "'.decl' or '.input'",
    "AGG_FUNC": "an aggregate (min, max, count, sum)",
    "WILDCARD": "'_'",
    "$END": "end of input",
}


@cache
def _parser() -> Lark:
    grammar = resources.files("verifier.engine").joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        start=["program", "query"],
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=False,
        # Building the LALR tables costs ~0.1 s per process; lark keys its cache on the grammar text.
        cache=True,
    )


class _ToAst(Transformer[Token, Any]):
    def __init__(self, filename: str, comments: dict[int, str]) -> None:
        super().__init__()
        self.filename = filename
        self.comments = comments

    def _loc(self, meta: Meta | Token) -> SourceLocation:
        line = getattr(meta, "line", 0) or 0
        col = getattr(meta, "column", 0) or 0
        return SourceLocation(self.filename, line, col)

    def __default__(self, data: str, children: list[Any], meta: Meta) -> Any:
        raise AssertionError(f"unhandled grammar node {data}")  # pragma: no cover

    def _call_userfunc(self, tree: Tree[Token], new_children: list[Any] | None = None) -> Any:
        children = new_children if new_children is not None else tree.children
        handler = getattr(self, tree.data)
        return handler(children, tree.meta)

    # terms
    def var(self, c: list[Token], meta: Meta) -> Var:
        return Var(str(c[0]), self._loc(meta))

    def wildcard(self, c: list[Token], meta: Meta) -> Wildcard:
        return Wildcard(self._loc(meta))

    def string(self, c: list[Token], meta: Meta) -> Const:
        raw = str(c[0])[1:-1]
        return Const(re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), raw), self._loc(meta))

    def integer(self, c: list[Token], meta: Meta) -> Const:
        return Const(int(str(c[0])), self._loc(meta))

    def neg(self, c: list[Term], meta: Meta) -> Term:
        inner = c[0]
        if isinstance(inner, Const) and isinstance(inner.value, int):
            return Const(-inner.value, self._loc(meta))
        return BinOp("-", Const(0), inner, self._loc(meta))

    def binop(self, c: list[Any], meta: Meta) -> BinOp:
        return BinOp(str(c[1]), c[0], c[2], self._loc(meta))  # type: ignore[arg-type]

    def aggregate(self, c: list[Any], meta: Meta) -> Aggregate:
        return Aggregate(str(c[0]), c[1], self._loc(meta))  # type: ignore[arg-type]

    # literals
    def atom(self, c: list[Any], meta: Meta) -> Atom:
        return Atom(str(c[0]), tuple(c[1:]), self._loc(meta))

    def negation(self, c: list[Atom], meta: Meta) -> Negation:
        return Negation(c[0], self._loc(meta))

    def comparison(self, c: list[Any], meta: Meta) -> Comparison:
        return Comparison(str(c[1]), c[0], c[2], self._loc(meta))  # type: ignore[arg-type]

    def body(self, c: list[Literal_], meta: Meta) -> tuple[Literal_, ...]:
        return tuple(c)

    def head(self, c: list[Any], meta: Meta) -> Head:
        args: tuple[HeadTerm, ...] = tuple(c[1:])
        return Head(str(c[0]), args, self._loc(meta))

    def rule(self, c: list[Any], meta: Meta) -> Rule:
        body: tuple[Literal_, ...] = c[1] if len(c) > 1 else ()
        return Rule(c[0], body, self._loc(meta))

    # declarations
    def column(self, c: list[Token], meta: Meta) -> Column:
        return Column(str(c[0]), str(c[1]), self.comments.get(meta.line, ""), self._loc(meta))  # type: ignore[arg-type]

    def decl(self, c: list[Any], meta: Meta) -> Declaration:
        kw, name, *cols = c
        return Declaration(str(name), tuple(cols), str(kw) == ".input", self._doc_above(meta.line), self._loc(meta))

    def _doc_above(self, line: int) -> str:
        lines: list[str] = []
        n = line - 1
        while n in self.comments:
            lines.append(self.comments[n])
            n -= 1
        return " ".join(reversed(lines)).strip()

    def program(self, c: list[Any], meta: Meta) -> tuple[list[Declaration], list[Rule]]:
        decls = [s for s in c if isinstance(s, Declaration)]
        rules = [s for s in c if isinstance(s, Rule)]
        return decls, rules

    def query(self, c: list[Any], meta: Meta) -> tuple[Literal_, ...]:
        return tuple(c[0])


def _describe_expected(expected: set[str]) -> str:
    words = sorted({_TOKEN_WORDS.get(t, t) for t in expected})
    if not words:
        return ""
    if len(words) == 1:
        return f"expected {words[0]}"
    return "expected " + ", ".join(words[:-1]) + " or " + words[-1]


def _syntax_diagnostic(err: UnexpectedInput, filename: str, text: str) -> Diagnostic:
    line = getattr(err, "line", 0) or 0
    col = getattr(err, "column", 0) or 0
    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        msg = f"unexpected character {ch!r}"
        hint = _describe_expected(set(err.allowed or ()))
    elif isinstance(err, UnexpectedEOF):
        msg = "unexpected end of input"
        hint = _describe_expected(set(err.expected or ()))
        line = line if line > 0 else text.count("\n") + 1
        col = col if col > 0 else len(text.rsplit("\n", 1)[-1]) + 1
    else:
        tok = getattr(err, "token", None)
        shown = "end of input" if tok is None or tok.type == "$END" else repr(str(tok))
        msg = f"unexpected {shown}"
        hint = _describe_expected(set(getattr(err, "expected", None) or ()))
    if hint:
        msg += f"; {hint}"
    return Diagnostic(SourceLocation(filename, max(line, 1), max(col, 1)), "syntax error: " + msg)


def _statement_span(text: str, pos: int) -> tuple[int, int]:
    """The statement around `pos`: from after the previous statement's end to its own end.

    A statement ends at a `.` outside strings and comments that is not the start of
    `.decl`/`.input`, or at the `)` closing a declaration. Used only for error recovery.
    """
    ends: list[int] = []
    i, n = 0, len(text)
    depth = 0
    in_decl = False
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "#" or text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        if ch == "." and re.match(r"\.(decl|input)\b", text[i:]):
            in_decl = True
            i += 6
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
            if in_decl and depth == 0:
                ends.append(i + 1)
                in_decl = False
        elif ch == "." and not in_decl:
            ends.append(i + 1)
        i += 1
    start = 0
    for e in ends:
        if e <= pos:
            start = e
        else:
            return start, e
    return start, n


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def _scan_comments(text: str) -> tuple[dict[int, str], list[tuple[str, str, int]]]:
    """Comment text by line (for docs) and `@key: value` metadata, skipping string contents."""
    comments: dict[int, str] = {}
    meta: list[tuple[str, str, int]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        idx = _comment_start(line)
        if idx < 0:
            continue
        chunk = line[idx:]
        m = _META_COMMENT.match(chunk)
        if m and not line[:idx].strip():
            meta.append((m.group(1), m.group(2), lineno))
            continue
        t = _COMMENT_TEXT.match(chunk)
        if t:
            comments[lineno] = t.group(1)
    return comments, meta


def _comment_start(line: str) -> int:
    in_str = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_str:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch == "#" or line.startswith("//", i):
            return i
        i += 1
    return -1


def _check_depth(tree: Tree[Token], filename: str) -> None:
    """Refuse a parse tree deeper than nesting_depth before anything walks it recursively.

    A rule file is at most 8 levels deep; each term of a chain such as `1 + 1 + ...` adds one,
    and 5,000 of them would overflow Python's stack in the tree walk (a traceback, not an error).
    """
    limit = current_limits().nesting_depth
    stack: list[tuple[Tree[Token], int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            meta = node.meta
            line, col = (meta.line, meta.column) if not meta.empty else (0, 0)
            found = f"an expression nested more than {limit} levels deep (a chain of operators that long)"
            raise ProgramError.at(SourceLocation(filename, line, col), exceeded("nesting_depth", found))
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tree))


def parse_program(text: str, filename: str = "<program>") -> Program:
    """Parse a whole rule file. Raises ProgramError listing every syntax error."""
    comments, meta = _scan_comments(text)
    errors: list[Diagnostic] = []
    current = text
    while True:
        try:
            tree = _parser().parse(current, start="program")
            break
        except UnexpectedInput as err:
            errors.append(_syntax_diagnostic(err, filename, text))
            pos = getattr(err, "pos_in_stream", None)
            if pos is None or pos < 0 or len(errors) >= MAX_SYNTAX_ERRORS:
                raise ProgramError(errors) from None
            start, end = _statement_span(current, min(pos, len(current) - 1))
            blanked = _blank(current, start, end)
            if blanked == current:
                raise ProgramError(errors) from None
            current = blanked
    if errors:
        raise ProgramError(errors)
    _check_depth(tree, filename)
    decls, rules = _ToAst(filename, comments).transform(tree)
    return Program(
        tuple(decls),
        tuple(rules),
        tuple((k, v, SourceLocation(filename, line, 1)) for k, v, line in meta),
    )


def parse_query(text: str, filename: str = "<query>") -> Query:
    """Parse a query body such as `link(A, B, "nvlink", G), G < 400`. Trailing `.` is allowed."""
    stripped = text.strip()
    if stripped.endswith("."):
        stripped = stripped[:-1]
        text = text[: text.rstrip().rfind(".")]
    if not stripped:
        raise ProgramError.at(SourceLocation(filename, 1, 1), "empty query; expected a rule body")
    try:
        tree = _parser().parse(text, start="query")
    except UnexpectedInput as err:
        raise ProgramError([_syntax_diagnostic(err, filename, text)]) from None
    _check_depth(tree, filename)
    body = _ToAst(filename, {}).transform(tree)
    seen: dict[str, None] = {}
    for lit in body:
        for v in literal_vars(lit):
            seen.setdefault(v, None)
    return Query(body, tuple(seen), text.strip())
