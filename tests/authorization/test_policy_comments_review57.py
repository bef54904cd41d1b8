"""Review of 001c1ae: topolog splits a policy file into the same policies Cedar reads from it.

Cedar ends a `//` comment at a line feed or a carriage return, and at nothing else (not at U+2028,
U+0085 or a form feed); a `//` inside a string is no comment. Files are made of policies, comments
and line ends of every kind; the policies Cedar itself reads from the whole file (cedarpy) are the
expected answer, and topolog must read the same ones statement by statement, or refuse the file
where Cedar reads none. The generator is seeded: the same files every run.
"""

from __future__ import annotations

import random

import cedarpy

from verifier.authorization.policies import split_statements

_ENDS = ["\n", "\r", "\r\n", "\u2028", "\u0085", "\x0c", " "]
_IN_STRINGS = ["q", "//", "a;b", '\\"//', "/*"]
_IN_COMMENTS = ["", ";", '"', '@id("z")', "/*"]


def _file(rng: random.Random) -> str:
    parts = []
    for i in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.45:
            s = rng.choice(_IN_STRINGS)
            parts.append(f'@id("p{i}") forbid(principal, action, resource) when {{ context.x == "{s}" }};')
        elif r < 0.8:
            parts.append("// c" + rng.choice(_IN_COMMENTS) + rng.choice(_ENDS))
        else:
            parts.append(rng.choice(_ENDS))
    return "".join(parts)


def _ids(text: str) -> list[str] | None:
    try:
        parsed = cedarpy.PolicySet.from_str(text).to_pst()
    except ValueError:
        return None
    return [t.annotations["id"] for t in parsed.static_policies.values()]


def test_policies_split_as_cedar_reads_them() -> None:
    rng = random.Random(57)
    for _ in range(400):
        text = _file(rng)
        cedar = _ids(text)
        ours: list[str] = []
        refused = False
        for _line, statement in split_statements(text):
            got = _ids(statement)
            if got is None:
                refused = True
            else:
                ours += got
        if cedar is None:
            assert refused, repr(text)
        else:
            # Cedar reading no policy is a file topolog refuses (empty or comments only): no statement.
            assert not refused and sorted(ours) == sorted(cedar), repr(text)


def test_a_quote_that_opens_no_string_is_not_dropped() -> None:
    # The file's last `"` opens a string that never closes: Cedar refuses the whole file, so one of
    # topolog's statements must fail to parse too (the quote was skipped and the file read as valid).
    text = '@id("a") forbid(principal, action, resource);\n"\n'
    assert _ids(text) is None
    statements = split_statements(text)
    assert any(_ids(statement) is None for _line, statement in statements), statements
