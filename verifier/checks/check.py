"""Checks: rule files that carry `# @key: value` metadata and report one relation.

A check file looks like

    # @id: TOPO001
    # @severity: error
    # @summary: A GPU reaches no NIC.
    # @remediation: Connect the GPU's PCIe switch to a NIC ...
    # @reports: gpu_without_nic
    # @message: GPU {gpu} reaches no NIC over any link.
    .decl gpu_without_nic(gpu: symbol)
    gpu_without_nic(G) :- ...

Every row of the reported relation is a finding. `@subjects` names the columns that
hold inventory ids (default: every symbol column); `{column}` in `@message` is replaced
by that column's value. `@group` names columns whose values make one root cause: rows
that agree on them are one finding, whose subjects are every row's, and in whose message
a column the rows disagree on reads as their values, sorted and comma-separated (TOPO005:
one finding per GPU cut off, naming each of its down links). `@needs` is a query body
(e.g. `object(_, "nic")`) that must have an answer for the check to have anything to
judge: without one the check is reported as not applicable rather than passed. Files
without `@id` are shared rule libraries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from verifier.checks.findings import SEVERITIES, Severity
from verifier.core.errors import Diagnostic, ProgramError, SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.suggest import closest
from verifier.engine.ast import Atom, Declaration, Negation, Program, Row
from verifier.facts.relation_sources import LINK_RELATIONS

REQUIRED_KEYS = ("id", "severity", "summary", "remediation", "reports", "message")
OPTIONAL_KEYS = ("subjects", "needs", "group")
_ID = re.compile(r"^[A-Z]{2,8}[0-9]{3}$")
_PLACEHOLDER = re.compile(r"\{([a-z][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, repr=False, eq=False)
class Check(Frozen):
    id: str
    severity: Severity
    summary: str
    remediation: str
    reports: str
    message: str
    subjects: tuple[int, ...]
    """Positions of the reported relation's columns that hold inventory ids."""
    columns: tuple[str, ...]
    file: str
    needs: str | None = None
    """What the inventory must hold for the check to judge anything (`@needs`, a query body); None: always."""
    needs_at: SourceLocation | None = None
    group: tuple[int, ...] = ()
    """Positions of the columns that make one root cause (`@group`); empty: every row is its own finding."""
    reads: frozenset[str] | None = None
    """The input relations the reported relation depends on, through every rule; None: not known
    (read as every relation)."""

    @classmethod
    def without_rule(cls, id: str, severity: Severity, summary: str, remediation: str, file: str) -> Check:
        """A check topolog reports itself, not from a rule's relation (the waiver and what-if checks),
        described like the others in SARIF rules and JUnit test cases; `file` is the input it judges.
        """
        return cls(id, severity, summary, remediation, reports="", message="", subjects=(), columns=(), file=file)

    @property
    def reads_links(self) -> bool:
        """Whether the finding depends on how devices are linked (`LINK_RELATIONS`): when it does
        not, copies of one written thing are one finding however their instances are wired.
        """
        return self.reads is None or not self.reads.isdisjoint(LINK_RELATIONS)

    def subjects_of(self, row: Row) -> tuple[str, ...]:
        return tuple(str(row[i]) for i in self.subjects)

    def message_for(self, row: Row) -> str:
        return self.message_for_rows([row])

    def group_key(self, row: Row) -> Row:
        """What rows of one finding share: the `@group` columns, else the whole row."""
        return tuple(row[i] for i in self.group) if self.group else tuple(row)

    def subjects_of_rows(self, rows: Sequence[Row]) -> tuple[str, ...]:
        """The subjects of one finding made of `rows`: column by column, each value once, sorted."""
        out: dict[str, None] = {}
        for i in self.subjects:
            for value in sorted({str(row[i]) for row in rows}):
                out.setdefault(value, None)
        return tuple(out)

    def message_for_rows(self, rows: Sequence[Row]) -> str:
        values = {name: ", ".join(sorted({str(row[i]) for row in rows})) for i, name in enumerate(self.columns)}
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), self.message)


