"""Datalog text to AST, with lark. Rule and query text is data: nothing here executes it.

Syntax errors are collected per statement: after an error the parser skips to the end
of that statement and carries on, so a file with three mistakes reports three errors.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

from lark import Lark, Token, Transformer, Tree, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput

from verifier.core.errors import Diagnostic, ProgramError, SourceLocation
from verifier.core.limits import INT64_MAX, current_limits, exceeded
from verifier.core.resources import package_file
from verifier.engine.ast import (
    Aggregate,
    Atom,
    BinOp,
    Column,
    Comparison,
    Const,
    Declaration,
    Head,
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


def _lark(**options: Any) -> Lark:
    """An LALR parser of the grammar, for a program or a query.

    Building the LALR tables costs ~0.1 s per process; lark keys its cache on the grammar text
    and the options.
    """
    grammar = package_file("verifier.engine", "grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, start=["program", "query"], parser="lalr", maybe_placeholders=False, cache=True, **options)


@cache
def _parser() -> Lark:
    """The parser that builds a tree: for syntax errors (with recovery) and the nesting check."""
    return _lark(propagate_positions=True)


@cache
def _fast_parser() -> Lark:
    """The parser that builds the AST as it reduces, without a parse tree (about 2.5x faster).

    lark runs an inline transformer only without position propagation, so every token is
    kept (`keep_all_tokens`) and each node takes its place from its first token, which is
    where the tree parser's propagated position puts it.
    """
    return _lark(keep_all_tokens=True, transformer=_FAST_AST)


_WARM_UP = 'a(X, "s", 1, _), !b(X), X < 2 + 3 * (4 - 5), c(Y), Y != X'
"""A query with the common constructs: lark compiles each lexer state's scanner the first time the
parse reaches it (10-15 ms in all), so parsing this once compiles those a typed query needs."""


def ready() -> None:
    """The parser built, and its usual lexer states compiled, now instead of at the first parse.

    See verifier.engine.queries.ready_for_queries.
    """
    _parsed(_WARM_UP, "query", "<warm-up>", {})


def _unquote(token: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), token[1:-1])


def _negated(inner: Term, loc: SourceLocation) -> Term:
    """`-inner`: a negative constant when it is a number, else `0 - inner`."""
    if isinstance(inner, Const) and isinstance(inner.value, int):
        return Const(-inner.value, loc)
    return BinOp("-", Const(0), inner, loc)


def _doc_above(comments: dict[int, str], line: int) -> str:
    """The comment lines right above `line`, joined: a declaration's doc."""
    lines: list[str] = []
    n = line - 1
    while n in comments:
        lines.append(comments[n])
        n -= 1
    return " ".join(reversed(lines)).strip()


@dataclass(frozen=True)
class _Group:
    """A parenthesised term: the term, and where its `(` stands (the start of an expression that begins with it)."""

    term: Term
    start: SourceLocation


