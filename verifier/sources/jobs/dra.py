"""GPUs a pod claims through Dynamic Resource Allocation (DRA): its `resourceClaims` (docs/jobs.md).

A pod's `resourceClaims` entry names a ResourceClaimTemplate (one claim made for each pod) or a
ResourceClaim (one claim that pods share). How many devices a claim allocates is written in the
template, not in the pod; so a claim is read only when its ResourceClaimTemplate is one of the
documents of the same file (as NVIDIA's DRA driver's demo specs ship them, beside the pod). Read,
of each request of the template (`resource.k8s.io` v1beta1 writes the fields on the request itself,
v1beta2 and v1 under `exactly`):

- `deviceClassName: gpu.nvidia.com` (NVIDIA's DRA driver's class of whole GPUs), `allocationMode:
  ExactCount` (the default) and `count` (default 1): that many whole NVIDIA GPUs for the pod.

Everything else that decides how many GPUs, or which, is refused at its line, never read as
"no GPU": a template that is not in the file, a shared ResourceClaim, another device class (MIG
slices, an unknown driver), `allocationMode: All` (every matching device of the node), CEL
`selectors` and `firstAvailable` alternatives (which GPUs: a model, a memory size), `adminAccess`.
Constraints, opaque driver config and tolerations of a request are noted, not judged.

(A DeviceClass in the file that names a GPU resource as its `extendedResourceName`, so that a
pod's `nvidia.com/gpu: 1` asks a device of that class, is refused by verifier/sources/jobs/read.py
as an object that names GPUs and is no workload.)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from verifier.core.errors import Diagnostic, SourceLocation
from verifier.sources.inventory.validate import Problems
from verifier.sources.inventory.yaml_source import YList, YMap

GPU_CLASSES = {"gpu.nvidia.com": "nvidia.com/gpu"}
"""Device classes of whole GPUs, and the device plugin resource their devices count as."""
MAX_DEVICES = 1_000_000
_TEMPLATES: ContextVar[dict[str, list[YMap]] | None] = ContextVar("dra_claim_templates", default=None)
"""The ResourceClaimTemplates of the file being read, by name (several: one per namespace)."""


def _is_dra(doc: YMap, kind: str) -> bool:
    api = doc.get("apiVersion")
    return doc.get("kind") == kind and isinstance(api, str) and api.startswith("resource.k8s.io/")


def _docs(docs: Iterable[YMap]) -> Iterator[YMap]:
    """The documents and the items of `kind: List` documents."""
    for doc in docs:
        items = doc.get("items") if doc.get("kind") == "List" else None
        if isinstance(items, YList):
            yield from (item for item in items if isinstance(item, YMap))
        else:
            yield doc


@contextmanager
def claim_templates(docs: Iterable[YMap]) -> Iterator[None]:
    """Within: the ResourceClaimTemplates of `docs` are what pods' claims are read against."""
    found: dict[str, list[YMap]] = {}
    for doc in _docs(docs):
        if _is_dra(doc, "ResourceClaimTemplate"):
            meta = doc.get("metadata")
            name = meta.get("name") if isinstance(meta, YMap) else None
            if isinstance(name, str):
                found.setdefault(name, []).append(doc)
        elif (channel := _channel_template(doc)) is not None:
            found.setdefault(channel, []).append(doc)  # made by the ComputeDomain's controller
    token = _TEMPLATES.set(found)
    try:
        yield
    finally:
        _TEMPLATES.reset(token)


def _channel_template(doc: YMap) -> str | None:
    """The ResourceClaimTemplate a ComputeDomain of NVIDIA's DRA driver has its controller make
    (`spec.channel.resourceClaimTemplate.name`), in the ComputeDomain's namespace: a claim of it
    allocates an IMEX channel (the multi-node NVLink domain of GB200-class racks), no GPU.
    """
    api = doc.get("apiVersion")
    if doc.get("kind") != "ComputeDomain" or not (isinstance(api, str) and api.startswith("resource.nvidia.com/")):
        return None
    spec = doc.get("spec")
    channel = spec.get("channel") if isinstance(spec, YMap) else None
    template = channel.get("resourceClaimTemplate") if isinstance(channel, YMap) else None
    name = template.get("name") if isinstance(template, YMap) else None
    return name if isinstance(name, str) and name else None


