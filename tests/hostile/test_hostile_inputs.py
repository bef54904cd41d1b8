"""Hostile and huge input, one case per kind (issue 18): through the real CLI, each must exit 2
with the file:line and a sentence saying what was wrong, within the limits, never a traceback.

Cases that would need gigabytes to hit a default limit run under lowered limits
(`use_limits`): the limit, not its default, is what each case proves is enforced.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.checks.waivers import load_waivers
from verifier.core.errors import TopologError
from verifier.core.limits import Limits, read_limited, use_limits
from verifier.sources.inventory import load_inventory
from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.device_ids import device_ids

SMALL = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: small}
objects:
  - name: n1
    kind: node
    labels: {tenant: hpc}
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
      - {name: gpu1, kind: gpu, model: H100-SXM5-80GB}
      - {name: nic0, kind: nic}
links:
  - {a: n1/gpu0, b: n1/gpu1, kind: nvlink, generation: 4, count: 18}
  - {a: n1/gpu0, b: n1/nic0, kind: pcie, generation: 5, lanes: 16}
  - {a: n1/gpu1, b: n1/nic0, kind: pcie, generation: 5, lanes: 16}
"""

PRINCIPALS = """\
apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: hpc, tenant: hpc}
users:
  - {id: alice, teams: [hpc]}
"""

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: j1, principal: alice, gpus: 1}
"""

TEMPLATE_X = """\
apiVersion: topolog.dev/v1
templates:
  dgx:
    kind: node
    children:
      - {name: gpu0, kind: gpu}
      - {name: gpu1, kind: gpu}
      - {name: gpu2, kind: gpu}
objects:
  - {name: "n{i}", template: dgx, count: COUNT}
"""

NESTED_TEMPLATES = """\
apiVersion: topolog.dev/v1
templates:
  dgx:
    kind: node
    children:
      - {name: gpu0, kind: gpu}
  rack:
    kind: rack
    children:
      - {name: "n{i}", template: dgx, count: 900000}
objects:
  - {name: "r{i}", template: rack, count: 900000}
"""

ROOT = Path(__file__).resolve().parents[2]

AUTHORIZE = ["authorize", "inv.yaml", "--principal", "alice", "--action", "schedule", "--resource", "n1/gpu0"]

HWLOC_PU = """\
<?xml version="1.0" encoding="UTF-8"?>
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000001">
    <object type="Package" os_index="0" cpuset="0x00000001">
      <object type="Core" os_index="0" cpuset="0x00000001">
    <object type="PU" os_index="0" cpuset="0x00000001"/>
      </object>
    </object>
  </object>
