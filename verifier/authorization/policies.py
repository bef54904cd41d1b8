"""Load `schema.cedarschema` and every `*.cedar` file of a policy directory, validated.

Nothing is used before it is checked: the schema must parse, every policy must parse, carry
a unique `@id("...")` annotation (decisions and findings name policies by it) and pass
cedarpy's validator against the schema. Any problem is a `TopologError` (exit 2) naming the
file, the line where the policy starts and the policy id.

Policies are split into statements here (at top-level `;`, outside strings and comments)
so each one is parsed and validated on its own: cedarpy reports neither line numbers nor
which policy of a file failed to parse, and positional ids (`policy3`) mean nothing to a
reader. The statements are then assembled into one `PolicySet` whose policy ids are the
`@id` values, so cedarpy's reasons come back as the names people wrote.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib.machinery import PathFinder
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.authorization.observed import Observed, named_entities, observe
from verifier.authorization.shipped_policies import FORMAT, cedar_release, data_bytes, policies_digest
from verifier.core.cache import code_digest, entry_key, read_pickled, write_pickled
from verifier.core.cache import enabled as cache_enabled
from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.frozen import Frozen
from verifier.core.lazy import lazy_module
from verifier.core.limits import current_limits, exceeded, read_limited
from verifier.core.resources import display_path, shipped_policies_dir
from verifier.sources.inventory.validate import text_problem
from verifier.sources.inventory.yaml_source import decode_utf8

if TYPE_CHECKING:
    import cedarpy
    from cedarpy import pst
else:
    # Imported only when Cedar must parse, validate or decide: a bundle read back from the cache
    # with decisions read back too never needs it (verifier.authorization.evaluate).
    cedarpy = lazy_module("cedarpy")

SCHEMA_FILE = "schema.cedarschema"
POLICY_SUFFIX = ".cedar"
"""Policy files end so, in any case (`deny.CEDAR` too); every one under the directory is read."""
MAX_MESSAGE = 240
"""cedarpy messages can echo whole entity documents (megabytes); findings keep this much."""
KIND = "policies"
"""The cache entry kind of a validated policy directory (verifier.core.cache)."""
_CODE = ("policies.py", "observed.py")
"""The modules whose change can change what a validated policy directory holds."""


def short(message: str, limit: int = MAX_MESSAGE) -> str:
    """One line of at most `limit` characters: enough to act on, never a megabyte of JSON."""
    flat = " ".join(message.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True, repr=False, eq=False)
class Policy(Frozen):
    id: str
    effect: str  # "permit" or "forbid"
    loc: SourceLocation
    text: str
    """The statement as written (its own `@id`), from which the policy set is assembled."""
    named: tuple[str, ...] = ()
    """Uids of the entities it names (observed.named_entities), sorted: AUTHZ004 reports those that do
    not exist, which the policy would silently never match."""


@dataclass(frozen=True, repr=False, eq=False)
class PolicyBundle(Frozen):
    """A validated policy directory: its policies, what they observe, and the handles cedarpy reuses.

    The handles are made when first used: a bundle read back from the cache whose decisions
    are read back too (verifier.authorization.evaluate) never imports cedarpy.
    """

    directory: Path
    schema_text: str
    schema_shown: str
    """The schema as cedarpy prints it (what is searched for value-checked types)."""
    policies: dict[str, Policy]
    observed: Observed
    digest: str
    """Names everything the bundle holds and the cedarpy that validated it, for cache keys."""
    policy_json: str = field(default="", compare=False, repr=False)
    """The policy set in Cedar's JSON form, ids as `@id`s, when it was validated with the release
    (verifier.authorization.shipped_policies): one parse instead of one per statement."""

    def effect(self, policy_id: str) -> str:
        p = self.policies.get(policy_id)
        return p.effect if p is not None else "?"

    @cached_property
    def schema(self) -> cedarpy.Schema:
        return cedarpy.Schema.from_str(self.schema_text)

    @cached_property
    def policy_set(self) -> cedarpy.PolicySet:
        if self.policy_json:
            return cedarpy.PolicySet.from_json_str(self.policy_json)
        return _policy_set({p.id: _template(p.text) for p in self.policies.values()})


def default_policies() -> Path:
    """The shipped policies, named relative to the working directory when inside it (stable output)."""
    return display_path(shipped_policies_dir())


def load_policies(directory: Path) -> PolicyBundle:
    """The validated bundle of `directory` (TopologError on any problem).

    Read back from the cache when nothing validation reads has changed (_key): a CI gate
    asks the same directory run after run, and validating it needs cedarpy.
    """
    if not directory.is_dir():
        raise TopologError.at(SourceLocation(str(directory)), "no such policy directory")
    files = policy_files(directory)  # first: an unreadable folder is named as such
    schema_path = directory / SCHEMA_FILE
    if not schema_path.exists():
        raise TopologError.at(
            SourceLocation(str(directory)),
            f"no {SCHEMA_FILE} in the policy directory; policies are validated against it before use",
        )
    schema_text = _read_cedar(schema_path, "Cedar schema")
    if not "".join(_TOKEN.sub(lambda m: "" if m.group(0).startswith("//") else m.group(0), schema_text).split()):
        # Cedar reads it as a schema declaring nothing: every policy then fails validation, each
        # named as the problem, where the schema is.
        what = "is empty" if not schema_text.strip() else "holds only comments"
        raise TopologError.at(
            SourceLocation(str(schema_path), 1),
            f"{SCHEMA_FILE} {what}; expected the entity types and actions the policies are validated against",
        )
    key = _key(files, schema_path, schema_text) if cache_enabled() else None
    kept = read_pickled(KIND, key) if key is not None else None
    if isinstance(kept, _Kept):
        return PolicyBundle(directory, schema_text, kept.schema_shown, kept.policies, kept.observed, key or "")
    bundle = _compiled(directory, files, schema_text, key or "")
    if bundle is None:
        bundle = _validated(directory, files, schema_path, schema_text, key or "")
    if key is not None:
        write_pickled(KIND, key, _Kept(bundle.schema_shown, bundle.policies, bundle.observed))
    return bundle


def _key(files: list[Path], schema_path: Path, schema_text: str) -> str | None:
    """The cache entry of the directory: everything validation reads, and the code and limits it
    reads it under, so the same key is the same answer and an entry holds only directories that
    passed. None when a policy file is missing or unreadable: validation reports it, in its order.
    """
    parts = [repr(current_limits()), str(schema_path), schema_text]
    if not files:
        return None
    try:
        for path in files:
            parts += [str(path), _read_cedar(path, "policy file")]
    except TopologError:
        return None
    return entry_key(_code_digest(), parts)


@dataclass(frozen=True, repr=False, eq=False)
class _Kept(Frozen):
    """What a validated directory leaves in the cache: plain data, no cedarpy object."""

    schema_shown: str
    policies: dict[str, Policy]
    observed: Observed


def _compiled(directory: Path, files: list[Path], schema_text: str, key: str) -> PolicyBundle | None:
    """The bundle validated with the release (verifier.authorization.shipped_policies) when `directory`
    holds exactly the files it was validated from, under the same limits, code and cedarpy; None
    otherwise (validate them: any problem is then reported as validation reports it, in its order).
    """
    raw = data_bytes()
    cedar = cedar_release() if raw is not None else None
    if raw is None or cedar is None or not files:
        return None
    try:
        texts = [_read_cedar(path, "policy file") for path in files]
    except TopologError:
        return None
    names = [path.relative_to(directory).as_posix() for path in files]
    digest = policies_digest(repr(current_limits()), cedar, schema_text, list(zip(names, texts, strict=True)))
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("digest") != digest:
            return None
        if data.get("files") != names:
            return None
        policies: dict[str, Policy] = {}
        for index, line, pid, effect, text, named in data["policies"]:
            loc = SourceLocation(str(files[index]), line)
            policies[pid] = Policy(pid, effect, loc, text, tuple(named))
        attributes, named_uids, context, tested, groupable = data["observed"]
        observed = Observed(
            frozenset(attributes),
            frozenset(named_uids),
            tuple((name, frozenset(values)) for name, values in context),
            frozenset(tested),
            groupable,
        )
        policy_json = json.dumps(data["policy_set"], ensure_ascii=False)
        return PolicyBundle(directory, schema_text, data["schema_shown"], policies, observed, key, policy_json)
    except (ValueError, KeyError, IndexError, TypeError):  # a damaged install's file: validate instead
        return None


def encoded(bundle: PolicyBundle, files: list[Path]) -> dict[str, object]:
    """What `_compiled` reads back of a validated bundle (of `files`): plain JSON values, sorted."""
    index = {str(path): i for i, path in enumerate(files)}
    observed = bundle.observed
    static: dict[str, object] = {}
    for p in bundle.policies.values():
        # Cedar's JSON form of the statement alone (id `policy0`), filed under its `@id`.
        (static[p.id],) = json.loads(cedarpy.policies_to_json_str(p.text))["staticPolicies"].values()

    def literals(values: frozenset[object]) -> list[object]:
        return sorted(values, key=lambda v: (type(v).__name__, str(v)))

    return {
        "schema_shown": bundle.schema_shown,
        "policies": [
            [index[p.loc.file], p.loc.line, p.id, p.effect, p.text, list(p.named)] for p in bundle.policies.values()
        ],
        "observed": [
            sorted(observed.attributes),
            sorted(observed.named),
            [[name, literals(values)] for name, values in observed.context],
            sorted(observed.context_tested),
            observed.groupable,
        ],
        "policy_set": {"staticPolicies": static, "templates": {}, "templateLinks": []},
    }


def _validated(directory: Path, files: list[Path], schema_path: Path, schema_text: str, key: str) -> PolicyBundle:
    """Every check, in order; the first problem found stops it (a TopologError naming file and line)."""
    deep = _too_deep(schema_text, 1)
    if deep is not None:
        raise TopologError.at(SourceLocation(str(schema_path), deep[0], deep[1]), deep[2])
    try:
        schema = cedarpy.Schema.from_str(schema_text)
    except ValueError as err:
        raise TopologError.at(SourceLocation(str(schema_path)), f"invalid Cedar schema: {short(str(err))}") from None
    if not files:
        raise TopologError.at(
            SourceLocation(str(directory)), "no *.cedar policy files; with no policy everything would be denied"
        )
    errors: list[Diagnostic] = []
    policies: dict[str, Policy] = {}
    templates: dict[str, pst.Template] = {}
    # Every file is split before any statement is parsed: a directory past policy_count is refused
    # in the time it takes to read it, at the first statement over the bound.
    split = [(path, text, split_statements(text)) for path in files for text in [_read_cedar(path, "policy file")]]
    bound, seen = current_limits().policy_count, 0
    for path, _, statements in split:
        if seen + len(statements) > bound:
            line = statements[bound - seen][0]
            total = sum(len(s) for _, _, s in split)
            raise TopologError.at(
                SourceLocation(str(path), line),
                exceeded(
                    "policy_count", f"the policy directory holds {total:,} policies; this is policy {bound + 1:,}"
                ),
            )
        seen += len(statements)
    for path, text, statements in split:
        if not statements:
            # An emptied file (truncated, saved over, a failed copy) reads as no policy: where it
            # held a forbid, the requests it denied would be allowed without a word.
            what = "is empty" if not text.strip() else "holds only comments"
            errors.append(
                Diagnostic(
                    SourceLocation(str(path), 1),
                    f"policy file {what}; expected at least one permit or forbid policy "
                    "(remove the file if it is meant to hold none)",
                )
            )
            continue
        for line, statement in statements:
            loc = SourceLocation(str(path), line)
            deep = _too_deep(statement, line)
            if deep is not None:
                errors.append(Diagnostic(SourceLocation(str(path), deep[0], deep[1]), deep[2]))
                continue
            checked = _check_statement(statement, loc, schema, errors)
            if checked is None:
                continue
            policy, template = checked
            if policy.id in policies:
                errors.append(Diagnostic(loc, f"policy id {policy.id!r} is already used at {policies[policy.id].loc}"))
                continue
            policies[policy.id] = policy
            templates[policy.id] = template
    if errors:
        raise TopologError(errors)
    bundle = PolicyBundle(directory, schema_text, str(schema), policies, observe(templates.values()), key)
    # The handles made here are the bundle's: kept, not made again on first use.
    bundle.__dict__["schema"] = schema
    bundle.__dict__["policy_set"] = _policy_set(templates)
    return bundle


def _policy_set(templates: dict[str, pst.Template]) -> cedarpy.PolicySet:
    """One PolicySet whose policy ids are the `@id` values (cedarpy's reasons then name them)."""
    static = {pid: dataclasses.replace(t, id=pid) for pid, t in sorted(templates.items())}
    return cedarpy.PolicySet.from_pst(cedarpy.pst.PolicySet(templates={}, static_policies=static, template_links=()))


def _template(statement: str) -> pst.Template:
    """The syntax tree of one validated statement (a static policy)."""
    (template,) = cedarpy.PolicySet.from_str(statement).to_pst().static_policies.values()
    return template


@cache
def _code_digest() -> bytes:
    """The validating code of this package, and the cedarpy that validates: a change of either is a miss."""
    # Where it is installed, and so which build it is, without importing it (nor touching the
    # lazy module in sys.modules, whose first attribute read would import it).
    found = PathFinder.find_spec("cedarpy")
    build: list[str] = []
    if found is not None and found.submodule_search_locations:
        for folder in found.submodule_search_locations:
            for entry in sorted(Path(folder).iterdir()):
                if entry.suffix in (".py", ".so", ".pyd"):
                    info = entry.stat()
                    build.append(f"{entry.name}:{info.st_size}:{info.st_mtime_ns}")
    return entry_key(code_digest("verifier.authorization", _CODE), build).encode()


def _check_statement(
    statement: str, loc: SourceLocation, schema: cedarpy.Schema, errors: list[Diagnostic]
) -> tuple[Policy, pst.Template] | None:
    try:
        parsed = cedarpy.PolicySet.from_str(statement).to_pst()
    except ValueError as err:
        errors.append(Diagnostic(loc, f"policy does not parse: {short(str(err))}"))
        return None
    if parsed.templates:
        errors.append(
            Diagnostic(loc, "policy templates (?principal / ?resource slots) are not supported; write a static policy")
        )
        return None
    (template,) = parsed.static_policies.values()
    pid = template.annotations.get("id", "")
    if not pid:
        errors.append(Diagnostic(loc, 'policy has no @id("...") annotation; decisions name policies by it'))
        return None
    problem = text_problem(pid)
    if problem is None and len(pid) > current_limits().id_length:
        problem = exceeded("id_length", f"is {len(pid):,} characters long")
    if problem is not None:
        # Decisions, audits and findings print the id: it must stay one printable line.
        errors.append(Diagnostic(loc, f"policy id {pid!r} {problem}"))
        return None
    result = cedarpy.validate_policies(statement, schema)
    if not result.validation_passed:
        for e in result.errors:
            errors.append(Diagnostic(loc, f"policy {pid!r} is not valid against the schema: {short(e.error)}"))
        return None
    return Policy(pid, template.effect, loc, statement, named_entities(template)), template


def _read_cedar(path: Path, what: str) -> str:
    """A Cedar file's text: bounded by file_size, strict UTF-8, the error located.

    Only a regular file (or a link to one) is read: a FIFO or a device would read as empty
    or never end, and a policy file read as empty is a forbid gone, so the gate would open.
    """
    try:
        info = path.stat()
    except OSError as err:
        raise TopologError.at(SourceLocation(str(path)), f"cannot read {what}: {err.strerror or err}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise TopologError.at(
            SourceLocation(str(path)),
            f"cannot read {what}: it is {kind}; every {what} must be a regular file (the run is refused "
            "rather than deciding without the policies it may hold)",
        )
    return decode_utf8(read_limited(path, str(path), what), str(path))


def policy_files(directory: Path) -> list[Path]:
    """Every `*.cedar` file under `directory`, subfolders included, each once, sorted.

    The suffix is matched in any case. Links are followed, and a file reached by several
    names (a Kubernetes ConfigMap mount: `x.cedar -> ..data/x.cedar -> ..2026_../x.cedar`)
    is read once, under its shortest name. A folder that cannot be listed is a TopologError
    naming it: a policy it may hold cannot be left out without a word.
    """
    found: dict[tuple[int, int], Path] = {}
    seen_folders: set[tuple[int, int]] = set()
    policy_named_folders: list[Path] = []
    met: list[Path] = []  # every name a policy file was met under, links included
    pending = [directory]
    while pending:
        folder = pending.pop()
        try:
            info = folder.stat()
            if (info.st_dev, info.st_ino) in seen_folders:
                continue  # a link back up the tree: already listed
            seen_folders.add((info.st_dev, info.st_ino))
            entries = sorted(folder.iterdir())
        except OSError as err:
            raise TopologError.at(
                SourceLocation(str(folder)),
                f"cannot list the policy folder: {err.strerror or err}; every policy file under it must be read",
            ) from None
        for entry in entries:
            try:
                entry_info = entry.stat()
            except OSError as err:
                if entry.name.lower().endswith(POLICY_SUFFIX):
                    raise TopologError.at(
                        SourceLocation(str(entry)), f"cannot read policy file: {err.strerror or err}"
                    ) from None
                continue  # a dangling link that names no policy file
            if stat.S_ISDIR(entry_info.st_mode):
                pending.append(entry)
                if entry.name.lower().endswith(POLICY_SUFFIX):
                    policy_named_folders.append(entry)
            elif entry.name.lower().endswith(POLICY_SUFFIX):
                ident = (entry_info.st_dev, entry_info.st_ino)
                if not stat.S_ISREG(entry_info.st_mode):
                    _read_cedar(entry, "policy file")  # refuses it, naming the path
                met.append(entry)
                known = found.get(ident)
                if known is None or (len(entry.parts), str(entry)) < (len(known.parts), str(known)):
                    found[ident] = entry
    _refuse_empty_policy_named_folders(policy_named_folders, met)
    return sorted(found.values())


def _refuse_empty_policy_named_folders(folders: list[Path], met: list[Path]) -> None:
    """Refuse a folder named like a policy file (`fp64.cedar/`) that holds no policy file.

    Such a folder is most often a policy file replaced by a folder (a volume mounted over it,
    a deploy tool that made a directory where it meant a file): read as "no policies here",
    the forbid the file held would vanish and the gate open. A folder of policy files that
    happens to end in `.cedar` still holds them and is read as any subfolder.
    """
    if not folders:
        return
    real_met = [Path(os.path.realpath(name)) for name in met]
    for folder in folders:
        real = Path(os.path.realpath(folder))
        if any(name.is_relative_to(folder) for name in met) or any(r.is_relative_to(real) for r in real_met):
            continue
        raise TopologError.at(
            SourceLocation(str(folder)),
            "a folder named like a policy file holds no *.cedar file; expected the policy file itself "
            "(a file replaced by a folder would drop its policies unseen)",
        )


# Cedar ends a `//` comment at a carriage return as at a line feed (a file saved with CR line
# ends, as classic Mac editors do, is read so by cedarpy): a comment read to the next \n here
# would swallow the policies after it, and a forbid gone unseen opens the gate.
# A string is matched as a run of plain characters between escapes, not as one alternation per
# character ("(?:\\.|[^"\\])*"), which the regex engine keeps a frame for at each character: a
# 20 MB string literal in a policy took 21 s and 2.4 GB to split. The runs and the escapes are
# matched possessively (`*+`): a string ends at its first quote not escaped, so there is nothing
# to go back to, and a greedy `*` still kept a frame per escape (a 2 MiB string of `\n` escapes:
# 155 MB).
_BRACKETS = re.compile(
    r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|//[^\n\r]*|[\[({\])}]|\r\n|\r|\n|&&|\|\||[-+*!<>=.]=?|\b(?:in|has|like|is|if)\b'
)
_LINE_ENDS = ("\n", "\r", "\r\n")
OPERATORS_PER_LEVEL = 10
"""A policy may hold this many operators per level of nesting_depth (1,000 by default): Cedar's
parser recurses once per operator of a chain (`a && b && ...`) and, in native code, dies of
a stack overflow at about 2,000 of them, before its own limit of 100 levels applies."""


def _too_deep(statement: str, first_line: int) -> tuple[int, int, str] | None:
    """(line, column, message) where brackets nest past nesting_depth, else None.

    cedarpy parses recursively in native code: a policy nested a few thousand deep
    overflows its stack and kills the process, so the depth is checked before it parses.
    """
    limit = current_limits().nesting_depth
    depth = operators = 0
    line, line_start = first_line, 0
    for m in _BRACKETS.finditer(statement):
        tok = m.group(0)
        if tok in _LINE_ENDS:
            line, line_start = line + 1, m.end()
        elif tok in "([{":
            depth += 1
            if depth > limit:
                return (
                    line,
                    m.start() - line_start + 1,
                    exceeded("nesting_depth", f"policy nested {depth} levels deep here"),
                )
        elif tok in ")]}":
            depth = max(0, depth - 1)
        elif not tok.startswith(('"', "/")):
            operators += 1
            if operators > limit * OPERATORS_PER_LEVEL:
                found = f"policy holds more than {limit * OPERATORS_PER_LEVEL:,} operators (Cedar nests each one)"
                return (line, m.start() - line_start + 1, exceeded("nesting_depth", found))
        elif tok.startswith('"') and "\n" in tok:
            line, line_start = line + tok.count("\n"), m.start() + tok.rfind("\n") + 1
    return None


# A quote that opens no closed string (the last `"` of a file) is a token of its own: left out of
# the statement, a file Cedar refuses ("invalid token") would be read as valid here.
_TOKEN = re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"|//[^\n\r]*|;|\r\n|\r|\n|[^";/\n\r]+|/|"')


def split_statements(text: str) -> list[tuple[int, str]]:
    """Cedar text as `(first line, statement)` pairs, split at `;` outside strings and comments.

    The line is that of the statement's first token (its `@id` annotation, usually), not
    of the comment above it. Trailing text without `;` is returned as a statement too, so
    the parser reports it.
    """
    out: list[tuple[int, str]] = []
    line = 1
    start: int | None = None
    buf: list[str] = []
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if tok in _LINE_ENDS:
            line += 1
            buf.append(tok)
            continue
        if tok.startswith("//"):
            buf.append(tok)
            continue
        if start is None and tok.strip():
            start = line
        buf.append(tok)
        line += tok.count("\n")  # strings may span lines
        if tok == ";":
            out.append((start or line, "".join(buf)))
            buf, start = [], None
    if start is not None:
        out.append((start, "".join(buf)))
    return out
