"""POST /v1/admit on the real server: `place --why-not` on the revision's files, and the decision log.

Hand derivation, from inventories/jobs/inference.yaml's own comment and mixed-fleet.yaml: two
replicas of an 8B model, one RTX 4090 each, scope node, principal Team::"students". Only the
four RTX workstations hold RTX 4090s; rtx-n0 and rtx-n1 are quarantined (quarantine-closed
forbids everyone outside an incident), rtx-n2 is robotics' and has gpu1 down: only rtx-n3
hosts it -> admitted, on rtx-n3/gpu0 and rtx-n3/gpu1. inventories/jobs/impossible.yaml asks
128 GPUs in one NVLink domain; the mixed fleet's largest domain is an HGX node's 8 -> not
admitted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from service.serve_helpers import ROOT, Server, copy_inputs, serving, wait_for

from verifier.service.decision_log import DecisionLog

JOBS = ROOT / "inventories" / "jobs"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve-admit")
    copy_inputs(folder)
    with serving(folder, "--decision-log", str(folder / "decisions.jsonl")) as s:
        yield s


def _cli_place(server: Server, job: Path, *flags: str) -> tuple[int, dict[str, object]]:
    code, out, _err = run_cli(
        "place", str(server.folder / "mixed-fleet.yaml"), str(job), "--why-not", "--format", "json", *flags
    )
    return code, json.loads(out)


@pytest.mark.parametrize(("job", "admitted"), [("inference.yaml", True), ("impossible.yaml", False)])
def test_admit_answers_as_place_why_not_does(server: Server, job: str, admitted: bool) -> None:
    r = server.post("/v1/admit", (JOBS / job).read_bytes())
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["admitted"] is admitted
    assert doc["revision"] == server.revision()["revision"]
    code, cli = _cli_place(server, JOBS / job)
    assert code == (0 if admitted else 1)
    assert doc["placement"] == cli
    (only,) = doc["placement"]["jobs"]
    if admitted:
        assert [p["gpus"] for p in only["placements"]] == [["rtx-n3/gpu0", "rtx-n3/gpu1"]]
    else:
        assert only["placements"] == [] and only["why_not"]


# portable.yaml's own comment: hana's 8-GPU job fits the two H100 nodes (450 GB/s over NVSwitch)
# and the two MI300X nodes (xGMI: a GPU reaches the other 7 over one 64 GB/s link each, 448 GB/s
# at once, docs/placement.md) of the mixed fleet: 4 hosting domains, ranked by bandwidth h100-n0,
# h100-n1 (a tie broken by name), then the MI300X nodes.
PORTABLE_RANKED = ["h100-n0", "h100-n1", "mi300x-n0", "mi300x-n1"]


@pytest.mark.parametrize("limit", [1, 2])
def test_an_admit_lists_the_best_limit_placements_as_place_limit_does(server: Server, limit: int) -> None:
    r = server.post(f"/v1/admit?limit={limit}", (JOBS / "portable.yaml").read_bytes())
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["admitted"] is True and doc["limit"] == limit
    _code, cli = _cli_place(server, JOBS / "portable.yaml", "--limit", str(limit))
    assert doc["placement"] == cli
    (only,) = doc["placement"]["jobs"]
    assert only["hosting"] == 4  # every hosting domain counted, only the best shown
    assert [p["domain"] for p in only["placements"]] == PORTABLE_RANKED[:limit]


def test_an_admit_lists_up_to_ten_placements_unless_asked(server: Server) -> None:
    # 4 hosting domains, fewer than the default 10: all of them, as `place` without --limit lists them.
    doc = server.post("/v1/admit", (JOBS / "portable.yaml").read_bytes()).json()
    assert doc["limit"] == 10
    assert doc["placement"] == _cli_place(server, JOBS / "portable.yaml")[1]
    assert [p["domain"] for p in doc["placement"]["jobs"][0]["placements"]] == PORTABLE_RANKED


def test_a_plain_job_is_admitted_without_the_rules_as_place_answers(server: Server, tmp_path: Path) -> None:
    # hpc.yaml asks FP64, 80 GB and no quarantine: a plain job (verifier/placement/plain.py).
    # Its own comment: only the MI300X nodes are both FP64 and Cedar-permitted for team hpc, so
    # they host it (mi300x-n0 and mi300x-n1) and every other node has a why-not.
    body = (JOBS / "hpc.yaml").read_text().replace("cfd-fp64", "cfd-fp64-http")  # not asked before
    job = tmp_path / "hpc.yaml"
    job.write_text(body)
    wait_for("placement prepared", lambda: bool(server.revision()["placement"].get("prepared")))
    before = server.revision()["placement"]["plain"]
    doc = server.post("/v1/admit", body.encode()).json()
    assert server.revision()["placement"]["plain"] == before + 1
    assert doc["placement"] == _cli_place(server, job)[1]
    (only,) = doc["placement"]["jobs"]
    assert doc["admitted"] is True
    assert [p["domain"] for p in only["placements"]] == ["mi300x-n0", "mi300x-n1"]
    assert only["why_not"] and all(w["domain"] not in ("mi300x-n0", "mi300x-n1") for w in only["why_not"])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("limit=-1", "limit '-1' is not a count"),
        ("limit=ten", "limit 'ten' is not a count"),
        ("limit=1234567890", "limit '1234567890' is not a count"),
        ("limit=1&limit=2", "limit is given 2 times"),
    ],
)
def test_a_limit_that_is_no_count_is_a_400(server: Server, query: str, expected: str) -> None:
    r = server.post(f"/v1/admit?{query}", (JOBS / "portable.yaml").read_bytes())
    assert r.status_code == 400
    assert expected in r.json()["error"]


def test_the_configured_limit_is_the_default_and_limit_0_lists_all(tmp_path: Path) -> None:
    copy_inputs(tmp_path)
    with serving(tmp_path, "--admit-limit", "1") as one:
        body = (JOBS / "portable.yaml").read_bytes()
        first = one.post("/v1/admit", body).json()
        assert first["limit"] == 1
        assert [p["domain"] for p in first["placement"]["jobs"][0]["placements"]] == PORTABLE_RANKED[:1]
        every = one.post("/v1/admit?limit=0", body).json()
        assert every["placement"] == _cli_place(one, JOBS / "portable.yaml")[1]
        assert [p["domain"] for p in every["placement"]["jobs"][0]["placements"]] == PORTABLE_RANKED


def test_a_job_of_an_unknown_principal_is_refused_with_the_reason(server: Server) -> None:
    text = (JOBS / "inference.yaml").read_text().replace('Team::"students"', 'Team::"nobody"')
    doc = server.post("/v1/admit", text.encode()).json()
    assert doc["admitted"] is False and doc["placement"] is None
    assert any("nobody" in e for e in doc["errors"]), doc
    assert not any("topolog-revision-" in e for e in doc["errors"])  # the user's file names, not the copies


def test_a_body_that_is_no_job_file_is_a_422_with_its_line(server: Server) -> None:
    r = server.post("/v1/admit", b"apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - name: x\n    gpus: many\n")
    assert r.status_code == 422
    assert "<request body>:5" in r.json()["error"]


def test_the_decision_log_has_one_line_per_decision_naming_the_revision(server: Server) -> None:
    before = _lines(server.folder / "decisions.jsonl")
    server.authorize("ivan", "schedule", "a100-n0/gpu0")
    server.post("/v1/admit", (JOBS / "inference.yaml").read_bytes())
    after = _lines(server.folder / "decisions.jsonl")
    new = after[len(before) :]
    assert [(x["endpoint"], x["decision"]) for x in new] == [("authorize", "DENY"), ("admit", "ALLOW")]
    assert new[0]["policies"] == [{"effect": "forbid", "id": "interns-consumer-only"}]
    assert new[0]["request"]["principal"] == "ivan"
    revision = server.revision()["revision"]
    assert all(x["revision"] == revision and x["latency_ms"] >= 0 and x["time"].endswith("Z") for x in new)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_rotation_loses_no_line(tmp_path: Path) -> None:
    # 200 records of about 100 bytes each against 2,000-byte files: about ten rotations, and
    # with 50 backups kept every record must still be somewhere, once, whole.
    log = DecisionLog(tmp_path / "d.jsonl", max_bytes=2000, backups=50)
    for i in range(200):
        log.write({"n": i, "pad": "x" * 60})
    log.close()
    files = sorted(tmp_path.glob("d.jsonl*"))
    assert len(files) > 5
    seen = sorted(int(json.loads(line)["n"]) for f in files for line in f.read_text().splitlines())
    assert seen == list(range(200))
