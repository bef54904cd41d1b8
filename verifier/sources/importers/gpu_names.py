"""GPU names as schedulers see them, to and from catalogue models.

Each scheduler writes the product as the driver names it, respelled:

- GPU Feature Discovery's `nvidia.com/gpu.product` is NVML's name with spaces as dashes
  (`NVIDIA-H100-80GB-HBM3` for "NVIDIA H100 80GB HBM3"; older drivers' names lack `NVIDIA `:
  `A100-SXM4-40GB`), plus `-SHARED` when time-slicing renames it and `-MIG-<profile>` under the
  single MIG strategy;
- Slurm's `AutoDetect=nvml` Gres type is the same name lower-cased with spaces as underscores
  (`gpu:nvidia_h100_80gb_hbm3:8`); a type a site wrote by hand (`gpu:h100:8`) names no product;
- AMD's node labeller writes the PCI device id (`amd.com/gpu.device-id=74a1`).

Names are matched against device_ids.yaml only: a name not in it gives None (not compared,
never guessed from a similar one).
"""

from __future__ import annotations

import re

from verifier.sources.inventory.device_ids import device_ids

AMD_VENDOR = "1002"
_SUFFIX = re.compile(r"(-SHARED|-MIG-.*)$", re.IGNORECASE)


def _key(name: str) -> str:
    # NVML names carry "NVIDIA " since driver R470 or so ("NVIDIA A100-SXM4-40GB"), older ones do not
    # ("A100-SXM4-40GB", as GFD labels of that time read): the prefix is not part of the identity.
    return re.sub(r"[\s_-]+", "-", name.strip().lower()).removeprefix("nvidia-")


def model_for_product(text: str) -> str | None:
    """The catalogue model of a GFD product label or an NVML-derived Slurm Gres type, or None."""
    wanted = _key(_SUFFIX.sub("", text.strip()))
    found = {model for name, model in device_ids().names.items() if _key(name) == wanted}
    return found.pop() if len(found) == 1 else None


def model_for_amd_device(device_id: str) -> str | None:
    """The catalogue model of an AMD PCI device id (`74a1`, `0x74a1`), or None."""
    return device_ids().pci.get(f"{AMD_VENDOR}:{device_id.strip().lower().removeprefix('0x')}")


def amd_device_for_model(model: str) -> str | None:
    """AMD's `amd.com/gpu.device-id` value for a catalogue model, or None."""
    ids = sorted(k.split(":", 1)[1] for k, m in device_ids().pci.items() if m == model and k.startswith(AMD_VENDOR))
    return ids[0] if ids else None
