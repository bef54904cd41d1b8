"""Adversarial cases for how `place` makes its authorization facts (issue 46).

Two shortcuts decide who may schedule where: GPUs are put in classes by their shared attribute
mapping (classes.partition_gpus, falling back to uids when an id holds a character that sorts it
apart from its uid, or a policy names hardware or compares entities), and `place` asks Cedar
about its jobs' principals only (AuthzSetup.deciding_for, with the cache entry named by them).
A wrong class opens or closes the gate for a GPU; a narrowed or reused decision does it for a
principal. Each case here is worked out by hand from the fixture below.

The fixture: pod p0 holds rack ra (tenant a) and rack rb (tenant b); every node is the template
`box`, two H100-SXM5-80GB GPUs (gpu0, gpu1) that share one attribute mapping unless an override
sets them apart. ra holds n0, n1 (override: gpu1 labelled quarantine "true"), n2 (override: gpu0
down) and, in the `odd` variant, five nodes whose ids hold a space, a double quote, a backslash,
a non-ASCII letter and "!" (each sorts differently as an id than inside its uid Gpu::"..."). rb
holds m0 and m1. Principals: team a (tenant a), team b (tenant b), team sre; user u1 (team a,
engineer), u2 (team b, engineer), u3 (team a, intern); service account svc (team a).

Every job asks for 2 GPUs of one node, so a node hosts it only when both of its GPUs may be
scheduled by the job's principal and are up: n1 never (gpu1 quarantined: quarantine-closed
forbids it, no incident in place's context), n2 never (gpu0 down).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

ODD = ["n 3", 'n"4', "n\\5", "né6", "n!7"]
"""Node ids whose GPUs' ids sort apart from their uids (or, né6, that uid() leaves unescaped)."""


def _inventory(odd: bool, nodes: list[str] = ODD, rb_tenant: str = "b") -> str:
    extra = "".join(f"          - {{template: box, name: {json.dumps(n)}}}\n" for n in nodes) if odd else ""
    return f"""\
apiVersion: topolog.dev/v1
kind: Inventory
templates:
  box:
    kind: node
    children:
      - {{name: "gpu{{i}}", kind: gpu, model: H100-SXM5-80GB, count: 2}}
objects:
  - name: p0
    kind: pod
    children:
      - name: ra
        kind: rack
        labels: {{tenant: a}}
        children:
          - template: box
            name: "n{{i}}"
            count: 3
            overrides:
              n1:
                devices: {{gpu1: {{labels: {{quarantine: "true"}}}}}}
              n2:
                devices: {{gpu0: {{state: down}}}}
{extra}      - name: rb
        kind: rack
        labels: {{tenant: {rb_tenant}}}
        children:
          - {{template: box, name: "m{{i}}", count: 2}}
"""


PRINCIPALS = """\
apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: a, tenant: a}
  - {id: b, tenant: b}
  - {id: sre}
users:
  - {id: u1, teams: [a], role: engineer}
  - {id: u2, teams: [b], role: engineer}
  - {id: u3, teams: [a], role: intern}
service_accounts:
  - {id: svc, teams: [a]}
"""

JOBS = {
    "j-u1": 'User::"u1"',
    "j-a": 'Team::"a"',
    "j-u2": 'User::"u2"',
    "j-u3": 'User::"u3"',
    "j-svc": 'ServiceAccount::"svc"',
}


def _jobs(names: list[str]) -> str:
    lines = [f"  - {{name: {n}, principal: {json.dumps(JOBS[n])}, gpus: 2, topology: {{scope: node}}}}" for n in names]
    return "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n" + "\n".join(lines) + "\n"


