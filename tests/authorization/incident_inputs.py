"""The small incident-rota fixture the AUTHZ014/AUTHZ017 tests of rounds 59 and 60 share: rack r0
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
