"""What one Kubernetes pod template asks of the hardware (docs/jobs.md, "Kubernetes").

Read: GPU requests (`nvidia.com/gpu`, `amd.com/gpu`, `habana.ai/gaudi`, `nvidia.com/mig-<profile>`, Volcano's
`volcano.sh/vgpu-number`), node selectors
and required node affinity on GPU product labels (verifier/sources/jobs/gpu_words.py), required
`NotIn` on other labels (topolog's `exclude`), and the service account. Everything else the
template says (CPU and memory requests, images, commands, tolerations, preferences) is returned
as notes, never dropped: topolog does not judge it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from verifier.core.errors import Diagnostic, SourceLocation
from verifier.sources.importers.gpu_names import model_for_amd_device, model_for_product
from verifier.sources.inventory.catalog import builtin_models, mig_memory_mb
from verifier.sources.inventory.model import CatalogModel
from verifier.sources.inventory.validate import Problems, name_problem
from verifier.sources.inventory.yaml_source import YList, YMap
from verifier.sources.jobs.dra import claimed_gpus
from verifier.sources.jobs.gpu_words import (
    AMD_LEGACY_DEVICE,
    AMD_PRODUCT_NAME,
    GPU_FAMILY_LABEL,
    GPU_IN_USE,
    GPU_NO_USE,
    amd_product_model,
    common_words,
    gfd_case,
    gke_model,
    gpu_family,
    typed_models,
)

VOLCANO_SHARES = {"volcano.sh/vgpu-number": "volcano.sh/vgpu-memory", "volcano.sh/gpu-number": "volcano.sh/gpu-memory"}
"""Volcano's GPU counts, and the memory limit that alone asks for one GPU. `volcano.sh/vgpu-number`
(its vGPU, from HAMi): N units are N different NVIDIA GPUs of one node, each shared or, with no other
`volcano.sh/` limit, exclusive (volcano-sh/volcano pkg/scheduler/api/devices/nvidia/vgpu/utils.go,
resourcereqs: a vgpu-memory limit alone is one device; checkNodeGPUSharingPredicateAndScore: one
device per unit). `volcano.sh/gpu-number` is the older GPU-number predicate's whole GPUs, and
`volcano.sh/gpu-memory` its share of one GPU. Placed as whole GPUs: never looser than a share."""
GPU_RESOURCES = {
    "nvidia.com/gpu": "nvidia",
    "amd.com/gpu": "amd",
    "habana.ai/gaudi": "intel",
    **{number: "nvidia" for number in VOLCANO_SHARES},
}
"""Devices by vendor. `habana.ai/gaudi` is Intel's Gaudi device plugin (one unit, one Gaudi
accelerator, of whichever generation the node holds): read as whole Gaudi accelerators (GAUDI_FAMILY),
never as any Intel device. Volcano's counts: VOLCANO_SHARES."""
MIG_RESOURCE = re.compile(
    r"^nvidia\.com/mig-(?P<profile>[0-9]+g\.[0-9]+gb)(?P<extension>(?:\.(?:me|gfx)(?:\.all)?|-me)?)$"
)
"""NVIDIA's device plugin under the mixed MIG strategy: `mig-` and the profile's name, where a `+` of the
name is written `.` (a resource name allows no `+`: internal/rm/rm.go, AddDefaultResourcesToConfig,
at NVIDIA/k8s-device-plugin 4caff14). So `nvidia.com/mig-1g.10gb.me` is the `1g.10gb+me` instance (the
slice with the GPU's media engines), a profile of its own with its own count per GPU."""
_SHARED = re.compile(r"^nvidia\.com/(?:gpu|mig-[0-9]+g\.[0-9]+gb(?:[.+-][a-z.]+)?)\.shared$")
"""NVIDIA's device plugin with time-slicing and renameByDefault (GPU Operator, "Time-Slicing GPUs in
Kubernetes"): each unit is one of the replicas a GPU is cut into, a number the spec does not say."""
_PLUS_MIG = re.compile(r"^nvidia\.com/mig-[0-9]+g\.[0-9]+gb\+")
"""A MIG profile written with NVIDIA's `+` (`mig-1g.10gb+me`): no Kubernetes resource name, so no pod
asking for it is ever admitted; refused with the name the device plugin gives it."""
_OTHER_ACCELERATORS = {
    "gpu.intel.com/": "an Intel GPU",
    "habana.ai/": "an Intel Gaudi resource other than habana.ai/gaudi",
}
"""Device plugins of accelerators topolog does not place (Intel's GPU plugin; Habana names other than
the whole-accelerator `habana.ai/gaudi`)."""
PRODUCT_LABELS: dict[str, Callable[[str], str | None]] = {
    "nvidia.com/gpu.product": model_for_product,
    "amd.com/gpu.device-id": model_for_amd_device,
    "cloud.google.com/gke-accelerator": gke_model,
    GPU_FAMILY_LABEL: lambda _value: None,  # several models a value: read by _accept through gpu_family
    AMD_PRODUCT_NAME: amd_product_model,  # only values that map exactly reach _accept (_canonical)
}
"""Node labels that name the GPU model, and how each value maps to a catalogue model."""
AMD_MIXED_DEVICE = "amd.com/gpu.device-id."
AMD_MIXED_PRODUCT = "amd.com/gpu.product-name."
"""AMD's node labeller (ROCm/k8s-device-plugin cmd/k8s-node-labeller/main.go, createLabels) writes a
property's per-value keys without `beta.` (`amd.com/gpu.device-id.74a1: "4"`) only on a node whose GPUs
differ in it; a node whose GPUs agree gets `amd.com/gpu.device-id: 74a1` and no such key."""

