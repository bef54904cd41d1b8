"""Seeding one realistic fault into a copy of a shipped inventory, and the findings it adds.

The seeded-fault tests (tests/rules/test_seeded_faults*.py, one file per kind of fault) share this:
a `Fault` replaces one text of a shipped inventory, `check_fault` verifies the copy and the pristine
inventory side by side and requires the difference to be exactly the (rule, subjects) pairs the case
derived by hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from verifier.session.verify_run import VerifyRun, verify

ROOT = Path(__file__).resolve().parents[1]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
GB200 = ROOT / "inventories" / "gb200-nvl72.yaml"
MIXED = ROOT / "inventories" / "mixed-fleet.yaml"
EDGE = ROOT / "inventories" / "edge-soc.yaml"

Added = frozenset[tuple[str, tuple[str, ...]]]


@dataclass(frozen=True)
class Fault:
    inventory: Path
    old: str
    new: str
    added: Added


# dgx-h100-pod.yaml: the dgx-h100 entry's overrides (dgx03's failed NVLink) gain one for dgx05.
_POD_OVERRIDES = "              dgx03:\n"
# gb200-nvl72.yaml: the compute trays' entry gains an override for tray05.
_TRAYS = '        name: "tray{i:02d}"         # tray00..tray17\n        count: 18\n'
# mixed-fleet.yaml: the MI300X entry gains an override for mi300x-n1.
_MI300X = '              - {template: mf-mi300x, name: "mi300x-n{i}", count: 2}'
# dgx-h100-pod.yaml: every node's NIC r is cabled to leaf r.
_CABLES = "    bandwidth: 400 Gb/s            # ConnectX-7 NDR port, per direction\n    foreach: {n: 0..7, r: 0..7}"


def pod_fault(override: str, added: Added) -> Fault:
    lines = "".join(f"                {line}\n" for line in override.splitlines())
    return Fault(POD, _POD_OVERRIDES, f"              dgx05:\n{lines}{_POD_OVERRIDES}", added)


def tray_fault(override: str, added: Added) -> Fault:
    lines = "".join(f"            {line}\n" for line in override.splitlines())
    return Fault(GB200, _TRAYS, f"{_TRAYS}        overrides:\n          tray05:\n{lines}", added)


def mi300x_fault(override: str, added: Added) -> Fault:
    entry = '              - template: mf-mi300x\n                name: "mi300x-n{i}"\n                count: 2\n'
    return Fault(MIXED, _MI300X, f"{entry}                overrides:\n                  mi300x-n1: {override}", added)


def dgx07_fault(last: int, cables: str, added: Added) -> Fault:
    """dgx07's NICs 0 to `last` cabled as every node's; the rest as `cables` says (nothing: not cabled)."""
    rest = (
        f'  - {{a: "dgx07/nic{{r}}", b: "leaf{{r}}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {{r: 0..{last}}}}}'
    )
    new = _CABLES.replace("n: 0..7", "n: 0..6") + "\n" + rest + (f"\n  - {cables}" if cables else "")
    return Fault(POD, _CABLES, new, added)


def findings(path: Path) -> Added:
    report = verify([path], VerifyRun(authorize=False))
    return frozenset((r.finding.rule, r.finding.subjects) for r in report.results)


def check_fault(fault: Fault, tmp_path: Path) -> None:
    text = fault.inventory.read_text(encoding="utf-8")
    assert text.count(fault.old) == 1, "the text the fault replaces is in the inventory once"
    seeded = tmp_path / fault.inventory.name
    seeded.write_text(text.replace(fault.old, fault.new), encoding="utf-8")
    pristine = tmp_path / "pristine" / fault.inventory.name
    pristine.parent.mkdir()
    pristine.write_text(text, encoding="utf-8")
    before = findings(pristine)
    after = findings(seeded)
    assert before <= after, "the fault takes no finding away"
    assert after - before == fault.added