class _FastAst(Transformer[Token, Any]):
    """`_ToAst`'s nodes built during the parse, from children that include every token.

    Each node also gets the height its parse-tree node would have, so that a program the
    tree parser's nesting check refuses goes to that parser instead (same error, same place).
    """

    def __init__(self) -> None:
        super().__init__()
        self.filename = ""
        self.comments: dict[int, str] = {}
        self.heights: dict[int, int] = {}
        """id(node) -> height of its parse-tree node; only live nodes are asked for, so reused ids do no harm."""

    def begin(self, filename: str, comments: dict[int, str]) -> None:
        self.filename, self.comments, self.heights = filename, comments, {}

    def _at(self, token: Token) -> SourceLocation:
        return SourceLocation(self.filename, token.line or 0, token.column or 0)

    def _start(self, node: Any) -> SourceLocation:
        return node.start if isinstance(node, _Group) else node.loc

    def _node(self, node: Any, *children: Any) -> Any:
        self.heights[id(node)] = 1 + max((self.heights[id(c)] for c in children), default=0)
        return node

    def height(self, node: Any) -> int:
        return self.heights[id(node)]

    # terms
    def var(self, c: list[Token]) -> Var:
        return self._node(Var(str(c[0]), self._at(c[0])))  # type: ignore[no-any-return]

    def wildcard(self, c: list[Token]) -> Wildcard:
        return self._node(Wildcard(self._at(c[0])))  # type: ignore[no-any-return]

    def string(self, c: list[Token]) -> Const:
        return self._node(Const(_unquote(str(c[0])), self._at(c[0])))  # type: ignore[no-any-return]

    def integer(self, c: list[Token]) -> Const:
        digits = str(c[0])
        significant = digits.lstrip("0") or "0"
        # Every engine holds 64-bit integers: a larger literal would be compared exactly by one
        # engine and refused by another. Its length is checked first: Python will not read a
        # number of more than 4,300 digits.
        if len(significant) > len(str(INT64_MAX)) or int(significant) > INT64_MAX:
            shown = digits if len(digits) <= 40 else f"{digits[:20]}... ({len(digits):,} digits)"
            raise ProgramError.at(
                self._at(c[0]), f"integer {shown} does not fit in 64 bits; expected at most {INT64_MAX}"
            )
        return self._node(Const(int(significant), self._at(c[0])))  # type: ignore[no-any-return]

    def primary(self, c: list[Any]) -> _Group:
        # `"(" expr ")"` is inlined in the tree: the group is as high as what it holds.
        group = _Group(_term(c[1]), self._at(c[0]))
        self.heights[id(group)] = self.height(c[1])
        return group

    def neg(self, c: list[Any]) -> Term:
        return self._node(_negated(_term(c[1]), self._at(c[0])), c[1])  # type: ignore[no-any-return]

    def binop(self, c: list[Any]) -> BinOp:
        return self._node(BinOp(str(c[1]), _term(c[0]), _term(c[2]), self._start(c[0])), c[0], c[2])  # type: ignore[no-any-return,arg-type]

    def aggregate(self, c: list[Any]) -> Aggregate:
        return self._node(Aggregate(str(c[0]), _term(c[2]), self._at(c[0])), c[2])  # type: ignore[no-any-return,arg-type]

    # literals
    def atom(self, c: list[Any]) -> Atom:
        args = [a for a in c[2:-1] if not isinstance(a, Token)]
        return self._node(Atom(str(c[0]), tuple(_term(a) for a in args), self._at(c[0])), *args)  # type: ignore[no-any-return]

    def negation(self, c: list[Any]) -> Negation:
        return self._node(Negation(c[1], self._at(c[0])), c[1])  # type: ignore[no-any-return]

    def comparison(self, c: list[Any]) -> Comparison:
        made = Comparison(str(c[1]), _term(c[0]), _term(c[2]), self._start(c[0]))  # type: ignore[arg-type]
        return self._node(made, c[0], c[2])  # type: ignore[no-any-return]

    def body(self, c: list[Any]) -> tuple[Literal_, ...]:
        literals = [lit for lit in c if not isinstance(lit, Token)]
        return self._node(tuple(literals), *literals)  # type: ignore[no-any-return]

    def head(self, c: list[Any]) -> Head:
        args = [a for a in c[2:-1] if not isinstance(a, Token)]
        return self._node(Head(str(c[0]), tuple(_term(a) for a in args), self._at(c[0])), *args)  # type: ignore[no-any-return]

    def rule(self, c: list[Any]) -> Rule:
        head, parts = c[0], c[1:-1]  # head, then ":-" and the body unless it is a fact, then "."
        body: tuple[Literal_, ...] = parts[1] if parts else ()
        return self._node(Rule(head, body, head.loc), head, *parts[1:])  # type: ignore[no-any-return]

    # declarations
    def column(self, c: list[Token]) -> Column:
        made = Column(str(c[0]), str(c[2]), self.comments.get(c[0].line or 0, ""), self._at(c[0]))  # type: ignore[arg-type]
        return self._node(made)  # type: ignore[no-any-return]

    def decl(self, c: list[Any]) -> Declaration:
        kw, name = c[0], c[1]
        cols = [col for col in c[3:-1] if isinstance(col, Column)]
        doc = _doc_above(self.comments, kw.line or 0)
        return self._node(Declaration(str(name), tuple(cols), str(kw) == ".input", doc, self._at(kw)), *cols)  # type: ignore[no-any-return]

    def program(self, c: list[Any]) -> tuple[list[Declaration], list[Rule]]:
        decls = [s for s in c if isinstance(s, Declaration)]
        rules = [s for s in c if isinstance(s, Rule)]
        return self._node((decls, rules), *c)  # type: ignore[no-any-return]

    def query(self, c: list[Any]) -> tuple[Literal_, ...]:
        return self._node(tuple(c[0]), c[0])  # type: ignore[no-any-return]


