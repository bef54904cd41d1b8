"""Templated pod fleets and `authorize` runs, for the tests of authorize's lazy path (issue 46).

One place for the fleet text those tests write (a node template `box`, counted pods of racks of
stamped nodes, `foreach` cabling, overrides), for running `authorize` from the CLI, and for the
truth the lazy path is held to: the same request decided on the inventory loaded whole.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from cli_helpers import run_cli

from verifier.authorization.requests import AuthorizeReport, decide
from verifier.authorization.setup import AuthzSetup, build_setup
from verifier.core.errors import TopologError
from verifier.session.api import authorize
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[1]
PRINCIPALS = ROOT / "inventories" / "principals.yml"
POLICIES = ROOT / "policies"

# (principal, action, resource, context)
Request = tuple[str, str, str, dict[str, object]]

HEADER = "apiVersion: topolog.dev/v1\nkind: Inventory\n"
# A node template of 2 GPUs and 2 NICs, labelled tenant research (lines 3-10 after HEADER).
BOX = """\
templates:
  box:
    kind: node
    model: DGX-H100
    labels: {tenant: research}
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
      - {name: "nic{i}", kind: nic, model: ConnectX-7, count: 2}
"""


def pod_fleet(count: int, *, spine: bool = True) -> str:
    """`count` pods p0.. of 2 racks x 2 box nodes and 2 leaves, NIC l of every node cabled to its
    pod's leaf l, node p0-r0-n1 quarantined by an override (its `labels:` on line 25).

    With `spine` also: node p3-r1-n0 of tenant team-nlp by an override, one spine0, every leaf
    cabled to it (leaf 0 twice: once written in the pod, `foreach` at the top) and each pod's node
    r1-n1's NIC 1 (written at the top).
    """
    last = count - 1
    far_override = "              p3-r1-n0:\n                labels: {tenant: team-nlp}\n" if spine else ""
    text = (
        HEADER
        + BOX
        + f"""\
objects:
  - name: p{{i}}
    kind: pod
    count: {count}
    children:
      - name: "{{pod}}-r{{i}}"
        kind: rack
        count: 2
        children:
          - template: box
            name: "{{rack}}-n{{i}}"
            count: 2
            overrides:
              p0-r0-n1:
                labels: {{quarantine: "true"}}
{far_override}\
      - {{name: "{{pod}}-leaf{{i}}", kind: switch, model: QM9700, count: 2}}
    links:
      - {{a: "{{pod}}-r{{r}}-n{{n}}/nic{{l}}", b: "{{pod}}-leaf{{l}}", kind: infiniband, bandwidth: 400 Gb/s,
         foreach: {{r: 0..1, n: 0..1, l: 0..1}}}}
"""
    )
    if not spine:
        return text
    return (
        text
        + f"""\
      - {{a: "{{pod}}-leaf0", b: /spine0, kind: infiniband, bandwidth: 400 Gb/s}}
  - {{name: spine0, kind: switch, model: QM9700}}
links:
  - {{a: "p{{p}}-leaf{{l}}", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {{p: 0..{last}, l: 0..1}}}}
  - {{a: "p{{p}}-r1-n1/nic1", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {{p: 0..{last}}}}}
"""
    )


def place(tmp_path: Path, text: str, name: str = "fleet.yaml") -> Path:
    """`text` written to tmp_path/name, with the shipped principals.yml beside it."""
    shutil.copy(PRINCIPALS, tmp_path / "principals.yml")
    path = tmp_path / name
    path.write_text(text)
    return path


def authorize_cli(
    paths: Path | Sequence[Path],
    resource: str,
    *options: str,
    cache: str = "",
    principal: str = "dan",
    action: str = "schedule",
) -> tuple[int, str, str]:
    """`topolog authorize PATHS --principal P --action A --resource R OPTIONS...` with
    TOPOLOG_CACHE_DIR=cache ("" turns the cache off): exit code, stdout, stderr.
    """
    files = [paths] if isinstance(paths, Path) else list(paths)
    return run_cli(
        "authorize", *map(str, files), "--principal", principal, "--action", action, "--resource", resource,
        *options, env={"TOPOLOG_CACHE_DIR": cache},
    )  # fmt: skip


def answer(decision: Callable[[], AuthorizeReport]) -> tuple[object, ...]:
    """A report's request, decision, reasons, errors and effects, or the refusal's message."""
    try:
        report = decision()
    except TopologError as err:
        return ("refused", str(err))
    d = report.decision
    return (report.request, d.allowed, d.reasons, d.errors, report.effects)


def lazy(
    paths: Path | Sequence[Path], request: Request, *, policies: Path = POLICIES, principals: Path | None = None
) -> tuple[object, ...]:
    """The answer of `authorize` with the cache as the environment sets it (the tests turn it off)."""
    who, action, resource, context = request
    return answer(lambda: authorize(paths, who, action, resource, context, policies=policies, principals=principals))


@functools.cache
def whole_setup(paths: tuple[Path, ...], policies: Path) -> AuthzSetup | TopologError:
    """The setup from the inventory loaded whole (the path before issue 46's lazy one, the truth),
    or why it is refused; once per files and policies.
    """
    try:
        return build_setup(
            load_inventory(list(paths)), list(paths), policies, load_principals(paths[0].parent / "principals.yml")
        )
    except TopologError as err:
        return err


def whole(paths: Path | Sequence[Path], request: Request, *, policies: Path = POLICIES) -> tuple[object, ...]:
    """The answer from the inventory loaded whole (principals.yml beside the first file)."""
    setup = whole_setup((paths,) if isinstance(paths, Path) else tuple(paths), policies)
    if isinstance(setup, TopologError):
        return ("refused", str(setup))
    who, action, resource, context = request
    return answer(lambda: decide(setup, who, action, resource, context))
