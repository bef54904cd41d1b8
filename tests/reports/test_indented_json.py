"""verifier.reports.indented_json writes exactly what
`json.dumps(x, indent=N, sort_keys=..., ensure_ascii=...)` writes."""

from __future__ import annotations

import json
import random
import re

import pytest

from verifier.reports.indented_json import dumps


class Text(str):
    pass


class Count(int):
    pass


class Ratio(float):
    pass


ODD_STRINGS = ["", "a", "ä", "☃", "𝄞", '"', "\\", "\n", "\t", "\x00", "\x1f", "\x7f", "\u2028", 'Team::"a"', " x "]
FLOATS = [0.0, -0.0, 0.1, 1.5, 1e300, 1e-300, 123456789.123, float("inf"), float("-inf"), float("nan")]
SHARED_FLAT = {"b": 1, "a": 2}  # the same object at several depths: written once per depth, correctly at each
SHARED_NESTED = {"x": [1, {"y": SHARED_FLAT}]}

TRICKY: list[object] = [
    None,
    True,
    0,
    -(10**30),
    'ä"\\\n',
    *FLOATS,
    [],
    {},
    (),
    [[]],
    [{}],
    {"a": []},
    {"a": {}},
    [[], {}, [[]], [{}]],
    (1, (2, 3), [4]),
    list(ODD_STRINGS),
    {s: s for s in ODD_STRINGS},
    {"floats": FLOATS, "mixed": [1, "a", None, True, 2.5, [], {}]},
    {5: "int", 2.5: "float", True: "bool", False: "no", None: "none"},
    {3: "c", 1: "a", 2: "b"},
    {-1.5: 1, 0.25: 2},
    {"z": {"y": {"x": {"w": [1, [2, [3, []]]]}}}},
    {"sub": [Text("s"), Count(3), Ratio(0.5)], Text("k"): Count(1)},
    [SHARED_FLAT, SHARED_FLAT, {"in": SHARED_FLAT, "list": [SHARED_FLAT]}, SHARED_NESTED, SHARED_NESTED],
    {"gpus": {f"r{i}": i for i in range(50)}, "rows": [{"p": f"u{i}", "n": i} for i in range(5)]},
]


@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("indent", [2, 0, 1, 4])
@pytest.mark.parametrize("sort_keys", [True, False])
@pytest.mark.parametrize("value", TRICKY, ids=range(len(TRICKY)))
def test_hand_made_values(value: object, indent: int, sort_keys: bool, ensure_ascii: bool) -> None:
    try:
        expected = json.dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    except TypeError as err:  # keys of several types do not sort: then both refuse alike
        with pytest.raises(TypeError, match=f"^{re.escape(str(err))}$"):
            dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    else:
        assert dumps(value, indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii) == expected


def test_text_beyond_ascii_is_written_as_it_is_or_escaped() -> None:
    # By hand: "ä" is U+00E4 and "𝄞" U+1D11E, a surrogate pair (D834 DD1E) when escaped; a quote
    # and a newline are escaped either way; U+2028 too is written as it is without ensure_ascii.
    value = {"k": ["ä", "𝄞\u2028"], "ä": '"\n'}
    assert dumps(value, indent=1, sort_keys=True, ensure_ascii=False) == (
        '{\n "k": [\n  "ä",\n  "𝄞\u2028"\n ],\n "ä": "\\"\\n"\n}'
    )
    assert dumps(value, indent=1, sort_keys=True) == (
        '{\n "k": [\n  "\\u00e4",\n  "\\ud834\\udd1e\\u2028"\n ],\n "\\u00e4": "\\"\\n"\n}'
    )


def _random_value(rng: random.Random, depth: int, any_keys: bool) -> object:
    kind = rng.randrange(6 if depth < 4 else 2)
    if kind == 0:
        return rng.choice([None, True, False, rng.randint(-(10**20), 10**20), rng.choice(FLOATS)])
    if kind == 1:
        return rng.choice(ODD_STRINGS) + str(rng.randrange(3))
    if kind in (2, 3):
        items = [_random_value(rng, depth + 1, any_keys) for _ in range(rng.randrange(5))]
        return tuple(items) if kind == 3 else items
    keys: list[object] = [rng.choice(ODD_STRINGS) + str(rng.randrange(40)) for _ in range(rng.randrange(5))]
    if any_keys:
        keys += rng.sample([1, -2, 2.5, float("nan"), True, None], rng.randrange(3))
    return {k: _random_value(rng, depth + 1, any_keys) for k in keys}


def test_random_nested_values() -> None:
    rng = random.Random(20261202)
    for i in range(1000):
        ascii_only = i % 2 == 0  # both ways, as the reports write both
        # Keys of several types cannot be sorted (json raises too), so those go unsorted.
        value = _random_value(rng, 0, any_keys=True)
        assert dumps(value, indent=2, ensure_ascii=ascii_only) == json.dumps(value, indent=2, ensure_ascii=ascii_only)
        value = _random_value(rng, 0, any_keys=False)
        assert dumps(value, indent=2, sort_keys=True, ensure_ascii=ascii_only) == json.dumps(
            value, indent=2, sort_keys=True, ensure_ascii=ascii_only
        )


@pytest.mark.parametrize("value", [{"a": object()}, [1, {2, 3}], {(1, 2): 3}, {"a": [b"bytes"]}])
def test_what_json_refuses_is_refused(value: object) -> None:
    with pytest.raises(TypeError) as theirs:
        json.dumps(value, indent=2)
    with pytest.raises(TypeError, match=f"^{re.escape(str(theirs.value))}$"):
        dumps(value, indent=2)
