"""A long string literal in a policy is split in memory of its own size (round 14, hostile inputs).

The statement splitter and the nesting check matched a string one alternation per character,
and the regex engine kept a frame for each: a policy holding a 20 MB string literal took 21 s
and 2.4 GB before any check refused it (whole-process timings). A string is now matched as runs
of plain characters between escapes: the same strings, in memory that does not grow with them.
"""

from __future__ import annotations

import tracemalloc

from verifier.authorization.policies import _too_deep, split_statements


def test_strings_escapes_and_comments_split_as_written() -> None:
    # By hand: statement 1 (lines 1-2) holds a string with an escaped quote and a `;` inside it;
    # statement 2 keeps the comment of line 3 (its `;` ends nothing) and starts at its first
    # token, the @id of line 4; its string ends in an escaped backslash, then `"`, then `;`.
    text = (
        '@id("a")\nforbid (principal, action, resource) when { principal.name == "x\\";y" };\n'
        '// c;\n@id("b") permit (principal, action, resource) when { principal.name == "\\\\" };\n'
    )
    assert [(line, s.strip()) for line, s in split_statements(text)] == [
        (1, '@id("a")\nforbid (principal, action, resource) when { principal.name == "x\\";y" };'),
        (4, '// c;\n@id("b") permit (principal, action, resource) when { principal.name == "\\\\" };'),
    ]


def test_a_one_mib_string_is_split_and_checked_without_a_frame_per_character() -> None:
    text = '@id("a")\nforbid (principal, action, resource) when { principal.name == "' + "x" * (1 << 20) + '" };\n'
    tracemalloc.start()
    try:
        ((line, statement),) = split_statements(text)
        assert _too_deep(statement, line) is None
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (line, statement) == (1, text.rstrip("\n"))
    # The statement itself is 1 MiB (one copy joined from its tokens, one str slice each): a few
    # MiB at most. The per-character frames took about 146 MiB here.
    assert peak < 16 << 20, peak
