"""verifier.cli.yaml_first: PyYAML's pure reader compiles its NON_PRINTABLE pattern when first used,
and refuses exactly what it refused before.

A fresh interpreter is needed to see what importing yaml compiles; the rest runs in this process.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml

from verifier.cli import yaml_first


def test_the_pattern_is_pyyamls_own() -> None:
    # The deferral only applies to a pattern equal to PyYAML's; if PyYAML rewrote it, the test says so
    # (the run would be correct, only slower).
    assert yaml.reader.Reader.NON_PRINTABLE.pattern == yaml_first.NON_PRINTABLE


def test_the_cli_import_defers_it_until_searched() -> None:
    script = (
        "import verifier.cli.config, yaml\n"
        "p = yaml.reader.Reader.NON_PRINTABLE\n"
        "print(type(p).__name__, p._compiled is None)\n"
        "print(p.search('ok \\x07 bell').start(), p.search('tab\\tfine') is None, type(p._compiled).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    # Before any search: the stand-in, nothing compiled. After: 'ok \x07 bell' has its bell (U+0007,
    # outside every allowed range) at index 3; a tab (\x09) is allowed; the real Pattern is kept.
    assert done.stdout.splitlines() == ["CompiledWhenUsed True", "3 True Pattern"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("plain text", None),  # all in \x20-\x7E
        ("a\x07b", 1),  # BEL: below \x20, not tab/newline/return
        ("\x85next line", None),  # NEL is allowed
        ("x\x7f", 1),  # DEL: between \x7E and \x85
        ("ok \ufffe", 3),  # a noncharacter: past \uFFFD
        ("\U0001f600", None),  # astral: \U00010000-\U0010FFFF
    ],
)
def test_the_stand_in_finds_what_the_compiled_pattern_finds(text: str, found: int | None) -> None:
    stand_in = yaml_first.CompiledWhenUsed(yaml_first.NON_PRINTABLE, 0)
    match = stand_in.search(text)
    assert (match.start() if match else None) == found
    real = re.compile(yaml_first.NON_PRINTABLE).search(text)
    assert (real.start() if real else None) == found
