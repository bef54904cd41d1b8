"""Every policy file under the policy directory is read, or the run is refused: never ALLOW by omission.

The request: alice schedules mi300x-n0/gpu0 on the mixed fleet. alice is in team-nlp, whose
tenant owns the MI300X nodes, so `tenant-own-hardware` (tenants.cedar) permits it; the
MI300X has >= 50 FP64 TFLOPS, so `fp64-reserved-for-hpc` (fp64.cedar) forbids it to anyone
outside the hpc team (policies/DENY/fp64-reserved.yaml). With fp64.cedar read the answer is
DENY (exit 1); with it missing, ALLOW (exit 0), the outcome no case below may reach.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.cache import ENV_DIR

ROOT = Path(__file__).resolve().parents[2]
REQUEST = (
    "authorize",
    str(ROOT / "inventories" / "mixed-fleet.yaml"),
    "--principal",
    "alice",
    "--action",
    "schedule",
    "--resource",
    "mi300x-n0/gpu0",
)
ALLOW, DENY, REFUSED = 0, 1, 2


def _policies(tmp_path: Path) -> Path:
    folder = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", folder)
    return folder


def _decide(folder: Path) -> tuple[int, str]:
    # No cache: each case must be decided from the files as they are now.
    status, out, err = run_cli(*REQUEST, "--policies", str(folder), env={ENV_DIR: ""})
    return status, out + err


def test_the_shipped_directory_denies_and_without_fp64_allows(tmp_path: Path) -> None:
    folder = _policies(tmp_path)
    assert _decide(folder)[0] == DENY
    (folder / "fp64.cedar").unlink()
    assert _decide(folder)[0] == ALLOW  # the forbid is what denies: the cases below test its file


def _in_subfolder(folder: Path) -> None:
    (folder / "reserved").mkdir()
    (folder / "fp64.cedar").rename(folder / "reserved" / "fp64.cedar")


def _upper_case_suffix(folder: Path) -> None:
    (folder / "fp64.cedar").rename(folder / "FP64.CEDAR")


def _configmap_mount(folder: Path) -> None:
    # The layout the kubelet gives a ConfigMap volume: each key a link through `..data` to a
    # timestamped folder. Every policy is reached by three names and must be read once.
    stamp = folder / "..2026_12_06_07_00_00.000000001"
    stamp.mkdir()
    for policy in folder.glob("*.cedar"):
        policy.rename(stamp / policy.name)
    (folder / "..data").symlink_to(stamp.name)
    for policy in stamp.glob("*.cedar"):
        (folder / policy.name).symlink_to(Path("..data") / policy.name)


def _in_folder_named_like_a_file(folder: Path) -> None:
    # A folder that holds policy files is read whatever its name, `.cedar` ending included.
    (folder / "hpc.cedar").mkdir()
    (folder / "fp64.cedar").rename(folder / "hpc.cedar" / "fp64.cedar")


def _linked_from_elsewhere(folder: Path) -> None:
    outside = folder.parent / "shared-policies"
    outside.mkdir()
    (folder / "fp64.cedar").rename(outside / "fp64.cedar")
    (folder / "fp64.cedar").symlink_to(outside / "fp64.cedar")


@pytest.mark.parametrize(
    "arrange",
    [_in_subfolder, _upper_case_suffix, _configmap_mount, _linked_from_elsewhere, _in_folder_named_like_a_file],
    ids=["subfolder", "upper-case suffix", "configmap mount", "link", "folder named .cedar"],
)
def test_policies_wherever_they_lie_are_read(tmp_path: Path, arrange: Callable[[Path], None]) -> None:
    folder = _policies(tmp_path)
    arrange(folder)
    status, shown = _decide(folder)
    assert (status, "fp64-reserved-for-hpc" in shown) == (DENY, True), shown


def _fifo(folder: Path) -> None:
    (folder / "fp64.cedar").unlink()
    os.mkfifo(folder / "fp64.cedar")  # read without a writer, it would be empty: the forbid gone


def _device(folder: Path) -> None:
    (folder / "fp64.cedar").unlink()
    (folder / "fp64.cedar").symlink_to("/dev/null")


def _dangling_link(folder: Path) -> None:
    (folder / "fp64.cedar").unlink()
    (folder / "fp64.cedar").symlink_to(folder / "gone.cedar")


def _empty_folder(folder: Path) -> None:
    # A volume mounted over the file's path, or a deploy step that made a directory where it
    # meant a file: listed as a subfolder it holds nothing, and the forbid would vanish.
    (folder / "fp64.cedar").unlink()
    (folder / "fp64.cedar").mkdir()
    (folder / "fp64.cedar" / "README").write_text("not a policy\n")


@pytest.mark.parametrize(
    "arrange", [_fifo, _device, _dangling_link, _empty_folder], ids=["fifo", "device", "dangling link", "folder"]
)
def test_a_policy_file_that_cannot_be_read_refuses_the_run(tmp_path: Path, arrange: Callable[[Path], None]) -> None:
    folder = _policies(tmp_path)
    arrange(folder)
    status, shown = _decide(folder)
    assert status == REFUSED, shown
    assert f"{folder / 'fp64.cedar'}:" in shown
    assert "Traceback" not in shown


def test_a_folder_that_cannot_be_listed_refuses_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _policies(tmp_path)
    locked = folder / "locked"
    locked.mkdir()
    listing = Path.iterdir

    # Unreadable (chmod 000) as an ordinary user sees it; root would read it anyway, so the
    # refusal is simulated at the call that lists it.
    def iterdir(self: Path) -> Iterator[Path]:
        if self == locked:
            raise PermissionError(13, "Permission denied", str(self))
        return listing(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    status, shown = _decide(folder)
    assert status == REFUSED, shown
    assert f"{locked}: cannot list the policy folder: Permission denied" in shown


def test_a_policy_file_with_carriage_return_line_ends_keeps_its_forbid(tmp_path: Path) -> None:
    # fp64.cedar saved with CR line ends (a classic Mac editor): Cedar ends each `//` comment at the
    # CR, so the file still holds fp64-reserved-for-hpc and alice is denied. Read to the next line
    # feed, the comment on line 1 swallowed the whole file, the forbid with it: ALLOW.
    folder = _policies(tmp_path)
    policy = folder / "fp64.cedar"
    policy.write_bytes(policy.read_bytes().replace(b"\n", b"\r"))
    status, shown = _decide(folder)
    assert (status, "fp64-reserved-for-hpc" in shown) == (DENY, True), shown


@pytest.mark.parametrize(("text", "what"), [("", "is empty"), ("// forbid moved elsewhere\n", "holds only comments")])
def test_a_policy_file_with_no_policy_refuses_the_run(tmp_path: Path, text: str, what: str) -> None:
    # fp64.cedar emptied: read as no policy, its forbid is gone and alice would be allowed.
    folder = _policies(tmp_path)
    (folder / "fp64.cedar").write_text(text)
    status, shown = _decide(folder)
    assert status == REFUSED, shown
    assert f"{folder / 'fp64.cedar'}:1: policy file {what}; expected at least one permit or forbid policy" in shown


@pytest.mark.parametrize(("text", "what"), [("", "is empty"), ("// types moved elsewhere\n", "holds only comments")])
def test_a_schema_with_nothing_in_it_is_named_as_the_problem(tmp_path: Path, text: str, what: str) -> None:
    # schema.cedarschema emptied: Cedar reads a schema that declares nothing, and every policy
    # would be reported as invalid against it; the schema is the file to fix, at its line 1.
    folder = _policies(tmp_path)
    (folder / "schema.cedarschema").write_text(text)
    status, shown = _decide(folder)
    assert status == REFUSED, shown
    assert f"{folder / 'schema.cedarschema'}:1: schema.cedarschema {what}; expected the entity types" in shown
