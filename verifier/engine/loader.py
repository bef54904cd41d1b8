"""Rule files and Datalog facts files from disk into a checked Program / rows.

Errors from every file are gathered before anything is raised, so one run of
`topolog verify` shows the user all the broken files at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path

from verifier.core.errors import Diagnostic, FactError, ProgramError, SourceLocation, TopologError
from verifier.core.limits import read_limited
from verifier.core.resources import RULE_SUFFIX, shipped_rules_dir
from verifier.engine.ast import Const, Declaration, Program, Row, Rule
from verifier.engine.checks import (
    constant_column_diagnostic,
    declarations_by_name,
    program_diagnostics,
    relation_use_diagnostics,
)
from verifier.engine.parser import parse_program


def load_program(paths: Sequence[Path], undeclared_hint: Callable[[str], str | None] | None = None) -> Program:
    """Parse and check every rule file under `paths` (files, or directories searched for *.dl).

    Raises ProgramError with every unreadable file, syntax error and check failure.
    Semantic checks run only once every file parses: a file that failed to parse
    would otherwise show up as a flood of "relation is not declared" errors elsewhere.
    `undeclared_hint`, given a relation used but declared nowhere, may say where a
    declaration can be found (the shipped schema, when a custom rule set leaves it out).
    """
    diagnostics: list[Diagnostic] = []
    program = Program()
    for path in _rule_files(paths, diagnostics):
        text = read_text(path, diagnostics)
        if text is None:
            continue
        try:
            program = program.merge(parse_program(text, filename=str(path)))
        except ProgramError as err:
            diagnostics.extend(err.diagnostics)
    if not diagnostics:
        diagnostics.extend(program_diagnostics(program))
        if diagnostics and undeclared_hint is not None:
            diagnostics = _with_declaration_hints(program, diagnostics, undeclared_hint)
    if diagnostics:
        raise ProgramError(diagnostics)
    return program


def _with_declaration_hints(
    program: Program, diagnostics: list[Diagnostic], hint: Callable[[str], str | None]
) -> list[Diagnostic]:
    """Each "relation 'x' is not declared" diagnostic, followed by what `hint` knows of x."""
    declared = {d.name for d in program.declarations}
    used = {rule.head.relation for rule in program.rules} | {
        atom.relation for rule in program.rules for atom in (*rule.positive_atoms(), *rule.negated_atoms())
    }
    hints = {
        f"relation '{name}' is not declared": text
        for name in sorted(used - declared)
        if (text := hint(name)) is not None
    }
    if not hints:
        return diagnostics
    out: list[Diagnostic] = []
    for diag in diagnostics:
        # The message starts with the relation's name quoted (verifier.engine.checks); a
        # did-you-mean may follow it, so the prefix is matched, not the whole message.
        text = next((t for prefix, t in hints.items() if diag.message.startswith(prefix)), None)
        out.append(diag if text is None else Diagnostic(diag.location, f"{diag.message}; {text}"))
    return out


def read_text(path: Path, diagnostics: list[Diagnostic]) -> str | None:
    """The file's text, or None after adding a diagnostic that says why it cannot be read."""
    if not path.exists():
        # A link to nothing (dangling, or links in a loop) is there for `ls`: say what it is.
        said = (
            "it is a symbolic link that leads to no file (dangling, or a loop of links); expected a .dl rule file"
            if path.is_symlink()
            else "no such file or directory"
        )
        diagnostics.append(Diagnostic(SourceLocation(str(path)), said))
        return None
    if not path.is_file():
        # A rule file is read more than once (named in cache keys, compared with the shipped pack,
        # cited by proofs at file:line): a pipe would be empty the second time, a device never end.
        kind = "a pipe" if path.is_fifo() else "not a regular file"
        diagnostics.append(
            Diagnostic(
                SourceLocation(str(path)),
                f"{kind}; expected a .dl rule file on disk (rules are read again and cited by file:line)",
            )
        )
        return None
    try:
        # The shipped pack is topolog's own: only rules a user names are bounded like input.
        data = path.read_bytes() if _shipped(path) else read_limited(path, what="rule file")
    except TopologError as err:
        diagnostics.extend(err.diagnostics)
        return None
    except OSError as err:
        diagnostics.append(Diagnostic(SourceLocation(str(path)), f"cannot read the file: {err.strerror}"))
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        diagnostics.append(_not_utf8(path, data, err.start))
        return None


