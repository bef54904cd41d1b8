"""A software value made by a pattern is judged once rendered, as a written one is, at the pattern's line.

`cuda: "{i}"` passed the release check as its text (a pattern is no figure) and was rendered later into
"122", which the check refuses when written and which passed every job minimum.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory

HEAD = "apiVersion: topolog.dev/v1\nkind: Inventory\nmetadata: {name: sw}\n"
TEMPLATE = (
    HEAD + "templates:\n  box:\n    kind: node\n    software:\n      cuda: CUDA\n"
    "    children:\n      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}\n"
    'objects:\n  - {name: "n{i}", template: box, count: COUNT, start: START}\n'
)


def _template(cuda: str, count: int, start: int) -> str:
    return TEMPLATE.replace("CUDA", cuda).replace("COUNT", str(count)).replace("START", str(start))


def _errors(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    try:
        load_inventory([path])
    except TopologError as err:
        return [str(d).replace(f"{path}:", "") for d in err.diagnostics]
    return []


def test_a_template_pattern_making_no_cuda_release_is_refused_per_node(tmp_path: Path) -> None:
    # Nodes n122 and n123 (count 2 from 122) get cuda "122" and "123": no major.minor, refused at line 8, the
    # `cuda:` key of the template (lines: 1 apiVersion, 2 kind, 3 metadata, 4 templates, 5 box, 6 kind,
    # 7 software, 8 cuda), column 7. One pattern is one error: n122's, with a count of n123's copy (review R-HI2).
    shown = _errors(tmp_path, _template('"{i}"', 2, 122))
    expected = "a CUDA release as major.minor such as '12.4' (or '12.4.131'), a minor of at most two digits"
    assert shown == [
        f"8:7: 'cuda' in software of n122: '122' cannot be a release of cuda; expected {expected} (made by its pattern)"
        " (and 1 more copy)"
    ]


def test_a_minor_of_three_digits_made_by_a_pattern_is_refused(tmp_path: Path) -> None:
    # "12.{i}" for nodes 98..101: 12.98 and 12.99 are releases (minor of two digits), 12.100 and 12.101 are not:
    # one error, n100's, with n101's as its one copy.
    shown = _errors(tmp_path, _template('"12.{i}"', 4, 98))
    assert [s.split(": ", 1)[1].split(";")[0] for s in shown] == [
        "'cuda' in software of n100: '12.100' cannot be a release of cuda",
    ]
    assert shown[0].endswith("(made by its pattern) (and 1 more copy)")


def test_an_object_pattern_making_releases_loads(tmp_path: Path) -> None:
    text = (
        HEAD
        + 'objects:\n  - {name: "n{i}", kind: node, count: 2, start: 4, software: {cuda: "12.{i}", rocm: "6.{i}"}}\n'
    )
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    inv = load_inventory([path])
    assert {k: dict(v) for k, v in inv.software.items()} == {
        "n4": {"cuda": "12.4", "rocm": "6.4"},
        "n5": {"cuda": "12.5", "rocm": "6.5"},
    }


@pytest.mark.parametrize("value", ['"{i}"', '"{i}.2.0"'])
def test_an_object_pattern_making_no_rocm_release_is_refused(tmp_path: Path, value: str) -> None:
    # rocm "7" (no minor) and "7.2.0" (a release): only the first is refused, at line 5 (the object's line).
    text = HEAD + f'objects:\n  - {{name: "n{{i}}", kind: node, count: 1, start: 7, software: {{rocm: {value}}}}}\n'
    shown = _errors(tmp_path, text)
    if value == '"{i}"':
        assert len(shown) == 1 and shown[0].startswith("5:") and "'7' cannot be a release of rocm" in shown[0]
    else:
        assert shown == []


@pytest.mark.parametrize(
    ("rocm", "refused"),
    [
        # hipconfig --version less its hash: HIP 6.2 is ROCm 6.2's (build 41133, five digits): read as 6.2.
        ("6.2.41133", False),
        # A four- or six-digit third number is neither ROCm's patch (at most three digits) nor HIP's build.
        ("6.2.4113", True),
        ("6.2.411330", True),
    ],
)
def test_hips_version_is_read_as_its_rocm_release(tmp_path: Path, rocm: str, refused: bool) -> None:
    text = HEAD + f'objects:\n  - {{name: n0, kind: node, software: {{rocm: "{rocm}"}}}}\n'
    shown = _errors(tmp_path, text)
    if refused:
        assert len(shown) == 1 and f"'{rocm}' cannot be a release of rocm" in shown[0], shown
        assert "such as '6.2.41133'" in shown[0]  # the message says what to write
    else:
        assert shown == []
        path = tmp_path / "inv.yaml"
        assert dict(load_inventory([path]).software["n0"]) == {"rocm": rocm}
