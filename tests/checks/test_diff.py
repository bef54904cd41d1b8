"""`topolog diff`: findings added/resolved by fingerprint, watched relations, --rev from git."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "rules" / "fixtures" / "TOPO004"
GOOD = (FIXTURES / "pass.yaml").read_text()
# The same inventory with n1/gpu3's only NVSwitch link down instead of degraded: n1's GPUs split
# into {gpu0, gpu1, gpu2} and {gpu3}, which TOPO005 reports at the override's link line (19:13).
SPLIT = GOOD.replace("{a: gpu3, b: nvsw0, count: 3, state: degraded}", "{a: gpu3, b: nvsw0, state: down}")
assert SPLIT != GOOD
TOPOLOGY = (
    "--no-shipped-rules",
    "--rules",
    str(ROOT / "rules" / "schema.dl"),
    "--rules",
    str(ROOT / "rules" / "topology"),
)


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def _diff(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["diff", *args, *TOPOLOGY])
    return result.exit_code, result.stdout, result.stderr


def _lines(out: str) -> list[str]:
    """The report without the authorization relation, which is unchanged and declared only where authz is."""
    return [line for line in out.splitlines() if line != "permitted: unchanged"]


def _files(tmp_path: Path, old: str, new: str) -> tuple[str, str]:
    (tmp_path / "old.yaml").write_text(old)
    (tmp_path / "new.yaml").write_text(new)
    return "old.yaml", "new.yaml"


def test_change_that_splits_a_domain(tmp_path: Path) -> None:
    # pass.yaml has n1/gpu3's link degraded (n1 declares access_link_failure_mode 1: still in the
    # domain); the new file has it down.
    code, out, _ = _diff(*_files(tmp_path, GOOD, SPLIT))
    assert code == 1
    lines = _lines(out)
    assert lines[-1].startswith("1 added, 0 resolved; 2 of ")
    assert lines[-1].endswith(" watched relations changed: FAILED (--fail-on error)")
    assert lines[:-1] == [
        "comparing old.yaml -> new.yaml",
        "findings added (1):",
        "  + new.yaml:19:13: error TOPO005: GPU n1/gpu3 has fallen out of the one NVLink domain that n1 promises:"
        " every working scale-up link of it is gone, so it has no NVLink/xGMI peer;"
        " failed scale-up link(s): n1/gpu3<->n1/nvsw0. [n1/gpu3<->n1/nvsw0, n1/gpu3]",
        "findings resolved (0):",
        "node_domain_count: 1 rows added, 1 removed",
        '  - node_domain_count("n1", 1)',
        '  + node_domain_count("n1", 2)',
        "nvlink_domain: 1 rows added, 1 removed",
        '  - nvlink_domain("n1/gpu3", "n1/gpu0")',
        '  + nvlink_domain("n1/gpu3", "n1/gpu3")',
    ]


def test_change_that_repairs_a_domain_passes(tmp_path: Path) -> None:
    code, out, _ = _diff(*_files(tmp_path, SPLIT, GOOD))
    assert code == 0
    assert "  - old.yaml:19:13: error TOPO005: GPU n1/gpu3 has fallen out" in out
    assert _lines(out)[-1].startswith("0 added, 1 resolved; 2 of ")
    assert out.endswith(" watched relations changed: passed (--fail-on error)\n")


def test_moving_lines_changes_nothing(tmp_path: Path) -> None:
    code, out, _ = _diff(*_files(tmp_path, SPLIT, "# reordered\n\n" + SPLIT))
    assert code == 0
    assert "findings added (0):\nfindings resolved (0):\n" in out
    assert "nvlink_domain: unchanged" in out and "node_domain_count: unchanged" in out


def test_fail_on_counts_only_added_findings(tmp_path: Path) -> None:
    # Both sides carry the same error: the change did not add it, so it does not fail.
    code, _, _ = _diff(*_files(tmp_path, SPLIT, SPLIT))
    assert code == 0


def test_extra_relation_and_json(tmp_path: Path) -> None:
    old, new = _files(tmp_path, GOOD, GOOD.replace("count: 2\n", "count: 3\n", 1))  # a third hgx4 node, n2
    code, out, _ = _diff(old, new, "--relation", "node_of", "--format", "json")
    # The fixture's nodes have no NIC, so no GPU reaches one: one TOPO001 error, at the
    # template's GPU line, names every GPU stamped from it. The third node joins that finding
    # (same root cause, same fingerprint: the one of its first GPU, n0/gpu0) instead of adding one.
    assert code == 0
    doc = json.loads(out)
    assert doc["schemaVersion"] == 1 and doc["failed"] is False
    assert doc["old"] == ["old.yaml"] and doc["new"] == ["new.yaml"]
    assert doc["findings"]["added"] == []
    assert doc["findings"]["resolved"] == []
    assert sorted(set(doc["relations"]) - {"permitted"}) == ["node_domain_count", "node_of", "nvlink_domain"]
    assert doc["relations"]["node_of"]["columns"] == ["device", "node"]
    assert doc["relations"]["node_of"]["added"] == [
        [f"n2/{d}", "n2"] for d in ("gpu0", "gpu1", "gpu2", "gpu3", "nvsw0")
    ]
    assert doc["relations"]["node_domain_count"] == {
        "columns": ["node", "domains"],
        "added": [["n2", 1]],
        "removed": [],
    }
    assert doc["relations"]["nvlink_domain"]["added"] == [[f"n2/gpu{i}", "n2/gpu0"] for i in range(4)]


def test_input_relation_no_rule_reads(tmp_path: Path) -> None:
    old, new = _files(tmp_path, GOOD, GOOD.replace("  - name: plain\n", "  - name: plain\n    labels: {role: spare}\n"))
    code, out, _ = _diff(old, new, "--relation", "label")
    assert code == 0
    assert 'label: 1 rows added, 0 removed\n  + label("plain", "role", "spare")\n' in out


def test_unknown_relation_is_exit_2(tmp_path: Path) -> None:
    code, out, err = _diff(*_files(tmp_path, GOOD, GOOD), "--relation", "nvlink_domian")
    assert code == 2 and out == ""
    assert "relation 'nvlink_domian' is not declared" in err and "did you mean 'nvlink_domain'" in err


def test_one_inventory_without_rev_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    code, _, err = _diff("a.yaml")
    assert code == 2 and "--rev" in err


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_rev_compares_with_the_committed_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / "inventories").mkdir(parents=True)
    _git(repo, "init", "-q")
    inv = repo / "inventories" / "pod.yaml"
    inv.write_text(GOOD)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "good")
    inv.write_text(SPLIT)
    monkeypatch.chdir(repo)
    code, out, _ = _diff("inventories/pod.yaml", "--rev", "HEAD")
    assert code == 1
    assert out.splitlines()[0] == "comparing HEAD:inventories/pod.yaml -> inventories/pod.yaml"
    assert "  + inventories/pod.yaml:19:13: error TOPO005:" in out

    # The other way round, the resolved finding is located in the revision, not a temporary file.
    _git(repo, "commit", "-q", "-am", "split")
    inv.write_text(GOOD)
    code, out, _ = _diff("inventories/pod.yaml", "--rev", "HEAD")
    assert code == 0
    assert "  - HEAD:inventories/pod.yaml:19:13: error TOPO005:" in out

    # From a subdirectory, paths are relative to it.
    monkeypatch.chdir(repo / "inventories")
    code, out, _ = _diff("pod.yaml", "--rev", "HEAD~1")
    assert code == 0 and "comparing HEAD~1:pod.yaml -> pod.yaml" in out


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_rev_errors_are_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.yaml").write_text(GOOD)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "a")
    (repo / "b.yaml").write_text(GOOD)
    (repo / "bad.yaml").write_text("objects: [\n")
    _git(repo, "add", "bad.yaml")
    _git(repo, "commit", "-q", "-m", "bad")
    (repo / "bad.yaml").write_text(GOOD)
    monkeypatch.chdir(repo)
    code, _, err = _diff("a.yaml", "--rev", "no-such-branch")
    assert code == 2 and "a.yaml: cannot read it at revision no-such-branch" in err
    code, _, err = _diff("b.yaml", "--rev", "HEAD")  # not committed yet
    assert code == 2 and "b.yaml: cannot read it at revision HEAD" in err
    code, _, err = _diff("bad.yaml", "--rev", "HEAD")  # broken at the revision: named as HEAD:bad.yaml
    assert code == 2 and "error: HEAD:bad.yaml:2:1: YAML syntax error" in err
