"""The Kubernetes validating admission webhook: `admission.k8s.io/v1` AdmissionReview in, AdmissionReview out.

The shapes are the Kubernetes API reference's (kube-apiserver Admission (v1),
https://kubernetes.io/docs/reference/config-api/apiserver-admission.v1/, and the request and
response examples of https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/).
The object under review is handed to exactly what `/v1/admit` and `topolog place` run (the job
loading of verifier.sources.jobs, then placement): whatever kinds that loading reads are
admitted here with no change to the service. An object it cannot read, or a job that fits
nowhere it may run, is refused with the reason; the uid is always echoed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from verifier.service.bodies import BadRequest
from verifier.service.gate import NothingToGate, admit_doc, not_placed_in_time
from verifier.service.revision import Revision
from verifier.sources.jobs.principal_rules import PrincipalRule

API_VERSION = "admission.k8s.io/v1"
KIND = "AdmissionReview"
MESSAGE_CHARS = 1000
"""The longest status message sent back: kubectl prints it to the user whose object was refused."""


@dataclass(frozen=True)
class Review:
    uid: str
    operation: str
    obj: dict[str, object] | None


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
    namespace = request.get("namespace")
    if isinstance(obj, dict) and isinstance(namespace, str) and namespace:
        # The request names the namespace even where the object's metadata leaves it out (a
        # manifest applied with -n): whom a job acts as may be decided by it (--principal-from).
        metadata = obj.get("metadata")
        if isinstance(metadata, dict) and "namespace" not in metadata:
            obj = {**obj, "metadata": {**metadata, "namespace": namespace}}
    return Review(uid, operation if isinstance(operation, str) else "", obj)


def review_doc(
    revision: Revision, review: Review, principal_from: tuple[PrincipalRule, ...] = ()
) -> tuple[dict[str, object], bool]:
    """The AdmissionReview answer and whether it allows."""
    if review.obj is None:
        # DELETE and CONNECT carry no object: nothing asks for hardware.
        return _answer(review.uid, True, f"nothing to place ({review.operation or 'no object'})", revision), True
    try:
        # The verdict and the why-not reasons are all it answers with: only the best placement is named.
        admitted = admit_doc(revision, json.dumps(review.obj).encode(), principal_from, limit=1)
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
