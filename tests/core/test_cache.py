"""The on-disk cache never runs what someone else wrote into its folder.

Entries are pickles; a folder shared between CI jobs (restored from a CI cache store) may be
written by anyone who can write that store. Each entry carries an HMAC under a key the folder
does not hold, so a planted entry, however well formed, is ignored, rebuilt and reported.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.core import cache

ROOT = Path(__file__).resolve().parents[2]


class _Planted:
    """Unpickling this creates `marker`: proof that a planted entry's code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def _topolog(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from verifier.cli.entry import run; run()", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


@pytest.fixture
def private_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env[cache.ENV_DIR] = str(tmp_path / "cache")
    env.pop(cache.ENV_KEY, None)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
    return env


def test_a_planted_entry_with_a_valid_digest_never_runs(tmp_path: Path, private_env: dict[str, str]) -> None:
    first = _topolog("verify", "inventories/edge-soc.yaml", "--format", "json", env=private_env)
    assert first.returncode in (0, 1), first.stderr
    entries = sorted(p for p in (tmp_path / "cache").iterdir() if not p.name.startswith("."))
    assert entries, "the first run wrote no cache entry to plant over"
    marker = tmp_path / "ran"
    evil = pickle.dumps(_Planted(marker))
    for entry in entries:
        # What the earlier format checked: a SHA-256 of the payload, which whoever writes the
        # folder can compute. The payload is a pickle that would create `marker` when loaded.
        entry.write_bytes(hashlib.sha256(evil).digest() + evil)
    second = _topolog("verify", "inventories/edge-soc.yaml", "--format", "json", env=private_env)
    assert not marker.exists(), "a planted cache entry ran its code"
    assert second.returncode == first.returncode
    assert second.stdout == first.stdout  # the answer is rebuilt, not read from the planted entries
    assert "failed its integrity check" in second.stderr
    # Rebuilt: the next run reads valid entries and has nothing to report.
    third = _topolog("verify", "inventories/edge-soc.yaml", "--format", "json", env=private_env)
    assert third.stdout == first.stdout
    assert "integrity" not in third.stderr
    assert not marker.exists()


def test_the_key_is_made_private_outside_the_folder(tmp_path: Path, private_env: dict[str, str]) -> None:
    _topolog("verify", "inventories/edge-soc.yaml", env=private_env)
    key_file = tmp_path / "config" / "topolog" / "cache-key"
    assert key_file.is_file()
    assert key_file.stat().st_mode & 0o777 == 0o600
    assert len(key_file.read_bytes().strip()) == 64  # 32 random bytes as hex


def test_an_entry_signed_with_another_key_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.ENV_KEY, "a" * 40)
    cache.write_pickled("test", "k1", {"answer": 1})
    assert cache.read_pickled("test", "k1") == {"answer": 1}
    monkeypatch.setenv(cache.ENV_KEY, "b" * 40)
    assert cache.read_pickled("test", "k1") is None


def test_an_entry_copied_under_another_name_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.ENV_KEY, "c" * 40)
    cache.write_pickled("test", "k1", {"answer": 1})
    folder = tmp_path / "cache"
    (folder / "test-k2").write_bytes((folder / "test-k1").read_bytes())
    assert cache.read_pickled("test", "k2") is None


@pytest.mark.parametrize("problem", ["short env key", "shared key file", "key file in folder", "fifo key file"])
def test_a_key_that_is_not_secret_turns_the_cache_off(
    problem: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(folder))
    monkeypatch.delenv(cache.ENV_KEY, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    if problem == "short env key":
        monkeypatch.setenv(cache.ENV_KEY, "tooshort")
    elif problem == "shared key file":
        key_file = tmp_path / "config" / "topolog" / "cache-key"
        key_file.parent.mkdir(parents=True)
        key_file.write_text("d" * 64)
        key_file.chmod(0o644)  # readable by others: anyone could sign entries
    elif problem == "fifo key file":
        # A fifo, private to this user: no key in it, and nothing to wait for (opening it had waited).
        key_file = tmp_path / "config" / "topolog" / "cache-key"
        key_file.parent.mkdir(parents=True)
        os.mkfifo(key_file, 0o600)
    else:
        # The folder that holds the entries would hold the key that proves them.
        monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "config"))
    assert cache.cache_dir() is None
    cache.write_pickled("test", "k", 1)
    assert cache.read_pickled("test", "k") is None
    assert "the cache is off" in capsys.readouterr().err


