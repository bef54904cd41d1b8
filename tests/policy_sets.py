"""Small hand-made Cedar policy sets that `policy compare` is tested on, in the analysis and the CLI.

One place for them, so the answers derived by hand in tests/authorization/analysis/
test_questions_compare.py hold for the very sets tests/cli/test_policy_commands.py runs. They use
the shipped schema (policies/schema.cedarschema) on tests/authorization/small (rack ra: tenant a,
node na0 with 4 H100; rack rb: tenant b, quarantined, node nb0 with 2 RTX 4090; team a holds u1).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ONE_PERMIT = """
@id("a-schedules-own")
permit (principal in Team::"a", action == Action::"schedule", resource)
when { resource.tenant == "a" };
"""
# Written differently, deciding alike: every resource is either quarantined or not.
SPLIT = """
@id("a-own-quarantined")
permit (principal in Team::"a", action == Action::"schedule", resource)
when { resource.tenant == "a" && resource.quarantined };

@id("a-own-open")
permit (principal in Team::"a", action == Action::"schedule", resource)
when { resource.tenant == "a" && !resource.quarantined };
"""
# One condition more, which some resources of the inventory fail: a Gpu holds 1 GPU.
TWO_GPUS = """
@id("a-schedules-own-groups")
permit (principal in Team::"a", action == Action::"schedule", resource)
when { resource.tenant == "a" && resource.gpus >= 2 };
"""


def site_policy_dirs(tmp_path: Path) -> tuple[str, str]:
    """Two policy folders on the shipped schema with an optional `site` context text: the first lets
    anyone drain anything while the site is set and is not "lab", the second lets nobody. They differ
    only for a site no policy names, so only a context text equal to none of the literals tells them apart.
    """
    schema = (ROOT / "policies" / "schema.cedarschema").read_text(encoding="utf-8")
    wider = schema.replace("context: { incident?: Bool }", "context: { incident?: Bool, site?: String }")
    conditions = {"first": 'when { context has site && context.site != "lab" }', "second": "when { false }"}
    for name, condition in conditions.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "schema.cedarschema").write_text(wider, encoding="utf-8")
        (tmp_path / name / "p.cedar").write_text(
            f'@id("x")\npermit (principal, action == Action::"drain", resource)\n{condition};\n', encoding="utf-8"
        )
    return str(tmp_path / "first"), str(tmp_path / "second")