</topology>
"""
"""`lstopo --of xml` of one machine with one PU (the PU's line is 6)."""

NULL_REASON = "waivers:\n  - {rule: TOPO001, subject: n1, reason: null, expires: 2099-01-01}\n"

TEAM_CHAIN = (
    "apiVersion: topolog.dev/v1\nkind: Principals\nteams:\n  - {id: t0, tenant: hpc}\n"
    + "".join(f"  - {{id: t{k}, teams: [t{k - 1}]}}\n" for k in range(1, 3000))
    + "users:\n  - {id: alice, teams: [t2999]}\n"
)
"""Teams nested 3,000 deep: resolving them took minutes (quadratic) before nesting_depth bounded them."""

GREEDY_RULES = """\
.decl every_pair(a: symbol, b: symbol)
every_pair(A, B) :- object(A, _), object(B, _).

# @id: GREEDY001
# @severity: note
# @summary: Every pair of objects.
# @remediation: None.
# @reports: greedy_pair
# @message: {a} and {b}.
.decl greedy_pair(a: symbol, b: symbol)
greedy_pair(A, B) :- every_pair(A, B).
"""


def _replace(old: str, new: str) -> str:
    assert old in SMALL
    return SMALL.replace(old, new)


@dataclass
class Case:
    """Files to write (name -> text or bytes), the command, and what stderr must say."""

    files: dict[str, str | bytes]
    args: list[str]
    expect: list[str]
    limits: Limits = field(default_factory=Limits)
    setup: Callable[[Path], None] | None = None


K8S_BELL_LABEL = json.dumps(
    {
        "items": [
            {
                "metadata": {
                    "name": "gpu-a01",
                    "labels": {"nvidia.com/gpu.count": "8", "nvidia.com/gpu.clique": "x\u0007y"},
                }
            }
        ]
    }
)
"""A node label holding a bell (U+0007), as `kubectl get nodes -o json` would pass it through."""


def _forget_catalogue(_root: Path) -> None:
    """The shipped catalogue is parsed once per process: forget it, so that the next run parses it again."""
    builtin_models.cache_clear()
    device_ids.cache_clear()


CASES: dict[str, Case] = {
    # --- reading files: size, device files, FIFOs, encoding ---------------------------------
    "file over file_size": Case(
        {"inv.yaml": SMALL + "#" * 4096 + "\n"},
        ["verify", "inv.yaml"],
        ["inv.yaml: file is 4,593 bytes, over the limit file_size = 4 KiB", "--input-limit file_size="],
        Limits(file_size=4096),
    ),
    "/dev/zero as inventory": Case({}, ["verify", "/dev/zero"], ["/dev/zero: cannot read file: it is a device file"]),
    "NUL byte in YAML": Case(
        {"inv.yaml": _replace("name: n1\n", "name: n\x001\n")},
        ["verify", "inv.yaml"],
        ["inv.yaml:5:12: character '\\x00' (#x0000) is not allowed in YAML"],
    ),
    "not UTF-8": Case(
        {"inv.yaml": SMALL.encode().replace(b"name: n1", b"name: n\xff1")},
        ["verify", "inv.yaml"],
        ["inv.yaml:5:12: file is not UTF-8 (byte 0xff at offset 87); expected UTF-8 text"],
    ),
    # --- nesting and list lengths ----------------------------------------------------------
    "YAML nested past nesting_depth": Case(
        {"inv.yaml": "apiVersion: topolog.dev/v1\nobjects: " + "[" * 150 + "]" * 150 + "\n"},
        ["verify", "inv.yaml"],
        ["inv.yaml:2:109: YAML nested 101 levels deep here, over the limit nesting_depth = 100"],
    ),
    "list over list_length": Case(
        {"inv.yaml": _replace("labels: {tenant: hpc}", "labels: {tenant: hpc}\n    promises: [" + "a, " * 50 + "a]")},
        ["verify", "inv.yaml"],
        ["inv.yaml:8:15: this YAML list has 51 entries, over the limit list_length = 50"],
        Limits(list_length=50),
    ),
    "baseline JSON nested 10^5 deep": Case(
        {"inv.yaml": SMALL, "base.json": '{"schemaVersion": 1, "findings": ' + "[" * 100_000 + "]" * 100_000 + "}"},
        ["verify", "inv.yaml", "--baseline", "base.json"],
        ["base.json:1:1: JSON nested deeper than it can be read; expected at most nesting_depth = 100 levels"],
    ),
    # --- ids: length, control characters, surrogates ------------------------------------------
    "id over id_length": Case(
        {"inv.yaml": _replace("name: n1\n", "name: " + "n" * 2000 + "\n")},
        ["verify", "inv.yaml"],
        ["inv.yaml:5:5: 'name' in object", "is 2,000 characters long, over the limit id_length = 1,024"],
    ),
    "control character in an id": Case(
        {"inv.yaml": _replace("name: gpu1,", 'name: "gpu\\x011",')},
        ["verify", "inv.yaml"],
        ["inv.yaml:10:10: 'name' in object 'gpu\\x011' holds a control character (U+0001) at character 4"],
    ),
    "lone surrogate in an id": Case(
        {"inv.yaml": _replace("name: gpu1,", 'name: "gpu\\ud8001",')},
        ["verify", "inv.yaml"],
        ["inv.yaml:10:10: 'name' in object 'gpu\\ud8001' holds a lone surrogate, which is not valid UTF-8"],
    ),
    "zero-width space in an id": Case(
        {"inv.yaml": _replace("name: gpu1,", 'name: "gpu1\\u200b",')},
        ["verify", "inv.yaml"],
        ["inv.yaml:10:10: 'name' in object 'gpu1\\u200b' holds an invisible format character (U+200B) at character 5"],
    ),
    "newline in a label": Case(
        {"inv.yaml": _replace("tenant: hpc", 'tenant: "hpc\\n::error::forged"')},
        ["verify", "inv.yaml"],
        ["inv.yaml:7:14: 'tenant' in labels of object 'n1' holds a control character (U+000A)"],
    ),
    "bidi override in a label key": Case(
        {"inv.yaml": _replace("tenant: hpc", '"ten\\u202eant": hpc')},
        ["verify", "inv.yaml"],
        ["inv.yaml:7:14: key 'ten\\u202eant' in labels of object 'n1' holds a bidirectional text control"],
    ),
    "control character in a job's principal": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS, "jobs.yaml": JOBS.replace("alice", '"al\\x1bice"')},
        ["place", "inv.yaml", "jobs.yaml"],
        ["jobs.yaml:4:16: principal 'al\\x1bice' in job 'j1' holds a control character (U+001B)"],
    ),
    # --- principals: quotes, backslashes, newlines ------------------------------------------
    "quote in a user id": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS.replace("id: alice", "id: 'a\"b'"), "jobs.yaml": JOBS},
        ["place", "inv.yaml", "jobs.yaml"],
        ["principals.yml:6:6: principal id 'a\"b' holds a quote, a backslash, white space or '::'"],
    ),
    "backslash in a team id": Case(
        {
            "inv.yaml": SMALL,
            "principals.yml": PRINCIPALS.replace("{id: hpc,", "{id: 'h\\pc',").replace("[hpc]", "['h\\pc']"),
            "jobs.yaml": JOBS,
        },
        ["place", "inv.yaml", "jobs.yaml"],
        ["principals.yml:4:6: principal id 'h\\\\pc' holds a quote, a backslash"],
    ),
    "newline in a team membership": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS.replace("[hpc]", '["hp\\nc"]'), "jobs.yaml": JOBS},
        ["place", "inv.yaml", "jobs.yaml"],
        ["principals.yml:6:25: team id 'hp\\nc' holds a control character (U+000A)"],
    ),
    "quote in a job's principal": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS, "jobs.yaml": JOBS.replace("alice", "'a\"b'")},
        ["place", "inv.yaml", "jobs.yaml"],
        ["jobs.yaml:4:16: principal 'a\"b' in job 'j1' holds a quote"],
    ),
    # --- templates and expansion -------------------------------------------------------------
    "count: 2**70": Case(
        {"inv.yaml": TEMPLATE_X.replace("COUNT", str(2**70))},
        ["verify", "inv.yaml"],
        ["inv.yaml:10:35: 'count' in object 'n{i}': count 1180591620717411303424 does not fit in 64 bits"],
    ),
    "template counted 10^7 times": Case(
        {"inv.yaml": TEMPLATE_X.replace("COUNT", "10000000")},
        ["verify", "inv.yaml"],
        [
            "inv.yaml:10:5: 'count: 10,000,000' asks for 10,000,000 instances (40,000,000 objects and links), "
            "over the limit template_count = 1,000,000"
        ],
    ),
    "nested counts past expanded_objects": Case(
        {"inv.yaml": NESTED_TEMPLATES},
        ["verify", "inv.yaml"],
        [
            "inv.yaml:12:5: the inventory would expand to 1,620,000,900,000 objects and links "
            "(1,620,000,900,000 of them from this entry), over the limit expanded_objects = 1,800,000"
        ],
    ),
    # --- numbers out of range -----------------------------------------------------------------
    "attribute beyond 64 bits": Case(
        {"inv.yaml": _replace("labels: {tenant: hpc}", "labels: {tenant: hpc}\n    attrs: {x: " + str(2**64) + "}")},
        ["verify", "inv.yaml"],
        ["inv.yaml:8:13: 'x' in attrs of object 'n1': 18446744073709551616 does not fit in 64 bits"],
    ),
    "negative attribute (a demand that would lower a sum)": Case(
        # attrs are counts or figures in their unit; -3 MB/s of demand would hide 3 MB/s of another's.
        {"inv.yaml": _replace("labels: {tenant: hpc}", "labels: {tenant: hpc}\n    attrs: {demand_mbps: -3}")},
        ["verify", "inv.yaml"],
        ["inv.yaml:8:13: 'demand_mbps' in attrs of object 'n1' is -3; expected a whole number, 0 or more"],
    ),
    "bandwidth beyond 64 bits": Case(
        {"inv.yaml": _replace("generation: 4, count: 18", "bandwidth: 1e30 GB/s")},
        ["verify", "inv.yaml"],
        ["inv.yaml:13:44: 'bandwidth' in link n1/gpu0 - n1/gpu1: bandwidth '1e30 GB/s'", "does not fit in 64 bits"],
    ),
    "link count whose derived bandwidth passes 64 bits": Case(
        {"inv.yaml": _replace("count: 18", "count: 9223372036854775807")},
        ["verify", "inv.yaml"],
        [
            "inv.yaml:13:59: 'count' in link n1/gpu0 - n1/gpu1 asks for 9,223,372,036,854,775,807 parallel links, "
            "over the limit template_count = 1,000,000"
        ],
    ),
    "exponent that would take minutes": Case(
        {"inv.yaml": _replace("generation: 4, count: 18", "bandwidth: 1e99999999 GB/s")},
        ["verify", "inv.yaml"],
        ["inv.yaml:13:44: 'bandwidth' in link n1/gpu0 - n1/gpu1: '1e99999999' is out of range"],
    ),
    "leading-zero integer (was octal or a traceback)": Case(
        {"inv.yaml": _replace("labels: {tenant: hpc}", "labels: {tenant: hpc}\n    attrs: {x: 09}")},
        ["verify", "inv.yaml"],
        ["inv.yaml:8:13: 'x' in attrs of object 'n1' must be a whole number, got '09'"],
    ),
    "threshold of 2**70": Case(
        {"inv.yaml": SMALL, "thr.yaml": f"leaf_oversubscription_permille: {2**70}\n"},
        ["verify", "inv.yaml", "--thresholds", "thr.yaml"],
        ["thr.yaml:1:1: threshold 'leaf_oversubscription_permille' is 1180591620717411303424", "fits in 64 bits"],
    ),
    "job gpus beyond 64 bits": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS, "jobs.yaml": JOBS.replace("gpus: 1", f"gpus: {2**64}")},
        ["place", "inv.yaml", "jobs.yaml"],
        ["jobs.yaml:4:34: 'gpus' in job 'j1' is 18446744073709551616", "fits in 64 bits"],
    ),
    "job parameter count past 64 bits": Case(
        {
            "inv.yaml": SMALL,
            "principals.yml": PRINCIPALS,
            "jobs.yaml": JOBS.replace("gpus: 1}", "gpus: 1, model: {parameters: 1e99999999}}"),
        },
        ["place", "inv.yaml", "jobs.yaml"],
        ["jobs.yaml:4:51: 'parameters' in model of job 'j1': parameter count '1e99999999' is out of range"],
    ),
    # --- jobs ---------------------------------------------------------------------------------
    "empty jobs folder": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS, "jobs/README.md": "no jobs yet\n"},
        ["place", "inv.yaml", "jobs"],
        ["jobs: folder holds no job files; expected *.yaml or *.yml files"],
    ),
    "job file without jobs": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS, "jobs.yaml": JOBS.split("jobs:\n")[0] + "jobs: []\n"},
        ["place", "inv.yaml", "jobs.yaml"],
        ["jobs.yaml: no jobs to place: the job files define none"],
    ),
    # --- authorization data types -------------------------------------------------------------
    "quarantine label that is not a boolean": Case(
        {
            "inv.yaml": _replace("labels: {tenant: hpc}", "labels: {tenant: hpc, quarantine: 'yes'}"),
            "principals.yml": PRINCIPALS,
            "jobs.yaml": JOBS,
        },
        ["place", "inv.yaml", "jobs.yaml"],
        ["inv.yaml:5:5: label 'quarantine' of 'n1' is 'yes'", "boolean 'quarantined', so expected true or false"],
    ),
    # --- importers ------------------------------------------------------------------------------
    "hostlist of 10^8 hosts": Case(
        {"topology.conf": "SwitchName=leaf0 Nodes=n[1-100000000]\n"},
        ["import", "slurm", "topology.conf"],
        ["topology.conf:1", "names 100,000,000 hosts or more, over the limit hostlist_size = 500,000"],
    ),
    "30 ranges of 999,999 in one bracket": Case(
        {"topology.conf": "SwitchName=leaf0 Nodes=n[" + ",".join(["1-999999"] * 30) + "]\n"},
        ["import", "slurm", "topology.conf"],
        ["topology.conf:1", "names 29,999,970 hosts or more, over the limit hostlist_size"],
    ),
    "hwloc XML nested 10^5 deep": Case(
        {"topo.xml": '<?xml version="1.0"?>' + "<object>" * 100_000 + "</object>" * 100_000},
        ["import", "hwloc", "topo.xml"],
        ["topo.xml:1:", "elements nested 101 levels deep here, over the limit nesting_depth = 100"],
    ),
    # --- outputs: never over an input, never in place of a device file or FIFO ---------------
    "report written over the principals file": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS, "jobs.yaml": JOBS},
        ["verify", "inv.yaml", "--jobs", "jobs.yaml", "--output", "json=principals.yml"],
        ["principals.yml: is an input of this run (principals.yml); write the report to another file"],
    ),
    "schema written to a FIFO nobody reads": Case(
        {},
        ["schema", "-o", "fifo"],
        ["fifo: cannot write report: no process reads this FIFO"],
        setup=lambda root: os.mkfifo(root / "fifo"),
    ),
    # --- text from the input or the command line never starts a line of its own -------------
    "newline in an option value echoed in an error": Case(
        {"inv.yaml": SMALL},
        ["draw", "inv.yaml", "--format", "dot", "--node", "n1\n::error::forged"],
        ["error: inv.yaml: --node n1\\x0a::error::forged: no such object"],
    ),
    # --- Cedar: what its native parser cannot take is refused before it parses ---------------
    "policy nested past nesting_depth": Case(
        {
            "inv.yaml": SMALL,
            "principals.yml": PRINCIPALS,
            "pol/schema.cedarschema": (ROOT / "policies" / "schema.cedarschema").read_text(encoding="utf-8"),
            "pol/deep.cedar": '@id("deep")\npermit(principal, action, resource) when { '
            + "(" * 2000
            + "true"
            + ")" * 2000
            + " };\n",
        },
        ["audit", "inv.yaml", "--policies", "pol"],
        ["pol/deep.cedar:2:143: policy nested 101 levels deep here, over the limit nesting_depth = 100"],
    ),
    "policy with 3,000 chained operators": Case(
        {
            "inv.yaml": SMALL,
            "principals.yml": PRINCIPALS,
            "pol/schema.cedarschema": (ROOT / "policies" / "schema.cedarschema").read_text(encoding="utf-8"),
            "pol/chain.cedar": '@id("chain")\npermit(principal, action, resource) when { '
            + " && ".join(["true"] * 3000)
            + " };\n",
        },
        ["audit", "inv.yaml", "--policies", "pol"],
        ["pol/chain.cedar:2:", "policy holds more than 1,000 operators (Cedar nests each one)"],
    ),
    "newline in a policy id": Case(
        {
            "inv.yaml": SMALL,
            "principals.yml": PRINCIPALS,
            "pol/schema.cedarschema": (ROOT / "policies" / "schema.cedarschema").read_text(encoding="utf-8"),
            "pol/all.cedar": '@id("ok\\n::error::forged")\npermit(principal, action, resource);\n',
        },
        ["audit", "inv.yaml", "--policies", "pol"],
        ["pol/all.cedar:1: policy id 'ok\\n::error::forged' holds a control character (U+000A)"],
    ),
    "request context with a key given twice": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS},
        [*AUTHORIZE, "--context", '{"incident": true, "incident": false}'],
        ["--context: key 'incident' is given twice in one object; expected each key once"],
    ),
    "request context nested 10^4 deep": Case(
        {"inv.yaml": SMALL, "principals.yml": PRINCIPALS},
        [*AUTHORIZE, "--context", '{"a": ' * 10_000 + "1" + "}" * 10_000],
        ["--context: JSON nested deeper than it can be read"],
    ),
    "teams nested past nesting_depth": Case(
        {"inv.yaml": SMALL, "jobs.yaml": JOBS, "principals.yml": TEAM_CHAIN},
        ["place", "inv.yaml", "jobs.yaml"],
        ["principals.yml:105:5: principal 't101' is a member of teams nested 101 deep, over the limit nesting_depth"],
    ),
    # --- waivers and baselines ------------------------------------------------------------------
    "waiver whose reason is null": Case(
        {"inv.yaml": SMALL, "w.yaml": NULL_REASON},
        ["verify", "inv.yaml", "--waivers", "w.yaml"],
        ["w.yaml:2:34: 'reason' in waiver 1 is empty; expected a value for every key"],
    ),
    "baseline schemaVersion true": Case(
        {"inv.yaml": SMALL, "base.json": '{"schemaVersion": true, "findings": []}'},
        ["verify", "inv.yaml", "--baseline", "base.json"],
        ["base.json:1:2: schemaVersion True is not 1"],
    ),
    "baseline fingerprint that is not one": Case(
        {"inv.yaml": SMALL, "base.json": '{"schemaVersion": 1, "findings": [{"fingerprint": "zz"}]}'},
        ["verify", "inv.yaml", "--baseline", "base.json"],
        ["base.json:1:36: fingerprint 'zz' is not 32 lowercase hexadecimal digits"],
    ),
    # --- numbers are ASCII digits: `\\d` reads fullwidth and Arabic-Indic ones too -------------
    "bandwidth in fullwidth digits": Case(
        {"inv.yaml": _replace("generation: 4, count: 18", "bandwidth: '\uff11\uff10\uff10 GB/s'")},
        ["verify", "inv.yaml"],
        ["inv.yaml:13:44: 'bandwidth' in link n1/gpu0 - n1/gpu1: cannot read bandwidth '\uff11\uff10\uff10 GB/s'"],
    ),
    "hostlist in fullwidth digits": Case(
        {"topology.conf": "SwitchName=leaf0 Nodes=n[\uff10\uff11-\uff10\uff14]\n"},
        ["import", "slurm", "topology.conf"],
        ["topology.conf:1: Nodes=n[\uff10\uff11-\uff10\uff14]: ", "expected a number or a range such as 001-016"],
    ),
    # --- importers: what would import as something else is refused ----------------------------
    "hwloc PU whose os_index is a fraction": Case(
        {"topo.xml": HWLOC_PU.replace('os_index="0"', 'os_index="0.5"')},
        ["import", "hwloc", "topo.xml"],
        ["topo.xml:6:5: PU os_index '0.5'; expected a whole number (the PU's OS index)"],
    ),
    "XML in an encoding Python has no codec for": Case(
        {"topo.xml": HWLOC_PU.replace('encoding="UTF-8"', 'encoding="UTF-8000"')},
        ["import", "hwloc", "topo.xml"],
        ["topo.xml:1: XML declares an encoding Python cannot read (unknown encoding: UTF-8000); expected UTF-8"],
    ),
    "empty topology.conf": Case(
        {"topology.conf": "# nothing yet\n"},
        ["import", "slurm", "topology.conf"],
        ["topology.conf:1: names no switch and no block; expected topology.conf lines such as"],
    ),
    "switches in a loop": Case(
        {"topology.conf": "SwitchName=a Switches=b\nSwitchName=b Switches=a\n"},
        ["import", "slurm", "topology.conf"],
        ["topology.conf:1: switch 'a' is under itself through Switches= (a -> b -> a); expected a tree of switches"],
    ),
    "host named twice in one hostlist": Case(
        {"topology.conf": "SwitchName=leaf0 Nodes=n[1," + "1," * 20_000 + "2]\n"},
        ["import", "slurm", "topology.conf"],
        ["topology.conf:1: Nodes= names 'n1' twice; expected each name once"],
    ),
    "newline in --name": Case(
        {"topology.conf": "SwitchName=leaf0 Nodes=n[1-2]\n"},
        ["import", "slurm", "topology.conf", "--name", "fabric\n::error::forged"],
        ["--name: 'fabric\\n::error::forged' holds a control character (U+000A)"],
    ),
    "node JSON with a key given twice": Case(
        {"nodes.json": '{"items": [], "items": [{"metadata": {"name": "a"}}]}'},
        ["import", "k8s-labels", "nodes.json"],
        ["nodes.json:1: key 'items' is given twice in one object"],
    ),
    "node JSON nested 10^5 deep": Case(
        {"nodes.json": '{"items": ' + "[" * 100_000 + "]" * 100_000 + "}"},
        ["import", "k8s-labels", "nodes.json"],
        ["nodes.json:1: JSON nested deeper than it can be read"],
    ),
    "id_length lowered below the shipped catalogue's names": Case(
        {"inv.yaml": SMALL},
        ["verify", "inv.yaml"],
        ["inv.yaml:9:10: 'name' in object 'gpu0' is 4 characters long, over the limit id_length = 3"],
        Limits(id_length=3),
        # Parsed once per process: forget it, so that this run parses it under the lowered limit.
        setup=_forget_catalogue,
    ),
    # --- the engine -----------------------------------------------------------------------------
    # On both engines (DuckDB checks the budget after each statement, pyDatalog after each relation):
    # SMALL has 4 objects (n1, gpu0, gpu1, nic0), so every_pair derives 4 x 4 = 16 tuples > 10.
    **{
        f"rules deriving past derived_tuples on {engine}": Case(
            {"inv.yaml": SMALL, "greedy.dl": GREEDY_RULES},
            [
                "verify",
                "inv.yaml",
                "--engine",
                engine,
                "--no-shipped-rules",
                "--rules",
                str(ROOT / "rules" / "schema.dl"),
                "--rules",
                "greedy.dl",
            ],
            [
                "greedy.dl:1:1: the rules derive 16 tuples (relation 'every_pair' holds 16 of them so far), "
                "over the limit derived_tuples = 10; raise it with --input-limit derived_tuples=VALUE"
            ],
            Limits(derived_tuples=10),
        )
        for engine in ("duckdb", "memory", "pydatalog")
    },
    # n(0), n(1), ...: a new number every round, so no fixpoint; stopped after 50 rounds.
    **{
        f"recursion that never ends on {engine}": Case(
            {"inv.yaml": SMALL, "grow.dl": ".decl n(x: number)\nn(0).\nn(Y) :- n(X), Y = X + 1.\n"},
            ["verify", "inv.yaml", "--engine", engine, "--rules", "grow.dl"],
            [
                "grow.dl:1:1: the recursion of 'n' still derives new tuples after 50 rounds, "
                "over the limit fixpoint_rounds = 50"
            ],
            Limits(fixpoint_rounds=50),
        )
        for engine in ("duckdb", "memory")
    },
    # 4 x 4 = 16 bindings in every_pair's join; a memory cap of 1,000 bytes holds 5 (200 bytes each).
    "join past the memory engine's engine_memory": Case(
        {"inv.yaml": SMALL, "greedy.dl": GREEDY_RULES},
        [
            "verify",
            "inv.yaml",
            "--engine",
            "memory",
            "--no-shipped-rules",
            "--rules",
            str(ROOT / "rules" / "schema.dl"),
            "--rules",
            "greedy.dl",
        ],
        [
            "greedy.dl:1:1: deriving 'every_pair' joins more than 5 bindings in one step in memory, over the limit "
            "engine_memory = 1,000 bytes"
        ],
        Limits(engine_memory=1000),
    ),
    "DuckDB with no memory to load facts into": Case(
        {"inv.yaml": SMALL},
        ["verify", "inv.yaml", "--engine", "duckdb"],
        ["over the limit engine_memory = 1 bytes"],
        Limits(engine_memory=1),
    ),
    "rule file that is a FIFO": Case(
        {"inv.yaml": SMALL},
        ["verify", "inv.yaml", "--rules", "f.dl"],
        ["f.dl: a pipe; expected a .dl rule file on disk"],
        setup=lambda root: os.mkfifo(root / "f.dl"),
    ),
    # 5,000 terms would overflow Python's stack in the parse-tree walk.
    "rule with a 5,000-term sum": Case(
        {
            "inv.yaml": SMALL,
            "sum.dl": ".decl x(a: number)\nx(N) :- object(_, _), N = " + " + ".join(["1"] * 5000) + ".\n",
        },
        ["verify", "inv.yaml", "--rules", "sum.dl"],
        ["sum.dl:2:", "an expression nested more than 100 levels deep", "over the limit nesting_depth = 100"],
    ),
    # --- importers: what a tool printed obeys the rules a written inventory obeys -----------
    "control character in an imported label": Case(
        {"nodes.json": K8S_BELL_LABEL},
        ["import", "k8s-labels", "nodes.json"],
        ["nodes.json:1: 'k8s_gpu_clique' in labels of object 'gpu-a01' holds a control character (U+0007)"],
    ),
    "control character in a label read by verify --from": Case(
        {"nodes.json": K8S_BELL_LABEL},
        ["verify", "--from", "k8s-labels", "nodes.json"],
        ["nodes.json:1: 'k8s_gpu_clique' in labels of object 'gpu-a01' holds a control character (U+0007)"],
    ),
}


