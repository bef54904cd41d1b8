"""The shipped policies validated with the release (verifier.authorization.shipped_policies): current,
the same bundle validation gives, and used only for the very files, limits and cedarpy they came from.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verifier.authorization import policies as policies_module
from verifier.authorization import shipped_policies
from verifier.authorization.compile_policies import compiled_text, data_path, main
from verifier.authorization.policies import SCHEMA_FILE, PolicyBundle, load_policies
from verifier.core.cache import ENV_DIR
from verifier.core.errors import TopologError
from verifier.core.limits import Limits, use_limits
from verifier.core.resources import shipped_policies_dir

ROOT = Path(__file__).resolve().parents[2]


def _compiled_for_installed_cedarpy() -> bool:
    import json

    return bool(json.loads(data_path().read_text(encoding="utf-8"))["cedarpy"] == shipped_policies.cedar_release())


# The data names the cedarpy release it was validated by; pip may install a newer one (cedarpy>=4.1),
# and then every user validates as before: what the last test below holds. The data is remade with
# that release by `python -m verifier.authorization.compile_policies` when topolog is released.
_SAME_CEDARPY = pytest.mark.skipif(
    not _compiled_for_installed_cedarpy(), reason="shipped_policies.json was made with another cedarpy release"
)


@pytest.fixture(autouse=True)
def _cache_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing read back from a per-user cache: every bundle below is the data's or validation's."""
    monkeypatch.setenv(ENV_DIR, "")


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", folder)
    return folder


def _validated(directory: Path) -> PolicyBundle:
    files = policies_module.policy_files(directory)
    schema_path = directory / SCHEMA_FILE
    schema_text = schema_path.read_text(encoding="utf-8")
    return policies_module._validated(directory, files, schema_path, schema_text, "")


@_SAME_CEDARPY
def test_committed_data_is_current() -> None:
    # A policy or the validating code edited without `python -m verifier.authorization.compile_policies`
    # fails here.
    assert data_path().read_text(encoding="utf-8") == compiled_text() + "\n", (
        "verifier/authorization/shipped_policies.json is stale: run python -m verifier.authorization.compile_policies"
    )
    assert main(["--check"]) == 0


@_SAME_CEDARPY
def test_shipped_bundle_is_the_validated_one(monkeypatch: pytest.MonkeyPatch) -> None:
    directory = shipped_policies_dir()
    # Validation would import cedarpy's validator: it must not run for the shipped files.
    monkeypatch.setattr(policies_module, "_validated", _refuse)
    bundle = load_policies(directory)
    monkeypatch.undo()
    validated = _validated(directory)
    assert bundle.policy_json
    assert bundle == validated  # policies (ids, effects, files and lines, text, named), observed, schema
    # policies/fp64.cedar: its first statement's @id is on line 4, its second's on line 12.
    assert bundle.policies["hpc-fp64-hardware"].loc.line == 4
    assert bundle.policies["fp64-reserved-for-hpc"].loc.line == 12
    assert bundle.policies["fp64-reserved-for-hpc"].effect == "forbid"
    assert bundle.policies["hpc-fp64-hardware"].loc.file == str(directory / "fp64.cedar")
    # The policy set Cedar decides with: the same ids and the same syntax trees either way.
    assert bundle.policy_set.to_pst() == validated.policy_set.to_pst()


def _refuse(*_: object) -> PolicyBundle:
    raise AssertionError("the shipped policies were validated again")


@_SAME_CEDARPY
def test_same_files_elsewhere_are_named_where_they_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _copy(tmp_path)
    monkeypatch.setattr(policies_module, "_validated", _refuse)
    bundle = load_policies(folder)
    assert bundle.policies["quarantine-closed"].loc.file == str(folder / "quarantine.cedar")
    assert bundle.policies["quarantine-closed"].loc.line == 4  # policies/quarantine.cedar:4 holds its @id


def test_an_edited_policy_is_validated(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    # An attribute the schema does not declare: validation refuses it; the data must not answer.
    path = folder / "interns.cedar"
    path.write_text(path.read_text(encoding="utf-8").replace("resource.consumer", "resource.consumerx"))
    with pytest.raises(TopologError, match="interns-consumer-only"):
        load_policies(folder)


def test_an_edited_but_valid_policy_is_validated(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    path = folder / "tenants.cedar"
    path.write_text(path.read_text(encoding="utf-8") + "\n// a comment changes the bytes, not the answer\n")
    files = policies_module.policy_files(folder)
    schema_text = (folder / SCHEMA_FILE).read_text(encoding="utf-8")
    assert policies_module._compiled(folder, files, schema_text, "") is None
    assert load_policies(folder) == _validated(folder)


@_SAME_CEDARPY
def test_other_limits_are_validated() -> None:
    directory = shipped_policies_dir()
    files = policies_module.policy_files(directory)
    schema_text = (directory / SCHEMA_FILE).read_text(encoding="utf-8")
    assert policies_module._compiled(directory, files, schema_text, "") is not None
    smaller = Limits(id_length=100)
    with use_limits(smaller):
        assert policies_module._compiled(directory, files, schema_text, "") is None


def test_another_cedarpy_or_a_damaged_file_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    directory = shipped_policies_dir()
    files = policies_module.policy_files(directory)
    schema_text = (directory / SCHEMA_FILE).read_text(encoding="utf-8")
    monkeypatch.setattr(policies_module, "cedar_release", lambda: "0.0.1")
    assert policies_module._compiled(directory, files, schema_text, "") is None
    monkeypatch.undo()
    for damaged in (
        b"{",
        b"[]",
        b'{"format": 1}',
        data_path().read_bytes().replace(b'"policies": [', b'"policies": [7,'),
    ):
        monkeypatch.setattr(policies_module, "data_bytes", lambda damaged=damaged: damaged)
        assert policies_module._compiled(directory, files, schema_text, "") is None
    assert shipped_policies.cedar_release() is not None
