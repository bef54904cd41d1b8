"""A long string of escapes in a policy is split in memory of its own size (review 60 of 5479ed3).

5479ed3 matched a string as runs of plain characters between escapes, so a long plain string no
longer kept a regex frame per character; but the engine still kept one per escape: a 2 MiB string
of `\\n` escapes took about 155 MB to split (1 MiB escapes, whole-process peak), 20 MB of them
about 1.5 GB, under the 256 MiB a policy file may hold. The runs and the escapes are now matched
possessively (nothing to go back to: a string's end is its first quote not escaped), which keeps
no frame per escape. The strings matched are the same (checked on every string of up to 7
characters over quote, backslash, a letter, line ends, slash and semicolon, old pattern vs new).
"""

from __future__ import annotations

import tracemalloc

import pytest

from verifier.authorization.analysis.smt_schema import _TOKEN as SCHEMA_TOKEN
from verifier.authorization.policies import _too_deep, split_statements


@pytest.mark.parametrize("escape", ["\\n", '\\"', "\\\\", "\\u{1F600}"])
def test_a_string_of_a_million_escapes_is_split_without_a_frame_per_escape(escape: str) -> None:
    body = escape * (1 << 20)
    text = f'@id("a")\nforbid (principal, action, resource) when {{ principal.name == "{body}" }};\n'
    tracemalloc.start()
    try:
        ((line, statement),) = split_statements(text)
        assert _too_deep(statement, line) is None
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (line, statement) == (1, text.rstrip("\n"))
    # The text is 2-9 MiB (one escape of 2 to 9 characters, 2**20 times); the statement is a copy of
    # it: well under 64 MiB. A frame per escape was about 150 bytes: 2**20 escapes, 150 MiB beyond
    # the copies (157 MB measured for `\\n`).
    assert peak < len(text) * 2 + (16 << 20), peak


def test_the_schema_tokenizer_reads_a_string_of_escapes_as_one_token() -> None:
    body = "\\n" * (1 << 20)
    text = f'"{body}" entity'
    tracemalloc.start()
    try:
        tokens = [m.group() for m in SCHEMA_TOKEN.finditer(text)]
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # By hand: the quoted string (one token), one space, the word `entity`.
    assert tokens == [f'"{body}"', " ", "entity"]
    assert peak < len(text) * 2 + (16 << 20), peak
