"""Review R-HI2 (round 16) of 9b120353: a rendered link id opening with a value's own `/` is absolute.

9b120353 read a leading `/` of a rendered link id as an empty first part whenever the pattern's first
field held the empty string. With `{a}{b}` and a: "", b: "/abs", the `/` is b's own: the value
"/abs" is absolute as written, as it is when it stands alone (`{s}` with s: "/abs" makes `abs`).
Before 9b120353 these loaded (ids `abs` and `abs/x`); 9b120353 refused them as having an empty part.
An empty value before a written `/` (`{a}/x`, `{a}{b}/x` with both empty) is still refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory

TOP = (
    "apiVersion: topolog.dev/v1\n"
    "objects:\n"
    "  - name: n0\n"
    "    kind: node\n"
    "    children:\n"
    "      - {name: gpu0, kind: gpu}\n"
    "      - {name: gpu1, kind: gpu}\n"
    "links:\n"
    "  - {a: n0/gpu0, b: n0/gpu1, kind: nvlink, generation: 4, count: 18, id: %s, foreach: %s}\n"
)


def _load(tmp_path: Path, text: str) -> tuple[list[str], list[str]]:
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        inv = load_inventory([path])
    except TopologError as err:
        return [str(d).replace(f"{path}:", "") for d in err.diagnostics], []
    return [], sorted(inv.links)


@pytest.mark.parametrize(
    ("written", "foreach", "ids"),
    [
        # "" + "/abs" = "/abs": the `/` is b's, absolute as written, so the id is "abs".
        ("'{a}{b}'", "{a: [''], b: ['/abs']}", ["abs"]),
        # "" + "/abs" + "/x" = "/abs/x": absolute, "abs/x".
        ("'{a}{b}/x'", "{a: [''], b: ['/abs']}", ["abs/x"]),
        # Control: "" + "q" = "q".
        ("'{a}{b}'", "{a: [''], b: [q]}", ["q"]),
    ],
)
def test_a_value_opening_with_slash_after_an_empty_value_is_absolute(
    tmp_path: Path, written: str, foreach: str, ids: list[str]
) -> None:
    assert _load(tmp_path, TOP % (written, foreach)) == ([], ids)


@pytest.mark.parametrize(
    ("written", "foreach", "rendered"),
    [
        # "" + "" + "/x" = "/x": the written `/` follows nothing, an empty first part.
        ("'{a}{b}/x'", "{a: [''], b: ['']}", "/x"),
        # "" + "/" + "q" = "/q": the same, the written `/` between two values.
        ("'{a}/{b}'", "{a: [''], b: [q]}", "/q"),
    ],
)
def test_a_written_slash_after_empty_values_is_still_refused(
    tmp_path: Path, written: str, foreach: str, rendered: str
) -> None:
    errors, _ids = _load(tmp_path, TOP % (written, foreach))
    # Line 9, column 5: the link's entry.
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"9:5: link id {rendered!r} (from {written.strip(chr(39))!r}) has an empty part"), (
        errors
    )
