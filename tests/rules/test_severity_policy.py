"""Every shipped check's severity follows docs/severity.md, with its reason in one line.

error: a promise broken (a scale-up domain split, GPUDirect or a rail lost, a NIC or node off the
fabric, fabric islands, hardware that cannot work as wired, an inventory that contradicts itself or
the catalogue, hardware open that policy closes, a job that cannot run); warning: bandwidth or
capacity below plan with the promise kept, or drift; note: information. A new check fails here
until it is classified in POLICY.
"""

from __future__ import annotations

from verifier.checks.check import checks_from_program
from verifier.core.resources import shipped_rules_dir
from verifier.engine.loader import load_program

E, W, N = "error", "warning", "note"

POLICY: dict[str, tuple[str, str]] = {
    "AUTHZ001": (N, "a team confined to GPUs that share no NVLink domain: the design for consumer GPUs"),
    "AUTHZ002": (E, "a policy failed while deciding: the request was denied, the policies cannot be trusted"),
    "AUTHZ003": (E, "hardware labelled quarantined is open to scheduling: hardware open that policy closes"),
    "AUTHZ004": (E, "a policy names an entity that does not exist: a forbid that closes nothing"),
    "AUTHZ005": (W, "a quarantine reason on hardware no quarantine label closes: a label that misleads, open"),
    "AUTHZ006": (E, "a permit naming nobody lets tenants onto others' hardware: hardware open that policy closes"),
    "AUTHZ007": (W, "hardware labelled for a tenant nobody has, closed to everyone: a label that strands capacity"),
    "AUTHZ008": (W, "an intern or contractor may drain or administer: a grant that drifted to the wrong principal"),
    "AUTHZ009": (W, "a principal's tenant is none of its teams': a principals file that misleads"),
    "AUTHZ010": (W, "an owner label naming no principal: a label that grants its owner nothing"),
    "AUTHZ011": (W, "two principal ids that differ only in case: a principals file that misleads"),
    "AUTHZ012": (W, "a user in no team, with no tenant, permitted nothing: a principals entry that lost its place"),
    "AUTHZ013": (E, "a forbid scoped == a group leaves its GPUs schedulable: hardware open that policy closes"),
    "AUTHZ014": (E, "quarantine reopened in an incident to the off-rota: hardware open that policy closes"),
    "AUTHZ015": (E, "a forbid scoped `is Node` never applies to a GPU: hardware open that policy closes"),
    "AUTHZ016": (W, "a tenant label spelled two ways: a label that misleads, hardware still used"),
    "AUTHZ017": (W, "an intern or contractor on the incident rota: a grant that drifted to the wrong principal"),
    "BW001": (E, "two GPUs promised NVLink talk over PCIe: the scale-up domain is split"),
    "BW002": (W, "a GPU's nearest NIC across host bridges where no GPUDirect is promised: bandwidth"),
    "BW003": (W, "a NIC's line rate over its PCIe link: bandwidth below plan"),
    "BW004": (W, "a PCIe switch oversubscribed: bandwidth below plan"),
    "BW005": (W, "a leaf oversubscribed: bandwidth below plan, every host still reached"),
    "BW006": (E, "GPU i's NIC on another rail in a rail-optimised node: the rail promise broken"),
    "BW007": (W, "a NIC's rail label disagrees with its cable: placement steered wrong, traffic still flows"),
    "BW008": (E, "a GPU's NIC cabled to a spine in a rail-optimised node: the rail promise broken"),
    "BW009": (E, "GPUDirect RDMA lost where the node promises GPU-NIC affinity or rails"),
    "HEALTH001": (W, "a device degraded (or memory down): less bandwidth or capacity, the paths kept"),
    "HEALTH002": (E, "a NIC, switch, PCIe switch or CPU down: what depends on it is cut off"),
    "LINK001": (E, "a link faster than its ends can carry: the inventory contradicts the hardware"),
    "LINK002": (E, "a link's generation or width above its ends: the inventory contradicts the hardware"),
    "LINK003": (E, "a NIC never cabled while its node is: its GPUs lose it, as LINK006's NIC"),
    "LINK004": (E, "a leaf with hosts and no uplink in a fabric with spines: fabric islands"),
    "LINK005": (W, "a fabric link below its ports' speed: bandwidth below plan"),
    "LINK006": (E, "every cable of a NIC down: the NIC is off the fabric"),
    "LINK007": (W, "a fabric link degraded, or down with the fabric still connected: bandwidth below plan"),
    "LINK008": (W, "a host link degraded or down with its devices still reached: bandwidth below plan"),
    "LINK009": (E, "more PCIe lanes written to a CPU than it has: the inventory contradicts the hardware"),
    "LINK010": (E, "a node off the fabric while its peers are on it: no multi-node job can use it"),
    "LINK011": (E, "leaves that share no spine with the main island: fabric islands"),
    "LINK012": (E, "a node cabled to another rack's leaf: the inventory contradicts its own layout"),
    "LINK013": (E, "an NVLink link below the generation both its ends speak: the inventory contradicts the hardware"),
    "LINK014": (E, "more cables at a switch than its model has ports: cables that cannot all be plugged in"),
    "MEM001": (E, "a GPU's memory below its model's, or far above: the part is not what the inventory claims"),
    "MEM002": (W, "a link to memory slower than the memory: bandwidth below plan"),
    "MEM003": (W, "unified memory demands over its bandwidth: bandwidth below plan"),
    "MEM004": (W, "a cache hierarchy that is not monotonic: performance below plan"),
    "MEM005": (W, "package memory off its model's figures: bandwidth or capacity below plan"),
    "MEM006": (W, "an SoC device's demand over its links: bandwidth below plan"),
    "NODE001": (E, "a device the node type declares is missing: not the system its type promises"),
    "NODE002": (W, "a device of another model than its type: bandwidth or capacity below plan"),
    "NODE003": (E, "a catalogued system with another GPU count: the inventory contradicts the catalogue"),
    "NODE004": (E, "a host link the node type declares is missing: a device cut off from its path"),
    "NODE005": (W, "a host link with other figures than its type: bandwidth below plan"),
    "NODE006": (W, "software drift from the node type: drift, the stack still runs"),
    "NODE007": (W, "a device figure below its type's: capacity below plan"),
    "NODE008": (W, "a NIC's rail label differs from its type's: placement steered wrong, traffic flows"),
    "NODE009": (E, "more cores than the part's model has: the inventory contradicts the hardware"),
    "NODE010": (W, "a node type's PCIe generation below both ends' catalogue figure: bandwidth below plan"),
    "NODE011": (W, "a node labelled another zone than its rack or pod: a label that misleads zone-aware scheduling"),
    "NODE012": (W, "a node's power far from its parts' rated power: a figure that misleads power budgets"),
    "OBS001": (W, "a GPU's PCIe link observed trained down: bandwidth below plan"),
    "OBS002": (E, "a GPU observed out of its NVLink domain: the scale-up domain is split"),
    "OBS003": (W, "fewer active scale-up links where the GPU keeps its domain: bandwidth below plan"),
    "OBS004": (E, "a GPU observed out of service: hardware that cannot take work"),
    "OBS005": (W, "an observed device matching no declared one: not judged, said"),
    "OBS006": (E, "a declared GPU missing from its node's listing: hardware that cannot take work"),
    "OBS007": (W, "a stale observation file: not trusted, said"),
    "OBS008": (W, "an NVLink observed below its model's speed: bandwidth below plan"),
    "OBS009": (W, "a GPU listing shorter than its driver's count: a selection or an unreadable GPU, said"),
    "OBS010": (E, "a GPU its node's driver has lost, tied to no declared GPU: hardware that cannot take work"),
    "OBS011": (W, "a node observed running an older driver than declared: the declared stack was judged, said"),
    "OBS012": (W, "a GPU's clocks observed cut for temperature or power: performance below plan"),
    "OBS101": (W, "a GPU's observed PCIe width below its declaration: bandwidth below plan"),
    "OBS102": (W, "an xGMI pair disabled in a mesh: traffic relays, bandwidth below plan"),
    "OBS103": (E, "a NIC port observed down where its link is declared working: the NIC is off the fabric"),
    "OBS104": (W, "a NIC port observed at a lower rate: bandwidth below plan"),
    "OBS105": (W, "measured bandwidth below the topology's: bandwidth below plan"),
    "OBS106": (E, "a NIC port on another link layer than its cable: it never reaches its switch, off the fabric"),
    "OBS107": (E, "a collective's own check found wrong values: the hardware corrupts data in flight"),
    "PCIE001": (W, "a GPU's PCIe link narrower or slower than it should be: bandwidth below plan"),
    "PCIE002": (W, "an imported GPU's PCIe bandwidth below its model's: bandwidth below plan"),
    "PLACE001": (E, "a job with no valid placement: a job that cannot run"),
    "PLACE002": (E, "a job that can never run on any node: a job that cannot run"),
    "PLACE003": (E, "a mistyped exclusion excludes nothing: the job may land on the hardware it asked to avoid"),
    "POLICY001": (W, "a policy that can never apply: intent not in force, every decision still fail-closed"),
    "POLICY002": (N, "a policy that applies to nothing in this inventory: may be for hardware still to come"),
    "POLICY003": (W, "a permit a forbid always shadows: intent not in force, nothing opened"),
    "POLICY004": (N, "removing the policy changes no decision: often defence in depth"),
    "POLICY005": (W, "a condition that can raise: the gate then denies (fail closed), which nobody meant"),
    "SCALE001": (W, "a scale-up link degraded that splits no domain: bandwidth below plan"),
    "SCALE002": (E, "a catalogued system with another NVSwitch count: the inventory contradicts the catalogue"),
    "SCALE003": (W, "fewer scale-up links or less bandwidth than the model: bandwidth below plan"),
    "SCALE004": (W, "fewer scale-up links than sibling GPUs: bandwidth below plan"),
    "SCALE005": (E, "a scale-up link between nodes that no one declares one domain: the inventory contradicts itself"),
    "SCALE006": (W, "an NVSwitch chip down or degraded with its GPUs kept in the domain: bandwidth below plan"),
    "SCALE007": (E, "an NVSwitch chip down under the fabric manager's default: the board's NVLink domain is gone"),
    "SCALE008": (W, "a rack-scale NVLink switch tray down with its GPUs kept in the domain: bandwidth below plan"),
    "SCALE009": (E, "a catalogue model faster per NVLink than its generation: every link check reads an untrue figure"),
    "SCHED001": (E, "a scheduler group splits an NVLink domain: jobs land wrongly"),
    "SCHED002": (E, "a scheduler group joins two NVLink domains: jobs believe NVLink that is not there"),
    "SCHED003": (W, "a node's GPU count label differs: a label that misleads, scheduling still by capacity"),
    "SCHED004": (E, "a scheduler names another GPU model: jobs land on hardware they did not ask for"),
    "SCHED005": (W, "the GPUs a scheduler hands out differ: capacity below plan"),
    "SCHED006": (W, "the scheduler's node list differs: a node unverified or unused, said"),
    "SCHED007": (W, "nodes labelled one leaf share none: jobs kept in a leaf run slower"),
    "SCHED008": (W, "a zone label differs: a label that misleads"),
    "SLURM001": (E, "a node under two leaves of the Slurm tree: Slurm's placement is wrong"),
    "SLURM002": (E, "a node under no leaf of the Slurm tree: Slurm cannot place multi-node jobs on it"),
    "SLURM003": (E, "a Slurm tree with several roots: no job can span them"),
    "SLURM004": (W, "a Slurm name with its prefix dropped: a likely typo, said"),
    "SW001": (E, "a driver older than the CUDA release needs: the stack cannot run"),
    "SW002": (E, "another vendor's toolkit: the stack cannot drive the GPUs"),
    "SW003": (E, "a ROCm older than the GPU's first: the stack cannot drive the GPUs"),
    "SW004": (W, "mixed versions in one NVLink domain: drift"),
    "SW005": (W, "a CUDA toolkit older than the GPU's architecture: PTX JIT only, no native code"),
    "TOPO001": (E, "a GPU that reaches no NIC: it cannot take part in multi-node jobs"),
    "TOPO002": (E, "two declarations of one link disagree: the inventory contradicts itself"),
    "TOPO003": (E, "a host device outside any node: the inventory contradicts itself"),
    "TOPO004": (E, "a promised NVLink domain split: the scale-up promise broken"),
    "TOPO005": (E, "a GPU fallen out of its promised NVLink domain: the scale-up promise broken"),
    "TOPO006": (E, "a device no CPU reaches: hardware that cannot work as wired"),
}


def test_every_shipped_check_is_classified_by_the_policy() -> None:
    checks = {c.id: c.severity for c in checks_from_program(load_program([shipped_rules_dir()]))}
    assert sorted(checks) == sorted(POLICY), "classify every check in POLICY (docs/severity.md), with its reason"
    wrong = {cid: (sev, POLICY[cid][0]) for cid, sev in checks.items() if sev != POLICY[cid][0]}
    assert wrong == {}


def test_every_reason_is_one_line() -> None:
    assert all(reason and "\n" not in reason and len(reason) <= 110 for _sev, reason in POLICY.values())
