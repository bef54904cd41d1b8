"""Job specs, round 59: CPU-only workloads beside GPU ones, KubeRay's replica bounds, Slurm's own
MIG names, names with spaces and srun lines. Each expected count is worked out by hand from the
spec in the comment beside it; each public sample names its source.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import NoGpuRequested, read_jobs, read_jobs_text

RULES = parse_rules(["namespace=Team", "account=Team"])

# Kueue's own sample Job, a CPU-only workload (cpu: 1, memory: 200Mi; 3 pods):
# https://github.com/kubernetes-sigs/kueue/blob/main/site/static/examples/jobs/sample-job.yaml
# (namespace and name written here, generateName in the original).
KUEUE_CPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: sample-job
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  parallelism: 3
  completions: 3
  suspend: true
  template:
    spec:
      containers:
      - name: dummy-job
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        args: ["entrypoint-tester", "hello", "world"]
        resources:
          requests:
            cpu: 1
            memory: "200Mi"
      restartPolicy: Never
"""

GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: research}
spec:
  template:
    spec:
      containers: [{name: t, resources: {limits: {nvidia.com/gpu: 8}}}]
"""

CPU_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: webui, namespace: research}
spec:
  replicas: 3
  template:
    spec:
      containers: [{name: ui, resources: {limits: {cpu: "1"}}}]
"""


def test_a_cpu_only_job_beside_a_gpu_job_is_a_note() -> None:
    # The GPU Job is the file's only job (8 GPUs, one pod); the Kueue sample asks for cpu and
    # memory only: not placed, said in a note at its first line (line 1 of the file).
    jobs = read_jobs_text(KUEUE_CPU_JOB + "---\n" + GPU_JOB, "ns.yaml", RULES)
    assert [(j.name, j.gpus) for j in jobs] == [("train", 8)]
    said = [str(n) for n in jobs.notes]
    assert (
        "ns.yaml:1:1: Job sample-job requests no GPU (nvidia.com/gpu, amd.com/gpu or nvidia.com/mig-*): not placed"
        in said
    )


def test_a_cpu_only_deployment_is_one_note_not_one_per_replica() -> None:
    # 3 replicas of one CPU-only pod template: one workload, one note (the GPU Job is placed).
    jobs = read_jobs_text(CPU_DEPLOYMENT + "---\n" + GPU_JOB, "ns.yaml", RULES)
    assert [j.name for j in jobs] == ["train"]
    assert sum("Deployment webui requests no GPU" in n.message for n in jobs.notes) == 1


def test_only_cpu_workloads_is_nothing_to_place() -> None:
    # No workload asks for a GPU: exit 2 with each named at its line, as its own error type (the
    # admission webhook tells "nothing to gate" from bad input by it).
    with pytest.raises(NoGpuRequested) as err:
        read_jobs_text(KUEUE_CPU_JOB + "---\n" + CPU_DEPLOYMENT, "ns.yaml", RULES)
    assert isinstance(err.value, TopologError)
    text = str(err.value)
    assert "ns.yaml:1:1: Job sample-job requests no GPU" in text and "nothing to place" in text
    assert "ns.yaml:24:1: Deployment webui requests no GPU" in text  # the Job is 22 lines, --- is 23


def test_bad_input_beside_a_cpu_only_workload_is_still_an_error(tmp_path: Path) -> None:
    # A GPU Job whose count cannot be read is bad input whatever sits beside it.
    bad = GPU_JOB.replace("nvidia.com/gpu: 8", "nvidia.com/gpu: eight")
    (tmp_path / "a.yaml").write_text(KUEUE_CPU_JOB + "---\n" + bad)
    with pytest.raises(TopologError) as err:
        read_jobs([tmp_path / "a.yaml"], RULES)
    assert not isinstance(err.value, NoGpuRequested)


def test_a_cpu_only_batch_script_in_a_folder_of_scripts(tmp_path: Path) -> None:
    # prep.sh asks for 16 CPUs and no GPU (a data preparation step); train.sh for 2 x 4 GPUs = 8.
    (tmp_path / "prep.sh").write_text("#!/bin/bash\n#SBATCH -A research -J prep -c 16\npython prep.py\n")
    (tmp_path / "train.sh").write_text(
        "#!/bin/bash\n#SBATCH -A research -J train -N 2 --gpus-per-node=4\nsrun python train.py\n"
    )
    jobs = read_jobs([tmp_path], RULES)
    assert [(j.name, j.gpus) for j in jobs] == [("train", 8)]
    assert any("prep.sh:1: batch script job prep requests no GPU" in str(n) for n in jobs.notes)


def test_an_srun_line_asking_for_gpus_is_not_read_as_no_gpu() -> None:
    # The GPUs are asked on the step (line 3), not on an #SBATCH line: refused at line 3, never
    # passed as a CPU-only script.
    text = "#!/bin/bash\n#SBATCH -A research -J s\nsrun -N 2 --gpus-per-node=4 python train.py\n"
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "s.sh", RULES)
    assert "s.sh:3: batch script job s: this srun/salloc line asks for GPUs" in str(err.value)


def test_srun_inside_a_gpu_allocation_is_the_allocations_step() -> None:
    # #SBATCH asks 1 node x 8 GPUs; the srun step takes 1 of them: the job is the allocation, 8.
    text = "#!/bin/bash\n#SBATCH -A research -J s --gres=gpu:8\nsrun --gres=gpu:1 python a.py\n"
    (job,) = read_jobs_text(text, "s.sh", RULES)
    assert (job.gpus, job.scope) == (8, "node")


