"""Review of round 17's CPUModel mapping (IM): a virtual machine's vCPU layout is not the part's sockets.

A KVM guest given the host's CPU (libvirt host-passthrough) reads the host's brand string, so hwloc's
CPUModel names the host's part, while its Packages and Cores are the guest's own -smp layout (QEMU's
sockets=N, cores=M): a 16-vCPU guest of an EPYC 7742 host may show 8 packages of 2 cores. No physical
board holds more packages of a part than its max_sockets, nor a package with more cores than the part
has, so such a capture is not the part's sockets and its CPUs keep no model (the base, 151f6dca, took
none); with the model, NODE013 reported "no board of the part holds them" for a board no one built.

Inputs: real hwloc captures of fixtures/ (open-mpi/hwloc tests/hwloc/xml, fixtures/README.md) with
the CPUModel and CPUVendor rewritten to a catalogue CPU's brand string, as host-passthrough shows it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli import main as cli
from verifier.sources.importers import import_files

REAL = Path(__file__).parent / "fixtures"


def _as(tmp_path: Path, name: str, model: str, vendor: str) -> Path:
    text = (REAL / name).read_text()
    text = re.sub(r'name="CPUModel" value="[^"]*"', f'name="CPUModel" value="{model}"', text)
    text = re.sub(r'name="CPUVendor" value="[^"]*"', f'name="CPUVendor" value="{vendor}"', text)
    path = tmp_path / name.replace("+", "_")
    path.write_text(text)
    return path


def _cpus(path: Path) -> tuple[dict[str, str | None], list[str]]:
    result = import_files("hwloc", [path], node="n")
    cpus = {
        oid: o.model
        for oid, o in result.inventory.objects.items()
        if o.kind == "cpu" and o.labels.get("role") != "host_bridge"
    }
    return cpus, [str(n) for n in result.notes if "not that part's sockets" in str(n)]


def test_eight_packages_of_a_two_socket_part_are_a_guest(tmp_path: Path) -> None:
    # 16amd64-4distances: 8 Packages (os_index 0-7) of 2 Cores each. Named "AMD EPYC 7742 64-Core
    # Processor" (catalogue EPYC-7742, max_sockets 2): 8 > 2, so none of the 8 CPUs takes the model,
    # one note; and verify reports no NODE013 (the tree before the fix: NODE013 over cpu0..cpu7).
    path = _as(tmp_path, "16amd64-4distances.xml", "AMD EPYC 7742 64-Core Processor", "AuthenticAMD")
    cpus, notes = _cpus(path)
    assert sorted(cpus) == [f"n/cpu{i}" for i in range(8)]
    assert set(cpus.values()) == {None}
    assert len(notes) == 1 and "8 packages of it where the part takes at most 2" in notes[0]
    result = CliRunner().invoke(cli.main, ["verify", "--from", "hwloc", str(path), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    assert [f["rule"] for f in json.loads(result.stdout)["findings"] if f["rule"] in ("NODE013", "NODE009")] == []


def test_a_package_with_more_cores_than_the_part_is_a_guest(tmp_path: Path) -> None:
    # 64intel64-heteromem: one Package of 16 Cores. Named "AMD Ryzen 9 7950X 16-Core Processor" (16 cores,
    # max_sockets 1) it fits: 1 <= 1 socket, 16 <= 16 cores -> the model is taken (control of the bound).
    path = _as(tmp_path, "64intel64-heteromem.xml", "AMD Ryzen 9 7950X 16-Core Processor", "AuthenticAMD")
    cpus, notes = _cpus(path)
    assert list(cpus.values()) == ["Ryzen-9-7950X"] and notes == []
    # memorysidecaches: 2 Packages of 20 Cores each. As EPYC 7742 (64 cores, 2 sockets): 2 <= 2 and
    # 20 <= 64 -> both keep the model. As Ryzen 9 7950X: 2 > 1 socket and 20 > 16 cores -> neither.
    cpus, notes = _cpus(_as(tmp_path, "memorysidecaches.xml", "AMD EPYC 7742 64-Core Processor", "AuthenticAMD"))
    assert list(cpus.values()) == ["EPYC-7742", "EPYC-7742"] and notes == []
    cpus, notes = _cpus(_as(tmp_path, "memorysidecaches.xml", "AMD Ryzen 9 7950X 16-Core Processor", "AuthenticAMD"))
    assert set(cpus.values()) == {None} and len(notes) == 1


def test_one_package_over_the_part_cores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 64intel64-heteromem's one Package of 16 Cores named "Intel(R) Xeon(R) Platinum 8480C" (Xeon-8480C,
    # no max_sockets in the catalogue): with the part's cores lowered to 12 here, 16 > 12 -> no model;
    # the note names the package and both figures.
    from verifier.sources.importers import hwloc_xml
    from verifier.sources.inventory.catalog import builtin_models as real

    def fewer_cores() -> tuple[object, ...]:
        out = []
        for m in real():
            if m.name == "Xeon-8480C":
                m = type(m)(**{**{f: getattr(m, f) for f in m.__dataclass_fields__}, "specs": {**m.specs, "cores": 12}})
            out.append(m)
        return tuple(out)

    monkeypatch.setattr(hwloc_xml, "builtin_models", fewer_cores)
    cpus, notes = _cpus(_as(tmp_path, "64intel64-heteromem.xml", "Intel(R) Xeon(R) Platinum 8480C", "GenuineIntel"))
    assert list(cpus.values()) == [None]
    assert len(notes) == 1 and "with 16 cores where the part has 12" in notes[0]


@pytest.mark.parametrize(
    ("vendor", "expected"),
    [
        # cpuid's vendor strings of other x86 makers (Hygon's Dhyana, Centaur/Zhaoxin): whatever the name
        # holds, no catalogue CPU (Intel's and AMD's parts) is theirs. Before: an unknown vendor was not
        # checked at all, so the name alone mapped.
        ("HygonGenuine", ()),
        ("CentaurHauls", ()),
        # The two known ones, and no vendor: the name decides (EPYC-7742 is AMD's).
        ("AuthenticAMD", ("EPYC-7742",)),
        ("GenuineIntel", ()),
        (None, ("EPYC-7742",)),
        ("  ", ("EPYC-7742",)),
    ],
)
def test_a_vendor_of_another_maker_fits_no_catalogue_cpu(vendor: str | None, expected: tuple[str, ...]) -> None:
    from verifier.sources.importers.cpu_names import cpu_models_for_name

    assert cpu_models_for_name("AMD EPYC 7742 64-Core Processor", vendor) == expected
