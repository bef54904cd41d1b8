"""A kept report (verifier/core/kept_report.py) answers only a run whose every input is unchanged.

The end-to-end tests run the console script (verifier.cli.entry.run) in a child process, in a
folder of their own with the shipped DGX H100 pod, its principals, policies and thresholds. A
first run is recorded; then its entry is re-signed with a marker in place of its output (the
test process holds the same signing key as the child: tests/conftest.py). A later run that
prints the marker answered from the kept entry; one that prints a real report did not. Each
kind of input is changed in turn, and the run after the change must not print the marker: a
test fails exactly when that input is missing from what names or checks the entry.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.checks.baseline import BASELINE_VERSION
from verifier.core import cache, kept_report
from verifier.core.kept_report import KeptRun

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "from verifier.cli.entry import run; run()"
MARKER = b"kept report, planted by the test\n"
POD = ["--quiet", "verify", "pod.yaml"]
"""--quiet: no progress line (a loaded test machine may take a second), so every such run may be kept."""
SITE_RULE = ROOT / "tests" / "rule_tests" / "site" / "site_hbm.dl"


def _topolog(
    site: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, date: str | None = None
) -> subprocess.CompletedProcess[bytes]:
    code = ENTRY
    if date is not None:
        # The kept entry is named by the local date (time.strftime); the child is told another one.
        code = (
            "import time; _strftime = time.strftime; "
            f"time.strftime = lambda f, *a: {date!r} if (f, a) == ('%Y-%m-%d', ()) else _strftime(f, *a); " + code
        )
    full_env = {**os.environ, cache.ENV_DIR: str(site / "cache"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd or site / "work",
        env=full_env,
        capture_output=True,
        check=False,
        timeout=300,
    )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "inventories" / "dgx-h100-pod.yaml", work / "pod.yaml")
    shutil.copy(ROOT / "inventories" / "principals.yml", work / "principals.yml")
    (work / "policies").mkdir()
    for policy in (ROOT / "policies").glob("*.cedar*"):
        shutil.copy(policy, work / "policies" / policy.name)
    (work / "topolog.thresholds.yaml").write_text("nic_pcie_ratio_permille: 1000\n", encoding="utf-8")
    (work / "rules").mkdir()
    shutil.copy(SITE_RULE, work / "rules" / SITE_RULE.name)
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))  # where _plant reads and writes
    return tmp_path


def _entries(site: Path) -> list[Path]:
    folder = site / "cache"
    return sorted(p for p in folder.iterdir() if p.name.startswith(f"{kept_report.KIND}-")) if folder.is_dir() else []


def _plant(site: Path) -> None:
    """The one kept run's entry, re-signed with MARKER as its whole output."""
    (entry,) = _entries(site)
    key = entry.name.removeprefix(f"{kept_report.KIND}-")
    data = cache.read_entry(kept_report.KIND, key)
    assert data is not None
    run = KeptRun.decode(data)
    assert run is not None
    planted = KeptRun(run.status, [(1, MARKER)], run.manifest)
    cache.write_entry(kept_report.KIND, key, planted.encode(), keep=kept_report.KEEP)


def _say_why_not_kept(site: Path, *args: str, **kw: object) -> None:
    """When the run just made was not kept: the same run once more, telling on stderr why not."""
    if _entries(site):
        return
    debug = {**kw.get("env", {}), "TOPOLOG_DEBUG": "1"}  # type: ignore[dict-item]
    why = _topolog(site, *args, **{**kw, "env": debug})  # type: ignore[arg-type]
    pytest.fail(f"the run was not kept: {why.stderr.decode(errors='replace')}")


def _recorded(site: Path, *args: str, **kw: object) -> subprocess.CompletedProcess[bytes]:
    """A first run, kept, then planted; and proof that the same run again answers from the entry."""
    first = _topolog(site, *args, **kw)  # type: ignore[arg-type]
    assert first.returncode in (0, 1), first.stderr
    _say_why_not_kept(site, *args, **kw)
    _plant(site)
    again = _topolog(site, *args, **kw)  # type: ignore[arg-type]
    assert again.stdout == MARKER, "the unchanged run did not answer from its kept entry"
    assert again.returncode == first.returncode
    return first


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


# -- a hit is the full run, byte for byte -------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_a_hit_writes_what_a_full_run_writes(site: Path, fmt: str) -> None:
    args = (*POD, "--format", fmt, "--rules", "rules")
    full = _topolog(site, *args, env={cache.ENV_DIR: ""})  # the cache off: nothing kept, nothing read
    first = _topolog(site, *args)
    _say_why_not_kept(site, *args)
    hit = _topolog(site, *args)
    # The pod has findings (an error among them), so exit 1, and a report on stdout.
    assert full.returncode == 1
    assert full.stdout
    for run in (first, hit):
        assert (run.returncode, run.stdout, run.stderr) == (full.returncode, full.stdout, full.stderr)


