"""gres.conf given to `import slurm` / `verify --from slurm`: refused at its first gres.conf line.

Its `NodeName=gpu[01-02] Name=gpu File=/dev/nvidia[0-7]` lines used to be read as slurm.conf NodeName
lines without Gres=, defining nodes the scheduler offers 0 GPUs on (a silently wrong value SCHED005
would report); its node-less lines were read as topology.conf and refused key by key.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files

EXPECTED = "this is gres.conf (Name=, File=, AutoDetect= lines), which topolog does not read"


def test_real_gres_conf_is_refused_at_its_first_gres_line(fx: Path) -> None:
    # The real file: line 1 a comment, line 2 "AutoDetect=nvml": the first line only gres.conf writes.
    with pytest.raises(TopologError) as err:
        import_files("slurm", [fx / "gres-ceems-mig.conf"])
    assert str(err.value) == f"{fx / 'gres-ceems-mig.conf'}:2: {EXPECTED}: " + (
        "a line without NodeName= holds for whichever node reads the file, AutoDetect=nvml or rsmi finds the "
        "GPUs when slurmd starts (no file lists them) and Type= is the site's own name, so it cannot say which "
        "node has which GPUs; expected slurm.conf NodeName lines (Gres=gpu:<type>:<count>) or `scontrol show "
        "nodes`, with topology.conf or topology.yaml; for a node's GPU cores (Cores=) and NVLinks (Links=), "
        "import its `nvidia-smi topo -m` or `lstopo --of xml`"
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        # gres.conf(5)'s per-node form: NodeName with Name= (slurm.conf's NodeName has no Name= key).
        ("# site gres\nNodeName=gpu[01-02] Name=gpu Type=h100 File=/dev/nvidia[0-7]\n", 2),
        ("nodename=gpu01  name=gpu count=8\n", 1),
        ("Name=gpu Type=a100 File=/dev/nvidia0\n", 1),
    ],
)
def test_gres_conf_forms_are_refused(tmp_path: Path, text: str, line: int) -> None:
    path = tmp_path / "gres.conf"
    path.write_text(text)
    with pytest.raises(TopologError) as err:
        import_files("slurm", [path])
    assert str(err.value).startswith(f"{path}:{line}: {EXPECTED}")


def test_slurm_conf_with_names_in_other_keys_is_still_slurm_conf(tmp_path: Path) -> None:
    # NodeHostName= and PartitionName= hold "Name=" after a letter, not as a key of their own.
    path = tmp_path / "slurm.conf"
    path.write_text("NodeName=gpu01 NodeHostName=gpu01 Gres=gpu:h100:8\nPartitionName=all Nodes=gpu01\n")
    inv = import_files("slurm", [path]).inventory
    assert inv.objects["gpu01"].quantities["slurm_gres_gpus"] == 8
