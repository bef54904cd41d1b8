"""Link ids with an empty part, and HIP's version with its git hash (round 16).

- A written link `id:` loses one leading `/` (absolute, as for link ends): `id: "/"` was stored as the
  empty id, `//x` as `/x`, and `x/` and `a//b` named no link any object holds. Now refused at the `id:`.
- `rocm: "6.2.41133-dd7f95766"` is what `hipconfig --version` prints; its hash starts with a letter, so
  it was taken for a word and never compared with a job's minimum. It is read as ROCm 6.2 (HIP's
  major.minor); a hash after a figure that is no release is still refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.software import version_number

HEAD = "apiVersion: topolog.dev/v1\nobjects:\n"
NODE = (
    "  - name: n0\n"
    "    kind: node\n"
    "    children:\n"
    "      - {name: gpu0, kind: gpu}\n"
    "      - {name: gpu1, kind: gpu}\n"
    "links:\n"
)


def _load(tmp_path: Path, text: str) -> tuple[list[str], list[str]]:
    """(errors less the file's name, link ids) of an inventory."""
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    try:
        inv = load_inventory([path])
    except TopologError as err:
        return [str(d).replace(f"{path}:", "") for d in err.diagnostics], []
    return [], sorted(inv.links)


@pytest.mark.parametrize("written", ["/", "//x", "x/", "a//b", "/x/"])
def test_link_id_with_an_empty_part_is_refused(tmp_path: Path, written: str) -> None:
    # The top-level link is on line 9 (1 apiVersion, 2 objects, 3-7 the node, 8 `links:`, 9 the link);
    # its `id:` key starts at column 70 (counted by hand) of the line written below.
    link = f'  - {{a: n0/gpu0, b: n0/gpu1, kind: nvlink, generation: 4, count: 18, id: "{written}"}}\n'
    errors, _ids = _load(tmp_path, HEAD + NODE + link)
    assert len(errors) == 1, errors
    assert errors[0].startswith("9:70:") and f"{written!r} has an empty part" in errors[0], errors


@pytest.mark.parametrize(("written", "stored"), [("/x", "x"), ("x", "x"), ("rack1/cable7", "rack1/cable7")])
def test_readable_link_ids_are_kept(tmp_path: Path, written: str, stored: str) -> None:
    link = f'  - {{a: n0/gpu0, b: n0/gpu1, kind: nvlink, generation: 4, count: 18, id: "{written}"}}\n'
    errors, ids = _load(tmp_path, HEAD + NODE + link)
    assert errors == [] and stored in ids, (errors, ids)


@pytest.mark.parametrize(
    ("rocm", "number"),
    [
        # hipconfig --version: HIP 6.2 ships with ROCm 6.2 (build 41133, hash dd7f95766): 6*1000 + 2.
        ("6.2.41133-dd7f95766", 6002),
        # The same with a hash starting with a digit (was read before too).
        ("6.3.42131-1d2e3f4a5", 6003),
    ],
)
def test_hips_version_with_its_hash_is_compared(tmp_path: Path, rocm: str, number: int) -> None:
    errors, _ids = _load(tmp_path, HEAD + f'  - {{name: n0, kind: node, software: {{rocm: "{rocm}"}}}}\n')
    assert errors == []
    assert version_number(rocm) == number


@pytest.mark.parametrize(
    ("component", "text"),
    [
        # A four-digit third number is neither ROCm's patch (at most three digits) nor HIP's build (five).
        ("rocm", "6.2.4113-dd7f95766"),
        # CUDA's patch has at most three digits (nvcc's 12.4.131): a hash does not make the rest a word.
        ("cuda", "12.4.12345-abcdef1"),
        # No third part: a hash only follows a three-part release.
        ("rocm", "6.2-dd7f95766"),
    ],
)
def test_a_hash_after_no_release_is_refused(tmp_path: Path, component: str, text: str) -> None:
    errors, _ids = _load(tmp_path, HEAD + f'  - {{name: n0, kind: node, software: {{{component}: "{text}"}}}}\n')
    assert len(errors) == 1 and f"'{text}' cannot be a release of {component}" in errors[0], errors


@pytest.mark.parametrize("text", ["12.4.1-rc1", "12.4.1-beta2", "12.4.1-alpha"])
def test_a_pre_release_word_is_still_not_read(text: str) -> None:
    # Pre-releases come before their release: not all hex, or too short for a hash, so not read.
    assert version_number(text) is None
