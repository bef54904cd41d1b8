"""A defensive XML reader that keeps each element's line and path.

ElementTree cannot say on which line an element started, and findings must point back to
the tool's output, so elements are built here from expat events. Tool outputs never need
entity declarations: a document that declares entities (the shape of an entity-expansion
bomb) or refers to external entities is refused, and DTD references such as hwloc's
`<!DOCTYPE topology SYSTEM "hwloc2.dtd">` are never fetched.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from xml.parsers import expat

from verifier.core.errors import SourceLocation, TopologError
from verifier.core.limits import current_limits, exceeded, read_limited

MAX_ELEMENTS = 2_000_000  # a 4,096-core hwloc dump has ~20k elements; refuse absurd inputs early


@dataclass(slots=True)
class Element:
    tag: str
    attrs: dict[str, str]
    loc: SourceLocation
    path: str  # e.g. /system/cpu[0]/pci[1]/gpu[0]
    children: list[Element] = field(default_factory=list)
    text: str = ""

    def get(self, key: str) -> str | None:
        return self.attrs.get(key)

    def iter(self, tag: str) -> Iterator[Element]:
        for child in self.children:
            if child.tag == tag:
                yield child

    @property
    def where(self) -> str:
        """`file:line /path` for messages and the `source` label."""
        return f"{self.loc} {self.path}"


class _Refused(Exception):
    pass


def parse_xml(path: str | Path, filename: str | None = None) -> Element:
    name = filename or str(path)
    return parse_xml_bytes(read_limited(path, name), name)


def parse_xml_bytes(data: bytes, filename: str) -> Element:
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    stack: list[Element] = []
    counts: list[dict[str, int]] = [{}]
    root: list[Element] = []
    total = 0
    # Each element keeps its path from the root: unbounded depth would cost memory
    # quadratic in it (10^5 levels took 2 GiB), so depth is refused past the limit.
    max_depth = current_limits().nesting_depth

    def here() -> SourceLocation:
        return SourceLocation(filename, parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)

    def start(tag: str, attrs: dict[str, str]) -> None:
        nonlocal total
        total += 1
        if total > MAX_ELEMENTS:
            raise _Refused(f"more than {MAX_ELEMENTS:,} elements; this is not a topology dump")
        if len(stack) >= max_depth:
            raise _Refused(exceeded("nesting_depth", f"elements nested {len(stack) + 1} levels deep here"))
        seen = counts[-1]
        k = seen.get(tag, 0)
        seen[tag] = k + 1
        parent_path = stack[-1].path if stack else ""
        el = Element(tag, dict(attrs), here(), f"{parent_path}/{tag}[{k}]" if stack else f"/{tag}")
        if stack:
            stack[-1].children.append(el)
        else:
            root.append(el)
        stack.append(el)
        counts.append({})

    def end(_tag: str) -> None:
        stack.pop()
        counts.pop()

    def chars(text: str) -> None:
        if stack:
            stack[-1].text += text

    def entity_decl(name: str, *_args: object) -> None:
        raise _Refused(f"the document declares entity {name!r}; tool outputs never do (refused: entity bomb risk)")

    def external_ref(*_args: object) -> int:
        raise _Refused("the document refers to an external entity; refused (it is never fetched)")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    parser.EntityDeclHandler = entity_decl
    parser.ExternalEntityRefHandler = external_ref
    try:
        parser.Parse(data, True)
    except _Refused as err:
        raise TopologError.at(here(), str(err)) from None
    except expat.ExpatError as err:
        loc = SourceLocation(filename, err.lineno, err.offset + 1)
        raise TopologError.at(loc, f"not well-formed XML: {expat.ErrorString(err.code)}") from None
    except LookupError as err:  # <?xml encoding="..."?> that Python has no codec for
        raise TopologError.at(
            SourceLocation(filename, 1), f"XML declares an encoding Python cannot read ({err}); expected UTF-8"
        ) from None
    if not root:  # pragma: no cover - expat reports "no element found" first
        raise TopologError.at(SourceLocation(filename, 1), "no XML element found")
    return root[0]
