"""Slurm batch scripts read as topolog jobs (verifier/sources/jobs/slurm_batch.py).

Expected figures are derived by hand from the #SBATCH lines, in the comment beside each. The
scripts come from public Slurm site documentation (fixtures/README.md) plus our own lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs, read_jobs_text
from verifier.sources.jobs.spec import Job

FIXTURES = Path(__file__).parent / "fixtures"
BY_ACCOUNT = parse_rules(["account=Team"])


def _one(name: str) -> Job:
    jobs = read_jobs([FIXTURES / name], BY_ACCOUNT)
    assert len(jobs) == 1
    return next(iter(jobs))


def test_gpus_per_task_times_tasks() -> None:
    # --nodes=2, --ntasks-per-node=4, --gpus-per-task=1: 2 x 4 tasks x 1 GPU = 8 GPUs on at most 2 nodes.
    # --job-name=affinity-test names it; --account=research is the principal (account=Team).
    job = _one("cscs-gpus-per-task.sbatch")
    assert (job.name, job.principal, job.principal_type) == ("affinity-test", "research", "Team")
    assert (job.gpus, job.scope, job.max_nodes, job.accepts) == (8, "any", 2, ())
    assert job.loc.line == 4  # the --job-name line


def test_gres_per_node_and_what_is_not_judged() -> None:
    # --nodes=2 and --gres=gpu:8 (per node): 16 GPUs on at most 2 nodes; no -J: named after the file.
    job = _one("gres-two-nodes.sh")
    assert (job.name, job.principal, job.gpus, job.max_nodes, job.scope) == ("gres-two-nodes", "research", 16, 2, "any")
    notes = [str(n) for n in job.notes]
    assert notes == [
        f"{FIXTURES / 'gres-two-nodes.sh'}:6: options --time not judged",
        f"{FIXTURES / 'gres-two-nodes.sh'}:8: --switches=1@10:00 not judged: topolog has no leaf-switch scope",
        # Line 13 comes after `conda activate` (line 10): sbatch stops reading directives there.
        f"{FIXTURES / 'gres-two-nodes.sh'}:13: #SBATCH after the first command: sbatch ignores it, and so does topolog",
    ]


def test_typed_gres_constraint_and_partition() -> None:
    # --ntasks=1 with --gres=gpu:a100:1: one node, 1 GPU; the type a100 is the leading part of the
    # catalogue's A100 models -> accepts A100; --constraint a100&ib keeps A100 and notes ib.
    job = _one("typed-gres.sbatch")
    assert (job.principal, job.gpus, job.scope, job.accepts) == ("uvasrg", 1, "node", ("A100",))
    text = "\n".join(n.message for n in job.notes)
    assert "--constraint features ib not judged" in text
    assert "--partition=gpu: which nodes it holds is not judged" in text
    assert "options --mem, --cpus-per-task, --time, --output not judged" in text
    # The partition as principal: -p gpu.
    by_partition = next(iter(read_jobs([FIXTURES / "typed-gres.sbatch"], parse_rules(["partition"]))))
    assert (by_partition.principal, by_partition.principal_type) == ("gpu", None)


@pytest.mark.parametrize(
    ("lines", "gpus", "scope", "max_nodes", "accepts", "mig"),
    [
        # -N 4 and --gpus-per-node=h100:8: 32 GPUs on at most 4 nodes, H100 models.
        ("#SBATCH -N 4 --gpus-per-node=h100:8\n", 32, "any", 4, ("H100",), None),
        # -G 12 for the whole job, no node count: Slurm picks the nodes, so no bound.
        ("#SBATCH -G 12\n", 12, "any", None, (), None),
        # --nodes=1 --gpus=4: one node.
        ("#SBATCH --nodes=1 --gpus=4\n", 4, "node", None, (), None),
        # A MIG profile as the GRES type: 2 instances of 1g.10gb on one node.
        ("#SBATCH --gres=gpu:1g.10gb:2\n", 2, "node", None, (), "1g.10gb"),
        # --ntasks=16 --ntasks-per-node=8 --gpus-per-task=1: ceil(16 / 8) = 2 nodes, 16 GPUs.
        ("#SBATCH --ntasks=16\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-task=1\n", 16, "any", 2, (), None),
        # A type Slurm's AutoDetect=nvml writes: NVML's "NVIDIA H100 80GB HBM3" lower-cased, underscores.
        ("#SBATCH --gres=gpu:nvidia_h100_80gb_hbm3:8\n", 8, "node", None, ("H100-SXM5-80GB",), None),
        # --constraint with OR over GPU words: any of them.
        ('#SBATCH --gres=gpu:4 --constraint="h100|a100"\n', 4, "node", None, ("H100", "A100"), None),
    ],
)
def test_gpu_options(
    lines: str, gpus: int, scope: str, max_nodes: int | None, accepts: tuple[str, ...], mig: str | None
) -> None:
    job = next(iter(read_jobs_text("#!/bin/bash\n#SBATCH -A hpc -J j\n" + lines + "srun x\n", "j.sbatch", BY_ACCOUNT)))
    assert (job.gpus, job.scope, job.max_nodes, job.accepts, job.mig) == (gpus, scope, max_nodes, accepts, mig)


@pytest.mark.parametrize(
    ("lines", "where", "expected"),
    [
        ("#SBATCH -A hpc -J j\n#SBATCH --nodes=2\n", ":1:", "requests no GPU"),
        ("#SBATCH -A hpc -J j\n#SBATCH --gpus-per-node=many\n", ":3:", "expected [type:]count"),
        ("#SBATCH -A hpc -J j\n#SBATCH --nodes=two --gres=gpu:8\n", ":3:", "--nodes=two is not a count"),
        ("#SBATCH -J j --gres=gpu:8\n", ":2:", "cannot tell which principal it acts as"),
        # A space is part of a Slurm name ("my job" is read); a slash or a leading space is not.
        ("#SBATCH -A hpc -J 'my/job' --gres=gpu:8\n", ":2:", "job name 'my/job' must start with a letter"),
        ("#SBATCH -A hpc -J j --gres=gpu:8\n#SBATCH hetjob\n", ":3:", "heterogeneous jobs"),
        ("#SBATCH -A hpc -J j --gres=gpu:8 --gpus-per-node=4\n", ":2:", "disagrees with --gres=gpu:8"),
        ('#SBATCH -A hpc -J j --gres=gpu:8 --constraint="h100&a100"\n', ":2:", "several GPU models at once"),
        ("#SBATCH -A hpc -J j 'unclosed\n", ":2:", "cannot read this #SBATCH line"),
        # A GRES count that is no whole number from 1 up: read as a type, each asked for 1 GPU.
        ("#SBATCH -A hpc -J j --gres=gpu:h100:nan\n", ":2:", "--gres=gpu:h100:nan: 'nan' is not a GPU count"),
        ("#SBATCH -A hpc -J j --gres=gpu:-1\n", ":2:", "--gres=gpu:-1: '-1' is not a GPU count"),
        ("#SBATCH -A hpc -J j --gres=gpu:a100:1.5\n", ":2:", "--gres=gpu:a100:1.5: '1.5' is not a GPU count"),
        # sbatch's --nodes=min-max with the minimum above the maximum: no node count is meant.
        ("#SBATCH -A hpc -J j --gres=gpu:8 --nodes=2-1\n", ":2:", "--nodes=2-1: the minimum 2 is above the maximum 1"),
    ],
)
def test_script_problems_name_file_and_line(lines: str, where: str, expected: str) -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text("#!/bin/bash\n" + lines + "srun x\n", "bad.sbatch", BY_ACCOUNT)
    message = str(err.value)
    assert f"bad.sbatch{where}" in message and expected in message
