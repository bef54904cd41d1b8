"""The hardware view that authorize and audit read from the cache gives the entities the whole inventory gives.

tests/authorization/layered.yaml puts labels where the view must carry them over objects it
leaves out: a fleet object above every pod (tenant t0), a PCIe switch between a node and its
GPUs (tenant t1, zone z1), a GPU listed before the node that holds it, a quarantined GPU under
an unlabelled node, an owner on a CPU socket (not hardware) between a node and a GPU, a die
inside that socket with another owner and quarantine (the nearer owner wins, quarantine stays
once true), a GPU with no node (its parent is a rack), and a GPU inside a GPU.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.authorization.entities import build_graph
from verifier.authorization.hardware import hardware_view
from verifier.core import cache
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
INVENTORIES = sorted((ROOT / "inventories").glob("*.yaml"))
PRINCIPALS = load_principals(ROOT / "inventories" / "principals.yml")


def _hardware_entities(path: Path, view: bool) -> dict[str, object]:
    inv = load_inventory([path])
    graph = build_graph(hardware_view(inv) if view else inv, None, PRINCIPALS)
    hardware = graph.uids_of_type("Gpu", "Node", "Rack", "Pod")
    out: dict[str, object] = {
        u: (graph.attrs(u), graph.parents(u, domains=False), graph.entity(u).loc) for u in hardware
    }
    out["groups"] = graph.groups_many(graph.uids_of_type("Gpu"))
    out["attrs_many"] = graph.attrs_many(graph.uids_of_type("Gpu"))
    return out


@pytest.mark.parametrize("path", [*INVENTORIES, HERE / "layered.yaml"], ids=lambda p: p.name)
def test_the_view_gives_the_entities_of_the_whole_inventory(path: Path) -> None:
    assert _hardware_entities(path, view=True) == _hardware_entities(path, view=False)


def test_the_view_carries_labels_over_what_it_leaves_out() -> None:
    # By hand from layered.yaml: fleet f (tenant t0) > pod p (zone zp) > rack r > node n;
    # n > pcie switch n/sw (tenant t1, zone z1) > n/gpu0 and gpu1 (written first, flat, parent n/sw);
    # n > socket n/s (owner o, quarantine true) > n/gpu2, and > die n/d (owner od, quarantine false)
    # > n/gpu7; n/gpu3 (quarantine true) directly under n; gpu4 under r; n/gpu6 inside n/gpu5.
    inv = load_inventory([HERE / "layered.yaml"])
    view = hardware_view(inv)
    kept = ["gpu1", "p", "r", "gpu4", "n", "n/gpu0", "n/gpu2", "n/gpu7", "n/gpu3", "n/gpu5", "n/gpu6"]
    assert list(view.objects) == kept  # in inventory order, the fleet, switch, socket and die left out
    parents = {o.id: o.parent for o in view.objects.values()}
    assert parents == {
        "gpu1": "n",
        "p": None,
        "r": "p",
        "gpu4": "r",
        "n": "r",
        "n/gpu0": "n",
        "n/gpu2": "n",
        "n/gpu7": "n",
        "n/gpu3": "n",
        "n/gpu5": "n",
        "n/gpu6": "n/gpu5",
    }
    graph = build_graph(view, None, PRINCIPALS)
    expect = {
        'Gpu::"gpu1"': ("t1", "z1", "", False),
        'Gpu::"n/gpu0"': ("t1", "z1", "", False),
        'Gpu::"n/gpu2"': ("t0", "zp", "o", True),
        'Gpu::"n/gpu7"': ("t0", "zp", "od", True),
        'Gpu::"n/gpu3"': ("t0", "zp", "", True),
        'Gpu::"gpu4"': ("t0", "zp", "", False),
        'Node::"n"': ("t0", "zp", "", False),
        'Pod::"p"': ("t0", "zp", "", False),
    }
    for entity, labels in expect.items():
        attrs = graph.attrs(entity)
        assert (attrs["tenant"], attrs["zone"], attrs["owner"], attrs["quarantined"]) == labels, entity
    # The node's figures count the GPUs below it, through the switch, the socket, the die and a
    # GPU: gpu1, n/gpu0, n/gpu2, n/gpu7, n/gpu3, n/gpu5, n/gpu6; the rack's add gpu4. n/gpu5 counts
    # itself and n/gpu6.
    assert graph.attrs('Node::"n"')["gpus"] == 7
    assert graph.attrs('Rack::"r"')["gpus"] == 8
    assert graph.gpus_holding_gpus() == {"n/gpu5"}
    gpus = graph.uids_of_type("Gpu")
    counts = {u: a["gpus"] for u, a in zip(gpus, graph.attrs_many(gpus), strict=True)}
    assert counts == {u: 2 if u == 'Gpu::"n/gpu5"' else 1 for u in gpus}


def _cli(folder: Path, cwd: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, cache.ENV_DIR: str(folder)}
    command = [sys.executable, "-m", "verifier.cli.main", *args]
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def _integrity_warning(entry: Path) -> str:
    return (
        f"topolog: warning: cache entry {str(entry)!a} failed its integrity check "
        "(altered, or signed with another key); ignored and rebuilt\n"
    )


def _views(folder: Path) -> list[Path]:
    return sorted(folder.glob("hardware-*"))


def _work(tmp_path: Path, inventory: Path, principals: Path, name: str) -> Path:
    """A folder holding a copy of `inventory` (as `name`) with `principals` beside it."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(inventory, work / name)
    shutil.copy(principals, work / "principals.yml")
    return work


