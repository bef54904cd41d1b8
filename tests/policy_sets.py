"""Small hand-made Cedar policy sets that `policy compare` is tested on, in the analysis and the CLI.

One place for them, so the answers derived by hand in tests/authorization/analysis/
test_questions_compare.py hold for the very sets tests/cli/test_policy_commands.py runs. They use
the shipped schema (policies/schema.cedarschema) on tests/authorization/small (rack ra: tenant a,
node na0 with 4 H100; rack rb: tenant b, quarantined, node nb0 with 2 RTX 4090; team a holds u1).
"""

from __future__ import annotations

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
