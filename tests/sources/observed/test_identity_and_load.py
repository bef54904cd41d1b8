"""Identity matching (never by position alone) and the observation folder's layout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.observed.identity import Matcher, MatchSettings
from verifier.sources.observed.load import read_observations

INVENTORY = """apiVersion: topolog.dev/v1
objects:
  - name: n1
    kind: node
    children:
      - {name: gpu0, kind: gpu, labels: {uuid: GPU-AAAA, pci_bus_id: "0000:18:00.0"}}
      - {name: gpu1, kind: gpu, labels: {uuid: GPU-BBBB}}
  - name: n2
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
"""


@pytest.fixture
def matcher(tmp_path: Path) -> Matcher:
    path = tmp_path / "inv.yaml"
    path.write_text(INVENTORY)
    return Matcher(load_inventory([path]))


def test_uuid_decides_where_declared(matcher: Matcher) -> None:
    # n1 declares UUIDs: a declared one matches (any case); an undeclared one is unmatched, and the
    # index it also states (0, gpu0's position) is not tried: a swapped board is not the old one.
    assert matcher.match("n1", {"uuid": "gpu-bbbb", "index": 0}).gpu == "n1/gpu1"
    m = matcher.match("n1", {"uuid": "GPU-CCCC", "index": 0})
    assert (m.gpu, m.key, m.why) == (None, "uuid", "uuid GPU-CCCC is not declared in n1")


def test_index_where_nothing_else_is_declared(matcher: Matcher) -> None:
    # n2's GPUs declare no uuid/serial/bus id: host and index match gpu{i}.
    assert matcher.match("n2", {"uuid": "GPU-XXXX", "index": 1}).gpu == "n2/gpu1"
    assert matcher.match("n2", {"index": 2}).gpu is None


def test_keys_chosen_and_ordered(matcher: Matcher, tmp_path: Path) -> None:
    only_bus = Matcher(load_inventory([tmp_path / "inv.yaml"]), MatchSettings.parse("pci_bus_id"))
    assert only_bus.match("n1", {"uuid": "GPU-AAAA", "pci_bus_id": "00000000:18:00.0"}).gpu == "n1/gpu0"
    # without index among the keys, n2's GPUs (no other key declared) cannot be matched
    assert only_bus.match("n2", {"index": 0}).gpu is None
    with pytest.raises(TopologError, match="expected some of uuid, serial, pci_bus_id, index"):
        MatchSettings.parse("uuid,position")


def test_host_names(matcher: Matcher) -> None:
    assert matcher.node("n1") == "n1" and matcher.node("N2") == "n2" and matcher.node("n1.example.com") == "n1"
    assert matcher.node("gpu0") is None and matcher.node("n3") is None


def test_folder_layout_names_hosts(tmp_path: Path) -> None:
    text = "GPU 0: NVIDIA H100 (UUID: GPU-1)\n  Link 0: 26.562 GB/s\n"
    (tmp_path / "obs" / "node-a.example.com").mkdir(parents=True)
    (tmp_path / "obs" / "node-a.example.com" / "nvlink.txt").write_text(text)
    (tmp_path / "obs" / "node-b.nvlink.txt").write_text(text)
    (tmp_path / "obs" / ".hidden").write_text("ignored")
    obs = read_observations([tmp_path / "obs"])
    # a sub-folder's name (dots and all) or a file's name up to its first dot
    assert sorted(f.host or "" for f in obs.files) == ["node-a.example.com", "node-b"]


def test_every_bad_file_reported(tmp_path: Path) -> None:
    (tmp_path / "n1").mkdir()
    (tmp_path / "n1" / "a.txt").write_text("not a tool's output\n")
    (tmp_path / "n1" / "b.xml").write_text("<nvidia_smi_log><gpu>")
    with pytest.raises(TopologError) as err:
        read_observations([tmp_path, tmp_path / "missing"])
    got = [(Path(d.location.file).name, d.location.line, d.message.split(";")[0][:40]) for d in err.value.diagnostics]
    # sorted by place: <tmp>/missing before <tmp>/n1/...
    assert got == [
        ("missing", 0, "no such observation file or folder"),
        ("a.txt", 1, "not a format topolog reads observations "),
        ("b.xml", 1, "not well-formed XML: no element found"),
    ]


def _fleet_folder(root: Path) -> Path:
    """Five hosts: four with an nvlink -s file (one of them with a nested folder too), one with a bad file."""
    text = "GPU 0: NVIDIA H100 (UUID: GPU-{k})\n  Link 0: 26.562 GB/s\n  Link 1: <inactive>\n"
    for k in range(4):
        (root / f"n{k}" / "deep").mkdir(parents=True)
        (root / f"n{k}" / "nvlink.txt").write_text(text.format(k=k))
        (root / f"n{k}" / "deep" / "nvlink.txt").write_text(text.format(k=k + 10))
    (root / "n4").mkdir()
    (root / "n4" / "bad.txt").write_text(
        "GPU 0: NVIDIA H100 (UUID: GPU-9)\n  Link 0: 26.562 GB/s\n  Link 1: 26,5 GB/s\n"
    )
    return root


def test_worker_processes_read_what_the_process_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Above PARALLEL_FILES files are read by forked workers, CHUNK_FILES at a time: lowered here so that
    # 9 files go to 9 tasks. The observations (every field, in order) and the errors must be the same
    # as when this process reads them one by one.
    import verifier.sources.observed.load as load

    folder = _fleet_folder(tmp_path / "obs")
    good = tmp_path / "good"
    good.mkdir()
    for k in range(4):
        (folder / f"n{k}").rename(good / f"n{k}")
    monkeypatch.setattr(load, "PARALLEL_FILES", 10**9)
    alone = read_observations([good])
    with pytest.raises(TopologError) as alone_err:
        read_observations([folder, good])
    monkeypatch.setattr(load, "PARALLEL_FILES", 2)
    monkeypatch.setattr(load, "CHUNK_FILES", 1)
    # Two cores seen, so that the workers run on a one-core runner too (there the comparison below
    # was of this process's reading with itself): min(2, 8) = 2 workers.
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    assert load._workers(9) == 2
    assert read_observations([good]) == alone
    assert len(alone.files) == 8 and [g.host for g in alone.links[:2]] == ["n0", "n0"]
    with pytest.raises(TopologError) as err:
        read_observations([folder, good])
    assert err.value.diagnostics == alone_err.value.diagnostics
    assert [(Path(d.location.file).name, d.location.line) for d in err.value.diagnostics] == [("bad.txt", 3)]


def test_a_host_folder_past_the_file_limit_stops_at_the_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A host's folder (here a link to a tree elsewhere, as a folder linked to /tmp would be) with 5
    # files, under a limit of 3: refused once the 4th file is listed, naming the host folder.
    from verifier.sources.observed import load

    tree = tmp_path / "elsewhere"
    (tree / "deeper").mkdir(parents=True)
    for k in range(5):
        (tree / ("deeper" if k % 2 else ".") / f"f{k}.txt").write_text("x\n")
    obs = tmp_path / "obs"
    obs.mkdir()
    (obs / "dgx01").symlink_to(tree)
    monkeypatch.setattr(load, "MAX_FILES", 3)
    with pytest.raises(TopologError) as err:
        load.observation_files(obs)
    assert str(err.value) == f"{obs / 'dgx01'}: more than 3 files; expected one folder per host"
