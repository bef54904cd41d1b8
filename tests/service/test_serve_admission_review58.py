"""An AdmissionReview with no object is refused naming its operation, cut to a readable length (R-HI review).

0f302c1 named the operation of a CREATE or UPDATE without an object in the 400 whole: an
operation of 100,000 characters (a body under --max-body) came back as a 100 KB error.
"""

from __future__ import annotations

import pytest

from verifier.service.admission import read_review
from verifier.service.bodies import BadRequest


def _review(operation: object) -> dict[str, object]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u", "operation": operation},
    }


def test_a_short_operation_is_named_whole() -> None:
    with pytest.raises(BadRequest) as caught:
        read_review(_review("CREATE"))
    assert caught.value.message == (
        "request.object is missing for operation 'CREATE'; expected the Kubernetes object under review"
        " (only DELETE and CONNECT come without one)"
    )


def test_a_long_operation_is_cut() -> None:
    # repr("x" * 100_000) is 100,002 characters (the quotes); its first 40 are the quote and 39 x.
    with pytest.raises(BadRequest) as caught:
        read_review(_review("x" * 100_000))
    assert caught.value.message == (
        "request.object is missing for operation '" + "x" * 39 + "... (100002 characters); expected the"
        " Kubernetes object under review (only DELETE and CONNECT come without one)"
    )


def test_delete_without_an_object_is_read() -> None:
    review = read_review(_review("DELETE"))
    assert (review.operation, review.obj) == ("DELETE", None)
