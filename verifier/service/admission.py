"""The Kubernetes validating admission webhook: `admission.k8s.io/v1` AdmissionReview in, AdmissionReview out.

The shapes are the Kubernetes API reference's (kube-apiserver Admission (v1),
https://kubernetes.io/docs/reference/config-api/apiserver-admission.v1/, and the request and
response examples of https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/).
The object under review is handed to exactly what `/v1/admit` and `topolog place` run (the job
loading of verifier.sources.jobs, then placement): whatever kinds that loading reads are
admitted here with no change to the service. An object it cannot read, or a job that fits
nowhere it may run, is refused with the reason; the uid is always echoed. A review of the scale
subresource (`kubectl scale`, an HorizontalPodAutoscaler) carries an autoscaling/v1 Scale, not
the workload: a scale down is allowed, a scale up refused (scale_review).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from verifier.service.bodies import BadRequest
from verifier.service.gate import NothingToGate, admit_doc, not_placed_in_time
from verifier.service.revision import Revision
from verifier.sources.jobs.principal_rules import PrincipalRule

API_VERSION = "admission.k8s.io/v1"
KIND = "AdmissionReview"
MESSAGE_CHARS = 1000
"""The longest status message sent back: kubectl prints it to the user whose object was refused."""
FIELD_CHARS = 256
"""The longest request.uid or request.operation read (a Kubernetes uid is a 36-character UUID)."""


@dataclass(frozen=True)
class Review:
    uid: str
    operation: str
    obj: dict[str, object] | None
    sub_resource: str = ""
    """The subresource asked about ("scale" for `kubectl scale` or an HorizontalPodAutoscaler)."""
    old_obj: dict[str, object] | None = None
    resource: str = ""
    """What the request changes, as `deployments/mistral-7b` (plural resource and name)."""


def read_review(doc: object) -> Review:
    """The uid, operation and object of an AdmissionReview (BadRequest when it is not one)."""
    if not isinstance(doc, dict) or doc.get("apiVersion") != API_VERSION or doc.get("kind") != KIND:
        raise BadRequest(f"the body is not an {API_VERSION} {KIND}; expected apiVersion {API_VERSION}, kind {KIND}")
    request = doc.get("request")
    if not isinstance(request, dict):
        raise BadRequest("the AdmissionReview has no request object; expected request.uid and request.object")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise BadRequest("request.uid is missing; expected the string the API server sent")
    operation = request.get("operation", "")
    _bounded("uid", uid)
    obj = request.get("object")
    if obj is not None and not isinstance(obj, dict):
        raise BadRequest("request.object is not an object; expected the Kubernetes object under review")
    if obj is None and operation not in ("DELETE", "CONNECT"):
        # Only a DELETE or CONNECT carries no object. A CREATE or UPDATE without one (or a review
        # with no operation) had been allowed as "nothing to place": a request the API server
        # never sends, answered open.
        shown = repr(operation)
        shown = shown if len(shown) <= 40 else f"{shown[:40]}... ({len(shown)} characters)"  # a body's worth, cut
        raise BadRequest(
            f"request.object is missing for operation {shown}; expected the Kubernetes object under "
            "review (only DELETE and CONNECT come without one)"
        )
    _bounded("operation", operation)
    namespace = request.get("namespace")
    if isinstance(obj, dict) and isinstance(namespace, str) and namespace:
        # The request names the namespace even where the object's metadata leaves it out (a
        # manifest applied with -n): whom a job acts as may be decided by it (--principal-from).
        metadata = obj.get("metadata")
        if isinstance(metadata, dict) and "namespace" not in metadata:
            obj = {**obj, "metadata": {**metadata, "namespace": namespace}}
    sub_resource = request.get("subResource")
    old_obj = request.get("oldObject")
    resource = request.get("resource")
    plural = resource.get("resource") if isinstance(resource, dict) else None
    name = request.get("name")
    return Review(
        uid,
        operation if isinstance(operation, str) else "",
        obj,
        sub_resource if isinstance(sub_resource, str) else "",
        old_obj if isinstance(old_obj, dict) else None,
        "/".join(str(x) for x in (plural, name) if isinstance(x, str) and x),
    )


def _bounded(field: str, text: object) -> None:
    """BadRequest for a request.uid or request.operation over FIELD_CHARS: each is echoed in the answer
    (the uid) or written to the decision log, where a megabyte one was kept whole. The API server
    sends a UUID (36 characters) and one of four operation words.
    """
    if isinstance(text, str) and len(text) > FIELD_CHARS:
        raise BadRequest(
            f"request.{field} is {len(text):,} characters long; expected at most {FIELD_CHARS} "
            "(the API server sends a UUID and an operation word)"
        )


def _is_scale(review: Review) -> bool:
    """A review of the scale subresource: its object is an autoscaling/v1 Scale, not the workload."""
    obj = review.obj or {}
    api = obj.get("apiVersion")
    return review.sub_resource == "scale" or (
        obj.get("kind") == "Scale" and isinstance(api, str) and api.startswith("autoscaling/")
    )


def _scale_replicas(obj: dict[str, object] | None) -> int | None:
    """spec.replicas of a Scale; 0 where left out (the API writes int32 replicas with omitempty)."""
    if obj is None:
        return None
    spec = obj.get("spec", {})
    if not isinstance(spec, dict):
        return None
    replicas = spec.get("replicas", 0)
    return replicas if isinstance(replicas, int) and not isinstance(replicas, bool) and replicas >= 0 else None


def scale_review(revision: Revision, review: Review) -> tuple[dict[str, object], bool]:
    """The answer to a scale: fewer or as many replicas are allowed, more are refused.

    A Scale carries a name and a replica count, never the pod template: the GPUs the new replicas
    ask for, and where they would fit, cannot be judged from it, and the gate holds no copy of the
    workload. So a scale up is refused (fail closed) with the way to do it that the gate does see:
    spec.replicas changed on the workload itself, which the API server hands over whole. A scale
    down releases pods and needs no judging.
    """
    what = review.resource or "this workload"
    new, old = _scale_replicas(review.obj), _scale_replicas(review.old_obj)
    if new is None:
        return _answer(
            review.uid, False, f"refused: the Scale of {what} has no readable spec.replicas", revision
        ), False
    if new == 0 or (old is not None and new <= old):
        before = f"from {old} " if old is not None else ""
        said = f"scales {what} {before}to {new} replicas: no new pod, nothing to gate"
        return _answer(review.uid, True, said, revision), True
    before = f"from {old} " if old is not None else ""
    kind = what.split("/", 1)[0].removesuffix("s") or "workload"
    return _answer(
        review.uid,
        False,
        f"refused: a scale of {what} {before}to {new} replicas carries no pod template, so the GPUs of "
        f"the new replicas cannot be judged; change spec.replicas on the {kind} itself (kubectl apply, or "
        "kubectl patch with spec.replicas), which topolog judges whole",
        revision,
    ), False


def review_doc(
    revision: Revision,
    review: Review,
    principal_from: tuple[PrincipalRule, ...] = (),
    given_up: Callable[[], bool] = lambda: False,
) -> tuple[dict[str, object], bool]:
    """The AdmissionReview answer and whether it allows (`given_up`: gate.admit_doc's)."""
    if review.obj is None:
        # DELETE and CONNECT carry no object: nothing asks for hardware.
        return _answer(review.uid, True, f"nothing to place ({review.operation or 'no object'})", revision), True
    if _is_scale(review):
        # Read as a job file, a Scale is an object of no kind the loading reads: "asks for no GPU",
        # allowed. That would let `kubectl scale --replicas=100` past the gate.
        return scale_review(revision, review)
    try:
        # The verdict and the why-not reasons are all it answers with: only the best placement is named.
        admitted = admit_doc(revision, json.dumps(review.obj).encode(), principal_from, limit=1, given_up=given_up)
    except NothingToGate as err:
        # A CPU-only Job, Deployment, ... in a namespace the webhook watches: no GPU to gate.
        return _answer(review.uid, True, f"asks for no GPU, nothing to gate ({err.message})", revision), True
    except BadRequest as err:
        return _answer(review.uid, False, f"topolog cannot read this object as a job: {err.message}", revision), False
    if admitted["admitted"] is True:
        return _answer(review.uid, True, "placeable on hardware this principal may use", revision), True
    return _answer(review.uid, False, _why(admitted), revision), False


def _why(admitted: dict[str, object]) -> str:
    errors = admitted.get("errors")
    if isinstance(errors, list) and errors:
        return "refused: " + "; ".join(str(e) for e in errors)
    placement = admitted.get("placement")
    reasons: list[str] = []
    if isinstance(placement, dict):
        for job in placement.get("jobs", []):
            never = job.get("never") if isinstance(job, dict) else None
            if isinstance(job, dict) and isinstance(never, list) and never:
                # PLACE002: no node could ever take it; the reason, not a why-not per domain.
                said = "; ".join(map(str, never))
                reasons.append(f"job {job.get('job')} can never run on any node (PLACE002: {said})")
            elif isinstance(job, dict) and not job.get("placeable"):
                why = [w.get("message", "") for w in job.get("why_not", []) if isinstance(w, dict)]
                reasons.append(f"job {job.get('job')} fits nowhere" + (f" ({'; '.join(why[:3])})" if why else ""))
    return "refused: " + ("; ".join(reasons) or "no placement")


def timed_out_review(uid: str, revision: Revision, seconds: float) -> dict[str, object]:
    return _answer(uid, False, not_placed_in_time(seconds), revision)


def _answer(uid: str, allowed: bool, message: str, revision: Revision) -> dict[str, object]:
    text = f"topolog (revision {revision.id}): {message}"
    if len(text) > MESSAGE_CHARS:
        text = text[: MESSAGE_CHARS - 3] + "..."
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "response": {"uid": uid, "allowed": allowed, "status": {"code": 200 if allowed else 403, "message": text}},
    }
