"""The schema-wide analysis on policy sets from github.com/cedar-policy/cedar-examples (Apache-2.0).

Sources and adaptations: cedar_examples/README.md. Answers derived by hand, beside each check.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verifier.authorization.analysis.symbolic import OutsideAnalysis, analyse_policies, compare_policies
from verifier.authorization.policies import load_policies

EXAMPLES = Path(__file__).parent / "cedar_examples"


def test_photo_sharing_redundant_policies() -> None:
    findings = analyse_policies(load_policies(EXAMPLES / "photo_sharing"))
    # view-public-photos: any User may view a Photo with private == false.
    # bob-view-public-photos: the same, only for email "bob@example.com": every request it allows,
    #   view-public-photos allows too -> redundant, view-public-photos deciding instead.
    # forbid-alice-comment: forbids `comment` for alice; no permit of this set applies to comment
    #   (view-public-photos: view, create-photos: create), so each request it forbids is denied
    #   anyway -> redundant, no other forbid overlapping it.
    # create-photos, view-public-photos: the only permits of their actions, nothing forbids them:
    #   no finding. No arithmetic and no optional attribute: no may-error. Nothing is dead.
    assert [(f.policy, f.kind, f.related) for f in findings] == [
        ("bob-view-public-photos", "redundant", ("view-public-photos",)),
        ("forbid-alice-comment", "redundant", ()),
    ]
    bob = findings[0]
    assert 'email: "bob@example.com"' in bob.example and "private: false" in bob.example


def test_photo_sharing_without_bobs_and_alices_policies_is_equivalent(tmp_path: Path) -> None:
    # Both policies are redundant (above): removing them changes no decision of any request.
    shutil.copytree(EXAMPLES / "photo_sharing", tmp_path / "lean")
    (tmp_path / "lean" / "bob_policy.cedar").unlink()
    (tmp_path / "lean" / "forbid_alice.cedar").unlink()
    assert compare_policies(load_policies(EXAMPLES / "photo_sharing"), load_policies(tmp_path / "lean")) == []


def test_photo_sharing_public_view_removed_differs_for_a_public_photo(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES / "photo_sharing", tmp_path / "less")
    text = (tmp_path / "less" / "current_policies.cedar").read_text()
    (tmp_path / "less" / "current_policies.cedar").write_text(text.replace("resource.private == false", "false"))
    (d,) = compare_policies(load_policies(EXAMPLES / "photo_sharing"), load_policies(tmp_path / "less"))
    # Without the public view, a public photo stays visible only to bob: the difference is a
    # `view` of a non-private photo by someone else (first allows, second denies).
    assert d.action == 'PhotoSharing::Action::"view"'
    assert "private: false" in d.resource and "bob@example.com" not in d.principal
    assert (d.first, d.second, d.first_policies, d.second_policies) == ("allow", "deny", ("view-public-photos",), ())


def test_photo_sharing_owner_policy_is_refused() -> None:
    # owner-full-access compares `resource.owner` (an entity-typed attribute: User) with the
    # principal: not encoded, so refused at its @id line (13 of current_policies.cedar).
    with pytest.raises(OutsideAnalysis) as caught:
        analyse_policies(load_policies(EXAMPLES / "photo_sharing_owner"))
    (diag,) = caught.value.diagnostics
    assert (Path(diag.location.file).name, diag.location.line) == ("current_policies.cedar", 13)
    assert "'owner-full-access'" in diag.message and "resource.owner of type PhotoSharing::User" in diag.message


def test_tinytodo_is_refused_at_its_first_entity_attribute() -> None:
    # policy1 (line 10) reads `resource.owner` (User) for List resources; policy2 and policy3 test
    # `principal in resource.readers/editors` (sets of Team). Requests are taken in order
    # (CreateList first: policy1 never reaches resource.owner there, Application has none), so
    # the first refusal is policy1, under CreateTask on a List.
    with pytest.raises(OutsideAnalysis) as caught:
        analyse_policies(load_policies(EXAMPLES / "tinytodo"))
    (diag,) = caught.value.diagnostics
    assert (Path(diag.location.file).name, diag.location.line) == ("policies.cedar", 10)
    assert "'policy1'" in diag.message and "resource.owner of type User" in diag.message
