"""Adversarial cases for the kept report (verifier/core/kept_report.py, kept_recording.py).

A stale hit is the worst bug a kept report can have: a CI gate would pass a changed inventory on
an old answer. Each case runs the console script in a child process (as test_kept_report.py
does), makes sure the run was kept, changes one input in a way that changes the answer, and
then compares the cache-on run with a cache-off run of the same command: they must be the same
bytes and exit code. Each step also checks that the change did change the answer (else the
comparison could not tell a stale hit from a fresh run). Several changes share one scenario so
that the file stays fast: after a step the cache-on run is kept again, for the next change.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from verifier.core import cache, kept_report
from verifier.core.kept_report import KeptRun

ROOT = Path(__file__).resolve().parents[2]
ENTRY = "from verifier.cli.entry import run; run()"
POD = ("--quiet", "verify", "pod.yaml")
SITE_RULE = ROOT / "tests" / "rule_tests" / "site" / "site_hbm.dl"
MARKER = b"kept report, planted by the test\n"

Run = tuple[int, bytes, bytes]


def _topolog(
    site: Path,
    *args: str,
    cwd: Path | None = None,
    cache_dir: Path | str | None = None,
    stdin: Path | None = None,
) -> Run:
    folder = str(site / "cache") if cache_dir is None else str(cache_dir)
    with open(stdin if stdin is not None else os.devnull, "rb") as given:
        done = subprocess.run(
            [sys.executable, "-c", ENTRY, *args],
            cwd=cwd or site / "work",
            env={**os.environ, cache.ENV_DIR: folder},
            stdin=given,
            capture_output=True,
            check=False,
            timeout=300,
        )
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    return done.returncode, done.stdout, done.stderr


@pytest.fixture
def site(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "inventories" / "dgx-h100-pod.yaml", work / "pod.yaml")
    (work / "rules").mkdir()
    shutil.copy(SITE_RULE, work / "rules" / SITE_RULE.name)
    return tmp_path


def _entries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name.startswith(f"{kept_report.KIND}-")) if folder.is_dir() else []


def _scenario(
    site: Path,
    args: Sequence[str],
    steps: Sequence[tuple[str, Callable[[], object]]],
    *,
    cwd: Path | None = None,
    cache_dir: Path | None = None,
    stdin: Callable[[], Path | None] = lambda: None,
    hit: bool = True,
) -> None:
    """Run `args` (kept), then for each step: change, and the cache-on run must equal a cache-off run.

    `hit`: also prove that the unchanged run answers from its entry (not so for /dev/stdin: see the report).
    """
    folder = cache_dir or site / "cache"
    before = _topolog(site, *args, cwd=cwd, cache_dir=folder, stdin=stdin())
    assert before[0] in (0, 1), before[2]
    if hit:
        _answers_from_its_entry(site, args, folder, cwd, stdin)
    for idea, change in steps:
        assert _entries(folder), f"before {idea!r}: the run was not kept, so the step proves nothing"
        change()
        fresh = _topolog(site, *args, cwd=cwd, cache_dir="", stdin=stdin())
        assert fresh != before, f"{idea!r} does not change the answer: the step proves nothing"
        got = _topolog(site, *args, cwd=cwd, cache_dir=folder, stdin=stdin())
        assert got == fresh, f"stale answer after {idea!r}"
        before = fresh


def _answers_from_its_entry(
    site: Path, args: Sequence[str], folder: Path, cwd: Path | None, stdin: Callable[[], Path | None]
) -> None:
    """Unchanged, the run answers from its entry (re-signed with a marker for one run, then put back)."""
    entry = max(_entries(folder), key=lambda p: p.stat().st_mtime_ns)
    key = entry.name.removeprefix(f"{kept_report.KIND}-")
    kept = entry.read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(cache.ENV_DIR, str(folder))
        data = cache.read_entry(kept_report.KIND, key)
        assert data is not None
        run = KeptRun.decode(data)
        assert run is not None
        cache.write_entry(kept_report.KIND, key, KeptRun(run.status, [(1, MARKER)], run.manifest).encode())
    assert _topolog(site, *args, cwd=cwd, cache_dir=folder, stdin=stdin())[1] == MARKER, "unchanged, yet a miss"
    entry.write_bytes(kept)


def _same_size_same_mtime(path: Path, old: bytes, new: bytes) -> None:
    """`old` replaced by `new` (as long) and the modification time put back, as `touch -d` would."""
    assert len(old) == len(new)
    info = path.stat()
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert path.stat().st_size == info.st_size


def _second_rule(folder: Path, number: int = 2) -> None:
    """A copy of the site rule under another id and relation: it reports the pod's 64 GPUs again."""
    folder.mkdir(parents=True, exist_ok=True)
    text = SITE_RULE.read_text(encoding="utf-8").replace("SITE001", f"SITE00{number}")
    (folder / f"site{number}.dl").write_text(text.replace("site_small_hbm", f"site_hbm{number}"), encoding="utf-8")


def _relink(link: Path, target: str) -> None:
    """`link` (a file or a link) made a link to `target`."""
    link.unlink()
    link.symlink_to(target)


