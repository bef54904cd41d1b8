"""A link id whose pattern renders an empty part is refused at the link (HI2, round 16).

ddacf549 refused a written `id:` with an empty part (`x/`, `a//b`, `/`), as written only: a value of a
`foreach` variable may be the empty string, so `x/{s}` with s: "" made the link `x/`, and `{s}` made
the empty id. Hand derivation of each case below: the value "" put in for {s}. `{s}/x` renders `/x`,
whose first part is empty (not the absolute id a written leading `/` makes); a value that itself
starts with `/` (`/abs`) is absolute as written there, and is kept.
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
    "  - {a: n0/gpu0, b: n0/gpu1, kind: nvlink, generation: 4, count: 18, id: %s, foreach: {s: %s}}\n"
)
TEMPLATE = (
    "apiVersion: topolog.dev/v1\n"
    "templates:\n"
    "  box:\n"
    "    kind: node\n"
    "    children: [{name: 'gpu{i}', kind: gpu, count: 2}]\n"
    "    links: [{a: gpu0, b: gpu1, kind: nvlink, generation: 4, count: 18, id: %s, foreach: {s: %s}}]\n"
    "objects:\n"
    "  - {template: box, name: 'n{i}', count: 2}\n"
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
    ("written", "rendered"),
    [("'x/{s}'", "x/"), ("'{s}'", ""), ("'/{s}'", "/"), ("'a/{s}/b'", "a//b"), ("'{s}/x'", "/x")],
)
def test_top_level_link_id_rendering_an_empty_part_is_refused(tmp_path: Path, written: str, rendered: str) -> None:
    errors, _ids = _load(tmp_path, TOP % (written, "['', q]"))
    # Line 9, column 5: the link's entry (its `- ` at column 3).
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"9:5: link id {rendered!r} (from {written.strip(chr(39))!r}) has an empty part"), (
        errors
    )


@pytest.mark.parametrize(("written", "rendered"), [("'d/{s}'", "d/"), ("'{s}/d'", "/d")])
def test_template_link_id_rendering_an_empty_part_is_refused(tmp_path: Path, written: str, rendered: str) -> None:
    errors, _ids = _load(tmp_path, TEMPLATE % (written, "['', q]"))
    # Line 6, column 13: the template's link (`links: [{` puts it there); once, for both instances.
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"6:13: link id {rendered!r} (from {written.strip(chr(39))!r}) has an empty part"), (
        errors
    )


def test_whole_rendered_ids_are_kept(tmp_path: Path) -> None:
    # x/{s} over [a, b] makes x/a and x/b; {s} over ['/abs', q]: /abs is absolute as written (abs), q is q.
    assert _load(tmp_path, TOP % ("'x/{s}'", "[a, b]")) == ([], ["x/a", "x/b"])
    assert _load(tmp_path, TOP % ("'{s}'", "['/abs', q]")) == ([], ["abs", "q"])
    # In the template: d{s} over ['', q] is d and dq in each of n0 and n1 (no "/" left empty).
    assert _load(tmp_path, TEMPLATE % ("'d{s}'", "['', q]")) == ([], ["n0/d", "n0/dq", "n1/d", "n1/dq"])
