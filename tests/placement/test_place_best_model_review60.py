"""Review R-PL of round 60 (9a890dc: a MIG job's why-not in a domain of several models counts
the GPUs of the one model it is judged on, place_why_kind, and names that model).

`verify --jobs` quotes the closest domain's why-not in PLACE001 ("Closest: ..."); it must say
what `place --why-not` says for that domain, the model included: without it, "8 GPUs" reads as
the whole domain's count where rack r0 holds 12.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

# Rack r0 by hand: node big holds 4 A100-SXM4-80GB (1g.10gb: 7 instances a GPU), node small 8
# A100-SXM4-40GB (1g.10gb: 4 a GPU, catalogue `mig`). 60 instances need ceil(60 / 7) = 9 GPUs
# of the 80GB cards (4 there) or ceil(60 / 4) = 15 of the 40GB cards (8 there): no model hosts
# the job, and r0 is judged on the model with the most eligible GPUs, A100-SXM4-40GB: 8 of 15.
RACK = """\
apiVersion: topolog.dev/v1
templates:
  a80:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: A100-SXM4-80GB, count: 4}
      - {name: nic0, kind: nic}
    links:
      - {a: "{d}", b: pcie0, kind: pcie, generation: 4, lanes: 16, foreach: {d: [gpu0, gpu1, gpu2, gpu3, nic0]}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 4, lanes: 16}
  a40:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: A100-SXM4-40GB, count: 8}
      - {name: nic0, kind: nic}
    links:
      - {a: "{d}", b: pcie0, kind: pcie, generation: 4, lanes: 16,
         foreach: {d: [gpu0, gpu1, gpu2, gpu3, gpu4, gpu5, gpu6, gpu7, nic0]}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 4, lanes: 16}
objects:
  - name: r0
    kind: rack
    children:
      - {name: leaf0, kind: switch, labels: {role: leaf}}
      - {template: a80, name: big}
      - {template: a40, name: small}
links:
  - {a: "{n}/nic0", b: leaf0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {n: [big, small]}}
"""

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: i60, principal: anyone, gpus: 60, gpu: {mig: 1g.10gb}, topology: {scope: rack}}
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_verify_quotes_the_mig_why_not_with_its_model_as_place_does(tmp_path: Path, engine: str) -> None:
    rack, jobs = tmp_path / "rack.yaml", tmp_path / "jobs.yaml"
    rack.write_text(RACK)
    jobs.write_text(JOBS)
    common = ("--no-authorization", "--engine", engine, "--format", "json")
    code, out, err = run_cli("place", str(rack), str(jobs), "--why-not", *common)
    assert code == 1, err
    (why,) = json.loads(out)["jobs"][0]["why_not"]
    assert why["message"] == "r0: 8 A100-SXM4-40GB GPUs, job needs 15"
    code, out, err = run_cli("verify", str(rack), "--jobs", str(jobs), *common)
    assert code == 1, err
    (place001,) = [f for f in json.loads(out)["findings"] if f["rule"] == "PLACE001"]
    assert place001["message"].endswith(" Closest: r0: 8 A100-SXM4-40GB GPUs, job needs 15.")