def test_a_hit_imports_only_the_cache(site: Path) -> None:
    _recorded(site, *POD)
    hit = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", ENTRY, *POD],
        cwd=site / "work",
        env={**os.environ, cache.ENV_DIR: str(site / "cache")},
        capture_output=True,
        check=False,
        timeout=300,
    )
    assert hit.stdout == MARKER
    names = [line.rsplit("|", 1)[-1].strip() for line in hit.stderr.decode().splitlines() if "|" in line]
    imported = set(names[names.index("site") + 1 :])  # what the interpreter's start-up imported aside
    assert {"verifier.core.kept_report", "verifier.core.cache"} <= imported
    heavy = {"click", "yaml", "cedarpy", "typing", "verifier.cli.main", "verifier.engine", "verifier.sources"}
    assert not heavy & imported


# -- every kind of input names or checks the entry ----------------------------------------------


def test_an_inventory_byte(site: Path) -> None:
    _recorded(site, *POD)
    # One byte: a digit of a figure in the pod (the run now reads other bytes, whatever it makes of them).
    data = bytearray((site / "work" / "pod.yaml").read_bytes())
    at = data.index(b"# ")
    data[at + 1 : at + 1] = b"x"
    (site / "work" / "pod.yaml").write_bytes(bytes(data))
    assert _topolog(site, *POD).stdout != MARKER


def test_a_second_file_of_the_cluster(site: Path) -> None:
    # Files with one metadata.name are one inventory: a catalogue beside it is read by every run.
    (site / "work" / "extra.yaml").write_text(
        "apiVersion: topolog.dev/v1\nkind: Inventory\nmetadata: {name: dgx-h100-pod}\nobjects: []\n# first\n",
        encoding="utf-8",
    )
    _recorded(site, *POD, "extra.yaml")
    _edit(site / "work" / "extra.yaml", "# first", "# second")
    assert _topolog(site, *POD, "extra.yaml").stdout != MARKER


def test_a_rule_file(site: Path) -> None:
    _recorded(site, *POD, "--rules", "rules")
    _edit(site / "work" / "rules" / SITE_RULE.name, "MB < 96000", "MB < 96001")
    assert _topolog(site, *POD, "--rules", "rules").stdout != MARKER


def test_a_rule_file_added_to_a_rules_folder(site: Path) -> None:
    _recorded(site, *POD, "--rules", "rules")
    (site / "work" / "rules" / "empty.dl").write_text("# nothing yet\n", encoding="utf-8")
    assert _topolog(site, *POD, "--rules", "rules").stdout != MARKER


def test_a_policy(site: Path) -> None:
    _recorded(site, *POD)
    policy = site / "work" / "policies" / "fp64.cedar"
    policy.write_text(policy.read_text(encoding="utf-8") + "\n// reviewed\n", encoding="utf-8")
    assert _topolog(site, *POD).stdout != MARKER


def test_a_policy_added_to_the_folder(site: Path) -> None:
    _recorded(site, *POD)
    shutil.copy(site / "work" / "policies" / "fp64.cedar", site / "work" / "policies" / "fp64-copy.cedar")
    assert _topolog(site, *POD).stdout != MARKER


def test_principals(site: Path) -> None:
    _recorded(site, *POD)
    principals = site / "work" / "principals.yml"
    principals.write_text(principals.read_text(encoding="utf-8") + "\n# reviewed\n", encoding="utf-8")
    assert _topolog(site, *POD).stdout != MARKER


def test_thresholds(site: Path) -> None:
    _recorded(site, *POD)
    _edit(site / "work" / "topolog.thresholds.yaml", "1000", "2000")
    assert _topolog(site, *POD).stdout != MARKER


def test_a_waivers_file_that_appears(site: Path) -> None:
    # Not there when the run was kept: the run looked for it (next to the inventory) and found nothing.
    _recorded(site, *POD)
    (site / "work" / "topolog.waivers.yaml").write_text("waivers: []\n", encoding="utf-8")
    assert _topolog(site, *POD).stdout != MARKER


def test_a_waiver(site: Path) -> None:
    waivers = site / "work" / "topolog.waivers.yaml"
    waivers.write_text(
        "waivers:\n  - rule: BW004\n    subject: '*'\n    reason: Known.\n    expires: 2030-01-01\n", encoding="utf-8"
    )
    _recorded(site, *POD)
    _edit(waivers, "2030-01-01", "2030-01-02")
    assert _topolog(site, *POD).stdout != MARKER


