"""Live reload on the real server: an edit flips a decision, a broken edit changes nothing, no mixed revisions.

Hand derivation (see test_serve_authorize.py): alice may schedule on a100-n0/gpu0 under the
shipped policies (tenant-own-hardware). The policy added here,
`forbid (principal == User::"alice", action, resource)`, matches that request, and a forbid
wins over any permit in Cedar: DENY decided by alice-suspended. A file that is not Cedar
(`forbid (principal` cut short) must be refused whole: alice stays ALLOWED on the old revision.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from pathlib import Path
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st
from service.serve_helpers import QUICK_S, Server, copy_inputs, new_revision, reload_failed, serving, wait_for

SUSPEND = '@id("alice-suspended")\nforbid (principal == User::"alice", action, resource);\n'
BROKEN = '@id("half-written")\nforbid (principal\n'
# The watcher's quiet wait for the tests here that write each file whole (write_text, a rename):
# none reads a half-written file, so the default 2 s only waits; 0.5 s still gathers the
# watcher's events of one edit into one reload.
WATCH_QUIET = ("--reload-quiet", "0.5")


def _alice(server: Server) -> dict[str, Any]:
    return server.authorize("alice", "schedule", "a100-n0/gpu0")


def test_a_policy_edit_flips_the_decision_through_the_file_watcher(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    with serving(tmp_path, *WATCH_QUIET) as server:
        before = _alice(server)
        assert before["decision"] == "ALLOW"
        (tmp_path / "policies" / "suspend.cedar").write_text(SUSPEND)
        after_rev = new_revision(server, before["revision"])
        assert after_rev["last_reload"]["trigger"] == "watch" and after_rev["last_reload"]["ok"] is True
        assert any(p.endswith("suspend.cedar") for p in after_rev["files"]["policies"])
        after = _alice(server)
        assert after["decision"] == "DENY"
        assert [p["id"] for p in after["policies"]] == ["alice-suspended"]
        assert after["revision"] == after_rev["revision"]
        assert 'topolog_reloads_total{trigger="watch"}' in server.get("/metrics").text


def test_a_broken_policy_edit_keeps_the_old_decision_and_reports_where(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    with serving(tmp_path, *WATCH_QUIET) as server:
        before = _alice(server)
        (tmp_path / "policies" / "broken.cedar").write_text(BROKEN)
        doc = reload_failed(server)
        assert doc["revision"] == before["revision"]
        errors = doc["last_reload"]["errors"]
        assert errors and all("broken.cedar" in e for e in errors), errors
        after = _alice(server)
        assert after["decision"] == "ALLOW" and after["revision"] == before["revision"]
        metrics = server.get("/metrics").text
        assert 'topolog_reload_failures_total{trigger="watch"} 1.0' in metrics
        assert "broken.cedar" in server.stderr()  # the log names the file too
        # An explicit reload says the same, with 422, and still changes nothing.
        r = server.post("/v1/reload", b"")
        assert r.status_code == 422 and r.json()["ok"] is False
        assert _alice(server)["decision"] == "ALLOW"


def test_sighup_reloads_and_a_broken_inventory_is_refused(tmp_path: Path) -> None:
    inventory = copy_inputs(tmp_path)
    with serving(tmp_path, "--no-watch", "--reload-quiet", f"{QUICK_S:g}") as server:
        old = server.revision()["revision"]
        (tmp_path / "policies" / "suspend.cedar").write_text(SUSPEND)
        server.process.send_signal(signal.SIGHUP)
        doc = new_revision(server, old)
        assert doc["last_reload"]["trigger"] == "signal"
        assert _alice(server)["decision"] == "DENY"
        # The inventory's first line made invalid YAML: refused, with its line, the live revision kept.
        good = inventory.read_text()
        inventory.write_text("kind: [\n" + good)
        r = server.post("/v1/reload", b"")
        assert r.status_code == 422
        assert any(f"{inventory.name}:" in e for e in r.json()["errors"]), r.json()
        assert server.revision()["revision"] == doc["revision"]
        assert _alice(server)["decision"] == "DENY"


def test_requests_during_reloads_are_all_answered_on_one_revision_or_the_other(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    suspend = tmp_path / "policies" / "suspend.cedar"
    with serving(tmp_path, "--no-watch", "--reload-quiet", f"{QUICK_S:g}") as server:
        allow_rev = server.revision()["revision"]
        stop = threading.Event()
        answers: list[tuple[int, str, str]] = []

        def ask() -> None:
            with server.client() as c:
                while not stop.is_set():
                    r = c.post(
                        "/v1/authorize", json={"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}
                    )
                    doc = r.json()
                    answers.append((r.status_code, doc.get("revision", ""), doc.get("decision", "")))

        askers = [threading.Thread(target=ask) for _ in range(2)]
        for t in askers:
            t.start()
        revisions = {allow_rev: "ALLOW"}
        try:
            for i in range(6):
                if i % 2 == 0:
                    suspend.write_text(SUSPEND)
                else:
                    suspend.unlink()
                with server.client() as c:
                    status = c.post("/v1/reload").json()
                assert status["ok"] is True
                revisions.setdefault(status["revision"], "ALLOW" if i % 2 else "DENY")
        finally:
            stop.set()
            for t in askers:
                t.join(timeout=60)
        assert len(revisions) == 2  # removing the file again gives the first revision back, by content
        assert answers and all(status == 200 for status, _r, _d in answers)
        # Each answer names a revision, and is that revision's decision: never one of the other.
        assert {(rev, d) for _s, rev, d in answers} <= set(revisions.items())
        assert server.alive()


def test_fuzzed_bodies_get_4xx_and_the_server_keeps_serving(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    with serving(tmp_path) as server, server.client() as c:
        json_values = st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
            max_leaves=20,
        )

        @settings(max_examples=30, deadline=None, database=None)
        @given(raw=st.binary(max_size=200), value=json_values, path=st.sampled_from(
            ["/v1/authorize", "/v1/authorize/batch", "/v1/admit", "/v1/admission"]))  # fmt: skip
        def check(raw: bytes, value: object, path: str) -> None:
            for body in (raw, httpx.Request("POST", "/", json=value).content):
                r = c.post(path, content=body)
                assert 400 <= r.status_code < 500 or _refused(r), (path, body, r.status_code, r.text)

        check()
        wait_for("the server still answering", lambda: c.get("/healthz").status_code == 200)


def _refused(r: httpx.Response) -> bool:
    """A 200 that refuses: a Deny, or a job not admitted (a fuzzed body that happens to parse)."""
    if r.status_code != 200:
        return False
    doc = r.json()
    return doc.get("decision") == "DENY" or doc.get("admitted") is False


def test_a_policy_in_a_subfolder_is_watched_and_kept_in_the_snapshot(tmp_path: Path) -> None:
    # Every *.cedar under the policy folder is read (verifier.authorization.policies.policy_files):
    # a forbid added in a subfolder flips alice's decision as one at the top does, and the copy
    # that `admit` places on holds it at the same place.
    copy_inputs(tmp_path)
    with serving(tmp_path, *WATCH_QUIET) as server:
        before = _alice(server)
        assert before["decision"] == "ALLOW"
        (tmp_path / "policies" / "people").mkdir()
        (tmp_path / "policies" / "people" / "Suspend.CEDAR").write_text(SUSPEND)
        after_rev = new_revision(server, before["revision"])
        assert any(p.endswith("people/Suspend.CEDAR") for p in after_rev["files"]["policies"])
        after = _alice(server)
        assert (after["decision"], [p["id"] for p in after["policies"]]) == ("DENY", ["alice-suspended"])


def test_the_snapshot_keeps_subfolders_apart(tmp_path: Path) -> None:
    from verifier.service.config import ServeConfig
    from verifier.service.revision import build_revision

    inventory = copy_inputs(tmp_path)
    for team in ("a", "b"):
        (tmp_path / "policies" / team).mkdir()
        # Two files of one name in two subfolders, each with its own policy id.
        (tmp_path / "policies" / team / "extra.cedar").write_text(SUSPEND.replace("alice-suspended", f"{team}-x"))
    revision = build_revision(ServeConfig((inventory,), watch=False))
    copied = revision.snapshot.policies
    assert (copied / "a" / "extra.cedar").read_text() != (copied / "b" / "extra.cedar").read_text()


def test_a_configmap_style_swap_of_the_principals_is_noticed(tmp_path: Path) -> None:
    # The kubelet's layout of a mounted ConfigMap: each file is a link through `..data`, a link to
    # a timestamped folder; an update writes a new folder and renames a new `..data` over the old.
    # alice moved from team-nlp to team-vision: a100-n0 (tenant team-nlp) is no longer hers -> DENY.
    copy_inputs(tmp_path)
    mount = tmp_path / "mount"
    first = mount / "..2026_12_06_01"
    first.mkdir(parents=True)
    for name in ("mixed-fleet.yaml", "principals.yml"):
        (tmp_path / name).rename(first / name)
        (mount / name).symlink_to(Path("..data") / name)
    (mount / "..data").symlink_to(first.name)
    (tmp_path / "policies").rename(mount / "policies")
    with serving(mount, *WATCH_QUIET, inventory="mixed-fleet.yaml") as server:
        before = _alice(server)
        assert before["decision"] == "ALLOW"
        second = mount / "..2026_12_06_02"
        second.mkdir()
        shutil.copy(first / "mixed-fleet.yaml", second / "mixed-fleet.yaml")
        text = (first / "principals.yml").read_text()
        moved = text.replace("{id: alice, teams: [team-nlp]", "{id: alice, teams: [team-vision]")
        assert moved != text
        (second / "principals.yml").write_text(moved)
        (mount / "..data_tmp").symlink_to(second.name)
        os.rename(mount / "..data_tmp", mount / "..data")
        new_revision(server, before["revision"])
        assert _alice(server)["decision"] == "DENY"
