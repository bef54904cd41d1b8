"""Revisions built in process: ids by content, the entity graph kept across a policy-only edit, checks kept.

Decisions derived by hand as in test_serve_authorize.py: alice may schedule on a100-n0/gpu0
under the shipped policies (tenant-own-hardware); the forbid added here names her.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from service.serve_helpers import QUICK_S, ROOT, copy_inputs

from verifier.core.errors import TopologError
from verifier.service.bodies import AuthorizeRequest
from verifier.service.config import ServeConfig
from verifier.service.gate import authorize_doc
from verifier.service.revision import build_revision

ALICE = AuthorizeRequest("alice", "schedule", "a100-n0/gpu0")


def test_a_policy_edit_keeps_the_graph_and_flips_the_decision(tmp_path: Path) -> None:
    config = ServeConfig((copy_inputs(tmp_path),), reload_quiet_s=QUICK_S)
    first = build_revision(config)
    assert build_revision(config).id == first.id  # same bytes, same id
    (tmp_path / "policies" / "suspend.cedar").write_text(
        '@id("alice-suspended")\nforbid (principal == User::"alice", action, resource);\n'
    )
    second = build_revision(config, first)
    assert second.id != first.id and second.setup.graph is first.setup.graph
    assert authorize_doc(first, ALICE)["decision"] == "ALLOW"
    assert authorize_doc(second, ALICE)["decision"] == "DENY"
    # Placement's decision memo is the revision's own: the first revision's answer (asked first,
    # so memoised) is not the second's, whose only matching forbid is alice-suspended.
    assert first.setup.denying("alice", ["a100-n0/gpu0"]) == ()
    assert second.setup.denying("alice", ["a100-n0/gpu0"]) == ("alice-suspended",)


def test_a_policy_off_the_schema_is_refused_even_when_the_graph_is_kept(tmp_path: Path) -> None:
    config = ServeConfig((copy_inputs(tmp_path),), reload_quiet_s=QUICK_S)
    first = build_revision(config)
    # `resource.no_such_attribute` is on no entity type of the schema: validation refuses it.
    (tmp_path / "policies" / "typo.cedar").write_text(
        '@id("typo")\npermit (principal, action, resource) when { resource.no_such_attribute == 1 };\n'
    )
    with pytest.raises(TopologError) as err:
        build_revision(config, first)
    assert "typo.cedar:1: policy 'typo' is not valid against the schema" in str(err.value)


def test_a_principals_edit_builds_a_new_graph(tmp_path: Path) -> None:
    config = ServeConfig((copy_inputs(tmp_path),), reload_quiet_s=QUICK_S)
    first = build_revision(config)
    principals = tmp_path / "principals.yml"
    # alice moved from team-nlp to team-vision: a100-n0 (tenant team-nlp) is no longer hers.
    principals.write_text(
        principals.read_text().replace("{id: alice, teams: [team-nlp]", "{id: alice, teams: [team-vision]")
    )
    second = build_revision(config, first)
    assert second.setup.graph is not first.setup.graph
    assert authorize_doc(second, ALICE)["decision"] == "DENY"


def test_a_broken_thresholds_file_is_refused_at_build_and_a_good_one_is_part_of_the_revision(tmp_path: Path) -> None:
    # `place` reads topolog.thresholds.yaml beside the inventory; so does every admit: it is in the
    # revision's files and id, and checked when the revision is built.
    config = ServeConfig((copy_inputs(tmp_path),), reload_quiet_s=QUICK_S)
    first = build_revision(config)
    thresholds = tmp_path / "topolog.thresholds.yaml"
    thresholds.write_text("thresholds: [\n")
    with pytest.raises(TopologError) as err:
        build_revision(config, first)
    assert "topolog.thresholds.yaml" in str(err.value)
    shutil.copy(ROOT / "rules" / "thresholds.yaml", thresholds)
    second = build_revision(config, first)
    assert second.id != first.id and list(second.files["thresholds"]) == [str(thresholds)]
    assert second.snapshot.thresholds is not None
    assert second.snapshot.thresholds.read_bytes() == thresholds.read_bytes()