@dataclass(frozen=True, repr=False, eq=False)
class CheckCatalog(Frozen):
    """The checks a rule set defines, in id order (what `topolog rules` documents)."""

    checks: list[Check]


def checks_from_program(program: Program) -> list[Check]:
    """Every check in a (checked) program, sorted by id. ProgramError lists all metadata problems."""
    by_file: dict[str, dict[str, tuple[str, SourceLocation]]] = {}
    errors: list[Diagnostic] = []
    for key, value, loc in program.metadata:
        entries = by_file.setdefault(loc.file, {})
        if key in entries:
            errors.append(Diagnostic(loc, f"metadata key '@{key}' given twice in this file"))
        entries[key] = (value, loc)
    decls = program.relations
    checks: list[Check] = []
    seen_ids: dict[str, str] = {}
    # Files in load order (the shipped pack first): a clash is reported at the file loaded later,
    # the user's, whatever the two paths' alphabetical order.
    for file, entries in by_file.items():
        check = _build_check(file, entries, decls, errors)
        if check is None:
            continue
        if "needs" in entries:
            # Parsed and checked where it is asked (verifier.session): the parser is not a
            # dependency of reading a check's metadata.
            text, loc = entries["needs"]
            check = replace(check, needs=text, needs_at=loc)
        if check.id in seen_ids:
            errors.append(Diagnostic(entries["id"][1], f"check id {check.id} is already used by {seen_ids[check.id]}"))
            continue
        seen_ids[check.id] = file
        checks.append(check)
    if errors:
        raise ProgramError(errors)
    # Every run builds the checks (a shipped pack's ~1,100 rules): the literals are read in one
    # loop, without a generator per rule, and each relation's inputs are worked out once.
    bodies: dict[str, set[str]] = {}
    for rule in program.rules:
        reads = bodies.setdefault(rule.head.relation, set())
        for lit in rule.body:
            if isinstance(lit, Atom):
                reads.add(lit.relation)
            elif isinstance(lit, Negation):
                reads.add(lit.atom.relation)
    known: dict[str, frozenset[str]] = {}
    return sorted((replace(c, reads=_inputs_read(c.reports, bodies, known)) for c in checks), key=lambda c: c.id)


def _inputs_read(relation: str, bodies: dict[str, set[str]], known: dict[str, frozenset[str]]) -> frozenset[str]:
    """The relations without rules (the inputs) that `relation` depends on; `bodies` gives, per
    relation with rules, the relations its rules read. `known` keeps each answer for the next
    check reporting the same relation.
    """
    found = known.get(relation)
    if found is not None:
        return found
    seen = {relation}
    todo = [relation]
    while todo:
        for name in bodies.get(todo.pop(), ()):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    found = known[relation] = frozenset(name for name in seen if name not in bodies)
    return found