_LOCATED = re.compile(r"^error: (?:[^\s:]+(?::\d+){0,2}: |--[a-z-]+)")
"""`error: FILE: `, `error: FILE:LINE: `, `error: FILE:LINE:COL: ` or `error: --option ...`."""


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_is_refused_with_its_place(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    for rel, content in case.files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
    if case.setup is not None:
        case.setup(tmp_path)
    monkeypatch.chdir(tmp_path)
    started = time.monotonic()
    with use_limits(case.limits):
        code, _out, err = run_cli(*case.args)
    elapsed = time.monotonic() - started
    assert "Traceback" not in err
    assert code == 2, f"exit {code}, stderr:\n{err}"
    # Every error names where: a file (with its line where the problem has one) or an option.
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert errors, err
    for line in errors:
        assert _LOCATED.match(line), f"error without a place: {line!r}"
    for text in case.expect:
        assert text in err, f"{text!r} not in stderr:\n{err}"
    assert elapsed < 60, f"took {elapsed:.0f} s: a limit should stop it at once"


@pytest.mark.parametrize("opener", ["[", "{a: ", "- "])
def test_yaml_nested_10_to_the_5_deep_exits_2_in_its_own_process(opener: str, tmp_path: Path) -> None:
    """A parser that recurses in C past the stack kills the process instead of raising: run
    as users do, in a process of its own, so a crash is this test's failure (exit -11), not
    the test runner's. Flow and block nesting both: libyaml before 0.2.6 overflows on either."""
    closer = {"[": "]", "{a: ": "}", "- ": ""}[opener]
    depth = 100_000  # "- - - x" nests a block sequence per dash, on one line
    body = ("\n" if opener == "- " else "") + opener * depth + "x" + closer * depth + "\n"
    (tmp_path / "inv.yaml").write_text("apiVersion: topolog.dev/v1\nobjects: " + body, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", "from verifier.cli.main import run; run()", "verify", "inv.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2, f"exit {done.returncode}, stderr:\n{done.stderr[-2000:]}"
    assert "Traceback" not in done.stderr
    assert "inv.yaml:" in done.stderr and "nesting_depth = 100" in done.stderr, done.stderr[-2000:]


def test_fifo_without_a_writer_reads_as_empty_instead_of_waiting(tmp_path: Path) -> None:
    """At the loader: the CLI's cluster-name scan (sources/inventory/clusters.py) opens the
    file blocking before the loader runs, so `topolog verify FIFO` still waits there."""
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(TopologError) as err:
        load_inventory([fifo])
    assert str(err.value) == f"{fifo}:1:1: file is empty; expected an inventory with 'apiVersion: topolog.dev/v1'"


def test_fifo_is_read_up_to_the_file_size_limit(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    # A writer already attached, as with `<(cmd)`: O_RDWR opens a FIFO without waiting (Linux).
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        os.write(writer, b"#" * 10_000)
        with use_limits(Limits(file_size=1000)), pytest.raises(TopologError) as err:
            read_limited(fifo)
    finally:
        os.close(writer)
    assert str(err.value) == (
        f"{fifo}: file is larger than 1,000 bytes, over the limit file_size = 1,000 bytes; "
        "raise it with --input-limit file_size=VALUE if this input is genuine"
    )


def test_a_waiver_reason_cannot_start_a_report_line(tmp_path: Path) -> None:
    """A reason is free text (folded YAML blocks are common): its line breaks become spaces,
    so `::error::` can never begin a line of a report or a GitHub workflow command."""
    path = tmp_path / "topolog.waivers.yaml"
    path.write_text(
        'waivers:\n  - {rule: TOPO001, subject: "n1/*", reason: "RMA-12\\n::error::forged\\r\\n\\tok", '
        "expires: 2099-01-01}\n",
        encoding="utf-8",
    )
    (waiver,) = load_waivers(path).waivers
    assert waiver.reason == "RMA-12 ::error::forged ok"


def test_a_waiver_subject_with_a_control_character_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "topolog.waivers.yaml"
    path.write_text(
        'waivers:\n  - {rule: TOPO001, subject: "n1\\x1b[2J", reason: r, expires: 2099-01-01}\n', encoding="utf-8"
    )
    with pytest.raises(TopologError) as err:
        load_waivers(path)
    assert str(err.value) == (
        f"{path}:2:21: 'subject' in waiver 1 holds a control character (U+001B) at character 3; "
        "expected printable text without control characters"
    )
