"""Every install line of the README and docs/, run as written against this repository at its release tag.

The release is the newest `## X.Y.Z (date)` heading of CHANGELOG.md; its tag is `vX.Y.Z`
(docs/release.md). A user's machine reaches the repository at `https://github.com/<org>/topolog`;
here that address is a local clone of this checkout, its working tree committed and tagged
`vX.Y.Z` by the test itself: a CI clone may carry no tags, and the tag the lead creates at the
end would otherwise name an older commit than the one under test. Each line runs with bash in
a fresh virtualenv (and pipx's folders in the temporary directory), then the `topolog` it
installed must say the release's version, with no `.dev` or `+g<commit>` part, and verify a
shipped example: a version read from the tag through setuptools-scm, not from a file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from checkout_helpers import made_once, release, tagged_clone

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = "https://github.com/<org>/topolog"
# The lines for working on topolog itself, from a checkout: an editable install of the checkout
# one is in. .ci/run runs the README's `pip install -e '.[test]' && python -m pytest -q`.
DEVELOPMENT = "pip install -e "

pytestmark = pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="the tagged clone is made with git"
)


def _documents() -> list[Path]:
    """README.md, docs/ (the manifests of docs/deploy/ too) and the hook manifest, whose comment shows a rev."""
    docs = sorted(p for p in (ROOT / "docs").rglob("*") if p.suffix in (".md", ".yaml"))
    return [ROOT / "README.md", *docs, ROOT / ".pre-commit-hooks.yaml"]


def install_lines() -> list[str]:
    """Each distinct install command the documents show (comments and markdown quoting left out)."""
    found: set[str] = set()
    for doc in _documents():
        for line in doc.read_text().splitlines():
            text = line.strip().removeprefix("- run: ")
            for command in re.findall(r"((?:pipx? install|git clone) [^`#]*)", text):
                found.add(command.strip())
    return sorted(found)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone of this checkout, working tree committed, tagged as the release (made once per run)."""
    return made_once(tmp_path_factory, "release-clone", lambda folder: tagged_clone(folder / "topolog")) / "topolog"


def _environment(base: Path) -> dict[str, str]:
    """A fresh virtualenv first on PATH, pipx's folders under `base`; nothing of the test's own environment."""
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    env["PIPX_HOME"], env["PIPX_BIN_DIR"] = str(base / "pipx"), str(base / "bin")
    # pipx itself comes from the test extra (after the fresh venv on PATH); the line under test is what it installs.
    pipx = Path(sys.executable).parent
    env["PATH"] = os.pathsep.join([str(base / "bin"), str(venv / "bin"), env.get("PATH", ""), str(pipx)])
    env["VIRTUAL_ENV"] = str(venv)
    return env


def _url(clone: Path) -> str:
    # With the host written out: pip before 24 refuses `name @ git+file:///path` (the empty host).
    return f"file://localhost{clone.as_posix()}"


def test_every_install_line_names_the_release() -> None:
    """Each install line is a development line from a checkout or installs the release's tag."""
    tag = f"v{release()}"
    lines = install_lines()
    assert "pip install -e '.[test]' && python -m pytest -q" in lines  # the README's test command
    for line in lines:
        if line.startswith(DEVELOPMENT):
            continue
        assert UPSTREAM in line, line
        assert set(re.findall(r"\bv\d+\.\d+\.\d+\b", line)) == {tag}, line
    for doc in _documents():
        assert set(re.findall(r"\bv\d+\.\d+\.\d+\b", doc.read_text())) <= {tag}, doc


# Each line installs topolog and its dependencies into a fresh virtualenv from PyPI: 2.5-5 minutes
# on a 2-core machine shared with other work, so these run with `-m slow` (docs/release.md).
@pytest.mark.slow
@pytest.mark.parametrize("line", [line for line in install_lines() if not line.startswith(DEVELOPMENT)])
def test_install_line_works_as_written(line: str, clone: Path, tmp_path: Path) -> None:
    env = _environment(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", line.replace(UPSTREAM, _url(clone))],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    topolog = shutil.which("topolog", path=env["PATH"])
    assert topolog is not None and topolog.startswith(str(tmp_path)), topolog
    shown = subprocess.run([topolog, "--version"], env=env, capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == f"topolog, version {release()}"
    # edge-soc.yaml has no finding (tests/sources/inventory/test_shipped_inventories.py derives why):
    # the installed copy found its rule pack.
    shutil.copy(ROOT / "inventories" / "edge-soc.yaml", work / "edge.yaml")
    clean = subprocess.run([topolog, "verify", "edge.yaml"], cwd=work, env=env, capture_output=True, text=True)
    assert clean.returncode == 0 and "0 findings (0 error, 0 warning, 0 note)" in clean.stdout, clean.stdout
    if "[serve]" in line:
        served = subprocess.run([topolog, "serve", "--help"], env=env, capture_output=True, text=True)
        assert served.returncode == 0, served.stdout + served.stderr


def _hook_snippets() -> list[dict[str, object]]:
    """The `.pre-commit-config.yaml` snippets of README.md and docs/ (yaml blocks naming this repository)."""
    snippets: list[dict[str, object]] = []
    for doc in _documents():
        for block in re.findall(r"```yaml\n(.*?)```", doc.read_text(), re.DOTALL):
            if "repos:" not in block:
                continue  # inventories and other files shown side by side, not always one YAML document
            loaded = yaml.safe_load(block)
            if isinstance(loaded, dict) and "repos" in loaded:
                snippets.extend(r for r in loaded["repos"] if r.get("repo") == UPSTREAM)
    return snippets


@pytest.mark.slow  # builds the hook's virtualenv from PyPI: about 2 minutes
def test_pre_commit_snippet_works_as_written(clone: Path, tmp_path: Path) -> None:
    snippets = _hook_snippets()
    assert len(snippets) >= 2  # README.md and docs/ci.md
    assert {s["rev"] for s in snippets} == {f"v{release()}"}
    repo = tmp_path / "repo"
    (repo / "inventories").mkdir(parents=True)
    shutil.copy(ROOT / "inventories" / "edge-soc.yaml", repo / "inventories" / "edge.yaml")
    config = {"repos": [{**snippets[0], "repo": clone.as_uri()}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, capture_output=True)
    env = {**_environment(tmp_path), "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PRE_COMMIT_COLOR": "never"}
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert done.returncode == 0 and "topolog verify" in done.stdout and "Passed" in done.stdout, done.stdout
