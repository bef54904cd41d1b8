"""Job specs, round 61 follow-ups: GPU Feature Discovery's single-strategy product label of a MIG slice
with an extension, Slurm's `--tres-per-task=gres/gpu:0` named as written, and Kubernetes quantities
with a suffix (`1k`). Each expected figure is worked out by hand from the spec beside it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import NoGpuRequested, read_jobs_text

RULES = parse_rules(["namespace=Team", "account=Team"])
ROOT = Path(__file__).resolve().parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"  # 8 DGX H100 nodes x 8 H100-SXM5-80GB


def _selecting(product: str, gpus: str = "8") -> str:
    # One Pod in namespace research that selects nodes by GFD's product label and limits nvidia.com/gpu.
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: m, namespace: research}}
spec:
  nodeSelector: {{nvidia.com/gpu.product: {product}}}
  containers:
    - name: c
      image: x
      resources:
        limits:
          nvidia.com/gpu: {gpus}
"""


# --- GPU Feature Discovery, single MIG strategy ------------------------------------------------------
# GFD's product label of a MIG device is the parent's name, "MIG" and the profile, joined by "-"
# (NVIDIA/k8s-device-plugin internal/lm/resource.go, productLabel), and the profile is the MIG
# device's name with NVIDIA's "+" written "." (internal/resource/nvml-mig-device.go, GetName). So a
# node of 1g.10gb+me slices of H100s is labelled NVIDIA-H100-80GB-HBM3-MIG-1g.10gb.me, and "-me"
# (go-nvlib's no-media-engine attribute) is kept as written. Under the single strategy every
# nvidia.com/gpu of such a node is one slice.


@pytest.mark.parametrize(
    ("product", "profile"),
    [
        ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb.me", "1g.10gb+me"),
        ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb.me.all", "1g.10gb+me.all"),
        ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-me", "1g.10gb-me"),
        ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb.me", "1g.5gb+me"),
        # Time-sliced (GFD appends -SHARED): still slices of that profile, each shared.
        ("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-SHARED", "1g.10gb"),
    ],
)
def test_a_single_strategy_slice_with_an_extension_is_that_slice(product: str, profile: str) -> None:
    # Before, only a label ending in the bare profile was read as MIG: these were 8 whole GPUs (mig None).
    (job,) = read_jobs_text(_selecting(product), "p.yaml", RULES)
    assert (job.gpus, job.mig) == (8, profile)


def test_a_shared_slice_says_it_is_placed_as_a_whole_slice() -> None:
    (job,) = read_jobs_text(_selecting("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-SHARED"), "p.yaml", RULES)
    assert [n.message for n in job.notes if "-SHARED" in n.message] == [
        "nvidia.com/gpu.product: a time-sliced MIG instance (-SHARED) is shared by several pods; "
        "placed as a whole MIG instance"
    ]


def test_a_shared_slice_is_not_counted_as_whole_gpus() -> None:
    # 14 slices of 1g.10gb, 7 to an H100 (catalogue): 2 GPUs of one DGX node, so every one of the 8
    # nodes hosts it. Read as 14 whole GPUs (before), no 8-GPU node could: "fits nowhere", exit 1.
    code, out, err = _place(_selecting("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-SHARED", "14"))
    assert code == 0, err
    (job,) = json.loads(out)["jobs"]
    assert (job["mig"], job["hosting"]) == ("1g.10gb", 8)
    assert [len(p["gpus"]) for p in job["placements"]] == [2]


def test_a_no_media_engine_slice_no_model_offers_is_refused() -> None:
    # No catalogue model offers 1g.10gb-me: refused (exit 2), where before 8 whole H100s were placed.
    code, _out, err = _place(_selecting("NVIDIA-H100-80GB-HBM3-MIG-1g.10gb-me"))
    assert code == 2
    assert "MIG profile '1g.10gb-me' is offered by no GPU model of the catalogue" in err


@pytest.mark.parametrize("product", ["NVIDIA-H100-80GB-HBM3-MIG-1c.1g.10gb", "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb.xx"])
def test_a_mig_product_label_of_another_form_is_refused(product: str) -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text(_selecting(product), "p.yaml", RULES)
    assert f"p.yaml:5:18: nvidia.com/gpu.product={product} names a MIG instance in a form topolog does not read" in (
        str(err.value)
    )


def _place(spec: str) -> tuple[int, str, str]:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.yaml"
        path.write_text(spec)
        return run_cli(
            "place", str(POD), str(path), "--format", "json", "--no-authorization", "--limit", "1",
            "--principal-from", "namespace=Team",
        )  # fmt: skip


# --- Slurm: an option read from --tres-per-task is named as written -----------------------------------