def test_a_slurm_job_name_with_a_space() -> None:
    # sbatch takes --job-name="my job"; the name is kept whole.
    text = '#!/bin/bash\n#SBATCH -A research --job-name="my job" --gres=gpu:2\npython a.py\n'
    (job,) = read_jobs_text(text, "s.sh", RULES)
    assert (job.name, job.gpus) == ("my job", 2)


@pytest.mark.parametrize(
    ("gres", "mig", "noted"),
    [
        # Slurm names a slice round(MiB / 1024) GiB: an A100-80GB's 3g.40gb (40,192 MiB) is 3g.39gb,
        # after the GPU's name (nvidia_a100_3g.39gb). With no GPU named it is kept as written
        # (review R-JS: a profile of another model, H200's 1g.18gb, is no nearby 1g.20gb).
        ("gpu:nvidia_a100_3g.39gb:1", "3g.40gb", True),
        ("gpu:3g.39gb:1", "3g.39gb", False),
        # The A100 family's 2-slice profiles are 2g.10gb (A100-40GB) and 2g.20gb: 9 lies 1 below
        # 10 and 11 below 20, so 2g.10gb.
        ("gpu:nvidia_a100_2g.9gb:1", "2g.10gb", True),
        # A catalogue name is kept as it is, with no note.
        ("gpu:nvidia_h100_1g.10gb:1", "1g.10gb", False),
        # 30 is 10 below 3g.40gb and 10 above 3g.20gb: no profile is meant; kept as written (the
        # placement refuses it, naming the profiles that exist).
        ("gpu:3g.30gb:1", "3g.30gb", False),
    ],
)
def test_slurm_mig_names_round_memory_their_own_way(gres: str, mig: str, noted: bool) -> None:
    text = f"#!/bin/bash\n#SBATCH -A research -J m --gres={gres}\n"
    (job,) = read_jobs_text(text, "m.sh", RULES)
    assert (job.gpus, job.mig) == (1, mig)
    assert any("Slurm names a slice's memory in GiB" in n.message for n in job.notes) is noted


def _raycluster(group: str) -> str:
    # A CPU head and one worker group of 4-GPU pods, as the KubeRay samples write them.
    return f"""\
apiVersion: ray.io/v1
kind: RayCluster
metadata: {{name: rc, namespace: research}}
spec:
  headGroupSpec:
    template: {{spec: {{containers: [{{name: head, resources: {{limits: {{cpu: 2}}}}}}]}}}}
  workerGroupSpecs:
    - groupName: gpu
{group}      template: {{spec: {{containers: [{{name: w, resources: {{limits: {{nvidia.com/gpu: 4}}}}}}]}}}}
"""


@pytest.mark.parametrize(
    ("group", "gpus"),
    [
        # KubeRay runs clamp(replicas, minReplicas, maxReplicas) x numOfHosts
        # (GetWorkerGroupDesiredReplicas), and Kueue's pod set counts the same:
        ("      replicas: 1\n      minReplicas: 2\n      maxReplicas: 4\n", 2 * 4),  # 1 < min 2: 2 pods
        ("      replicas: 6\n      minReplicas: 1\n      maxReplicas: 3\n", 3 * 4),  # 6 > max 3: 3 pods
        ("      replicas: 3\n      minReplicas: 2\n      maxReplicas: 4\n", 3 * 4),  # inside: 3 pods
        # Crossed bounds (minReplicas above maxReplicas) are refused: test_job_specs_round60.py.
        ("      minReplicas: 2\n", 2 * 4),  # no replicas: the CRD's 0, raised to min 2
        ("      replicas: 1\n      minReplicas: 2\n      numOfHosts: 2\n", 2 * 2 * 4),  # 2 replicas x 2 hosts
    ],
)
def test_kuberay_worker_replicas_within_their_bounds(group: str, gpus: int) -> None:
    (job,) = read_jobs_text(_raycluster(group), "rc.yaml", RULES)
    assert job.gpus == gpus


def test_a_worker_group_with_no_replicas_runs_no_pod() -> None:
    # No replicas and no minReplicas: the CRD's defaults are 0 and 0, so KubeRay starts no GPU
    # worker; the head asks for no GPU. Nothing to place, and the message says why.
    with pytest.raises(NoGpuRequested) as err:
        read_jobs_text(_raycluster(""), "rc.yaml", RULES)
    assert "RayCluster rc runs no pod that asks for a GPU" in str(err.value)


def test_a_suspended_worker_group_runs_no_pod() -> None:
    with pytest.raises(NoGpuRequested):
        read_jobs_text(_raycluster("      replicas: 2\n      suspend: true\n"), "rc.yaml", RULES)


def test_a_suspend_that_is_no_boolean_is_refused() -> None:
    # The CRD's suspend is a boolean: 'yes' is refused at its line (10), not read as false.
    with pytest.raises(TopologError) as err:
        read_jobs_text(_raycluster("      replicas: 2\n      suspend: 'yes'\n"), "rc.yaml", RULES)
    assert "rc.yaml:10:7: 'suspend' of worker group gpu of RayCluster rc is 'yes'; expected true or false" in str(
        err.value
    )