# -- inputs reached through a folder ------------------------------------------------------------


def test_a_rules_folder(site: Path) -> None:
    rules = site / "work" / "rules"
    (rules / "notes").write_text("not a rule file\n", encoding="utf-8")
    (site / "work" / "rules-b").mkdir()
    shutil.copy(SITE_RULE, site / "work" / "rules-b" / SITE_RULE.name)
    _second_rule(site / "work" / "rules-b")
    (site / "work" / "linked").symlink_to("rules")

    def notes_become_a_folder() -> None:
        # rglob walks the folder with scandir's entry types and stats none: the listing of names
        # is the same, only an entry's type tells that the folder now holds a rule.
        (rules / "notes").unlink()
        _second_rule(rules / "notes")

    def deeper() -> None:
        _second_rule(rules / "notes" / "deeper", 3)

    steps = [
        # A rule's message edited in place, its size and modification time as they were.
        ("a same-size same-mtime rule edit", lambda: _same_size_same_mtime(rules / SITE_RULE.name, b"has {", b"had {")),
        ("a plain file of the rules folder replaced by a folder of rules", notes_become_a_folder),
        ("a rule in a new subfolder of a subfolder", deeper),
    ]
    _scenario(site, (*POD, "--rules", "rules"), steps)
    # The rules folder given through a link, which is then pointed at another folder.
    _scenario(
        site,
        (*POD, "--rules", "linked"),
        [("a rules link retargeted", lambda: _relink(site / "work" / "linked", "rules-b"))],
    )


# -- the inventory ------------------------------------------------------------------------------


def test_the_inventory(site: Path) -> None:
    work = site / "work"
    shutil.copy(work / "pod.yaml", work / "a.yaml")
    shutil.copy(ROOT / "inventories" / "gb200-nvl72.yaml", work / "b.yaml")
    # "# A DGX" -> "#\n# DGX": one line more above the finding (pod.yaml:84 -> 85), same size.
    steps = [
        ("a same-size same-mtime inventory edit", lambda: _same_size_same_mtime(work / "pod.yaml", b"# A", b"#\n#")),
        ("the inventory replaced by a link", lambda: _relink(work / "pod.yaml", "a.yaml")),
        ("the inventory's link retargeted", lambda: _relink(work / "pod.yaml", "b.yaml")),
        ("a configuration appearing in a parent folder", lambda: (site / ".topolog.yaml").write_text("format: json\n")),
    ]
    _scenario(site, POD, steps)


def test_side_files_found_beside_an_inventory_in_another_folder(site: Path) -> None:
    # verify sub/pod.yaml looks for side files in sub/ first, then in the working folder.
    sub = site / "work" / "sub"
    sub.mkdir()
    shutil.move(site / "work" / "pod.yaml", sub / "pod.yaml")
    waiver = "waivers:\n  - rule: TOPO005\n    subject: '*'\n    reason: Known.\n    expires: 2099-01-01\n"
    steps = [
        (
            "a waivers file appearing in the working folder",
            lambda: (site / "work" / "topolog.waivers.yaml").write_text(waiver),
        ),
        (
            "an empty waivers file appearing beside the inventory",
            lambda: (sub / "topolog.waivers.yaml").write_text("waivers: []\n"),
        ),
    ]
    _scenario(site, ("--quiet", "verify", "sub/pod.yaml"), steps)


def test_the_inventory_given_as_standard_input(site: Path) -> None:
    work = site / "work"
    given = {"now": work / "pod.yaml"}
    shutil.copy(ROOT / "inventories" / "gb200-nvl72.yaml", work / "other.yaml")

    def switch() -> None:
        given["now"] = work / "other.yaml"

    for name in ("/dev/stdin", "/proc/self/fd/0"):
        given["now"] = work / "pod.yaml"
        _scenario(
            site,
            ("--quiet", "verify", name),
            [(f"another file on {name}", switch)],
            stdin=lambda: given["now"],
            hit=False,
        )


def test_a_path_with_odd_characters(site: Path) -> None:
    odd = site / "work" / os.fsdecode(b"a folder\nwith \xff")
    odd.mkdir()
    shutil.move(site / "work" / "pod.yaml", odd / "pod.yaml")
    edit = (
        "an edit of an inventory with odd characters in its path",
        lambda: _same_size_same_mtime(odd / "pod.yaml", b"# A", b"#\n#"),
    )
    _scenario(site, ("--quiet", "verify", str(odd / "pod.yaml")), [edit])


# -- the cache folder itself --------------------------------------------------------------------


def test_a_cache_folder_that_holds_the_inputs(site: Path) -> None:
    # TOPOLOG_CACHE_DIR=. : the cache's own files are no input, but the inventory beside them is.
    work = site / "work"
    edit = ("an inventory edit in the cache folder", lambda: _same_size_same_mtime(work / "pod.yaml", b"# A", b"#\n#"))
    _scenario(site, POD, [edit], cache_dir=work)


