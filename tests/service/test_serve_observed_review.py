"""Review of `serve`'s observations (3bfbe14): an admit judges the observations its revision read when
it was built, and those are exactly the files `place --observed` reads there, no more and no fewer.

Hand derivation (tests/service/test_serve_observed_nic.py has it whole): on inventories/mixed-fleet.yaml
the shipped ibstat of mi300x-n0 says mlx5_5's port is Down/Polling while nic5's cable is declared
working (OBS103), so mi300x-n0's GPUs 4 and 5 have no fabric share and carol's 8-GPU job at 400 Gb/s
a GPU (scope node) is placed on mi300x-n1 alone, its bottleneck 7 xGMI links of 64 GB/s = 448,000
MB/s. Without that observation, or with mlx5_5 Active/LinkUp as its seven peers are, both MI300X nodes
place it (carol is in team hpc, which policies/fp64.cedar gives the MI300X nodes alone).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from dataclasses import replace
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from service.serve_helpers import QUICK_S, ROOT, copy_inputs, new_revision, reload_failed, serving
from service.test_serve_observed_nic import IBSTAT, JOB, RAIL_JOB, _ranked

from verifier.core.errors import TopologError
from verifier.core.limits import current_limits, use_limits
from verifier.service.config import ServeConfig
from verifier.service.gate import Gate, admit_doc
from verifier.service.revision import OBSERVED_DIR, KeptObservations, Revision, build_revision
from verifier.session.inputs import read_inventory

DOWN = IBSTAT.read_text()
# mlx5_5 is the one port written Down/Polling in the shipped file: made Active/LinkUp as the others
# (at its written rate, 10 Gb/s: slow, not down).
UP = DOWN.replace("State: Down", "State: Active").replace("Physical state: Polling", "Physical state: LinkUp")
PATHS = pytest.mark.parametrize("text", [JOB, RAIL_JOB], ids=["prepared", "from-scratch"])
N1 = [("mi300x-n1", 448_000)]
BOTH = [("mi300x-n0", 448_000), ("mi300x-n1", 448_000)]


def test_the_up_file_differs_from_the_shipped_one_in_mlx5_5_alone() -> None:
    assert DOWN.count("State: Down") == 1 and DOWN.count("Physical state: Polling") == 1
    assert UP.count("State: Active") == 8 and UP != DOWN


def _place(folder: Path, text: str) -> dict[str, Any]:
    """`place --observed FOLDER/topolog.observed --why-not --format json` on the same files."""
    job = folder.parent / f"{folder.name}-job.yaml"
    job.write_text(text)
    observed = folder / OBSERVED_DIR
    inventory = str(folder / "mixed-fleet.yaml")
    code, out, err = run_cli("place", inventory, str(job), "--observed", str(observed), "--why-not", "--format", "json")
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def _admitted(revision: Revision, folder: Path, text: str) -> list[tuple[str, int]]:
    """The admit's placements of `text` (domain, bottleneck), held equal to `place --observed`'s whole answer."""
    doc = admit_doc(revision, text.encode())
    assert doc["placement"] == _place(folder, text)
    return _ranked(doc["placement"])


def _served(folder: Path) -> Revision:
    return build_revision(ServeConfig((folder / "mixed-fleet.yaml",)))


@PATHS
def test_a_host_folder_that_is_a_link_is_read_as_place_reads_it(tmp_path: Path, text: str) -> None:
    # A host's sub-folder mounted from elsewhere (a link): `place --observed` reads through it
    # (sources/observed/load.py: _files). The revision listed its files with rglob, which does not
    # enter a linked folder: they were neither digested nor copied, and the admit placed on mi300x-n0
    # (BOTH) where `place --observed` did not (N1). Broken before this review's fix.
    served = tmp_path / "served"
    copy_inputs(served)
    mounted = tmp_path / "mounted" / "mi300x-n0"
    mounted.mkdir(parents=True)
    (mounted / "ibstat.txt").write_text(DOWN)
    (served / OBSERVED_DIR).mkdir()
    os.symlink(mounted, served / OBSERVED_DIR / "mi300x-n0")
    revision = _served(served)
    assert list(revision.files["observed"]) == [str(served / OBSERVED_DIR / "mi300x-n0" / "ibstat.txt")]
    assert _admitted(revision, served, text) == N1


@PATHS
def test_the_copy_is_judged_whatever_the_folder_holds_later(tmp_path: Path, text: str) -> None:
    # Built with mlx5_5 down, then the live file says it is up, then the folder is gone: the revision
    # (not yet reloaded) still judges its copy, on both admit paths: N1.
    copy_inputs(tmp_path)
    host = tmp_path / OBSERVED_DIR / "mi300x-n0"
    host.mkdir(parents=True)
    (host / "ibstat.txt").write_text(DOWN)
    revision = _served(tmp_path)
    (host / "ibstat.txt").write_text(UP)
    assert _ranked(admit_doc(revision, text.encode())["placement"]) == N1
    shutil.rmtree(tmp_path / OBSERVED_DIR)
    assert _ranked(admit_doc(revision, text.encode())["placement"]) == N1
    # What it judges is kept read (revision.KeptObservations), not a path to the folder: the one file.
    assert revision.placing.observed is not None
    assert [f.host for f in revision.placing.observed.read().files] == ["mi300x-n0"]


def test_hidden_entries_are_left_out_as_place_leaves_them_out(tmp_path: Path) -> None:
    # A hidden folder at the top (`.old/`, an earlier collection) and a hidden file in a host folder
    # both say mlx5_5 is down; `place --observed` reads neither (load.py skips names starting with a
    # dot), only mi300x-n0/ibstat.txt, which says it is up: BOTH, and that file alone digested.
    copy_inputs(tmp_path)
    observed = tmp_path / OBSERVED_DIR
    (observed / ".old" / "mi300x-n0").mkdir(parents=True)
    (observed / ".old" / "mi300x-n0" / "ibstat.txt").write_text(DOWN)
    (observed / "mi300x-n0").mkdir()
    (observed / "mi300x-n0" / ".ibstat.txt").write_text(DOWN)
    (observed / "mi300x-n0" / "ibstat.txt").write_text(UP)
    revision = _served(tmp_path)
    assert list(revision.files["observed"]) == [str(observed / "mi300x-n0" / "ibstat.txt")]
    assert _admitted(revision, tmp_path, JOB) == BOTH


def test_a_host_the_inventory_lacks_changes_nothing(tmp_path: Path) -> None:
    # The down port is observed on a host named `nosuch`, which the mixed fleet does not have: it is
    # matched to no node (docs/observed.md: matched by identity, never by position), so BOTH, as in place.
    copy_inputs(tmp_path)
    (tmp_path / OBSERVED_DIR / "nosuch").mkdir(parents=True)
    (tmp_path / OBSERVED_DIR / "nosuch" / "ibstat.txt").write_text(DOWN)
    assert _admitted(_served(tmp_path), tmp_path, JOB) == BOTH


def test_an_empty_observation_folder_observes_nothing(tmp_path: Path) -> None:
    # An empty topolog.observed/ (a mount its collector has not written to yet) is no observation:
    # the gate serves as without the folder (BOTH). It refused every revision before this review's fix
    # ("the folder holds no observation file"), so the gate could not start.
    copy_inputs(tmp_path)
    (tmp_path / OBSERVED_DIR).mkdir()
    revision = _served(tmp_path)
    assert revision.files["observed"] == {} and revision.placing.observed is None
    assert _ranked(admit_doc(revision, JOB.encode())["placement"]) == BOTH


def test_a_pipe_in_the_folder_is_refused_not_read(tmp_path: Path) -> None:
    # A FIFO (no writer) at the top of the folder or inside a host folder: the revision is refused,
    # naming it, without waiting on it; the copy could not keep what a pipe gave once. (Inside a host
    # folder it was skipped until round 15, the host judged without it: place now refuses it too.)
    copy_inputs(tmp_path)
    (tmp_path / OBSERVED_DIR / "mi300x-n0").mkdir(parents=True)
    (tmp_path / OBSERVED_DIR / "mi300x-n0" / "ibstat.txt").write_text(DOWN)
    assert _ranked(admit_doc(_served(tmp_path), JOB.encode())["placement"]) == N1
    for pipe in (tmp_path / OBSERVED_DIR / "mi300x-n0" / "inside.txt", tmp_path / OBSERVED_DIR / "pipe.txt"):
        os.mkfifo(pipe)
        with pytest.raises(TopologError) as refused:
            _served(tmp_path)
        assert str(refused.value) == f"{pipe}: cannot read observation file: it is not a regular file; expected one"
        pipe.unlink()


def test_a_file_no_reader_knows_refuses_the_revision_with_its_line(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    (tmp_path / OBSERVED_DIR / "mi300x-n0").mkdir(parents=True)
    bad = tmp_path / OBSERVED_DIR / "mi300x-n0" / "notes.txt"
    bad.write_text("rebooted at noon\n")
    with pytest.raises(TopologError) as refused:
        _served(tmp_path)
    assert str(refused.value).startswith(f"{bad}:1: not a format topolog reads observations from")


def test_over_the_socket_each_revision_judges_the_observations_it_was_built_from(tmp_path: Path) -> None:
    # The real server. Down: N1. A policy edit alone (a comment added: same decisions) is a new
    # revision built on the live one's inventory (revision.py: same_graph); it must copy the
    # observations too: still N1. Then mlx5_5 up: BOTH. Then a file no reader knows: the reload is
    # refused, the live revision (and its answer, BOTH) kept.
    copy_inputs(tmp_path)
    host = tmp_path / OBSERVED_DIR / "mi300x-n0"
    host.mkdir(parents=True)
    (host / "ibstat.txt").write_text(DOWN)
    with serving(tmp_path, "--no-watch", "--reload-quiet", f"{QUICK_S:g}") as server:

        def admit() -> tuple[str, list[tuple[str, int]]]:
            r = server.post("/v1/admit", JOB.encode())
            assert r.status_code == 200, r.text
            doc = r.json()
            return doc["revision"], _ranked(doc["placement"])

        first = server.revision()["revision"]
        assert admit() == (first, N1)
        with (tmp_path / "policies" / "fp64.cedar").open("a") as f:
            f.write("\n// reviewed\n")
        assert server.post("/v1/reload", b"").json()["ok"] is True
        policy_edit = new_revision(server, first)["revision"]
        assert admit() == (policy_edit, N1)
        (host / "ibstat.txt").write_text(UP)
        assert server.post("/v1/reload", b"").json()["ok"] is True
        up = new_revision(server, policy_edit)["revision"]
        assert admit() == (up, BOTH)
        (host / "notes.txt").write_text("rebooted at noon\n")
        r = server.post("/v1/reload", b"")
        assert r.status_code == 422
        assert reload_failed(server)["revision"] == up
        assert any("notes.txt:1" in e for e in r.json()["errors"]), r.json()
        assert admit() == (up, BOTH)
        assert "Traceback" not in server.stderr()


def test_admits_during_swaps_are_each_answered_on_the_revision_they_name(tmp_path: Path) -> None:
    # mlx5_5 flipped down and up with a reload after each while two clients admit: every answer names
    # a revision and is that revision's (down: N1, up: BOTH), never the other's. The same bytes give
    # the same revision id, so two revisions in all.
    copy_inputs(tmp_path)
    host = tmp_path / OBSERVED_DIR / "mi300x-n0"
    host.mkdir(parents=True)
    (host / "ibstat.txt").write_text(DOWN)
    with serving(tmp_path, "--no-watch", "--reload-quiet", f"{QUICK_S:g}") as server:
        expected = {server.revision()["revision"]: N1}
        stop = threading.Event()
        answers: list[tuple[int, str, list[tuple[str, int]]]] = []

        def ask() -> None:
            with server.client() as c:
                while not stop.is_set():
                    r = c.post("/v1/admit", content=JOB.encode())
                    doc = r.json()
                    placed = _ranked(doc["placement"]) if doc.get("placement") else []
                    answers.append((r.status_code, doc.get("revision", ""), placed))

        askers = [threading.Thread(target=ask) for _ in range(2)]
        for t in askers:
            t.start()
        try:
            for i in range(4):
                (host / "ibstat.txt").write_text(UP if i % 2 == 0 else DOWN)
                with server.client() as c:
                    status = c.post("/v1/reload").json()
                assert status["ok"] is True
                expected.setdefault(status["revision"], BOTH if i % 2 == 0 else N1)
        finally:
            stop.set()
            for t in askers:
                t.join(timeout=120)
        assert len(expected) == 2
        assert answers and all(code == 200 for code, _r, _p in answers)
        assert all(placed == expected[rev] for _c, rev, placed in answers), answers
        assert server.alive()


def test_on_the_dgx_pod_an_admit_answers_as_place_observed(tmp_path: Path) -> None:
    # The shipped dgx03 files that print no time (so never stale, whenever this runs): dcgm-exporter
    # says GPU 0's last XID is 95 (out of service, OBS004), nvlink -s says GPU 5 has 16 of 18 links
    # (out of its NVLink domain, OBS002). dan (team research) may use the pod's 8 nodes dgx00..dgx07.
    # An 8-GPU job in one node then fits 7 of them, not dgx03 (gpu0 is failed); the admit must say
    # so as `place --observed --why-not` does, why-not for dgx03 included.
    copy_inputs(tmp_path, "dgx-h100-pod.yaml")
    host = tmp_path / OBSERVED_DIR / "dgx03"
    host.mkdir(parents=True)
    shipped = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03"
    for name in ("dcgm-exporter.prom", "nvlink-s.txt"):
        shutil.copy(shipped / name, host / name)
    text = JOB.replace('User::"carol"', 'User::"dan"').replace("      min_network_bandwidth: 400 Gb/s\n", "")
    job = tmp_path / "job.yaml"
    job.write_text(text)
    doc = admit_doc(build_revision(ServeConfig((tmp_path / "dgx-h100-pod.yaml",))), text.encode())
    placement = doc["placement"]
    assert isinstance(placement, dict)
    (entry,) = placement["jobs"]
    assert entry["candidates"] == 8 and entry["hosting"] == 7
    assert sorted(p["domain"] for p in entry["placements"]) == [f"dgx0{i}" for i in range(8) if i != 3]
    code, out, err = run_cli(
        "place", str(tmp_path / "dgx-h100-pod.yaml"), str(job), "--observed", str(tmp_path / OBSERVED_DIR),
        "--why-not", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    assert doc["placement"] == json.loads(out)


def test_a_file_that_appears_while_the_revision_is_built_makes_it_built_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The observations take GPUs out of service from the folder as it is when the inventory has been
    # read, after the files were listed and digested. A dcgm-exporter scrape saying dgx03's GPU 0's
    # last XID is 95 (out of service, OBS004) written in between used to fail dgx03/gpu0 in a revision
    # whose files (its id, its copy) do not hold it. It is now a file changed under the build: refused
    # ("built again" by the watcher's next reload), and the next build holds it, digested and judged.
    copy_inputs(tmp_path, "dgx-h100-pod.yaml")
    host = tmp_path / OBSERVED_DIR / "dgx03"
    host.mkdir(parents=True)
    shipped = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03"
    shutil.copy(shipped / "nvlink-s.txt", host / "nvlink-s.txt")
    real = read_inventory

    def read_and_scrape(*args: Any, **kwargs: Any) -> Any:
        shutil.copy(shipped / "dcgm-exporter.prom", host / "dcgm.prom")
        return real(*args, **kwargs)

    config = ServeConfig((tmp_path / "dgx-h100-pod.yaml",))
    monkeypatch.setattr("verifier.service.revision.read_inventory", read_and_scrape)
    with pytest.raises(TopologError) as refused:
        build_revision(config)
    assert str(refused.value) == f"{host / 'dcgm.prom'}: changed while the revision was built; it is built again"
    monkeypatch.undo()
    revision = build_revision(config)
    assert sorted(revision.files["observed"]) == [str(host / "dcgm.prom"), str(host / "nvlink-s.txt")]
    assert revision.inputs.inventory.objects["dgx03/gpu0"].state == "down"


@PATHS
def test_ports_that_trained_down_are_judged_alike(tmp_path: Path, text: str) -> None:
    # UP: every port Active/LinkUp, but mlx5_5 at 10 Gb/s and mlx5_6 at 200 Gb/s (the shipped rates)
    # where their cables are declared 400 Gb/s: OBS104 reports them (verify), but only a port observed
    # down takes a GPU's fabric share (rules/observed/lib/out_of_service.dl: place_gpu_nic_observed_down
    # reads nic_port_down alone), so `place --observed` places on both MI300X nodes, and so must the
    # admit: BOTH.
    assert [line.strip() for line in UP.splitlines() if "Rate:" in line] == [
        "Rate: 400", "Rate: 400", "Rate: 400", "Rate: 400", "Rate: 400", "Rate: 10", "Rate: 200", "Rate: 400"
    ]  # fmt: skip
    copy_inputs(tmp_path)
    (tmp_path / OBSERVED_DIR / "mi300x-n0").mkdir(parents=True)
    (tmp_path / OBSERVED_DIR / "mi300x-n0" / "ibstat.txt").write_text(UP)
    assert _admitted(_served(tmp_path), tmp_path, text) == BOTH


@PATHS
def test_a_port_of_a_nic_the_node_lacks_changes_nothing(tmp_path: Path, text: str) -> None:
    # UP plus a ninth CA, mlx5_9, its port Down/Polling: mi300x-n0 has NICs nic0..nic7 only, so it
    # matches nothing declared (verify says OBS005) and takes no GPU's fabric share: BOTH, as in place.
    ninth = UP.split("CA 'mlx5_1'")[0].replace("mlx5_0", "mlx5_9")
    ninth = ninth.replace("State: Active", "State: Down").replace("Physical state: LinkUp", "Physical state: Polling")
    copy_inputs(tmp_path)
    (tmp_path / OBSERVED_DIR / "mi300x-n0").mkdir(parents=True)
    (tmp_path / OBSERVED_DIR / "mi300x-n0" / "ibstat.txt").write_text(UP + ninth)
    assert _admitted(_served(tmp_path), tmp_path, text) == BOTH


def test_an_observation_file_over_the_size_limit_refuses_the_revision(tmp_path: Path) -> None:
    # file_size lowered to 64 KiB (65,536 bytes: the inventory, 10,597 bytes, and every policy fit) and
    # the ibstat padded with blank lines to 70,000 bytes: the revision is refused with the file and the
    # limit named (exit 2 at start, a failed reload after), before anything of it is parsed, as
    # `place --observed` refuses it.
    copy_inputs(tmp_path)
    (tmp_path / OBSERVED_DIR / "mi300x-n0").mkdir(parents=True)
    big = tmp_path / OBSERVED_DIR / "mi300x-n0" / "ibstat.txt"
    big.write_text(DOWN + "\n" * (70_000 - len(DOWN)))
    assert big.stat().st_size == 70_000
    with use_limits(replace(current_limits(), file_size=65_536)), pytest.raises(TopologError) as refused:
        _served(tmp_path)
    assert str(refused.value).startswith(f"{big}: observation file is 70,000 bytes, over the limit file_size")


def test_serve_does_not_start_on_a_file_no_reader_knows(tmp_path: Path) -> None:
    # The same bad file at start: nothing is served, exit 2, the file and its line named, no traceback.
    copy_inputs(tmp_path)
    (tmp_path / OBSERVED_DIR / "mi300x-n0").mkdir(parents=True)
    bad = tmp_path / OBSERVED_DIR / "mi300x-n0" / "notes.txt"
    bad.write_text("rebooted at noon\n")
    code, out, err = run_cli("serve", str(tmp_path / "mixed-fleet.yaml"), "--port", "0")
    assert code == 2, out + err
    assert f"{bad}:1: not a format topolog reads observations from" in err
    assert "Traceback" not in out + err


def test_a_configmap_mounted_folder_is_read_once_through_its_links(tmp_path: Path) -> None:
    # The kubelet mounts a ConfigMap as `..2026_12_07_00_00_00.1/<key>` (a hidden folder), a link `..data`
    # to it, and one link per key through `..data`. A ConfigMap has no sub-folders, so the host is
    # named by the key: `mi300x-n0.ibstat.txt`. `place --observed` reads the key's link alone (hidden
    # entries are skipped), and so does the revision: one file digested, N1.
    copy_inputs(tmp_path)
    observed = tmp_path / OBSERVED_DIR
    stamped = observed / "..2026_12_07_00_00_00.1"
    stamped.mkdir(parents=True)
    (stamped / "mi300x-n0.ibstat.txt").write_text(DOWN)
    os.symlink(stamped.name, observed / "..data")
    os.symlink("..data/mi300x-n0.ibstat.txt", observed / "mi300x-n0.ibstat.txt")
    revision = _served(tmp_path)
    assert list(revision.files["observed"]) == [str(observed / "mi300x-n0.ibstat.txt")]
    assert _admitted(revision, tmp_path, JOB) == N1


def test_a_gpu_out_of_its_nvlink_domain_is_judged_alike_when_placed_from_scratch(tmp_path: Path) -> None:
    # test_serve_observed_nvlink.py's case (h100-n0's GPU 0 with links 16, 17 inactive: out of its
    # NVLink domain, OBS002) on the path that places from scratch: the job made rail-aligned. The
    # revision's inventory already has that GPU's access links failed, and `place --observed` fails them
    # again on it; the answer must not change. Rail alignment keeps all four nodes: on the H100 and
    # MI300X nodes GPU g and nic g (label rail: g) share PCIe switch g // 2, so each GPU has a nearest
    # NIC of its own rail (the leaves carry no rail label). So RANKED, as on the prepared path.
    from service.test_serve_observed_nvlink import JOB as PORTABLE
    from service.test_serve_observed_nvlink import RANKED, _nvlink_s

    copy_inputs(tmp_path)
    (tmp_path / OBSERVED_DIR / "h100-n0").mkdir(parents=True)
    (tmp_path / OBSERVED_DIR / "h100-n0" / "nvlink-s.txt").write_text(_nvlink_s({0: {16, 17}}))
    text = PORTABLE.read_text().replace("      scope: node\n", "      scope: node\n      rail_aligned: true\n")
    assert "rail_aligned: true" in text
    revision = _served(tmp_path)
    doc = admit_doc(revision, text.encode())
    assert _ranked(doc["placement"]) == RANKED
    assert revision.placing.describe()["admits"] == 0  # placed from scratch, not by the prepared evaluation
    assert doc["placement"] == _place(tmp_path, text)


def _built_at(monkeypatch: pytest.MonkeyPatch, config: ServeConfig, at: datetime) -> Revision:
    """A revision built with its clocks at `at` (_set_clock)."""
    with monkeypatch.context() as patched:
        _set_clock(patched, at)
        return build_revision(config)


def _failed(revision: Revision) -> list[str]:
    return sorted(o.id for o in revision.inputs.inventory.objects.values() if o.kind == "gpu" and o.state)


FRESH = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
STALE = datetime(2026, 12, 9, 9, 0, tzinfo=UTC)


@pytest.fixture
def timed(tmp_path: Path) -> ServeConfig:
    # The shipped dgx03 nvidia-smi -q -x, printed Sun Dec 6 08:30:00 2026 (read as UTC): it lists 7 of
    # the 8 GPUs (gpu7 missing: OBS006) and GPU 6 with a row remapping pending (OBS004). Its age is
    # judged at the clock (docs/observed.md "Age"; serve has no --observed-now), stale past one day.
    copy_inputs(tmp_path, "dgx-h100-pod.yaml")
    (tmp_path / OBSERVED_DIR / "dgx03").mkdir(parents=True)
    shipped = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03" / "nvidia-smi.xml"
    shutil.copy(shipped, tmp_path / OBSERVED_DIR / "dgx03" / "nvidia-smi.xml")
    return ServeConfig((tmp_path / "dgx-h100-pod.yaml",), reload_quiet_s=QUICK_S)


def test_a_revision_judges_age_at_the_clock_it_is_built_at(monkeypatch: pytest.MonkeyPatch, timed: ServeConfig) -> None:
    # Built half an hour after the file was printed: fresh, gpu6 and gpu7 failed. Built three days
    # after: stale, nothing it says is trusted, nothing failed (as `place --observed` judges it then).
    assert _failed(_built_at(monkeypatch, timed, FRESH)) == ["dgx03/gpu6", "dgx03/gpu7"]
    assert _failed(_built_at(monkeypatch, timed, STALE)) == []


def test_one_revision_id_is_one_answer_whenever_it_was_built(
    monkeypatch: pytest.MonkeyPatch, timed: ServeConfig
) -> None:
    # docs/serve.md: replicas that read the same files serve the same revision id. Two replicas of
    # these files, one started on Dec 6 and one on Dec 9, judge dgx03's file fresh and stale: the
    # first never places on dgx03/gpu6 and gpu7, the second does. So the id says which files were
    # judged stale (revision.Judged): the two builds are two revisions, each with one answer.
    fresh, stale = _built_at(monkeypatch, timed, FRESH), _built_at(monkeypatch, timed, STALE)
    assert fresh.id != stale.id
    assert (_failed(fresh), _failed(stale)) == (["dgx03/gpu6", "dgx03/gpu7"], [])
    assert fresh.judged is not None and stale.judged is not None
    observed = str(timed.inventory[0].parent / OBSERVED_DIR / "dgx03" / "nvidia-smi.xml")
    assert (fresh.judged.stale, stale.judged.stale) == ((), (observed,))
    # Every admit's placement judges the observations at the revision's clock too, not at its own.
    assert isinstance(fresh.placing.observed, KeptObservations)
    assert fresh.placing.observed.settings.now == fresh.judged.now == FRESH
    # The clock each judged at is reported, and the stale file is named with it.
    assert fresh.describe()["observations"] == {"judged_at": "2026-12-06T09:00:00Z", "stale": [], "unknown_hosts": []}
    assert stale.warnings() == [
        f"{observed}: observed longer ago than observed_max_age_s at 2026-12-09T09:00:00Z; nothing in it is trusted"
    ]


def test_builds_on_one_side_of_the_expiry_are_one_revision(monkeypatch: pytest.MonkeyPatch, timed: ServeConfig) -> None:
    # Printed Dec 6 08:30, stale past one day (observed_max_age_s 86400): Dec 6 09:00 and Dec 7 08:00
    # both judge it fresh (age 0.5 h and 23.5 h), so replicas started then serve one id, one answer.
    first = _built_at(monkeypatch, timed, FRESH)
    later = _built_at(monkeypatch, timed, datetime(2026, 12, 7, 8, 0, tzinfo=UTC))
    assert first.id == later.id
    assert _failed(first) == _failed(later) == ["dgx03/gpu6", "dgx03/gpu7"]


def test_a_reload_after_the_expiry_judges_the_ages_again(monkeypatch: pytest.MonkeyPatch, timed: ServeConfig) -> None:
    # Same files, policies unchanged: a reload may keep the live entity graph, but not the verdicts of
    # a file that went stale meanwhile: the reload at Dec 9 is the stale revision, nothing failed.
    live = _built_at(monkeypatch, timed, FRESH)
    with monkeypatch.context() as patched:
        _set_clock(patched, STALE)
        again = build_revision(timed, live)
    assert again.id == _built_at(monkeypatch, timed, STALE).id != live.id
    assert _failed(again) == []


def _clock(at: datetime) -> type[datetime]:
    class Clock(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> Clock:
            return cls.fromtimestamp(at.timestamp(), UTC)

    return Clock


def _set_clock(patched: pytest.MonkeyPatch, at: datetime) -> None:
    """Both clocks a revision reads at `at`: its own (revision.Judged) and the observation facts'
    (verifier/facts/observed.py), should anything read that one.
    """
    for where in ("verifier.facts.observed.datetime", "verifier.service.revision.datetime"):
        patched.setattr(where, _clock(at))


def test_observations_of_a_host_the_inventory_lacks_are_reported_not_dropped(
    monkeypatch: pytest.MonkeyPatch, timed: ServeConfig
) -> None:
    # The shipped folder's dgx12 (an nvlink -s of a host the 8-node pod, dgx00..dgx07, lacks; dgx03 is
    # the pod's) beside dgx03's nvidia-smi: dgx03's observations are still judged (gpu6 and gpu7 out of
    # service, as without it), and dgx12's file is named in the revision's status and warnings.
    folder = timed.inventory[0].parent / OBSERVED_DIR
    (folder / "dgx12").mkdir()
    shutil.copy(
        ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx12.nvlink-s.txt", folder / "dgx12" / "nvlink-s.txt"
    )
    revision = _built_at(monkeypatch, timed, FRESH)
    assert _failed(revision) == ["dgx03/gpu6", "dgx03/gpu7"]
    unknown = str(folder / "dgx12" / "nvlink-s.txt")
    observations = revision.describe()["observations"]
    assert isinstance(observations, dict)
    assert observations["unknown_hosts"] == [{"host": "dgx12", "file": unknown}]
    assert revision.warnings() == [
        f"{unknown}: host 'dgx12' is no node of the served inventory; its observations are not judged"
    ]


def test_the_gate_says_which_observations_its_live_revision_does_not_use(
    monkeypatch: pytest.MonkeyPatch, timed: ServeConfig
) -> None:
    # Started with dgx12's file beside dgx03's (as above): the start's status warns of it; once it is
    # taken away, the reload's new revision has nothing to warn of.
    folder = timed.inventory[0].parent / OBSERVED_DIR
    (folder / "dgx12").mkdir()
    unknown = folder / "dgx12" / "nvlink-s.txt"
    shutil.copy(ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx12.nvlink-s.txt", unknown)
    with monkeypatch.context() as patched:
        _set_clock(patched, FRESH)
        gate = Gate(timed)
        warned = [f"{unknown}: host 'dgx12' is no node of the served inventory; its observations are not judged"]
        assert gate.last_reload.warnings == warned == gate.describe()["warnings"]
        shutil.rmtree(folder / "dgx12")
        status = gate.reload("test")
    assert status.changed and status.warnings == [] and status.describe()["warnings"] == []
