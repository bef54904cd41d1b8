"""Each validation error, from a fixture file with deliberate mistakes: exact place and words."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory

FIXTURES = Path(__file__).parent / "fixtures"


def _errors(name: str) -> list[tuple[int, str]]:
    path = FIXTURES / name
    with pytest.raises(TopologError) as err:
        load_inventory([path])
    for d in err.value.diagnostics:
        assert d.location.file == str(path)
    return [(d.location.line, d.message) for d in err.value.diagnostics]


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        (
            "unknown_keys.yaml",
            [
                (5, "unknown key 'lables' in object 'n0'; did you mean 'labels'?"),
                (7, "unknown key 'modle' in object 'gpu0'; did you mean 'model'?"),
            ],
        ),
        ("duplicate_ids.yaml", [(5, "duplicate id 'r0' (first written at")]),
        ("dangling_link.yaml", [(9, "link endpoint 'n0/gpu7' does not exist; did you mean 'n0/gpu1'?")]),
        (
            "bad_units.yaml",
            [
                (9, "cannot read bandwidth '50 parsecs'"),
                (10, "bandwidth '0 GB/s' is zero"),
                (11, "bandwidth '-5 GB/s' is negative"),
            ],
        ),
        ("two_parents.yaml", [(10, "'sw0' is in two parents: 'r0'")]),
        ("cycle.yaml", [(3, "containment cycle: a -> b -> a")]),
        (
            "unknown_template.yaml",
            [
                (8, "unknown template 'dgx-h10'; did you mean 'dgx-h100'?"),
                (9, "unknown model 'H100-SXM5-80G' for 'n9/g'; did you mean 'H100-SXM5-80GB'?"),
            ],
        ),
        ("wrong_api.yaml", [(1, "unsupported apiVersion 'topolog.dev/v2'; expected 'topolog.dev/v1'")]),
        ("syntax_error.yaml", [(5, "YAML syntax error")]),
        ("not_utf8.yaml", [(3, "file is not UTF-8")]),
        ("empty.yaml", [(1, "file is empty")]),
        ("billion_laughs.yaml", [(1, "alias bomb")]),
    ],
)
def test_each_error_is_reported_at_its_line(fixture: str, expected: list[tuple[int, str]]) -> None:
    got = _errors(fixture)
    assert len(got) == len(expected), got
    for (line, message), (want_line, fragment) in zip(got, expected, strict=True):
        assert line == want_line, (line, message)
        assert fragment in message, message


def test_several_errors_in_one_file_are_all_reported() -> None:
    got = _errors("many_errors.yaml")
    assert [line for line, _ in got] == [4, 8, 10, 11]
    assert "unknown kind 'nod'" in got[0][1] and "did you mean 'node'?" in got[0][1]
    assert "unknown key 'colour'" in got[1][1]
    assert "link endpoint 'nowhere' does not exist" in got[2][1]
    assert "cannot read bandwidth 'fast'" in got[3][1]


def test_errors_from_several_files_are_merged() -> None:
    with pytest.raises(TopologError) as err:
        load_inventory([FIXTURES / "wrong_api.yaml", FIXTURES / "empty.yaml"])
    files = {Path(d.location.file).name for d in err.value.diagnostics}
    assert files == {"wrong_api.yaml", "empty.yaml"}


def test_catalogue_mig_profiles_read_and_checked() -> None:
    from verifier.core.errors import TopologError
    from verifier.sources.inventory.loader import load_inventory_text

    text = """\
apiVersion: topolog.dev/v1
catalog:
  models:
    - name: X1
      vendor: acme
      kind: gpu
      source: test
      mig: {2g.20gb: 3, 3g.40gb: 3, 1g10gb: 7}
objects:
  - {name: g0, kind: gpu, model: X1}
"""
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "c.yaml")
    errors = sorted(str(d) for d in err.value.diagnostics)
    assert len(errors) == 2
    assert all(e.startswith("c.yaml:8:") for e in errors)
    assert any("'1g10gb'" in e and "is not a profile name" in e for e in errors)
    assert any("3 instances of 3 compute slices do not fit the 7 of a GPU (expected 1 to 2)" in e for e in errors)
    fixed = text.replace(", 3g.40gb: 3, 1g10gb: 7", "")
    good = load_inventory_text(fixed, "c.yaml")
    assert good.models["X1"].mig == (("2g.20gb", 3),) and "mig" in good.models["X1"].features
    h100 = load_inventory_text(fixed.replace("model: X1", "model: H100-SXM5-80GB"), "c.yaml").models
    assert dict(h100["H100-SXM5-80GB"].mig)["1g.10gb"] == 7


def test_unknown_features_and_promises_get_a_did_you_mean() -> None:
    from verifier.core.errors import TopologError
    from verifier.sources.inventory.loader import load_inventory_text

    text = """\
apiVersion: topolog.dev/v1
catalog:
  models:
    - {name: X1, vendor: acme, kind: gpu, source: test, features: [fp64, nvlnk]}
objects:
  - {name: n0, kind: node, promises: [nvlink_domian], children: [{name: g0, kind: gpu, model: X1}]}
"""
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "w.yaml")
    errors = sorted(str(d) for d in err.value.diagnostics)
    assert len(errors) == 2
    assert errors[0].startswith("w.yaml:4:") and "unknown feature 'nvlnk'" in errors[0] and "'nvlink'" in errors[0]
    assert errors[1].startswith("w.yaml:6:") and "unknown promise 'nvlink_domian'" in errors[1]
    assert "did you mean 'nvlink_domain'" in errors[1]
