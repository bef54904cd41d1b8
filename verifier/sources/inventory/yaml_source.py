"""Safe YAML loading that remembers where everything was written.

Only plain data comes back: mappings (`YMap`), sequences (`YList`), strings, integers,
booleans and None. No Python tags, no object construction (SafeConstructor only).

Design choices, each against a known YAML trap:
- Every mapping and sequence records its own line:col, and the line:col of each key and
  each item, so any problem found later can point at the exact place.
- Scalars follow YAML 1.2 core rules rather than PyYAML's 1.1 defaults: only
  `true`/`false` are booleans (so `no`, the country code, stays a string), only decimal
  digits without a leading zero are integers (`012` is not octal 10: it stays text), and
  anything with a dot stays text (`cuda: 12.10` must not become the float 12.1). Units
  code reads numeric text itself.
- Duplicate keys in one mapping are an error (PyYAML silently keeps the last).
- Aliases are counted on the composed node graph before anything is constructed: the
  size of the document with every alias expanded is computed with memoisation (linear in
  the text), and a document that would expand past `MAX_EXPANDED_NODES` is refused.
  PyYAML itself shares aliased objects, but every consumer that walks the result (our
  template expansion, a JSON dump) would do the exponential work of a "billion laughs".
- Input must be UTF-8 (a BOM is allowed) and must hold exactly one non-empty document.
- libyaml's parser (`yaml.cyaml.CParser`) composes the node graph when PyYAML has it
  (libyaml 0.2.6 or newer, see `LIBYAML_NESTING_BOUNDED`):
  several times faster, and it places every node at the same line:col. The two differ on
  tabs inside a line (libyaml takes them as blanks, PyYAML refuses them) and on a U+FEFF
  inside the text (PyYAML gives it no column), so text holding either is read by the pure
  parser; and libyaml words (and sometimes places) syntax errors its own way, so a
  document it cannot parse is read again by the pure parser, whose report is the one
  given. Our own refusals (duplicate keys, tags, alias bombs) come from the same code on
  the same nodes either way. Same input, same result, same errors, with or without libyaml.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader, ReaderError
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.core.gc_pause import collector_paused
from verifier.core.limits import current_limits, exceeded, read_limited, refuse_large_text
from verifier.core.suggest import did_you_mean

MAX_ALIAS_EXPANSION = 1_000_000
"""Nodes that aliases may add to a document beyond what is written. A large file written
out in full is fine (its size is bounded by its text); only the blow-up is bounded."""

LIBYAML_NESTING_BOUNDED = (0, 2, 6)
"""The first libyaml that refuses deep nesting itself. PyYAML's C composer recurses once per
level without Python's recursion check, so under an older libyaml a document nested some
tens of thousands of levels deep overflows the C stack and kills the process (seen with
PyYAML 6.0.1-6.0.3, which bundle libyaml 0.2.5): such a libyaml is not used at all."""

try:  # libyaml, when PyYAML was built with it (the wheels of every major platform are);
    # `yaml.cyaml.CParser` is this class, re-exported (and not declared so in the stubs).
    from yaml._yaml import CParser as _CParser
    from yaml._yaml import get_version as _libyaml_version

    HAVE_LIBYAML = tuple(_libyaml_version()) >= LIBYAML_NESTING_BOUNDED
except ImportError:  # pragma: no cover - a PyYAML without libyaml
    HAVE_LIBYAML = False

USE_LIBYAML = HAVE_LIBYAML
"""Whether documents are parsed by libyaml; tests switch it off to compare the two parsers."""

# Where libyaml and the pure parser disagree (see the module docstring).
_PURE_ONLY = ("\t", "\ufeff")


class _ReadAgain(Exception):
    """libyaml could not parse the text: the pure parser reads it and reports why."""


class YMap(dict[str, Any]):
    """A YAML mapping with the place it, and each of its keys, was written."""

    __slots__ = ("key_locs", "loc")

    def __init__(self, loc: SourceLocation) -> None:
        super().__init__()
        self.loc = loc
        self.key_locs: dict[str, SourceLocation] = {}

    def key_loc(self, key: str) -> SourceLocation:
        return self.key_locs.get(key, self.loc)


class YList(list[Any]):
    """A YAML sequence with the place it, and each of its items, was written."""

    __slots__ = ("item_locs", "loc")

    def __init__(self, loc: SourceLocation) -> None:
        super().__init__()
        self.loc = loc
        self.item_locs: list[SourceLocation] = []

    def item_loc(self, index: int) -> SourceLocation:
        return self.item_locs[index] if 0 <= index < len(self.item_locs) else self.loc


class _CoreResolver(BaseResolver):
    """YAML 1.2 core-schema-like implicit typing (see the module docstring)."""


_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
# Decimal integers only, and without leading zeros: PyYAML would read `012` as octal 10 and
# fail on `09` with a traceback; written with a leading zero it is text as written (a rack
# number `08` stays "08", and figure readers still take it as 8). Past a thousand digits it
# is text too (Python refuses to convert such a string), which every number reader refuses.
_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?(?:0|[1-9][0-9]{0,999})$"), list("-+0123456789")
)
_CoreResolver.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_CoreResolver.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])


class _Constructor(SafeConstructor):
    filename: str

    def _loc(self, node: Node) -> SourceLocation:
        mark = node.start_mark
        return SourceLocation(self.filename, mark.line + 1, mark.column + 1)

    def construct_yaml_map(self, node: MappingNode) -> Any:
        data = YMap(self._loc(node))
        yield data
        seen: dict[str, SourceLocation] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.value in seen:
                    first = seen[key_node.value]
                    raise ConstructorError(
                        None,
                        None,
                        f"duplicate key {key_node.value!r} (first written at line {first.line})",
                        key_node.start_mark,
                    )
                seen[key_node.value] = self._loc(key_node)
        self.flatten_mapping(node)
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise ConstructorError(
                    None,
                    None,
                    "a mapping key must be a plain word, not a list or mapping",
                    key_node.start_mark,
                )
            # Keys stay the text as written: `yes:` or `1:` keys must not turn into bool/int.
            key = str(key_node.value)
            data[key] = self.construct_object(value_node, deep=True)
            data.key_locs[key] = self._loc(key_node)

    def construct_yaml_seq(self, node: SequenceNode) -> Any:
        data = YList(self._loc(node))
        yield data
        for item in node.value:
            data.append(self.construct_object(item, deep=True))
            data.item_locs.append(self._loc(item))

    def construct_undefined(self, node: Node) -> Any:
        raise ConstructorError(None, None, f"tag {node.tag!r} is not allowed; only plain data is", node.start_mark)


_Constructor.add_constructor("tag:yaml.org,2002:map", _Constructor.construct_yaml_map)  # type: ignore[type-var]
_Constructor.add_constructor("tag:yaml.org,2002:seq", _Constructor.construct_yaml_seq)  # type: ignore[type-var]
_Constructor.add_constructor(None, _Constructor.construct_undefined)  # type: ignore[type-var]
# Timestamps, sets, binary and the like are not inventory data: read them as what was written.
for _tag in ("timestamp", "binary", "set", "omap", "pairs", "float"):
    _Constructor.add_constructor(f"tag:yaml.org,2002:{_tag}", _Constructor.construct_undefined)  # type: ignore[type-var]
_Constructor.add_constructor("tag:yaml.org,2002:str", SafeConstructor.construct_yaml_str)  # type: ignore[type-var]


class _PureLoader(Reader, Scanner, Parser, Composer, _Constructor, _CoreResolver):
    def __init__(self, stream: str, filename: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        _Constructor.__init__(self)
        _CoreResolver.__init__(self)
        self.filename = filename
        self.max_depth = current_limits().nesting_depth

    # The scanner refuses nesting past the limit as it opens it: every open flow collection
    # and every pushed block indent is a level of the document (it has at least that many),
    # and reading on would cost time quadratic in the depth (simple-key bookkeeping) and
    # recursion in the composer.
    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        self._refuse_past(self.flow_level + 1 + len(self.indents))
        super().fetch_flow_collection_start(TokenClass)

    def add_indent(self, column: int) -> bool:
        added: bool = super().add_indent(column)
        if added:
            self._refuse_past(self.flow_level + len(self.indents))
        return added

    def _refuse_past(self, depth: int) -> None:
        if depth > self.max_depth:
            mark = self.get_mark()
            raise TopologError.at(
                SourceLocation(self.filename, mark.line + 1, mark.column + 1),
                exceeded("nesting_depth", f"YAML nested {depth} levels deep here"),
            )


if HAVE_LIBYAML:

    class _CLoader(_CParser, _Constructor, _CoreResolver):
        def __init__(self, stream: str, filename: str) -> None:
            _CParser.__init__(self, stream)
            _Constructor.__init__(self)
            _CoreResolver.__init__(self)
            self.filename = filename


def _expanded_size(root: Node, filename: str) -> int:
    """Node count with every alias expanded, memoised per node: linear in the document.

    The same walk refuses what the limits bound (`nesting_depth`, `list_length`), at the
    node that passes them. Raises on a recursive alias (a node containing itself), which
    no inventory needs. Scalars (half the nodes) are counted where they are met, never
    pushed: an alias to a scalar adds one node, so only collections need the memo.
    """
    if isinstance(root, ScalarNode):
        return 1
    limits = current_limits()
    max_depth, max_items = limits.nesting_depth, limits.list_length
    sizes: dict[int, int] = {}
    on_stack: set[int] = set()
    actual = 0
    stack: list[tuple[Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        if done:
            on_stack.discard(key)
            total = 1
            for child in _children(node):
                total += 1 if isinstance(child, ScalarNode) else sizes[id(child)]
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if depth > max_depth:
            raise TopologError.at(
                _mark(node, filename), exceeded("nesting_depth", f"YAML nested {depth} levels deep here")
            )
        if len(node.value) > max_items:
            what = "list" if isinstance(node, SequenceNode) else "mapping"
            raise TopologError.at(
                _mark(node, filename),
                exceeded("list_length", f"this YAML {what} has {len(node.value):,} entries"),
            )
        actual += 1
        on_stack.add(key)
        stack.append((node, depth, True))
        for child in _children(node):
            if isinstance(child, ScalarNode):
                actual += 1
                continue
            if id(child) in on_stack:
                raise TopologError.at(
                    _mark(child, filename),
                    "recursive YAML alias (a node that contains itself); expected plain nested data",
                )
            if id(child) not in sizes:
                stack.append((child, depth + 1, False))
    total = sizes[id(root)]
    if total - actual > MAX_ALIAS_EXPANSION:
        raise TopologError.at(
            SourceLocation(filename, 1, 1),
            f"YAML aliases expand this document to {total:,} nodes (it has {actual:,} as written); "
            f"refusing more than {MAX_ALIAS_EXPANSION:,} nodes added by aliases (an alias bomb?); "
            "expected anchors and aliases used sparingly",
        )
    return total


def _mark(node: Node, filename: str) -> SourceLocation:
    mark = node.start_mark
    return SourceLocation(filename, mark.line + 1, mark.column + 1)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return node.value  # type: ignore[no-any-return]
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def decode_utf8(data: bytes, filename: str) -> str:
    """Strict UTF-8 (BOM allowed); the error names the line and column of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        start = err.start
        line = data.count(b"\n", 0, start) + 1
        col = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise TopologError.at(
            SourceLocation(filename, line, col),
            f"file is not UTF-8 (byte 0x{data[start]:02x} at offset {start}); expected UTF-8 text",
        ) from None


