"""Fail closed: `authorize` and `audit` never answer on an inventory that the loader refuses.

Every broken inventory of tests/sources/inventory/fixtures, and a small fleet written the way
fleets are (a node template, counted pods, racks and nodes, `foreach` cabling, overrides) broken
once in each of those places, must exit 2 naming the file, with the cache on and off, exactly
when loading the inventory whole raises. These are the cases a loader that stamps only what a
request reads would have to find without stamping the rest (issue 46).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli
from fleet_helpers import PRINCIPALS, ROOT, authorize_cli, place, pod_fleet

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory, load_inventory_text
from verifier.sources.inventory.partial import partial_inventory
from verifier.sources.inventory.raw_files import read_files

FIXTURES = sorted((ROOT / "tests" / "sources" / "inventory" / "fixtures").glob("*.yaml"))

# 2 pods x 2 racks x 2 nodes of 2 GPUs and 2 NICs; NIC l of every node cabled to its pod's leaf l;
# node p0-r0-n1 quarantined by an override (tests/fleet_helpers.py writes it out).
FLEET = pod_fleet(2, spine=False)

# Each breaks FLEET once: (what, text replaced, replacement). Worked out by hand: each names
# something the fleet does not have, or gives a value of the wrong kind.
BREAKS = [
    ("cable to a leaf that is not there", "l: 0..1}}", "l: 0..2}}"),
    ("override of a node that is not there", "p0-r0-n1:", "p0-r0-n7:"),
    ("unknown model in the template", "model: ConnectX-7", "model: ConnectX-77"),
    ("unknown template", "template: box", "template: boxx"),
    ("a bandwidth that is not one", "bandwidth: 400 Gb/s", "bandwidth: 400 parsecs"),
    ("two nodes with one id", 'name: "{rack}-n{i}"', 'name: "{pod}-n0"'),
]


def _refused_by_the_loader(path: Path) -> bool:
    try:
        load_inventory([path])
    except TopologError:
        return True
    return False


def _answers(inventory: Path, cache: Path | None) -> list[tuple[int, str]]:
    folder = str(cache) if cache is not None else ""
    out = []
    for code, stdout, stderr in (
        authorize_cli(inventory, "p0-r0-n0/gpu0", "--format", "json", cache=folder),
        run_cli("audit", str(inventory), "--format", "json", env={"TOPOLOG_CACHE_DIR": folder}),
    ):
        out.append((code, stdout + stderr))
    return out


def test_the_unbroken_fleet_is_answered(tmp_path: Path) -> None:
    # By hand: dan is in team research and every node is labelled tenant: research, so the
    # shipped policy tenant-own-hardware allows it (exit 0); the audit of 16 GPUs exits 0.
    path = place(tmp_path, FLEET)
    load_inventory_text(FLEET, "fleet.yaml")  # loads whole without an error
    (code, out), (audit_code, _) = _answers(path, None)
    assert code == 0, out
    assert '"decision": "ALLOW"' in out
    assert audit_code == 0


@pytest.mark.parametrize(("what", "old", "new"), BREAKS, ids=[b[0] for b in BREAKS])
@pytest.mark.parametrize("cache", [False, True], ids=["cache off", "cache on"])
def test_a_broken_fleet_is_refused(tmp_path: Path, what: str, old: str, new: str, cache: bool) -> None:
    assert FLEET.count(old) == 1, what
    path = place(tmp_path, FLEET.replace(old, new))
    assert _refused_by_the_loader(path), what
    folder = tmp_path / "cache" if cache else None
    for _ in range(2 if cache else 1):  # with the cache on, a second run may not read a first run's view
        for code, out in _answers(path, folder):
            assert code == 2, (what, out)
            assert "fleet.yaml" in out, (what, out)
            assert "Traceback" not in out


# FLEET with 5 pods: a request about p0-r0-n0/gpu0 then expands p0 (named by the request and
# the override key), p1 and p2 (the representatives), and checks p3 and p4 without stamping
# them (verifier/sources/inventory/partial.py): the breaks above must be found that way too.
FLEET5 = FLEET.replace("    kind: pod\n    count: 2\n", "    kind: pod\n    count: 5\n")


def test_five_pods_are_answered_without_stamping_them_all(tmp_path: Path) -> None:
    path = place(tmp_path, FLEET5)
    part = partial_inventory(read_files([path]), ["dan", "p0-r0-n0/gpu0", "{}"])
    assert part is not None and {"p3", "p4"} <= part.plain_ids
    (code, out), _ = _answers(path, None)
    assert code == 0 and '"decision": "ALLOW"' in out, out


@pytest.mark.parametrize(("what", "old", "new"), BREAKS, ids=[b[0] for b in BREAKS])
@pytest.mark.parametrize("cache", [False, True], ids=["cache off", "cache on"])
def test_a_broken_fleet_of_five_pods_is_refused(tmp_path: Path, what: str, old: str, new: str, cache: bool) -> None:
    assert FLEET5.count(old) == 1, what
    path = place(tmp_path, FLEET5.replace(old, new))
    assert _refused_by_the_loader(path), what
    folder = tmp_path / "cache" if cache else None
    for _ in range(2 if cache else 1):
        for code, out in _answers(path, folder):
            assert code == 2, (what, out)
            assert "fleet.yaml" in out and "Traceback" not in out, (what, out)


@pytest.mark.parametrize("cache", [False, True], ids=["cache off", "cache on"])
def test_a_label_the_policies_cannot_read_is_refused(tmp_path: Path, cache: bool) -> None:
    # The loader takes any label text; the entities read `quarantine` as a Cedar Bool, which
    # "maybe" is not (entities.LABEL_ATTRS): refused where the label is written, FLEET's line 25
    # (apiVersion is line 1; `overrides:` line 23, `p0-r0-n1:` 24, its `labels:` 25).
    text = FLEET.replace('quarantine: "true"', 'quarantine: "maybe"')
    path = place(tmp_path, text)
    assert not _refused_by_the_loader(path)
    for code, out in _answers(path, tmp_path / "cache" if cache else None):
        assert code == 2, out
        assert "fleet.yaml:25" in out, out
        assert "maybe" in out, out


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_every_inventory_the_loader_refuses_is_refused(tmp_path: Path, fixture: Path) -> None:
    path = tmp_path / fixture.name
    shutil.copy(fixture, path)
    shutil.copy(PRINCIPALS, tmp_path / "principals.yml")
    refused = _refused_by_the_loader(path)
    for code, out in _answers(path, None):
        if refused:
            assert code == 2, out
            assert fixture.name in out, out
        else:  # loaded whole: then the answer is not a refusal of the inventory
            assert code in (0, 1), out
