"""rule_pack.outside_shipped: which of a program's rule files a user wrote, decided as inside_shipped decides."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from verifier.core.resources import shipped_rules_dir
from verifier.engine.rule_pack import inside_shipped, outside_shipped


def test_the_shipped_pack_is_all_shipped_and_a_user_s_file_is_not(tmp_path: Path) -> None:
    shipped = sorted(str(p) for p in shipped_rules_dir().rglob("*.dl"))
    assert len(shipped) > 100  # the whole pack, by absolute path
    mine = tmp_path / "MY001_check.dl"
    mine.write_text("", encoding="utf-8")
    assert outside_shipped([*shipped, str(mine)]) == {str(mine)}


def test_relative_names_and_links_are_judged_by_where_they_lead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pack = shipped_rules_dir().resolve()
    one = next(iter(sorted(pack.rglob("*.dl"))))
    # Named relative to the working directory, through `..`: still the shipped file.
    monkeypatch.chdir(tmp_path)
    relative = os.path.relpath(one, tmp_path)
    # A link in the user's folder to a shipped file is the shipped file (its target decides);
    # a link inside a linked folder of the user's own is the user's.
    linked = tmp_path / "linked.dl"
    linked.symlink_to(one)
    own = tmp_path / "own"
    own.mkdir()
    (own / "X.dl").write_text("", encoding="utf-8")
    alias = tmp_path / "alias"
    alias.symlink_to(own)
    names = [relative, "linked.dl", str(alias / "X.dl"), "missing/none.dl", str(pack / "lib")]
    assert outside_shipped(names) == {str(alias / "X.dl"), "missing/none.dl"}
    # The same answers, one by one, from inside_shipped.
    assert outside_shipped(names) == {n for n in names if not inside_shipped(Path(n))}