def _namespace(doc: YMap) -> str | None:
    """The namespace an object writes (None: not written, the one it is applied to)."""
    meta = doc.get("metadata")
    ns = meta.get("namespace") if isinstance(meta, YMap) else None
    return ns if isinstance(ns, str) else None


def claimed_gpus(
    spec: YMap, where: str, p: Problems, notes: list[Diagnostic], namespace: str | None = None
) -> dict[str, int]:
    """The GPUs the pod spec's `resourceClaims` allocate, as device plugin resources
    ({"nvidia.com/gpu": 2}); what cannot be read is refused in `p`. `namespace` is the one the
    pod's workload writes: a claim is made from the template of that name in the pod's own
    namespace, so a template of the file written for another namespace is not the pod's.
    """
    claims = spec.get("resourceClaims")
    if not isinstance(claims, YList):
        p.add(spec.key_loc("resourceClaims"), f"'resourceClaims' of {where} must be a list of claims")
        return {}
    templates = _TEMPLATES.get() or {}
    out: dict[str, int] = {}
    for i, claim in enumerate(claims):
        loc = claims.item_loc(i)
        if not isinstance(claim, YMap):
            p.add(loc, f"each item of 'resourceClaims' of {where} must be a mapping (name, resourceClaimTemplateName)")
            continue
        if "resourceClaimName" in claim:
            p.add(
                claim.key_loc("resourceClaimName"),
                f"{where} uses the ResourceClaim {claim['resourceClaimName']} (DRA), a claim pods share: how many "
                "of its GPUs each pod takes is not judged; expected a resourceClaimTemplateName (a claim of its "
                "own for each pod) with the template in the same file, or limits nvidia.com/gpu: N",
            )
            continue
        name = claim.get("resourceClaimTemplateName")
        if not isinstance(name, str):
            # Older Kubernetes releases wrote the names under `source:` (with a template of another shape).
            old = " (the `source:` form of older Kubernetes releases is not read)" if "source" in claim else ""
            p.add(
                loc,
                f"{where} claims devices through DRA (resourceClaims): claim {claim.get('name')} names no "
                f"resourceClaimTemplateName{old}, so how many GPUs it allocates is not judged; expected "
                "resourceClaimTemplateName with the template in the same file, or limits nvidia.com/gpu: N",
            )
            continue
        named = templates.get(name, [])
        found = [t for t in named if _namespace(t) == namespace]
        if not found or len(found) > 1:
            if found:
                why = "is defined more than once in the file"
            elif named:
                # Kubernetes makes the claim from the template in the pod's namespace: one written
                # for another namespace says nothing of it (count 1 there, 8 here).
                others = ", ".join(sorted(str(_namespace(t) or "(none written)") for t in named))
                why = (
                    f"is in the file only for namespace {others}, not the pod's namespace "
                    f"{namespace or '(none written)'}"
                )
            else:
                why = "is not among the documents of the file"
            p.add(
                claim.key_loc("resourceClaimTemplateName") if "resourceClaimTemplateName" in claim else loc,
                f"{where} claims devices through DRA (resourceClaims): its ResourceClaimTemplate {name} {why}, so "
                "how many GPUs the claim allocates is not judged; expected the template in the same file, or "
                "limits nvidia.com/gpu: N",
            )
            continue
        if found[0].get("kind") == "ComputeDomain":
            # NVIDIA's GB200 specs: GPUs in limits nvidia.com/gpu, the IMEX channel through this claim.
            meta = found[0].get("metadata")
            domain = meta.get("name") if isinstance(meta, YMap) else None
            notes.append(
                Diagnostic(
                    claim.key_loc("resourceClaimTemplateName"),
                    f"claim {claim.get('name')}: an IMEX channel of ComputeDomain {domain} (multi-node NVLink), "
                    "no GPU; the domain is not judged",
                )
            )
            continue
        for resource, n in _template_gpus(found[0], p, notes).items():
            out[resource] = out.get(resource, 0) + n
    return out


