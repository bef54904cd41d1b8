"""A policy directory past `policy_count` is refused before any policy is parsed.

Each Cedar statement is parsed and validated on its own (so that a problem names its line): a
directory of 100,000 one-line policies took over a minute. The bound counts statements across
the directory's files and names the first one over it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verifier.authorization.policies import load_policies, split_statements
from verifier.core.errors import TopologError
from verifier.core.limits import Limits, use_limits

SHIPPED = Path(__file__).resolve().parents[2] / "policies"


def _directory(tmp_path: Path, extra: int) -> Path:
    folder = tmp_path / "policies"
    shutil.copytree(SHIPPED, folder, ignore=shutil.ignore_patterns("__*", "ALLOW", "DENY"))
    # zz.cedar sorts after the shipped files: each policy is two lines, the first at line 2*i + 1.
    (folder / "zz.cedar").write_text(
        "".join(
            f'@id("extra-{i}")\nforbid (principal, action, resource) when {{ principal.role == "r{i}" }};\n'
            for i in range(extra)
        ),
        encoding="utf-8",
    )
    return folder


def _shipped_count() -> int:
    return sum(len(split_statements(p.read_text(encoding="utf-8"))) for p in SHIPPED.glob("*.cedar"))


def test_a_directory_over_the_bound_names_the_first_policy_over_it(tmp_path: Path) -> None:
    shipped = _shipped_count()
    folder = _directory(tmp_path, 5)
    # Bound: the shipped policies and 2 more. The 3rd extra policy (index 2) is the first over: line 5.
    with use_limits(Limits(policy_count=shipped + 2)), pytest.raises(TopologError) as err:
        load_policies(folder)
    assert str(err.value) == (
        f"{folder / 'zz.cedar'}:5: the policy directory holds {shipped + 5:,} policies; this is policy "
        f"{shipped + 3:,}, over the limit policy_count = {shipped + 2:,}; raise it with --input-limit "
        "policy_count=VALUE if this input is genuine"
    )


def test_a_directory_at_the_bound_loads(tmp_path: Path) -> None:
    shipped = _shipped_count()
    with use_limits(Limits(policy_count=shipped + 5)):
        bundle = load_policies(_directory(tmp_path, 5))
    assert {f"extra-{i}" for i in range(5)} <= set(bundle.policies)