# u1 is in team a (tenant a), and rack ra of the small cluster is labelled tenant a: ALLOW.
SMALL_ASK = ("authorize", "cluster.yaml", "--principal", "u1", "--action", "schedule", "--resource", "na0/gpu0")


def test_a_repeated_question_reads_the_view_and_answers_the_same(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    work = _work(
        tmp_path, ROOT / "inventories" / "mixed-fleet.yaml", ROOT / "inventories" / "principals.yml", "fleet.yaml"
    )
    # ivan is an intern: policies/interns.cedar forbids him an A100 (it has ECC), by hand from principals.yml.
    ask = ("authorize", "fleet.yaml", "--principal", "ivan", "--action", "schedule", "--resource", "a100-n0/gpu0")
    first = _cli(folder, work, *ask)
    assert len(_views(folder)) == 1
    again = _cli(folder, work, *ask)
    assert first == again
    assert first[0] == 1 and "interns-consumer-only" in first[1]
    audit = _cli(folder, work, "audit", "fleet.yaml", "--format", "json")
    assert audit == _cli(tmp_path / "off", work, "audit", "fleet.yaml", "--format", "json")
    # An NVLink domain needs the scale-up links, which the view has not: the whole inventory is loaded.
    domain = ("authorize", "fleet.yaml", "--principal", "dan", "--action", "schedule", "--resource")
    hit = _cli(folder, work, *domain, 'NvlinkDomain::"h100-n0/gpu0"')
    miss = _cli(tmp_path / "cold", work, *domain, 'NvlinkDomain::"h100-n0/gpu0"')
    assert hit == miss and hit[0] in (0, 1), hit


def test_an_edited_inventory_is_read_again(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    work = _work(tmp_path, HERE / "small" / "cluster.yaml", HERE / "small" / "principals.yml", "cluster.yaml")
    ask = SMALL_ASK
    before = _cli(folder, work, *ask)
    # Rack ra changes hands: tenant a becomes tenant b, so u1 (team a, tenant a) loses it.
    text = (work / "cluster.yaml").read_text()
    (work / "cluster.yaml").write_text(text.replace("labels: {tenant: a}", "labels: {tenant: b}", 1))
    after = _cli(folder, work, *ask)
    assert len(_views(folder)) == 2
    assert (before[0], after[0]) == (0, 1), (before, after)
    # A file that no longer loads is refused, never answered from the entry of the file it was.
    (work / "cluster.yaml").write_text(text.replace("kind: rack", "kind: rak", 1))
    broken = _cli(folder, work, *ask)
    assert broken[0] == 2 and "cluster.yaml" in broken[1]
    assert len(_views(folder)) == 2  # nothing is kept of an inventory that does not load


def test_a_damaged_entry_is_a_miss(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    work = _work(tmp_path, HERE / "small" / "cluster.yaml", HERE / "small" / "principals.yml", "cluster.yaml")
    ask = SMALL_ASK
    first = _cli(folder, work, *ask)
    (entry,) = _views(folder)
    entry.write_bytes(entry.read_bytes()[:-100])  # truncated: its HMAC no longer matches
    status, shown = _cli(folder, work, *ask)
    # The same answer, rebuilt, and one warning naming the entry (verifier/core/cache.py).
    assert (status, shown.replace(_integrity_warning(entry), "")) == first


def test_at_most_keep_views_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fleet's entry is megabytes: the kind keeps hardware.KEEP entries, not the default 32.
    from verifier.authorization import hardware

    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    view = load_inventory([HERE / "layered.yaml"])
    for i in range(hardware.KEEP + 3):
        key = hardware.view_key([f"file-{i}", b"bytes"])
        assert key is not None
        hardware.remember_view(key, view)
    assert len(_views(tmp_path / "cache")) == hardware.KEEP
