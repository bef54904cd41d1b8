"""Authorization: Cedar policies kept in `policies/`, evaluated with cedarpy, failing closed.

- `policies`: load and validate the schema and every policy (each needs a unique `@id`).
- `principals`: the principals file (users, teams, service accounts, memberships).
- `entities`: Cedar entities built from the inventory and the derived NVLink domains, on demand.
- `evaluate`: one `Authorizer` holding reusable PolicySet / Schema handles, and per batch the
  Entities its requests can reach; any evaluation error, unknown entity or invalid request is
  a Deny with the reason kept.
- `classes`: equivalence classes of principals and resources, from what the policies read.
- `audit`: the who-may-do-what-where matrix and the diff between two policy sets or inventories.
- `facts`: decisions as Datalog facts (`permitted/3` at class level) for rules/authz/.
- `commands`: the `topolog authorize` and `topolog audit` click commands.
"""
