"""Review R-JS of ead6c2d/f5de8b6 (the srun-line check reads a line as the shell splits it).

The check refuses a script whose #SBATCH lines ask no GPU while a step asks for some: missing such
a step passes a GPU script as CPU-only (fail open). ead6c2d counted srun only as the command word
and stopped at the first option it did not know; the base wheel (a plain pattern) refused every
line below, the reviewed tree read each as CPU-only. Expected outcomes are read off each line by
hand: the shell runs srun in every one, with a GPU count that is not 0 among srun's own options.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import NoGpuRequested, read_jobs_text

RULES = parse_rules(["account=Team"])
HEAD = "#!/bin/bash\n#SBATCH -A research -J s -N 1\n"  # asks no GPU: line 3 is the body's first


@pytest.mark.parametrize(
    "body",
    [
        # A wrapper runs srun: timeout(1), env(1), nice(1), stdbuf(1), xargs(1), sudo(8), eval.
        "timeout 23h srun --gres=gpu:4 python train.py",
        "env NCCL_DEBUG=INFO srun --gpus-per-node=4 python train.py",
        "nice -n 10 srun --gpus=4 python train.py",
        "stdbuf -oL srun --gpus=4 python train.py",
        "xargs -n1 srun --gpus=1 python eval.py < ckpts.txt",
        "time -p srun --gpus=1 python a.py",
        "eval srun --gpus=1 python a.py",
        # A function's body: `function f {` puts srun after two words, not first.
        "function run { srun --gpus=1 python a.py; }",
        # Command substitution runs inside double quotes and in backquotes.
        'out="$(srun --gres=gpu:1 nvidia-smi -L)"',
        'echo "$(srun --gres=gpu:1 nvidia-smi -L)"',
        "n=`srun --gpus=1 nvidia-smi -L | wc -l`",
        "diff <(srun --gres=gpu:1 nvidia-smi -L) expected.txt",
        'echo "$(date) # $(srun --gres=gpu:1 nvidia-smi -L)"',  # '#' inside quotes starts no comment
        # srun options that take no value (or only one written with '='), which ead6c2d took to
        # swallow the next word, the GPU option itself.
        "srun --propagate --gres=gpu:4 python train.py",
        "srun --reboot --gpus=4 python train.py",
        "srun --quit-on-interrupt --gpus=4 python train.py",
        "srun --bcast --gpus=4 python train.py",
        "salloc --no-shell --gres=gpu:4",
        # Bundled short flags (-l label, then -G4), and a redirection before the options.
        "srun -lG4 python a.py",
        "srun >log.txt --gpus=1 python a.py",
        "srun 2>err.txt --gpus=1 python a.py",
        # --tres-per-task asks for GPUs per task as --gpus-per-task does.
        "srun -n 2 --tres-per-task=gres/gpu:1 python a.py",
    ],
)
def test_a_gpu_step_the_shell_runs_is_refused(body: str) -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text(f"{HEAD}{body}\n", "s.sh", RULES)
    assert not isinstance(err.value, NoGpuRequested)
    assert "s.sh:3: batch script job s: this srun/salloc line asks for GPUs" in str(err.value)


@pytest.mark.parametrize(
    "body",
    [
        "echo srun --gpus=1 python a.py",  # echo prints its words, quoted or not
        "echo '$(srun --gpus=1 python a.py)'",  # single quotes: no substitution
        'echo "\\$(srun --gpus=1 python a.py)"',  # an escaped '$' opens none
        'msg="then srun --gpus=1 python a.py"',  # a string a variable holds
        "which srun && srun -n 4 hostname",  # srun named, run without a GPU
        "srun -n 4 -- --gpus=2",  # after '--' the words are the program's
        "srun -K1 python a.py --gpus=4",  # -K1 carries its value: python is the program
        "srun --tres-per-task=cpu=4,gres/gpu=0 hostname",  # a GPU count of 0
        "x=$((2 * 4)); srun -n $x hostname",  # arithmetic, not a command
        "echo hi  # $(srun --gpus=1 python a.py)",  # a substitution in a comment runs nothing
        "python a.py  # or: `srun --gpus=1 python a.py`",
    ],
)
def test_a_line_that_runs_no_gpu_step_stays_cpu_only(body: str) -> None:
    with pytest.raises(NoGpuRequested):
        read_jobs_text(f"{HEAD}{body}\n", "s.sh", RULES)


def test_thousands_of_nested_substitutions_are_read_without_failing() -> None:
    # Hostile input: 5,000 nested `$(` on one line. Read one after another (no recursion), and past
    # a budget by the plain pattern: no srun there, so CPU-only (a first version of this review's
    # change recursed, and failed with Python's recursion limit).
    body = "echo " + "$(" * 5000 + "true" + ")" * 5000
    with pytest.raises(NoGpuRequested):
        read_jobs_text(f"{HEAD}{body}\n", "s.sh", RULES)
    # The same nesting around a GPU srun: `(srun --gpus=1` is still found, at line 3.
    body = "echo " + "$(" * 5000 + "srun --gpus=1 hostname" + ")" * 5000
    with pytest.raises(TopologError) as err:
        read_jobs_text(f"{HEAD}{body}\n", "s.sh", RULES)
    assert "s.sh:3: batch script job s: this srun/salloc line asks for GPUs" in str(err.value)
