"""The authorization facts read back from the cache are the ones worked out, and every input has its say.

tests/authorization/small: rack ra (tenant a) holds node na0 with four H100s; rack rb (tenant b,
quarantined) holds node nb0 with two RTX 4090s. Principals: u1 in team a (tenant a), u2 an intern
in team b (tenant b), oc in team sre (no tenant). The shipped policies, in the empty context of
verify and place, by hand:
- tenant-own-hardware permits schedule where the principal's tenant is the GPU's: u1 on na0's four.
- quarantine-closed forbids rb's GPUs to all (no incident in the context): u2 gets nothing.
- oc has no tenant: nothing.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

from verifier.authorization import facts
from verifier.core import cache
from verifier.engine.ast import Row
from verifier.session.inputs import authorization_for, read_inventory
from verifier.session.side_files import discover

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NA0 = [f"na0/gpu{i}" for i in range(4)]
NB0 = [f"nb0/gpu{i}" for i in range(2)]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the small cluster, its principals and the shipped policies; a cache of its own."""
    folder = tmp_path / "work"
    folder.mkdir()
    shutil.copy(HERE / "small" / "cluster.yaml", folder / "cluster.yaml")
    shutil.copy(HERE / "small" / "principals.yml", folder / "principals.yml")
    shutil.copytree(ROOT / "policies", folder / "policies", ignore=shutil.ignore_patterns("__*"))
    monkeypatch.setenv(cache.ENV_DIR, str(tmp_path / "cache"))
    return folder


def _rows(work: Path, policies: Path | None = None) -> dict[str, Sequence[Row]]:
    inventory = work / "cluster.yaml"
    inputs = read_inventory([inventory], discover([inventory], policies=policies or work / "policies"))
    setup = authorization_for(inputs)
    assert setup is not None
    return facts.authz_facts(setup)


def _entries(work: Path) -> int:
    return len(list((work.parent / "cache").glob(f"{facts.KIND}-*")))


def _scheduling(rows: dict[str, Sequence[Row]], who: str) -> list[str]:
    """The GPUs `who` may schedule on: the members of each class permitted to them."""
    classes = {str(c) for p, action, c in rows["permitted"] if p == who and action == "schedule"}
    return sorted(str(g) for g, c in rows["authz_class"] if c in classes)


def test_rows_read_back_are_the_rows_worked_out(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _rows(work)
    assert _entries(work) == 1
    assert (_scheduling(first, "u1"), _scheduling(first, "u2"), _scheduling(first, "oc")) == (NA0, [], [])

    def worked_out(setup: object) -> None:
        raise AssertionError("worked out again: the entry was not read back")

    with monkeypatch.context() as m:
        m.setattr(facts, "_facts", worked_out)
        assert _rows(work) == first
    monkeypatch.setenv(cache.ENV_DIR, "")  # the cache off: worked out, the same rows
    assert _rows(work) == first


def test_a_copy_elsewhere_reads_the_same_entry(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # No row holds a file name or line: the same inventory bytes and principals in another folder
    # (a scheduler's temporary copy), under the same policies, are the same question.
    first = _rows(work)
    moved = shutil.copytree(work, work.parent / "elsewhere")
    (moved / "principals.yml").write_text("# moved\n" + (moved / "principals.yml").read_text())
    monkeypatch.setattr(facts, "_facts", None)  # worked out again: a TypeError
    assert _rows(moved, policies=work / "policies") == first
    assert _entries(work) == 1


def test_principals_policies_and_inventory_each_name_the_entry(work: Path) -> None:
    _rows(work)
    # u1 joins team b (tenant b): na0 is tenant a, and rb is quarantined, so u1 may schedule nowhere.
    people = work / "principals.yml"
    people.write_text(people.read_text().replace("{id: u1, teams: [a]", "{id: u1, teams: [b]"))
    assert _scheduling(_rows(work), "u1") == []
    assert _entries(work) == 2
    # Without quarantine-closed, u2 (tenant b) may schedule on rb's GPUs: RTX 4090s have no ECC, so
    # interns-consumer-only does not forbid them.
    (work / "policies" / "quarantine.cedar").unlink()
    assert _scheduling(_rows(work), "u2") == NB0
    assert _entries(work) == 3
    # Rack ra changes hands (tenant b): u1, back in team a, may schedule nowhere.
    people.write_text(people.read_text().replace("{id: u1, teams: [b]", "{id: u1, teams: [a]"))
    inventory = work / "cluster.yaml"
    inventory.write_text(inventory.read_text().replace("labels: {tenant: a}", "labels: {tenant: b}", 1))
    assert _scheduling(_rows(work), "u1") == []
    assert _entries(work) == 4


def test_a_damaged_entry_is_worked_out_again(work: Path) -> None:
    first = _rows(work)
    (entry,) = (work.parent / "cache").glob(f"{facts.KIND}-*")
    entry.write_bytes(entry.read_bytes()[:-50])
    assert _rows(work) == first


def test_an_imported_inventory_is_not_kept(work: Path) -> None:
    # A tool's output is read by an importer, not as inventory bytes the rows could be named by.
    topo = ROOT / "tests" / "sources" / "importers" / "fixtures" / "dgx-a100-topo-tabs.txt"
    inputs = read_inventory([topo], discover([topo], principals=work / "principals.yml"), "nvidia-smi")
    setup = authorization_for(inputs)
    assert inputs.digest_parts is None and setup is not None
    assert facts.authz_facts(setup)["authz_class"]  # the DGX A100's eight GPUs, in classes
    assert _entries(work) == 0
