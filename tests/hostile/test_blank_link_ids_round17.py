"""A link id with a part of white space alone is refused at its line (HJ, round 17).

R-HI2 (round 16) saw `{s}` with s: " " load as the link " ": `link_id_problem` refused only parts
with no character at all. A written `id: " "` was already refused ("is empty", the field check), but
`a/ /b` and a rendered value of white space (a space, U+00A0) loaded. Derivation of each case: split
the id (one leading `/` dropped) at `/`; a part whose `str.strip()` is empty is the one named.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory

HEAD = (
    "apiVersion: topolog.dev/v1\n"
    "objects:\n"
    "  - name: n0\n"
    "    kind: node\n"
    "    children:\n"
    "      - {name: gpu0, kind: gpu}\n"
    "      - {name: gpu1, kind: gpu}\n"
    "links:\n"
)
LINK = "  - {a: n0/gpu0, b: n0/gpu1, kind: nvlink, generation: 4, count: 18, id: %s%s}\n"


def _load(tmp_path: Path, link_id: str, foreach: str = "") -> tuple[list[str], list[str]]:
    path = tmp_path / "inv.yaml"
    path.write_text(HEAD + LINK % (link_id, foreach), encoding="utf-8")
    try:
        inv = load_inventory([path])
    except TopologError as err:
        return [str(d).replace(f"{path}:", "") for d in err.diagnostics], []
    return [], sorted(inv.links)


def test_a_written_blank_part_is_refused_at_the_id(tmp_path: Path) -> None:
    # Line 9 is the link; `id: ` sits at column 70 (68 characters of the entry before it, 1-based).
    errors, _ = _load(tmp_path, "'a/ /b'")
    assert errors == [
        "9:70: 'id' in link n0/gpu0 - n0/gpu1: 'a/ /b' has a part that is only white space (' '); "
        "expected a link id such as 'n0-uplink' or 'rack1/cable7' "
        "(a leading '/' makes an id written in a node absolute)"
    ]


@pytest.mark.parametrize(("value", "rendered"), [("' '", " "), ("'\u00a0'", "\u00a0")])
def test_a_rendered_blank_id_is_refused_at_the_link(tmp_path: Path, value: str, rendered: str) -> None:
    # `{s}` over [value, q]: the first value renders the whole id as white space; q is whole.
    errors, _ = _load(tmp_path, "'{s}'", f", foreach: {{s: [{value}, q]}}")
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"9:5: link id {rendered!r} (from '{{s}}') has a part that is only white space"), errors


def test_white_space_inside_a_part_is_kept(tmp_path: Path) -> None:
    # 'rack 1/c 7': each part holds letters beside its space, so neither is blank; the id is kept as written.
    assert _load(tmp_path, "'rack 1/c 7'") == ([], ["rack 1/c 7"])
    assert _load(tmp_path, "'x/{s}'", ", foreach: {s: [a, b]}") == ([], ["x/a", "x/b"])
