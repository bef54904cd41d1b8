"""Small authorization fixtures the AUTHZ013-AUTHZ017 tests of rounds 59 and 60 share. The incident rota: rack r0
(tenant render) of two workstations, ws0 quarantined; team render (rhea, an engineer) and the
on-call team oncall (otto, an sre, also in render)."""

INVENTORY = """apiVersion: topolog.dev/v1
objects:
  - name: r0
    kind: rack
    labels: {tenant: render}
    children:
      - {name: ws0, kind: node, labels: {quarantine: "true"}, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
      - {name: ws1, kind: node, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
"""

PRINCIPALS = """apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: render, tenant: render}
  - {id: oncall, tenant: render, role: sre}
users:
  - {id: rhea, teams: [render], role: engineer}
  - {id: otto, teams: [render, oncall], role: sre}
"""

TRAINEE_INVENTORY = """apiVersion: topolog.dev/v1
objects:
  - name: r0
    kind: rack
    labels: {tenant: render}
    children:
      - {name: ws0, kind: node, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
      - {name: ws1, kind: node, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
"""
"""Rack r0 as above, nothing quarantined: the forbid-scope tests (AUTHZ013, AUTHZ015) of rounds 59-60."""

TRAINEE_PRINCIPALS = """apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: render, tenant: render}
users:
  - {id: rhea, teams: [render], role: engineer}
  - {id: ivy, teams: [render], role: intern}
"""
"""Team render: rhea (an engineer) and ivy (an intern)."""