@pytest.mark.parametrize("what", ["fifo", "link to a valid entry", "link to a folder", "dangling link"])
def test_what_is_no_regular_file_under_an_entry_name_is_a_miss_and_is_not_waited_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str
) -> None:
    # Every entry is a regular file that write_entry made. Under k1's name: a fifo (opening it to
    # read had waited for a writer for ever), a link to a valid entry signed with the same key
    # (its tag would verify, so the read itself must refuse the link), a link to a folder, and a
    # link to nothing. Each is a miss; writing k1 again puts a regular entry in its place.
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.ENV_KEY, "d" * 40)
    cache.write_pickled("test", "k1", {"answer": 1})
    folder = tmp_path / "cache"
    entry = folder / "test-k1"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    entry.rename(elsewhere / "test-k1")  # the same bytes, valid for the name k1, now outside the folder
    if what == "fifo":
        os.mkfifo(entry, 0o600)
    elif what == "link to a valid entry":
        entry.symlink_to(elsewhere / "test-k1")
    elif what == "link to a folder":
        entry.symlink_to(elsewhere)
    else:
        entry.symlink_to(tmp_path / "gone")
    assert cache.read_pickled("test", "k1") is None
    cache.write_pickled("test", "k1", {"answer": 2})
    assert entry.is_file() and not entry.is_symlink()
    assert cache.read_pickled("test", "k1") == {"answer": 2}


def test_a_dangling_link_does_not_stop_pruning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # keep=2: after a dangling link test-k0 and three writes k1, k2, k3, two entries stay. Pruning
    # read each entry's time through the link, which failed for the dangling one and left every entry.
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.ENV_KEY, "e" * 40)
    cache.write_pickled("test", "k1", 1, keep=2)
    folder = tmp_path / "cache"
    (folder / "test-k0").symlink_to(tmp_path / "gone")
    os.utime(folder / "test-k0", (0, 0), follow_symlinks=False)  # the oldest: pruned first
    for key in ("k1", "k2", "k3"):
        cache.write_pickled("test", key, key, keep=2)
    assert sorted(p.name for p in folder.glob("test-*")) == ["test-k2", "test-k3"]


def test_written_entries_are_private_and_leave_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # keep=2 for kind "test": of k1, k2, k3 (written in that order, times set apart) k2 and k3 stay;
    # "test2-k9" is another kind and is never pruned with "test". Each entry is written to a
    # temporary ".test-..." file first and then renamed: none of those may be left, and every entry
    # is readable by its owner only (0600), as the folder is.
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.ENV_KEY, "e" * 40)
    cache.write_pickled("test2", "k9", 9)
    folder = tmp_path / "cache"
    for age, key in enumerate(("k1", "k2", "k3")):
        cache.write_pickled("test", key, key, keep=2)
        os.utime(folder / f"test-{key}", (age, age))  # k1 oldest, then k2, then k3
    assert sorted(p.name for p in folder.iterdir()) == ["test-k2", "test-k3", "test2-k9"]
    assert {p.stat().st_mode & 0o777 for p in folder.iterdir()} == {0o600}
    assert cache.read_pickled("test", "k3") == "k3"


def test_a_temporary_file_is_named_as_a_kept_run_expects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A run being recorded for a kept report may write cache entries; it is still kept only when every
    # file it made in the cache folder is one kept_recording._cache_file knows: ".<kind>-" and 8
    # characters for a temporary file. Names of 16 characters made every such run a miss, for ever.
    from verifier.core import kept_recording

    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    monkeypatch.setenv(cache.ENV_KEY, "e" * 40)
    moved: list[str] = []
    replace = os.replace

    def recording_replace(src: str, dst: str) -> None:
        moved.append(os.path.basename(src))
        replace(src, dst)

    monkeypatch.setattr(os, "replace", recording_replace)
    cache.write_pickled("evaluation", "ab" * 32, 1)
    assert len(moved) == 1 and moved[0].startswith(".evaluation-")
    assert kept_recording._cache_file(moved[0])
