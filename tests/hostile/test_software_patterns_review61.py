"""One software pattern that makes bad releases for many objects is one error (review R-HI2 of 3dba031).

3dba031 judges each value a pattern makes, but reported one error per object: a template of 3,000 nodes with
`cuda: "12.{i}"` filled the report's cap (1,000 errors) with one mistake. The project folds the copies of one
template line into its first error with a count (Problems.add `same=`), as it does for ids and links.
"""

from __future__ import annotations

from pathlib import Path

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory

TEXT = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: sw}
templates:
  box:
    kind: node
    software:
      cuda: "12.{i}"
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
objects:
  - {name: "n{i}", template: box, count: 1200, start: 1}
  - {name: loose, kind: node, software: {cuda: "12.400"}}
"""


def test_one_pattern_making_many_bad_releases_is_one_error_with_its_copies(tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(TEXT)
    try:
        load_inventory([path])
    except TopologError as err:
        shown = [str(d).replace(f"{path}:", "") for d in err.diagnostics]
    else:
        raise AssertionError("loaded")
    # By hand: nodes n1..n1200 get cuda 12.1 .. 12.1200; 12.1 .. 12.99 are releases (a minor of at most two
    # digits), 12.100 .. 12.1200 are not: 1,101 bad values of one pattern (line 8, column 7), shown once at the
    # first (n100) with 1,100 copies. The loose node's own written cuda "12.400" (line 13) is its own error.
    made = [s for s in shown if s.startswith("8:7:")]
    assert len(made) == 1
    assert made[0].startswith("8:7: 'cuda' in software of n100: '12.100' cannot be a release of cuda;")
    assert made[0].endswith("(made by its pattern) (and 1100 more copies)")
    assert any(s.startswith("13:") and "'12.400'" in s for s in shown), shown
