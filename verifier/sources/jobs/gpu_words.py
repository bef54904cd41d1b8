"""GPU models as schedulers name them, to the `accepts` words of topolog's job model.

- `nvidia.com/gpu.product` (GPU Feature Discovery): the NVML product name with spaces as dashes
  ("NVIDIA-H100-80GB-HBM3"), `-SHARED` appended under time-slicing and `-MIG-<profile>` under
  the MIG single strategy (GFD README, "Generated Labels"); matched against the NVML names of
  verifier/sources/inventory/device_ids.yaml.
- `amd.com/gpu.device-id` (AMD GPU node labeller): the PCI device id, matched with vendor 1002
  against the same table.
- `cloud.google.com/gke-accelerator` (GKE, "About GPUs in GKE"): GKE's accelerator names.
- Slurm GRES types and node features (`--gres=gpu:a100:4`, `--constraint=h100`) are site-chosen
  words; a word that is a catalogue model's name, or its leading part ("a100" for
  "A100-SXM4-80GB"), ignoring case, dashes and underscores, names those models.

A name that matches nothing gives None; the readers keep the word as written (no GPU matches
it, so the job fits nowhere and `--why-not` says the model is not accepted) and add a note.
"""

from __future__ import annotations

import re
from functools import cache

from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.device_ids import device_ids, model_for_pci

VENDORS = ("nvidia", "amd", "intel")

GKE_ACCELERATORS = {
    # https://cloud.google.com/kubernetes-engine/docs/concepts/gpus (accelerator names per machine type)
    "nvidia-h100-80gb": "H100-SXM5-80GB",  # A3 High
    "nvidia-h100-mega-80gb": "H100-SXM5-80GB",  # A3 Mega
    "nvidia-a100-80gb": "A100-SXM4-80GB",  # A2 Ultra
    "nvidia-tesla-a100": "A100-SXM4-40GB",  # A2 Standard
    "nvidia-b200": "B200-HGX-180GB",  # A4
    "nvidia-gb200": "B200-GB200-186GB",  # A4X
}

_MIG_SUFFIX = re.compile(r"-mig-[0-9]+g\.[0-9]+gb$")


def _squash(word: str) -> str:
    return re.sub(r"[-_ ]", "", word.lower())


@cache
def _gfd_products() -> dict[str, str]:
    return {name.replace(" ", "-"): model for name, model in device_ids().names.items()}


def gfd_product_model(value: str) -> str | None:
    """The catalogue model of a GFD `nvidia.com/gpu.product` value, or None."""
    key = value.strip().lower().removesuffix("-shared")
    key = _MIG_SUFFIX.sub("", key)
    return _gfd_products().get(key)


def amd_device_model(value: str) -> str | None:
    """The catalogue model of an `amd.com/gpu.device-id` value ("74a1"), or None."""
    return model_for_pci("1002", value.strip())


def gke_model(value: str) -> str | None:
    return GKE_ACCELERATORS.get(value.strip().lower())


@cache
def _gpu_words() -> dict[str, str]:
    """Squashed word -> accepts word: every built-in GPU model's name and its leading parts."""
    out: dict[str, str] = {}
    for m in builtin_models():
        if m.kind != "gpu":
            continue
        parts = m.name.split("-")
        for i in range(1, len(parts) + 1):
            out.setdefault(_squash("-".join(parts[:i])), "-".join(parts[:i]))
    return out


def site_word(word: str) -> str | None:
    """The accepts word a Slurm GRES type or node feature stands for ("a100" -> "A100"), or None."""
    if word.lower() in VENDORS:
        return word.lower()
    return _gpu_words().get(_squash(word))
