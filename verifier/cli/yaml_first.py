"""PyYAML, imported without compiling the pattern that only its pure-Python reader uses.

`import yaml` compiles yaml.reader.Reader.NON_PRINTABLE, a character class covering nearly all
of Unicode, when the class is defined: 57 M instructions (valgrind cachegrind), about 4 % of a
warm `verify` of a shipped example and 3 % of a cold one. Only the pure reader searches with it,
and libyaml reads nearly every file (verifier.sources.inventory.yaml_source keeps the pure parser
for what libyaml gets wrong), so the pattern is compiled the first time it is searched instead.

verifier.cli.config is the first module of a CLI run to import yaml and imports it from here.
Where yaml was imported already, or the pattern is not the one below (another PyYAML release),
yaml is imported as it always was.
"""

from __future__ import annotations

import re
import sys
from typing import Any

__all__ = ["yaml"]

NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
"""yaml.reader.Reader.NON_PRINTABLE's pattern, character for character (PyYAML 6.0; a test compares
it with the installed PyYAML's)."""


class CompiledWhenUsed:
    """A regular expression compiled when anything is first asked of it (a search, a match)."""

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return getattr(self._compiled, name)


def _import_yaml() -> None:
    if "yaml" in sys.modules:
        return
    compile_now = re.compile

    def compile_unless_deferred(pattern: Any, flags: Any = 0) -> Any:
        if pattern == NON_PRINTABLE and flags == 0:
            return CompiledWhenUsed(pattern, 0)
        return compile_now(pattern, flags)

    # Only while yaml's own modules run (one thread: the CLI is starting); every other pattern is
    # compiled as re.compile always compiles it.
    setattr(re, "compile", compile_unless_deferred)  # noqa: B010
    try:
        import yaml  # noqa: F401
    finally:
        setattr(re, "compile", compile_now)  # noqa: B010


_import_yaml()

import yaml  # noqa: E402