EXTRA_POLICIES = {
    # A policy that names GPUs: u1 may not schedule n0/gpu1 (team a still may); team b may
    # schedule both GPUs of n0 (tenant a's) by name, so u2 (in team b) is hosted by n0 too.
    "named_gpu": """
@id("u1-not-n0-gpu1")
forbid (principal == User::"u1", action == Action::"schedule", resource == Gpu::"n0/gpu1");
@id("b-on-n0")
permit (principal in Team::"b", action == Action::"schedule", resource)
when { resource == Gpu::"n0/gpu0" || resource == Gpu::"n0/gpu1" };
""",
    # A policy that reads an ancestor through `in`: node n0 is closed to everyone but user u1.
    "ancestor": """
@id("n0-u1-only")
forbid (principal, action == Action::"schedule", resource in Node::"n0")
unless { principal == User::"u1" };
""",
    # A policy that reads the GPU's state: a down GPU is closed to everyone.
    "down_closed": """
@id("down-closed")
forbid (principal, action == Action::"schedule", resource)
when { resource.state == "down" };
""",
    # A policy that compares principal and resource as entities: no principal is ever `in` a
    # GPU, so it permits nothing, but it switches every class off (each entity its own).
    "compares_entities": """
@id("never-in-a-gpu")
permit (principal, action == Action::"schedule", resource)
when { principal in resource };
""",
}


