"""A rule file is read again in the same process when it may have changed, and only then."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from verifier.core import cache
from verifier.engine import rule_pack

ORIGINAL = ".input edge(a: symbol, b: symbol)\n.decl path(a: symbol, b: symbol)\npath(A, B) :- edge(A, B).\n"
# The same number of bytes: only the head's two variables trade places.
EDITED = ".input edge(a: symbol, b: symbol)\n.decl path(a: symbol, b: symbol)\npath(B, A) :- edge(A, B).\n"


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.ENV_DIR, "")  # no disk cache: what a load answers comes from the file
    monkeypatch.setattr(rule_pack, "_last", [])
    monkeypatch.setattr(rule_pack, "_read", {})


def _head(path: Path) -> list[str]:
    (rule,) = rule_pack.load_rule_pack([path]).rules
    return [str(arg) for arg in rule.head.args]


def test_an_edit_that_keeps_size_and_modification_time_is_read(tmp_path: Path) -> None:
    rules = tmp_path / "paths.dl"
    rules.write_text(ORIGINAL)
    assert _head(rules) == ["A", "B"]
    before = rules.stat()
    rules.write_text(EDITED)
    assert len(EDITED) == len(ORIGINAL)
    os.utime(rules, ns=(before.st_atime_ns, before.st_mtime_ns))  # the modification time put back
    # The head as EDITED writes it: a process that kept the first read would still say A, B.
    assert _head(rules) == ["B", "A"]


def test_a_settled_unchanged_file_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "paths.dl"
    rules.write_text(ORIGINAL)
    # The clock a minute on: the file was last changed long before it is read, so it is remembered.
    later = rules.stat().st_ctime_ns + 60 * 10**9
    monkeypatch.setattr(rule_pack, "_now_ns", lambda: later)
    assert _head(rules) == ["A", "B"]
    reads: list[Path] = []
    real = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    assert _head(rules) == ["A", "B"]
    assert reads == []  # answered from the stat alone: one load, one read, the first


def test_a_freshly_written_file_is_read_each_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "paths.dl"
    rules.write_text(ORIGINAL)
    # The clock where the file's change time is: written in this tick, it could change again unseen.
    now = rules.stat().st_ctime_ns
    monkeypatch.setattr(rule_pack, "_now_ns", lambda: now)
    assert _head(rules) == ["A", "B"]
    reads: list[Path] = []
    real = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads.append(self)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    assert _head(rules) == ["A", "B"]
    assert reads == [rules]
