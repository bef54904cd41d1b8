"""Adversarial review of serve's observation clock (de07fb2): one clock per revision, the files judged
stale part of the revision id, unknown hosts reported.

Hand derivation (tests/service/test_serve_observed_review.py's `timed` fixture): the shipped dgx03
nvidia-smi -q -x was printed Sun Dec 6 08:30:00 2026 (read as UTC). It lists 7 of the 8 GPUs and GPU
6 with a row remapping pending, so while it is trusted dgx03's gpu6 and gpu7 are out of service. A
file is stale when its age in whole seconds (verifier/facts/observed.py: int(now - printed)) is more
than observed_max_age_s, 86,400 s by default: at Dec 7 08:30:00 it is exactly 86,400 s old, not more,
so still trusted; at 08:30:00.999 the whole seconds are still 86,400; at 08:30:01 it is 86,401 s old,
stale, and nothing in it is trusted (no GPU out of service).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from service.test_serve_observed_nic import JOB
from service.test_serve_observed_review import FRESH, STALE, _built_at, _failed, _set_clock, timed

from verifier.service.config import ServeConfig
from verifier.service.gate import Gate, admit_doc

__all__ = ["timed"]  # the fixture, used here by name

LIMIT = datetime(2026, 12, 7, 8, 30, 0, tzinfo=UTC)
JUST_PAST = datetime(2026, 12, 7, 8, 30, 0, 999_999, tzinfo=UTC)
ONE_S_PAST = datetime(2026, 12, 7, 8, 30, 1, tzinfo=UTC)
# dan (team research) may use the pod's 8 nodes; an 8-GPU job in one node, no network floor.
DAN_JOB = JOB.replace('User::"carol"', 'User::"dan"').replace("      min_network_bandwidth: 400 Gb/s\n", "")


def _place_at(config: ServeConfig, at: str) -> dict[str, Any]:
    """`place --observed FOLDER --observed-now AT --why-not --format json` on the served files."""
    folder = config.inventory[0].parent
    job = folder / "job.yaml"
    job.write_text(DAN_JOB)
    code, out, err = run_cli(
        "place", str(config.inventory[0]), str(job), "--observed", str(folder / "topolog.observed"),
        "--observed-now", at, "--why-not", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_the_dan_job_is_the_one_the_pod_test_places() -> None:
    assert DAN_JOB != JOB and 'User::"dan"' in DAN_JOB and "min_network_bandwidth" not in DAN_JOB


@pytest.mark.parametrize(
    ("at", "shown", "failed"),
    [
        (LIMIT, "2026-12-07T08:30:00Z", ["dgx03/gpu6", "dgx03/gpu7"]),
        (JUST_PAST, "2026-12-07T08:30:00Z", ["dgx03/gpu6", "dgx03/gpu7"]),
        (ONE_S_PAST, "2026-12-07T08:30:01Z", []),
    ],
    ids=["exactly-one-day", "under-a-second-past", "one-second-past"],
)
def test_the_expiry_edge_is_judged_as_place_judges_it(
    monkeypatch: pytest.MonkeyPatch, timed: ServeConfig, at: datetime, shown: str, failed: list[str]
) -> None:
    # The admit's placement equals `place --observed-now` at the same clock (printed to the second,
    # as place reads it: the microseconds under the limit do not change whole seconds).
    revision = _built_at(monkeypatch, timed, at)
    assert _failed(revision) == failed
    assert revision.judged is not None and bool(revision.judged.stale) == (not failed)
    assert admit_doc(revision, DAN_JOB.encode())["placement"] == _place_at(timed, shown)


def test_the_id_changes_at_the_expiry_and_nowhere_else(monkeypatch: pytest.MonkeyPatch, timed: ServeConfig) -> None:
    # Fresh at Dec 6 09:00, at exactly one day and just under a second past it: one revision id (same
    # files, none stale). One second past: another id (the file now judged stale is in it).
    ids = {at: _built_at(monkeypatch, timed, at).id for at in (FRESH, LIMIT, JUST_PAST, ONE_S_PAST, STALE)}
    assert ids[FRESH] == ids[LIMIT] == ids[JUST_PAST]
    assert ids[ONE_S_PAST] == ids[STALE] != ids[FRESH]


def test_a_clock_stepped_back_gives_the_fresh_revision_again(
    monkeypatch: pytest.MonkeyPatch, timed: ServeConfig
) -> None:
    # Started on Dec 9 (file stale, nothing failed), then the host clock is stepped back to Dec 6 (an
    # NTP correction) and the gate reloads: the same files judged fresh are the fresh revision, the
    # one a replica started on Dec 6 serves, and gpu6 and gpu7 are out of service again.
    with monkeypatch.context() as patched:
        _set_clock(patched, STALE)
        gate = Gate(timed)
        stale_id = gate.live.id
        assert _failed(gate.live) == []
        _set_clock(patched, FRESH)
        status = gate.reload("test")
    assert status.ok and status.changed and status.revision != stale_id
    assert status.revision == _built_at(monkeypatch, timed, FRESH).id
    assert _failed(gate.live) == ["dgx03/gpu6", "dgx03/gpu7"]
    assert status.warnings == []


def test_a_reload_on_the_same_side_keeps_the_revision_and_its_clock(
    monkeypatch: pytest.MonkeyPatch, timed: ServeConfig
) -> None:
    # Started Dec 6 09:00, reloaded Dec 7 08:00 (fresh still): the same bytes and verdicts are the
    # same revision, kept live (no change), judged at its own clock still: "2026-12-06T09:00:00Z".
    with monkeypatch.context() as patched:
        _set_clock(patched, FRESH)
        gate = Gate(timed)
        first = gate.live
        _set_clock(patched, datetime(2026, 12, 7, 8, 0, tzinfo=UTC))
        status = gate.reload("test")
    assert status.ok and not status.changed and gate.live is first
    observations = gate.live.describe()["observations"]
    assert isinstance(observations, dict) and observations["judged_at"] == "2026-12-06T09:00:00Z"


def test_an_admit_long_after_the_build_judges_at_the_build_clock(
    monkeypatch: pytest.MonkeyPatch, timed: ServeConfig
) -> None:
    # Built fresh (Dec 6 09:00), not reloaded; an admit at Dec 9 (the file stale by then) still
    # answers as the revision it names: dgx03 hosts nothing (gpu6, gpu7 out of service), 7 of 8 nodes.
    revision = _built_at(monkeypatch, timed, FRESH)
    with monkeypatch.context() as patched:
        _set_clock(patched, STALE)
        placement = admit_doc(revision, DAN_JOB.encode())["placement"]
    assert isinstance(placement, dict)
    (entry,) = placement["jobs"]
    assert sorted(p["domain"] for p in entry["placements"]) == [f"dgx0{i}" for i in range(8) if i != 3]


def test_a_gate_started_on_a_stale_file_warns_of_it(monkeypatch: pytest.MonkeyPatch, timed: ServeConfig) -> None:
    # The start's status carries the live revision's warnings (7fbdf1b): a stale file is one.
    folder: Path = timed.inventory[0].parent
    observed = str(folder / "topolog.observed" / "dgx03" / "nvidia-smi.xml")
    with monkeypatch.context() as patched:
        _set_clock(patched, STALE)
        gate = Gate(timed)
    assert gate.last_reload.warnings == [
        f"{observed}: observed longer ago than observed_max_age_s at 2026-12-09T09:00:00Z; nothing in it is trusted"
    ]
