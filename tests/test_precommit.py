"""The shipped pre-commit hook, run by pre-commit itself on a temporary repository.

The test keeps the shipped definition (entry, files, options) and swaps only
`language: python` for `language: system` with the entry resolved in this
environment: `language: python` would build a fresh virtualenv and download every
dependency, which a test must not need.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
GOOD = (ROOT / "inventories" / "edge-soc.yaml").read_text()  # a shipped inventory, which passes
BROKEN = (ROOT / "tests" / "golden" / "stray-devices.yaml").read_text()

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="pre-commit needs git")


def _hook() -> dict[str, object]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["topolog-verify"]
    return dict(hooks[0])


def test_manifest_is_valid_for_pre_commit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    hook = _hook()
    assert hook["language"] == "python" and str(hook["entry"]).startswith("topolog verify")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def _run_hook(repo: Path, tmp: Path) -> subprocess.CompletedProcess[str]:
    hook = _hook()
    topolog = Path(sys.executable).parent / "topolog"
    hook.update(language="system", entry=str(hook["entry"]).replace("topolog", str(topolog), 1))
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [hook]}]}))
    _git(repo, "add", "-A")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp / "cache"), "SKIP": ""}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=repo, capture_output=True, text=True, env=env, check=False,
    )


def test_hook_fails_on_broken_inventory_and_passes_on_good(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "inventories").mkdir(parents=True)
    _git(repo, "init", "-q")
    inv = repo / "inventories" / "pod.yaml"
    inv.write_text(BROKEN)
    (repo / "notes.yaml").write_text("not: an inventory\n")  # outside `files`, so the hook must not read it

    failed = _run_hook(repo, tmp_path)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "topolog verify" in failed.stdout and "Failed" in failed.stdout
    assert "inventories/pod.yaml:6:9: error TOPO003: nic stray-nic is not inside any node." in failed.stdout

    inv.write_text(GOOD)
    passed = _run_hook(repo, tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
