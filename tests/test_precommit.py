"""The shipped pre-commit hook, exactly as shipped, run by pre-commit itself.

pre-commit reads the hook's definition (.pre-commit-hooks.yaml), picks the staged files its
`files` and `exclude` select and runs its `entry` on them: the way a user's commit meets it.
With `language: python` it first builds the hook's own virtualenv (pre-commit's `pip install .`
of the hook repository, about a minute and a half on the 2-core CI machine) and puts that
virtualenv's `bin` first on PATH, so the entry finds the `topolog` installed there.

The default run proves the hook as shipped without that build: every key of the shipped
definition is kept, only `language` becomes `system`, and the `topolog` the entry finds on PATH
is this interpreter's installed one (its `bin` first on PATH, as pre-commit puts the hook
env's). pre-commit's own file selection, `require_serial`, `pass_filenames` and the entry's
exit codes are then the shipped ones. That the hook env builds and holds a working `topolog`
(the repository installs with `pip install .`, as test_packaging's wheel shows too) is proven by
the same tests on a real hook env, in the slow run (`-m slow`): a `.pre-commit-config.yaml` naming
a snapshot of this checkout at a commit, as a user names the repository at a tag, and
`pre-commit try-repo` on this checkout as it is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from checkout_helpers import copy_checkout, made_once

ROOT = Path(__file__).resolve().parent.parent
GOOD = (ROOT / "inventories" / "edge-soc.yaml").read_text()  # a shipped inventory with no finding
BROKEN = (ROOT / "tests" / "golden" / "stray-devices.yaml").read_text()
SCRIPTS = sysconfig.get_paths()["scripts"]

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="pre-commit try-repo needs a git checkout"
)


def _hook() -> dict[str, object]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert [h["id"] for h in hooks] == ["topolog-verify"]
    return dict(hooks[0])


def test_manifest_is_valid_for_pre_commit() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(ROOT / ".pre-commit-hooks.yaml")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    hook = _hook()
    assert hook["language"] == "python" and str(hook["entry"]) == "topolog --quiet verify"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """PRE_COMMIT_HOME for the whole run: pre-commit locks its own store, so workers share it."""
    return made_once(tmp_path_factory, "pre-commit-home", lambda _folder: None)


def _snapshot(folder: Path) -> None:
    shadow = folder / "topolog"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(shadow)], check=True, capture_output=True)
    copy_checkout(shadow)
    _git(shadow, "add", "-A")
    _git(shadow, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "--allow-empty", "-m", "snap")


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A clone of this checkout with its working tree committed: (path, commit)."""
    shadow = made_once(tmp_path_factory, "hook-repo", _snapshot) / "topolog"
    rev = subprocess.run(
        ["git", "-C", str(shadow), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    return shadow, rev


def _env(cache: Path) -> dict[str, str]:
    env = {**os.environ, "PRE_COMMIT_HOME": str(cache), "SKIP": "", "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)  # the hook's own environment, not the one the tests run in
    # For a `language: system` copy of the hook, the `topolog` installed with this interpreter (a
    # hook env's bin is first on PATH the same way; a language: python hook ignores this entry).
    env["PATH"] = os.pathsep.join([SCRIPTS, env.get("PATH", "")])
    return env


def _try_repo(repo: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    _git(repo, "add", "-A")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "try-repo",
            str(ROOT),
            "topolog-verify",
            "--all-files",
            "--color",
            "never",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        env=_env(cache),
        check=False,
        timeout=600,
    )


def _run(repo: Path, cache: Path, config: dict[str, object]) -> subprocess.CompletedProcess[str]:
    """`pre-commit run --all-files` with `config` as the repository's .pre-commit-config.yaml."""
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    _git(repo, "add", "-A")
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=_env(cache),
        check=False,
        timeout=600,
    )


INSTALLED = "installed entry point"
HOOK_ENV = "hook env"
HOW = [INSTALLED, pytest.param(HOOK_ENV, marks=pytest.mark.slow)]


def _config(how: str, request: pytest.FixtureRequest) -> dict[str, object]:
    """The .pre-commit-config.yaml that runs the shipped hook `how` (see the module docstring).

    HOOK_ENV names the hook as a user names it (repository, rev, id): pre-commit builds its env.
    INSTALLED is a local hook holding every key of the shipped definition, `language: system`.
    """
    if how == HOOK_ENV:
        shadow, rev = request.getfixturevalue("snapshot")
        return {"repos": [{"repo": str(shadow), "rev": rev, "hooks": [{"id": "topolog-verify"}]}]}
    # The entry must find this interpreter's `topolog`, not one further along PATH.
    assert shutil.which("topolog", path=SCRIPTS), f"no topolog installed in {SCRIPTS}"
    return {"repos": [{"repo": "local", "hooks": [{**_hook(), "language": "system"}]}]}


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "inventories").mkdir(parents=True)
    _git(repo, "init", "-q")
    return repo


@pytest.mark.slow
def test_try_repo_fails_on_broken_inventory(tmp_path: Path, cache: Path) -> None:
    repo = _repo(tmp_path)
    (repo / "inventories" / "pod.yaml").write_text(BROKEN)
    (repo / "notes.yaml").write_text("not: an inventory\n")  # outside `files`: the hook must not read it
    failed = _try_repo(repo, cache)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "topolog verify" in failed.stdout and "Failed" in failed.stdout
    # stray-devices.yaml line 6, column 9 is the NIC written at the top level, outside every node.
    assert "inventories/pod.yaml:6:9: error TOPO003: nic stray-nic is not inside any node." in failed.stdout


@pytest.mark.parametrize("how", HOW)
def test_shipped_hook_fails_on_broken_inventory_and_passes_on_good(
    how: str,
    tmp_path: Path,
    cache: Path,
    request: pytest.FixtureRequest,
) -> None:
    repo, config = _repo(tmp_path), _config(how, request)
    inv = repo / "inventories" / "pod.yaml"
    inv.write_text(BROKEN)
    failed = _run(repo, cache, config)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "- exit code: 1" in failed.stdout  # findings, not bad input
    assert "inventories/pod.yaml:6:9: error TOPO003: nic stray-nic is not inside any node." in failed.stdout

    inv.write_text(GOOD)
    passed = _run(repo, cache, config)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


@pytest.mark.parametrize("how", HOW)
def test_default_files_leave_out_jobs_principals_and_side_files(
    how: str,
    tmp_path: Path,
    cache: Path,
    request: pytest.FixtureRequest,
) -> None:
    """None of these is an inventory: read as one, each would be exit 2 (unknown keys, wrong kind)."""
    repo, config = _repo(tmp_path), _config(how, request)
    (repo / "inventories" / "edge.yaml").write_text(GOOD)
    (repo / "notes.yaml").write_text("not: an inventory\n")  # outside `files` (^inventories/)
    (repo / "inventories" / "jobs").mkdir()
    shutil.copy(ROOT / "inventories" / "jobs" / "hpc.yaml", repo / "inventories" / "jobs" / "hpc.yaml")
    shutil.copy(ROOT / "inventories" / "principals.yml", repo / "inventories" / "principals.yml")
    (repo / "inventories" / "topolog.thresholds.yaml").write_text("# no overrides\n")
    (repo / "inventories" / "topolog.waivers.yaml").write_text("waivers: []\n")
    done = _run(repo, cache, config)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout


@pytest.mark.parametrize("how", HOW)
def test_two_clusters_staged_together_are_not_merged(
    how: str,
    tmp_path: Path,
    cache: Path,
    request: pytest.FixtureRequest,
) -> None:
    """Two edge SoCs with the same ids but different metadata.name are two inventories.

    Merged into one they would collide on every id (exit 2: duplicate ids); verified one
    cluster at a time each passes, as edge-soc.yaml does alone.
    """
    repo, config = _repo(tmp_path), _config(how, request)
    (repo / "inventories" / "edge-a.yaml").write_text(GOOD)
    assert "  name: edge-soc\n" in GOOD
    (repo / "inventories" / "edge-b.yaml").write_text(GOOD.replace("  name: edge-soc\n", "  name: edge-soc-b\n", 1))
    done = _run(repo, cache, config)
    assert done.returncode == 0, done.stdout + done.stderr

    # The same two files declaring one cluster are one inventory: every id then appears twice.
    (repo / "inventories" / "edge-b.yaml").write_text(GOOD)
    merged = _run(repo, cache, config)
    assert merged.returncode == 1 and "- exit code: 2" in merged.stdout, merged.stdout + merged.stderr
    assert "duplicate id 'edge-m2-01'" in merged.stdout