LABEL_VENDORS = {
    "nvidia.com/gpu.product": "nvidia",
    "amd.com/gpu.device-id": "amd",
    "cloud.google.com/gke-accelerator": "nvidia",
    GPU_FAMILY_LABEL: "nvidia",
    AMD_PRODUCT_NAME: "amd",
}
"""Whose GPUs each product label is written on: NVIDIA's feature discovery labels only NVIDIA GPU nodes,
AMD's labeller only AMD's, and GKE names NVIDIA accelerators. A pod asking one vendor's devices and
selecting another's label fits no node; its accepts words alone would place it on the label's GPUs."""
_PRODUCT_MIG = re.compile(
    r"-MIG-(?P<profile>[0-9]+g\.[0-9]+gb)(?P<extension>(?:\.(?:me|gfx)(?:\.all)?|-me)?)(?:-SHARED)?$", re.IGNORECASE
)
"""GPU Feature Discovery's product label under the single MIG strategy: the parent GPU's name, `MIG` and
the instance's profile joined by `-`, the profile's `+` written `.` as in the resource name, and
`-SHARED` after it when time-sliced (NVIDIA/k8s-device-plugin: internal/lm/resource.go productLabel,
internal/resource/nvml-mig-device.go GetName). So `NVIDIA-H100-80GB-HBM3-MIG-1g.10gb.me` is the
`1g.10gb+me` slice, one per GPU, and `-MIG-1g.10gb-me` the `1g.10gb-me` one: never whole GPUs."""
_PRODUCT_SUFFIX = re.compile(r"(?:-MIG-.*|-SHARED)$", re.IGNORECASE)
"""What GFD writes after the product's name (a MIG profile, time-slicing): not part of the name."""
_UNJUDGED_LABELS = {
    "nvidia.com/gpu.memory": "GPU Feature Discovery writes the memory NVML reports, in MiB, and topolog's "
    "catalogue holds each GPU's datasheet size, not NVML's figure",
    "nvidia.com/gpu.count": "it is the node's GPU count, and topolog does not choose nodes by how many GPUs they hold",
    "amd.com/gpu.family": "an amdgpu family (AI, NV) holds Instinct and Radeon parts alike, no one catalogue model",
}
"""GPU labels read but not judged, and why (GFD's migStrategyNone writes gpu.count and gpu.memory;
AMD's node labeller the family: gpu_words.AMD_PRODUCT_NAME). Noted, never refused."""
GKE_PARTITION = "cloud.google.com/gke-gpu-partition-size"
"""GKE's node label for MIG: a pod selecting it counts `nvidia.com/gpu` in instances of that profile
(GKE documentation, "Running multi-instance GPUs")."""
GAUDI_RESOURCE = "habana.ai/gaudi"


GAUDI_FAMILY = "Gaudi"
"""What one `habana.ai/gaudi` unit accepts: a Gaudi of any generation. As an accepts word it names the
catalogue's Gaudi models by their name's leading part (`Gaudi2-HL-225H`, `Gaudi3-HL-325L`) and any model
whose catalog entry says it is a Gaudi HPU (`vendor: intel` or `habana`, `kind: hpu`), whatever its name: an
inventory's own `HL-325L` (is_gaudi, read by verifier.session.session.model_families). An Intel model of
kind `gpu` named by a part number alone is not taken for a Gaudi: it could be any Intel GPU."""


def is_gaudi(model: CatalogModel) -> bool:
    """Whether a catalogue model is a Gaudi by what its entry says: kind `hpu` (Habana's processing
    unit, as the built-in catalogue files Gaudi 2 and Gaudi 3) of vendor `intel` or `habana`.
    """
    vendor = model.vendor.casefold()
    # Habana Labs, the maker Intel bought, is how lspci and many sites still name it ("Habana Labs Ltd.").
    return model.kind == "hpu" and (vendor == "intel" or vendor.startswith("habana"))


READ_POD_KEYS = (
    "containers",
    "initContainers",
    "nodeSelector",
    "affinity",
    "serviceAccountName",
    "serviceAccount",
    "resourceClaims",
)
READ_CONTAINER_KEYS = ("name", "resources")


@dataclass
class PodNeeds:
    """One pod's GPU request and GPU constraints, with notes on what is not judged."""

    gpus: int = 0  # whole GPUs, or MIG instances when `mig` is set
    vendor: str | None = None  # nvidia or amd (whole GPUs)
    mig: str | None = None
    accepts: tuple[str, ...] = ()  # catalogue models (or unmatched words) the node selection allows
    families: frozenset[str] = frozenset()
    """The words of `accepts` that stand for a GPU family (gpu_words.GPU_FAMILIES), not one model."""
    exclude: tuple[tuple[str, str], ...] = ()
    service_account: str | None = None
    notes: list[Diagnostic] = field(default_factory=list)


MAX_DEVICES = 1_000_000
"""Devices one container may request: as the pod counts (kubernetes._count), so that pods times
devices stays a number the engines store (a 20-digit request reached the facts unchecked)."""


