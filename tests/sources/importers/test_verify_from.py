"""`topolog verify --from KIND` checks a tool's output directly, without an intermediate YAML file."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from verifier.cli import main as cli
from verifier.sources.importers import KINDS

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ROOT = Path(__file__).resolve().parents[3]


pytestmark = pytest.mark.usefixtures("in_repo_root")


def _verify(kind: str, name: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli.main, ["verify", "--from", kind, str(FIXTURES / name)])
    return result.exit_code, result.stdout, result.stderr


def test_cli_offers_every_importer() -> None:
    from verifier.cli.verify_commands import verify_cmd

    [option] = [p for p in verify_cmd.params if p.name == "from_kind"]
    assert isinstance(option.type, click.Choice) and tuple(option.type.choices) == KINDS


def test_p4d_nccl_topology_passes() -> None:
    # 8 A100s in 4 PCIe switches, each switch also holding an EFA NIC: every GPU reaches a NIC.
    code, out, _ = _verify("nccl-xml", "aws-p4d-24xl-topo.xml")
    assert code == 0 and out.endswith("passed (--fail-on error)\n")


def test_dgx2_hwloc_has_no_nic_so_every_gpu_is_flagged() -> None:
    # The DGX-2 hwloc file lists 16 GPUs and 12 NVSwitches but no network device at all.
    code, out, _ = _verify("hwloc", "nvidiaDGX2.xml")
    assert code == 1
    flagged = [line for line in out.splitlines() if " TOPO001: " in line]
    assert len(flagged) == 16
    assert all(line.startswith(f"{FIXTURES / 'nvidiaDGX2.xml'}:") for line in flagged)


def test_uninterpretable_tool_output_is_exit_2() -> None:
    # The g5 file leaves PCI classes for NCCL to read from sysfs: the importer refuses to guess.
    code, out, err = _verify("nccl-xml", "aws-g5.48xl-topo.xml")
    assert code == 2 and out == ""
    assert "aws-g5.48xl-topo.xml:3:5: 9 PCI devices" in err and "line 11" not in err  # one error for all nine