def test_a_baseline(site: Path) -> None:
    baseline = site / "work" / "baseline.json"
    # An empty baseline, as `--write-baseline` writes one (verifier/checks/baseline.py).
    empty = f'{{\n  "findings": [],\n  "schemaVersion": {BASELINE_VERSION},\n  "tool": "topolog"\n}}\n'
    baseline.write_text(empty, encoding="utf-8")
    _recorded(site, *POD, "--baseline", "baseline.json")
    baseline.write_text(empty.replace("[]", "[ ]"), encoding="utf-8")
    assert _topolog(site, *POD, "--baseline", "baseline.json").stdout != MARKER


def test_a_configuration_file_that_appears(site: Path) -> None:
    _recorded(site, *POD)
    (site / "work" / ".topolog.yaml").write_text("fail-on: warning\n", encoding="utf-8")
    assert _topolog(site, *POD).stdout != MARKER


def test_the_date(site: Path) -> None:
    _recorded(site, *POD, date="2026-12-06")
    assert _topolog(site, *POD, date="2026-12-07").stdout != MARKER


def test_an_environment_variable_set_before_the_run(site: Path) -> None:
    _recorded(site, *POD)
    assert _topolog(site, *POD, env={"NO_COLOR": "1"}).stdout != MARKER


def test_an_environment_variable_the_run_reads(site: Path) -> None:
    # _TOPOLOG_COMPLETE is read by click (shell completion), and named by no prefix the key knows:
    # only the recorded reads can tell that it now holds a value.
    _recorded(site, *POD)
    assert _topolog(site, *POD, env={"_TOPOLOG_COMPLETE": "bash_source"}).stdout != MARKER


def test_an_option(site: Path) -> None:
    _recorded(site, *POD)
    assert _topolog(site, *POD, "--fail-on", "warning").stdout != MARKER


def test_the_working_directory(site: Path) -> None:
    _recorded(site, *POD)
    # The same files, the same command line, from a copy of the folder: relative names mean other files.
    shutil.copytree(site / "work", site / "copy")
    assert _topolog(site, *POD, cwd=site / "copy").stdout != MARKER


# -- what is never kept -------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--output=sarif=out.sarif", "--write-baseline=out.sarif"])
def test_a_run_that_writes_a_file_is_not_kept(site: Path, option: str) -> None:
    # Either file is written beside and renamed into place (verifier/cli/output.py write_file).
    run = _topolog(site, *POD, option)
    assert run.returncode == 1
    assert (site / "work" / "out.sarif").is_file()
    assert _entries(site) == []


def test_observations_judged_against_the_clock_are_not_kept(site: Path) -> None:
    observed = ROOT / "inventories" / "observed" / "dgx-h100-pod"
    args = (*POD, "--observed", str(observed))
    assert _topolog(site, *args).returncode in (0, 1)
    assert _entries(site) == []
    # Judged at a stated time instead, the same run is kept.
    assert _topolog(site, *args, "--observed-now", "2026-12-06T09:00:00Z").returncode in (0, 1)
    assert len(_entries(site)) == 1


def test_with_the_cache_off_nothing_is_kept_or_read(site: Path) -> None:
    _recorded(site, *POD)
    # The kept folder is the default one (XDG_CACHE_HOME/topolog), but the cache is turned off.
    shutil.copytree(site / "cache", site / "xdg" / "topolog")
    before = sorted(p.name for p in (site / "xdg" / "topolog").iterdir())
    run = _topolog(site, *POD, env={cache.ENV_DIR: "", "XDG_CACHE_HOME": str(site / "xdg")})
    assert run.returncode == 1
    assert run.stdout not in (b"", MARKER)
    assert sorted(p.name for p in (site / "xdg" / "topolog").iterdir()) == before


# -- the entry itself ---------------------------------------------------------------------------


def test_an_entry_round_trips_and_a_damaged_one_is_refused() -> None:
    run = KeptRun(1, [(1, b"out\n"), (2, b"err\n")], {"env": [(b"HOME", b"=/root")], "file": [(b"a", b"\x00" * 32)]})
    data = run.encode()
    back = KeptRun.decode(data)
    assert back is not None
    assert (back.status, back.chunks, back.manifest["env"], back.manifest["file"]) == (
        1,
        [(1, b"out\n"), (2, b"err\n")],
        [(b"HOME", b"=/root")],
        [(b"a", b"\x00" * 32)],
    )
    assert KeptRun.decode(data[:-1]) is None  # cut short
    assert KeptRun.decode(data + b"\x00\x00\x00\x00") is None  # a field too many
    assert KeptRun.decode(b"not an entry") is None
    assert KeptRun.decode(KeptRun(0, [(3, b"x")], {}).encode()) is None  # only stdout (1) and stderr (2)