def _folder(tmp_path: Path, odd: bool, extra: str | None) -> Path:
    folder = tmp_path / "cluster"
    folder.mkdir()
    (folder / "cluster.yaml").write_text(_inventory(odd), encoding="utf-8")
    (folder / "principals.yml").write_text(PRINCIPALS, encoding="utf-8")
    policies = folder / "policies"
    policies.mkdir()
    for f in (ROOT / "policies").iterdir():
        if f.suffix in (".cedar", ".cedarschema"):
            (policies / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    if extra is not None:
        (policies / "extra.cedar").write_text(EXTRA_POLICIES[extra], encoding="utf-8")
    return folder


def _hosts(folder: Path, names: list[str], env: dict[str, str] | None = None) -> tuple[int, dict[str, list[str]]]:
    """Exit code and, per job, the nodes that host it (every placement of a 1-node job)."""
    jobs = folder / f"jobs-{'-'.join(names)}.yaml"
    jobs.write_text(_jobs(names), encoding="utf-8")
    code, out, err = run_cli("place", str(folder / "cluster.yaml"), str(jobs), "--format", "json", env=env)
    assert code in (0, 1), err
    report = json.loads(out)
    hosts = {
        j["job"]: sorted({g.rsplit("/", 1)[0] for p in j["placements"] for g in p["gpus"]}) for j in report["jobs"]
    }
    return code, hosts


def _plain(odd: bool) -> list[str]:
    # Tenant a's nodes whose two GPUs are both open and up: n0, and every odd node (all alike).
    return sorted(["n0", *(ODD if odd else [])])


@pytest.mark.parametrize("odd", [False, True], ids=["plain-ids", "odd-ids"])
@pytest.mark.parametrize("extra", [None, "compares_entities"])
def test_shipped_policies_by_principal(tmp_path: Path, odd: bool, extra: str | None) -> None:
    # By hand (policies/): tenant-own-hardware lets u1 and team a schedule on ra's GPUs and u2 on
    # rb's; quarantine-closed shuts n1/gpu1; n2/gpu0 is down. So u1 and a: n0 (+ the odd nodes);
    # u2: m0, m1. interns-consumer-only forbids u3 (an intern) every H100; service-accounts-never-
    # schedule forbids svc: no host for them, so exit 1 (a job fits nowhere). The entity-comparing
    # policy permits nothing more: the same answer with every GPU its own class.
    folder = _folder(tmp_path, odd, extra)
    code, hosts = _hosts(folder, list(JOBS))
    assert code == 1
    assert hosts == {"j-u1": _plain(odd), "j-a": _plain(odd), "j-u2": ["m0", "m1"], "j-u3": [], "j-svc": []}


@pytest.mark.parametrize("odd", [False, True], ids=["plain-ids", "odd-ids"])
def test_a_policy_naming_gpus(tmp_path: Path, odd: bool) -> None:
    # By hand: u1 loses n0 (its gpu1 forbidden to u1 alone); team a keeps it; u2 (team b) gains n0,
    # both of whose GPUs b-on-n0 names. n0's two GPUs share one attribute mapping with the odd
    # nodes' and with rb's in all but tenant: the named ones must not pass their decision on.
    folder = _folder(tmp_path, odd, "named_gpu")
    code, hosts = _hosts(folder, ["j-u1", "j-a", "j-u2"])
    assert code == (0 if odd else 1)  # without the odd nodes u1 has no node left
    assert hosts == {
        "j-u1": [n for n in _plain(odd) if n != "n0"],
        "j-a": _plain(odd),
        "j-u2": ["m0", "m1", "n0"],
    }


def test_a_policy_reading_an_ancestor(tmp_path: Path) -> None:
    # By hand: node n0 is closed to all but u1; team a (same tenant, same attributes as u1 but for
    # its type) loses it and keeps the odd nodes; u1 keeps n0 and the odd nodes: both placed, exit 0.
    folder = _folder(tmp_path, True, "ancestor")
    code, hosts = _hosts(folder, ["j-u1", "j-a"])
    assert code == 0
    assert hosts == {"j-u1": _plain(True), "j-a": sorted(ODD)}


def test_a_principal_not_in_the_file_is_bad_input(tmp_path: Path) -> None:
    # mallory is no principal of principals.yml: exit 2 with the job's line, not "fits nowhere".
    folder = _folder(tmp_path, False, None)
    jobs = folder / "jobs.yaml"
    jobs.write_text(
        'apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: x, principal: User::"mallory", gpus: 1}\n',
        encoding="utf-8",
    )
    code, out, err = run_cli("place", str(folder / "cluster.yaml"), str(jobs), "--format", "json")
    assert code == 2 and out == ""
    assert "jobs.yaml:4:" in err and "principal 'mallory' is not in" in err and "Traceback" not in err


def test_one_cache_two_places_with_other_principals(tmp_path: Path) -> None:
    # The authorization facts of a `place` are kept named by whom they decide: a place of u3's job
    # (decided for u3: nothing permitted) must not hand its rows to a place of u1's and team a's
    # (n0 and the odd nodes each, as above), nor theirs to a second place of u3 and svc, nor any to
    # `verify`, whose AUTHZ findings read every principal's decisions (compared with a cold run).
    folder = _folder(tmp_path, True, None)
    env = {"TOPOLOG_CACHE_DIR": str(tmp_path / "cache")}
    assert _hosts(folder, ["j-u3"], env) == (1, {"j-u3": []})
    assert _hosts(folder, ["j-u1", "j-a"], env) == (0, {"j-u1": _plain(True), "j-a": _plain(True)})
    assert _hosts(folder, ["j-u3", "j-svc", "j-u2"], env) == (1, {"j-u3": [], "j-svc": [], "j-u2": ["m0", "m1"]})
    warm = run_cli("verify", str(folder / "cluster.yaml"), "--format", "json", env=env)
    cold = run_cli("verify", str(folder / "cluster.yaml"), "--format", "json", env={"TOPOLOG_CACHE_DIR": ""})
    assert warm == cold


@pytest.mark.parametrize("odd", [False, True], ids=["plain-ids", "odd-ids"])
def test_audit_and_authorize(tmp_path: Path, odd: bool) -> None:
    # By hand: ra holds 2 GPUs per node (3 plain nodes, + 5 odd ones); one (n1/gpu1) is quarantined,
    # closed in the empty context. Team a and u1: ra's GPUs but that one; u2 and team b: rb's 4.
    folder = _folder(tmp_path, odd, None)
    code, out, err = run_cli("audit", str(folder / "cluster.yaml"), "--action", "schedule", "--format", "json")
    assert code == 0, err
    ra = 2 * (3 + (len(ODD) if odd else 0))
    got = {r["principal"]: r["gpus"] for r in json.loads(out)["matrix"] if r["context"] == {}}
    assert got == {
        'ServiceAccount::"svc"': {},
        'Team::"a"': {"ra": ra - 1},
        'Team::"b"': {"rb": 4},
        'Team::"sre"': {},
        'User::"u1"': {"ra": ra - 1},
        'User::"u2"': {"rb": 4},
        'User::"u3"': {},
    }
    cluster = str(folder / "cluster.yaml")

    def decide(principal: str, resource: str) -> int:
        return run_cli("authorize", cluster, "--principal", principal, "--action", "schedule", "--resource", resource)[
            0
        ]

    # n1/gpu1 quarantined: Deny (1); its neighbour gpu0, the same template's: Allow (0).
    assert (decide("u1", "n1/gpu1"), decide("u1", "n1/gpu0")) == (1, 0)
    # n2/gpu0 is down, which no shipped policy reads: Allow, as for its neighbour.
    assert (decide("u1", "n2/gpu0"), decide("u2", "n2/gpu0")) == (0, 1)
    if odd:
        assert (decide("u1", 'n"4/gpu1'), decide("u2", "n\\5/gpu0"), decide("a", "né6/gpu1")) == (0, 1, 0)


def test_a_class_is_named_by_its_smallest_uid(tmp_path: Path) -> None:
    # The `permitted` rows name a GPU class by its representative, the GPU of the smallest uid
    # (classes.EntityClass), which `diff` prints. Nodes n"4 and n\5 beside n0..n2: as ids,
    # 'n"4/gpu0' sorts first ('"' is 0x22, '0' 0x30); as uids their quote and backslash are escaped
    # (Gpu::"n\"4/gpu0", a backslash is 0x5c), so Gpu::"n0/gpu0" is the smallest of tenant a's open
    # GPUs (all but the quarantined n1/gpu1). Moving rack rb to tenant a puts m0, m1 in that class,
    # named m0/gpu0 from then on ('m' < 'n'), and b loses rb: by hand, for `schedule`, removed
    # (a, n0/gpu0), (b, m0/gpu0), (u1, n0/gpu0), (u2, m0/gpu0); added (a, m0/gpu0), (u1, m0/gpu0).
    folder = _folder(tmp_path, True, None)
    odd = ['n"4', "n\\5"]
    old, new = folder / "old.yaml", folder / "new.yaml"
    old.write_text(_inventory(True, odd), encoding="utf-8")
    new.write_text(_inventory(True, odd, rb_tenant="a"), encoding="utf-8")
    code, out, err = run_cli("diff", str(old), str(new), "--format", "json")
    assert code in (0, 1), err
    permitted = json.loads(out)["relations"]["permitted"]
    schedule = {
        side: sorted((r[0], r[2]) for r in permitted[side] if r[1] == "schedule") for side in ("added", "removed")
    }
    assert schedule == {
        "added": [("a", "m0/gpu0"), ("u1", "m0/gpu0")],
        "removed": [("a", "n0/gpu0"), ("b", "m0/gpu0"), ("u1", "n0/gpu0"), ("u2", "m0/gpu0")],
    }


def test_what_if_with_a_policy_reading_state(tmp_path: Path) -> None:
    # By hand (plain ids, down-closed added): before, u1 may schedule ra's GPUs but the quarantined
    # n1/gpu1 and the down n2/gpu0: n0/gpu0, n0/gpu1, n1/gpu0, n2/gpu1 (4); its 2-GPU job runs on n0,
    # the only node with both open. --fail n0/gpu0 puts it down: closed to u1 now (3 left), and u1's
    # job loses its placement (exit 1). u2 keeps rb's 4 GPUs and m0. n0/gpu0 shared its attribute
    # mapping with n0/gpu1 until the scenario: the classes must part them after it.
    folder = _folder(tmp_path, False, "down_closed")
    jobs = folder / "jobs.yaml"
    jobs.write_text(_jobs(["j-u1", "j-u2"]), encoding="utf-8")
    code, out, err = run_cli("place", str(folder / "cluster.yaml"), str(jobs), "--fail", "n0/gpu0", "--format", "json")
    assert code == 1, err
    got = {j["job"]: (j["outcome"], j["authorization"]) for j in json.loads(out)["jobs"]}
    assert got == {
        "j-u1": ("loses", {"gpus_before": 4, "gpus_after": 3, "denied_now": ["n0/gpu0"], "allowed_now": []}),
        "j-u2": ("unchanged", {"gpus_before": 4, "gpus_after": 4, "denied_now": [], "allowed_now": []}),
    }
