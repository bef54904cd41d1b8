"""The relations authorization adds to the facts, named without importing Cedar (authorization.facts emits them)."""

from __future__ import annotations

AUTHZ_RELATIONS: frozenset[str] = frozenset(
    {
        "authz_principal",
        "member_of",
        "principal_attr",
        "authz_class",
        "class_tenant",
        "tenant_label_near",
        "role_near",
        "trainee_spelling",
        "policy_value_never",
        "permitted",
        "permitted_by",
        "incident_permitted",
        "authz_error",
        "policy_names",
        "forbid_resource_eq",
        "forbid_resource_is",
        "forbid_eq_principal",
        "forbid_reads_principal",
        "permit_reads_principal",
        "permit_role_literal",
        "policy_reads_resource",
    }
)
"""Every relation emitted (a test checks them against rules/schema.dl)."""

POLICY_RELATIONS: frozenset[str] = frozenset({"policy_analysed", "policy_schema_finding", "policy_inventory_finding"})
"""The relations the policy analyses fill (verifier.authorization.analysis.policy_facts), for `topolog policy check`
only: `verify` leaves them empty, so the POLICY checks are not applicable there."""