def _term(node: Any) -> Any:
    return node.term if isinstance(node, _Group) else node


_FAST_AST = _FastAst()
_FAST_LOCK = threading.Lock()
"""The fast parser's transformer is bound when the parser is built (once per process): one parse at a time."""


def _parsed_fast(text: str, start: str, filename: str, comments: dict[int, str]) -> tuple[Any, int] | None:
    """The AST of `text` and the height of its parse tree; None on a syntax error (the tree parser reports it)."""
    with _FAST_LOCK:
        _FAST_AST.begin(filename, comments)
        try:
            result = _fast_parser().parse(text, start=start)
            return result, _FAST_AST.height(result)
        except UnexpectedInput:
            return None
        finally:
            _FAST_AST.comments, _FAST_AST.heights = {}, {}


def _parsed(text: str, start: str, filename: str, comments: dict[int, str]) -> Any:
    """The AST of `text`; ProgramError with what the tree parser finds wrong (every syntax error, a
    nesting past nesting_depth).
    """
    parsed = _parsed_fast(text, start, filename, comments)
    if parsed is None or parsed[1] > current_limits().nesting_depth:
        _refuse(text, start, filename)
    # The tree parser raised, or found nothing wrong: then the fast parse stands (it is the same grammar).
    assert parsed is not None, "the tree parser accepted what the fast parser refused"
    return parsed[0]


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
    decls, rules = _parsed(text, "program", filename, comments)
    return Program(
        tuple(decls),
        tuple(rules),
        tuple((k, v, SourceLocation(filename, line, 1)) for k, v, line in meta),
    )


def _refuse(text: str, start: str, filename: str) -> None:
    """Raise what the tree parser finds wrong with `text`: every syntax error of a program (one per
    statement, skipping to the end of each), the one of a query, or nesting past nesting_depth.
    """
    errors: list[Diagnostic] = []
    current = text
    while True:
        try:
            tree = _parser().parse(current, start=start)
            break
        except UnexpectedInput as err:
            errors.append(_syntax_diagnostic(err, filename, text))
            pos = getattr(err, "pos_in_stream", None)
            if start != "program" or pos is None or pos < 0 or len(errors) >= MAX_SYNTAX_ERRORS:
                raise ProgramError(errors) from None
            begin, end = _statement_span(current, min(pos, len(current) - 1))
            blanked = _blank(current, begin, end)
            if blanked == current:
                raise ProgramError(errors) from None
            current = blanked
    if errors:
        raise ProgramError(errors)
    _check_depth(tree, filename)


def parse_query(text: str, filename: str = "<query>") -> Query:
    """Parse a query body such as `link(A, B, "nvlink", G), G < 400`. Trailing `.` is allowed."""
    stripped = text.strip()
    if stripped.endswith("."):
        stripped = stripped[:-1]
        text = text[: text.rstrip().rfind(".")]
    if not stripped:
        raise ProgramError.at(SourceLocation(filename, 1, 1), "empty query; expected a rule body")
    body = _parsed(text, "query", filename, {})
    seen: dict[str, None] = {}
    for lit in body:
        for v in literal_vars(lit):
            seen.setdefault(v, None)
    return Query(body, tuple(seen), text.strip())