# What a YAML file is expected to hold, said when it holds nothing or no mapping: an inventory
# unless the caller (principals, scenario, thresholds) says which of topolog's files it is.
INVENTORY_EXPECTED = "an inventory with 'apiVersion: topolog.dev/v1'"


def load_yaml_text(text: str, filename: str, expected: str = INVENTORY_EXPECTED) -> YMap:
    """Parse one YAML document that must be a mapping. Raises TopologError with line:col.

    `expected` names what the file should hold, for the message when it is empty or not a mapping.
    """
    if not text.strip():
        raise TopologError.at(SourceLocation(filename, 1, 1), f"file is empty; expected {expected}")
    # Parsed, a document costs 90-300 bytes per byte: its size is bounded before parsing starts.
    refuse_large_text(text, filename)
    # Parsing makes millions of small objects and no cycles worth collecting (a recursive
    # alias is refused): the cyclic GC rescanning them took two thirds of the load time
    # with libyaml (measured on a 1.7 MB inventory).
    with collector_paused():
        if USE_LIBYAML and not any(ch in text for ch in _PURE_ONLY):
            try:
                return _load(text, filename, _CLoader, expected)
            except (_ReadAgain, UnicodeEncodeError):  # libyaml takes UTF-8: a lone surrogate fails there
                pass
        return _load(text, filename, _PureLoader, expected)