def test_every_recorded_kind_of_state_is_checked(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("x = 1\n", encoding="utf-8")
    folder = tmp_path / "folder"
    folder.mkdir()
    absent = tmp_path / "absent.yaml"
    data = tmp_path / "data.yaml"
    data.write_text("a: 1\n", encoding="utf-8")

    def state() -> KeptRun:
        manifest = {
            "stat": [(b"stat\0" + bytes(absent), kept_report.looked_at(b"stat\0" + bytes(absent)))],
            "dir": [(bytes(folder), kept_report.listing(bytes(folder)))],
            "code": [(bytes(module), kept_report.code_state(bytes(module)))],
            "file": [(bytes(data), kept_report.content(bytes(data)))],
        }
        return KeptRun(0, [], manifest)

    recorded = state()
    assert kept_report.unchanged(recorded)
    # A module rewritten with the same length: its times (and the change time no tool can set) differ.
    os.utime(module, ns=(0, 0))
    assert not kept_report.unchanged(recorded)
    recorded = state()
    (folder / "new.dl").write_text("", encoding="utf-8")
    assert not kept_report.unchanged(recorded)
    recorded = state()
    absent.write_text("", encoding="utf-8")
    assert not kept_report.unchanged(recorded)
    recorded = state()
    data.write_text("a: 2\n", encoding="utf-8")
    assert not kept_report.unchanged(recorded)


def test_only_verify_runs_are_kept() -> None:
    assert kept_report.command_of(["verify", "pod.yaml"]) == "verify"
    assert kept_report.command_of(["--config", "c.yaml", "-q", "verify", "pod.yaml"]) == "verify"
    assert kept_report.command_of(["--input-limit=file_size=1GiB", "verify", "pod.yaml"]) == "verify"
    assert kept_report.command_of(["query", "pod.yaml", "within(X, Y)"]) is None
    assert kept_report.command_of(["verify", "--help"]) is None
    assert kept_report.command_of(["--version"]) is None


def _written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An entry for this process's `verify pod.yaml`, with output and an empty manifest."""
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    key = kept_report.report_key(POD)
    assert key is not None
    cache.write_entry(kept_report.KIND, key, KeptRun(1, [(1, b"out\n"), (2, b"err\n")], {}).encode())
    return tmp_path / "cache" / f"{kept_report.KIND}-{key}"


def _key() -> str:
    key = kept_report.report_key(POD)
    assert key is not None
    return key


def test_a_kept_entry_is_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    _written(tmp_path, monkeypatch)
    assert kept_report.replay(_key()) == 1
    assert capfd.readouterr() == ("out\n", "err\n")


def test_a_tampered_entry_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    entry = _written(tmp_path, monkeypatch)
    data = bytearray(entry.read_bytes())
    data[-1] ^= 1  # one bit of the output
    entry.write_bytes(bytes(data))
    assert kept_report.replay(_key()) is None
    out, err = capfd.readouterr()
    assert out == ""
    assert "failed its integrity check" in err


def test_an_entry_others_may_write_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _written(tmp_path, monkeypatch)
    entry.chmod(0o664)
    assert kept_report.replay(_key()) is None


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_an_entry_of_another_user_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _written(tmp_path, monkeypatch)
    os.chown(entry, 65534, 65534)
    assert kept_report.replay(_key()) is None


def test_with_the_cache_off_no_entry_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _written(tmp_path, monkeypatch)
    monkeypatch.setenv(cache.ENV_DIR, "")
    assert kept_report.report_key(POD) is None


def test_past_the_output_limit_no_copy_is_held(monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier.core import kept_recording

    monkeypatch.setattr(kept_recording, "MAX_OUTPUT", 10)
    read_end, write_end = os.pipe()
    try:
        output = kept_recording._Output()
        tee = kept_recording._Tee(write_end, output)
        for _ in range(4):
            tee.write(b"abcd")  # 4, 8, 12 bytes: the copy stops after the write that passed 10
        assert os.read(read_end, 100) == b"abcd" * 4  # every byte still reaches the stream
        assert output.size == 16
        assert b"".join(chunk for _, chunk in output) == b"abcd" * 3
    finally:
        os.close(read_end)
        os.close(write_end)