def _build_check(
    file: str,
    entries: dict[str, tuple[str, SourceLocation]],
    decls: dict[str, Declaration],
    errors: list[Diagnostic],
) -> Check | None:
    first = min(loc for _, loc in entries.values())
    for key, (_, loc) in entries.items():
        if key not in REQUIRED_KEYS and key not in OPTIONAL_KEYS:
            errors.append(
                Diagnostic(
                    loc, f"unknown metadata key '@{key}'; expected one of: " + ", ".join(REQUIRED_KEYS + OPTIONAL_KEYS)
                )
            )
    missing = [k for k in REQUIRED_KEYS if k not in entries]
    if missing:
        errors.append(Diagnostic(first, "check metadata is missing " + ", ".join(f"'@{k}'" for k in missing)))
        return None
    value = {k: v for k, (v, _) in entries.items()}
    ok = True
    if not _ID.match(value["id"]):
        errors.append(Diagnostic(entries["id"][1], f"check id {value['id']!r} should look like BW002"))
        ok = False
    if value["severity"] not in SEVERITIES:
        errors.append(
            Diagnostic(entries["severity"][1], f"severity {value['severity']!r}; expected error, warning or note")
        )
        ok = False
    decl = decls.get(value["reports"])
    if decl is None:
        errors.append(
            Diagnostic(entries["reports"][1], f"'@reports' names relation {value['reports']!r}, which is not declared")
        )
        return None
    columns = tuple(c.name for c in decl.columns)
    if "subjects" in value:
        names = [s.strip() for s in value["subjects"].split(",") if s.strip()]
        unknown = [n for n in names if n not in columns]
        if unknown:
            errors.append(
                Diagnostic(
                    entries["subjects"][1],
                    f"'@subjects' names unknown columns {', '.join(unknown)}; {decl.name} has " + ", ".join(columns),
                )
            )
            ok = False
        subjects = tuple(columns.index(n) for n in names if n in columns)
    else:
        subjects = tuple(i for i, c in enumerate(decl.columns) if c.type == "symbol")
    group: tuple[int, ...] = ()
    if "group" in value:
        names = [s.strip() for s in value["group"].split(",") if s.strip()]
        unknown = [n for n in names if n not in columns]
        if unknown or not names:
            errors.append(
                Diagnostic(
                    entries["group"][1],
                    f"'@group' names unknown columns {', '.join(unknown) or '(none)'}; {decl.name} has "
                    + ", ".join(columns),
                )
            )
            ok = False
        group = tuple(columns.index(n) for n in names if n in columns)
    for name in _PLACEHOLDER.findall(value["message"]):
        if name not in columns:
            errors.append(
                Diagnostic(
                    entries["message"][1],
                    f"'@message' uses {{{name}}}, which is not a column of {decl.name} (" + ", ".join(columns) + ")",
                )
            )
            ok = False
    if not ok:
        return None
    return Check(
        id=value["id"],
        severity=value["severity"],  # type: ignore[arg-type]
        summary=value["summary"],
        remediation=value["remediation"],
        reports=decl.name,
        message=value["message"],
        subjects=subjects,
        columns=columns,
        file=file,
        group=group,
    )


@dataclass(frozen=True, repr=False, eq=False)
class CheckSelection(Frozen):
    """Which checks report (`--check` / `--skip`).

    It filters findings only: every rule is still evaluated, because a relation one check
    reports may be what another check, or a derived relation the rest read, is built on.
    """

    only: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()

    @property
    def everything(self) -> bool:
        return not self.only and not self.skip

    def reports(self, check_id: str) -> bool:
        return (not self.only or check_id in self.only) and check_id not in self.skip


def select_checks(
    known: Iterable[str],
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    also: Iterable[str] = (),
    sources: Mapping[str, SourceLocation] | None = None,
) -> CheckSelection:
    """The selection `--check only --skip skip` names; TopologError for an unknown id or an empty selection.

    `also`: ids that may be named but do not count as a check left to report (the waiver
    checks judge waivers, not the inventory: keeping only them passes every inventory).
    `sources`: where `--check` / `--skip` (the keys) were written when not on the command line
    (a configuration file's line), which the errors name.
    """
    sources = sources or {}
    rule_ids = sorted(set(known))
    ids = sorted({*rule_ids, *also})
    errors: list[Diagnostic] = []
    for option, given in (("--check", only), ("--skip", skip)):
        for check_id in given:
            if check_id not in ids:
                close = closest(check_id, ids, fold_case=True)
                hint = f" (did you mean {close}?)" if close else ""
                written = sources.get(option)
                where = written or SourceLocation(f"{option} {check_id}")
                said = f"{option.lstrip('-')} names {check_id}: " if written is not None else ""
                errors.append(Diagnostic(where, f"{said}no check loaded has this id{hint}; `topolog rules` lists them"))
    if errors:
        raise TopologError(errors)
    selection = CheckSelection(frozenset(only), frozenset(skip))
    if not any(selection.reports(i) for i in rule_ids):
        source = sources.get("--skip") or sources.get("--check")
        if source is not None:
            raise TopologError.at(
                source,
                "this check / skip leaves no check of the inventory to report, so every inventory would pass; "
                "keep at least one check (`topolog rules` lists them), or run with --no-config",
            )
        where = SourceLocation("--skip" if skip else "--check")
        raise TopologError.at(where, "these --check / --skip options leave no check of the inventory to report")
    return selection