def test_tres_per_task_of_no_gpu_names_itself() -> None:
    # Before: "asks for no GPU (--gpus-per-task=0)", an option the script never wrote.
    text = "#!/bin/bash\n#SBATCH -A research -J t -N 1 -n 4 --tres-per-task=gres/gpu:0\nsrun x\n"
    with pytest.raises(NoGpuRequested) as err:
        read_jobs_text(text, "t.sh", RULES)
    assert "asks for no GPU (--tres-per-task=gres/gpu:0)" in str(err.value)
    assert "--gpus-per-task" not in str(err.value)


def test_tres_per_task_of_no_gpu_beside_gpus_names_itself() -> None:
    text = "#!/bin/bash\n#SBATCH -A research -J t -N 1 -n 4 --tres-per-task=gres/gpu:0 --gpus-per-node=2\nsrun x\n"
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "t.sh", RULES)
    assert "t.sh:2: --tres-per-task=gres/gpu:0 asks for no GPU, but --gpus-per-node=2 asks for 2" in str(err.value)


def test_gpus_per_task_of_zero_is_still_named_so() -> None:
    # A control: the option written is --gpus-per-task, and the message names it.
    text = "#!/bin/bash\n#SBATCH -A research -J t -N 1 -n 4 --gpus-per-task=0\nsrun x\n"
    with pytest.raises(NoGpuRequested) as err:
        read_jobs_text(text, "t.sh", RULES)
    assert "asks for no GPU (--gpus-per-task=0)" in str(err.value)


# --- Kubernetes quantities ----------------------------------------------------------------------------
# k8s.io/apimachinery pkg/api/resource/quantity.go: a signed decimal number, then a binary suffix
# (Ki = 1024 ...), an exponent (e3) or a decimal suffix (m = 1/1000, k = 1000, M = 10**6 ...). The API
# server refuses a fraction of an extended resource (pkg/apis/core/validation/validation.go,
# ValidateResourceQuantityValue: IsIntegerResourceName, MilliValue() % 1000 != 0, "must be an integer").


@pytest.mark.parametrize(
    ("quantity", "gpus"),
    [
        ('"1k"', 1000),  # 1 x 1000
        ('"2000m"', 2),  # 2000 / 1000
        ('"0.5k"', 500),  # 0.5 x 1000
        ('"1Ki"', 1024),  # 1 x 1024
        ('"1e3"', 1000),  # 1 x 10**3
        ('"8."', 8),  # <digits>. is a number of the grammar
        ('"+8"', 8),
        ("2.0", 2),  # YAML float: the JSON number 2.0, a quantity of 2
        ('"1M"', 1_000_000),  # 10**6, the most one container may ask
    ],
)
def test_a_kubernetes_quantity_is_read_as_the_api_reads_it(quantity: str, gpus: int) -> None:
    # Before, only digits were read: each of these was refused ("expected a whole number of devices").
    (job,) = read_jobs_text(_selecting("NVIDIA-H100-80GB-HBM3", quantity), "p.yaml", RULES)
    assert job.gpus == gpus


@pytest.mark.parametrize(
    ("quantity", "says"),
    [
        (
            '"1.5"',
            "is '1.5'; expected a whole number of devices from 0 to 1,000,000 (that is a fraction of a device",
        ),  # the API server: must be an integer
        (
            '"500m"',
            "is '500m'; expected a whole number of devices from 0 to 1,000,000 (that is a fraction of a device",
        ),  # 0.5
        (
            '"1e-999999999"',
            "is '1e-999999999'; expected a whole number of devices from 0 to 1,000,000 (that is a fraction of a device",
        ),  # never built as a number
        ('"2M"', "is '2M' (2000000); expected a whole number of devices from 0 to 1,000,000"),
        ('"1e999999999"', "is '1e999999999'; expected a whole number of devices from 0 to 1,000,000"),
        ('"1K"', "is '1K'; expected a whole number"),  # no such suffix: k is 1000, Ki 1024
        ('"1e3k"', "is '1e3k'; expected a whole number"),  # an exponent and a suffix
        ('"-1"', "is '-1'; expected a whole number"),
        ("1000001", "is 1000001; expected a whole number of devices from 0 to 1,000,000"),  # YAML int, as written
        ('"4_00"', "is '4_00'; expected a whole number"),
    ],
)
def test_a_quantity_that_is_not_a_whole_count_is_refused_at_its_line(quantity: str, says: str) -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text(_selecting("NVIDIA-H100-80GB-HBM3", quantity), "p.yaml", RULES)
    assert f"p.yaml:11:11: limits nvidia.com/gpu of container c {says}" in str(err.value)


def test_a_thousand_gpus_simply_fit_nowhere() -> None:
    # 1k = 1000 GPUs in one pod (scope node): no 8-GPU node holds them, exit 1; before, exit 2.
    code, out, err = _place(_selecting("NVIDIA-H100-80GB-HBM3", '"1k"'))
    assert code == 1, err
    (job,) = json.loads(out)["jobs"]
    assert (job["gpus"], job["placements"]) == (1000, [])
