"""Review of the gres.conf refusal (round 58): per-node gres.conf lines that carry no Name=."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files

EXPECTED = "this is gres.conf (Name=, File=, AutoDetect= lines), which topolog does not read"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # The gres.conf value of SquareFactory's slurm-cluster Helm chart (README, slurmConfig.gres): it was
        # read as a slurm.conf NodeName line without Gres=, i.e. twelve nodes offering 0 GPUs.
        ("NodeName=cn[1-12] File=/dev/nvidia[0-3] AutoDetect=nvml\n", 1),
        # gres.conf(5)'s "some nodes with NVML, some with RSMI" example, its first two lines.
        ("NodeName=tux[0-7] AutoDetect=nvml\nNodeName=tux[8-11] AutoDetect=rsmi\n", 1),
    ],
)
def test_per_node_gres_lines_without_name_are_refused(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "gres.conf"
    path.write_text(text)
    with pytest.raises(TopologError) as err:
        import_files("slurm", [path])
    assert str(err.value).startswith(f"{path}:{line}: {EXPECTED}")


def test_slurm_conf_keys_ending_in_file_or_name_are_still_slurm_conf(tmp_path: Path) -> None:
    # NodeHostname= and a node named "file" hold the words after a letter or as a value, not as keys.
    path = tmp_path / "slurm.conf"
    path.write_text("NodeName=file01 NodeHostname=file01 Gres=gpu:4\nPartitionName=all Nodes=file01\n")
    inv = import_files("slurm", [path]).inventory
    assert inv.objects["file01"].quantities["slurm_gres_gpus"] == 4
