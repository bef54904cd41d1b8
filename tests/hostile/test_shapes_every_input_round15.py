"""Hostile YAML shapes and paths in every YAML input kind, in-process: exit 2 with the file named
(and its line where the file has one), never a traceback, never a silent pass.

Shapes: an alias bomb (nine aliases of nine, nine levels: 9**9 nodes once expanded), a Python tag
(`!!python/object/apply`, code execution under an unsafe loader), a NUL byte, nesting past
nesting_depth, a duplicate key, and a symbolic link loop or a dangling link where the file should be.
Each was checked by hand on the round-15 tree (the base gave the same answers); this keeps them so.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
INV = str(ROOT / "inventories" / "edge-soc.yaml")
PRINCIPALS = (ROOT / "inventories" / "principals.yml").read_text(encoding="utf-8")
JOB = 'apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: j, principal: Team::"research", gpus: 1}\n'
SCENARIO = "apiVersion: topolog.dev/v1\nkind: Scenario\nmetadata: {name: s}\ndrain: [edge-m2-01]\n"
VALID = {
    "inventory": "apiVersion: topolog.dev/v1\nobjects:\n  - {name: n0, kind: node}\n",
    "principals": PRINCIPALS,
    "jobs": JOB,
    "thresholds": "leaf_oversubscription_permille: 2000\n",
    "config": "verify:\n  format: json\n",
    "scenario": SCENARIO,
    "waivers": 'waivers:\n  - {rule: TOPO005, subject: "x/*", reason: RMA, expires: 2099-01-31}\n',
}
BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)


def _args(kind: str, f: str) -> list[str]:
    return {
        "inventory": ["verify", f],
        "principals": ["verify", INV, "--principals", f],
        "jobs": ["place", INV, f, "--no-authorization"],
        "thresholds": ["verify", INV, "--thresholds", f],
        "config": ["--config", f, "verify", INV],
        "scenario": ["place", INV, f"{ROOT}/inventories/jobs/portable.yaml", "--no-authorization", "--scenario", f],
        "waivers": ["verify", INV, "--waivers", f],
    }[kind]


def _shape(valid: str, shape: str) -> str:
    first, rest = valid.split("\n", 1)
    return {
        "alias-bomb": BOMB,
        "python-tag": valid + 'evil: !!python/object/apply:os.system ["true"]\n',
        "nul": first + "\n\x00" + rest,
        "deep": "[" * 500 + "]" * 500 + "\n",
        # The first line that is no comment again at the end: a top-level key written twice.
        "duplicate-key": valid + next(x for x in valid.splitlines() if not x.startswith("#")) + "\n",
    }[shape]


@pytest.mark.parametrize("shape", ["alias-bomb", "python-tag", "nul", "deep", "duplicate-key"])
@pytest.mark.parametrize("kind", sorted(VALID))
def test_a_hostile_document_is_refused_at_its_line(kind: str, shape: str, tmp_path: Path) -> None:
    f = tmp_path / "f.yaml"
    f.write_text(_shape(VALID[kind], shape), encoding="utf-8")
    code, _out, err = run_cli(*_args(kind, str(f)))
    assert "Traceback" not in err and "internal error" not in err, err
    assert code == 2, err
    assert f"error: {f}:" in err, err  # file:line


@pytest.mark.parametrize("link", ["loop", "dangling"])
@pytest.mark.parametrize("kind", sorted(VALID))
def test_a_link_to_no_file_is_refused_naming_it(kind: str, link: str, tmp_path: Path) -> None:
    f = tmp_path / "f.yaml"
    if link == "loop":
        os.symlink(tmp_path / "g.yaml", f)
        os.symlink(f, tmp_path / "g.yaml")
    else:
        os.symlink(tmp_path / "gone.yaml", f)
    code, _out, err = run_cli(*_args(kind, str(f)))
    assert "Traceback" not in err and "internal error" not in err, err
    assert code == 2, err
    assert str(f) in err, err


@pytest.mark.parametrize("kind", sorted(VALID))
def test_the_valid_documents_are_read(kind: str, tmp_path: Path) -> None:
    # The control: each VALID document as written is not refused (0 or 1: findings are not refusals).
    f = tmp_path / "f.yaml"
    f.write_text(VALID[kind], encoding="utf-8")
    code, _out, err = run_cli(*_args(kind, str(f)))
    assert code in (0, 1), err