_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<whole>[0-9]*)(?:\.(?P<fraction>[0-9]*))?"
    r"(?:(?P<binary>[KMGTPE]i)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[mkMGTPE]?))"
)
"""A Kubernetes quantity (k8s.io/apimachinery pkg/api/resource/quantity.go, the grammar in its
comment): a signed decimal number (`8`, `8.`, `.5`, `1.5`), then a binary suffix (Ki Mi Gi Ti Pi Ei:
powers of 1024), a decimal exponent (`e3`, `E-2`) or a decimal suffix (m k M G T P E, or none).
So `1k` is 1000 devices and `2000m` is 2."""
_SIGNED = re.compile(r"[+-]?[0-9]+")
_DECIMAL_SUFFIX = {"m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIX = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}


_YAML11_OCTAL = re.compile(r"[+-]?0[0-7]+")


def _octal_differs(text: str) -> bool:
    """Whether `text` reads as another count to kubectl when written unquoted: its YAML keeps YAML 1.1's
    octals (`010` is 8), while quoted it is the quantity 10. topolog's loader keeps both as the same
    text, so neither reading can be told right; `08` or `0007` read alike either way.
    """
    return _YAML11_OCTAL.fullmatch(text) is not None and int(text, 8) != int(text, 10)


def kubernetes_quantity(text: str) -> Fraction | None:
    """The exact value of a Kubernetes quantity written as `text`, or None when it is not one (or is
    over 64 characters). A value of 10**7 or more reads as 10**7 + 1, and one with a digit below
    10**-80 as 1/3 (never whole): a device count is at most MAX_DEVICES, and no huge power of ten
    is ever built (`1e999999999`).
    """
    found = _QUANTITY.fullmatch(text.strip())
    if found is None or len(text) > 64 or not (found["whole"] or found["fraction"]):
        return None
    if _octal_differs(text.strip()):
        return None
    digits = (found["whole"] + (found["fraction"] or "")).lstrip("0")
    if not digits:
        return Fraction(0)
    power = -len(found["fraction"] or "")  # of ten
    if found["exponent"] is not None:
        power += int(found["exponent"])  # at most 62 digits: the text is at most 64 characters
    elif found["decimal"] is not None:
        power += _DECIMAL_SUFFIX[found["decimal"]]
    scale = 1024 ** _BINARY_SUFFIX[found["binary"]] if found["binary"] else 1
    if len(digits) + power > 7:  # at least 10**7: past any count read, so no need to build it
        value = Fraction(10**7 + 1)
    elif power < -80:  # digits times the scale stay under 10**70: times 10**-80 never whole
        value = Fraction(1, 3)
    else:
        value = Fraction(int(digits) * scale) * Fraction(10) ** power
    return -value if found["sign"] == "-" else value


def _quantity(raw: object, loc: SourceLocation, what: str, p: Problems) -> int | None:
    """An extended resource's quantity: a Kubernetes quantity whose value is a whole number of devices.

    The API server refuses a fraction of an extended resource ("must be an integer": pkg/apis/core/
    validation, ValidateResourceQuantityValue, IsIntegerResourceName), so `1.5` and `500m` are refused;
    `1k`, `2000m` and `0.5k` are whole (1000, 2 and 500) and read.
    """
    if isinstance(raw, bool):
        value = None
    elif isinstance(raw, int):
        value = Fraction(raw)
    elif isinstance(raw, float):  # YAML's `2.0`: sent to the API as the JSON number 2.0, a quantity of 2
        value = Fraction(raw) if math.isfinite(raw) else None
    elif isinstance(raw, str):
        value = kubernetes_quantity(raw)
    else:
        value = None
    if value is not None and value.denominator == 1 and 0 <= value <= MAX_DEVICES:
        return int(value)
    text = raw.strip() if isinstance(raw, str) else ""
    if _octal_differs(text):
        p.add(
            loc,
            f"{what} is {text!r}; a count with a leading zero is octal to kubectl when unquoted (010 is 8) and "
            "decimal when quoted: expected the count without its leading zero, such as 8",
        )
        return None
    shown = str(int(text)) if text.isascii() and text.isdigit() and len(text) <= 64 else repr(raw)
    scaled = isinstance(raw, str) and not _SIGNED.fullmatch(text)
    if scaled and value is not None and value.denominator == 1 and abs(value) <= 10**7:
        shown += f" ({value})"  # the count a suffix or exponent makes: '2M' (2000000)
    if value is not None and value.denominator != 1 and value > 0 and math.ceil(value * 1000) % 1000 == 0:
        # Finer than a thousandth: the API server checks an extended resource at milli precision,
        # rounded up (Quantity.MilliValue), so 1.9999999 passes as 2000m and the pod is given 2
        # devices. Read exactly, it is no whole count: refused with the count Kubernetes would use.
        p.add(
            loc,
            f"{what} is {shown}; expected a whole number of devices from 0 to 1,000,000 (an extended resource is "
            f"counted in whole devices: Kubernetes rounds this one up to {math.ceil(value)}; write that count)",
        )
        return None
    if value is not None and value.denominator != 1:
        p.add(
            loc,
            f"{what} is {shown}; expected a whole number of devices from 0 to 1,000,000 (that is a fraction of "
            "a device, which the API server refuses for an extended resource)",
        )
        return None
    p.add(
        loc,
        f'{what} is {shown}; expected a whole number of devices from 0 to 1,000,000, such as 8 or "8" '
        "(a Kubernetes quantity: 1k is 1000)",
    )
    return None


def _resources(c: YMap, cname: str, needs: PodNeeds, p: Problems, key: str = "resources") -> dict[str, int]:
    """The GPU-like requests of one container (limits, or requests where limits are absent)."""
    res = c.get(key)
    if res is None:
        return {}
    if not isinstance(res, YMap):
        p.add(c.key_loc(key), f"'{key}' of container {cname} must be a mapping")
        return {}
    got: dict[str, int] = {}
    locs: dict[str, SourceLocation] = {}
    other: list[str] = []
    for section in ("limits", "requests"):
        table = res.get(section)
        if table is None:
            continue
        if not isinstance(table, YMap):
            p.add(res.key_loc(section), f"'{section}' of container {cname} must be a mapping of resource: quantity")
            continue
        for key, raw in table.items():
            unread = _unread_accelerator(key)
            if unread is not None:
                # Noted, a pod asking only for these read as "no GPU": a GPU workload let through unjudged.
                p.add(
                    table.key_loc(key),
                    f"{section} {key} of container {cname} is {unread}; topolog places whole GPUs "
                    "(nvidia.com/gpu, amd.com/gpu, habana.ai/gaudi) and MIG instances (nvidia.com/mig-<profile>): "
                    "expected one of those",
                )
                continue
            if key not in GPU_RESOURCES and not MIG_RESOURCE.match(key):
                other.append(f"{section}.{key}: {raw}")
                continue
            n = _quantity(raw, table.key_loc(key), f"{section} {key} of container {cname}", p)
            if n is None:
                continue
            if key in got and got[key] != n:
                # Kubernetes: an extended resource's request, when given, equals its limit.
                p.add(
                    table.key_loc(key),
                    f"container {cname} requests {n} {key} but its limit is {got[key]}; "
                    "Kubernetes requires an extended resource's request to equal its limit",
                )
                continue
            got[key] = n
            locs.setdefault(key, table.key_loc(key))
            if section == "requests" and not (isinstance(res.get("limits"), YMap) and key in res["limits"]):
                # The API server refuses such a pod ("Limit must be set for non overcommitable
                # resources"): it never runs, so it is not read as if it did.
                p.add(
                    table.key_loc(key),
                    f"container {cname} requests {n} {key} without a limit; Kubernetes requires the limit of "
                    f"an extended resource (the request defaults to it): expected limits {key}: {n}",
                )
    limits = res.get("limits")
    for number, memory in VOLCANO_SHARES.items():
        if isinstance(limits, YMap) and memory in limits and number not in got:
            got[number] = 1  # Volcano: a memory limit alone asks for a share of one GPU
            locs[number] = limits.key_loc(memory)
        if got.get(number):
            needs.notes.append(
                Diagnostic(
                    locs[number],
                    f"container {cname}: {got[number]} {number}: Volcano gives each unit its own NVIDIA GPU, "
                    "maybe shared; placed as that many whole GPUs (the share's memory and cores not judged)",
                )
            )
    for section in res:
        if section not in ("limits", "requests", "claims"):  # claims: read at the pod's resourceClaims
            other.append(f"{key}.{section}")
    if other:
        needs.notes.append(Diagnostic(res.loc, f"container {cname}: {', '.join(other)} not judged"))
    return got


def _unread_accelerator(key: str) -> str | None:
    """What an accelerator resource topolog cannot count in GPUs is, or None for any other resource."""
    if _PLUS_MIG.match(key):
        written = "nvidia.com/" + key.removeprefix("nvidia.com/").replace("+", ".", 1)
        return (
            f"no Kubernetes resource name (a '+' is not allowed in one: the API server refuses the pod); "
            f"NVIDIA's device plugin offers this MIG profile as {written}"
        )
    if _SHARED.match(key):
        return (
            "a time-sliced share of an NVIDIA GPU (the device plugin's renamed resource): how many "
            "GPUs it takes depends on the replicas the cluster cuts each GPU into, which the spec does not say"
        )
    if key.startswith("nvidia.com/mig-") and not MIG_RESOURCE.match(key):
        # A MIG slice under a name not read (an extension the device plugin may add, a misspelling):
        # read as "no GPU", the pod went through a GPU gate unjudged (review R-JS).
        return (
            "an NVIDIA MIG resource of a form topolog does not read (the device plugin's names are "
            "nvidia.com/mig-<slices>g.<memory>gb, with NVIDIA's '+' written '.': mig-1g.10gb.me)"
        )
    for prefix, what in _OTHER_ACCELERATORS.items():
        if key.startswith(prefix) and key not in GPU_RESOURCES:
            return f"{what}, a device topolog does not place"
    return None


def _containers(spec: YMap, key: str, needs: PodNeeds, p: Problems) -> list[tuple[dict[str, int], bool]]:
    """Each container's requests, and whether it is a sidecar (an init container with restartPolicy Always)."""
    items = spec.get(key)
    if items is None:
        return []
    if not isinstance(items, YList):
        p.add(spec.key_loc(key), f"'{key}' of the pod template must be a list of containers")
        return []
    out = []
    for i, c in enumerate(items):
        if not isinstance(c, YMap):
            p.add(items.item_loc(i), f"each item of '{key}' must be a container (a mapping)")
            continue
        cname = str(c.get("name") or f"#{i + 1}")
        sidecar = key == "initContainers" and c.get("restartPolicy") == "Always"
        out.append((_resources(c, cname, needs, p), sidecar))
        read = (*READ_CONTAINER_KEYS, "restartPolicy") if key == "initContainers" else READ_CONTAINER_KEYS
        unread = [k for k in c if k not in read]
        if unread:
            needs.notes.append(Diagnostic(c.loc, f"container {cname}: {', '.join(unread)} not judged"))
    return out


def _sum_requests(app: list[tuple[dict[str, int], bool]], init: list[tuple[dict[str, int], bool]]) -> dict[str, int]:
    """A pod's request, as Kubernetes computes it: the app containers' sum plus the sidecars' (init
    containers with restartPolicy Always run beside them to the end), or, when larger, the largest
    init container plus the sidecars started before it (plain init containers run one at a time).
    """
    sidecars: dict[str, int] = {}
    init_peak: dict[str, int] = {}
    for requests, sidecar in init:
        for k, v in requests.items():
            if sidecar:
                sidecars[k] = sidecars.get(k, 0) + v
            else:
                init_peak[k] = max(init_peak.get(k, 0), v + sidecars.get(k, 0))
    total = dict(sidecars)
    for requests, _ in app:
        for k, v in requests.items():
            total[k] = total.get(k, 0) + v
    for k, v in init_peak.items():
        total[k] = max(total.get(k, 0), v)
    return {k: v for k, v in total.items() if v > 0}


def read_pod_spec(spec: YMap, where: str, p: Problems, namespace: str | None = None) -> PodNeeds:
    """The needs of one pod template's `spec`; `namespace`: the one its workload writes (DRA claims)."""
    needs = PodNeeds()
    requests = _sum_requests(_containers(spec, "containers", needs, p), _containers(spec, "initContainers", needs, p))
    if "containers" not in spec:
        p.add(spec.loc, f"the pod spec of {where} has no 'containers'; a pod runs at least one container")
    if "resourceClaims" in spec:
        # A DRA claim's devices are in its ResourceClaimTemplate: read where the file holds it, else refused.
        for key, n in claimed_gpus(spec, where, p, needs.notes, namespace).items():
            requests[key] = requests.get(key, 0) + n
    _gpu_kind(requests, spec.loc, where, needs, p)
    _node_selector(spec, needs, p)
    _affinity(spec, needs, p)
    for key in ("serviceAccountName", "serviceAccount"):  # serviceAccount: the deprecated spelling
        value = spec.get(key)
        if isinstance(value, str) and value.strip():
            needs.service_account = needs.service_account or value.strip()
    tolerations = spec.get("tolerations")
    if isinstance(tolerations, YList) and tolerations:
        keys = sorted({str(t.get("key", "*")) for t in tolerations if isinstance(t, YMap)})
        needs.notes.append(
            Diagnostic(
                spec.key_loc("tolerations"),
                f"tolerations of {', '.join(keys)} not judged: a topolog inventory declares no node taints",
            )
        )
    unread = [k for k in spec if k not in (*READ_POD_KEYS, "tolerations")]
    if unread:
        needs.notes.append(Diagnostic(spec.loc, f"pod spec fields {', '.join(unread)} not judged"))
    return needs


def read_node_choice(
    selector: YMap | None,
    affinity: YMap | None,
    account: YMap | None,
    claims: YMap | None,
    needs: PodNeeds,
    p: Problems,
) -> None:
    """The node selector, required node affinity and service account of pod specs written apart from
    their containers (a TrainJob's podTemplateOverrides, where the last one to write a field holds),
    into `needs`; each argument is the pod spec that writes that field, if any.
    """
    if selector is not None:
        _node_selector(selector, needs, p)
    if affinity is not None:
        _affinity(affinity, needs, p)
    for key in ("serviceAccountName", "serviceAccount"):
        value = account.get(key) if account is not None else None
        if isinstance(value, str) and value.strip():
            needs.service_account = value.strip()
    if claims is not None:
        p.add(
            claims.key_loc("resourceClaims"),
            "the pod spec claims devices through DRA (resourceClaims): how many GPUs a claim allocates is in "
            "its ResourceClaim(Template), not judged; expected limits nvidia.com/gpu: N",
        )


def read_resources(holder: YMap, key: str, where: str, p: Problems) -> PodNeeds:
    """The GPU request of a ResourceRequirements written outside a pod (a TrainJob's resourcesPerNode)."""
    needs = PodNeeds()
    requests = _sum_requests([(_resources(holder, where, needs, p, key), False)], [])
    _gpu_kind(requests, holder.key_loc(key), where, needs, p)
    return needs


def _gpu_kind(requests: dict[str, int], loc: SourceLocation, where: str, needs: PodNeeds, p: Problems) -> None:
    """Whole GPUs of one vendor, or instances of one MIG profile, into `needs`."""
    whole = {k: v for k, v in requests.items() if k in GPU_RESOURCES}
    migs = {k: v for k, v in requests.items() if MIG_RESOURCE.match(k)}
    if len(whole) + len(migs) > 1:
        p.add(
            loc,
            f"{where} requests {', '.join(sorted(requests))} in one pod; topolog places one kind of GPU "
            "per job (whole GPUs of one vendor, or instances of one MIG profile)",
        )
    elif whole:
        ((key, n),) = whole.items()
        needs.gpus, needs.vendor = n, GPU_RESOURCES[key]
        if key == GAUDI_RESOURCE:
            needs.accepts = (GAUDI_FAMILY,)
    elif migs:
        ((key, n),) = migs.items()
        m = MIG_RESOURCE.match(key)
        assert m is not None
        profile = _profile_name(m.group("profile"), m.group("extension"))
        if mig_memory_mb(profile) is None:
            p.add(loc, f"{where} requests {key}, but {profile!r} is no MIG profile topolog knows")
        needs.gpus, needs.mig = n, profile


def _profile_name(profile: str, extension: str) -> str:
    """NVIDIA's name of a MIG profile the device plugin wrote with `.` for its `+` (`1g.10gb` and `.me`:
    `1g.10gb+me`; `.me.all`: `1g.10gb+me.all`); a `-me` extension is written as NVIDIA writes it.
    """
    return profile + (extension.replace(".", "+", 1) if extension.startswith(".") else extension)


def _accept(needs: PodNeeds, key: str, values: list[str], loc: SourceLocation, p: Problems) -> None:
    """Node selection on a GPU product label: the models it allows (all of them, OR)."""
    if key == "nvidia.com/gpu.product":
        # Under the single MIG strategy a node's nvidia.com/gpu are MIG instances, and GPU Feature
        # Discovery writes their profile after the product ("A100-SXM4-40GB-MIG-1g.5gb").
        found = [_PRODUCT_MIG.search(v) for v in values]
        unread = [v for v, m in zip(values, found, strict=True) if m is None and "-MIG-" in v.upper()]
        if unread:
            # A MIG slice read as the whole GPU it is cut from would count each slice as a GPU.
            p.add(
                loc,
                f"{key}={unread[0]} names a MIG instance in a form topolog does not read; expected GPU Feature "
                "Discovery's <product>-MIG-<profile>, such as NVIDIA-H100-80GB-HBM3-MIG-1g.10gb or -MIG-1g.10gb.me",
            )
            return
        profiles = {_profile_name(m["profile"].lower(), m["extension"].lower()) if m else None for m in found}
        if len(profiles) > 1:
            p.add(loc, f"{key} selects {', '.join(values)}: whole GPUs and MIG profiles, or several profiles, at once")
            return
        (profile,) = profiles or {None}
        if profile is not None:
            _partition(needs, profile, loc, p)
        if any(v.upper().endswith("-SHARED") for v in values):
            unit = "GPU" if profile is None else "MIG instance"
            needs.notes.append(
                Diagnostic(
                    loc, f"{key}: a time-sliced {unit} (-SHARED) is shared by several pods; placed as a whole {unit}"
                )
            )
    asked = needs.vendor or ("nvidia" if needs.mig else None)  # a MIG instance is NVIDIA's
    labelled = LABEL_VENDORS.get(key)
    if asked is not None and labelled is not None and asked != labelled:
        p.add(
            loc,
            f"{key} selects {labelled} GPU nodes, but the pod asks for {asked} devices: no node can satisfy both",
        )
        return
    mapper = PRODUCT_LABELS[key]
    words: list[str] = []
    families: set[str] = set()
    for v in values:
        model = mapper(v)
        family = gpu_family(v) if key == GPU_FAMILY_LABEL else None
        cased = gfd_case(_PRODUCT_SUFFIX.sub("", v)) if key == "nvidia.com/gpu.product" and model else None
        if cased is not None:
            # The product names a catalogue GPU but in another case than GFD writes it: a label value is
            # matched case for case, so no node carries it (the pod stays pending): it fits nowhere here.
            shown = cased + v[len(_PRODUCT_SUFFIX.sub("", v)) :]
            how = "case for case" if shown.casefold() == v.casefold() else "character for character"
            needs.notes.append(
                Diagnostic(
                    loc,
                    f"{key}={v} is written {shown} by GPU Feature Discovery, and a label value is matched "
                    f"{how}: no node carries this one",
                )
            )
            words.append(v)
        elif key == "amd.com/gpu.device-id" and model and v != v.lower().removeprefix("0x"):
            # The labeller writes the id as sysfs gives it, lower-case hex with its `0x` taken off
            # (createLabels' device-id generator): `0x74a1` as rocm-smi and amd-smi print it, or
            # `74A1`, is carried by no node, as a label value is matched character for character.
            needs.notes.append(
                Diagnostic(
                    loc,
                    f"{key}={v} is written {v.lower().removeprefix('0x')} by AMD's node labeller, and a label "
                    "value is matched character for character: no node carries this one",
                )
            )
            words.append(v)
        elif family is not None:
            words.extend(family)
            families.update(family)
        elif model is None and v.startswith((AMD_MIXED_DEVICE, AMD_MIXED_PRODUCT)):
            words.append(v)  # a per-value key only a node of mixed GPUs carries: _canonical noted it
        elif model is None:
            written = gpu_family(v.lower()) if key == GPU_FAMILY_LABEL else None
            needs.notes.append(
                Diagnostic(
                    loc,
                    f"{key}={v} is written {v.lower()} by GPU Feature Discovery, and a label value is matched "
                    "case for case: no node carries this one"
                    if written is not None
                    else f"{key}={v} names no GPU model of topolog's catalogue: no GPU of the inventory matches it",
                )
            )
            words.append(v)
        else:
            words.append(model)
    allowed = tuple(dict.fromkeys(words))
    # Two selections on products (a nodeSelector and an affinity term) must both hold: keep their common
    # models, a family meeting a model of it in that model (hopper and NVIDIA-H100-80GB-HBM3: the H100).
    _narrow(
        needs,
        allowed,
        frozenset(families),
        loc,
        p,
        f"{key} allows {', '.join(allowed)}, but another node selection allows only "
        f"{', '.join(needs.accepts)}: no node can satisfy both",
    )


def read_gpu_types(needs: PodNeeds, annotations: YMap, p: Problems) -> None:
    """HAMi's and Volcano's GPU type annotations on the pod (gpu_words.GPU_IN_USE, GPU_NO_USE) into
    `needs.accepts`: a pod whose `nvidia.com/use-gputype` is "A100,V100" gets no H100 from either
    scheduler, so it must not be placed on one. Read for NVIDIA devices (whole or MIG), where the
    schedulers apply them; elsewhere noted as not judged.
    """
    use, nouse = (annotations.get(k) for k in (GPU_IN_USE, GPU_NO_USE))
    key = GPU_IN_USE if use is not None else GPU_NO_USE
    loc = annotations.key_loc(key)
    if not (needs.vendor == "nvidia" or needs.mig):
        needs.notes.append(Diagnostic(loc, f"{key} not judged: the pod asks for no NVIDIA GPU"))
        return
    allowed = typed_models(str(use) if use is not None else None, str(nouse) if nouse is not None else None)
    if not allowed:
        needs.notes.append(Diagnostic(loc, f"{key}: {annotations[key]} passes no NVIDIA GPU of topolog's catalogue"))
        allowed = (f"{key}={annotations[key]}",)  # a word no model has: the pod fits nowhere
    needs.notes.append(
        Diagnostic(
            loc, f"{key}: {annotations[key]}: the GPU types HAMi and Volcano's vGPU give it ({', '.join(allowed)})"
        )
    )
    _narrow(
        needs,
        allowed,
        frozenset(),
        loc,
        p,
        f"{key}: {annotations[key]} allows {', '.join(allowed)}, but the node selection allows only "
        f"{', '.join(needs.accepts)}: no node can satisfy both",
    )


def _narrow(
    needs: PodNeeds, allowed: tuple[str, ...], families: frozenset[str], loc: SourceLocation, p: Problems, clash: str
) -> None:
    """Keep only the GPU words `allowed` shares with what the pod's other selections accept (all of them where
    none selected yet); `clash` is the pod's problem when they share none: every selection must hold at once.
    """
    common, common_families = (
        common_words(needs.accepts, needs.families, allowed, families) if needs.accepts else (allowed, families)
    )
    if not common:
        p.add(loc, clash)
        return
    needs.accepts, needs.families = common, common_families


def _written(key: str, value: str) -> str | None:
    """How the labeller writes `value`, a spelling of a known model's label value that no node carries
    (GFD's case and joining of an NVML name, AMD's lower-case device id without `0x`), or None.
    """
    if key == "nvidia.com/gpu.product":
        bare = _PRODUCT_SUFFIX.sub("", value)
        cased = gfd_case(bare)
        return None if cased is None else cased + value[len(bare) :]
    if key == "amd.com/gpu.device-id" and value != value.lower().removeprefix("0x"):
        return value.lower().removeprefix("0x")
    return None


def _accept_but(needs: PodNeeds, key: str, values: list[str], loc: SourceLocation, p: Problems) -> None:
    """A required `NotIn` on a GPU product label: the catalogue's GPUs of the label's vendor but those.

    A node without the label passes NotIn too: a pod asking another vendor's devices is not held by
    it (noted). A model an inventory brings under its own name carries no label value topolog knows,
    so it is not taken (stricter than the scheduler, never looser, as `In` reads such a model).
    """
    labelled = LABEL_VENDORS.get(key)
    asked = needs.vendor or ("nvidia" if needs.mig else None)
    if labelled is None or asked != labelled:
        needs.notes.append(Diagnostic(loc, f"node affinity {key} NotIn {', '.join(values)} not judged"))
        return
    out: list[str] = []
    families: set[str] = set()
    for v in values:
        family = gpu_family(v) if key == GPU_FAMILY_LABEL else None
        model = PRODUCT_LABELS[key](v)
        written = _written(key, v) if model is not None else None
        if written is not None:
            # As for `In` (_accept): no node carries the value as spelled, so NotIn keeps no node off.
            needs.notes.append(
                Diagnostic(
                    loc,
                    f"{key} NotIn {v}: the value is written {written} on the nodes, and a label value is "
                    "matched character for character: it keeps no node off",
                )
            )
            continue
        out.extend(family or ((model,) if model is not None else ()))
        families.update(family or ())
    allowed = tuple(
        m.name
        for m in builtin_models()
        if m.kind == "gpu"
        and m.vendor.casefold() == labelled
        and not any(m.name == w or (w in families and m.name.startswith(w)) for w in out)
    )
    needs.notes.append(
        Diagnostic(
            loc,
            f"{key} NotIn {', '.join(values)}: the catalogue's other {labelled} GPUs ({', '.join(allowed) or 'none'}); "
            "a model the inventory names itself is not taken",
        )
    )
    _narrow(
        needs,
        allowed,
        frozenset(),
        loc,
        p,
        f"{key} NotIn {', '.join(values)} leaves {', '.join(allowed)}, but the node selection allows only "
        f"{', '.join(needs.accepts)}: no node can satisfy both"
        if allowed
        else f"{key} NotIn {', '.join(values)} leaves no {labelled} GPU of topolog's catalogue",
    )


def _node_selector(spec: YMap, needs: PodNeeds, p: Problems) -> None:
    sel = p.mapping(spec, "nodeSelector", "the pod spec")
    if sel is None:
        return
    for key, value in sel.items():
        loc = sel.key_loc(key)
        judged = _canonical(key, "In", [str(value)], loc, needs)
        if judged is None:
            continue
        if judged[0] in PRODUCT_LABELS:
            _accept(needs, judged[0], judged[2], loc, p)
        elif key == GKE_PARTITION:
            _partition(needs, str(value).strip(), loc, p)
        else:
            needs.notes.append(Diagnostic(loc, f"node selector {key}={value} not judged"))


def _partition(needs: PodNeeds, profile: str, loc: SourceLocation, p: Problems) -> None:
    """MIG nodes of one profile (GKE's partition size, GPU Feature Discovery's single strategy): whole
    `nvidia.com/gpu` counts on them are MIG instances of it.
    """
    if needs.mig is not None:
        if needs.mig != profile:
            p.add(loc, f"the pod selects MIG profile {profile} but asks for {needs.mig} instances")
        return
    if needs.vendor != "nvidia":
        if needs.mig is None and needs.gpus == 0:
            return  # no GPU asked: the pod is not placed, and says so elsewhere
        p.add(loc, f"{GKE_PARTITION}={profile} selects MIG instances, but the pod asks for no nvidia.com/gpu")
        return
    if mig_memory_mb(profile) is None:
        p.add(loc, f"{GKE_PARTITION}={profile} is no MIG profile topolog knows; expected one such as 1g.10gb")
        return
    needs.vendor, needs.mig = None, profile


def _affinity(spec: YMap, needs: PodNeeds, p: Problems) -> None:
    aff = p.mapping(spec, "affinity", "the pod spec")
    if aff is None:
        return
    for key in aff:
        if key != "nodeAffinity":
            needs.notes.append(Diagnostic(aff.key_loc(key), f"{key} not judged (topolog places whole jobs, not pods)"))
    node = p.mapping(aff, "nodeAffinity", "the affinity")
    if node is None:
        return
    for key in node:
        if key != "requiredDuringSchedulingIgnoredDuringExecution":
            needs.notes.append(Diagnostic(node.key_loc(key), f"nodeAffinity {key} not judged (a preference)"))
    req = node.get("requiredDuringSchedulingIgnoredDuringExecution")
    if req is None:
        return
    terms = req.get("nodeSelectorTerms") if isinstance(req, YMap) else None
    if not isinstance(terms, YList) or not terms:
        p.add(node.loc, "required node affinity needs a non-empty 'nodeSelectorTerms' list")
        return
    if len(terms) > 1:
        _any_of_terms(terms, needs, p)
        return
    term = terms[0]
    if not isinstance(term, YMap):
        p.add(terms.item_loc(0), "a node selector term must be a mapping with 'matchExpressions'")
        return
    for key in term:
        if key != "matchExpressions":
            needs.notes.append(Diagnostic(term.key_loc(key), f"node selector term {key} not judged"))
    exprs = term.get("matchExpressions")
    if exprs is None:
        return
    if not isinstance(exprs, YList):
        p.add(term.key_loc("matchExpressions"), "'matchExpressions' must be a list")
        return
    for i, e in enumerate(exprs):
        read = _expression(e, exprs.item_loc(i), p)
        if read is None:
            continue
        key, op, values, loc = read
        judged = _canonical(key, op, values, loc, needs)
        if judged is None:
            continue
        key, op, values = judged
        if key in PRODUCT_LABELS and op == "In":
            _accept(needs, key, values, loc, p)
        elif key in PRODUCT_LABELS and op == "NotIn":
            _accept_but(needs, key, values, loc, p)
        elif key not in PRODUCT_LABELS and op == "NotIn" and name_problem(key) is None:
            needs.exclude = tuple(dict.fromkeys((*needs.exclude, *((key, v) for v in values))))
        else:
            shown = f" {', '.join(values)}" if values else ""  # Exists and DoesNotExist have none
            needs.notes.append(Diagnostic(loc, f"node affinity {key} {op}{shown} not judged"))


def _any_of_terms(terms: YList, needs: PodNeeds, p: Problems) -> None:
    """Several terms are ORed: a model fits if any term accepts it. Each term's `In` and `NotIn`
    expressions on GPU product labels are judged (ANDed within the term, as Kubernetes does); its other
    expressions (a zone, a Karpenter capacity type, an instance type...) are noted and left out, which
    only widens that term: the nodes a term selects are among those its GPU part selects, so the union
    of the GPU parts holds every node any term selects. A term with no GPU part allows any GPU: then
    the terms are noted and the pod's GPUs are not narrowed by them.
    """
    keys: set[str] = set()
    values: list[str] = []
    per_term: list[list[tuple[str, str, list[str], SourceLocation]]] = []
    left_out: list[Diagnostic] = []
    for i, term in enumerate(terms):
        # Refused as the one-term reading refuses them (the API server refuses such a pod).
        if not isinstance(term, YMap):
            p.add(terms.item_loc(i), "a node selector term must be a mapping with 'matchExpressions'")
            return
        exprs = term.get("matchExpressions")
        if exprs is not None and not isinstance(exprs, YList):
            p.add(term.key_loc("matchExpressions"), "'matchExpressions' must be a list")
            return
        if not exprs and not term.get("matchFields"):
            # Kubernetes: an empty node selector term matches no node, so in an OR it adds nothing.
            needs.notes.append(Diagnostic(terms.item_loc(i), f"term {i + 1} is empty: it matches no node"))
            continue
        reads = [_expression(e, exprs.item_loc(j), p) for j, e in enumerate(exprs)] if isinstance(exprs, YList) else []
        if any(r is None for r in reads):
            return  # refused at the expression's line
        canonical = [(_canonical(*r[:3], r[3], needs), r) for r in reads if r is not None]
        judged = [
            (*c, r[3]) for c, r in canonical if c is not None and c[0] in PRODUCT_LABELS and c[1] in ("In", "NotIn")
        ]
        if not judged:
            needs.notes.append(
                Diagnostic(terms.item_loc(i), "node affinity with several terms (any of them) not judged")
            )
            return
        for c, (key, op, vals, loc) in canonical:
            if c is None or (c[0] in PRODUCT_LABELS and c[1] in ("In", "NotIn")):
                continue  # judged, or noted by _canonical
            shown = f" {', '.join(vals)}" if vals else ""
            left_out.append(
                Diagnostic(loc, f"node affinity {key} {op}{shown} not judged (term {i + 1}'s GPU labels judged alone)")
            )
        if isinstance(term, YMap):
            alone = f"term {i + 1}'s GPU labels judged alone"
            left_out.extend(
                Diagnostic(term.key_loc(k), f"node selector term {k} not judged ({alone})")
                for k in term
                if k != "matchExpressions"
            )
        per_term.append(judged)
        keys.update(r[0] for r in judged)
        values.extend(v for r in judged for v in r[2])
    needs.notes.extend(left_out)
    if not per_term:
        p.add(terms.loc, "every term of the required node affinity is empty: it matches no node")
        return
    if len(keys) == 1 and all(len(t) == 1 and t[0][1] == "In" for t in per_term):
        _accept(needs, keys.pop(), values, terms.loc, p)
        return
    _union_of_terms(terms, per_term, needs, p)


def _union_of_terms(
    terms: YList, per_term: list[list[tuple[str, str, list[str], SourceLocation]]], needs: PodNeeds, p: Problems
) -> None:
    """Terms on different GPU labels (a family term OR a product term): each read alone as a selection
    of the pod's GPUs, and the pod accepts what any of them accepts. A term no node can satisfy (another
    vendor's label, a product outside its family) adds nothing, with a note; none satisfiable is refused.
    """
    words: list[str] = []
    families: set[str] = set()
    shapes: set[tuple[str | None, str | None]] = set()
    dead: list[str] = []
    for i, judged in enumerate(per_term):
        one = PodNeeds(gpus=needs.gpus, vendor=needs.vendor, mig=needs.mig)
        alone = Problems()
        for key, op, values, loc in judged:
            (_accept if op == "In" else _accept_but)(one, key, values, loc, alone)
        if alone.items:
            dead.append(f"term {i + 1}: {alone.items[0].message}")
            needs.notes.append(Diagnostic(terms.item_loc(i), f"this term fits no node: {alone.items[0].message}"))
            continue
        if not one.accepts:
            # A term that narrows nothing (NotIn on a label no node of the pod's GPUs carries): any GPU.
            needs.notes.extend(one.notes)
            needs.notes.append(Diagnostic(terms.loc, "node affinity terms: one allows any GPU, so none narrows it"))
            return
        shapes.add((one.vendor, one.mig))
        needs.notes.extend(one.notes)
        words.extend(one.accepts)
        families.update(one.families)
    if not words:
        p.add(terms.loc, f"no term of the required node affinity can be satisfied ({'; '.join(dead)})")
        return
    if len(shapes) != 1:
        # MIG instances in one term, whole GPUs in another: a count of one is not a count of the other.
        needs.notes.append(Diagnostic(terms.loc, "node affinity terms of whole GPUs and MIG instances not judged"))
        return
    ((needs.vendor, needs.mig),) = shapes
    allowed = tuple(dict.fromkeys(words))
    mine = frozenset(w for w in allowed if w in families)
    _narrow(
        needs,
        allowed,
        mine,
        terms.loc,
        p,
        f"the node affinity terms allow {', '.join(allowed)}, but another node selection allows only "
        f"{', '.join(needs.accepts)}: no node can satisfy both",
    )


def _canonical(
    key: str, op: str, values: list[str], loc: SourceLocation, needs: PodNeeds
) -> tuple[str, str, list[str]] | None:
    """A GPU label as the readers judge it: AMD's other spellings of its device id and product name on
    the keys read (gpu_words.AMD_PRODUCT_NAME), or None, noted, for a label that is not judged.
    """
    written = key
    for name in ("device-id", "product-name", "family"):
        if key == f"beta.amd.com/gpu.{name}":
            key = f"amd.com/gpu.{name}"  # the same value, written under both prefixes
    # Legacy keys carry the value in the key and count the node's GPUs of it: `In` or `Exists` on one
    # selects nodes with such GPUs (NotIn and DoesNotExist stay plain labels: a node without them passes).
    # The labeller writes the same count under `amd.com/gpu.<name>.<value>` only on a node whose GPUs
    # differ in that property (createLabels: where they all agree it writes `amd.com/gpu.<name>: <value>`
    # instead, and no per-value key), so such a key selects no node whose GPUs are all one model.
    legacy = {
        AMD_LEGACY_DEVICE: "amd.com/gpu.device-id",
        "beta.amd.com/gpu.product-name.": AMD_PRODUCT_NAME,
        AMD_MIXED_DEVICE: "amd.com/gpu.device-id",
        AMD_MIXED_PRODUCT: AMD_PRODUCT_NAME,
    }
    for prefix, read_as in legacy.items():
        named = key.removeprefix(prefix)
        if op in ("In", "Exists") and key.startswith(prefix) and PRODUCT_LABELS[read_as](named) is not None:
            if values:
                needs.notes.append(
                    Diagnostic(loc, f"{key}: how many such GPUs a node holds ({', '.join(values)}) not judged")
                )
            if prefix in (AMD_MIXED_DEVICE, AMD_MIXED_PRODUCT):
                needs.notes.append(
                    Diagnostic(
                        loc,
                        f"{key} is written by AMD's node labeller only on a node whose GPUs differ in it; on a "
                        f"node of one such GPU it writes {read_as}={named}: no node whose GPUs are all one "
                        "model carries it",
                    )
                )
                return read_as, "In", [key]  # a word no model has: only a node of mixed GPUs would carry it
            return read_as, "In", [named]
    family = key.startswith("beta.amd.com/gpu.family.")
    if key in _UNJUDGED_LABELS or family:
        if op == "NotIn":
            # Not judged against the catalogue, but a node whose label holds the value is one Kubernetes
            # keeps the pod off: a plain label, under the key as written, excludes the nodes so labelled.
            return written, op, values
        why = _UNJUDGED_LABELS["amd.com/gpu.family" if family else key]
        shown = f" {', '.join(values)}" if values else ""
        needs.notes.append(Diagnostic(loc, f"node selection {key} {op}{shown} not judged: {why}"))
        return None
    if key == AMD_PRODUCT_NAME and (op not in ("In", "NotIn") or any(amd_product_model(v) is None for v in values)):
        shown = f" {', '.join(values)}" if values else ""
        needs.notes.append(
            Diagnostic(
                loc,
                f"node selection {key} {op}{shown} not judged: no catalogue GPU's product name is "
                "written so by AMD's node labeller",
            )
        )
        return None
    return key, op, values


def _expression(e: object, loc: SourceLocation, p: Problems) -> tuple[str, str, list[str], SourceLocation] | None:
    if not isinstance(e, YMap) or not isinstance(e.get("key"), str) or not isinstance(e.get("operator"), str):
        p.add(loc, "a match expression needs 'key' and 'operator' (In, NotIn, Exists, DoesNotExist, Gt, Lt)")
        return None
    values = e.get("values")
    if values is not None and not isinstance(values, YList):
        p.add(e.key_loc("values"), "'values' of a match expression must be a list")
        return None
    # Exists and DoesNotExist take no values: Kubernetes requires the list left out for them.
    read = [str(v) for v in values] if values is not None else []
    op = str(e["operator"])
    if op in ("In", "NotIn", "Gt", "Lt") and not read:
        # The API server refuses such a pod (values must be given for these operators).
        p.add(loc, f"a match expression with operator {op} needs a non-empty 'values' list")
        return None
    return str(e["key"]), op, read, loc
