"""GPU models as schedulers name them, to the `accepts` words of topolog's job model.

- `nvidia.com/gpu.product` (GPU Feature Discovery) and `amd.com/gpu.device-id` (AMD's node
  labeller): verifier/sources/importers/gpu_names.py, which the node-list importers share.
- `cloud.google.com/gke-accelerator` (GKE, "About GPUs in GKE"): GKE's accelerator names.
- Slurm GRES types and node features (`--gres=gpu:a100:4`, `--constraint=h100`) are site-chosen
  words; a word that is a catalogue model's name, or its leading part ("a100" for
  "A100-SXM4-80GB"), ignoring case, dashes and underscores, names those models; a type Slurm's
  AutoDetect=nvml wrote (`nvidia_h100_80gb_hbm3`) names its product (gpu_names.py).

A name that matches nothing gives None; the readers keep the word as written (no GPU matches
it, so the job fits nowhere and `--why-not` says the model is not accepted) and add a note.
"""

from __future__ import annotations

import re
from functools import cache

from verifier.core.limits import Limits, use_limits
from verifier.core.resources import package_file
from verifier.sources.importers.gpu_names import model_for_product
from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.device_ids import device_ids
from verifier.sources.inventory.yaml_source import YMap, load_yaml_text

VENDORS = ("nvidia", "amd", "intel")

GKE_ACCELERATORS = {
    # https://cloud.google.com/kubernetes-engine/docs/concepts/gpus (accelerator names per machine type)
    "nvidia-h100-80gb": "H100-SXM5-80GB",  # A3 High
    "nvidia-h100-mega-80gb": "H100-SXM5-80GB",  # A3 Mega
    "nvidia-a100-80gb": "A100-SXM4-80GB",  # A2 Ultra
    "nvidia-tesla-a100": "A100-SXM4-40GB",  # A2 Standard
    "nvidia-h200-141gb": "H200-SXM-141GB",  # A3 Ultra
    "nvidia-b200": "B200-HGX-180GB",  # A4
    "nvidia-l4": "L4",  # G2
    "nvidia-gb200": "B200-GB200-186GB",  # A4X
}


GPU_FAMILY_LABEL = "nvidia.com/gpu.family"
GPU_FAMILIES = {
    "volta": ("V100",),
    "ampere": ("A100",),
    "ada-lovelace": ("L4", "RTX-4090"),  # "L4" also names L40S, its leading part
    "hopper": ("H100", "H200"),
    "blackwell": ("B200",),
}
"""GPU Feature Discovery's architecture label (NVIDIA/k8s-device-plugin internal/lm/resource.go,
getArchFamily: the CUDA compute capability's family, 8.0 `ampere`, 8.9 `ada-lovelace`, 9.0 `hopper`)
to the catalogue's GPU models of that architecture, as accepts words. A model an inventory brings
under another name (an `A40`) is not among them: the job fits nowhere on it, never somewhere it cannot run."""


def gpu_family(value: str) -> tuple[str, ...] | None:
    """The accepts words of a `nvidia.com/gpu.family` value, or None for a family the catalogue has no GPU of.

    As written: a label value is matched case for case, and GPU Feature Discovery writes the family in
    lower case, so `Hopper` selects no node (the pod stays pending) and is no family here either.
    """
    return GPU_FAMILIES.get(value)


def common_words(
    have: tuple[str, ...], have_families: frozenset[str], new: tuple[str, ...], new_families: frozenset[str]
) -> tuple[tuple[str, ...], frozenset[str]]:
    """The GPU words two node selections both allow, and those of them that still stand for a family.

    A family word (GPU_FAMILIES: hopper's `H100`) stands for every model whose name starts with it, as
    the placement reads an accepts word; so it meets a model under it (`H100-SXM5-80GB`, from
    `nvidia.com/gpu.product`) in that model: a node labelled hopper and NVIDIA-H100-80GB-HBM3 is an
    H100-SXM5-80GB node. Any other word meets only itself: two products are two kinds of node, even
    where one name starts with the other (L4, L40S).
    """
    met: dict[str, bool] = {}
    for a in have:
        for b in new:
            if a == b:
                word, family = a, a in have_families and b in new_families
            elif a in have_families and b.startswith(a):
                word, family = b, b in new_families
            elif b in new_families and a.startswith(b):
                word, family = a, a in have_families
            else:
                continue
            met[word] = met.get(word, False) or family
    return tuple(met), frozenset(w for w, family in met.items() if family)