def _not_utf8(path: Path, data: bytes, offset: int) -> Diagnostic:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return Diagnostic(
        SourceLocation(str(path), line, col),
        f"the file is not UTF-8 text (byte 0x{data[offset]:02x}); save it as UTF-8",
    )


def _rule_files(paths: Sequence[Path], diagnostics: list[Diagnostic]) -> list[Path]:
    """Files in the order given, directories expanded sorted by path, each file once."""
    files: list[Path] = []
    seen: set[Path] = set()
    for path in paths:
        for f in _expand(path, diagnostics):
            try:
                key = f.resolve()
            except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13): reported when read
                key = f.absolute()
            if key not in seen:
                seen.add(key)
                files.append(f)
    return files


def _expand(path: Path, diagnostics: list[Diagnostic]) -> Iterator[Path]:
    if not path.is_dir():
        yield path  # a missing file is reported when it is read
        return
    # Not only regular files: a FIFO or a dangling link named *.dl is refused when it is read,
    # never skipped (a check left out without a word would pass what it judges).
    found = sorted(p for p in path.rglob(f"*{RULE_SUFFIX}") if not p.is_dir())
    if not found:
        diagnostics.append(Diagnostic(SourceLocation(str(path)), f"the directory holds no {RULE_SUFFIX} rule files"))
    yield from found


# ---------------------------------------------------------------- facts files


def parse_facts(text: str, filename: str = "<facts>", program: Program | None = None) -> dict[str, list[Row]]:
    """Rows per relation from a facts file of ground facts such as `link("a", "b", 400).`.

    With `program`, each fact is also checked against the declarations: the relation
    must be a declared input relation of the right arity and column types. Syntax errors
    raise ProgramError; facts that are not ground or do not fit raise FactError.
    """
    parsed = parse_program(text, filename=filename)
    diagnostics = [_declaration_in_facts(d) for d in parsed.declarations]
    decls = declarations_by_name(program) if program is not None else None
    rows: dict[str, list[Row]] = {}
    for rule in parsed.rules:
        problems = list(_fact_problems(rule, decls))
        diagnostics.extend(problems)
        if not problems:
            rows.setdefault(rule.head.relation, []).append(_row(rule))
    if diagnostics:
        raise FactError(diagnostics)
    return rows


def _declaration_in_facts(decl: Declaration) -> Diagnostic:
    return Diagnostic(
        decl.loc,
        f"declaration of '{decl.name}' in a facts file; declarations belong in "
        'rule files, a facts file holds only facts such as link("a", "b", 400).',
    )


def _fact_problems(rule: Rule, decls: Mapping[str, Declaration] | None) -> Iterator[Diagnostic]:
    head = rule.head
    if rule.body:
        yield Diagnostic(
            rule.loc,
            f"rule for '{head.relation}' in a facts file; a facts file holds only ground facts (no ':-')",
        )
        return
    for arg in head.args:
        if not isinstance(arg, Const):
            yield Diagnostic(
                arg.loc,
                f"argument '{arg}' of fact '{head.relation}' is not a constant; expected a quoted string or an integer",
            )
    if decls is not None:
        yield from _fact_against_declaration(rule, decls)


def _fact_against_declaration(rule: Rule, decls: Mapping[str, Declaration]) -> Iterator[Diagnostic]:
    head = rule.head
    use = relation_use_diagnostics(head.relation, len(head.args), head.loc, decls)
    if use:
        yield from use
        return
    decl = decls[head.relation]
    if not decl.is_input:
        yield Diagnostic(
            head.loc,
            f"'{head.relation}' is a derived relation (.decl), so rules compute its "
            "facts; a facts file may only hold facts of .input relations",
        )
    for arg, col in zip(head.args, decl.columns, strict=True):
        if isinstance(arg, Const):
            diag = constant_column_diagnostic(arg, col, head.relation)
            if diag is not None:
                yield diag


def _row(rule: Rule) -> Row:
    return tuple(arg.value for arg in rule.head.args if isinstance(arg, Const))


def _shipped(path: Path) -> bool:
    shipped = shipped_rules_dir().resolve()
    return shipped in path.resolve().parents
