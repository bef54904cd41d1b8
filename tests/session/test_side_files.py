"""Side files are found by one rule: named by a flag, else beside the first inventory, else in the working folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.session.side_files import discover


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x: 1\n")
    return path


def test_next_to_the_inventory_wins_over_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inv = _touch(tmp_path / "site" / "inv.yaml")
    beside = _touch(tmp_path / "site" / "principals.yml")
    _touch(tmp_path / "principals.yml")
    _touch(tmp_path / "topolog.waivers.yaml")
    (tmp_path / "policies").mkdir()
    monkeypatch.chdir(tmp_path)
    side = discover([inv])
    assert side.principals == beside
    # Nothing beside the inventory: the working directory's file (named as the user would type it).
    assert side.waivers == Path("topolog.waivers.yaml")
    assert side.policies == Path("policies")
    assert side.thresholds is None and side.baseline is None


def test_a_flag_wins_and_a_named_file_that_is_missing_is_bad_input(tmp_path: Path) -> None:
    inv = _touch(tmp_path / "inv.yaml")
    _touch(tmp_path / "principals.yml")
    other = _touch(tmp_path / "people.yml")
    assert discover([inv], principals=other).principals == other
    with pytest.raises(TopologError, match="no such waivers file"):
        discover([inv], waivers=tmp_path / "nope.yaml")
    with pytest.raises(TopologError, match="no such policy directory"):
        discover([inv], policies=tmp_path / "nope")


def test_shipped_policies_when_none_is_found(tmp_path: Path) -> None:
    side = discover([_touch(tmp_path / "inv.yaml")], cwd=tmp_path)
    assert side.policies is None
    assert (side.policy_dir / "schema.cedarschema").is_file()


@pytest.mark.parametrize(
    ("name", "make", "says"),
    [
        # policies/ as a link to a folder that is gone (a mount that went away), or as a file: the
        # run had gone on with the shipped policies, not the ones written beside the inventory.
        ("policies", "dangling link", "it is a link that leads nowhere readable (No such file or directory)"),
        ("policies", "file", "it is a file; expected a folder of policies"),
        # A thresholds or principals name that is a folder: the defaults had been used, or no principals.
        ("topolog.thresholds.yaml", "folder", "it is a folder; expected a file"),
        ("principals.yml", "folder", "it is a folder; expected a file"),
    ],
)
def test_a_conventional_name_holding_the_wrong_kind_of_thing_is_bad_input(
    tmp_path: Path, name: str, make: str, says: str
) -> None:
    inv = _touch(tmp_path / "site" / "inv.yaml")
    # The working folder's own policies/ and principals.yml: the next place, which was used instead.
    (tmp_path / "policies").mkdir()
    _touch(tmp_path / "principals.yml")
    there = tmp_path / "site" / name
    if make == "dangling link":
        there.symlink_to(tmp_path / "gone")
    elif make == "file":
        _touch(there)
    else:
        there.mkdir()
    with pytest.raises(TopologError) as caught:
        discover([inv], cwd=tmp_path)
    (problem,) = caught.value.diagnostics
    assert str(problem.location) == str(there)
    assert problem.message.startswith(says)


def test_a_pipe_under_a_file_name_is_left_to_its_reader(tmp_path: Path) -> None:
    # A fifo named topolog.thresholds.yaml is taken, as a named side file may be a pipe.
    inv = _touch(tmp_path / "inv.yaml")
    os.mkfifo(tmp_path / "topolog.thresholds.yaml")
    assert discover([inv], cwd=tmp_path).thresholds == tmp_path / "topolog.thresholds.yaml"