GPU_IN_USE = "nvidia.com/use-gputype"
GPU_NO_USE = "nvidia.com/nouse-gputype"
"""Pod annotations by which HAMi's scheduler and Volcano's vGPU (volcano-sh/volcano
pkg/scheduler/api/devices/nvidia/vgpu: GPUInUse, GPUNoUse, checkGPUtype) choose the GPU types a pod
may get: comma-separated words, each matched upper-cased as a part of the device's type, which the
device plugin writes as `NVIDIA-` and NVML's name (`NVIDIA-NVIDIA A100-SXM4-40GB`). One use word must be
part of it, and no nouse word."""


def typed_models(use: str | None, nouse: str | None) -> tuple[str, ...]:
    """The catalogue's NVIDIA models whose type passes HAMi's and Volcano's annotations (`use`, `nouse`:
    their values, None when not written), in catalogue order. A model with no NVML name in
    device_ids.yaml passes neither list: its type is not known, so it is never taken for one allowed.
    """
    named: dict[str, list[str]] = {}
    for name, model_name in device_ids().names.items():
        named.setdefault(model_name, []).append(f"NVIDIA-{name}".upper())
    allowed = []
    for model in builtin_models():
        if model.vendor.casefold() != "nvidia" or model.name not in named:
            continue
        types = named[model.name]
        # Both lists where both are written (HAMi's checkGPUtype; Volcano's reads the use list alone):
        # never a type that either scheduler would refuse.
        used = use is None or any(word.upper() in t for word in use.split(",") for t in types)
        shunned = nouse is not None and any(word.upper() in t for word in nouse.split(",") for t in types)
        if used and not shunned:
            allowed.append(model.name)
    return tuple(allowed)


def _squash(word: str) -> str:
    return re.sub(r"[-_ ]", "", word.lower())


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
    return _gpu_words().get(_squash(word)) or model_for_product(word)


def nvml_mig_profile(profile: str, word: str | None) -> str | None:
    """The catalogue's MIG profile a Slurm AutoDetect=nvml GRES type names, or None when none is clear.

    Slurm names a MIG slice `<slices>g.<GiB>gb` with GiB = round(memory MiB / 1024) (_handle_mig
    in src/plugins/gpu/nvml/gpu_nvml.c), while NVIDIA's profile names (the catalogue's) round
    the memory their own way: an A100-80GB's 3g.40gb slice holds 40,192 MiB, which Slurm calls
    3g.39gb (39.25 GiB). NVIDIA's figure is the slice's GiB rounded up to a round name (4,864
    MiB is 1g.5gb, 9,728 MiB 1g.10gb, 19,968 MiB 2g.20gb), so Slurm's is that figure or one or
    two below it. A name that is a profile of the models `word` stands for (every GPU model when
    None) is that profile. Otherwise the one profile with the same slices and a memory 0 to 2
    above Slurm's is meant: profiles of one slice count differ by at least 5 GB (1g.5gb,
    1g.10gb, 1g.20gb), so two never match. None: no such profile, or more than one, and the
    name is kept as written (refused at placement with the profiles that exist).
    """
    found = re.fullmatch(r"([1-7])g\.([0-9]{1,6})gb", profile)
    if found is None:
        return None
    slices, gib = found.group(1), int(found.group(2))
    offered = {
        p
        for m in builtin_models()
        if m.kind == "gpu" and (word is None or m.name == word or m.name.startswith(word + "-"))
        for p, _n in m.mig
    }
    if profile in offered:
        return profile
    near = set()
    for p in offered:
        s, _, memory = p.partition("g.")
        # An extended profile (1g.10gb+me) is never what nvml's plain name means: only plain ones are near.
        if s == slices and memory.removesuffix("gb").isdigit() and 0 <= int(memory.removesuffix("gb")) - gib <= 2:
            near.add(p)
    return near.pop() if len(near) == 1 else None