def test_damaged_and_shared_entries_are_misses(site: Path) -> None:
    fresh = _topolog(site, *POD, cache_dir="")
    assert _topolog(site, *POD) == fresh
    (entry,) = _entries(site / "cache")
    entry.write_bytes(entry.read_bytes()[:-7])  # cut short: its signature no longer matches
    code, out, err = _topolog(site, *POD)
    assert (code, out) == fresh[:2]
    assert b"failed its integrity check" in err
    assert _topolog(site, *POD) == fresh  # the damaged entry was replaced
    (site / "cache").chmod(0o770)  # a folder others may write: the cache is off, the run is plain
    try:
        assert _topolog(site, *POD) == fresh
    finally:
        (site / "cache").chmod(0o700)


def test_concurrent_runs(site: Path) -> None:
    fresh = _topolog(site, *POD, cache_dir="")
    env = {**os.environ, cache.ENV_DIR: str(site / "cache")}
    children = [
        subprocess.Popen(
            [sys.executable, "-c", ENTRY, *POD],
            cwd=site / "work",
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(3)
    ]
    for child in children:
        out, err = child.communicate(timeout=300)
        assert (child.returncode, out, err) == fresh
    assert len(_entries(site / "cache")) == 1
    assert _topolog(site, *POD) == fresh


# -- what is never kept -------------------------------------------------------------------------


def test_bad_input_is_never_kept(site: Path) -> None:
    pod = site / "work" / "pod.yaml"
    good = pod.read_bytes()
    pod.write_bytes(good.replace(b"kind: Inventory", b"kind: [Inventory", 1))
    code, _, err = _topolog(site, *POD)
    assert code == 2, err
    assert _entries(site / "cache") == []
    pod.write_bytes(good)  # the user fixes the file: the run is judged again
    assert _topolog(site, *POD) == _topolog(site, *POD, cache_dir="")


def test_standard_input_that_becomes_a_pipe(site: Path) -> None:
    # Kept while /dev/stdin was a regular file; then the same command with another inventory piped
    # in. The check must not take the pipe's bytes (the full run needs them), and the full run
    # reads the pipe as it would a file (the argument check leaves a pipe's head to the loader).
    work = site / "work"
    shutil.copy(ROOT / "inventories" / "gb200-nvl72.yaml", work / "other.yaml")
    args = ("--quiet", "verify", "/dev/stdin")
    assert _topolog(site, *args, stdin=work / "pod.yaml")[0] == 1
    assert _entries(site / "cache")
    env = {**os.environ, cache.ENV_DIR: str(site / "cache")}
    piped = subprocess.run(
        [sys.executable, "-c", ENTRY, *args],
        cwd=work,
        env=env,
        input=(work / "other.yaml").read_bytes(),
        capture_output=True,
        check=False,
        timeout=300,
    )
    by_name = _topolog(site, "--quiet", "verify", "other.yaml", cache_dir="")
    # The same inventory as a named file: the same answer, the file named otherwise.
    assert (piped.returncode, piped.stdout, piped.stderr) == (
        by_name[0],
        by_name[1].replace(b"other.yaml", b"/dev/stdin"),
        by_name[2],
    )


def test_a_kept_file_check_neither_waits_for_nor_reads_a_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "pod.yaml"
    os.mkfifo(fifo)  # no writer: a blocking open would wait for ever
    assert kept_report.content(os.fsencode(fifo)) == b""


def test_a_file_the_run_failed_to_open_is_recorded_as_missing(tmp_path: Path) -> None:
    # An open that fails (and is caught) with no stat before it: the file's later appearance is a change.
    from verifier.core.kept_recording import Recording

    absent = tmp_path / "late.yaml"
    recording = Recording("key")
    recording.opened(str(absent), "rb", 0)
    run = KeptRun(0, [], {"stat": sorted(recording.looked.items())})
    assert kept_report.unchanged(run)
    absent.write_text("a: 1\n", encoding="utf-8")
    assert not kept_report.unchanged(run)


def test_an_observations_folder(site: Path) -> None:
    # Judged at a stated time, so kept. A host folder is walked by scandir's entry types: a link
    # there to a folder is skipped (linked folders are not followed), to a file it is read.
    work = site / "work"
    shutil.copytree(ROOT / "inventories" / "observed" / "dgx-h100-pod", work / "obs")
    (work / "spare").mkdir()
    shutil.copy(work / "obs" / "dgx01" / "nvidia-smi.xml", work / "spare" / "nvidia-smi.xml")
    (work / "obs" / "dgx03" / "extra").symlink_to("../../spare")
    shown = (work / "obs" / "dgx12.nvlink-s.txt").read_text(encoding="utf-8")
    steps = [
        (
            "a host folder's link retargeted from a folder to a file",
            lambda: _relink(work / "obs" / "dgx03" / "extra", "../../spare/nvidia-smi.xml"),
        ),
        ("a new host's file", lambda: (work / "obs" / "dgx13.nvlink-s.txt").write_text(shown, encoding="utf-8")),
    ]
    _scenario(site, (*POD, "--observed", "obs", "--observed-now", "2026-12-06T09:00:00Z"), steps)
