"""topolog as users get it: an sdist and a wheel built from this checkout, installed into a
fresh virtualenv, every main command run from a folder outside the repository.

The wheel is built from the sdist (python -m build does that by default), so a file the
sdist forgets fails here too. The commands' answers are checked against what the shipped
examples hold, derived by hand below, not only for exit codes: an installed topolog that
found no rules would otherwise "pass" with 0 findings.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from checkout_helpers import copy_checkout, made_once, release, tagged_clone

ROOT = Path(__file__).resolve().parent.parent


def _pip_into(venv: Path) -> list[str]:
    """`pip install` into `venv` (made --without-pip) by this Python's pip, writing no .pyc files."""
    return [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-compile"]


def _build_env(folder: Path) -> None:
    """A venv holding `build` and pyproject.toml's build-system requires, and nothing else.

    Every build here runs in it with --no-isolation, which still refuses to build when a
    requirement the backend asks for is missing, instead of `build` making two fresh isolated
    environments per build (one for the sdist, one for the wheel built from it).
    """
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    pip = subprocess.run(
        [*_pip_into(folder), "build", *requires],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr


def _builder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of the run's one build venv (_build_env)."""
    return made_once(tmp_path_factory, "build-env", _build_env) / "bin" / "python"


def _build_and_install(base: Path, clone: Path, builder: Path) -> None:
    source, dist, venv, work = base / "src", base / "dist", base / "venv", base / "work"
    # The source as a `git archive` of the release tag leaves it (GitHub's source tarballs): no
    # .git, the version in .git_archival.txt, which git filled in (.gitattributes export-subst).
    source.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(clone), "archive", "--format=tar", f"v{release()}"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(source, filter="data")
    # Without PYTHONDONTWRITEBYTECODE, as on a user's machine (setuptools warns that it skips byte-compiling).
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
    built = subprocess.run(
        [str(builder), "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (base / "build.log").write_text(built.stdout + built.stderr)
    # The venv gets no pip of its own and pip writes no .pyc files (ensurepip and byte-compiling
    # numpy, z3 and duckdb were about half of this fixture's time): the wheel and its declared
    # dependencies are still all that is installed there, and Python compiles what it imports.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    wheel = next(dist.glob("topolog-*.whl"))
    pip = subprocess.run(
        [*_pip_into(venv), str(wheel)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    assert pip.returncode == 0, pip.stdout + pip.stderr
    # The examples, copied where no checkout is near: nothing may be found relative to the source.
    shutil.copytree(ROOT / "inventories", work / "inventories")
    shutil.copy(ROOT / "tests" / "sources" / "importers" / "fixtures" / "aws-p4d-24xl-topo.xml", work / "p4d.xml")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(the `topolog` executable of a fresh venv, a work folder outside the repo, the build log)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("building from the checkout needs git to list its files")
    clone = made_once(tmp_path_factory, "release-clone", lambda folder: tagged_clone(folder / "topolog")) / "topolog"
    builder = _builder(tmp_path_factory)
    base = made_once(tmp_path_factory, "packaging", lambda folder: _build_and_install(folder, clone, builder))
    return base / "venv" / "bin" / "topolog", base / "work", (base / "build.log").read_text()


def _topolog(installed: tuple[Path, Path, str], *args: str) -> subprocess.CompletedProcess[str]:
    exe, work, _log = installed
    # Python may write the .pyc files pip did not (--no-compile): the first command compiles what
    # it imports, once, as on a user's machine, and the next ones read them.
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    return subprocess.run(
        [str(exe), *args], cwd=work, capture_output=True, text=True, env=env, check=False, timeout=300
    )


def test_wheel_and_sdist_carry_rules_policies_and_licence(installed: tuple[Path, Path, str]) -> None:
    exe, _work, log = installed
    dist = exe.parent.parent.parent / "dist"
    wheel = zipfile.ZipFile(next(dist.glob("topolog-*.whl")))
    names = set(wheel.namelist())
    shipped = {p.relative_to(ROOT).as_posix() for p in (ROOT / "rules").rglob("*.dl")}
    assert shipped and {f"verifier/{p}" for p in shipped} <= names
    assert "verifier/rules/thresholds.yaml" in names and "verifier/rules/schema.dl" in names
    assert {"verifier/policies/schema.cedarschema", "verifier/policies/quarantine.cedar"} <= names
    assert {
        "verifier/schemas/inventory.schema.json",
        "verifier/sources/inventory/catalog.yaml",
        "verifier/py.typed",
    } <= names
    metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "License-Expression: Apache-2.0" in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    with tarfile.open(next(dist.glob("topolog-*.tar.gz"))) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert {"LICENSE", "rules/schema.dl", "policies/schema.cedarschema", "README.md"} <= members
    # Current setuptools accepts the licence metadata as written: no deprecation warning in the build.
    assert "SetuptoolsDeprecationWarning" not in log and "License classifiers are deprecated" not in log
    # A clean build log: no warning at all (the data folders are listed as packages, the version is read
    # from the archive's .git_archival.txt, which git filled in).
    # (File lists are left out: tests/reports/many-warnings.yaml is a file name, not a warning.)
    listed = ("copying ", "adding ", "creating ")
    assert [line for line in log.splitlines() if "warning" in line.lower() and not line.startswith(listed)] == []
    # The version of the archive's tag, not a fallback: setuptools-scm read it from .git_archival.txt.
    assert str(wheel.filename).endswith(f"topolog-{release()}-py3-none-any.whl")


def test_every_package_is_listed_for_packaging() -> None:
    """A package missing from [tool.setuptools] packages would be left out of the wheel; a folder of
    shipped data missing there makes setuptools warn once per folder in the build log.
    """
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "verifier").rglob("__init__.py")}
    data = {
        ".".join(("verifier", *folder.relative_to(ROOT).parts))
        for top in ("rules", "policies")
        for folder in (ROOT / top).rglob("*")
        if folder.is_dir() and folder.name != "__pycache__"
    } | {
        ".".join(folder.relative_to(ROOT).parts)
        for folder in (ROOT / "verifier").rglob("*")
        if folder.is_dir() and folder.name != "__pycache__" and not (folder / "__init__.py").exists()
    }
    assert found | data | {"verifier.rules", "verifier.policies"} == set(config["packages"])


def test_installed_commands_run_outside_the_repository(installed: tuple[Path, Path, str]) -> None:
    _exe, work, _log = installed
    assert not any((parent / ".git").exists() for parent in [work, *work.parents])

    rules = _topolog(installed, "rules")
    assert rules.returncode == 0, rules.stderr
    # One "## ID" heading per check file's `# @id`, counted in the source pack.
    ids = sorted(
        {
            line.split()[-1]
            for p in (ROOT / "rules").rglob("*.dl")
            for line in p.read_text().splitlines()
            if line.startswith("# @id")
        }
    )
    assert ids and all(f"## {i}" in rules.stdout for i in ids)

    # edge-soc.yaml has no finding at all (tests/sources/inventory/test_shipped_inventories.py derives why).
    clean = _topolog(installed, "verify", "inventories/edge-soc.yaml")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert f"0 findings (0 error, 0 warning, 0 note) from {len(ids)} checks" in clean.stdout

    # The pod carries its one documented error (inventories/README.md: dgx03/gpu2's degraded NVSwitch
    # link takes it out of NVLink under the fabric manager's default, TOPO005): exit 1, every check run.
    pod = _topolog(installed, "verify", "inventories/dgx-h100-pod.yaml", "--format", "json")
    assert pod.returncode == 1, pod.stdout + pod.stderr
    report = json.loads(pod.stdout)
    assert report["summary"]["checks"] == len(ids)
    assert [f["rule"] for f in report["findings"] if f["severity"] == "error"] == ["TOPO005"]

    # The shipped policies load and evaluate without error (policies/ found in the package).
    audit = _topolog(installed, "audit", "inventories/mixed-fleet.yaml", "--format", "json")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    decisions = json.loads(audit.stdout)
    assert decisions["errors"] == [] and decisions["groups"]

    # jobs/hpc.yaml: 8 FP64 GPUs on one node; policies/fp64.cedar gives team hpc only the
    # MI300X nodes of mixed-fleet.yaml, so both placements are MI300X nodes.
    place = _topolog(installed, "place", "inventories/mixed-fleet.yaml", "inventories/jobs/hpc.yaml")
    assert place.returncode == 0, place.stdout + place.stderr
    assert "1 of 1 jobs placeable" in place.stdout
    assert "1. mi300x-n" in place.stdout and "2. mi300x-n" in place.stdout

    # The GB200 NVL72 rack is one NVLink domain of 72 GPUs (inventories/gb200-nvl72.yaml).
    query = _topolog(installed, "query", "inventories/gb200-nvl72.yaml", "nvlink_domain(G, D)", "--format", "json")
    assert query.returncode == 0, query.stdout + query.stderr
    answer = json.loads(query.stdout)
    assert answer["count"] == 72 and len({row[1] for row in answer["rows"]}) == 1

    # An AWS p4d.24xlarge as NCCL dumps it: 8 A100 GPUs, written as an inventory and verified.
    imported = _topolog(installed, "import", "nccl-xml", "p4d.xml", "-o", "p4d.yaml")
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert (work / "p4d.yaml").read_text().count("kind: gpu") == 8
    again = _topolog(installed, "verify", "p4d.yaml")
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_copy_without_git_metadata_still_builds(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A copy of the source with no .git and an unfilled .git_archival.txt gets setuptools-scm's
    fallback version (pyproject.toml [tool.setuptools_scm] fallback_version), not a failed build.
    """
    source = tmp_path / "src"
    copy_checkout(source)
    assert not (source / ".git").exists() and "$Format:%H$" in (source / ".git_archival.txt").read_text()
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    dist = tmp_path / "dist"
    built = subprocess.run(
        [
            str(_builder(tmp_path_factory)),
            "-m",
            "build",
            "--no-isolation",
            "--sdist",
            "--outdir",
            str(dist),
            str(source),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    fallback = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools_scm"]["fallback_version"]
    assert [p.name for p in (tmp_path / "dist").iterdir()] == [f"topolog-{fallback}.tar.gz"]