@contextmanager
def _parsing(text: str, filename: str, loader_class: type[Any]) -> Iterator[Any]:
    """A loader over `text`, its errors turned into TopologErrors at their line (or _ReadAgain:
    libyaml refused what the pure parser may read), disposed of at the end.
    """
    loader = None
    try:
        # The pure parser checks the characters as it is made: inside the try.
        loader = loader_class(text, filename)
        yield loader
    except yaml.YAMLError as err:
        if loader_class is not _PureLoader and not isinstance(err, ConstructorError):
            raise _ReadAgain from None
        raise _yaml_error(err, text, filename) from None
    except RecursionError:
        raise TopologError.at(
            SourceLocation(filename, 1, 1),
            "YAML nested deeper than the parser can follow (hundreds of levels); "
            f"expected at most nesting_depth = {current_limits().nesting_depth} levels",
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def _load(text: str, filename: str, loader_class: type[Any], expected: str) -> YMap:
    with _parsing(text, filename, loader_class) as loader:
        node = loader.get_single_node()
        if node is None:
            raise TopologError.at(
                SourceLocation(filename, 1, 1),
                f"file has no YAML content (only comments); expected {expected}",
            )
        _expanded_size(node, filename)
        data = loader.construct_document(node)
    if not isinstance(data, YMap):
        loc = SourceLocation(filename, node.start_mark.line + 1, node.start_mark.column + 1)
        raise TopologError.at(loc, f"top level is not a mapping; expected {expected}")
    return data


def load_yaml_stream(text: str, filename: str) -> list[YMap]:
    """Every document of a multi-document YAML stream (`---` between them), each a mapping.

    Kubernetes manifests come several to a file (`kubectl apply -f` reads them so); empty
    documents are skipped as kubectl skips them. The same checks as `load_yaml_text` apply
    to each document (limits, alias expansion, duplicate keys), with line:col in the file.
    """
    refuse_large_text(text, filename, what="YAML stream")  # all its documents are held at once
    with collector_paused():
        if USE_LIBYAML and not any(ch in text for ch in _PURE_ONLY):
            try:
                return _load_stream(text, filename, _CLoader)
            except (_ReadAgain, UnicodeEncodeError):
                pass
        return _load_stream(text, filename, _PureLoader)


def _load_stream(text: str, filename: str, loader_class: type[Any]) -> list[YMap]:
    docs: list[YMap] = []
    with _parsing(text, filename, loader_class) as loader:
        while loader.check_node():
            node = loader.get_node()
            if isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null":
                continue  # an empty document (two `---` in a row, or one at the end)
            _expanded_size(node, filename)
            data = loader.construct_document(node)
            if not isinstance(data, YMap):
                raise TopologError.at(_mark(node, filename), "document is not a mapping; expected keys such as 'kind'")
            docs.append(data)
    return docs


def _yaml_error(err: yaml.YAMLError, text: str, filename: str) -> TopologError:
    """PyYAML's error as a TopologError at its line:col."""
    if isinstance(err, ReaderError):
        at = err.position
        line, col = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        return TopologError.at(
            SourceLocation(filename, line, col),
            f"character {chr(err.character)!r} (#x{err.character:04x}) is not allowed in YAML: {err.reason}; "
            "expected printable text",
        )
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        parts = [p for p in (err.context, err.problem) if p]
        if "expected a single document" in " ".join(parts):
            parts = ["more than one YAML document (---) in one file; expected exactly one"]
        return TopologError.at(SourceLocation(filename, line, col), "YAML syntax error: " + "; ".join(parts))
    return TopologError.at(SourceLocation(filename, 1, 1), f"YAML error: {err}")


def load_yaml_file(path: str | Path, filename: str | None = None, expected: str = INVENTORY_EXPECTED) -> YMap:
    """Read `path` (bytes, at most `file_size` of them, so encoding errors are ours to report) and parse it."""
    name = filename if filename is not None else str(path)
    return load_yaml_text(decode_utf8(read_limited(path, name), name), name, expected)


def header_problems(doc: YMap, api_version: str, kind: str, sections: Iterable[str]) -> list[Diagnostic]:
    """What is wrong with the top of one of topolog's own side files (principals, scenarios): its
    `apiVersion` and `kind`, and any top-level key other than those, `metadata` and `sections`.
    """
    problems: list[Diagnostic] = []
    if doc.get("apiVersion") != api_version:
        problems.append(Diagnostic(doc.key_loc("apiVersion"), f"expected 'apiVersion: {api_version}'"))
    if doc.get("kind") != kind:
        problems.append(Diagnostic(doc.key_loc("kind"), f"expected 'kind: {kind}'"))
    allowed = ("apiVersion", "kind", "metadata", *sections)
    for key in doc:
        if key not in allowed:
            hint = did_you_mean(str(key), allowed)
            problems.append(
                Diagnostic(doc.key_loc(key), f"unknown key {key!r}; expected one of: {', '.join(allowed)}{hint}")
            )
    return problems
