"""The schema-wide analysis on policy sets from github.com/cedar-policy/cedar-examples (Apache-2.0).

Sources and adaptations: cedar_examples/README.md. Answers derived by hand, beside each check.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cedar_oracle import analysed, compared

from verifier.authorization.analysis.symbolic import OutsideAnalysis
from verifier.authorization.policies import load_policies

EXAMPLES = Path(__file__).parent / "cedar_examples"


def test_photo_sharing_redundant_policies() -> None:
    findings = analysed(load_policies(EXAMPLES / "photo_sharing"))
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
    assert compared(load_policies(EXAMPLES / "photo_sharing"), load_policies(tmp_path / "lean")) == []


def test_photo_sharing_public_view_removed_differs_for_a_public_photo(tmp_path: Path) -> None:
    shutil.copytree(EXAMPLES / "photo_sharing", tmp_path / "less")
    text = (tmp_path / "less" / "current_policies.cedar").read_text()
    (tmp_path / "less" / "current_policies.cedar").write_text(text.replace("resource.private == false", "false"))
    (d,) = compared(load_policies(EXAMPLES / "photo_sharing"), load_policies(tmp_path / "less"))
    # Without the public view, a public photo stays visible only to bob: the difference is a
    # `view` of a non-private photo by someone else (first allows, second denies).
    assert d.action == 'PhotoSharing::Action::"view"'
    assert "private: false" in d.resource and "bob@example.com" not in d.principal
    assert (d.first, d.second, d.first_policies, d.second_policies) == ("allow", "deny", ("view-public-photos",), ())


def test_photo_sharing_with_owner_access() -> None:
    # view-public-photos: the only permit for a public photo someone else owns: needed.
    # owner-full-access (`resource.owner == principal`, an entity-typed attribute compared by
    #   id): the only permit of comment and delete, satisfiable (owner = the principal): needed.
    # create-photos: the only permit of create. No forbid, no arithmetic, no optional attribute.
    assert analysed(load_policies(EXAMPLES / "photo_sharing_owner")) == []


def test_photo_sharing_owner_access_compared() -> None:
    owner = load_policies(EXAMPLES / "photo_sharing_owner")
    plain = load_policies(EXAMPLES / "photo_sharing")
    diffs = compared(owner, plain)
    # comment and delete: only owner-full-access (first set) permits them; view: the first set also
    # lets an owner view a private photo, which the second (public photos only) denies; create:
    # create-photos in both. So three differences, each an owner acting on their own photo.
    assert [(d.action, d.first, d.second, d.first_policies, d.second_policies) for d in diffs] == [
        ('PhotoSharing::Action::"comment"', "allow", "deny", ("owner-full-access",), ()),
        ('PhotoSharing::Action::"delete"', "allow", "deny", ("owner-full-access",), ()),
        ('PhotoSharing::Action::"view"', "allow", "deny", ("owner-full-access",), ()),
    ]
    for d in diffs:
        principal_uid = d.principal.split(" ")[0]
        assert f"owner: {principal_uid}" in d.resource
    assert "private: true" in diffs[2].resource


def test_photo_sharing_attribute_of_the_owner_is_refused() -> None:
    # new_policy.cedar reads `resource.owner.company`: an attribute of an entity reached through
    # an attribute, not encoded, so refused at its @id line (2).
    with pytest.raises(OutsideAnalysis) as caught:
        analysed(load_policies(EXAMPLES / "photo_sharing_company"))
    (diag,) = caught.value.diagnostics
    assert (Path(diag.location.file).name, diag.location.line) == ("new_policy.cedar", 2)
    assert "'same-company-private-photo-access'" in diag.message
    assert "reads an attribute of resource.owner" in diag.message


def test_tinytodo_is_refused_at_its_first_set_of_entities() -> None:
    # policy1 (`resource.owner == principal`) is encoded; policy2 and policy3 test
    # `principal in resource.readers/editors` (sets of Team), which are not. Requests are taken in
    # order: CreateList (neither applies), then CreateTask on a List, where policy3 (line 24)
    # applies first (policy2 is GetList only).
    with pytest.raises(OutsideAnalysis) as caught:
        analysed(load_policies(EXAMPLES / "tinytodo"))
    (diag,) = caught.value.diagnostics
    assert (Path(diag.location.file).name, diag.location.line) == ("policies.cedar", 24)
    assert "'policy3'" in diag.message and "resource.editors of type Set<Team>" in diag.message