@cache
def _nvml_names() -> tuple[tuple[str, str], ...]:
    """(NVML product name as written, catalogue model) from device_ids.yaml: the table device_ids() reads
    keeps the names lower-cased for its own case-blind lookups, and a label value needs their case.
    """
    with use_limits(Limits()):
        doc = load_yaml_text(
            package_file("verifier.sources.inventory", "device_ids.yaml").read_text(encoding="utf-8"),
            "<builtin>/device_ids.yaml",
        )
    names = doc.get("names")
    if not isinstance(names, YMap):
        return ()
    return tuple((" ".join(str(k).split()), str(v)) for k, v in names.items())


@cache
def gfd_products() -> dict[str, str]:
    """`nvidia.com/gpu.product` values as GPU Feature Discovery writes them -> catalogue model.

    GFD writes NVML's product name with each space turned into `-` and its case kept
    (NVIDIA/gpu-feature-discovery mig-strategy.go, migStrategyNone: strings.Replace(model, " ", "-", -1)):
    `NVIDIA H100 80GB HBM3` is `NVIDIA-H100-80GB-HBM3`, `NVIDIA H100 PCIe` is `NVIDIA-H100-PCIe`. Drivers
    before about R470 named the GPU without `NVIDIA ` (`A100-SXM4-40GB`), so that form is kept too.
    """
    nvidia = {m.name for m in builtin_models() if m.vendor.casefold() == "nvidia"}
    out: dict[str, str] = {}
    for name, model in _nvml_names():
        if model not in nvidia:
            continue
        label = name.replace(" ", "-")
        out.setdefault(label, model)
        out.setdefault(label.removeprefix("NVIDIA-"), model)
    return out


def gfd_case(value: str) -> str | None:
    """The value GFD writes where `value` (its MIG or -SHARED suffix taken off) differs from one only in
    case, or in how its words are joined (`NVIDIA_H100_80GB_HBM3`, `NVIDIA--H100...`: the importers'
    model_for_product reads those alike, as a Slurm Gres type is written), or None: Kubernetes matches a
    label value character for character, so no node carries the other.
    """
    if value in gfd_products():
        return None
    found = sorted(g for g in gfd_products() if g.casefold() == value.casefold())
    if not found:
        joined = _joined(value)
        found = sorted(g for g in gfd_products() if _joined(g) == joined)
    return found[0] if found else None


def _joined(name: str) -> str:
    # GFD joins NVML's words with one `-` (each space made `-`); `_` and runs of separators are no GFD value's.
    return re.sub(r"[\s_-]+", "-", name.casefold())


AMD_PRODUCT_NAME = "amd.com/gpu.product-name"
AMD_LEGACY_DEVICE = "beta.amd.com/gpu.device-id."
"""AMD's node labeller (ROCm/k8s-device-plugin cmd/k8s-node-labeller/main.go, createLabels): each property
as `beta.amd.com/gpu.<name>.<value>` = how many GPUs of the node have it, and, where all have one value,
`amd.com/gpu.<name>` (and `beta.amd.com/gpu.<name>`) = that value. `product-name` is the card's sysfs
product_name with parentheses dropped and every character a label value cannot hold (a space) made `_`;
`family` is the amdgpu family's acronym (AI for every gfx9 part, Instinct and Vega alike)."""


def amd_product_model(value: str) -> str | None:
    """The catalogue model whose product name (device_ids.yaml, as amd-smi writes it) the labeller would
    write as `value` (`AMD_Instinct_MI300X`), or None. An `_OAM` after it is the module's form factor,
    which sysfs's product_name adds on OAM boards: ROCm/k8s-device-plugin's docs/user-guide/installation.md
    shows an MI300X node labelled `amd.com/gpu.product-name=AMD_Instinct_MI300X_OAM` beside
    `amd.com/gpu.device-id=74a1`. Any other suffix (a VF's) is not guessed.
    """
    amd = {m.name for m in builtin_models() if m.vendor.casefold() == "amd"}
    for name, model in _nvml_names():
        label = re.sub(r"[^A-Za-z0-9._-]", "_", name.replace("(", "").replace(")", ""))
        if model in amd and value in (label, f"{label}_OAM"):
            return model
    return None