def _template_gpus(doc: YMap, p: Problems, notes: list[Diagnostic]) -> dict[str, int]:
    """The GPUs of one claim made from the template `doc`."""
    outer = doc.get("spec")
    inner = outer.get("spec") if isinstance(outer, YMap) else None
    devices = inner.get("devices") if isinstance(inner, YMap) else None
    requests = devices.get("requests") if isinstance(devices, YMap) else None
    if not isinstance(devices, YMap) or not isinstance(requests, YList):
        p.add(doc.loc, "a ResourceClaimTemplate needs spec.spec.devices.requests, a list of device requests")
        return {}
    for key in devices:
        if key != "requests":  # constraints (matchAttribute), config (the driver's opaque settings)
            notes.append(Diagnostic(devices.key_loc(key), f"ResourceClaimTemplate devices.{key} not judged"))
    out: dict[str, int] = {}
    for i, request in enumerate(requests):
        if not isinstance(request, YMap):
            p.add(requests.item_loc(i), "each device request must be a mapping (name, deviceClassName, count)")
            continue
        read = _request(request, requests.item_loc(i), p, notes)
        if read is not None:
            out[read[0]] = out.get(read[0], 0) + read[1]
    return out


def _request(request: YMap, loc: SourceLocation, p: Problems, notes: list[Diagnostic]) -> tuple[str, int] | None:
    """(resource, count) of one device request; None (refused) when it cannot be read exactly."""
    if "firstAvailable" in request:
        p.add(
            request.key_loc("firstAvailable"),
            "device request with firstAvailable (alternatives, the first that can be allocated): which GPUs and how "
            "many is not judged; expected one deviceClassName and count",
        )
        return None
    exact = request.get("exactly", request)  # v1beta2 and v1 write the request under `exactly`
    if not isinstance(exact, YMap):
        p.add(request.key_loc("exactly"), "'exactly' of a device request must be a mapping")
        return None
    cls = exact.get("deviceClassName")
    resource = GPU_CLASSES.get(cls) if isinstance(cls, str) else None
    if resource is None:
        p.add(
            exact.key_loc("deviceClassName") if "deviceClassName" in exact else loc,
            f"device class {cls!r} is not one topolog reads (MIG slices, another driver's devices); expected "
            f"deviceClassName {', '.join(sorted(GPU_CLASSES))} (whole GPUs), or limits nvidia.com/gpu: N",
        )
        return None
    for key, why in (
        ("selectors", "CEL selectors choose which GPUs (a model, a memory size)"),
        ("adminAccess", "admin access reaches devices other claims hold"),
    ):
        if exact.get(key):
            p.add(exact.key_loc(key), f"device request {key}: {why}, which topolog does not judge; expected none")
            return None
    mode = exact.get("allocationMode", "ExactCount")
    if mode != "ExactCount":
        p.add(
            exact.key_loc("allocationMode"),
            f"allocationMode {mode}: every matching GPU of the node, a number the spec does not say; expected "
            "ExactCount with a count",
        )
        return None
    count = exact.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_DEVICES:
        p.add(exact.key_loc("count"), f"device request count {count!r}; expected a whole number from 1 to 1,000,000")
        return None
    for key in exact:
        if key not in ("name", "deviceClassName", "allocationMode", "count", "selectors", "adminAccess"):
            notes.append(Diagnostic(exact.key_loc(key), f"device request {key} not judged"))
    return resource, count
